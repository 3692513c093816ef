"""The nodes of onnx_speed_rewrites.depthwise_conv_as_taps: a depthwise Conv
as the sum of its kh x kw taps, each a shifted slice of the padded input
times the tap's per-channel weight.

With stride 1 every tap is a contiguous slice of the padded input.  With
stride s (per axis), tap (i, j) reads rows s*y + i*dh: the padded input is
first split into its sh x sw stride phases, phase (p, q) holding rows
p, p + sh, ... and columns q, q + sw, ... (a Reshape to [N, C, Hq, sh, Wq,
sw] and one Transpose to [N, C, sh, sw, Hq, Wq]), and tap (i, j) is then the
contiguous window of phase ((i*dh) % sh, (j*dw) % sw) at offset
((i*dh) // sh, (j*dw) // sw).  Padding (and, where the stride skips the last
rows, a crop) makes the padded input exactly sh*Hq x sw*Wq.  Taps as
strided Slices (steps = stride) are slower than the Conv itself
(docs/peers.md, "Real models").
"""

from __future__ import annotations

import numpy as np

MAX_TAPS = 25  # kernels up to 5x5: beyond that the sum of shifted slices is no longer one small dispatch


def supported(attrs: dict) -> bool:
    """Whether the Conv's strides, dilations and pads are ones build() handles:
    two positive strides and dilations, four non-negative pads."""
    strides = list(attrs.get("strides") or [1, 1])
    dilations = list(attrs.get("dilations") or [1, 1])
    pads = list(attrs.get("pads") or [0, 0, 0, 0])
    return (
        len(strides) == 2
        and len(dilations) == 2
        and len(pads) == 4
        and all(v >= 1 for v in (*strides, *dilations))
        and all(v >= 0 for v in pads)
    )


def windows(b, x: str, dims, kernel, attrs: dict, out_hw) -> tuple:
    """The Conv's kh x kw shifted windows of `x` (dims [N, C, H, W]), for a
    `kernel` (kh, kw) with output size `out_hw` (Ho, Wo): (values, rank), the
    values in tap order (row-major over the kernel), each [N, C, Ho, Wo]
    (rank 4), or [N, C, 1, 1, Ho, Wo] (rank 6) for a strided Conv, whose
    windows are cut from its stride phases."""
    channels, (kh, kw), (height, width) = dims[1], kernel, out_hw
    sh, sw = list(attrs.get("strides") or [1, 1])
    dh, dw = list(attrs.get("dilations") or [1, 1])
    top, left, bottom, right = list(attrs.get("pads") or [0, 0, 0, 0])
    phased = (sh, sw) != (1, 1)
    value = x
    if phased:
        # Rows of the padded input the phases need: sh * Hq, with Hq the
        # output rows plus the largest tap offset; the rest are never read.
        hq, wq = height + (dh * (kh - 1)) // sh, width + (dw * (kw - 1)) // sw
        bottom += sh * hq - (dims[2] + top + bottom)
        right += sw * wq - (dims[3] + left + right)
        if bottom < 0 or right < 0:  # the stride skips the input's last rows or columns
            rows, cols = dims[2] + min(bottom, 0), dims[3] + min(right, 0)
            value = b.op(
                "Slice",
                value,
                b.const("crop_starts", np.array([0, 0], np.int64)),
                b.const("crop_ends", np.array([rows, cols], np.int64)),
                b.const("crop_axes", np.array([2, 3], np.int64)),
            )
            bottom, right = max(bottom, 0), max(right, 0)
    if any((top, left, bottom, right)):
        full = np.array([0, 0, top, left, 0, 0, bottom, right], np.int64)
        value = b.op("Pad", value, b.const("pads", full))
    if phased:
        split = b.op("Reshape", value, b.const("phase_shape", np.array([dims[0], channels, hq, sh, wq, sw], np.int64)))
        value = b.op("Transpose", split, perm=[0, 1, 3, 5, 2, 4])
        axes = b.const("axes", np.array([2, 3, 4, 5], np.int64))
    else:
        axes = b.const("axes", np.array([2, 3], np.int64))
    values = []
    for i in range(kh):
        for j in range(kw):
            if phased:
                (oh, ph), (ow, pw) = divmod(i * dh, sh), divmod(j * dw, sw)
                starts = np.array([ph, pw, oh, ow], np.int64)
                ends = starts + np.array([1, 1, height, width], np.int64)
            else:
                starts = np.array([i * dh, j * dw], np.int64)
                ends = starts + np.array([height, width], np.int64)
            values.append(b.op("Slice", value, b.const("starts", starts), b.const("ends", ends), axes))
    return values, 6 if phased else 4


def build(b, x: str, weights, bias: str | None, attrs: dict, dims, out_dims, out: str, name: str) -> None:
    """Appends (through NodeBuilder `b`) the nodes that compute the depthwise
    Conv of `x` (dims [N, C, H, W]) with `weights` [C, 1, kh, kw] and `bias`
    into `out` (dims [N, C, Ho, Wo])."""
    channels, (kh, kw) = dims[1], weights.shape[2:]
    shifted, rank = windows(b, x, dims, (kh, kw), attrs, out_dims[2:])
    tap_shape = (1, channels) + (1,) * (rank - 2)
    terms = [
        b.op("Mul", value, b.const("tap", weights[:, 0, k // kw, k % kw].reshape(tap_shape).copy()))
        for k, value in enumerate(shifted)
    ]
    if bias:
        terms.append(b.op("Reshape", bias, b.const("bias_shape", np.array(tap_shape, np.int64))))
    if rank == 6:
        total = b.op("Sum", *terms)
        b.op("Reshape", total, b.const("out_shape", np.array(out_dims, np.int64)), out=out, name=name)
    else:
        b.op("Sum", *terms, out=out, name=name)
