"""The speed rewrite `depthwise-pad-in-producer`
(ireegen/frontend/depthwise_pad_producer.py): on random inverted-residual
blocks written channels-last by `depthwise-separable-as-nhwc` (batch 1 and
2, maps of 13 to 24 pixels, 3x3 and 5x5 depthwise kernels at strides 1 and
2, uneven pads, Relu6, HardSwish, unfolded BatchNormalization, per-channel
scales, residual adds), the depthwise Conv's zero border comes from its
expansion's MatMul and a mask, and the graph computes what ONNX Runtime
computes for the model as written; the forms it must leave alone keep
their Pad; one goes through IREE."""

import json

import numpy as np
import pytest
from conftest import run_cli
from test_nhwc_layout import _Graph, _run_ort

onnx = pytest.importorskip("onnx")
pytest.importorskip("onnxruntime")


def _blocks(seed: int, activation=None, shared_output: bool = False, contraction: bool = False):
    """(model, x): a stem and two or three inverted-residual blocks drawn from
    `seed` (the first a 3x3 at stride 1); `activation` forces the expansion's activation op, `shared_output`
    makes each expansion's activation also a graph output, `contraction`
    makes the "expansion" narrower than its input."""
    from onnx import helper

    rng = np.random.default_rng(seed)
    g = _Graph(rng)
    n, c = int(rng.integers(1, 3)), int(rng.integers(1, 4))
    h, w = int(rng.integers(13, 25)), int(rng.integers(13, 25))
    x = rng.standard_normal((n, c, h, w)).astype(np.float32)
    width = int(rng.integers(3, 9))
    value = g.act(g.conv("x", c, width, 3))
    extra_outputs = []
    for block in range(int(rng.integers(2, 4))):
        expanded = max(2, width - 1) if contraction else width * int(rng.integers(2, 5))
        out = int(rng.integers(3, 12))
        kernel, stride = int(rng.choice([3, 5])), int(rng.integers(1, 3))
        pads = [int(p) for p in rng.integers(0, kernel, 4)] if rng.integers(3) == 0 else None
        if block == 0:  # one 3x3 at stride 1 on the full map: a border the rewrite takes
            kernel, stride, pads = 3, 1, None
        y = g.conv(value, width, expanded, 1)
        if rng.integers(3) == 0:
            y = g.batch_norm(y, expanded)  # left unfolded: x * s + t before the activation
        y = g.op(activation, y) if activation else g.act(y)
        if rng.integers(3) == 0:  # a per-channel scale, a constant of shape [C, 1, 1]
            y = g.op("Mul", y, g.const(rng.standard_normal((expanded, 1, 1))))
        if shared_output:
            extra_outputs.append(g.op("Identity", y))
        y = g.act(g.conv(y, expanded, expanded, kernel, stride, group=expanded, pads=pads))
        y = g.conv(y, expanded, out, 1)
        if out == width and pads is None and stride == 1:
            y = g.op("Add", y, value)  # the residual: the next expansion's input has two readers
        value, width = y, out
    g.op("GlobalAveragePool", value, out="pooled")
    graph = helper.make_graph(
        g.nodes,
        "blocks",
        [helper.make_tensor_value_info("x", 1, list(x.shape))],
        [helper.make_tensor_value_info(name, 1, None) for name in ("pooled", *extra_outputs)],
        g.inits,
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], ir_version=8)
    return onnx.shape_inference.infer_shapes(model, strict_mode=True), x


def _nhwc_blocks(seed: int):
    """_blocks(seed)'s model as `depthwise-separable-as-nhwc` writes it: the form this rewrite takes."""
    from ireegen.frontend.nhwc_layout import depthwise_separable_as_nhwc
    from ireegen.frontend.onnx_fold import static_shapes

    model, _ = _blocks(seed)
    assert depthwise_separable_as_nhwc(model, static_shapes(model), {t.name: t for t in model.graph.initializer})
    return model


def _rewritten(model):
    from ireegen.frontend.onnx_rewrites import apply_rewrites

    copy = onnx.ModelProto()
    copy.CopyFrom(model)
    applied = {r["rewrite"]: r["nodes"] for r in apply_rewrites(copy)}
    return copy, applied


def _masks(model) -> int:
    """Muls by a border mask: the depthwise inputs whose Pad moved."""
    return sum(n.op_type == "Mul" and "border_mask" in n.input[1] for n in model.graph.node)


@pytest.mark.parametrize("seed", range(10))
def test_random_blocks_match_onnxruntime(seed):
    model, x = _blocks(seed)
    expected = _run_ort(model, x)
    rewritten, applied = _rewritten(model)
    assert applied.get("depthwise-pad-in-producer", 0) >= 1, applied
    assert _masks(rewritten) == applied["depthwise-pad-in-producer"]
    for got, want in zip(_run_ort(rewritten, x), expected):
        assert got.shape == want.shape
        np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize(
    "case",
    [
        {"activation": "Exp"},  # not finite on every finite input: the border could become inf * 0
        {"shared_output": True},  # the activation is read elsewhere: it must keep its shape
        {"contraction": True},  # the Pad would move to a larger tensor
    ],
    ids=["exp", "shared", "contraction"],
)
def test_forms_it_leaves_alone(case):
    model, x = _blocks(1, **case)
    expected = _run_ort(model, x)
    rewritten, applied = _rewritten(model)
    assert "depthwise-separable-as-nhwc" in applied
    assert "depthwise-pad-in-producer" not in applied, applied
    for got, want in zip(_run_ort(rewritten, x), expected):
        np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4)


def test_extra_rows_only_for_window_readers():
    """A grid whose row count is not a multiple of ROW_TILE gets extra zero
    rows only when every reader of the padded value is a window Slice; a
    MaxPool reading it keeps the Pad."""
    from onnx import helper, numpy_helper

    from ireegen.frontend.depthwise_pad_producer import ROW_TILE, depthwise_pad_in_producer

    rng = np.random.default_rng(0)
    h = w = 13  # a 15 x 15 grid: 225 rows
    assert 225 % ROW_TILE
    inits = [
        numpy_helper.from_array(rng.standard_normal((4, 16)).astype(np.float32), "weights"),
        numpy_helper.from_array(np.array([h * w, 4], np.int64), "rows_shape"),
        numpy_helper.from_array(np.array([1, h, w, 16], np.int64), "grid_shape"),
        numpy_helper.from_array(np.array([0, 1, 1, 0, 0, 1, 1, 0], np.int64), "pads"),
    ]
    nodes = [
        helper.make_node("Reshape", ["x", "rows_shape"], ["rows"]),
        helper.make_node("MatMul", ["rows", "weights"], ["product"]),
        helper.make_node("Reshape", ["product", "grid_shape"], ["grid"]),
        helper.make_node("Relu", ["grid"], ["act"]),
        helper.make_node("Pad", ["act", "pads"], ["padded"]),
        helper.make_node("MaxPool", ["padded"], ["y"], kernel_shape=[3, 3]),
    ]
    graph = helper.make_graph(
        nodes,
        "g",
        [helper.make_tensor_value_info("x", 1, [1, h, w, 4])],
        [helper.make_tensor_value_info("y", 1, None)],
        inits,
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], ir_version=8)
    shapes = {"x": [1, h, w, 4], "rows": [h * w, 4], "product": [h * w, 16], "grid": [1, h, w, 16]}
    shapes.update(act=[1, h, w, 16], padded=[1, h + 2, w + 2, 16])
    values = {t.name: t for t in inits}
    assert depthwise_pad_in_producer(model, shapes, values) == 0
    assert "Pad" in [n.op_type for n in model.graph.node]


@pytest.mark.full_suite
def test_blocks_through_iree(tmp_path):
    """One through IREE: emitted (verified against async) with the rewrite in
    its manifest (a minute on a loaded 2-core machine; the PaddleOCR
    classifier's test in test_real_models.py goes through IREE with it in CI)."""
    model, _ = _blocks(0)
    path = tmp_path / "blocks.onnx"
    onnx.save(model, str(path))
    proc = run_cli("emit", path, "-o", tmp_path / "out", "--execution-model", "runtimeless", "--target-cpu", "host")
    assert proc.returncode == 0 and "verified against async" in proc.stdout, proc.stderr
    manifest = json.loads((tmp_path / "out" / "manifest.json").read_text())
    assert "depthwise-pad-in-producer" in {r["rewrite"] for r in manifest["onnx_rewrites"]}
