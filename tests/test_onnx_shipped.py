"""ONNX files as exporters in the wild write them: PaddlePaddle's
`dim_value: -1` for an unknown size, old opsets whose upgrade renames or
resolves unknown dimensions, configuration inputs fixed with
`--input-value`.  Models are built here with onnx.helper in the shapes those
exporters write, and checked against ONNX Runtime."""

import json

import numpy as np
import pytest
from conftest import run_cli

onnx = pytest.importorskip("onnx")
from onnx import TensorProto, helper, numpy_helper  # noqa: E402

ORT = pytest.importorskip("onnxruntime")

from ireegen.frontend.onnx_import import _same_value  # noqa: E402


def _save(model, path):
    onnx.checker.check_model(model)
    onnx.save_model(model, str(path))
    return path


def _ort(path, feeds: dict) -> list:
    return ORT.InferenceSession(str(path), providers=["CPUExecutionProvider"]).run(None, feeds)


def paddle_bn_model(opset=12):
    """x [-1, 1, -1, -1] -> BatchNormalization -> Relu -> out [-1, 1, -1, -1]:
    unknown sizes written as PaddlePaddle writes them, and an opset-12
    BatchNormalization that IREE lowers only after the upgrade to 17."""
    inits = [
        numpy_helper.from_array(np.array([v], np.float32), n)
        for n, v in (("scale", 1.5), ("bias", -0.1), ("mean", 0.2), ("var", 0.9))
    ]
    graph = helper.make_graph(
        [
            helper.make_node("BatchNormalization", ["x", "scale", "bias", "mean", "var"], ["y"], name="bn"),
            helper.make_node("Relu", ["y"], ["out"], name="relu"),
        ],
        "det",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [-1, 1, -1, -1])],
        [helper.make_tensor_value_info("out", TensorProto.FLOAT, [-1, 1, -1, -1])],
        inits,
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)], ir_version=7)


def test_negative_dim_value_is_unknown_and_input_shape_pins_it(tmp_path):
    """`dim_value: -1` shows as `?`, --input-shape pins it, and the opset-12
    model's upgrade (needed by BatchNormalization) is taken: the output's
    unknown sizes become the pinned ones, which is no interface change."""
    path = _save(paddle_bn_model(), tmp_path / "det.onnx")
    info = run_cli("info", path)
    assert info.returncode == 0, info.stderr
    assert "in  x: float32 [?x1x?x?]" in info.stdout and "out out: float32 [?x1x?x?]" in info.stdout

    out = tmp_path / "out"
    proc = run_cli("emit", path, "-o", out, "--execution-model", "runtimeless", "--input-shape", "x=1x1x6x5")
    assert proc.returncode == 0, proc.stderr
    assert "verified against async" in proc.stdout
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["functions"][0]["inputs"][0]["shape"] == [1, 1, 6, 5]
    assert manifest["functions"][0]["outputs"][0]["shape"] == [1, 1, 6, 5]

    from ireegen.parity import parity

    x = np.linspace(-2, 2, 30, dtype=np.float32).reshape(1, 1, 6, 5)
    report = parity(
        path,
        modes=["async", "runtimeless"],
        input_shapes={"x": (1, 1, 6, 5)},
        inputs={"det": [x]},
        reference="onnxruntime",
        rtol=1e-5,
        atol=1e-6,
    )
    assert report.agrees, report.table()
    np.testing.assert_allclose(report.results["runtimeless"]["det"][0], _ort(path, {"x": x})[0], rtol=1e-5, atol=1e-6)


def test_negative_dim_value_unpinned_upgrade_renames_unknowns(tmp_path):
    """Unpinned, the converter names the unknown sizes (`?` -> `unk__N`): the same interface."""
    path = _save(paddle_bn_model(), tmp_path / "det.onnx")
    proc = run_cli("emit", path, "-o", tmp_path / "out", "--execution-model", "async")
    assert proc.returncode == 0, proc.stderr


def test_input_shape_still_refuses_a_known_size(tmp_path):
    model = paddle_bn_model()
    model.graph.input[0].type.tensor_type.shape.dim[1].dim_value = 1
    path = _save(model, tmp_path / "det.onnx")
    proc = run_cli("info", path, "--input-shape", "x=1x3x6x5")
    assert proc.returncode == 2 and "dimension 1 of x is fixed at 1" in proc.stderr


@pytest.mark.parametrize(
    "before, after, same",
    [
        (("y", 1, ("?", 1)), ("y", 1, ("unk__54", 1)), True),  # an unknown size renamed
        (("y", 1, ("?", 1, "?", "?")), ("y", 1, (1, 1, 320, 320)), True),  # an unknown size resolved
        (("y", 1, None), ("y", 1, (1, 2)), True),  # an unknown rank resolved
        (("y", 1, (1, 2)), ("y", 1, (2,)), False),  # a dimension dropped
        (("y", 1, (1, 2)), ("y", 1, (1, 3)), False),  # a different static size
        (("y", 1, (1, 2)), ("y", 7, (1, 2)), False),  # a changed dtype
        (("y", 1, (1, 2)), ("y", 1, None), False),  # a shape lost
        (("y", 1, (1, 2)), ("z", 1, (1, 2)), False),  # a renamed value
    ],
)
def test_upgrade_interface_compares_dimensions_by_meaning(before, after, same):
    assert _same_value(before, after) is same
