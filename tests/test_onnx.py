"""ONNX models in: emit, info, parity (against ONNX Runtime and onnx's own
reference evaluator), run, CMake; the model's names in the C API; the
refusals.  Models are built here with onnx.helper, small but with the
features real exports have (named values, a symbolic batch, external data,
uint8 images, old opsets)."""

import json
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from conftest import configure_with_ireegen, run_cli

onnx = pytest.importorskip("onnx")
from onnx import TensorProto, helper, numpy_helper  # noqa: E402
from onnx.reference import ReferenceEvaluator  # noqa: E402

from ireegen.parity import parity  # noqa: E402

ORT = pytest.importorskip("onnxruntime")
IR_VERSION = 8  # what ONNX Runtime and older tools read


def _save(model, path: Path, **kwargs) -> Path:
    onnx.checker.check_model(model)
    onnx.save_model(model, str(path), **kwargs)
    return path


def mlp_model(opset=17, hidden=24, graph_name="predict"):
    """image [N, 64] -> Gemm -> Relu -> Gemm -> logits [N, 10]: a digits-sized MLP."""
    rng = np.random.default_rng(1)
    w1 = numpy_helper.from_array(rng.standard_normal((64, hidden)).astype(np.float32) * 0.2, "fc1.weight")
    b1 = numpy_helper.from_array(rng.standard_normal(hidden).astype(np.float32) * 0.1, "fc1.bias")
    w2 = numpy_helper.from_array(rng.standard_normal((hidden, 10)).astype(np.float32) * 0.2, "fc2.weight")
    b2 = numpy_helper.from_array(rng.standard_normal(10).astype(np.float32) * 0.1, "fc2.bias")
    graph = helper.make_graph(
        [
            helper.make_node("Gemm", ["image", "fc1.weight", "fc1.bias"], ["h"], name="fc1"),
            helper.make_node("Relu", ["h"], ["h_relu"], name="relu1"),
            helper.make_node("Gemm", ["h_relu", "fc2.weight", "fc2.bias"], ["logits"], name="fc2"),
        ],
        graph_name,
        [helper.make_tensor_value_info("image", TensorProto.FLOAT, ["N", 64])],
        [helper.make_tensor_value_info("logits", TensorProto.FLOAT, ["N", 10])],
        [w1, b1, w2, b2],
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)], ir_version=IR_VERSION)


def conv_model():
    """input.1 [1, 1, 8, 8] -> Conv 3x3 (4 ch) -> Relu -> MaxPool 2x2 -> Flatten -> Gemm -> [1, 5],
    with PyTorch-style names that are not C identifiers."""
    rng = np.random.default_rng(2)
    inits = [
        numpy_helper.from_array(rng.standard_normal((4, 1, 3, 3)).astype(np.float32) * 0.3, "conv.weight"),
        numpy_helper.from_array(rng.standard_normal(4).astype(np.float32) * 0.1, "conv.bias"),
        numpy_helper.from_array(rng.standard_normal((5, 36)).astype(np.float32) * 0.2, "fc.weight"),
        numpy_helper.from_array(rng.standard_normal(5).astype(np.float32) * 0.1, "fc.bias"),
    ]
    graph = helper.make_graph(
        [
            helper.make_node(
                "Conv", ["input.1", "conv.weight", "conv.bias"], ["c"], name="/conv/Conv", kernel_shape=[3, 3]
            ),
            helper.make_node("Relu", ["c"], ["r"], name="/relu/Relu"),
            helper.make_node("MaxPool", ["r"], ["p"], name="/pool/MaxPool", kernel_shape=[2, 2], strides=[2, 2]),
            helper.make_node("Flatten", ["p"], ["f"], name="/Flatten"),
            helper.make_node("Gemm", ["f", "fc.weight", "fc.bias"], ["18"], name="/fc/Gemm", transB=1),
        ],
        "main_graph",
        [helper.make_tensor_value_info("input.1", TensorProto.FLOAT, [1, 1, 8, 8])],
        [helper.make_tensor_value_info("18", TensorProto.FLOAT, [1, 5])],
        inits,
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], ir_version=IR_VERSION)


def uint8_model():
    """pixels uint8 [2, 4] -> (scaled float32, pixels + 1 as uint8, wrapping at 255)."""
    graph = helper.make_graph(
        [
            helper.make_node("Cast", ["pixels"], ["f"], name="to_float", to=TensorProto.FLOAT),
            helper.make_node("Mul", ["f", "scale"], ["scaled"], name="scale_mul"),
            helper.make_node("Add", ["pixels", "one"], ["bumped"], name="bump"),
        ],
        "preprocess",
        [helper.make_tensor_value_info("pixels", TensorProto.UINT8, [2, 4])],
        [
            helper.make_tensor_value_info("scaled", TensorProto.FLOAT, [2, 4]),
            helper.make_tensor_value_info("bumped", TensorProto.UINT8, [2, 4]),
        ],
        [
            numpy_helper.from_array(np.array(1 / 255, np.float32), "scale"),
            numpy_helper.from_array(np.array(1, np.uint8), "one"),
        ],
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], ir_version=IR_VERSION)


def old_opset_model():
    """Opset 9: Unsqueeze takes `axes` as an attribute (an input since 13) and
    Gemm needs a C input; the importer needs 17, so ireegen upgrades it."""
    w = numpy_helper.from_array(np.arange(12, dtype=np.float32).reshape(3, 4) / 10, "w")
    c = numpy_helper.from_array(np.zeros(4, np.float32), "c")
    graph = helper.make_graph(
        [
            helper.make_node("Gemm", ["x", "w", "c"], ["y"], name="gemm"),
            helper.make_node("Sigmoid", ["y"], ["s"], name="sig"),
            helper.make_node("Unsqueeze", ["s"], ["out"], name="unsq", axes=[0]),
        ],
        "old",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3])],
        [helper.make_tensor_value_info("out", TensorProto.FLOAT, [1, 2, 4])],
        [w, c],
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 9)], ir_version=4)


def unsupported_model():
    graph = helper.make_graph(
        [helper.make_node("StringNormalizer", ["words"], ["norm"], name="normalize_words", case_change_action="LOWER")],
        "text",
        [helper.make_tensor_value_info("words", TensorProto.STRING, [3])],
        [helper.make_tensor_value_info("norm", TensorProto.STRING, [3])],
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], ir_version=IR_VERSION)


def _reference(model_path, feeds: dict) -> list:
    return ReferenceEvaluator(str(model_path)).run(None, feeds)


def _check(report):
    assert report.agrees, report.table()
    assert not report.compile_errors


def test_mlp_dynamic_batch_named_against_onnxruntime_and_reference(tmp_path):
    """Every mode, async included, against ONNX Runtime; the batch pinned by
    --input-shape; the C API uses the ONNX names."""
    path = _save(mlp_model(), tmp_path / "digits.onnx")
    x = np.random.default_rng(3).standard_normal((5, 64)).astype(np.float32)
    report = parity(
        path,
        modes=["async", "inline-static", "inline-dynamic", "runtimeless"],
        input_shapes={"image": (5, 64)},
        inputs={"predict": [x]},
        reference="onnxruntime",
        rtol=1e-4,
        atol=1e-5,
    )
    _check(report)
    # Every mode, async included, is compared with ONNX Runtime as well as with async.
    assert {r.mode for r in report.rows if r.against == "onnxruntime" and r.verdict == "ok"} == {
        "async",
        "inline-static",
        "inline-dynamic",
        "runtimeless",
    }
    want = _reference(path, {"image": x})[0]
    for mode in ("async", "runtimeless"):
        np.testing.assert_allclose(report.results[mode]["predict"][0], want, rtol=1e-4, atol=1e-5)

    out = tmp_path / "out"
    proc = run_cli(
        "emit", path, "-o", out, "--name", "digits", "--execution-model", "runtimeless", "--input-shape", "image=1x64"
    )
    assert proc.returncode == 0, proc.stderr
    header = (out / "digits.h").read_text()
    assert "int digits_predict(digits_t* model, const float* image, float* logits);" in header
    assert "#define DIGITS_PREDICT_IMAGE_ELEMENT_COUNT 64\n" in header
    assert "#define DIGITS_PREDICT_LOGITS_SIZE_BYTES 40\n" in header
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["source"]["file"] == "digits.onnx"
    assert manifest["source"]["input_shapes"] == {"image": [1, 64]}
    fn = manifest["functions"][0]
    assert (fn["name"], fn["c_symbol"], fn["c_macro_prefix"]) == ("predict", "digits_predict", "DIGITS_PREDICT")
    assert fn["inputs"][0] == {
        "name": "image",
        "dtype": "float32",
        "shape": [1, 64],
        "kind": "tensor",
        "c_name": "image",
        "c_macro_prefix": "DIGITS_PREDICT_IMAGE",
    }

    # Without --input-shape the batch is dynamic: a buffer-view call, and runtimeless refuses it.
    info = run_cli("info", path)
    assert info.returncode == 0, info.stderr
    assert "@predict: C digits_predict(), macros DIGITS_PREDICT_*, buffer-view call" in info.stdout
    assert "in  image: float32 [?x64]  C float image, macros DIGITS_PREDICT_IMAGE_*" in info.stdout
    refused = run_cli("emit", path, "-o", tmp_path / "dyn", "--execution-model", "runtimeless")
    assert refused.returncode == 2 and "dynamic shape" in refused.stderr


def test_conv_with_pytorch_style_names(tmp_path):
    path = _save(conv_model(), tmp_path / "cnn.onnx")
    info = run_cli("info", path)
    assert info.returncode == 0, info.stderr
    assert "in  input.1: float32 [1x1x8x8]  C float input_1, macros CNN_MAIN_GRAPH_INPUT_1_*" in info.stdout
    assert "out 18: float32 [1x5]  C float v_18, macros CNN_MAIN_GRAPH_V_18_*" in info.stdout
    x = np.random.default_rng(4).standard_normal((1, 1, 8, 8)).astype(np.float32)
    np.savez(tmp_path / "in.npz", **{"input.1": x})
    report = parity(
        path,
        modes=["async", "runtimeless"],
        inputs_file=tmp_path / "in.npz",
        reference="onnxruntime",
        rtol=1e-4,
        atol=1e-5,
    )
    _check(report)
    np.testing.assert_allclose(
        report.results["runtimeless"]["main_graph"][0], _reference(path, {"input.1": x})[0], rtol=1e-4, atol=1e-5
    )


def test_uint8_stays_unsigned_end_to_end(tmp_path):
    """Lowering makes ui8 i8; the C API, the manifest and the bytes stay uint8."""
    path = _save(uint8_model(), tmp_path / "pre.onnx")
    out = tmp_path / "out"
    proc = run_cli("emit", path, "-o", out, "--execution-model", "runtimeless")
    assert proc.returncode == 0, proc.stderr
    header = (out / "pre.h").read_text()
    declaration = "int pre_preprocess(pre_t* model, const uint8_t* pixels, float* scaled, uint8_t* bumped);"
    assert declaration in " ".join(header.split())  # as laid out: broken over two lines
    manifest = json.loads((out / "manifest.json").read_text())
    ins, outs = manifest["functions"][0]["inputs"], manifest["functions"][0]["outputs"]
    assert (ins[0]["dtype"], ins[0]["module_dtype"]) == ("uint8", "int8")
    assert [o["dtype"] for o in outs] == ["float32", "uint8"]

    pixels = np.array([[0, 1, 127, 128], [200, 254, 255, 17]], np.uint8)  # >127: wrong if read as int8
    np.save(tmp_path / "pixels.npy", pixels)
    run = run_cli(
        "run",
        out,
        "--function",
        "preprocess",
        "--input",
        f"pixels=@{tmp_path / 'pixels.npy'}",
        "--output",
        f"@{tmp_path / 'scaled.npy'}",
        "--output",
        f"@{tmp_path / 'bumped.npy'}",
    )
    assert run.returncode == 0, run.stderr
    scaled, bumped = np.load(tmp_path / "scaled.npy"), np.load(tmp_path / "bumped.npy")
    want_scaled, want_bumped = _reference(path, {"pixels": pixels})
    assert bumped.dtype == np.uint8 and scaled.dtype == np.float32
    np.testing.assert_array_equal(bumped, want_bumped)  # 255 + 1 wraps to 0
    np.testing.assert_allclose(scaled, want_scaled, rtol=1e-6)
    assert scaled[1, 2] == pytest.approx(1.0)

    report = parity(path, modes=["async", "runtimeless"], inputs={"preprocess": [pixels]}, reference="onnxruntime")
    _check(report)
    assert report.results["async"]["preprocess"][1].dtype == np.uint8
    np.testing.assert_array_equal(report.results["async"]["preprocess"][1], want_bumped)


def test_external_data_and_path_independence(tmp_path):
    """Weights in a file beside the .onnx; the same model from two places
    gives byte-identical outputs; a missing data file is a one-line error."""
    outs = []
    for where in ("a", "b/deeper"):
        d = tmp_path / where
        d.mkdir(parents=True)
        _save(
            mlp_model(),
            d / "mlp.onnx",
            save_as_external_data=True,
            all_tensors_to_one_file=True,
            location="mlp.weights",
            size_threshold=0,
        )
        assert (d / "mlp.weights").stat().st_size > 64 * 24 * 4
        out = d / "out"
        proc = run_cli(
            "emit", "mlp.onnx", "-o", "out", "--execution-model", "runtimeless", "--input-shape", "image=2x64", cwd=d
        )
        assert proc.returncode == 0, proc.stderr
        outs.append(out)
    files = sorted(p.name for p in outs[0].iterdir())
    assert files == sorted(p.name for p in outs[1].iterdir())
    for f in files:
        assert (outs[0] / f).read_bytes() == (outs[1] / f).read_bytes(), f
    for f in files:
        if not f.endswith(".o"):
            assert str(tmp_path) not in (outs[0] / f).read_text(errors="replace"), f
    manifest = json.loads((outs[0] / "manifest.json").read_text())
    assert manifest["source"]["external_data"][0]["file"] == "mlp.weights"

    # The content key follows the weights file, not only the .onnx.
    from ireegen.compile.compiler import find_compiler
    from ireegen.config.modes import make_config
    from ireegen.output.reproducible import content_key

    def key(d):
        return content_key(
            d / "mlp.onnx", "mlp", make_config("runtimeless"), [], find_compiler(), input_shapes={"image": (2, 64)}
        )

    assert key(tmp_path / "a") == key(tmp_path / "b" / "deeper") == manifest["content_key"]
    weights = tmp_path / "b" / "deeper" / "mlp.weights"
    data = bytearray(weights.read_bytes())
    data[-1] ^= 1
    weights.write_bytes(bytes(data))
    assert key(tmp_path / "b" / "deeper") != manifest["content_key"]

    x = np.random.default_rng(5).standard_normal((2, 64)).astype(np.float32)
    report = parity(
        tmp_path / "a" / "mlp.onnx",
        modes=["async"],
        input_shapes={"image": (2, 64)},
        inputs={"predict": [x]},
        reference="onnxruntime",
        rtol=1e-4,
        atol=1e-5,
    )
    _check(report)

    (tmp_path / "a" / "mlp.weights").unlink()
    proc = run_cli("info", tmp_path / "a" / "mlp.onnx")
    assert proc.returncode == 2
    assert proc.stderr.strip().count("\n") == 0 and "Traceback" not in proc.stderr
    assert "mlp.onnx: its external data file mlp.weights is missing" in proc.stderr


def test_old_opset_is_upgraded(tmp_path):
    path = _save(old_opset_model(), tmp_path / "old.onnx")
    x = np.random.default_rng(6).standard_normal((2, 3)).astype(np.float32)
    report = parity(
        path, modes=["async", "runtimeless"], inputs={"old": [x]}, reference="onnxruntime", rtol=1e-5, atol=1e-6
    )
    _check(report)
    assert report.results["async"]["old"][0].shape == (1, 2, 4)


def test_old_opset_that_lowers_as_it_is_keeps_its_opset(tmp_path):
    """Upsample-9 with a `scales` input lowers as it is, with the declared
    output shape; upgraded to 17 it would be a Resize whose output size IREE
    computes at run time, which runtimeless C refuses."""
    graph = helper.make_graph(
        [helper.make_node("Upsample", ["x", "scales"], ["y"], name="up", mode="nearest")],
        "up",
        [
            helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 1, 2, 2]),
            helper.make_tensor_value_info("scales", TensorProto.FLOAT, [4]),
        ],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 1, 4, 6])],
    )
    path = _save(
        helper.make_model(graph, opset_imports=[helper.make_opsetid("", 9)], ir_version=4), tmp_path / "up.onnx"
    )
    proc = run_cli("emit", path, "-o", tmp_path / "out", "--execution-model", "runtimeless")
    assert proc.returncode == 0, proc.stderr
    assert "const float* x, const float* scales, float* y" in (tmp_path / "out" / "up.h").read_text()


def test_old_opset_upgrade_that_changes_the_interface_is_refused(tmp_path):
    """IREE has no lowering for Scan-8, and onnx's converter drops Scan-8's
    batch dimension from the graph's inputs and outputs: the C API would not
    be the model's, so ireegen refuses it, naming both."""
    body = helper.make_graph(
        [
            helper.make_node("Add", ["sum_in", "next"], ["sum_out"]),
            helper.make_node("Identity", ["sum_out"], ["scan_out"]),
        ],
        "body",
        [
            helper.make_tensor_value_info("sum_in", TensorProto.FLOAT, [2]),
            helper.make_tensor_value_info("next", TensorProto.FLOAT, [2]),
        ],
        [
            helper.make_tensor_value_info("sum_out", TensorProto.FLOAT, [2]),
            helper.make_tensor_value_info("scan_out", TensorProto.FLOAT, [2]),
        ],
    )
    graph = helper.make_graph(
        [helper.make_node("Scan", ["", "initial", "x"], ["y", "z"], name="scan", num_scan_inputs=1, body=body)],
        "cumsum",
        [
            helper.make_tensor_value_info("initial", TensorProto.FLOAT, [1, 2]),
            helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 3, 2]),
        ],
        [
            helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 2]),
            helper.make_tensor_value_info("z", TensorProto.FLOAT, [1, 3, 2]),
        ],
    )
    path = _save(
        helper.make_model(graph, opset_imports=[helper.make_opsetid("", 8)], ir_version=4), tmp_path / "scan.onnx"
    )
    proc = run_cli("emit", path, "-o", tmp_path / "out")
    assert proc.returncode == 2
    assert "Traceback" not in proc.stderr and proc.stderr.strip().count("\n") == 0
    assert (
        "node 'scan' (Scan): IREE's ONNX lowering does not support this op as used here (opset 8); "
        "upgrading the model to opset 17 would change its inputs or outputs "
        "(initial: float32 [1, 2] -> float32 [2])" in proc.stderr
    )
    assert not (tmp_path / "out").exists()


def test_unsupported_op_names_the_node(tmp_path):
    path = _save(unsupported_model(), tmp_path / "text.onnx")
    proc = run_cli("emit", path, "-o", tmp_path / "out")
    assert proc.returncode == 2
    assert "Traceback" not in proc.stderr and proc.stderr.strip().count("\n") == 0
    assert "node 'normalize_words' (StringNormalizer)" in proc.stderr
    assert str(path) in proc.stderr
    assert not (tmp_path / "out").exists()


def test_unsupported_op_of_an_unnamed_node_names_its_number(tmp_path):
    """Exporters and onnx's own node tests leave nodes unnamed: the error
    counts the node (from 1) instead, from the node's own location."""
    graph = helper.make_graph(
        [helper.make_node("Relu", ["x"], ["h"]), helper.make_node("Swish", ["h"], ["y"])],
        "act",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [4])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [4])],
    )
    path = _save(
        helper.make_model(graph, opset_imports=[helper.make_opsetid("", 24)], ir_version=10), tmp_path / "act.onnx"
    )
    proc = run_cli("emit", path, "-o", tmp_path / "out")
    assert proc.returncode == 2
    assert "Traceback" not in proc.stderr and proc.stderr.strip().count("\n") == 0
    assert "act.onnx: node #2 (Swish): IREE's ONNX lowering does not support this op" in proc.stderr


@pytest.mark.parametrize(
    "content, message",
    [
        (b"\x08\x01", "junk.onnx: the ONNX graph has no outputs"),  # a valid but empty ModelProto
        (b"hello, not protobuf", "junk.onnx: not a readable ONNX model"),
    ],
)
def test_not_a_model(tmp_path, content, message):
    (tmp_path / "junk.onnx").write_bytes(content)
    proc = run_cli("emit", tmp_path / "junk.onnx", "-o", tmp_path / "out")
    assert proc.returncode == 2 and message in proc.stderr and proc.stderr.strip().count("\n") == 0
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize(
    "flag, message",
    [
        ("foo=1x64", "--input-shape foo: "),
        ("image=1x", "--input-shape 'image=1x': dimensions must be positive integers"),
        ("image", "--input-shape 'image': expected NAME=DIMS"),
        ("image=0x64", "dimensions must be positive integers"),
        ("image=1x1x64", "--input-shape image: "),
        ("image=1x32", "--input-shape image: dimension 1 of image is fixed at 64"),
    ],
)
def test_input_shape_errors(tmp_path, flag, message):
    path = _save(mlp_model(), tmp_path / "m.onnx")
    proc = run_cli("info", path, "--input-shape", flag)
    assert proc.returncode == 2, proc.stderr
    assert message in proc.stderr and "Traceback" not in proc.stderr


def test_input_shape_on_mlir_and_missing_packages(tmp_path, samples):
    proc = run_cli("info", samples / "mlp" / "mlp.mlir", "--input-shape", "x=1")
    assert proc.returncode == 2 and "--input-shape: applies to .onnx models" in proc.stderr
    path = _save(mlp_model(), tmp_path / "m.onnx")
    for blocked, argv, hint in (
        ("onnx", ["info", str(path)], "needs the onnx package: pip install 'onnx>=1.21'"),
        (
            "onnxruntime",
            ["parity", str(path), "--reference", "onnxruntime", "--input-shape", "image=1x64"],
            "needs the onnxruntime package: pip install 'onnxruntime>=1.18'",
        ),
    ):
        code = f"import sys; sys.modules[{blocked!r}] = None; from ireegen.cli import main; sys.exit(main({argv!r}))"
        proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
        assert proc.returncode == 2, proc.stderr
        assert hint in proc.stderr and proc.stderr.strip().count("\n") == 0


CLASHING = """
func.func @f(%a: tensor<2xf32> {iree.abi.name = "model"}, %b: tensor<2xf32> {iree.abi.name = "int"},
             %c: tensor<2xf32> {iree.abi.name = "a.b"}, %d: tensor<2xf32> {iree.abi.name = "A_B"},
             %e: tensor<2xf32> {iree.abi.name = "x"}, %g: tensor<2xf32> {iree.abi.name = "x_data"},
             %h: tensor<2xf32>)
    -> (tensor<2xf32> {iree.abi.name = "status"}, tensor<2xf32>) {
  %0 = arith.addf %a, %b : tensor<2xf32>
  %1 = arith.addf %0, %c : tensor<2xf32>
  %2 = arith.addf %1, %d : tensor<2xf32>
  %3 = arith.addf %2, %e : tensor<2xf32>
  %4 = arith.addf %3, %g : tensor<2xf32>
  %5 = arith.mulf %4, %h : tensor<2xf32>
  return %4, %5 : tensor<2xf32>, tensor<2xf32>
}
"""


def test_mlir_names_sanitized_and_clash_free(tmp_path):
    """iree.abi.name names MLIR values; names that are C keywords, names the
    generated code uses, and names that sanitize alike all get distinct C
    names that compile warning-free (the runner builds with -Werror)."""
    path = tmp_path / "clash.mlir"
    path.write_text(CLASHING)
    info = run_cli("info", path, "--json")
    assert info.returncode == 0, info.stderr
    fn = json.loads(info.stdout)[0]
    c_names = [v["c_name"] for v in fn["inputs"] + fn["outputs"]]
    assert c_names == ["model_arg", "int_arg", "a_b", "a_b_2", "x", "x_data_2", "input6", "status_arg", "output1"]
    assert [v["name"] for v in fn["inputs"]][:2] == ["model", "int"]
    rng = np.random.default_rng(7)
    inputs = [rng.standard_normal(2).astype(np.float32) for _ in range(7)]
    np.savez(
        tmp_path / "in.npz",
        **{
            "f.model": inputs[0],
            "f.int": inputs[1],
            "a.b": inputs[2],
            "A_B": inputs[3],
            "input4": inputs[4],
            "x_data": inputs[5],
            "f.input6": inputs[6],
        },
    )
    report = parity(path, modes=["async", "runtimeless"], inputs_file=tmp_path / "in.npz")
    _check(report)
    want = sum(inputs[:6])
    np.testing.assert_allclose(report.results["runtimeless"]["f"][0], want, rtol=1e-6)
    np.testing.assert_allclose(report.results["runtimeless"]["f"][1], want * inputs[6], rtol=1e-6)


def test_macro_clash_between_functions_is_refused(tmp_path):
    path = tmp_path / "m.mlir"
    path.write_text("""
func.func @f(%a: tensor<2xf32> {iree.abi.name = "g_x"}) -> tensor<2xf32> { return %a : tensor<2xf32> }
func.func @f_g(%a: tensor<2xf32> {iree.abi.name = "x"}) -> tensor<2xf32> { return %a : tensor<2xf32> }
""")
    proc = run_cli("emit", path, "-o", tmp_path / "out")
    assert proc.returncode == 2
    assert "@f g_x and @f_g x both define the C macro M_F_G_X_RANK" in proc.stderr


CMAKE = shutil.which("cmake")
NINJA = shutil.which("ninja")


@pytest.mark.skipif(not (CMAKE and NINJA), reason="cmake and ninja needed")
def test_cmake_src_onnx_rebuilds_when_model_or_weights_change(tmp_path):
    src, build = tmp_path / "src", tmp_path / "build"
    src.mkdir()
    save = dict(save_as_external_data=True, all_tensors_to_one_file=True, location="digits.weights", size_threshold=0)
    _save(mlp_model(), src / "digits.onnx", **save)
    (src / "CMakeLists.txt").write_text(
        "cmake_minimum_required(VERSION 3.21)\nproject(t NONE)\nfind_package(ireegen CONFIG REQUIRED)\n"
        "ireegen_add_model(digits SRC digits.onnx EXECUTION_MODEL runtimeless INPUT_SHAPES image=1x64 "
        "GENERATE_ONLY)\n"
    )
    conf = configure_with_ireegen(src, build, "-G", "Ninja")
    assert conf.returncode == 0, conf.stdout

    def build_log():
        proc = subprocess.run([CMAKE, "--build", build], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        assert proc.returncode == 0, proc.stdout
        return proc.stdout.count("ireegen: generating digits ")

    header = build / "ireegen" / "digits" / "digits.h"
    assert build_log() == 1
    assert "const float* image, float* logits" in header.read_text()
    assert build_log() == 0
    # New weights, same graph: the data file changes, the .onnx does not.
    before = (build / "ireegen" / "digits" / "digits_constants.bin").read_bytes()
    m = mlp_model(hidden=24)
    for t in m.graph.initializer:
        arr = numpy_helper.to_array(t) * 2
        t.CopyFrom(numpy_helper.from_array(arr, t.name))
    onnx.save_model(m, str(tmp_path / "tmp.onnx"), **save)
    shutil.copy(tmp_path / "digits.weights", src / "digits.weights")
    assert build_log() == 1
    assert (build / "ireegen" / "digits" / "digits_constants.bin").read_bytes() != before
    # A different .onnx (another graph name): regenerated, the new name in the header.
    _save(mlp_model(graph_name="classify"), src / "digits.onnx", **save)
    assert build_log() == 1
    assert "int digits_classify(" in header.read_text()
    assert build_log() == 0

    bad = src / "CMakeLists.txt"
    bad.write_text(bad.read_text().replace("image=1x64", "pixels=1x64"))
    conf = subprocess.run([CMAKE, "-S", src, "-B", build], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    assert conf.returncode != 0
    assert "--input-shape pixels:" in conf.stdout and "has no input 'pixels'" in conf.stdout


def _mobilenet_like(torch):
    """A MobileNetV2-style network (inverted residuals, depthwise convs,
    BatchNorm with non-trivial statistics, ReLU6, global pooling, softmax):
    the shape of model people put on small devices.  89k parameters."""
    nn = torch.nn

    def block(cin, cout, stride, expand=4):
        mid = cin * expand
        return nn.Sequential(
            nn.Conv2d(cin, mid, 1, bias=False),
            nn.BatchNorm2d(mid),
            nn.ReLU6(),
            nn.Conv2d(mid, mid, 3, stride, 1, groups=mid, bias=False),
            nn.BatchNorm2d(mid),
            nn.ReLU6(),
            nn.Conv2d(mid, cout, 1, bias=False),
            nn.BatchNorm2d(cout),
        )

    class Residual(nn.Module):
        def __init__(self, c):
            super().__init__()
            self.block = block(c, c, 1)

        def forward(self, x):
            return x + self.block(x)

    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.stem = nn.Sequential(nn.Conv2d(3, 16, 3, 2, 1, bias=False), nn.BatchNorm2d(16), nn.ReLU6())
            self.body = nn.Sequential(
                block(16, 24, 2),
                Residual(24),
                block(24, 32, 2),
                Residual(32),
                Residual(32),
                block(32, 64, 2),
                Residual(64),
            )
            self.head = nn.Linear(64, 100)

        def forward(self, image):
            return torch.softmax(self.head(self.body(self.stem(image)).mean((2, 3))), -1)

    torch.manual_seed(0)
    net = Net().eval()
    for m in net.modules():
        if isinstance(m, nn.BatchNorm2d):
            m.running_mean.uniform_(-0.2, 0.2)
            m.running_var.uniform_(0.5, 1.5)
            m.weight.data.uniform_(0.5, 1.5)
    return net


@pytest.mark.parametrize(
    "dynamo", [pytest.param(True, marks=pytest.mark.full_suite), False], ids=["torch.export", "torchscript"]
)
def test_pytorch_route(tmp_path, dynamo):
    """torch.onnx.export -> ireegen emit, as docs/onnx.md shows it, with
    PyTorch's default exporter (torch.export, needs onnxscript; it writes the
    weights as external data) and the older TorchScript one."""
    torch = pytest.importorskip("torch")
    if dynamo:
        pytest.importorskip("onnxscript")
    net = _mobilenet_like(torch)
    x = torch.randn(1, 3, 96, 96)
    path = tmp_path / "net.onnx"
    torch.onnx.export(
        net,
        (x,),
        str(path),
        input_names=["image"],
        output_names=["probs"],
        dynamic_axes={"image": {0: "batch"}, "probs": {0: "batch"}},
        opset_version=18,
        dynamo=dynamo,
    )
    out = tmp_path / "out"
    proc = run_cli("emit", path, "-o", out, "--execution-model", "runtimeless", "--input-shape", "image=1x3x96x96")
    assert proc.returncode == 0, proc.stderr
    assert "const float* image, float* probs" in (out / "net.h").read_text()
    fn = json.loads((out / "manifest.json").read_text())["functions"][0]["name"]
    report = parity(
        path,
        modes=["async", "runtimeless"],
        input_shapes={"image": (1, 3, 96, 96)},
        inputs={fn: [x.numpy()]},
        reference="onnxruntime",
        rtol=1e-4,
        atol=1e-6,
    )
    _check(report)
    with torch.no_grad():
        want = net(x).numpy()
    np.testing.assert_allclose(report.results["runtimeless"][fn][0], want, rtol=1e-4, atol=1e-6)
