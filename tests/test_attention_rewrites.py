"""The attention rewrites (ireegen/frontend/onnx_attention_rewrites.py).
softmax-as-lane-reductions: a Softmax over the last axis becomes partial
maxima and sums over 16 lanes.  It matches only that, and the rewritten
graph equals ONNX Runtime's Softmax on random forms (ranks, row lengths on
and off a multiple of 16, opsets, large offsets, -inf entries as attention
masks write them, whole rows of -inf), in ONNX Runtime and through IREE.
matmul-rows-padded: a transformer block's row-wise region (LayerNorm,
MatMuls by weights, bias, GELU, residual) runs on rows padded to a
multiple of 16 and equals the graph as written on random forms."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import bare_iree_output, onnxruntime_output

from ireegen.frontend.onnx_rewrites import apply_rewrites

onnx = pytest.importorskip("onnx")
ort = pytest.importorskip("onnxruntime")
from onnx import TensorProto, helper  # noqa: E402

REWRITE = "softmax-as-lane-reductions"
ROWS = "matmul-rows-padded"


def _model(shape, opset=17, axis=None, elem=TensorProto.FLOAT):
    attrs = {} if axis is None else {"axis": axis}
    graph = helper.make_graph(
        [helper.make_node("Softmax", ["x"], ["y"], name="softmax", **attrs)],
        "softmax",
        [helper.make_tensor_value_info("x", elem, shape)],
        [helper.make_tensor_value_info("y", elem, shape)],
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)], ir_version=8)


def _rewritten(model, expected=True):
    copy = onnx.ModelProto()
    copy.CopyFrom(model)
    applied = apply_rewrites(copy)
    assert (applied == [{"rewrite": REWRITE, "nodes": 1}]) == expected, applied
    assert any(n.op_type == "Softmax" for n in copy.graph.node) != expected
    return copy


def _random_form(seed):
    """A Softmax over the last axis of 8192 elements or more, its input
    with an offset, a scale, and at times masked (-inf) entries or rows."""
    rng = np.random.default_rng(seed)
    row = int(rng.integers(2, 20)) * 16 + int(rng.choice([0, 0, *rng.integers(1, 16, 3)]))
    rows = -(-8192 // (-(-row // 16) * 16))
    batch = [int(d) for d in rng.integers(1, 4, int(rng.integers(0, 3)))]
    shape = [*batch, max(1, -(-rows // int(np.prod(batch)))) + int(rng.integers(0, 5)), row]
    opset = int(rng.choice([13, 17, 18, 20]))
    axis = None if opset >= 13 and rng.random() < 0.5 else int(rng.choice([-1, len(shape) - 1]))
    x = rng.standard_normal(shape) * rng.choice([1.0, 8.0, 30.0]) + rng.choice([0.0, 100.0, -1000.0, 1e4])
    x = x.astype(np.float32)
    if rng.random() < 0.5:
        x[..., rng.integers(0, row, row // 4)] = -np.inf
    if rng.random() < 0.3:
        x.reshape(-1, row)[int(rng.integers(0, x.size // row))] = -np.inf
    return _model(shape, opset, axis), x


@pytest.mark.parametrize("seed", range(16))
def test_random_forms_equal_onnxruntime(seed):
    model, x = _random_form(seed)
    want = onnxruntime_output(model, x)
    got = onnxruntime_output(_rewritten(model), x)
    assert got.shape == want.shape
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-7)


@pytest.mark.parametrize(
    "shape, axis, elem",
    [
        ([64, 256], 0, TensorProto.FLOAT),  # not the last axis
        ([4, 64, 256], 1, TensorProto.FLOAT),
        ([2048, 16], -1, TensorProto.FLOAT),  # rows shorter than two vectors
        ([8, 1000], -1, TensorProto.FLOAT),  # fewer than 8192 elements: the op is faster
        ([64, 256], -1, TensorProto.DOUBLE),
        ([64, 256], -1, TensorProto.FLOAT16),
    ],
    ids=["first-axis", "middle-axis", "short-rows", "small", "double", "float16"],
)
def test_softmax_outside_the_pattern_stays(shape, axis, elem):
    _rewritten(_model(shape, axis=axis, elem=elem), expected=False)


def test_a_dynamic_row_stays():
    model = _model([64, 256])
    model.graph.input[0].type.tensor_type.shape.dim[1].dim_param = "keys"
    _rewritten(model, expected=False)


def test_iree_computes_onnxruntimes_softmax(tmp_path):
    """Scores of 2 heads over 77 tokens, offset by 1000, a masked key
    column and a masked row: IREE on the rewritten graph gives ONNX
    Runtime's Softmax of the model as written."""
    model = _model([2, 77, 77])
    x = (np.random.default_rng(0).standard_normal((2, 77, 77)) * 8 + 1000).astype(np.float32)
    x[..., 5] = -np.inf
    x[1, 3] = -np.inf
    want = onnxruntime_output(model, x)
    np.testing.assert_allclose(bare_iree_output(tmp_path, _rewritten(model), x), want, rtol=1e-5, atol=1e-7)


def _block(rows, hidden, mlp, rank=3, seed=0, side_output=False, opset=17, shared=False):
    """A transformer block's row-wise part on x [1, rows, hidden] (rank 3)
    or [rows, hidden]: LayerNormalization, MatMul + bias, GELU (Erf form),
    MatMul + bias, the residual Add; with `side_output` the GELU's output
    is a graph output too (a second exit); with `shared` the bias and the
    LayerNorm's scale come through Identity nodes, as TorchScript exports
    share weights."""
    from onnx import numpy_helper

    rng = np.random.default_rng(seed)
    shape = [1, rows, hidden][3 - rank :]

    def const(name, *dims, scale=0.1):
        return numpy_helper.from_array((rng.standard_normal(dims) * scale).astype(np.float32), name)

    inits = [const("g", hidden, scale=1), const("beta", hidden), const("w1", hidden, mlp), const("b1", mlp)]
    inits += [const("w2", mlp, hidden), const("b2", hidden)]
    inits += [
        numpy_helper.from_array(np.array(v, np.float32), n) for n, v in (("half", 0.5), ("one", 1.0), ("r2", 2**0.5))
    ]
    nodes = [helper.make_node("Identity", [name], [f"{name}_shared"]) for name in ("g", "b1")] if shared else []
    g, b1 = ("g_shared", "b1_shared") if shared else ("g", "b1")
    nodes += [
        helper.make_node("LayerNormalization", ["x", g, "beta"], ["n"], axis=-1, epsilon=1e-5),
        helper.make_node("MatMul", ["n", "w1"], ["h0"]),
        helper.make_node("Add", ["h0", b1], ["h"]),
        helper.make_node("Div", ["h", "r2"], ["hs"]),
        helper.make_node("Erf", ["hs"], ["he"]),
        helper.make_node("Add", ["he", "one"], ["h1"]),
        helper.make_node("Mul", ["h", "half"], ["hh"]),
        helper.make_node("Mul", ["hh", "h1"], ["a"]),
        helper.make_node("MatMul", ["a", "w2"], ["o0"]),
        helper.make_node("Add", ["o0", "b2"], ["o"]),
        helper.make_node("Add", ["o", "x"], ["y"]),
    ]
    outputs = [helper.make_tensor_value_info("y", TensorProto.FLOAT, shape)]
    if side_output:
        outputs.append(helper.make_tensor_value_info("a", TensorProto.FLOAT, [*shape[:-1], mlp]))
    graph = helper.make_graph(
        nodes, "block", [helper.make_tensor_value_info("x", TensorProto.FLOAT, shape)], outputs, inits
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)], ir_version=8)


def _run_all(model, x):
    session = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    return session.run(None, {"x": x})


@pytest.mark.parametrize("seed", range(6))
def test_padded_rows_on_random_blocks_equal_the_graph(seed):
    rng = np.random.default_rng(seed)
    rows = int(rng.integers(4, 16)) * 16 + int(rng.integers(1, 16))
    hidden, mlp = int(rng.integers(2, 6)) * 8, int(rng.integers(2, 9)) * 8
    model = _block(rows, hidden, mlp, int(rng.integers(2, 4)), seed, side_output=bool(seed % 2), shared=seed % 3 == 0)
    x = (rng.standard_normal([int(d.dim_value) for d in model.graph.input[0].type.tensor_type.shape.dim]) * 3).astype(
        np.float32
    )
    want = _run_all(model, x)
    rewritten = onnx.ModelProto()
    rewritten.CopyFrom(model)
    assert apply_rewrites(rewritten) == [{"rewrite": ROWS, "nodes": 2}]
    ops = [n.op_type for n in rewritten.graph.node]
    # Entries: the LayerNorm's output (the first MatMul's A) and the residual x; exits: y (and a).
    assert ops.count("Pad") == 2 and ops.count("Slice") == 1 + bool(seed % 2), ops
    for got, expected in zip(_run_all(rewritten, x), want):
        assert got.shape == expected.shape
        np.testing.assert_allclose(got, expected, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("rows", [64, 208, 50], ids=["multiple-of-16", "multiple-of-16-again", "few-rows"])
def test_rows_outside_the_pattern_stay(rows):
    model = _block(rows, 16, 32)
    assert ROWS not in {r["rewrite"] for r in apply_rewrites(model)}
    assert "Pad" not in {n.op_type for n in model.graph.node}


def test_iree_computes_the_padded_block(tmp_path):
    """A block over 77 rows through IREE with its rows padded to 80 gives
    ONNX Runtime's numbers for the block as written."""
    model = _block(77, 16, 32)
    x = (np.random.default_rng(1).standard_normal((1, 77, 16)) * 3).astype(np.float32)
    want = _run_all(model, x)[0]
    rewritten = onnx.ModelProto()
    rewritten.CopyFrom(model)
    assert apply_rewrites(rewritten) == [{"rewrite": ROWS, "nodes": 2}]
    np.testing.assert_allclose(bare_iree_output(tmp_path, rewritten, x), want, rtol=1e-4, atol=1e-5)


def test_the_convolution_rewrites_products_stay(tmp_path):
    """conv1d-as-matmul's windows x weights over 301 positions (rows off a
    multiple of 16, constant weights) is not padded: measured on
    transformers only."""
    from test_onnx_conv1d_rewrites import _conv1d_model

    _conv1d_model(tmp_path / "conv1d.onnx", 3, 5, 301, [(7, 3, 1, 1, (2, 0), True, None)], 1)
    model = onnx.load(str(tmp_path / "conv1d.onnx"))
    assert apply_rewrites(model) == [{"rewrite": "conv1d-as-matmul", "nodes": 1}]
