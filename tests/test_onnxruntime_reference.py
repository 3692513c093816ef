"""The ONNX Runtime reference runs a QDQ graph's fused int8 operators on
every host (check/subjects.ONNXRUNTIME_CONFIG): a residual block, whose
input's QuantizeLinear is read by a convolution and by the Add, is
QLinearConv and QLinearAdd there, not float Conv and Add (on x86-64 ORT's
default leaves them float: docs/kernels-int8.md, "Trained PyTorch ResNet-8s")."""

from __future__ import annotations

import collections
import platform

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

from ireegen.check.subjects import ONNXRUNTIME_CONFIG

ort = pytest.importorskip("onnxruntime")


def residual_block() -> onnx.ModelProto:
    """x -> Q -> DQ -> Conv -> Q -> DQ (read twice) -> Conv -> Q -> DQ -> Add (with the DQ) -> Q -> DQ."""
    rng = np.random.default_rng(0)
    inits, nodes = [], []

    def const(name, array):
        inits.append(numpy_helper.from_array(np.asarray(array), name))
        return name

    def qdq(x, name, scale, zero):
        const(name + "_s", np.float32(scale))
        const(name + "_z", np.int8(zero))
        nodes.append(helper.make_node("QuantizeLinear", [x, name + "_s", name + "_z"], [name + "_q"]))
        nodes.append(helper.make_node("DequantizeLinear", [name + "_q", name + "_s", name + "_z"], [name + "_dq"]))
        return name + "_dq"

    def conv(x, name, x_scale):
        w = const(name + "_w", rng.integers(-127, 128, (4, 4, 3, 3), dtype=np.int8))
        ws = const(name + "_ws", np.float32(0.01))
        b = const(name + "_b", rng.integers(-500, 500, 4, dtype=np.int32))
        bs = const(name + "_bs", np.float32(x_scale * 0.01))
        nodes.append(helper.make_node("DequantizeLinear", [w, ws], [name + "_wdq"]))
        nodes.append(helper.make_node("DequantizeLinear", [b, bs], [name + "_bdq"]))
        nodes.append(helper.make_node("Conv", [x, name + "_wdq", name + "_bdq"], [name], pads=[1, 1, 1, 1]))
        return name

    x = qdq("x", "in", 0.02, 3)
    h = qdq(conv(x, "c1", 0.02), "h", 0.05, -10)  # read by c2 and by the Add
    y = qdq(conv(h, "c2", 0.05), "y", 0.07, 5)
    nodes.append(helper.make_node("Add", [y, h], ["sum"]))
    out = qdq("sum", "out", 0.09, -2)
    graph = helper.make_graph(
        nodes,
        "block",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 4, 6, 6])],
        [helper.make_tensor_value_info(out, TensorProto.FLOAT, [1, 4, 6, 6])],
        inits,
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])


def optimized_ops(tmp_path, config: dict) -> collections.Counter:
    model = tmp_path / "block.onnx"
    onnx.save(residual_block(), model)
    options = ort.SessionOptions()
    options.log_severity_level = 3
    options.optimized_model_filepath = str(tmp_path / "optimized.onnx")
    for key, value in config.items():
        options.add_session_config_entry(key, value)
    ort.InferenceSession(str(model), options, providers=["CPUExecutionProvider"])
    return collections.Counter(n.op_type for n in onnx.load(tmp_path / "optimized.onnx").graph.node)


def test_reference_runs_the_int8_operators(tmp_path):
    ops = optimized_ops(tmp_path, ONNXRUNTIME_CONFIG)
    assert ops["QLinearConv"] == 2 and ops["QLinearAdd"] == 1, ops
    assert ops["Conv"] == 0 and ops["Add"] == 0, ops


@pytest.mark.skipif(platform.machine() not in ("x86_64", "AMD64"), reason="ORT's default fuses int8 elsewhere")
def test_default_x86_session_leaves_the_block_in_float(tmp_path):
    """Why the config is needed: ORT's default on x86-64 runs the convolution
    and Add that read the twice-read QuantizeLinear in float."""
    ops = optimized_ops(tmp_path, {})
    assert ops["Conv"] + ops["Add"] > 0, ops
