"""strided-depthwise-conv-as-decimated-taps
(ireegen/frontend/onnx_decimate_rewrites.py): a depthwise Conv strided
along one axis becomes the stride-1 Conv (then depthwise-conv-as-taps) and
a strided Slice, and computes what ONNX Runtime computes on the model as
written, in async and runtimeless; what it must not take stays a Conv."""

import json

import numpy as np
import pytest
from conftest import run_cli

from ireegen.parity import parity

onnx = pytest.importorskip("onnx")
pytest.importorskip("onnxruntime")


def _model(path, n, channels, height, width, convs, seed=3):
    """x [n, channels, height, width] through depthwise Convs (each: kernel,
    pads, dilations, strides, bias), a Relu after each."""
    from onnx import helper, numpy_helper

    rng = np.random.default_rng(seed)
    nodes, inits, value, dims = [], [], "x", [n, channels, height, width]
    for i, (kernel, pads, dilations, strides, bias) in enumerate(convs):
        inits.append(numpy_helper.from_array(rng.standard_normal((channels, 1, *kernel)).astype(np.float32), f"w{i}"))
        inputs = [value, f"w{i}"]
        if bias:
            inits.append(numpy_helper.from_array(rng.standard_normal(channels).astype(np.float32), f"b{i}"))
            inputs.append(f"b{i}")
        attrs = dict(kernel_shape=list(kernel), pads=list(pads), dilations=list(dilations), strides=list(strides))
        nodes.append(helper.make_node("Conv", inputs, [f"c{i}"], name=f"dw{i}", group=channels, **attrs))
        nodes.append(helper.make_node("Relu", [f"c{i}"], [f"r{i}"]))
        value = f"r{i}"
        for axis in (2, 3):
            span = dilations[axis - 2] * (kernel[axis - 2] - 1) + 1
            dims[axis] = (dims[axis] + pads[axis - 2] + pads[axis] - span) // strides[axis - 2] + 1
    nodes[-1].output[0] = "y"
    graph = helper.make_graph(
        nodes,
        "decimate",
        [helper.make_tensor_value_info("x", 1, [n, channels, height, width])],
        [helper.make_tensor_value_info("y", 1, dims)],
        inits,
    )
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], ir_version=8), str(path))


def test_strided_depthwise_conv_as_decimated_taps(tmp_path):
    path = tmp_path / "decimate.onnx"
    convs = [
        ((5, 5), (2, 2, 2, 2), (1, 1), (2, 1), True),  # the OCR classifier's: taken
        ((3, 3), (1, 0, 2, 1), (1, 2), (1, 2), False),  # along the width, uneven pads, dilation: taken
        ((1, 3), (0, 1, 0, 1), (1, 1), (2, 1), True),  # strided along a one-tap axis: taken
        ((3, 1), (1, 0, 1, 0), (1, 1), (3, 1), True),  # stride 3: 3x the work; depthwise-conv-as-taps' phases
        ((3, 3), (1, 1, 1, 1), (1, 1), (2, 2), True),  # (2, 2): depthwise-conv-as-taps' phases
    ]
    _model(path, 2, 6, 40, 14, convs)
    proc = run_cli("emit", path, "-o", tmp_path / "out", "--execution-model", "runtimeless")
    assert proc.returncode == 0 and "verified against async" in proc.stdout, proc.stderr
    manifest = json.loads((tmp_path / "out" / "manifest.json").read_text())
    assert {"rewrite": "strided-depthwise-conv-as-decimated-taps", "nodes": 3} in manifest["onnx_rewrites"]
    assert {"rewrite": "depthwise-conv-as-taps", "nodes": 5} in manifest["onnx_rewrites"]  # 3 decimated, 2 phased
    x = np.random.default_rng(1).standard_normal((2, 6, 40, 14)).astype(np.float32)
    report = parity(
        path, modes=["async", "runtimeless"], inputs={"decimate": [x]}, reference="onnxruntime", rtol=1e-5, atol=1e-5
    )
    assert report.agrees and not report.compile_errors, report.table()


def test_what_decimation_leaves_alone():
    from onnx import helper, numpy_helper

    from ireegen.frontend.onnx_decimate_rewrites import strided_depthwise_conv_as_decimated_taps

    def taken(weights, group, dims, out_dims, **attrs):
        w = numpy_helper.from_array(weights, "w")
        node = helper.make_node("Conv", ["x", "w"], ["y"], group=group, **attrs)
        graph = helper.make_graph([node], "g", [helper.make_tensor_value_info("x", 1, dims)], [], [w])
        model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
        return strided_depthwise_conv_as_decimated_taps(model, {"x": dims, "y": out_dims}, {"w": w})

    ones = np.ones
    assert taken(
        ones((8, 1, 3, 3), np.float32), 8, [1, 8, 8, 8], [1, 8, 4, 8], kernel_shape=[3, 3], pads=[1] * 4, strides=[2, 1]
    )
    # grouped but not depthwise
    assert not taken(
        ones((8, 2, 3, 3), np.float32), 4, [1, 8, 8, 8], [1, 8, 4, 8], kernel_shape=[3, 3], pads=[1] * 4, strides=[2, 1]
    )
    # more taps than depthwise-conv-as-taps takes
    assert not taken(
        ones((8, 1, 7, 7), np.float32), 8, [1, 8, 8, 8], [1, 8, 4, 8], kernel_shape=[7, 7], pads=[3] * 4, strides=[2, 1]
    )
    # stride 1: depthwise-conv-as-taps' own
    assert not taken(ones((8, 1, 3, 3), np.float32), 8, [1, 8, 8, 8], [1, 8, 8, 8], kernel_shape=[3, 3], pads=[1] * 4)
