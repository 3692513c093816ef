"""The matmul tile spec (config/matmul_tiles.py, compile/tile_spec.py):
IREE's llvm-cpu configuration takes the tiles of the shape class a matmul
falls in, leaves the matmuls no class matches to its own choice, and the
numbers of a model compiled with it are verified as every emit's are."""

from __future__ import annotations

import re
import subprocess

import numpy as np
import pytest

from ireegen.compile.compiler import find_compiler
from ireegen.compile.tile_spec import spec_text, stage
from ireegen.config.matmul_tiles import FLAG, SPEC_FILE, float_lanes, match_rows
from ireegen.config.modes import Target, make_config
from ireegen.config.tuning import CONTRACTIONS, CONTRACTIONS_AT_16_LANES, target_features
from ireegen.emit import emit

AVX512 = Target("x86_64-unknown-linux-gnu", "x86-64-v4", "+avx,+avx2,+fma,+avx512f")
AVX2 = Target("x86_64-unknown-linux-gnu", "x86-64-v3", "")

# Two matmuls of one function: 49 rows (7x7 pixels, a class of the spec) and
# 50 (no class divides it: IREE's own tiles).
_MATMULS = """
func.func @two(%a: tensor<49x960xf32>, %b: tensor<960x160xf32>, %c: tensor<50x64xf32>, %d: tensor<64x48xf32>)
    -> (tensor<49x160xf32>, tensor<50x48xf32>) {
  %zero = arith.constant 0.0 : f32
  %e0 = tensor.empty() : tensor<49x160xf32>
  %f0 = linalg.fill ins(%zero : f32) outs(%e0 : tensor<49x160xf32>) -> tensor<49x160xf32>
  %r0 = linalg.matmul ins(%a, %b : tensor<49x960xf32>, tensor<960x160xf32>) outs(%f0 : tensor<49x160xf32>)
      -> tensor<49x160xf32>
  %e1 = tensor.empty() : tensor<50x48xf32>
  %f1 = linalg.fill ins(%zero : f32) outs(%e1 : tensor<50x48xf32>) -> tensor<50x48xf32>
  %r1 = linalg.matmul ins(%c, %d : tensor<50x64xf32>, tensor<64x48xf32>) outs(%f1 : tensor<50x48xf32>)
      -> tensor<50x48xf32>
  return %r0, %r1 : tensor<49x160xf32>, tensor<50x48xf32>
}
"""


def _configurations(tmp_path, flags) -> dict:
    """{dispatch shape: the matmul's lowering_config} as IREE chose them."""
    (tmp_path / "two.mlir").write_text(_MATMULS)
    cmd = [find_compiler().path, "two.mlir", "-o", "cfg.mlir", "--compile-to=executable-configurations"]
    cmd += ["--iree-hal-target-device=local", "--iree-hal-local-target-device-backends=llvm-cpu"]
    cmd += [f"--iree-llvmcpu-target-triple={AVX512.triple}", f"--iree-llvmcpu-target-cpu={AVX512.cpu}"]
    cmd += [f"--iree-llvmcpu-target-cpu-features={AVX512.cpu_features}", *flags]
    subprocess.run(cmd, cwd=tmp_path, check=True, capture_output=True, text=True)
    text = (tmp_path / "cfg.mlir").read_text()
    found = re.findall(
        r"linalg\.matmul \{lowering_config = #iree_cpu\.lowering_config<([^>]*)>\} ins\(\S+, \S+ : tensor<(\w+)>", text
    )
    return {shape: config for config, shape in found}


def test_the_spec_tiles_the_matmuls_of_its_classes_and_only_those(tmp_path):
    default = _configurations(tmp_path, [])
    stage([FLAG], AVX512, tmp_path)
    tiled = _configurations(tmp_path, [FLAG])
    # 49 rows: all of them per workgroup, 7 x 32 (two AVX-512 vectors) at a time.
    assert tiled["49x960xf32"] == (
        "distribution = [0, 32, 0], vector_common_parallel = [7, 32, 0], vector_reduction = [0, 0, 1]"
    )
    assert default["49x960xf32"] != tiled["49x960xf32"]
    # 50 rows: no class divides them; IREE's own choice.
    assert tiled["50x64xf32"] == default["50x64xf32"]


def test_the_spec_is_written_only_when_the_flags_name_it(tmp_path):
    stage(["--iree-opt-data-tiling"], AVX512, tmp_path)
    assert not (tmp_path / SPEC_FILE).exists()
    stage([FLAG], AVX512, tmp_path)
    assert (tmp_path / SPEC_FILE).read_text() == spec_text(AVX512)


@pytest.mark.parametrize(
    "target, lanes",
    [
        (AVX512, 16),
        (AVX2, 8),
        (Target("x86_64-unknown-linux-gnu", "rocketlake", "+avx,+avx2,+avx512f"), 16),
        (Target("x86_64-unknown-linux-gnu", "generic", ""), 4),
        (Target("aarch64-unknown-linux-gnu", "generic", "+neon"), 4),
        (None, 4),
    ],
)
def test_vector_tiles_are_counted_in_the_targets_lanes(target, lanes):
    assert float_lanes(target) == lanes
    rows = match_rows(target)
    assert rows and all(r.vector[1] in (lanes, 2 * lanes) and r.distribution[1] % r.vector[1] == 0 for r in rows)
    # Every class's vector tile divides the rows it matches (no row is
    # peeled), and its columns but at most half a vector.
    assert all(r.rows_multiple == r.vector[0] and r.vector[1] - r.cols_multiple in (0, lanes // 2) for r in rows)
    assert {r.vector[1] for r in rows if r.cols_multiple < r.vector[1]} == {lanes}


def test_a_model_emitted_with_the_spec_is_verified(tmp_path):
    """A MatMul of 49 rows, emitted runtimeless with the spec (the
    matmul-tiles candidate's flags): verified against IREE's defaults
    without it and ONNX Runtime."""
    onnx = pytest.importorskip("onnx")
    from onnx import TensorProto, helper, numpy_helper

    rng = np.random.default_rng(0)
    weight = numpy_helper.from_array(rng.standard_normal((96, 64)).astype(np.float32), "w")
    graph = helper.make_graph(
        [helper.make_node("MatMul", ["x", "w"], ["y"])],
        "mm49",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [49, 96])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [49, 64])],
        [weight],
    )
    path = tmp_path / "mm49.onnx"
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]), path)
    config = make_config("runtimeless", target_cpu="host")
    result = emit(path, tmp_path / "out", config, tune="off", candidate_flags=(FLAG,))
    assert result.manifest["compile_flags"][-1] == FLAG
    assert result.manifest["verification"]["verified"] is True
    assert not (tmp_path / "out" / SPEC_FILE).exists()  # the spec is the compile's input, not an output


@pytest.mark.parametrize(
    "cpu, features, wide",
    [
        ("x86-64-v4", {CONTRACTIONS}, True),
        ("x86-64-v3", {CONTRACTIONS}, False),  # where the tiles lost (docs/tuning.md)
        ("x86-64-v4", set(), False),  # nothing for the spec to match
    ],
)
def test_the_candidate_is_tried_at_the_lanes_it_was_measured_at(cpu, features, wide):
    config = make_config("runtimeless", target_cpu=cpu)
    assert (CONTRACTIONS_AT_16_LANES in target_features(config, features)) == wide
