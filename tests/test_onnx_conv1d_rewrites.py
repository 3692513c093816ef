"""conv1d-as-matmul (ireegen/frontend/onnx_conv1d_rewrites.py): it takes
every 1-D Conv it can compute as a product, and only those, and the
rewritten model computes what ONNX Runtime computes on the model as
written, in async and runtimeless, over random shapes, strides, dilations,
pads, batches and channel counts."""

import json

import numpy as np
import pytest
from conftest import run_cli

from ireegen.parity import parity

onnx = pytest.importorskip("onnx")
pytest.importorskip("onnxruntime")


def _conv1d_model(path, n, channels, length, convs, seed):
    """x [n, channels, length] through the given Convs, one after another
    (each: output channels, kernel, stride, dilation, pads, bias, auto_pad),
    a Relu between them; returns the output dims."""
    from onnx import helper, numpy_helper

    rng = np.random.default_rng(seed)
    nodes, inits, value, dims = [], [], "x", [n, channels, length]
    for i, (cout, k, stride, dilation, pads, bias, auto_pad) in enumerate(convs):
        inits.append(numpy_helper.from_array(rng.standard_normal((cout, dims[1], k)).astype(np.float32), f"w{i}"))
        inputs = [value, f"w{i}"]
        if bias:
            inits.append(numpy_helper.from_array(rng.standard_normal(cout).astype(np.float32), f"b{i}"))
            inputs.append(f"b{i}")
        attrs = {"kernel_shape": [k], "strides": [stride], "dilations": [dilation]}
        if auto_pad:
            attrs["auto_pad"], pads = auto_pad, (0, 0)
        else:
            attrs["pads"] = list(pads)
        nodes.append(helper.make_node("Conv", inputs, [f"c{i}"], name=f"conv{i}", **attrs))
        nodes.append(helper.make_node("Relu", [f"c{i}"], [f"r{i}"]))
        value = f"r{i}"
        dims = [n, cout, (dims[2] + sum(pads) - dilation * (k - 1) - 1) // stride + 1]
    nodes[-1].output[0] = "y"
    graph = helper.make_graph(
        nodes,
        "conv1d",
        [helper.make_tensor_value_info("x", 1, [n, channels, length])],
        [helper.make_tensor_value_info("y", 1, dims)],
        inits,
    )
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], ir_version=8), str(path))
    return dims


# Each case: batch, input channels, length, and its Convs (output channels,
# kernel, stride, dilation, pads, bias, auto_pad).
CASES = {
    # silero-vad's STFT (one channel, kernel 2x the stride) then its encoder.
    "stft": (1, 1, 160, [(34, 32, 16, 1, (0, 0), False, None), (16, 3, 1, 1, (1, 1), True, None)]),
    # batch 3, odd channels, uneven pads, dilation, stride 2, a pointwise Conv, VALID.
    "mixed": (
        3,
        5,
        23,
        [
            (7, 3, 2, 2, (2, 0), True, None),
            (9, 1, 1, 1, (0, 0), True, None),
            (4, 5, 1, 1, (0, 0), False, "VALID"),
            (6, 2, 3, 1, (1, 1), True, None),
        ],
    ),
    # a stride past the kernel (windows skip samples), then one output position.
    "sparse": (2, 3, 17, [(5, 2, 4, 1, (0, 1), True, None), (3, 3, 3, 1, (0, 0), True, None)]),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_conv1d_as_matmul_agrees_with_onnxruntime(tmp_path, case):
    n, channels, length, convs = CASES[case]
    path = tmp_path / f"{case}.onnx"
    _conv1d_model(path, n, channels, length, convs, seed=len(case))
    proc = run_cli("emit", path, "-o", tmp_path / "out", "--execution-model", "runtimeless")
    assert proc.returncode == 0 and "verified against " in proc.stdout, proc.stderr
    manifest = json.loads((tmp_path / "out" / "manifest.json").read_text())
    assert {"rewrite": "conv1d-as-matmul", "nodes": len(convs)} in manifest["onnx_rewrites"]
    x = np.random.default_rng(7).standard_normal((n, channels, length)).astype(np.float32)
    report = parity(
        path, modes=["async", "runtimeless"], inputs={"conv1d": [x]}, reference="onnxruntime", rtol=1e-4, atol=1e-4
    )
    assert report.agrees and not report.compile_errors, report.table()


def _rewritten(node, dims, out_dims, weights):
    from onnx import helper, numpy_helper

    from ireegen.frontend.onnx_conv1d_rewrites import conv1d_as_matmul

    w = numpy_helper.from_array(weights, "w")
    graph = helper.make_graph(
        [node],
        "g",
        [helper.make_tensor_value_info("x", 1, dims)],
        [helper.make_tensor_value_info("y", 1, out_dims)],
        [w],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    return conv1d_as_matmul(model, {"x": dims, "y": out_dims, "w": list(weights.shape)}, {"w": w})


def test_what_conv1d_as_matmul_leaves_alone():
    from onnx import helper

    ones = np.ones
    # grouped (a depthwise 1-D Conv): not one product
    grouped = helper.make_node("Conv", ["x", "w"], ["y"], group=4, kernel_shape=[3], pads=[1, 1])
    assert _rewritten(grouped, [1, 4, 8], [1, 4, 8], ones((4, 1, 3), np.float32)) == 0
    # 2-D: the other rewrites' and IREE's im2col's
    square = helper.make_node("Conv", ["x", "w"], ["y"], kernel_shape=[3, 3], pads=[1, 1, 1, 1])
    assert _rewritten(square, [1, 2, 6, 6], [1, 2, 6, 6], ones((2, 2, 3, 3), np.float32)) == 0
    # SAME padding: left to IREE's lowering
    same = helper.make_node("Conv", ["x", "w"], ["y"], kernel_shape=[3], auto_pad="SAME_UPPER")
    assert _rewritten(same, [1, 2, 8], [1, 2, 8], ones((2, 2, 3), np.float32)) == 0
    # windows of more than MAX_COLUMN_BYTES: a 400-tap filter bank over a minute of 16 kHz audio
    bank = helper.make_node("Conv", ["x", "w"], ["y"], kernel_shape=[400])
    assert _rewritten(bank, [1, 1, 960_000], [1, 8, 959_601], ones((8, 1, 400), np.float32)) == 0
    # the plain case is taken
    plain = helper.make_node("Conv", ["x", "w"], ["y"], kernel_shape=[3], pads=[1, 1])
    assert _rewritten(plain, [1, 2, 8], [1, 2, 8], ones((2, 2, 3), np.float32)) == 1
