"""onnx_speed_rewrites' `pointwise-conv-as-matmul`: a 1x1 Conv with group 1
(RegNet's and ResNet's pointwise projections, their strided shortcuts) as
one MatMul of its weights by the input's pixels, in NCHW.

IREE 3.13 compiles a 1x1 Conv with its default flags as a convolution that
vectorizes badly (RegNetY's 208 -> 208 channels at 14x14: 11x ONNX
Runtime's time; docs/peers.md, "Pointwise convolutions").  What it
computes is the product of the [M, C] weights by the [C, H*W] pixels of each
image, which needs no transpose in NCHW.  IREE's matmul codegen without data
tiling tiles the pixel dimension by PIXEL_TILE and handles a remainder in a
slow path (208 x 208 weights by 196 pixels ran slower than by 256), so a
pixel count that is not a multiple of PIXEL_TILE is padded with zero pixels
up to one, and the product sliced back.  Pads become a zero Pad, strides a
Slice with the stride as its step (a 1x1 kernel's dilation changes nothing;
SAME auto_pad pads nothing on a 1x1 kernel).
"""

from __future__ import annotations

import numpy as np

from . import depthwise_taps
from .onnx_nodes import NodeBuilder, known_arrays, rewrite_nodes, static_conv2d

# The pixel dimension's tile in IREE 3.13's default CPU matmul (f32, AVX2 and
# AVX-512 alike): a multiple of it runs at full speed.
PIXEL_TILE = 64
# Padding adds at most this fraction of pixels; beyond it the extra work
# costs more than the remainder's slow path.
MAX_PADDING = 0.35


def _pads(attrs: dict):
    """The Conv's [top, left, bottom, right] pads, or None when it has some
    this rewrite does not take.  SAME auto_pad on a 1x1 kernel pads nothing."""
    auto_pad = attrs.get("auto_pad", b"NOTSET")
    auto_pad = auto_pad.decode() if isinstance(auto_pad, bytes) else auto_pad
    if auto_pad in ("VALID", "SAME_UPPER", "SAME_LOWER"):
        return [0, 0, 0, 0]
    if auto_pad != "NOTSET" or not depthwise_taps.supported(attrs):
        return None
    return list(attrs.get("pads") or [0, 0, 0, 0])


def pixel_count(pixels: int) -> int:
    """The pixel count the product runs over: `pixels` rounded up to a
    multiple of PIXEL_TILE when that adds at most MAX_PADDING of them (49
    pixels, a 7x7 map, run over 64)."""
    padded = -(-pixels // PIXEL_TILE) * PIXEL_TILE
    return padded if padded - pixels <= MAX_PADDING * pixels else pixels


def pointwise_conv_as_matmul(model, shapes: dict, values: dict) -> int:
    """Rewrites each 2-D 1x1 Conv with group 1, constant weights and static
    shapes; returns how many.  Figures: docs/peers.md, "Pointwise
    convolutions"."""
    graph = model.graph
    known = known_arrays(graph, values)

    def rewrite(node, out_nodes) -> bool:
        conv = static_conv2d(node, "Conv", known, shapes)
        a, dims, out_dims, weights = conv or ({}, None, None, None)
        pads = _pads(a) if conv else None
        if (
            pads is None
            or a.get("group", 1) != 1
            or weights.shape[2:] != (1, 1)
            or weights.shape[1] != dims[1]
            or weights.shape[0] != out_dims[1]
            or out_dims[0] != dims[0]
        ):
            return False
        strides = list(a.get("strides") or [1, 1])
        top, left, bottom, right = pads
        height, width = dims[2] + top + bottom, dims[3] + left + right
        if list(out_dims[2:]) != [(height - 1) // strides[0] + 1, (width - 1) // strides[1] + 1]:
            return False
        b = NodeBuilder(graph, out_nodes, f"{node.name or 'pointwise'}/ireegen.pointwise")
        (n, c), m, pixels = dims[:2], out_dims[1], out_dims[2] * out_dims[3]
        x = node.input[0]
        if any(pads):
            x = b.op("Pad", x, b.const("pads", np.array([0, 0, top, left, 0, 0, bottom, right], np.int64)))
        if strides != [1, 1]:
            x = b.op(
                "Slice",
                x,
                b.const("starts", np.zeros(2, np.int64)),
                b.const("ends", np.array([height, width], np.int64)),
                b.const("axes", np.array([2, 3], np.int64)),
                b.const("steps", np.array(strides, np.int64)),
            )
        # One image: a 2-D product; a batch: the weights broadcast over it.
        shape = [c, pixels] if n == 1 else [n, c, pixels]
        columns = b.op("Reshape", x, b.const("columns_shape", np.array(shape, np.int64)))
        padded = pixel_count(pixels)
        if padded != pixels:
            pad = np.zeros(2 * len(shape), np.int64)
            pad[2 * len(shape) - 1] = padded - pixels
            columns = b.op("Pad", columns, b.const("pixel_pads", pad))
        product = b.op("MatMul", b.const("weights", np.ascontiguousarray(weights[:, :, 0, 0])), columns)
        if padded != pixels:
            product = b.op(
                "Slice",
                product,
                b.const("pixel_starts", np.zeros(1, np.int64)),
                b.const("pixel_ends", np.array([pixels], np.int64)),
                b.const("pixel_axes", np.array([-1], np.int64)),
            )
        bias = node.input[2] if len(node.input) > 2 and node.input[2] else None
        if bias:
            product = b.op("Add", product, b.op("Reshape", bias, b.const("bias_shape", np.array([m, 1], np.int64))))
        b.op("Reshape", product, b.const("shape", np.array(out_dims, np.int64)), out=node.output[0], name=node.name)
        return True

    return rewrite_nodes(graph, rewrite)
