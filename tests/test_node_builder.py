"""onnx_nodes.NodeBuilder names: every name it gives is new to the graph
and to the nodes appended so far, whoever appended them (the builder, or
the walk that owns `out_nodes` and the graph's initializers), and is the
name `fresh_name` gives; a builder whose graph's node list was swapped
reads every name again.  Milliseconds: no model is compiled."""

import numpy as np
import pytest

from ireegen.frontend.onnx_nodes import NodeBuilder, fresh_name

onnx = pytest.importorskip("onnx")
from onnx import TensorProto, helper  # noqa: E402


def _graph():
    return helper.make_graph(
        [helper.make_node("Relu", ["x"], ["p/relu0"])],
        "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2])],
        [helper.make_tensor_value_info("p/relu0", TensorProto.FLOAT, [2])],
    )


def test_names_appended_by_other_hands_are_not_given_again():
    graph, out_nodes = _graph(), []
    b = NodeBuilder(graph, out_nodes, "p")
    assert b.op("Relu", "x") == "p/relu1"  # p/relu0 is the graph's
    out_nodes.append(helper.make_node("Relu", ["x"], ["p/relu2"]))  # the walk keeps a node
    graph.initializer.append(onnx.numpy_helper.from_array(np.zeros(1, np.float32), "p/relu3"))
    graph.input.append(helper.make_tensor_value_info("p/relu4", TensorProto.FLOAT, [1]))
    assert b.op("Relu", "x") == fresh_name(graph, "p/relu", out_nodes[:-1]) == "p/relu5"
    b.prefix = "q"
    assert b.op("Relu", "x") == "q/relu0"
    assert b.name("relu") == fresh_name(graph, "q/relu", out_nodes) == "q/relu1"


def test_a_swapped_node_list_is_read_again():
    graph, out_nodes = _graph(), []
    b = NodeBuilder(graph, out_nodes, "p")
    assert b.op("Relu", "x") == "p/relu1"
    # Another walk replaces the graph's nodes with more nodes, new names among them.
    swapped = [helper.make_node("Relu", ["x"], [f"p/relu{k}"]) for k in (2, 3)]
    del graph.node[:]
    graph.node.extend([*swapped, helper.make_node("Relu", ["x"], ["other"])])
    want = fresh_name(graph, "p/relu", out_nodes)
    assert b.op("Relu", "x") == want == "p/relu0"  # p/relu0 left the graph; p/relu2 came in
