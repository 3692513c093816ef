"""The speed rewrite `pointwise-conv-as-matmul`
(ireegen/frontend/conv_pointwise_matmul.py): a 1x1 Conv with group 1 as a
MatMul of its weights by the pixels.  On random forms (batch, channels,
sizes, strides, pads, auto_pad, bias, the activation after it) the rewritten
graph computes in ONNX Runtime what the Conv computes; a RegNet-style block
(1x1, grouped 3x3, squeeze-excite, 1x1, residual Add) is verified through
IREE by emit and against ONNX Runtime in runtimeless."""

import json

import numpy as np
import pytest
from conftest import onnxruntime_output, run_cli

from ireegen.parity import parity

onnx = pytest.importorskip("onnx")
pytest.importorskip("onnxruntime")

ACTIVATIONS = ("Relu", "Sigmoid", "HardSigmoid", "Clip", None)


def _random_pointwise(seed: int):
    """A 1x1 Conv on random shapes (batch 1 or 2, up to 24 channels, sizes
    from 2 to 20 with pixel counts on both sides of the 64-pixel tile), with
    random strides, pads or an auto_pad, a bias on odd seeds and a random
    activation after it.  Returns (model, x)."""
    from onnx import helper, numpy_helper

    rng = np.random.default_rng(seed)
    n, c, m = int(rng.integers(1, 3)), int(rng.integers(1, 25)), int(rng.integers(1, 25))
    size = [int(rng.integers(2, 21)) for _ in range(2)]
    attrs = {"kernel_shape": [1, 1], "strides": [int(rng.integers(1, 4)) for _ in range(2)]}
    padding = seed % 4
    if padding == 1:
        attrs["pads"] = [int(rng.integers(0, 3)) for _ in range(4)]
    elif padding == 2:
        attrs["auto_pad"] = ("VALID", "SAME_UPPER", "SAME_LOWER")[seed % 3]
    if rng.integers(0, 2) and padding != 2:  # ONNX Runtime takes no dilation with SAME
        attrs["dilations"] = [2, 2]  # no effect on a 1x1 kernel
    x = rng.standard_normal((n, c, *size)).astype(np.float32)
    inits = [numpy_helper.from_array(rng.standard_normal((m, c, 1, 1)).astype(np.float32), "w")]
    inputs = ["x", "w"]
    if seed % 2:
        inits.append(numpy_helper.from_array(rng.standard_normal(m).astype(np.float32), "b"))
        inputs.append("b")
    activation = ACTIVATIONS[seed % len(ACTIVATIONS)]
    nodes = [helper.make_node("Conv", inputs, ["c" if activation else "y"], **attrs)]
    if activation:
        nodes.append(helper.make_node(activation, ["c"], ["y"]))
    graph = helper.make_graph(
        nodes,
        "pointwise",
        [helper.make_tensor_value_info("x", 1, list(x.shape))],
        [helper.make_tensor_value_info("y", 1, None)],
        inits,
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], ir_version=8), x


@pytest.mark.parametrize("seed", range(40))
def test_pointwise_conv_as_matmul_on_random_forms_matches_onnxruntime(seed):
    from ireegen.frontend.onnx_rewrites import apply_rewrites

    model, x = _random_pointwise(seed)
    expected = onnxruntime_output(model, x)
    rewritten = onnx.ModelProto()
    rewritten.CopyFrom(model)
    assert {"rewrite": "pointwise-conv-as-matmul", "nodes": 1} in apply_rewrites(rewritten)
    assert "Conv" not in {node.op_type for node in rewritten.graph.node}
    got = onnxruntime_output(rewritten, x)
    assert got.shape == expected.shape
    np.testing.assert_allclose(got, expected, rtol=1e-4, atol=1e-4)


def test_pixel_counts_are_padded_to_the_tile_when_cheap():
    """Padded to a multiple of PIXEL_TILE when that adds at most
    MAX_PADDING: 196 and 49 pixels (14x14, 7x7) are, 3136 (a multiple)
    and 36 (6x6: 78% more) are not."""
    from ireegen.frontend.conv_pointwise_matmul import pixel_count

    assert [pixel_count(p) for p in (196, 49, 784, 3136, 36, 1, 70)] == [256, 64, 832, 3136, 36, 1, 70]


def test_convs_outside_the_pattern_stay():
    """A 3x3 kernel, a grouped 1x1 Conv (grouped-conv-as-batched-matmul's),
    weights that are a graph input: not this rewrite's."""
    from onnx import helper, numpy_helper

    from ireegen.frontend.conv_pointwise_matmul import pointwise_conv_as_matmul

    cases = [((8, 8, 3, 3), {"kernel_shape": [3, 3], "pads": [1, 1, 1, 1]}), ((8, 4, 1, 1), {"group": 2})]
    for shape, attrs in cases:
        w = numpy_helper.from_array(np.ones(shape, np.float32), "w")
        graph = helper.make_graph(
            [helper.make_node("Conv", ["x", "w"], ["y"], **attrs)],
            "conv",
            [helper.make_tensor_value_info("x", 1, [1, 8, 6, 6])],
            [helper.make_tensor_value_info("y", 1, None)],
            [w],
        )
        model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
        shapes = {"x": [1, 8, 6, 6], "y": [1, 8, 6, 6]}
        assert pointwise_conv_as_matmul(model, shapes, {"w": w}) == 0
        assert pointwise_conv_as_matmul(model, shapes, {}) == 0  # the weights unknown


def _regnet_block(path, rng):
    """A RegNetY block at 14x14 (196 pixels, padded to 256): 1x1 Conv 16 ->
    24 + Relu, a grouped 3x3 (groups of 8), squeeze-excite (GlobalAveragePool,
    1x1 24 -> 4 + Relu, 1x1 4 -> 24 + Sigmoid, Mul), 1x1 24 -> 16, and the
    residual Add; the shortcut a strided 1x1 Conv into a second output."""
    from onnx import helper, numpy_helper

    def w(name, *shape):
        return numpy_helper.from_array(
            (rng.standard_normal(shape) / np.sqrt(np.prod(shape[1:]))).astype(np.float32), name
        )

    inits = [w("w1", 24, 16, 1, 1), w("b1", 24), w("wg", 24, 8, 3, 3), w("ws1", 4, 24, 1, 1), w("bs1", 4)]
    inits += [w("ws2", 24, 4, 1, 1), w("bs2", 24), w("w3", 16, 24, 1, 1), w("wd", 32, 16, 1, 1)]
    node = helper.make_node
    nodes = [
        node("Conv", ["x", "w1", "b1"], ["a"], kernel_shape=[1, 1]),
        node("Relu", ["a"], ["ar"]),
        node("Conv", ["ar", "wg"], ["g"], kernel_shape=[3, 3], pads=[1, 1, 1, 1], group=3),
        node("Relu", ["g"], ["gr"]),
        node("GlobalAveragePool", ["gr"], ["p"]),
        node("Conv", ["p", "ws1", "bs1"], ["s1"], kernel_shape=[1, 1]),
        node("Relu", ["s1"], ["s1r"]),
        node("Conv", ["s1r", "ws2", "bs2"], ["s2"], kernel_shape=[1, 1]),
        node("Sigmoid", ["s2"], ["s"]),
        node("Mul", ["gr", "s"], ["e"]),
        node("Conv", ["e", "w3"], ["c"], kernel_shape=[1, 1]),
        node("Add", ["c", "x"], ["y"]),
        node("Conv", ["y", "wd"], ["d"], kernel_shape=[1, 1], strides=[2, 2]),
    ]
    graph = helper.make_graph(
        nodes,
        "regnet_block",
        [helper.make_tensor_value_info("x", 1, [1, 16, 14, 14])],
        [helper.make_tensor_value_info("y", 1, [1, 16, 14, 14]), helper.make_tensor_value_info("d", 1, [1, 32, 7, 7])],
        inits,
    )
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], ir_version=8), str(path))


@pytest.mark.full_suite  # 40 s here with the verification's two compiles; the random forms cover the rewrite in CI
def test_regnet_block_through_iree(tmp_path):
    """The block's three 1x1 Convs over pixels are MatMuls, the
    squeeze-excite's two are matrix-vector products; verified by emit
    against IREE's defaults and ONNX Runtime, and by parity against ONNX
    Runtime."""
    rng = np.random.default_rng(2)
    path = tmp_path / "regnet_block.onnx"
    _regnet_block(path, rng)
    proc = run_cli("emit", path, "-o", tmp_path / "out", "--execution-model", "runtimeless", "--tune", "off")
    assert proc.returncode == 0 and "ONNX Runtime" in proc.stdout, proc.stderr
    rewrites = {
        r["rewrite"]: r["nodes"] for r in json.loads((tmp_path / "out" / "manifest.json").read_text())["onnx_rewrites"]
    }
    assert rewrites["pointwise-conv-as-matmul"] == 3
    assert rewrites["pointwise-conv-on-one-pixel-as-matmul"] == 2
    x = rng.standard_normal((1, 16, 14, 14)).astype(np.float32)
    report = parity(
        path, modes=["runtimeless"], inputs={"regnet_block": [x]}, reference="onnxruntime", rtol=1e-4, atol=1e-4
    )
    assert report.agrees and not report.compile_errors, report.table()
