"""Exports that are not valid ONNX are refused in one line before any compile:
the form here is what PyTorch's dynamo exporter writes when asked for an opset
below its own (GPT-2 from transformers at opset_version=17): it exports at 18
and converts down, leaving Split's opset-18 `num_outputs` attribute on an
opset-17 Split, which ONNX Runtime rejects too."""

from __future__ import annotations

import onnx
from conftest import refused_in_one_line, run_cli
from onnx import TensorProto, helper


def _split_with_num_outputs(path, opset: int) -> None:
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 6])
    outs = [helper.make_tensor_value_info(f"y{i}", TensorProto.FLOAT, [1, 2]) for i in range(3)]
    split = helper.make_node("Split", ["x"], [o.name for o in outs], axis=1, num_outputs=3)
    graph = helper.make_graph([split], "split", [x], outs)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    model.ir_version = 8
    onnx.save(model, path)


def test_split_num_outputs_below_opset_18_is_refused(tmp_path):
    model = tmp_path / "converted.onnx"
    _split_with_num_outputs(model, 17)
    proc = run_cli("emit", model, "-o", tmp_path / "out", "--execution-model", "async", "--tune", "off")
    refused_in_one_line(proc, str(model), "not a valid ONNX model", "num_outputs", "Split")
    assert not (tmp_path / "out" / "manifest.json").exists()


def test_a_node_shape_inference_rejects_is_named_as_malformed_not_as_unsupported(tmp_path):
    """A Concat of a rank-1 and a rank-2 input (the form PyTorch's dynamo
    exporter writes for an LSTM with proj_size, which ONNX Runtime will not
    load either): the refusal says what is wrong with the node, not that
    IREE lacks the op."""
    model = tmp_path / "concat.onnx"
    a = helper.make_tensor_value_info("a", TensorProto.FLOAT, [2])
    b = helper.make_tensor_value_info("b", TensorProto.FLOAT, [2, 3])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [4])
    graph = helper.make_graph([helper.make_node("Concat", ["a", "b"], ["y"], axis=0, name="join")], "g", [a, b], [y])
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], ir_version=8), model)
    proc = run_cli("emit", model, "-o", tmp_path / "out", "--tune", "off")
    line = refused_in_one_line(proc, str(model), "node 'join' (Concat): the node is malformed", "must have same rank")
    assert "does not support" not in line
    assert not (tmp_path / "out").exists()
