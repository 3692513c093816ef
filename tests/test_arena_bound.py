"""The arena's liveness lower bound (compile/slice_liveness.py): read from
IREE's buffer lifetimes before it lays them out, recorded in the manifest,
printed by `ireegen size`."""

import json
import sys
from pathlib import Path

import pytest
from conftest import run_cli

from ireegen.compile import partitioning, slice_liveness

PACK = """
  %c48 = arith.constant 48 : index
  %c2784 = arith.constant 2784 : index
  %c48384 = arith.constant 48384 : index
  %c32000 = arith.constant 32000 : index
  %3:5 = stream.resource.pack on(#hal.device.affinity<@__device_0>) slices({
    [0, 2] = %c2784,
    [1, 3] = %c48384,
    [3, 4] = %c32000,
    [3, 5] = %c48384,
    [5, 6] = %c48
  }) : index
"""


def test_lower_bound_is_the_most_bytes_live_at_once():
    (pack,) = slice_liveness.parse_packs(PACK)
    assert pack == [(0, 2, 2784), (1, 3, 48384), (3, 4, 32000), (3, 5, 48384), (5, 6, 48)]
    # At 3: 48384 + 32000 + 48384; at 1: 2816 (2784 aligned to 64) + 48384.
    assert slice_liveness.lower_bound(pack) == 128768
    assert slice_liveness.lower_bound(pack[:2]) == 2816 + 48384
    assert slice_liveness.lower_bound([]) == 0


def _dump(root, directory, header, body):
    where = root / slice_liveness.DUMP_DIR / "builtin_module_no-symbol-name" / directory
    where.mkdir(parents=True)
    (where / "0_0_iree-stream-layout-slices.mlir").write_text(
        f"// -----// IR Dump Before LayoutSlicesPass: iree-stream-layout-slices //----- //\n{header} {{\n{body}}}\n"
    )


def test_a_pack_with_a_run_time_size_has_no_bound(tmp_path):
    dynamic = PACK.replace("[5, 6] = %c48", "[5, 6] = %7")
    assert slice_liveness.parse_packs(dynamic) == [None]
    _dump(tmp_path, "util_func_f$async", 'util.func public @"f$async"(%arg0: !hal.buffer_view)', PACK + dynamic)
    _dump(tmp_path, "util_func_g$async", "util.func public @g$async(%arg0: !hal.buffer_view)", PACK)
    _dump(tmp_path, "util_func_h", "util.func public @h(%arg0: !hal.buffer_view)", "")
    # The dump's directory names are mangled ('/' becomes '_'): the name is read from the text.
    _dump(tmp_path, "util_func_.._x y$async", 'util.func public @"../x y\\22$async"(%arg0: i32)', PACK)
    _dump(tmp_path, "util_initializer_no-symbol-name", "util.initializer", PACK + PACK)
    bounds = slice_liveness.read_lower_bounds(tmp_path)
    assert bounds == {"f": None, "g": 128768, "h": 0, "../x y\\22": 128768}
    assert slice_liveness.bound_of(bounds, '../x y"') == 128768
    assert slice_liveness.bound_of(bounds, "f") is None and slice_liveness.bound_of(bounds, "other") is None
    assert not (tmp_path / slice_liveness.DUMP_DIR).exists()


def _kws(tmp_path, variant):
    pytest.importorskip("onnxruntime")
    onnx = pytest.importorskip("onnx")
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "benchmarks"))
    import mlperf_tiny_models as mt

    path = tmp_path / f"kws_{variant}.onnx"
    onnx.save(mt.build("ds_cnn") if variant == "float" else mt.quantized("ds_cnn"), path)
    return path


def _emit(model, out, *flags):
    proc = run_cli("emit", model, "-o", out, "--execution-model", "runtimeless", *flags)
    assert proc.returncode == 0, proc.stderr
    assert not list(out.rglob("*layout-slices*")) and not list(out.rglob("stream*.mlir"))
    return json.loads((out / "manifest.json").read_text())


def _conv_chain(path, channels=16, height=12, width=10):
    """Four 3x3 convolutions (padding 1), each followed by ReLU."""
    import numpy as np
    from onnx import TensorProto, helper, numpy_helper

    onnx = pytest.importorskip("onnx")
    rng = np.random.default_rng(0)
    nodes, inits, x = [], [], "x"
    for i in range(4):
        inits += [
            numpy_helper.from_array(rng.normal(0, 0.3, (channels, channels, 3, 3)).astype(np.float32), f"w{i}"),
            numpy_helper.from_array(rng.normal(0, 0.1, channels).astype(np.float32), f"b{i}"),
        ]
        nodes.append(helper.make_node("Conv", [x, f"w{i}", f"b{i}"], [f"c{i}"], kernel_shape=[3, 3], pads=[1, 1, 1, 1]))
        nodes.append(helper.make_node("Relu", [f"c{i}"], [f"r{i}"]))
        x = f"r{i}"
    shape = [1, channels, height, width]
    graph = helper.make_graph(
        nodes,
        "chain",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, shape)],
        [helper.make_tensor_value_info(x, TensorProto.FLOAT, shape)],
        inits,
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    onnx.save(model, path)
    return path


def test_size_prints_the_arena_next_to_the_bound(tmp_path):
    """A chain of 3x3 convolutions: IREE writes each convolution's output
    into the zero-padded copy the next one reads, so, one dispatch at a
    time, two padded 16x14x12 copies are live at once; IREE's concurrent
    partitioning (asked for with --iree-flag) starts the next copy's fill
    while the convolution before still runs: three in IREE's slab.  Split
    back into its buffers (runtimeless/slab.py) and run one dispatch at a
    time, they need two again, and the bound is that of those buffers."""
    model = _conv_chain(tmp_path / "chain.onnx")
    padded = 16 * 14 * 12 * 4
    sequential = _emit(model, tmp_path / "out")
    assert "--iree-stream-partitioning-favor=debug" in sequential["compile_flags"]
    concurrent = _emit(model, tmp_path / "c", "--iree-flag=--iree-stream-partitioning-favor=max-concurrency")
    assert [f for f in concurrent["compile_flags"] if f.startswith(partitioning.FLAG)] == [
        "--iree-stream-partitioning-favor=max-concurrency"
    ]
    for manifest, bound in ((sequential, 2 * padded), (concurrent, 2 * padded)):
        arena = manifest["runtimeless"]["arena"]
        assert arena["lower_bound"] == bound
        assert bound <= arena["size_aligned_io"] <= 1.15 * bound
    proc = run_cli("size", tmp_path / "out")
    assert proc.returncode == 0, proc.stderr
    ratio = sequential["runtimeless"]["arena"]["size_aligned_io"] / (2 * padded)
    assert f"without staging; liveness lower bound {2 * padded:,} ({ratio:.2f}x)" in proc.stdout


@pytest.mark.full_suite
def test_the_partitioning_with_the_smaller_arena_is_kept(tmp_path):
    """Keyword spotting int8: IREE lays the sequential schedule out in more
    bytes than the concurrent one (52,096 against 40,000 with IREE 3.13), so
    the concurrent one is kept; its arena is the smallest of the two (the
    slab split and placed by ireegen, slab.py, brings both to 16,000 B), at
    its lower bound."""
    model = _kws(tmp_path, "int8")
    chosen = _emit(model, tmp_path / "out")
    arenas = {}
    for favor in partitioning.CHOICES:
        m = _emit(model, tmp_path / favor, f"--iree-flag={partitioning.FLAG}={favor}")
        arenas[favor] = m["runtimeless"]["arena"]["size_aligned_io"]
    (flag,) = [f for f in chosen["compile_flags"] if f.startswith(partitioning.FLAG)]
    assert arenas[flag.split("=", 1)[1]] == min(arenas.values())
    assert chosen["runtimeless"]["arena"]["size_aligned_io"] == min(arenas.values())
    assert chosen["runtimeless"]["arena"]["size_aligned_io"] <= 1.15 * chosen["runtimeless"]["arena"]["lower_bound"]


def test_a_chain_through_a_bottleneck_is_laid_out_at_its_bound():
    """Equal buffers handed down a chain, each live for two steps, with an
    8-byte one in the middle (an autoencoder's int8 layers): two slots of
    128 B hold them all, but only if the chain swaps slots at the
    bottleneck.  Every greedy order puts the small buffer at 256 (the 320 B
    arena the --quantized-io autoencoder had); the search finds 256 B."""
    from ireegen.runtimeless import arena

    lives = [(0, 1), (1, 2), (2, 3), (3, 4), (5, 6), (6, 7), (7, 8), (8, 9)]
    regions = [arena.Region(f"b{i}", 128, a, b, "intermediate") for i, (a, b) in enumerate(lives)]
    regions.append(arena.Region("bottleneck", 8, 4, 5, "intermediate"))
    assert min(arena.plan(list(regions), 64, order=o) for o in arena.ORDERS) == 264
    assert arena.plan_best(regions, 64) == 256
    for x in regions:
        assert x.offset % 64 == 0
        for y in regions:
            if x is not y and x.first <= y.last and y.first <= x.last:
                assert x.offset + x.size <= y.offset or y.offset + y.size <= x.offset
