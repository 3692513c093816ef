"""The form of a .tflite int8 convolution or fully connected that ireegen's
int8 kernels take with TFLite Micro's requantization (docs/tflite.md).

When emit links the built-in int8 kernels for a .tflite source
(cbuild/int8_kernels.py), an int8 CONV_2D, DEPTHWISE_CONV_2D or
FULLY_CONNECTED that TFLM computes with its integer kernel is written as
the QDQ graph the match spec knows, always per channel (a per-tensor
filter's scale repeated), with an int32 bias (zeros when it has none):

    DequantizeLinear(x) -> Conv / Gemm (DequantizeLinear(w), DequantizeLinear(b)) -> QuantizeLinear(y)

The spec's TFLM forms (compile/int8_match.py: tflm_forms) replace that with
a call whose table holds TFLM's fixed-point multiplier and shift of each
channel, computed from the same float scales in double as TFLM does, so the
kernel's integers are TFLM's.  IREE's own code for this graph would round
as ONNX Runtime does, not as TFLM: so the form is written only where the
spec has a matcher for it (the geometries conv_geometry.py reads off the
translated model, inside its bounds) and where TFLM's activation clamp is
the int8 range (a RELU or RELU6 whose output quantization starts at its
zero point, as TFLite's converter writes it); every other op keeps the
exact integer form of tflite_arith.py, and emit's verification against
TFLM refuses any integer that differs.
"""

from __future__ import annotations

import numpy as np

from .conv_geometry import MAX_PAD, MAX_STRIDE
from .tflite_arith import activation_range, quantize_multiplier

INT8_RANGE = (-128, 127)
# The hint of a kernel-form Conv or Gemm's output name (kernel_ops counts them).
KERNEL_OP = "kernel_op"
# TFLM's left shift of the accumulator stays inside 32 bits (the kernel's
# shift of an int32).
MAX_LEFT_SHIFT = 30


def _factors_fit(x, w, out) -> bool:
    """Every channel's TFLM factor has a shift the kernel takes."""
    reals = np.float64(x.q.scale[0]) * w.q.scale.astype(np.float64) / np.float64(out.q.scale[0])
    return all(np.isfinite(r) and quantize_multiplier(float(r))[1] <= MAX_LEFT_SHIFT for r in np.ravel(reals))


def _fits(tr, op, x, w, code: int) -> bool:
    out = tr.tensors[op.outputs[0]]
    low_high = activation_range(code, float(out.q.scale[0]), int(out.q.zero_point[0]), "int8")
    return low_high == INT8_RANGE and _factors_fit(x, w, out)


def _dequantized(tr, value: str, scale, zero, axis: int | None = None) -> str:
    attrs = {} if axis is None else {"axis": axis}
    inputs = [value, tr.constant(np.asarray(scale, np.float32), "scale")]
    if zero is not None:
        inputs.append(tr.constant(zero, "zero_point"))
    return tr.node("DequantizeLinear", inputs, **attrs)


def _weight_and_bias(tr, op, x, w, data: np.ndarray, channels: int) -> tuple:
    """The dequantized int8 weight `data` (channels first) and int32 bias,
    per channel."""
    scales = np.broadcast_to(w.q.scale.astype(np.float32), (channels,)).copy()
    weight = _dequantized(tr, tr.constant(data.astype(np.int8), "filter"), scales, None, axis=0)
    has_bias = len(op.inputs) > 2 and op.inputs[2] >= 0
    bias = (
        tr.tensors[op.inputs[2]].data.astype(np.int32).reshape(channels) if has_bias else np.zeros(channels, np.int32)
    )
    bias_scales = np.float32(x.q.scale[0]) * scales
    return weight, _dequantized(tr, tr.constant(bias, "bias"), bias_scales, None, axis=0)


def _quantized(tr, op, value: str) -> str:
    out = tr.tensors[op.outputs[0]]
    scale = tr.constant(np.float32(out.q.scale[0]), "scale")
    return tr.node("QuantizeLinear", [value, scale, tr.constant(np.int8(out.q.zero_point[0]), "zero_point")])


def _input(tr, x, value: str) -> str:
    return _dequantized(tr, value, np.float32(x.q.scale[0]), np.int8(x.q.zero_point[0]))


def kernel_conv(tr, op, x, w, perm: tuple, pads: list, conv: dict, code: int) -> bool:
    """Writes CONV_2D or DEPTHWISE_CONV_2D (`perm` takes its filter to
    ONNX's layout) in the kernels' form and returns True, or returns False
    where the kernels do not take it."""
    strides, dilations, group = conv["strides"], conv["dilations"], conv["group"]
    channels = w.data.shape[perm[0]]
    depthwise = group > 1
    if (
        strides[0] != strides[1]
        or strides[0] > MAX_STRIDE
        or any(d != 1 for d in dilations)
        or any(p > MAX_PAD for p in pads)
        or (depthwise and not (group == channels == x.shape[3]))
        or not _fits(tr, op, x, w, code)
    ):
        return False
    value = tr.nchw.get(x.index) or tr.node("Transpose", [tr.stored(x.index, op)], perm=[0, 3, 1, 2])
    filt = np.ascontiguousarray(np.transpose(w.data, perm))
    weight, bias = _weight_and_bias(tr, op, x, w, filt, channels)
    y = tr.node("Conv", [_input(tr, x, value), weight, bias], [tr.fresh(KERNEL_OP)], pads=list(pads), **conv)
    y = _quantized(tr, op, y)
    tr.store_int(op.outputs[0], tr.node("Transpose", [y], perm=[0, 2, 3, 1]))
    tr.nchw[op.outputs[0]] = y
    return True


def kernel_fully_connected(tr, op, x, w, flat: list, code: int) -> bool:
    """Writes FULLY_CONNECTED in the kernels' form (Gemm, transB=1) and
    returns True, or returns False where the kernels do not take it."""
    if not _fits(tr, op, x, w, code):
        return False
    shape = tr.constant(np.array(flat, np.int64), "shape")
    value = tr.node("Reshape", [tr.stored(x.index, op), shape])
    weight, bias = _weight_and_bias(tr, op, x, w, np.ascontiguousarray(w.data), w.shape[0])
    y = _quantized(tr, op, tr.node("Gemm", [_input(tr, x, value), weight, bias], [tr.fresh(KERNEL_OP)], transB=1))
    out_shape = tr.constant(np.array(list(tr.tensors[op.outputs[0]].shape), np.int64), "shape")
    tr.store_int(op.outputs[0], tr.node("Reshape", [y, out_shape]))
    return True


# Bits TFLM's int8 ADD shifts each input up before rescaling it.
ADD_LEFT_SHIFT = 20


def kernel_add(tr, op, code: int) -> bool:
    """Writes an int8 ADD of two tensors of its output's shape (rank 1 to
    4) in the form of the Add kernel (QDQ) and returns True, or returns
    False where the kernel does not take it: TFLM's output factor must be
    below 1 (its QuantizeMultiplierSmallerThanOneExp) and its clamp the
    int8 range.  Values two kernel-form convolutions left in NCHW stay so."""
    a, b = (tr.tensors[i] for i in op.inputs[:2])
    out = tr.tensors[op.outputs[0]]
    if op.name != "ADD" or not (a.shape == b.shape == out.shape and 1 <= len(out.shape) <= 4):
        return False
    sa, sb, so = (np.float64(t.q.scale[0]) for t in (a, b, out))
    twice = np.float64(2) * np.float64(max(np.float32(sa), np.float32(sb)))
    real_out = float(twice / (np.float64(1 << ADD_LEFT_SHIFT) * so))
    low_high = activation_range(code, float(out.q.scale[0]), int(out.q.zero_point[0]), "int8")
    if not (0.0 < real_out < 1.0) or low_high != INT8_RANGE:
        return False
    nchw = len(out.shape) == 4 and a.index in tr.nchw and b.index in tr.nchw
    terms = [
        _dequantized(tr, tr.nchw[t.index] if nchw else tr.stored(t.index, op), np.float32(t.q.scale[0]),
                     np.int8(t.q.zero_point[0]))
        for t in (a, b)
    ]  # fmt: skip
    y = _quantized(tr, op, tr.node("Add", terms, [tr.fresh(KERNEL_OP)]))
    if nchw:
        tr.store_int(op.outputs[0], tr.node("Transpose", [y], perm=[0, 2, 3, 1]))
        tr.nchw[op.outputs[0]] = y
    else:
        tr.store_int(op.outputs[0], y)
    return True


def kernel_ops(model) -> int:
    """The nodes of a translated model written in the kernels' form."""
    return sum(1 for n in model.graph.node if n.output and n.output[0].startswith(f"tfl.{KERNEL_OP}."))
