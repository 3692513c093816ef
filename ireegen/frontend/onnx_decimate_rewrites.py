"""Strided depthwise convolutions as stride-1 ones plus a strided Slice: the
speed rewrite for the small strided depthwise Convs of text and speech
models (the PaddleOCR classifier's 3x3 and 5x5 with strides (2, 1)), which
IREE 3.13 compiles slowly.  A Conv with strides s computes the
stride-1 Conv's outputs 0, s, 2s, ... along each axis; at stride 1 the
depthwise Conv is onnx_speed_rewrites' `depthwise-conv-as-taps`, one
vectorized elementwise dispatch, which takes it in the next round.  Same
shape as onnx_rewrites.REWRITES, applied with the speed rewrites; emit's
verification checks the result, tests/test_onnx_decimate_rewrites.py checks
it against ONNX Runtime.  Figures: docs/peers.md, "Small models".
"""

from __future__ import annotations

import numpy as np

from .onnx_nodes import NodeBuilder, Rewrite, known_arrays, rewrite_nodes, static_conv2d
from .onnx_speed_rewrites import MAX_TAPS

# The stride-1 Conv computes prod(strides) times the outputs: twice the
# work wins, four times does not (docs/peers.md, "Small models").
MAX_DECIMATION = 2


def strided_depthwise_conv_as_decimated_taps(model, shapes: dict, values: dict) -> int:
    """A 2-D depthwise Conv (`group` = input channels = output channels,
    constant float weights [C, 1, kh, kw] of at most MAX_TAPS taps) with a
    stride > 1 along one axis: the same Conv at stride 1 (same pads and
    dilations), then a Slice with that stride as its step."""
    graph = model.graph
    known = known_arrays(graph, values)

    def rewrite(node, out_nodes) -> bool:
        conv = static_conv2d(node, "Conv", known, shapes)
        a, dims, out_dims, weights = conv or ({}, None, None, None)
        strides = list(a.get("strides") or [1, 1])
        if (
            conv is None
            or dims[1] < 2
            or weights.shape[:2] != (dims[1], 1)
            or a.get("group", 1) != dims[1]
            or out_dims[1] != dims[1]
            or a.get("auto_pad", b"NOTSET") not in (b"NOTSET", "NOTSET")
            or int(np.prod(weights.shape[2:])) > MAX_TAPS
            or len(strides) != 2
            or min(strides) < 1
            or int(np.prod(strides)) == 1
            or int(np.prod(strides)) > MAX_DECIMATION
        ):
            return False
        b = NodeBuilder(graph, out_nodes, f"{node.name or 'depthwise'}/ireegen.decimate")
        dense = b.op("Conv", *node.input, name=node.name, **{**a, "strides": [1, 1]})
        ends = np.array([(out_dims[2] - 1) * strides[0] + 1, (out_dims[3] - 1) * strides[1] + 1], np.int64)
        b.op(
            "Slice",
            dense,
            b.const("starts", np.zeros(2, np.int64)),
            b.const("ends", ends),
            b.const("axes", np.array([2, 3], np.int64)),
            b.const("steps", np.array(strides, np.int64)),
            out=node.output[0],
        )
        return True

    return rewrite_nodes(graph, rewrite)


DECIMATE_REWRITES = (
    Rewrite("strided-depthwise-conv-as-decimated-taps", ("Conv",), strided_depthwise_conv_as_decimated_taps),
)
