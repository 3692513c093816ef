"""The QDQ rewrites (ireegen/frontend/onnx_qdq_rewrites.py) leave every
int8 value as it was: ONNX Runtime, with its own graph optimizations off,
gives the same bits on the model as written and as rewritten, over random
graphs, scales and zero points.  And they leave alone what they must not
take: different quantizations, values used twice, graph outputs."""

from __future__ import annotations

import numpy as np
import pytest

from ireegen.frontend.onnx_qdq_rewrites import identical_qdq_around_data_movement, quantize_before_data_movement

ort = pytest.importorskip("onnxruntime")
onnx = pytest.importorskip("onnx")
from onnx import TensorProto, helper, numpy_helper  # noqa: E402

SHAPE = (2, 3, 4, 5)
# op -> (extra inputs as arrays, attributes)
MOVES = {
    "Flatten": ({}, {"axis": 1}),
    "Reshape": ({"shape": np.array([6, 20], np.int64)}, {}),
    "Transpose": ({}, {"perm": [0, 2, 3, 1]}),
    "Squeeze": ({"axes": np.array([0], np.int64)}, {}),
    "Unsqueeze": ({"axes": np.array([1], np.int64)}, {}),
    "Identity": ({}, {}),
}


def _move(op, source, result, inits, prefix):
    extra, attrs = MOVES[op]
    names = []
    for key, value in extra.items():
        inits.append(numpy_helper.from_array(value, f"{prefix}_{key}"))
        names.append(f"{prefix}_{key}")
    return helper.make_node(op, [source, *names], [result], **attrs)


def _qparams(inits, prefix, scale, zero):
    inits.append(numpy_helper.from_array(np.array(scale, np.float32), f"{prefix}_s"))
    inits.append(numpy_helper.from_array(np.array(zero, zero.dtype), f"{prefix}_z"))
    return [f"{prefix}_s", f"{prefix}_z"]


def _model(op, first, second, *, dq_used_twice=False, move_output=False, move_first=False):
    """x (float) -> Q(first) -> DQ(first) -> op -> Q(second) -> DQ(second) -> y;
    `move_first`: x -> op -> Q(second) -> DQ -> y (a float move before the
    quantize, as a model's input reshape)."""
    inits, nodes, outputs = [], [], []
    if move_first:
        nodes.append(_move(op, "x", "moved", inits, "m"))
    else:
        a = _qparams(inits, "a", *first)
        nodes += [
            helper.make_node("QuantizeLinear", ["x", *a], ["xq"]),
            helper.make_node("DequantizeLinear", ["xq", *a], ["xf"]),
        ]
        nodes.append(_move(op, "xf", "moved", inits, "m"))
        if dq_used_twice:
            nodes.append(helper.make_node("Relu", ["xf"], ["side"]))
            outputs.append(helper.make_tensor_value_info("side", TensorProto.FLOAT, None))
    b = _qparams(inits, "b", *second)
    nodes += [
        helper.make_node("QuantizeLinear", ["moved", *b], ["yq"]),
        helper.make_node("DequantizeLinear", ["yq", *b], ["y"]),
    ]
    outputs.insert(0, helper.make_tensor_value_info("y", TensorProto.FLOAT, None))
    if move_output:
        outputs.append(helper.make_tensor_value_info("moved", TensorProto.FLOAT, None))
    shape = (1, *SHAPE[1:]) if op == "Squeeze" else SHAPE
    graph = helper.make_graph(
        nodes, "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, list(shape))], outputs, inits
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]), shape


def _run(model, x):
    options = ort.SessionOptions()
    options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    session = ort.InferenceSession(model.SerializeToString(), options, providers=["CPUExecutionProvider"])
    return session.run(None, {"x": x})


def _values(model) -> dict:
    return {t.name: t for t in model.graph.initializer}


def _rewrite(model, rewrite):
    rewritten = onnx.ModelProto()
    rewritten.CopyFrom(model)
    count = rewrite(rewritten, {}, _values(rewritten))
    onnx.shape_inference.infer_shapes(rewritten, strict_mode=True)
    return rewritten, count


def _random_quantization(rng, dtype):
    scale = np.float32(2.0 ** rng.uniform(-12, 3))
    info = np.iinfo(dtype)
    return scale, np.array(rng.integers(info.min, info.max + 1), dtype)


@pytest.mark.parametrize("op", sorted(MOVES))
@pytest.mark.parametrize("dtype", [np.int8, np.uint8])
def test_identical_quantization_around_a_move_is_dropped_exactly(op, dtype):
    rng = np.random.default_rng(len(op) * 7 + (dtype == np.int8))
    for case in range(25):
        q = _random_quantization(rng, dtype)
        model, shape = _model(op, q, q)
        rewritten, count = _rewrite(model, identical_qdq_around_data_movement)
        assert count == 1
        assert [n.op_type for n in rewritten.graph.node] == ["QuantizeLinear", op, "DequantizeLinear"]
        # Every int8 value and more: inputs across the whole quantized range and past it.
        x = (rng.uniform(-300, 300, shape) * q[0]).astype(np.float32)
        expected, got = _run(model, x), _run(rewritten, x)
        assert all(np.array_equal(e, g) for e, g in zip(expected, got)), f"case {case}"


@pytest.mark.parametrize("op", sorted(MOVES))
def test_quantize_moved_before_a_move_is_exact(op):
    rng = np.random.default_rng(len(op))
    for case in range(25):
        first, second = _random_quantization(rng, np.int8), _random_quantization(rng, np.int8)
        for move_first in (False, True):
            model, shape = _model(op, first, second, move_first=move_first)
            assert identical_qdq_around_data_movement(model, {}, _values(model)) == 0  # two quantizations
            rewritten, count = _rewrite(model, quantize_before_data_movement)
            assert count == 1
            kinds = [n.op_type for n in rewritten.graph.node]
            assert kinds.index("QuantizeLinear", 1 if not move_first else 0) < kinds.index(op)
            x = (rng.uniform(-300, 300, shape) * first[0]).astype(np.float32)
            expected, got = _run(model, x), _run(rewritten, x)
            assert all(np.array_equal(e, g) for e, g in zip(expected, got)), f"case {case}"


@pytest.mark.parametrize(
    "kind", ["dq_used_twice", "move_output", "other_scale", "other_zero", "other_type", "read_by_a_subgraph"]
)
def test_what_is_not_the_pattern_is_kept(kind):
    q = (np.float32(0.05), np.array(3, np.int8))
    other = {
        "other_scale": (np.float32(0.0500001), np.array(3, np.int8)),
        "other_zero": (np.float32(0.05), np.array(4, np.int8)),
        "other_type": (np.float32(0.05), np.array(3, np.uint8)),
    }.get(kind, q)
    model, _ = _model("Flatten", q, other, dq_used_twice=kind == "dq_used_twice", move_output=kind == "move_output")
    if kind == "read_by_a_subgraph":  # an If's branch reads the float Flatten's result and the dequantized input
        branch = helper.make_graph(
            [helper.make_node("Add", ["moved", "xf"], ["sum"])],
            "branch",
            [],
            [helper.make_tensor_value_info("sum", TensorProto.FLOAT, None)],
        )
        model.graph.initializer.append(numpy_helper.from_array(np.array(True), "cond"))
        model.graph.node.append(helper.make_node("If", ["cond"], ["side"], then_branch=branch, else_branch=branch))
        model.graph.output.append(helper.make_tensor_value_info("side", TensorProto.FLOAT, None))
    before = [n.op_type for n in model.graph.node]
    assert identical_qdq_around_data_movement(model, {}, _values(model)) == 0
    assert [n.op_type for n in model.graph.node] == before
    if kind in ("move_output", "read_by_a_subgraph"):  # the float result stays
        assert quantize_before_data_movement(model, {}, _values(model)) == 0
