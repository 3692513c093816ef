"""A Loop's body reads values of the graph around it by name (the bounded
NonMaxSuppression's suppression steps read the scores and the boxes' edges):
the passes that ask which nodes read a value ask onnx_nodes.node_reads,
which counts those reads, and a new name is never one a body already uses.
Each model here runs in ONNX Runtime before and after the pass (milliseconds)."""

import numpy as np
import pytest

from ireegen.frontend.onnx_nodes import NodeBuilder, node_reads, outer_reads, used_names
from ireegen.frontend.onnx_rewrites import apply_rewrites

onnx = pytest.importorskip("onnx")
ort = pytest.importorskip("onnxruntime")

from onnx import TensorProto, helper, numpy_helper  # noqa: E402


def _session(model):
    options = ort.SessionOptions()
    options.log_severity_level = 3
    return ort.InferenceSession(model.SerializeToString(), options, providers=["CPUExecutionProvider"])


def _loop(outer: str, dims: list, steps: int = 2) -> tuple:
    """(Loop node, initializers): `steps` times, acc += the outer value `outer` (read by name in the body)."""
    body = helper.make_graph(
        [
            helper.make_node("Add", ["acc_in", outer], ["acc_out"]),
            helper.make_node("Identity", ["go"], ["go_out"]),
        ],
        "body",
        [
            helper.make_tensor_value_info("i", TensorProto.INT64, []),
            helper.make_tensor_value_info("go", TensorProto.BOOL, []),
            helper.make_tensor_value_info("acc_in", TensorProto.FLOAT, dims),
        ],
        [
            helper.make_tensor_value_info("go_out", TensorProto.BOOL, []),
            helper.make_tensor_value_info("acc_out", TensorProto.FLOAT, dims),
        ],
    )
    inits = [
        numpy_helper.from_array(np.array(steps, np.int64), "steps"),
        numpy_helper.from_array(np.array(True), "true"),
        numpy_helper.from_array(np.zeros(dims, np.float32), "acc0"),
    ]
    return helper.make_node("Loop", ["steps", "true", "acc0"], ["summed"], body=body, name="loop"), inits


def test_node_reads_are_the_inputs_and_what_the_body_reads_from_outside():
    loop, _ = _loop("feature", [1, 2])
    assert outer_reads(loop) == ["feature"]  # not the body's inputs nor its own values
    assert node_reads(loop) == ["steps", "true", "acc0", "feature"]
    then_branch, else_branch = helper.make_graph([loop], "then", [], []), helper.make_graph([], "else", [], [])
    nested = helper.make_node("If", ["c"], ["r"], then_branch=then_branch, else_branch=else_branch)
    assert node_reads(nested) == ["c", "steps", "true", "acc0", "feature"]


def test_a_new_name_is_never_one_a_body_uses():
    loop, inits = _loop("x", [2])
    graph = helper.make_graph([loop], "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2])], [])
    graph.initializer.extend(inits)
    assert {"acc_in", "acc_out", "go_out"} <= used_names(graph)
    b = NodeBuilder(graph, [], "acc")
    assert b.op("Identity", "x") not in used_names(graph)
    body: list = []
    inner = b.nested(body).op("Neg", "x")  # named by the parent: not one the parent gives again
    assert inner not in {b.op("Neg", "x") for _ in range(3)}


def _separable_cnn_read_by_a_loop():
    """A depthwise-separable CNN (pointwise, depthwise, pointwise Convs) whose
    last feature map only a Loop's body reads: the NHWC layout rewrite takes
    the Convs, and the feature map must exist in NCHW for the body."""
    rng = np.random.default_rng(0)
    dims = [1, 4, 6, 6]
    w = {
        "w1": rng.standard_normal((4, 3, 1, 1)),
        "w2": rng.standard_normal((4, 1, 3, 3)),
        "w3": rng.standard_normal((4, 4, 1, 1)),
    }
    nodes = [
        helper.make_node("Conv", ["x", "w1"], ["a"], kernel_shape=[1, 1]),
        helper.make_node("Conv", ["a", "w2"], ["b"], kernel_shape=[3, 3], pads=[1, 1, 1, 1], group=4),
        helper.make_node("Conv", ["b", "w3"], ["feature"], kernel_shape=[1, 1]),
    ]
    loop, inits = _loop("feature", dims, steps=3)
    graph = helper.make_graph(
        [*nodes, loop],
        "cnn",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 3, 6, 6])],
        [helper.make_tensor_value_info("summed", TensorProto.FLOAT, dims)],
        [*inits, *(numpy_helper.from_array(v.astype(np.float32), k) for k, v in w.items())],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    onnx.checker.check_model(model)
    return model


def test_a_layout_rewrite_keeps_the_value_a_loop_body_reads():
    model = _separable_cnn_read_by_a_loop()
    x = np.random.default_rng(1).standard_normal((1, 3, 6, 6)).astype(np.float32)
    want = _session(model).run(None, {"x": x})[0]
    rewritten = onnx.ModelProto()
    rewritten.CopyFrom(model)
    applied = {r["rewrite"] for r in apply_rewrites(rewritten)}
    assert "depthwise-separable-as-nhwc" in applied
    onnx.checker.check_model(rewritten)
    np.testing.assert_allclose(_session(rewritten).run(None, {"x": x})[0], want, rtol=1e-5, atol=1e-5)
