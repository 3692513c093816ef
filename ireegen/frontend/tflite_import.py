"""TFLite models: from a `.tflite` flatbuffer to the ONNX graph the ONNX
path lowers.

The flatbuffer is read with the `tflite` package (generated readers, no
TensorFlow), bounded: the file identifier, every buffer's bytes inside the
file and of the size its tensor's type and shape need, every tensor index
inside the subgraph.  A malformed file is refused in one line naming it.

The graph is translated op by op through `OPS` (builtin op name -> handler)
into an ONNX graph in TFLite's own layout (NHWC; a convolution or pool is a
Transpose to NCHW, the ONNX op and a Transpose back):
- a float op is its ONNX op;
- an int8 or uint8 op is QDQ: DequantizeLinear on each integer input, the
  float op, QuantizeLinear to the output's scale and zero point, per tensor
  or per channel (the filter's quantized dimension), so the int8 matchers
  see the form they know;
- a fused activation is the ONNX activation before the QuantizeLinear;
- but an int8 op TFLM computes in fixed point is written as TFLM's integer
  arithmetic: convolutions, ADD/SUB/MUL, AVERAGE_POOL_2D and QUANTIZE in
  tflite_arith.py, SOFTMAX and MEAN in tflite_arith_reduce.py, and LOGISTIC,
  TANH, HARD_SWISH and RELU as 256-entry tables (tflite_fixedpoint.py).
The graph's inputs and outputs keep the TFLite tensor names and their
integer types: an int8 model's C API takes and returns int8 as TFLM does.
An op outside `OPS` is refused before anything is compiled, naming the op
and its output tensor.
"""

from __future__ import annotations

import math
import struct
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ireegen.common.errors import UsageError

from .tflite_arith import (
    activation_range,
    affine_quantize,
    clamp_to,
    multiply_by_quantized_multiplier,
    quantize_multiplier,
    requantize,
    round_away,
)
from .tflite_arith_reduce import mean_int8, softmax_int8
from .tflite_fixedpoint import Unsupported, hard_swish_table, logistic_table, relu_table, tanh_table
from .tflite_kernel_form import kernel_add, kernel_conv, kernel_fully_connected

# pyproject.toml's `tflite` and `tflite-micro` extras pin the same.
TFLITE_PACKAGE = "tflite>=2.18"
TFLM_PACKAGE = "tflite-micro>=0.dev20250101"
FILE_IDENTIFIER = b"TFL3"
# The ONNX opset the translation writes (ReduceMean takes axes as an attribute).
OPSET = 17

# TFLite TensorType -> (numpy dtype, ONNX TensorProto element type).
TENSOR_TYPES = {
    0: ("float32", 1),
    2: ("int32", 6),
    3: ("uint8", 2),
    4: ("int64", 7),
    6: ("bool", 9),
    9: ("int8", 3),
}
# Integer types a quantized activation may have.
QUANTIZED_TYPES = ("int8", "uint8")


def require_tflite():
    try:
        import tflite
    except ImportError:
        raise UsageError(f"reading .tflite models needs the tflite package: pip install '{TFLITE_PACKAGE}'") from None
    return tflite


@dataclass(frozen=True)
class QParams:
    """A quantized tensor's scale and zero point: one each, or one per
    slice of `axis` (per channel)."""

    scale: np.ndarray  # float32, shape (1,) or (channels,)
    zero_point: np.ndarray  # int64, same shape
    axis: int

    @property
    def per_channel(self) -> bool:
        return self.scale.size > 1


@dataclass(frozen=True)
class TensorInfo:
    index: int
    name: str  # as the model writes it (shown in messages, the C API's name for an input or output)
    dtype: str  # numpy dtype
    shape: tuple
    data: np.ndarray | None  # a constant's value
    q: QParams | None  # quantization, for an int8/uint8/int32 tensor that has it
    type_code: int = -1  # the TensorType as the file writes it (what a refusal of an unknown `dtype` names)


class Malformed(UsageError):
    pass


class Translation:
    """The ONNX graph being written: nodes, initializers, and for each TFLite
    tensor the ONNX value that holds it."""

    def __init__(self, path: Path, tensors: list):
        self.path = path
        self.tensors = tensors
        self.nodes: list = []
        self.initializers: list = []
        self.values: dict = {}  # tensor index -> ONNX value name holding it as stored (int8 for a quantized one)
        self._count = 0
        self.graph_names: dict = {}  # tensor index -> the graph input or output name it has
        # The int8 kernels take the convolutions and fully connected ops (tflite_kernel_form.py).
        self.tflm_kernels = False
        # tensor index -> its int8 value in NCHW, where a kernel-form op wrote
        # it so (the next kernel-form convolution reads it without a transpose pair).
        self.nchw: dict = {}

    def fresh(self, hint: str) -> str:
        self._count += 1
        return f"tfl.{hint}.{self._count}"

    def node(self, op_type: str, inputs: list, outputs: list | None = None, **attrs) -> str:
        from onnx import helper

        outputs = outputs or [self.fresh(op_type.lower())]
        self.nodes.append(helper.make_node(op_type, inputs, outputs, name=outputs[0], **attrs))
        return outputs[0]

    def constant(self, array, hint: str) -> str:
        from onnx import numpy_helper

        name = self.fresh(hint)
        self.initializers.append(numpy_helper.from_array(np.asarray(array), name))
        return name

    def qparams(self, q: QParams, like_dtype: str) -> list:
        """The scale and zero-point initializers of `q` for a tensor of `like_dtype`."""
        scale = q.scale if q.per_channel else q.scale.reshape(())
        zero = q.zero_point.astype(like_dtype)
        zero = zero if q.per_channel else zero.reshape(())
        return [self.constant(scale.astype(np.float32), "scale"), self.constant(zero, "zero_point")]

    def real(self, index: int, op) -> str:
        """The float value of tensor `index`: itself, or its DequantizeLinear."""
        t = self.tensors[index]
        if index not in self.values:
            if t.data is None:
                raise UsageError(f"{self.path}: {op.label}: reads tensor {t.name!r}, which nothing computes")
            self.values[index] = self.constant(t.data, "const")
        if t.dtype == "float32":
            return self.values[index]
        if t.q is None:
            raise UsageError(f"{self.path}: {op.label}: tensor {t.name!r} is {t.dtype} without quantization")
        attrs = {"axis": t.q.axis} if t.q.per_channel else {}
        return self.node("DequantizeLinear", [self.values[index], *self.qparams(t.q, t.dtype)], **attrs)

    def constant_ints(self, index: int, op) -> list:
        t = self.tensors[index]
        if t.data is None or t.dtype not in ("int32", "int64"):
            raise UsageError(f"{self.path}: {op.label}: tensor {t.name!r} must be a constant integer tensor")
        return [int(v) for v in t.data.reshape(-1)]

    def store(self, index: int, value: str, op) -> None:
        """Makes float `value` TFLite tensor `index` (quantized to its type)."""
        t = self.tensors[index]
        name = self.output_name(index)
        if t.dtype == "float32":
            self.node("Identity", [value], [name])
        elif t.dtype in QUANTIZED_TYPES and t.q is not None and not t.q.per_channel:
            self.node("QuantizeLinear", [value, *self.qparams(t.q, t.dtype)], [name])
        else:
            raise UsageError(
                f"{self.path}: {op.label}: output {t.name!r} is {t.dtype}; ireegen takes float32 or "
                "int8/uint8 quantized per tensor"
            )
        self.values[index] = name

    def stored(self, index: int, op) -> str:
        """The value of tensor `index` as the model stores it (int8 for a quantized one)."""
        if index not in self.values:
            self.real(index, op)
        return self.values[index]

    def operand(self, index: int, op, raw: bool) -> str:
        """Tensor `index` as stored (`raw`) or as its float value."""
        return self.stored(index, op) if raw else self.real(index, op)

    def result(self, index: int, value: str, op, raw: bool) -> None:
        """Makes `value` tensor `index`: as it is (`raw`), or quantized from float."""
        if raw:
            self.store_int(index, value)
        else:
            self.store(index, value, op)

    def store_int(self, index: int, value: str) -> None:
        """Makes `value`, already of the tensor's integer type, TFLite tensor `index`."""
        name = self.output_name(index)
        self.node("Identity", [value], [name])
        self.values[index] = name

    def output_name(self, index: int) -> str:
        return self.graph_names.get(index) or f"tfl.t{index}"


@dataclass(frozen=True)
class Op:
    name: str  # builtin op name
    inputs: tuple  # tensor indices (-1: absent)
    outputs: tuple
    options: object  # the generated options table, or None
    number: int
    options_type: int = 0  # the BuiltinOptions union's type of `options`

    @property
    def label(self) -> str:
        return f"operator #{self.number} ({self.name})"


# --- helpers shared by the handlers ---------------------------------------------------------------

ACTIVATIONS = {
    0: None,
    1: ("Relu", {}),
    2: ("Clip", (-1.0, 1.0)),
    3: ("Clip", (0.0, 6.0)),
    4: ("Tanh", {}),
}


# Fused activations that are a clamp of the quantized output (NONE, RELU, RELU_N1_TO_1, RELU6).
CLAMPS = (0, 1, 2, 3)


def activation(tr: Translation, value: str, code: int, op) -> str:
    if code not in ACTIVATIONS:
        raise UsageError(f"{tr.path}: {op.label}: fused activation {code} is not supported")
    spec = ACTIVATIONS[code]
    if spec is None:
        return value
    kind, arg = spec
    if kind == "Clip":
        low, high = (tr.constant(np.float32(v), "clip") for v in arg)
        return tr.node("Clip", [value, low, high])
    return tr.node(kind, [value])


def same_pads(in_size: int, kernel: int, stride: int, dilation: int) -> tuple:
    out = math.ceil(in_size / stride)
    total = max((out - 1) * stride + (kernel - 1) * dilation + 1 - in_size, 0)
    return total // 2, total - total // 2


def spatial_pads(padding: int, shape: tuple, kernel: tuple, strides: tuple, dilations: tuple) -> list:
    """ONNX `pads` (top, left, bottom, right) of TFLite SAME (0) or VALID (1) padding over NHWC `shape`."""
    if padding == 1:
        return [0, 0, 0, 0]
    (top, bottom), (left, right) = (same_pads(shape[1 + i], kernel[i], strides[i], dilations[i]) for i in range(2))
    return [top, left, bottom, right]


def to_nchw(tr: Translation, value: str) -> str:
    return tr.node("Transpose", [value], perm=[0, 3, 1, 2])


def to_nhwc(tr: Translation, value: str) -> str:
    return tr.node("Transpose", [value], perm=[0, 2, 3, 1])


# Options tables an op cannot do without (the others have defaults).
REQUIRED_OPTIONS = (
    "Conv2DOptions",
    "DepthwiseConv2DOptions",
    "Pool2DOptions",
    "ConcatenationOptions",
    "StridedSliceOptions",
)


def options(op: Op, tr: Translation, cls_name: str):
    """The op's options table, read as `cls_name` once its union type says it is one."""
    tflite = require_tflite()
    if op.options is None or op.options_type != getattr(tflite.BuiltinOptions, cls_name):
        if cls_name in REQUIRED_OPTIONS or op.options is not None:
            raise Malformed(f"{tr.path}: {op.label}: its options are not {cls_name}")
        return None
    o = getattr(tflite, cls_name)()
    o.Init(op.options.Bytes, op.options.Pos)
    return o


def positive(tr: Translation, op: Op, **values) -> None:
    """Refuses a stride, dilation or window size below 1."""
    for name, value in values.items():
        if any(v < 1 for v in value):
            raise Malformed(f"{tr.path}: {op.label}: {name} {list(value)} must be at least 1")


def need_rank(tr: Translation, index: int, rank: int, op) -> TensorInfo:
    t = tr.tensors[index]
    if len(t.shape) != rank:
        raise UsageError(f"{tr.path}: {op.label}: tensor {t.name!r} has rank {len(t.shape)}, expected {rank}")
    return t


def reshape_to(tr: Translation, value: str, shape) -> str:
    return tr.node("Reshape", [value, tr.constant(np.array(shape, dtype=np.int64), "shape")])


# --- the handlers: each writes its op's ONNX nodes and stores its outputs --------------------------


def _bias(tr: Translation, op: Op) -> list:
    return [tr.real(op.inputs[2], op)] if len(op.inputs) > 2 and op.inputs[2] >= 0 else []


def conv_2d(tr: Translation, op: Op) -> None:
    o = options(op, tr, "Conv2DOptions")
    x = need_rank(tr, op.inputs[0], 4, op)
    w = need_rank(tr, op.inputs[1], 4, op)
    if w.data is None:
        raise UsageError(f"{tr.path}: {op.label}: its filter {w.name!r} is not a constant")
    groups = x.shape[3] // w.shape[3] if w.shape[3] and x.shape[3] % w.shape[3] == 0 else 0
    if groups < 1:
        raise UsageError(f"{tr.path}: {op.label}: filter {w.name!r} does not fit input {x.name!r}")
    strides, dil = (o.StrideH(), o.StrideW()), (o.DilationHFactor(), o.DilationWFactor())
    positive(tr, op, strides=strides, dilations=dil)
    pads = spatial_pads(o.Padding(), x.shape, w.shape[1:3], strides, dil)
    conv = dict(kernel_shape=list(w.shape[1:3]), strides=list(strides), dilations=list(dil), group=groups)
    if _integer_form(tr, op, x, w, o.FusedActivationFunction()):
        if tr.tflm_kernels and kernel_conv(tr, op, x, w, (0, 3, 1, 2), pads, conv, o.FusedActivationFunction()):
            return None
        return _exact_conv(tr, op, x, w, (0, 3, 1, 2), pads, conv, o.FusedActivationFunction())
    # TFLite [O, H, W, I] -> ONNX [O, I, H, W]; a per-channel axis 0 stays 0.
    _float_conv(tr, op, x, _filter(tr, w, (0, 3, 1, 2), op), pads, conv, o.FusedActivationFunction())


def depthwise_conv_2d(tr: Translation, op: Op) -> None:
    o = options(op, tr, "DepthwiseConv2DOptions")
    x = need_rank(tr, op.inputs[0], 4, op)
    w = need_rank(tr, op.inputs[1], 4, op)
    if w.data is None:
        raise UsageError(f"{tr.path}: {op.label}: its filter {w.name!r} is not a constant")
    channels = x.shape[3]
    if w.shape[0] != 1 or channels == 0 or w.shape[3] % channels:
        raise UsageError(f"{tr.path}: {op.label}: filter {w.name!r} does not fit input {x.name!r}")
    strides, dil = (o.StrideH(), o.StrideW()), (o.DilationHFactor(), o.DilationWFactor())
    positive(tr, op, strides=strides, dilations=dil)
    pads = spatial_pads(o.Padding(), x.shape, w.shape[1:3], strides, dil)
    conv = dict(kernel_shape=list(w.shape[1:3]), strides=list(strides), dilations=list(dil), group=channels)
    if _integer_form(tr, op, x, w, o.FusedActivationFunction()):
        if tr.tflm_kernels and kernel_conv(tr, op, x, w, (3, 0, 1, 2), pads, conv, o.FusedActivationFunction()):
            return None
        return _exact_conv(tr, op, x, w, (3, 0, 1, 2), pads, conv, o.FusedActivationFunction())
    # TFLite [1, H, W, C*M] -> ONNX [C*M, 1, H, W]; the per-channel axis 3 becomes 0.
    _float_conv(tr, op, x, _filter(tr, w, (3, 0, 1, 2), op), pads, conv, o.FusedActivationFunction())


def _float_conv(tr: Translation, op: Op, x: TensorInfo, filt: str, pads, conv: dict, code: int) -> None:
    """An ONNX Conv over the real values of `x` (NHWC in, NHWC out) with the
    filter `filt` in ONNX's layout, `conv`'s geometry and the fused activation."""
    y = tr.node("Conv", [to_nchw(tr, tr.real(x.index, op)), filt, *_bias(tr, op)], pads=pads, **conv)
    tr.store(op.outputs[0], activation(tr, to_nhwc(tr, y), code, op), op)


def _integer_form(tr: Translation, op: Op, x: TensorInfo, w: TensorInfo, code: int) -> bool:
    """Whether the op is TFLM's int8 kernel: int8 input and output quantized
    per tensor, an int8 filter with zero points 0, an int32 bias or none, a
    fused activation that is a clamp (NONE, RELU, RELU_N1_TO_1, RELU6).
    Such an op is written in TFLM's integer arithmetic (tflite_arith.py)."""
    out = tr.tensors[op.outputs[0]]
    bias = tr.tensors[op.inputs[2]] if len(op.inputs) > 2 and op.inputs[2] >= 0 else None
    return (
        code in CLAMPS
        and x.dtype == "int8"
        and out.dtype == "int8"
        and x.q is not None
        and out.q is not None
        and not x.q.per_channel
        and not out.q.per_channel
        and w.dtype == "int8"
        and w.q is not None
        and w.data is not None
        and not np.any(w.q.zero_point)
        and (bias is None or (bias.dtype == "int32" and bias.data is not None))
    )


def _requantized(tr: Translation, op: Op, acc: str, x: TensorInfo, w: TensorInfo, channel_shape: tuple, code: int):
    """The int8 output of int32 accumulator `acc` (bias added here), TFLM's way."""
    out = tr.tensors[op.outputs[0]]
    if len(op.inputs) > 2 and op.inputs[2] >= 0:
        bias = tr.tensors[op.inputs[2]]
        acc = tr.node("Add", [acc, tr.constant(bias.data.astype(np.int32).reshape(channel_shape), "bias")])
    acc = tr.node("Cast", [acc], to=7)
    reals = np.float64(x.q.scale[0]) * w.q.scale.astype(np.float64) / np.float64(out.q.scale[0])
    y = requantize(tr, acc, reals, channel_shape)
    zero = int(out.q.zero_point[0])
    low, high = activation_range(code, float(out.q.scale[0]), zero, "int8")
    return clamp_to(tr, y, zero, low, high, "int8")


def _exact_conv(tr: Translation, op: Op, x: TensorInfo, w: TensorInfo, perm: tuple, pads: list, conv: dict, code):
    """CONV_2D or DEPTHWISE_CONV_2D in TFLM's integer arithmetic: the input
    padded with its zero point (TFLM skips padded taps, which is the same),
    ConvInteger, the bias, the requantization and the activation clamp."""
    zero = np.int8(x.q.zero_point[0])
    value = tr.node("Transpose", [tr.stored(x.index, op)], perm=[0, 3, 1, 2])
    if any(pads):
        top, left, bottom, right = pads
        onnx_pads = np.array([0, 0, top, left, 0, 0, bottom, right], np.int64)
        value = tr.node("Pad", [value, tr.constant(onnx_pads, "pads"), tr.constant(zero, "pad_value")])
    filt = tr.constant(np.ascontiguousarray(np.transpose(w.data, perm)).astype(np.int8), "filter")
    acc = tr.node(
        "ConvInteger", [value, filt, tr.constant(zero, "x_zero_point"), tr.constant(np.int8(0), "w_zero")], **conv
    )
    channels = w.data.shape[perm[0]]
    y = _requantized(tr, op, acc, x, w, (1, channels, 1, 1), code)
    tr.store_int(op.outputs[0], tr.node("Transpose", [y], perm=[0, 2, 3, 1]))


def _exact_fully_connected(tr: Translation, op: Op, x: TensorInfo, w: TensorInfo, flat: list, code: int) -> None:
    zero = np.int8(x.q.zero_point[0])
    value = reshape_to(tr, tr.stored(x.index, op), flat)
    weights = tr.constant(np.ascontiguousarray(w.data.T).astype(np.int8), "weights")
    acc = tr.node(
        "MatMulInteger", [value, weights, tr.constant(zero, "x_zero_point"), tr.constant(np.int8(0), "w_zero")]
    )
    y = _requantized(tr, op, acc, x, w, (1, w.shape[0]), code)
    tr.store_int(op.outputs[0], reshape_to(tr, y, list(tr.tensors[op.outputs[0]].shape)))


def _filter(tr: Translation, w: TensorInfo, perm: tuple, op: Op) -> str:
    """The float value of constant filter `w` with its axes permuted by `perm`."""
    data = np.ascontiguousarray(np.transpose(w.data, perm))
    if w.dtype == "float32":
        return tr.constant(data, "filter")
    if w.q is None or w.dtype not in QUANTIZED_TYPES:
        raise UsageError(f"{tr.path}: {op.label}: filter {w.name!r} is {w.dtype} without int8 quantization")
    attrs = {}
    if w.q.per_channel:
        attrs["axis"] = perm.index(w.q.axis)
    return tr.node("DequantizeLinear", [tr.constant(data, "filter"), *tr.qparams(w.q, w.dtype)], **attrs)


def fully_connected(tr: Translation, op: Op) -> None:
    o = options(op, tr, "FullyConnectedOptions")
    x, w = tr.tensors[op.inputs[0]], need_rank(tr, op.inputs[1], 2, op)
    if o is not None and o.WeightsFormat() != 0:
        raise UsageError(f"{tr.path}: {op.label}: shuffled weights are not supported")
    depth = w.shape[1]
    count = math.prod(x.shape)
    if depth == 0 or count % depth:
        raise UsageError(f"{tr.path}: {op.label}: weights {w.name!r} do not fit input {x.name!r}")
    if _integer_form(tr, op, x, w, o.FusedActivationFunction() if o else 0):
        flat, code = [count // depth, depth], o.FusedActivationFunction() if o else 0
        if tr.tflm_kernels and kernel_fully_connected(tr, op, x, w, flat, code):
            return None
        return _exact_fully_connected(tr, op, x, w, [count // depth, depth], o.FusedActivationFunction() if o else 0)
    flat = reshape_to(tr, tr.real(x.index, op), [count // depth, depth])
    y = tr.node("Gemm", [flat, tr.real(w.index, op), *_bias(tr, op)], transB=1)
    out = tr.tensors[op.outputs[0]]
    y = reshape_to(tr, y, list(out.shape))
    tr.store(op.outputs[0], activation(tr, y, o.FusedActivationFunction() if o else 0, op), op)


def _pool(onnx_op: str):
    def handler(tr: Translation, op: Op) -> None:
        o = options(op, tr, "Pool2DOptions")
        x = need_rank(tr, op.inputs[0], 4, op)
        kernel, strides = (o.FilterHeight(), o.FilterWidth()), (o.StrideH(), o.StrideW())
        positive(tr, op, window=kernel, strides=strides)
        pads = spatial_pads(o.Padding(), x.shape, kernel, strides, (1, 1))
        if _same_int8(tr, op):
            _same_quantization(tr, op, POOL_SCALE_TOLERANCE)
            if o.FusedActivationFunction() in CLAMPS:
                exact = _exact_average_pool if onnx_op == "AveragePool" else _exact_max_pool
                return exact(tr, op, x, kernel, strides, pads, o.FusedActivationFunction())
        y = tr.node(
            onnx_op, [to_nchw(tr, tr.real(x.index, op))], kernel_shape=list(kernel), strides=list(strides), pads=pads
        )
        tr.store(op.outputs[0], activation(tr, to_nhwc(tr, y), o.FusedActivationFunction(), op), op)

    return handler


# How far apart TFLM lets an int8 pool's input and output scales be (it
# moves the values without rescaling them).
POOL_SCALE_TOLERANCE = 1e-6


def _same_quantization(tr: Translation, op: Op, tolerance: float, inputs=None) -> None:
    """Refuses an int8 op whose data inputs' scale or zero point differs from
    its output's: TFLM's kernel moves the values without rescaling and
    refuses such a model itself."""
    out = tr.tensors[op.outputs[0]]
    for i in op.inputs[:1] if inputs is None else inputs:
        t = tr.tensors[i]
        scale_apart = abs(float(t.q.scale[0]) - float(out.q.scale[0]))
        if scale_apart > tolerance or int(t.q.zero_point[0]) != int(out.q.zero_point[0]):
            raise _refuse(
                tr,
                op,
                f"input {t.name!r} is quantized (scale {float(t.q.scale[0]):g}, zero point {int(t.q.zero_point[0])}) "
                f"unlike its output (scale {float(out.q.scale[0]):g}, zero point {int(out.q.zero_point[0])}); "
                f"TFLM's int8 {op.name} does not rescale and requires them equal",
            )


def _exact_max_pool(tr: Translation, op: Op, x: TensorInfo, kernel, strides, pads, code: int) -> None:
    """MAX_POOL_2D as TFLM computes int8: the largest stored value of the
    window's taps inside the input (a float MaxPool of the values, exact),
    clamped to the fused activation's range."""
    out = tr.tensors[op.outputs[0]]
    value = tr.node("Transpose", [tr.node("Cast", [tr.stored(x.index, op)], to=1)], perm=[0, 3, 1, 2])
    y = tr.node("MaxPool", [value], kernel_shape=list(kernel), strides=list(strides), pads=pads)
    low, high = activation_range(code, float(out.q.scale[0]), int(out.q.zero_point[0]), "int8")
    y = clamp_to(tr, tr.node("Cast", [y], to=7), 0, low, high, "int8")
    tr.store_int(op.outputs[0], tr.node("Transpose", [y], perm=[0, 2, 3, 1]))


def _same_int8(tr: Translation, op: Op) -> bool:
    """Whether every input and output of `op` is int8 quantized per tensor."""
    tensors = [tr.tensors[i] for i in (*op.inputs, *op.outputs) if i >= 0]
    return all(t.dtype == "int8" and t.q is not None and not t.q.per_channel for t in tensors)


def _exact_average_pool(tr: Translation, op: Op, x: TensorInfo, kernel, strides, pads, code: int) -> None:
    """AVERAGE_POOL_2D as TFLM computes int8: the sum of the raw values of
    the window's taps inside the input, divided by their count rounding half
    away from zero (input and output share their quantization in TFLM).
    The sum is a ones convolution in float32, exact for int8 windows below
    2^16 taps; the quotient of two integers below 2^24 truncates exactly."""
    if kernel[0] * kernel[1] >= 1 << 16:
        raise UsageError(f"{tr.path}: {op.label}: a {kernel[0]}x{kernel[1]} window is too large")
    channels = x.shape[3]
    out = tr.tensors[op.outputs[0]]
    value = tr.node("Cast", [tr.stored(x.index, op)], to=1)
    value = tr.node("Transpose", [value], perm=[0, 3, 1, 2])
    ones = tr.constant(np.ones((channels, 1, *kernel), np.float32), "ones")
    total = tr.node("Conv", [value, ones], kernel_shape=list(kernel), strides=list(strides), pads=pads, group=channels)

    count = _window_counts(x.shape[1:3], kernel, strides, pads, out.shape[1:3])
    half = np.floor(count / 2).astype(np.float32)
    positive = tr.node("Greater", [total, tr.constant(np.float32(0), "zero")])
    offset = tr.node("Where", [positive, tr.constant(half, "half"), tr.constant(-half, "minus_half")])
    quotient = tr.node("Div", [tr.node("Add", [total, offset]), tr.constant(count, "count")])
    negative = tr.node("Less", [quotient, tr.constant(np.float32(0), "zero")])
    truncated = tr.node("Where", [negative, tr.node("Ceil", [quotient]), tr.node("Floor", [quotient])])
    zero = int(out.q.zero_point[0])
    low, high = activation_range(code, float(out.q.scale[0]), zero, "int8")
    y = tr.node("Cast", [truncated], to=7)
    y = clamp_to(tr, y, 0, low, high, "int8")
    tr.store_int(op.outputs[0], tr.node("Transpose", [y], perm=[0, 2, 3, 1]))


def _window_counts(size, kernel, strides, pads, out_size) -> np.ndarray:
    """[1, 1, OH, OW] float32: how many taps of each output's window lie inside the input."""
    counts = np.zeros((1, 1, *out_size), np.float32)
    for i in range(out_size[0]):
        top = i * strides[0] - pads[0]
        rows = min(top + kernel[0], size[0]) - max(top, 0)
        for j in range(out_size[1]):
            left = j * strides[1] - pads[1]
            cols = min(left + kernel[1], size[1]) - max(left, 0)
            counts[0, 0, i, j] = max(rows, 0) * max(cols, 0)
    return counts


ADD_LEFT_SHIFT = 20  # bits an int8 ADD/SUB input is shifted up before rescaling


def _exact_add(tr: Translation, op: Op, code: int) -> None:
    """ADD or SUB as TFLM computes int8: each input less its zero point,
    shifted up ADD_LEFT_SHIFT bits and rescaled to twice the larger input
    scale, summed, rescaled to the output."""
    if tr.tflm_kernels and kernel_add(tr, op, code):
        return
    real = np.float64  # TFLM derives the factors in double from the float32 scales
    a, b = (tr.tensors[i] for i in op.inputs[:2])
    out = tr.tensors[op.outputs[0]]
    sa, sb, so = (real(t.q.scale[0]) for t in (a, b, out))
    twice = real(2) * real(max(np.float32(sa), np.float32(sb)))
    terms = []
    for t, scale in ((a, sa), (b, sb)):
        v = tr.node("Cast", [tr.stored(t.index, op)], to=7)
        v = tr.node("Sub", [v, tr.constant(np.int64(t.q.zero_point[0]), "zero_point")])
        v = tr.node("Mul", [v, tr.constant(np.int64(1 << ADD_LEFT_SHIFT), "left_shift")])
        terms.append(requantize(tr, v, [float(real(scale / twice))], ()))
    total = tr.node("Add" if op.name == "ADD" else "Sub", terms)
    y = requantize(tr, total, [float(real(twice / (real(1 << ADD_LEFT_SHIFT) * so)))], ())
    zero = int(out.q.zero_point[0])
    low, high = activation_range(code, float(out.q.scale[0]), zero, "int8")
    tr.store_int(op.outputs[0], clamp_to(tr, y, zero, low, high, "int8"))


def _exact_mul(tr: Translation, op: Op, code: int) -> None:
    """MUL as TFLM computes int8: the product of the inputs less their zero
    points, requantized by input scales' product over the output scale."""
    a, b = (tr.tensors[i] for i in op.inputs[:2])
    out = tr.tensors[op.outputs[0]]
    terms = []
    for t in (a, b):
        v = tr.node("Cast", [tr.stored(t.index, op)], to=7)
        terms.append(tr.node("Sub", [v, tr.constant(np.int64(t.q.zero_point[0]), "zero_point")]))
    real = np.float64(a.q.scale[0]) * np.float64(b.q.scale[0]) / np.float64(out.q.scale[0])
    y = requantize(tr, tr.node("Mul", terms), [float(real)], ())
    zero = int(out.q.zero_point[0])
    low, high = activation_range(code, float(out.q.scale[0]), zero, "int8")
    tr.store_int(op.outputs[0], clamp_to(tr, y, zero, low, high, "int8"))


# int8 binary ops written in TFLM's integer arithmetic.
EXACT_BINARY = {"ADD": _exact_add, "SUB": _exact_add, "MUL": _exact_mul}


def _binary(onnx_op: str, options_name: str):
    def handler(tr: Translation, op: Op) -> None:
        o = options(op, tr, options_name)
        code = o.FusedActivationFunction() if o else 0
        if op.name in EXACT_BINARY and _same_int8(tr, op) and code in CLAMPS:
            return EXACT_BINARY[op.name](tr, op, code)
        y = tr.node(onnx_op, [tr.real(op.inputs[0], op), tr.real(op.inputs[1], op)])
        tr.store(op.outputs[0], activation(tr, y, o.FusedActivationFunction() if o else 0, op), op)

    return handler


def _int8_per_tensor(tr: Translation, indices) -> bool:
    """Whether the tensors at `indices` are all int8 quantized per tensor."""
    tensors = [tr.tensors[i] for i in indices]
    return all(t.dtype == "int8" and t.q is not None and not t.q.per_channel for t in tensors)


def _refuse(tr: Translation, op: Op, reason) -> UsageError:
    return UsageError(f"{tr.path}: {op.label} computing tensor {tr.tensors[op.outputs[0]].name!r}: {reason}")


def _scale_and_zero(t: TensorInfo) -> tuple:
    return float(t.q.scale[0]), int(t.q.zero_point[0])


def _logistic_table(x: TensorInfo, out: TensorInfo) -> np.ndarray:
    if int(out.q.zero_point[0]) != -128:
        raise Unsupported(f"its int8 output has zero point {int(out.q.zero_point[0])}; TFLM's LOGISTIC requires -128")
    return logistic_table(float(x.q.scale[0]), int(x.q.zero_point[0]))


# int8 elementwise ops as 256-entry tables of TFLM's fixed-point results
# (tflite_fixedpoint.py), (input, output) tensors -> table.
INT8_TABLES = {
    "LOGISTIC": _logistic_table,
    "TANH": lambda x, out: tanh_table(float(x.q.scale[0]), int(x.q.zero_point[0])),
    "HARD_SWISH": lambda x, out: hard_swish_table(*_scale_and_zero(x), *_scale_and_zero(out)),
    "RELU": lambda x, out: relu_table(*_scale_and_zero(x), *_scale_and_zero(out)),
}


def _table_lookup(tr: Translation, op: Op, table: np.ndarray) -> None:
    """The int8 output of `table` at each int8 input + 128 (a Gather)."""
    index = tr.node("Cast", [tr.stored(op.inputs[0], op)], to=7)
    index = tr.node("Add", [index, tr.constant(np.int64(128), "table_offset")])
    tr.store_int(op.outputs[0], tr.node("Gather", [tr.constant(table.astype(np.int8), "table"), index], axis=0))


def _unary(onnx_op: str, **attrs):
    def handler(tr: Translation, op: Op) -> None:
        if op.name in INT8_TABLES and _int8_per_tensor(tr, (op.inputs[0], op.outputs[0])):
            x, out = tr.tensors[op.inputs[0]], tr.tensors[op.outputs[0]]
            try:
                table = INT8_TABLES[op.name](x, out)
            except Unsupported as e:
                raise _refuse(tr, op, e) from None
            return _table_lookup(tr, op, table)
        tr.store(op.outputs[0], tr.node(onnx_op, [tr.real(op.inputs[0], op)], **attrs), op)

    return handler


def relu6(tr: Translation, op: Op) -> None:
    if _same_int8(tr, op):
        # TFLM's int8 RELU6 clamps the raw values to the input's quantized 0
        # and 6 and keeps them: the output's own parameters are not read.
        x = tr.tensors[op.inputs[0]]
        zero, scale = int(x.q.zero_point[0]), float(x.q.scale[0])
        six = min(127, max(-128, zero + round_away(float(np.float32(6.0) / np.float32(scale)))))
        value = tr.node("Max", [tr.stored(x.index, op), tr.constant(np.int8(max(zero, -128)), "zero")])
        tr.store_int(op.outputs[0], tr.node("Min", [value, tr.constant(np.int8(six), "six")]))
        return
    tr.store(op.outputs[0], activation(tr, tr.real(op.inputs[0], op), 3, op), op)


def moves_bytes(tr: Translation, op: Op, data_inputs) -> bool:
    """Whether `op` moves int8 or uint8 values as they are: its data inputs
    and output of one integer type, quantized per tensor.  TFLM's kernels of
    such ops copy the values and read no scale (an output whose parameters
    differ reinterprets them), so the translation moves them too."""
    tensors = [tr.tensors[i] for i in (*data_inputs, op.outputs[0])]
    dtype = tensors[-1].dtype
    return dtype in QUANTIZED_TYPES and all(
        t.dtype == dtype and t.q is not None and not t.q.per_channel for t in tensors
    )


def reshape(tr: Translation, op: Op) -> None:
    """RESHAPE and SQUEEZE: to the output tensor's (static) shape."""
    out = tr.tensors[op.outputs[0]]
    raw = moves_bytes(tr, op, op.inputs[:1])
    tr.result(op.outputs[0], reshape_to(tr, tr.operand(op.inputs[0], op, raw), list(out.shape)), op, raw)


# The int8 output quantization TFLM's SOFTMAX requires: scale 1/256, zero point -128.
SOFTMAX_OUTPUT = (np.float32(1.0 / 256.0), -128)


def softmax(tr: Translation, op: Op) -> None:
    o = options(op, tr, "SoftmaxOptions")
    beta = o.Beta() if o else 1.0
    if _int8_per_tensor(tr, (op.inputs[0], op.outputs[0])):
        x, out = tr.tensors[op.inputs[0]], tr.tensors[op.outputs[0]]
        if (np.float32(out.q.scale[0]), int(out.q.zero_point[0])) != SOFTMAX_OUTPUT:
            raise _refuse(tr, op, "TFLM's int8 SOFTMAX requires an output scale of 1/256 and zero point -128")
        if not x.shape:
            raise _refuse(tr, op, "a softmax of a scalar")
        try:
            y = softmax_int8(tr, tr.stored(x.index, op), x.shape[-1], float(np.float32(beta)), float(x.q.scale[0]))
        except Unsupported as e:
            raise _refuse(tr, op, e) from None
        return tr.store_int(op.outputs[0], y)
    x = tr.real(op.inputs[0], op)
    if beta != 1.0:
        x = tr.node("Mul", [x, tr.constant(np.float32(beta), "beta")])
    tr.store(op.outputs[0], tr.node("Softmax", [x], axis=-1), op)


# The integer requantizations TFLM's QUANTIZE takes (input, output dtype).
REQUANTIZATIONS = (("int8", "int8"), ("int8", "uint8"), ("uint8", "int8"))


def quantize(tr: Translation, op: Op) -> None:
    """QUANTIZE (float -> int, or a requantization) and DEQUANTIZE (int -> float).
    As TFLM: a requantization is its MultiplyByQuantizedMultiplier of the
    input less its zero point by input scale / output scale, plus the output
    zero point, clamped; float -> int8 rounds x / scale half away from zero."""
    x, out = tr.tensors[op.inputs[0]], tr.tensors[op.outputs[0]]
    per_tensor = out.q is not None and not out.q.per_channel and (x.q is None or not x.q.per_channel)
    if per_tensor and (x.dtype, out.dtype) in REQUANTIZATIONS and x.q is not None:
        multiplier, shift = quantize_multiplier(float(np.float64(x.q.scale[0]) / np.float64(out.q.scale[0])))
        if 255 << max(shift, 0) >= 1 << 31:
            raise _refuse(tr, op, "its scale ratio overflows TFLM's int32 requantization")
        value = tr.node("Cast", [tr.stored(x.index, op)], to=7)
        value = tr.node("Sub", [value, tr.constant(np.int64(x.q.zero_point[0]), "zero_point")])
        value = multiply_by_quantized_multiplier(tr, value, multiplier, shift)
        info = np.iinfo(out.dtype)
        zero = int(out.q.zero_point[0])
        return tr.store_int(op.outputs[0], clamp_to(tr, value, zero, int(info.min), int(info.max), out.dtype))
    if per_tensor and x.dtype == "float32" and out.dtype == "int8":
        y = affine_quantize(tr, tr.real(x.index, op), float(out.q.scale[0]), int(out.q.zero_point[0]), "int8")
        return tr.store_int(op.outputs[0], y)
    tr.store(op.outputs[0], tr.real(op.inputs[0], op), op)


def pad(tr: Translation, op: Op) -> None:
    """PAD, and PADV2 (its third input the one value it pads with)."""
    x = tr.tensors[op.inputs[0]]
    pads = tr.constant_ints(op.inputs[1], op)
    if len(pads) != 2 * len(x.shape) or min(pads) < 0:
        raise UsageError(f"{tr.path}: {op.label}: paddings do not fit input {x.name!r}")
    onnx_pads = np.array(pads[0::2] + pads[1::2], dtype=np.int64)
    raw = moves_bytes(tr, op, op.inputs[:1])
    args = [tr.operand(x.index, op, raw), tr.constant(onnx_pads, "pads")]
    out = tr.tensors[op.outputs[0]]
    value = _pad_value(tr, op, out, raw)
    if value is not None:
        args.append(tr.constant(value, "pad_value"))
    elif raw:  # TFLM pads an integer tensor with the output's zero point
        args.append(tr.constant(np.array(out.q.zero_point[0], out.dtype), "pad_value"))
    tr.result(op.outputs[0], tr.node("Pad", args), op, raw)


def _pad_value(tr: Translation, op: Op, out: TensorInfo, raw: bool) -> np.ndarray | None:
    """PADV2's constant value as the padded operand holds it (None: PAD's
    default).  As TFLM: one element of the input's type; a quantized one in
    the output's own scale and zero point, its stored integer padded as it is."""
    if len(op.inputs) < 3 or op.inputs[2] < 0:
        return None
    x, v = tr.tensors[op.inputs[0]], tr.tensors[op.inputs[2]]
    if v.data is None or v.data.size != 1 or v.dtype != x.dtype:
        raise _refuse(tr, op, f"its pad value {v.name!r} must be one constant element of the input's type")
    if raw:
        if v.q is None or (np.float32(v.q.scale[0]), int(v.q.zero_point[0])) != (
            np.float32(out.q.scale[0]),
            int(out.q.zero_point[0]),
        ):
            raise _refuse(tr, op, f"its pad value {v.name!r} is not quantized as its output, as TFLM requires")
        return np.array(v.data.reshape(()), out.dtype)
    if v.dtype != "float32":
        raise _refuse(tr, op, f"a {v.dtype} PADV2 of float values is not supported")
    return np.array(v.data.reshape(()), np.float32)


def concatenation(tr: Translation, op: Op) -> None:
    o = options(op, tr, "ConcatenationOptions")
    rank = len(tr.tensors[op.outputs[0]].shape)
    axis = o.Axis()
    if not -rank <= axis < rank:
        raise UsageError(f"{tr.path}: {op.label}: axis {axis} is out of range")
    if o.FusedActivationFunction() != 0:
        raise _refuse(tr, op, "TFLM's CONCATENATION takes no fused activation")
    raw = moves_bytes(tr, op, op.inputs)
    if raw and tr.tensors[op.outputs[0]].dtype == "int8":
        _same_quantization(tr, op, 0.0, op.inputs)
    tr.result(op.outputs[0], tr.node("Concat", [tr.operand(i, op, raw) for i in op.inputs], axis=axis % rank), op, raw)


def mean(tr: Translation, op: Op) -> None:
    x = tr.tensors[op.inputs[0]]
    rank = len(x.shape)
    axes = tr.constant_ints(op.inputs[1], op)
    if not all(-rank <= a < rank for a in axes):
        raise UsageError(f"{tr.path}: {op.label}: axes {axes} do not fit input {x.name!r}")
    axes = sorted({a % rank for a in axes})
    out = tr.tensors[op.outputs[0]]
    if _int8_per_tensor(tr, (x.index, out.index)):
        q = (x.q, out.q)
        try:
            y = mean_int8(
                tr,
                tr.stored(x.index, op),
                x.shape,
                axes,
                tuple(float(t.scale[0]) for t in q),
                tuple(int(t.zero_point[0]) for t in q),
            )
        except Unsupported as e:
            raise _refuse(tr, op, e) from None
        return tr.store_int(op.outputs[0], reshape_to(tr, y, list(out.shape)))
    y = tr.node("ReduceMean", [tr.real(x.index, op)], axes=axes, keepdims=1)
    tr.store(op.outputs[0], reshape_to(tr, y, list(out.shape)), op)


def strided_slice(tr: Translation, op: Op) -> None:
    o = options(op, tr, "StridedSliceOptions")
    x = tr.tensors[op.inputs[0]]
    rank = len(x.shape)
    begin, end, strides = (tr.constant_ints(i, op) for i in op.inputs[1:4])
    if o.EllipsisMask() or o.NewAxisMask() or (hasattr(o, "Offset") and o.Offset()):
        raise UsageError(f"{tr.path}: {op.label}: ellipsis, new-axis and offset masks are not supported")
    if not len(begin) == len(end) == len(strides) == rank or 0 in strides:
        raise UsageError(f"{tr.path}: {op.label}: begin, end and strides do not fit input {x.name!r}")
    starts, ends = [], []
    for i in range(rank):
        size, step = x.shape[i], strides[i]
        b, e = begin[i], end[i]
        if o.BeginMask() >> i & 1:
            b = 0 if step > 0 else size - 1
        if o.ShrinkAxisMask() >> i & 1:
            b = b + size if b < 0 else b
            e = b + 1
        elif o.EndMask() >> i & 1:
            e = size if step > 0 else -(2**62)
        starts.append(b)
        ends.append(e)
    raw = moves_bytes(tr, op, op.inputs[:1])
    y = tr.node(
        "Slice",
        [
            tr.operand(x.index, op, raw),
            tr.constant(np.array(starts, np.int64), "starts"),
            tr.constant(np.array(ends, np.int64), "ends"),
            tr.constant(np.arange(rank, dtype=np.int64), "axes"),
            tr.constant(np.array(strides, np.int64), "steps"),
        ],
    )
    out = tr.tensors[op.outputs[0]]
    tr.result(op.outputs[0], reshape_to(tr, y, list(out.shape)), op, raw)


def transpose(tr: Translation, op: Op) -> None:
    x = tr.tensors[op.inputs[0]]
    perm = tr.constant_ints(op.inputs[1], op)
    if sorted(perm) != list(range(len(x.shape))):
        raise UsageError(f"{tr.path}: {op.label}: permutation {perm} does not fit input {x.name!r}")
    raw = moves_bytes(tr, op, op.inputs[:1])
    tr.result(op.outputs[0], tr.node("Transpose", [tr.operand(x.index, op, raw)], perm=perm), op, raw)


# Builtin op name -> handler: the op set ireegen takes from a .tflite file.
OPS = {
    "CONV_2D": conv_2d,
    "DEPTHWISE_CONV_2D": depthwise_conv_2d,
    "FULLY_CONNECTED": fully_connected,
    "AVERAGE_POOL_2D": _pool("AveragePool"),
    "MAX_POOL_2D": _pool("MaxPool"),
    "ADD": _binary("Add", "AddOptions"),
    "SUB": _binary("Sub", "SubOptions"),
    "MUL": _binary("Mul", "MulOptions"),
    "RESHAPE": reshape,
    "SQUEEZE": reshape,
    "SOFTMAX": softmax,
    "LOGISTIC": _unary("Sigmoid"),
    "TANH": _unary("Tanh"),
    "RELU": _unary("Relu"),
    "RELU6": relu6,
    "HARD_SWISH": _unary("HardSwish"),
    "QUANTIZE": quantize,
    "DEQUANTIZE": quantize,
    "PAD": pad,
    "PADV2": pad,
    "CONCATENATION": concatenation,
    "MEAN": mean,
    "STRIDED_SLICE": strided_slice,
    "TRANSPOSE": transpose,
}


# --- reading the flatbuffer -----------------------------------------------------------------------


def _read(path: Path, data: bytes):
    """The tflite.Model of `data`, with its subgraph's tensors read and
    checked; Malformed when the bytes are not a TFLite model it can trust."""
    tflite = require_tflite()
    if len(data) < 8 or data[4:8] != FILE_IDENTIFIER:
        raise Malformed(f"{path}: not a TFLite model (no TFL3 file identifier)")
    model = tflite.Model.GetRootAs(data, 0)
    if model.SubgraphsLength() < 1:
        raise Malformed(f"{path}: the model has no subgraph")
    graph = model.Subgraphs(0)
    tensors = [_tensor(path, data, model, graph, i) for i in range(graph.TensorsLength())]
    return model, graph, tensors


def _tensor(path: Path, data: bytes, model, graph, i: int) -> TensorInfo:
    t = graph.Tensors(i)
    raw_name = t.Name()
    name = raw_name.decode("utf-8", "replace") if raw_name else f"tensor{i}"
    if t.Type() not in TENSOR_TYPES:
        dtype = None
    else:
        dtype = TENSOR_TYPES[t.Type()][0]
    shape = tuple(int(d) for d in t.ShapeAsNumpy()) if t.ShapeLength() else ()
    if any(d < 0 for d in shape):
        raise Malformed(f"{path}: tensor {name!r} has an unknown or negative dimension {list(shape)}")
    if t.Sparsity() is not None:
        raise UsageError(f"{path}: tensor {name!r} is sparse; ireegen takes dense tensors")
    value = None
    b = t.Buffer()
    if not 0 <= b < model.BuffersLength():
        raise Malformed(f"{path}: tensor {name!r} names buffer {b}, past the model's {model.BuffersLength()} buffers")
    buf = model.Buffers(b)
    offset, size = int(buf.Offset()), int(buf.Size())
    if offset > 1:  # the bytes live after the flatbuffer, at offset from the file's start
        if offset + size > len(data):
            raise Malformed(f"{path}: tensor {name!r}: its buffer {b} lies past the end of the file")
        raw = data[offset : offset + size]
    else:
        raw = buf.DataAsNumpy().tobytes() if buf.DataLength() else b""
    if raw and dtype is not None:  # a constant of a type outside TENSOR_TYPES: its op's refusal names both
        need = math.prod(shape) * np.dtype(dtype).itemsize
        if len(raw) != need:
            raise Malformed(f"{path}: tensor {name!r} holds {len(raw)} bytes; its type and shape need {need}")
        value = np.frombuffer(raw, dtype=np.dtype(dtype).newbyteorder("<")).astype(dtype).reshape(shape)
    return TensorInfo(i, name, dtype, shape, value, _qparams(path, t, name, shape), int(t.Type()))


def _qparams(path: Path, t, name: str, shape: tuple) -> QParams | None:
    q = t.Quantization()
    if q is None or q.ScaleLength() == 0:
        return None
    scale = q.ScaleAsNumpy().astype(np.float32)
    zero = q.ZeroPointAsNumpy().astype(np.int64) if q.ZeroPointLength() else np.zeros_like(scale, np.int64)
    axis = int(q.QuantizedDimension())
    if len(shape) == 1:  # a bias: converters write the filter's dimension; its only axis is 0
        axis = 0
    if zero.size != scale.size or (scale.size > 1 and not (0 <= axis < len(shape) and shape[axis] == scale.size)):
        raise Malformed(f"{path}: tensor {name!r}: its quantization does not fit its shape")
    if not np.all(np.isfinite(scale)) or np.any(scale <= 0):
        raise Malformed(f"{path}: tensor {name!r}: a quantization scale is not a positive number")
    if scale.size == 1:
        axis = 0
    return QParams(scale, zero, axis)


def _op_name(model, o, i: int, path: Path) -> str:
    """The builtin name of operator `o` (number `i`), or CUSTOM and its custom code."""
    tflite = require_tflite()
    from tflite.utils import BUILTIN_OPCODE2NAME

    index = o.OpcodeIndex()
    if not 0 <= index < model.OperatorCodesLength():
        raise Malformed(f"{path}: operator #{i} names op code {index}, past the model's op codes")
    code = model.OperatorCodes(index)
    builtin = max(int(code.BuiltinCode()), int(code.DeprecatedBuiltinCode()))
    name = BUILTIN_OPCODE2NAME.get(builtin, f"builtin {builtin}")
    if builtin == tflite.BuiltinOperator.CUSTOM:
        custom = code.CustomCode()
        name = f"CUSTOM {custom.decode('utf-8', 'replace')!r}" if custom else "CUSTOM"
    return name


def _operator(model, graph, i: int, tensors: list, path: Path) -> Op:
    o = graph.Operators(i)
    name = _op_name(model, o, i, path)
    inputs = tuple(int(v) for v in o.InputsAsNumpy()) if o.InputsLength() else ()
    outputs = tuple(int(v) for v in o.OutputsAsNumpy()) if o.OutputsLength() else ()
    for v in inputs + outputs:
        if not -1 <= v < len(tensors):
            raise Malformed(f"{path}: operator #{i} ({name}) names tensor {v}, past the subgraph's {len(tensors)}")
    if not outputs or -1 in outputs:
        raise Malformed(f"{path}: operator #{i} ({name}) has no output")
    return Op(name, inputs, outputs, o.BuiltinOptions(), i, int(o.BuiltinOptionsType()))


def read_tflite(path) -> tuple:
    """(model, graph, tensors, operators) of the .tflite file at `path`, or UsageError."""
    path = Path(path)
    data = path.read_bytes()
    try:
        model, graph, tensors = _read(path, data)
        operators = [_operator(model, graph, i, tensors, path) for i in range(graph.OperatorsLength())]
        inputs = [int(v) for v in graph.InputsAsNumpy()] if graph.InputsLength() else []
        outputs = [int(v) for v in graph.OutputsAsNumpy()] if graph.OutputsLength() else []
        if model.SubgraphsLength() != 1:
            raise UsageError(unsupported_op(path, operators, tensors) or _subgraphs_refusal(path, model))
    except UsageError:
        raise
    except Exception as e:  # noqa: BLE001 - the flatbuffers readers raise whatever bad offsets cause
        raise Malformed(f"{path}: not a readable TFLite model ({type(e).__name__} while reading it)") from None
    for v in inputs + outputs:
        if not 0 <= v < len(tensors):
            raise Malformed(f"{path}: the subgraph's inputs or outputs name tensor {v}, past its {len(tensors)}")
    if not outputs:
        raise Malformed(f"{path}: the subgraph has no outputs")
    return tensors, operators, inputs, outputs


def unsupported_op(path, operators, tensors) -> str | None:
    """The refusal of the first op outside OPS, naming it and its output tensor."""
    for op in operators:
        if op.name not in OPS:
            return (
                f"{path}: {op.label} computing tensor {tensors[op.outputs[0]].name!r}: ireegen does not support "
                f"the TFLite op {op.name} (supported: {', '.join(sorted(OPS))})"
            )
    return None


def _subgraphs_refusal(path: Path, model) -> str:
    """The refusal of a model with several subgraphs (the bodies of WHILE,
    IF, CALL_ONCE): the first op outside OPS in one of them, or their count."""
    for s in range(1, model.SubgraphsLength()):
        graph = model.Subgraphs(s)
        for i in range(graph.OperatorsLength()):
            o = graph.Operators(i)
            name = _op_name(model, o, i, path)
            if name in OPS:
                continue
            out = int(o.OutputsAsNumpy()[0]) if o.OutputsLength() else -1
            tensor = graph.Tensors(out).Name() if 0 <= out < graph.TensorsLength() else None
            tensor = tensor.decode("utf-8", "replace") if tensor else f"tensor{out}"
            return (
                f"{path}: subgraph {s} operator #{i} ({name}) computing tensor {tensor!r}: ireegen does not "
                f"support the TFLite op {name} (supported: {', '.join(sorted(OPS))})"
            )
    return f"{path}: has {model.SubgraphsLength()} subgraphs; ireegen takes models with exactly one"


# Ops TFLite Micro runs on uint8 tensors (its other kernels take int8), and
# the other operand types each of them takes with uint8.
UINT8_OPS = {
    "QUANTIZE": ("int8",),
    "DEQUANTIZE": ("float32",),
    "RESHAPE": ("int32",),
    "SQUEEZE": (),
}


def unsupported_types(path, operators, tensors) -> str | None:
    """The refusal of the first op with a tensor of a type ireegen does not
    take, or a uint8 tensor in an op TFLM runs only on int8, naming both."""
    tflite = require_tflite()
    type_names = {v: k for k, v in vars(tflite.TensorType).items() if not k.startswith("_")}
    for op in operators:
        where = f"{path}: {op.label} computing tensor {tensors[op.outputs[0]].name!r}"
        operands = [tensors[i] for i in (*op.inputs, *op.outputs) if i >= 0]
        for t in operands:
            if t.dtype is None:
                kind = type_names.get(t.type_code, f"of type {t.type_code}")
                return f"{where}: tensor {t.name!r} is {kind}, which ireegen does not take"
        if any(t.dtype == "uint8" for t in operands):
            allowed = ("uint8", *UINT8_OPS.get(op.name, ()))
            if op.name not in UINT8_OPS or any(t.dtype not in allowed for t in operands):
                return (
                    f"{where}: tensor {next(t.name for t in operands if t.dtype == 'uint8')!r} is uint8, which TFLite "
                    "Micro runs only through QUANTIZE (to or from int8), DEQUANTIZE, RESHAPE and SQUEEZE: convert "
                    "the model with int8 activations (uint8 at most at its interface)"
                )
    return None


def _io_names(path: Path, tensors: list, inputs: list, outputs: list) -> dict:
    names = {}
    for kind, indices in (("input", inputs), ("output", outputs)):
        for i in indices:
            t = tensors[i]
            if t.dtype is None or t.dtype not in ("float32", "int8", "uint8", "int32"):
                raise UsageError(f"{path}: {kind} {t.name!r} is not float32, int8, uint8 or int32")
            if i in names:
                continue
            if t.name in names.values():
                raise UsageError(f"{path}: two inputs or outputs are named {t.name!r}; the C API needs distinct names")
            names[i] = t.name
    return names


def tflite_to_onnx(path, tflm_kernels: bool = False):
    """The ONNX ModelProto of the .tflite model at `path` (UsageError for
    what it cannot translate, before anything is compiled); `tflm_kernels`:
    in the form the int8 kernels take with TFLM's rounding where they can
    (tflite_kernel_form.py)."""
    from onnx import helper

    path = Path(path)
    tensors, operators, inputs, outputs = read_tflite(path)
    refusal = unsupported_op(path, operators, tensors) or unsupported_types(path, operators, tensors)
    if refusal:
        raise UsageError(refusal)
    tr = Translation(path, tensors)
    tr.tflm_kernels = tflm_kernels
    tr.graph_names = _io_names(path, tensors, inputs, outputs)
    for i in inputs:
        tr.values[i] = tr.graph_names[i]
    for op in operators:
        try:
            OPS[op.name](tr, op)
        except (IndexError, KeyError, ValueError, TypeError, AttributeError, OverflowError, struct.error) as e:
            raise Malformed(f"{path}: {op.label}: a malformed operator ({type(e).__name__}: {e})"[:300]) from None
    for i in outputs:
        if i not in tr.values:
            raise UsageError(f"{path}: output {tensors[i].name!r} is computed by no operator")
        if tr.values[i] != tr.graph_names[i]:  # an input returned as it is, or an output named twice
            tr.node("Identity", [tr.values[i]], [tr.graph_names[i]])

    def value_info(i):
        t = tensors[i]
        return helper.make_tensor_value_info(tr.graph_names[i], TENSOR_TYPES_BY_DTYPE[t.dtype], list(t.shape))

    graph = helper.make_graph(
        tr.nodes, "main", [value_info(i) for i in inputs], [value_info(i) for i in outputs], tr.initializers
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", OPSET)], producer_name="ireegen-tflite")
    model.ir_version = 8
    return model


TENSOR_TYPES_BY_DTYPE = {dtype: onnx_type for dtype, onnx_type in TENSOR_TYPES.values()}


def interface_quantization(path) -> dict:
    """{input or output name: (scale, zero_point, dtype)} of a quantized model's interface tensors."""
    tensors, _, inputs, outputs = read_tflite(path)
    out = {}
    for i in inputs + outputs:
        t = tensors[i]
        if t.dtype in QUANTIZED_TYPES and t.q is not None and not t.q.per_channel:
            out[t.name] = (float(t.q.scale[0]), int(t.q.zero_point[0]), t.dtype)
    return out
