"""onnx_speed_rewrites' `conv-transpose-as-matmul`: a ConvTranspose whose
kernel equals its stride (the 2x2 stride-2 upsampling of segmentation heads,
PP-OCR's detector among them) as one MatMul and a depth-to-space.

Such a ConvTranspose writes every output pixel from exactly one input pixel
and one kernel tap: out[n, m, s*y + i, s*x + j] = sum_c x[n, c, y, x] *
w[c, m, i, j] + b[m].  IREE 3.13 lowers it as a convolution over the input
dilated with zeros (the OCR detector's two of them took a fifth of its time
at --target-cpu host with channels-last); as a [M*kh*kw, C] x [C, H*W]
matrix product followed by a Reshape and Transpose that interleave the
taps, it is a matmul and a copy.  pads crop the result (a Slice); an
`output_shape`, `output_padding`, dilations or groups leave the node as it is.
"""

from __future__ import annotations

import numpy as np

from .onnx_nodes import NodeBuilder, known_arrays, rewrite_nodes, static_conv2d


def _plain(attrs: dict, kernel) -> bool:
    strides = list(attrs.get("strides") or [1, 1])
    pads = list(attrs.get("pads") or [0, 0, 0, 0])
    return (
        strides == list(kernel)
        and list(attrs.get("dilations") or [1, 1]) == [1, 1]
        and attrs.get("group", 1) == 1
        and not any(attrs.get("output_padding") or [])
        and "output_shape" not in attrs
        and attrs.get("auto_pad", b"NOTSET") in (b"NOTSET", "NOTSET")
        and len(pads) == 4
        and all(p >= 0 for p in pads)
    )


def conv_transpose_as_matmul(model, shapes: dict, values: dict) -> int:
    """Rewrites each 2-D ConvTranspose with kernel == strides (see _plain) and
    static shapes; returns how many."""
    graph = model.graph
    known = known_arrays(graph, values)

    def rewrite(node, out_nodes) -> bool:
        conv = static_conv2d(node, "ConvTranspose", known, shapes)
        a, dims, out_dims, weights = conv or ({}, None, None, None)
        x = node.input[0] if node.input else ""
        if (
            conv is None
            or weights.shape[0] != dims[1]
            or weights.shape[1] != out_dims[1]
            or not _plain(a, weights.shape[2:])
        ):
            return False
        b = NodeBuilder(graph, out_nodes, f"{node.name or 'conv_transpose'}/ireegen.matmul")
        (batch, channels, height, width), (_, outputs, kh, kw) = dims, weights.shape
        top, left, bottom, right = list(a.get("pads") or [0, 0, 0, 0])
        rows, cols = height * kh - top - bottom, width * kw - left - right
        if [rows, cols] != list(out_dims[2:]):
            return False  # not the shape ONNX says it has: leave it to the compiler
        flat = b.op("Reshape", x, b.const("columns_shape", np.array([batch, channels, height * width], np.int64)))
        matrix = b.const("weights", weights.transpose(1, 2, 3, 0).reshape(outputs * kh * kw, channels).copy())
        product = b.op("MatMul", matrix, flat)  # [N, M*kh*kw, H*W]
        taps = b.op(
            "Reshape", product, b.const("taps_shape", np.array([batch, outputs, kh, kw, height, width], np.int64))
        )
        interleaved = b.op("Transpose", taps, perm=[0, 1, 4, 2, 5, 3])  # [N, M, H, kh, W, kw]
        full = [batch, outputs, height * kh, width * kw]
        cropped = any((top, left, bottom, right))
        has_bias = len(node.input) > 2 and bool(node.input[2])
        last = not cropped and not has_bias
        value = b.op(
            "Reshape",
            interleaved,
            b.const("out_shape", np.array(full, np.int64)),
            **({"out": node.output[0], "name": node.name} if last else {}),
        )
        if cropped:
            value = b.op(
                "Slice",
                value,
                b.const("crop_starts", np.array([top, left], np.int64)),
                b.const("crop_ends", np.array([top + rows, left + cols], np.int64)),
                b.const("crop_axes", np.array([2, 3], np.int64)),
                **({} if has_bias else {"out": node.output[0], "name": node.name}),
            )
        if has_bias:
            bias = b.op("Reshape", node.input[2], b.const("bias_shape", np.array([1, outputs, 1, 1], np.int64)))
            b.op("Add", value, bias, out=node.output[0], name=node.name)
        return True

    return rewrite_nodes(graph, rewrite)
