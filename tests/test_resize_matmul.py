"""The speed rewrite `linear-resize-as-matmuls`
(ireegen/frontend/resize_matmul.py): a bilinear Resize as two MatMuls with
constant interpolation matrices.  On random forms (batch, channels, sizes
up and down, sizes or scales, every coordinate transformation it takes) the
rewritten graph computes in ONNX Runtime what the Resize computes."""

import numpy as np
import pytest
from conftest import onnxruntime_output

onnx = pytest.importorskip("onnx")
pytest.importorskip("onnxruntime")

MODES = ("half_pixel", "pytorch_half_pixel", "align_corners", "asymmetric")


def _random_resize(seed: int, **attrs):
    """A linear Resize of a random [N, C, H, W] to random sizes (even seeds:
    the `sizes` input; odd: `scales`, integer or not).  Returns (model, x)."""
    from onnx import helper, numpy_helper

    rng = np.random.default_rng(seed)
    n, c = int(rng.integers(1, 3)), int(rng.integers(1, 5))
    size = [int(rng.integers(1, 12)) for _ in range(2)]
    x = rng.standard_normal((n, c, *size)).astype(np.float32)
    attrs = {"mode": "linear", "coordinate_transformation_mode": MODES[seed % len(MODES)], **attrs}
    if seed % 2:
        factors = [float(rng.choice([1.0, 2.0, 0.5, 1.5, 8.0, 0.75])) for _ in range(2)]
        inits = [numpy_helper.from_array(np.array([1, 1, *factors], np.float32), "scales")]
        inputs = ["x", "", "scales"]
    else:
        out = [int(rng.integers(1, 30)) for _ in range(2)]
        inits = [numpy_helper.from_array(np.array([n, c, *out], np.int64), "sizes")]
        inputs = ["x", "", "", "sizes"]
    graph = helper.make_graph(
        [helper.make_node("Resize", inputs, ["y"], **attrs)],
        "resize",
        [helper.make_tensor_value_info("x", 1, list(x.shape))],
        [helper.make_tensor_value_info("y", 1, None)],
        inits,
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], ir_version=8), x


@pytest.mark.parametrize("seed", range(40))
def test_linear_resize_as_matmuls_on_random_forms_matches_onnxruntime(seed):
    from ireegen.frontend.onnx_rewrites import apply_rewrites

    model, x = _random_resize(seed)
    expected = onnxruntime_output(model, x)
    rewritten = onnx.ModelProto()
    rewritten.CopyFrom(model)
    assert {"rewrite": "linear-resize-as-matmuls", "nodes": 1} in apply_rewrites(rewritten)
    assert "Resize" not in {node.op_type for node in rewritten.graph.node}
    got = onnxruntime_output(rewritten, x)
    assert got.shape == expected.shape
    np.testing.assert_allclose(got, expected, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize(
    "attrs",
    [{"mode": "nearest"}, {"mode": "cubic"}, {"coordinate_transformation_mode": "tf_crop_and_resize"}],
    ids=["nearest", "cubic", "crop"],
)
def test_other_resizes_stay(attrs):
    from ireegen.frontend.onnx_rewrites import apply_rewrites

    model, _ = _random_resize(2, **attrs)
    apply_rewrites(model)
    assert "Resize" in {node.op_type for node in model.graph.node}


def test_a_resize_of_integers_stays():
    """A uint8 image's Resize: the interpolation matrices are float32."""
    from onnx import helper, numpy_helper

    from ireegen.frontend.onnx_rewrites import apply_rewrites

    sizes = numpy_helper.from_array(np.array([1, 3, 16, 16], np.int64), "sizes")
    graph = helper.make_graph(
        [helper.make_node("Resize", ["x", "", "", "sizes"], ["y"], mode="linear")],
        "resize",
        [helper.make_tensor_value_info("x", onnx.TensorProto.UINT8, [1, 3, 8, 8])],
        [helper.make_tensor_value_info("y", onnx.TensorProto.UINT8, None)],
        [sizes],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], ir_version=8)
    assert apply_rewrites(model) == []
    assert [node.op_type for node in model.graph.node] == ["Resize"]
