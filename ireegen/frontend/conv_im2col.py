"""onnx_speed_rewrites' `conv-as-im2col-matmul`: a Conv over few input
channels (the 3-channel stem of an image model) as an explicit im2col and
one MatMul.

IREE 3.13 compiles such a Conv badly under every flag set: its reduction
over C x kh x kw is tiled by channel, and 3 channels fill no vector (a
ResNet's 7x7 stride-2 stem then takes a large share of the model's time;
docs/peers.md, "Real models").  Written as what it
computes, the kh x kw shifted windows of the input (depthwise_taps.windows:
contiguous slices of the stride phases) concatenated into a [N, kh*kw*C,
Ho*Wo] matrix, times the weights reshaped to [M, kh*kw*C], it is one matrix
product, which IREE compiles with its matmul codegen (and ukernels under
data tiling).
"""

from __future__ import annotations

import numpy as np

from . import depthwise_taps
from .onnx_nodes import NodeBuilder, known_arrays, rewrite_nodes, static_conv2d

# Input channels up to which a Conv is rewritten: the RGB (or grey) stems.
# Beyond a few channels IREE's own convolution codegen reduces over full
# vectors, and an explicit im2col only adds its kh*kw-fold copy of the input.
MAX_CHANNELS = 4


def conv_as_im2col_matmul(model, shapes: dict, values: dict) -> int:
    """Rewrites each 2-D Conv with group 1, at most MAX_CHANNELS input
    channels, a kernel larger than 1x1 and static shapes; returns how many.
    Figures: docs/peers.md, "Real models"."""
    graph = model.graph
    known = known_arrays(graph, values)

    def rewrite(node, out_nodes) -> bool:
        conv = static_conv2d(node, "Conv", known, shapes)
        a, dims, out_dims, weights = conv or ({}, None, None, None)
        x = node.input[0] if node.input else ""
        if (
            conv is None
            or a.get("group", 1) != 1
            or weights.shape[1] != dims[1]
            or weights.shape[0] != out_dims[1]
            or dims[1] > MAX_CHANNELS
            or weights.shape[2:] == (1, 1)  # a 1x1 Conv is a matrix product already
            or a.get("auto_pad", b"NOTSET") not in (b"NOTSET", "NOTSET")
            or not depthwise_taps.supported(a)
        ):
            return False
        b = NodeBuilder(graph, out_nodes, f"{node.name or 'conv'}/ireegen.im2col")
        batch, outputs, (height, width) = dims[0], out_dims[1], out_dims[2:]
        shifted, _ = depthwise_taps.windows(b, x, dims, weights.shape[2:], a, (height, width))
        depth = len(shifted) * dims[1]  # kh * kw * C, tap-major
        stacked = b.op("Concat", *shifted, axis=1)
        columns = b.op("Reshape", stacked, b.const("columns_shape", np.array([batch, depth, height * width], np.int64)))
        matrix = b.const("weights", weights.transpose(0, 2, 3, 1).reshape(outputs, depth).copy())
        product = b.op("MatMul", matrix, columns)
        if len(node.input) > 2 and node.input[2]:
            bias = b.op("Reshape", node.input[2], b.const("bias_shape", np.array([outputs, 1], np.int64)))
            product = b.op("Add", product, bias)
        b.op("Reshape", product, b.const("out_shape", np.array(out_dims, np.int64)), out=node.output[0], name=node.name)
        return True

    return rewrite_nodes(graph, rewrite)
