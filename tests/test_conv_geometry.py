"""frontend/conv_geometry.py reads the padding and stride forms of a model's
Convs (the int8 match spec's extra forms): explicit pads, auto_pad VALID,
and the Convs it leaves to IREE (dilation, a stride per axis, out of
bounds, auto_pad SAME)."""

from __future__ import annotations

import numpy as np
import pytest

onnx = pytest.importorskip("onnx")
from onnx import TensorProto, helper  # noqa: E402

from ireegen.compile import int8_match  # noqa: E402
from ireegen.frontend.conv_geometry import conv_geometries, pool_strides  # noqa: E402


def _model(path, convs, x_shape=(1, 2, 11, 10)):
    """One Conv per entry of `convs` (its attributes), each on the input."""
    w = onnx.numpy_helper.from_array(np.zeros((2, 2, 3, 3), np.float32), "w")
    nodes = [helper.make_node("Conv", ["x", "w"], [f"y{i}"], **attrs) for i, attrs in enumerate(convs)]
    graph = helper.make_graph(
        nodes,
        "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, list(x_shape))],
        [helper.make_tensor_value_info(f"y{i}", TensorProto.FLOAT, None) for i in range(len(convs))],
        [w],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    onnx.save(model, path)
    return path


def test_explicit_padding_and_valid(tmp_path):
    model = _model(
        tmp_path / "m.onnx",
        [
            {"pads": [3, 3, 3, 3], "strides": [2, 2]},
            {"pads": [0, 2, 1, 0], "strides": [3, 3]},
            {},  # no pads, stride 1
            {"auto_pad": "VALID", "strides": [4, 4]},
        ],
    )
    assert conv_geometries(model) == [
        ((0, 0, 0, 0), 1),
        ((0, 0, 0, 0), 4),
        ((0, 2, 1, 0), 3),
        ((3, 3, 3, 3), 2),
    ]
    # Only the forms the committed spec lacks become new matchers.
    extra = int8_match.geometry_forms(conv_geometries(model))
    assert {(f.pads, f.stride) for f in extra} == {
        ((0, 0, 0, 0), 4),
        ((0, 2, 1, 0), 3),
        ((3, 3, 3, 3), 2),
    }


def test_forms_the_kernels_do_not_take_are_left_out(tmp_path):
    model = _model(
        tmp_path / "m.onnx",
        [
            {"pads": [1, 1, 1, 1], "dilations": [2, 2]},
            {"pads": [1, 1, 1, 1], "strides": [1, 2]},
            {"pads": [17, 0, 0, 0]},
            {"strides": [9, 9]},
            {"pads": [1, 1, 1]},
            # IREE writes auto_pad SAME's padding as a fill and a copy: no tensor.pad to match.
            {"auto_pad": "SAME_UPPER", "strides": [2, 2]},
        ],
    )
    assert conv_geometries(model) == []


def test_pool_strides(tmp_path):
    """The strides of the model's unpadded AveragePools with one stride for
    both axes (Keras's pool over the whole last map strides by its window),
    and the pool forms the spec then adds for them."""
    pools = [
        {"kernel_shape": [8, 8], "strides": [8, 8]},
        {"kernel_shape": [3, 3], "strides": [3, 3], "pads": [1, 1, 1, 1]},  # padded: IREE's code
        {"kernel_shape": [2, 2], "strides": [2, 3]},  # a stride per axis: IREE's code
        {"kernel_shape": [2, 2], "strides": [40, 40]},  # past MAX_STRIDE
        {"kernel_shape": [2, 2]},  # stride 1
    ]
    nodes = [helper.make_node("AveragePool", ["x"], [f"y{i}"], **attrs) for i, attrs in enumerate(pools)]
    graph = helper.make_graph(
        nodes,
        "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 2, 8, 8])],
        [helper.make_tensor_value_info(f"y{i}", TensorProto.FLOAT, None) for i in range(len(pools))],
    )
    path = tmp_path / "pools.onnx"
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]), path)
    assert pool_strides(path) == [1, 8]
    spec = int8_match.spec(pool_strides=[8])
    assert "@match_avgpool_s8_zxy" in spec and "@match_avgpool_s8_zx" not in int8_match.spec()
