"""The small .tflite models the tests emit: every op of the TFLite op table,
grouped into a few models (float, int8 per tensor and per channel, uint8),
built by tflite_builder.py with fixed seeds."""

from __future__ import annotations

import numpy as np
from tflite_builder import TFLiteBuilder


def _q(b, name, shape, dtype, scale, zp, data=None, axis=0):
    return b.tensor(name, shape, dtype, data=data, scale=scale, zero_point=zp, axis=axis)


def _scale(scales, per_channel: bool):
    """`scales` per channel, or their one (shared) value per tensor."""
    return scales if per_channel else float(scales[0])


def conv_model(dtype: str = "float32", per_channel: bool = True) -> bytes:
    """CONV_2D (SAME, RELU) -> DEPTHWISE_CONV_2D (VALID, multiplier 2,
    RELU6) -> MAX_POOL_2D -> PAD -> AVERAGE_POOL_2D (SAME) -> RESHAPE ->
    FULLY_CONNECTED; int8: per-channel filters (the fully connected one per
    tensor), per-tensor activations; `per_channel=False`: one scale per
    filter, written per tensor."""
    rng = np.random.default_rng(1)
    b = TFLiteBuilder()
    f = dtype == "float32"
    act = dtype  # activations' type
    s = (lambda v: None) if f else (lambda v: v)

    def t(name, shape, scale, zp):
        return b.tensor(name, shape, act, scale=s(scale), zero_point=None if f else zp)

    x = t("image", [1, 8, 8, 3], 0.02, -5)
    w1 = rng.standard_normal((6, 3, 3, 3)).astype(np.float32) * 0.3
    if f:
        cw = b.tensor("conv/w", [6, 3, 3, 3], "float32", data=w1)
        cb = b.tensor("conv/b", [6], "float32", data=rng.standard_normal(6).astype(np.float32) * 0.1)
    else:
        ws = np.abs(w1).reshape(6, -1).max(1) / 127
        ws = ws if per_channel else np.full(6, ws.max())
        cw = b.tensor(
            "conv/w",
            [6, 3, 3, 3],
            "int8",
            data=np.round(w1 / ws[:, None, None, None]),
            scale=_scale(ws, per_channel),
            axis=0,
        )
        bs = 0.02 * ws
        cb = b.tensor(
            "conv/b",
            [6],
            "int32",
            data=np.round(rng.standard_normal(6) * 0.1 / bs),
            scale=_scale(bs, per_channel),
            axis=0,
        )
    c1 = t("conv", [1, 8, 8, 6], 0.03, -128)
    b.op(
        "CONV_2D",
        [x, cw, cb],
        [c1],
        "Conv2DOptions",
        Padding=0,
        StrideW=1,
        StrideH=1,
        FusedActivationFunction=1,
        DilationWFactor=1,
        DilationHFactor=1,
    )
    w2 = rng.standard_normal((1, 3, 3, 12)).astype(np.float32) * 0.3
    db = rng.standard_normal(12) * 0.1
    if f:
        dw = b.tensor("dw/w", [1, 3, 3, 12], "float32", data=w2)
        dwb = b.tensor("dw/b", [12], "float32", data=db)
    else:
        ws2 = np.abs(w2).reshape(-1, 12).max(0) / 127
        ws2 = ws2 if per_channel else np.full(12, ws2.max())
        dw = b.tensor("dw/w", [1, 3, 3, 12], "int8", data=np.round(w2 / ws2), scale=_scale(ws2, per_channel), axis=3)
        dwb = b.tensor(
            "dw/b", [12], "int32", data=np.round(db / (0.03 * ws2)), scale=_scale(0.03 * ws2, per_channel), axis=0
        )
    c2 = t("dw", [1, 6, 6, 12], 6 / 255, -128)
    b.op(
        "DEPTHWISE_CONV_2D",
        [c1, dw, dwb],
        [c2],
        "DepthwiseConv2DOptions",
        Padding=1,
        StrideW=1,
        StrideH=1,
        DepthMultiplier=2,
        FusedActivationFunction=3,
        DilationWFactor=1,
        DilationHFactor=1,
    )
    p1 = t("maxpool", [1, 3, 3, 12], 6 / 255, -128)
    b.op("MAX_POOL_2D", [c2], [p1], "Pool2DOptions", Padding=1, StrideW=2, StrideH=2, FilterWidth=2, FilterHeight=2)
    pads = b.tensor("pad/paddings", [4, 2], "int32", data=np.array([[0, 0], [1, 0], [0, 1], [0, 0]]))
    p2 = t("pad", [1, 4, 4, 12], 6 / 255, -128)
    b.op("PAD", [p1, pads], [p2])
    p3 = t("avgpool", [1, 2, 2, 12], 6 / 255, -128)
    b.op("AVERAGE_POOL_2D", [p2], [p3], "Pool2DOptions", Padding=0, StrideW=2, StrideH=2, FilterWidth=3, FilterHeight=3)
    flat_shape = b.tensor("flatten/shape", [2], "int32", data=[1, 48])
    m = t("flatten", [1, 48], 6 / 255, -128)
    b.op("RESHAPE", [p3, flat_shape], [m], "ReshapeOptions")
    w3 = rng.standard_normal((5, 48)).astype(np.float32) * 0.3
    if f:
        fw = b.tensor("fc/w", [5, 48], "float32", data=w3)
        fb = b.tensor("fc/b", [5], "float32", data=rng.standard_normal(5).astype(np.float32) * 0.1)
    else:
        fw = b.tensor(
            "fc/w", [5, 48], "int8", data=np.round(w3 / (np.abs(w3).max() / 127)), scale=np.abs(w3).max() / 127
        )
        fbs = (6 / 255) * np.abs(w3).max() / 127
        fb = b.tensor("fc/b", [5], "int32", data=np.round(rng.standard_normal(5) * 0.1 / fbs), scale=fbs)
    fc = t("logits", [1, 5], 0.05, 3)
    b.op("FULLY_CONNECTED", [m, fw, fb], [fc], "FullyConnectedOptions", FusedActivationFunction=0)
    return b.build([x], [fc])


def elementwise_model(dtype: str = "float32") -> bytes:
    """ADD, SUB, MUL (fused RELU), RELU, RELU6, CONCATENATION,
    STRIDED_SLICE, TRANSPOSE, RESHAPE, SQUEEZE; the int8 one through
    QUANTIZE and DEQUANTIZE at a float interface."""
    b = TFLiteBuilder()
    f = dtype == "float32"

    def t(name, shape, scale, zp):
        return b.tensor(name, shape, dtype, scale=None if f else scale, zero_point=None if f else zp)

    if f:
        a, c = b.tensor("a", [1, 4, 6], "float32"), b.tensor("b", [1, 4, 6], "float32")
        ins = [a, c]
    else:
        fa, fc = b.tensor("a", [1, 4, 6], "float32"), b.tensor("b", [1, 4, 6], "float32")
        a, c = t("a/q", [1, 4, 6], 0.03, 2), t("b/q", [1, 4, 6], 0.025, -7)
        b.op("QUANTIZE", [fa], [a])
        b.op("QUANTIZE", [fc], [c])
        ins = [fa, fc]
    add = t("add", [1, 4, 6], 0.05, -1)
    b.op("ADD", [a, c], [add], "AddOptions", FusedActivationFunction=0)
    sub = t("sub", [1, 4, 6], 0.05, 4)
    b.op("SUB", [a, c], [sub], "SubOptions", FusedActivationFunction=0)
    mul = t("mul", [1, 4, 6], 0.03, -20)
    b.op("MUL", [add, sub], [mul], "MulOptions", FusedActivationFunction=1)
    hs = t("relu_n1", [1, 4, 6], 0.03, -20)
    b.op("ADD", [a, c], [hs], "AddOptions", FusedActivationFunction=2)
    relu = t("relu", [1, 4, 6], 0.03, -20)
    b.op("RELU", [sub], [relu])
    relu6 = t("relu6", [1, 4, 6], 0.05, -1)
    b.op("RELU6", [add], [relu6])
    cat = t("concat", [1, 4, 18], 0.03, -20)
    b.op("CONCATENATION", [hs, relu, mul], [cat], "ConcatenationOptions", Axis=2, FusedActivationFunction=0)
    begin = b.tensor("slice/begin", [3], "int32", data=[0, 1, 0])
    end = b.tensor("slice/end", [3], "int32", data=[1, 4, 18])
    strides = b.tensor("slice/strides", [3], "int32", data=[1, 2, 3])
    sl = t("slice", [2, 6], 0.03, -20)
    b.op("STRIDED_SLICE", [cat, begin, end, strides], [sl], "StridedSliceOptions", ShrinkAxisMask=1)
    perm = b.tensor("transpose/perm", [3], "int32", data=[0, 2, 1])
    tr = t("transpose", [1, 6, 4], 0.05, 4)
    b.op("TRANSPOSE", [sub, perm], [tr])
    shape = b.tensor("reshape/shape", [2], "int32", data=[6, 4])
    rs = t("reshape", [6, 4], 0.05, 4)
    b.op("RESHAPE", [tr, shape], [rs], "ReshapeOptions")
    sq = t("squeeze", [4, 6], 0.02, -128)
    b.op("SQUEEZE", [mul], [sq], "SqueezeOptions")
    outs = [sl, rs, sq, relu6]
    if not f:
        floats = []
        for i, o in enumerate(outs):
            shape_of = b.tensors[o][1]
            fo = b.tensor(f"out{i}", shape_of, "float32")
            b.op("DEQUANTIZE", [o], [fo])
            floats.append(fo)
        outs = floats
    return b.build(ins, outs)


def activations_model(dtype: str = "float32") -> bytes:
    """LOGISTIC, TANH, HARD_SWISH, SOFTMAX (beta 0.5) and MEAN; int8, TFLM's
    fixed-point kernels (tables, the softmax's reciprocal, the mean's
    count-folded multiplier)."""
    b = TFLiteBuilder()
    f = dtype == "float32"

    def t(name, shape, scale, zp):
        return b.tensor(name, shape, dtype, scale=None if f else scale, zero_point=None if f else zp)

    x = t("x", [1, 3, 4, 8], 0.04, 1)
    sig = t("sigmoid", [1, 3, 4, 8], 1 / 256, -128)
    b.op("LOGISTIC", [x], [sig])
    tanh = t("tanh", [1, 3, 4, 8], 1 / 128, 0)
    b.op("TANH", [x], [tanh])
    hs = t("hardswish", [1, 3, 4, 8], 0.03, -20)
    b.op("HARD_SWISH", [x], [hs])
    sm = t("softmax", [1, 3, 4, 8], 1 / 256, -128)
    b.op("SOFTMAX", [x], [sm], "SoftmaxOptions", Beta=0.5)
    axes = b.tensor("mean/axes", [2], "int32", data=[1, 2])
    mean = t("mean", [1, 8], 0.04, 1)
    b.op("MEAN", [x, axes], [mean], "ReducerOptions", KeepDims=False)
    return b.build([x], [sig, tanh, hs, sm, mean])


def fused_tanh_model() -> bytes:
    """An int8 ADD with a fused TANH: TFLM's ADD clamps to the activation's
    range, which for TANH is the whole int8 range; the translation's QDQ
    form applies the tanh, so the output differs from TFLM's."""
    b = TFLiteBuilder()
    x = b.tensor("x", [1, 64], "int8", scale=0.05, zero_point=3)
    y = b.tensor("sum", [1, 64], "int8", scale=1 / 128, zero_point=0)
    b.op("ADD", [x, x], [y], "AddOptions", FusedActivationFunction=4)
    return b.build([x], [y])


def unsupported_model() -> bytes:
    """FLOOR, an op outside the table, computing tensor 'rounded'."""
    b = TFLiteBuilder()
    x = b.tensor("x", [1, 4], "float32")
    y = b.tensor("rounded", [1, 4], "float32")
    b.op("FLOOR", [x], [y])
    return b.build([x], [y])


def depthwise_without_bias_model() -> bytes:
    """A float DEPTHWISE_CONV_2D without its optional bias, on which TFLM's
    interpreter crashes (it reads the absent tensor)."""
    b = TFLiteBuilder()
    x = b.tensor("x", [1, 4, 4, 2], "float32")
    w = b.tensor("w", [1, 3, 3, 2], "float32", data=np.linspace(-1, 1, 18, dtype=np.float32))
    y = b.tensor("y", [1, 2, 2, 2], "float32")
    b.op(
        "DEPTHWISE_CONV_2D",
        [x, w, -1],
        [y],
        "DepthwiseConv2DOptions",
        Padding=1,
        StrideW=1,
        StrideH=1,
        DepthMultiplier=1,
        DilationWFactor=1,
        DilationHFactor=1,
    )
    return b.build([x], [y])


def activations_uint8_io_model() -> bytes:
    """The int8 activations behind a uint8 interface, as the older
    converters write one: uint8 in, QUANTIZE to int8, LOGISTIC, TANH,
    HARD_SWISH, SOFTMAX (then QUANTIZE to a uint8 output) and a spatial
    MEAN kept as [1, 1, 1, C]."""
    b = TFLiteBuilder()
    x = b.tensor("pixels", [1, 3, 4, 8], "uint8", scale=0.04, zero_point=129)
    q = b.tensor("x", [1, 3, 4, 8], "int8", scale=0.05, zero_point=-2)
    b.op("QUANTIZE", [x], [q])
    sig = b.tensor("sigmoid", [1, 3, 4, 8], "int8", scale=1 / 256, zero_point=-128)
    b.op("LOGISTIC", [q], [sig])
    tanh = b.tensor("tanh", [1, 3, 4, 8], "int8", scale=1 / 128, zero_point=0)
    b.op("TANH", [q], [tanh])
    hs = b.tensor("hardswish", [1, 3, 4, 8], "int8", scale=0.03, zero_point=-20)
    b.op("HARD_SWISH", [q], [hs])
    sm = b.tensor("softmax/int8", [1, 3, 4, 8], "int8", scale=1 / 256, zero_point=-128)
    b.op("SOFTMAX", [q], [sm], "SoftmaxOptions", Beta=1.0)
    smu = b.tensor("softmax", [1, 3, 4, 8], "uint8", scale=1 / 256, zero_point=0)
    b.op("QUANTIZE", [sm], [smu])
    axes = b.tensor("mean/axes", [2], "int32", data=[1, 2])
    mean = b.tensor("mean", [1, 1, 1, 8], "int8", scale=0.02, zero_point=5)
    b.op("MEAN", [q, axes], [mean], "ReducerOptions", KeepDims=True)
    return b.build([x], [sig, tanh, hs, smu, mean])


def activations_chain_model() -> bytes:
    """One output through the int8 fixed-point ops: TANH, HARD_SWISH, a
    spatial MEAN, RESHAPE, SOFTMAX (beta 3), for samples/firmware (which
    prints the first output)."""
    b = TFLiteBuilder()
    x = b.tensor("x", [1, 4, 4, 8], "int8", scale=0.05, zero_point=-2)
    t = b.tensor("tanh", [1, 4, 4, 8], "int8", scale=1 / 128, zero_point=0)
    b.op("TANH", [x], [t])
    h = b.tensor("hardswish", [1, 4, 4, 8], "int8", scale=0.005, zero_point=-60)
    b.op("HARD_SWISH", [t], [h])
    axes = b.tensor("mean/axes", [2], "int32", data=[1, 2])
    m = b.tensor("mean", [1, 1, 1, 8], "int8", scale=0.004, zero_point=3)
    b.op("MEAN", [h, axes], [m], "ReducerOptions", KeepDims=True)
    shape = b.tensor("flatten/shape", [2], "int32", data=[1, 8])
    r = b.tensor("flatten", [1, 8], "int8", scale=0.004, zero_point=3)
    b.op("RESHAPE", [m, shape], [r], "ReshapeOptions")
    y = b.tensor("probs", [1, 8], "int8", scale=1 / 256, zero_point=-128)
    b.op("SOFTMAX", [r], [y], "SoftmaxOptions", Beta=3.0)
    return b.build([x], [y])
