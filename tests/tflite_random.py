"""Random small .tflite models over the TFLite op table, for the sweep
against TFLite Micro (benchmarks/tflite_sweep.py, tests/test_tflite_sweep.py).

`random_model(seed)` draws one op class from `CLASSES` (or the one named)
and builds a model of it with tflite_builder.py: random shapes, strides,
paddings, batches of 1 or 2, channel counts up to 40, fused activations,
per-tensor or per-channel filters, scales
from 1e-4 to 10 and zero points out to the ends of the int8 range, behind
an int8, uint8 or float interface (QUANTIZE in, QUANTIZE or DEQUANTIZE
out), or the float model.  Each builder writes the output shapes as
TFLite's converter does (TFLM does not resize), so a model TFLM refuses to
run is the generator's mistake, not ireegen's.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from tflite_builder import TFLiteBuilder

# Activation (fused) codes: NONE, RELU, RELU_N1_TO_1, RELU6.
CLAMP_CODES = (0, 1, 2, 3)


@dataclass(frozen=True)
class Drawn:
    """One random model: its bytes, its op class and what was drawn."""

    data: bytes
    op_class: str
    description: str


class Ctx:
    """The drawing state of one model: the builder, the generator, the
    activations' type (`int8` or `float32`) and the words describing it."""

    def __init__(self, seed: int, dtype: str, extreme: bool):
        self.rng = np.random.default_rng(seed)
        self.b = TFLiteBuilder()
        self.dtype = dtype
        self.extreme = extreme
        self.words: list = []
        self._n = 0
        # Channel counts up to 40 (the kernels' vector paths), else up to 6.
        self.wide = False
        # Convolutions as TFLite's converter writes them (equal strides, no
        # dilation, a RELU's output starting at its zero point): the int8
        # kernels take those on a Cortex-M.
        self.converter_like = False

    @property
    def float(self) -> bool:
        return self.dtype == "float32"

    def name(self, hint: str) -> str:
        self._n += 1
        return f"{hint}{self._n}"

    def q(self, scale_range=(0.003, 0.3)) -> tuple:
        """A random activation (scale, zero point): `extreme` reaches 1e-4 .. 10 and the range's ends."""
        lo, hi = (1e-4, 10.0) if self.extreme else scale_range
        scale = float(np.exp(self.rng.uniform(np.log(lo), np.log(hi))))
        if self.extreme and self.rng.random() < 0.5:
            zero = int(self.rng.choice([-128, 127, -127, 126]))
        else:
            zero = int(self.rng.integers(-100, 101))
        return scale, zero

    def act(self, shape, q=None, name="t") -> int:
        """An activation tensor: float, or int8 with `q` (drawn when None)."""
        if self.float:
            return self.b.tensor(self.name(name), list(shape), "float32")
        scale, zero = q or self.q()
        return self.b.tensor(self.name(name), list(shape), "int8", scale=scale, zero_point=zero)

    def qof(self, index: int) -> tuple | None:
        t = self.b.tensors[index]
        q = t[4]
        return None if q is None else (float(q[0][0]), int(q[1][0]))

    def shape(self, index: int) -> list:
        return list(self.b.tensors[index][1])

    def ints(self, values, hint: str) -> int:
        values = np.asarray(values, np.int32)
        return self.b.tensor(self.name(hint), list(values.shape), "int32", data=values)

    def weights(self, shape, axis: int, fan_in: int, x_q, per_channel: bool) -> tuple:
        """(filter, bias scale per output channel) of a random filter; int8
        symmetric, per channel along `axis` or per tensor."""
        w = self.rng.standard_normal(shape).astype(np.float32) / math.sqrt(max(fan_in, 1))
        if self.float:
            return self.b.tensor(self.name("w"), list(shape), "float32", data=w), None
        channels = shape[axis]
        moved = np.moveaxis(w, axis, 0).reshape(channels, -1)
        ws = np.maximum(np.abs(moved).max(1), 1e-6) / 127
        if self.extreme:
            ws = ws * np.exp(self.rng.uniform(-3, 3, channels))
        if not per_channel:
            ws = np.full(channels, ws.max())
        bshape = [1] * len(shape)
        bshape[axis] = channels
        data = np.clip(np.round(w / ws.reshape(bshape)), -127, 127)
        scale = ws.astype(np.float32) if per_channel else float(ws[0])
        index = self.b.tensor(self.name("w"), list(shape), "int8", data=data, scale=scale, zero_point=0, axis=axis)
        return index, np.float64(x_q[0]) * ws.astype(np.float32).astype(np.float64)

    def bias(self, channels: int, bias_scales, per_channel: bool) -> int:
        if self.float:
            data = self.rng.standard_normal(channels).astype(np.float32) * 0.3
            return self.b.tensor(self.name("b"), [channels], "float32", data=data)
        data = np.round(self.rng.standard_normal(channels) * 0.3 / bias_scales)
        data = np.clip(data, -(2**24), 2**24)
        scale = bias_scales.astype(np.float32) if per_channel else float(bias_scales[0])
        return self.b.tensor(self.name("b"), [channels], "int32", data=data, scale=scale, zero_point=0)

    def out_q(self, x_q, gain: float) -> tuple:
        """An output (scale, zero point) near `x_q`'s scale times `gain` (so
        that the output is neither all clamped nor all zero), or extreme."""
        if self.extreme and self.rng.random() < 0.3:
            return self.q()
        scale = x_q[0] * gain * float(np.exp(self.rng.uniform(-1.0, 1.0)))
        return float(scale), int(self.rng.integers(-100, 101))


def _dims(rng, rank: int, low=1, high=6) -> list:
    return [int(v) for v in rng.integers(low, high + 1, rank)]


def _first_shape(c: Ctx, rank: int) -> list:
    """The input's shape: dimensions 1 to 6, the last up to 40 when `wide`."""
    shape = _dims(c.rng, rank)
    if c.wide:
        shape[-1] = int(c.rng.integers(5, 41))
    return shape


def _out_size(size: int, kernel: int, stride: int, dilation: int, same: bool) -> int:
    effective = (kernel - 1) * dilation + 1
    return math.ceil(size / stride) if same else (size - effective) // stride + 1


def _spatial(c: Ctx, max_kernel=4) -> tuple:
    """(input H, W, kernel, strides, dilations, SAME) with a non-empty VALID output."""
    rng = c.rng
    kernel = (int(rng.integers(1, max_kernel + 1)), int(rng.integers(1, max_kernel + 1)))
    strides = (int(rng.integers(1, 4)), int(rng.integers(1, 4)))
    dil = (1, 1) if rng.random() < 0.7 else (int(rng.integers(1, 3)), int(rng.integers(1, 3)))
    if c.converter_like:
        strides, dil = (strides[0], strides[0]), (1, 1)
    same = bool(rng.random() < 0.5)
    h = int(rng.integers((kernel[0] - 1) * dil[0] + 1, 10))
    w = int(rng.integers((kernel[1] - 1) * dil[1] + 1, 10))
    return (h, w), kernel, strides, dil, same


def _code(c: Ctx) -> int:
    """A convolution's or fully connected op's fused activation: any clamp,
    or, `converter_like`, NONE or RELU/RELU6 (whose output then starts at
    its zero point, as TFLite's converter writes it)."""
    return int(c.rng.choice([0, 1, 3] if c.converter_like else CLAMP_CODES))


def _out_q(c: Ctx, x: int, gain: float, code: int) -> tuple | None:
    """The output quantization of a convolution or fully connected op;
    `converter_like` with RELU or RELU6, one whose range is the activation's
    (zero point -128; RELU6: scale at most 6/255)."""
    if c.float:
        return None
    scale, zero = c.out_q(c.qof(x), gain)
    if c.converter_like and code in (1, 3):
        return (min(scale, 6 / 255) if code == 3 else scale), -128
    return scale, zero


def conv_2d(c: Ctx, x: int) -> int:
    (h, w), k, s, d, same = _spatial(c)
    cin = c.shape(x)[3]
    cout = int(c.rng.integers(1, 7)) if not c.wide else int(c.rng.integers(5, 41))
    per_channel = bool(c.rng.random() < 0.6)
    code = _code(c)
    c.words.append(f"conv {k[0]}x{k[1]} s{s} d{d} {'SAME' if same else 'VALID'} act{code} pc{int(per_channel)}")
    filt, bs = c.weights([cout, k[0], k[1], cin], 0, k[0] * k[1] * cin, c.qof(x), per_channel)
    inputs = [x, filt, c.bias(cout, bs, per_channel) if c.rng.random() < 0.8 else -1]
    shape = c.shape(x)
    out = [shape[0], _out_size(shape[1], k[0], s[0], d[0], same), _out_size(shape[2], k[1], s[1], d[1], same), cout]
    y = c.act(out, _out_q(c, x, math.sqrt(k[0] * k[1] * cin) * 0.5, code), "conv")
    c.b.op(
        "CONV_2D",
        inputs,
        [y],
        "Conv2DOptions",
        Padding=0 if same else 1,
        StrideH=s[0],
        StrideW=s[1],
        DilationHFactor=d[0],
        DilationWFactor=d[1],
        FusedActivationFunction=code,
    )
    return y


def depthwise_conv_2d(c: Ctx, x: int) -> int:
    (h, w), k, s, d, same = _spatial(c)
    cin = c.shape(x)[3]
    mult = int(c.rng.choice([1, 1, 2, 3]))
    per_channel = bool(c.rng.random() < 0.6)
    code = _code(c)
    c.words.append(f"dw {k[0]}x{k[1]} m{mult} s{s} d{d} {'SAME' if same else 'VALID'} act{code} pc{int(per_channel)}")
    filt, bs = c.weights([1, k[0], k[1], cin * mult], 3, k[0] * k[1], c.qof(x), per_channel)
    inputs = [x, filt, c.bias(cin * mult, bs, per_channel)]
    shape = c.shape(x)
    out = [
        shape[0],
        _out_size(shape[1], k[0], s[0], d[0], same),
        _out_size(shape[2], k[1], s[1], d[1], same),
        cin * mult,
    ]
    y = c.act(out, _out_q(c, x, math.sqrt(k[0] * k[1]) * 0.5, code), "dw")
    c.b.op(
        "DEPTHWISE_CONV_2D",
        inputs,
        [y],
        "DepthwiseConv2DOptions",
        Padding=0 if same else 1,
        StrideH=s[0],
        StrideW=s[1],
        DepthMultiplier=mult,
        DilationHFactor=d[0],
        DilationWFactor=d[1],
        FusedActivationFunction=code,
    )
    return y


def fully_connected(c: Ctx, x: int) -> int:
    shape = c.shape(x)
    depth = shape[-1]
    units = int(c.rng.integers(1, 9)) if not c.wide else int(c.rng.integers(5, 41))
    keep = bool(len(shape) > 2 and c.rng.random() < 0.5)
    per_channel = bool(c.rng.random() < 0.4)
    code = _code(c)
    c.words.append(f"fc {shape}->{units} keep{int(keep)} act{code} pc{int(per_channel)}")
    filt, bs = c.weights([units, depth], 0, depth, c.qof(x), per_channel)
    bias = c.bias(units, bs, per_channel) if c.rng.random() < 0.8 else -1
    out = [*shape[:-1], units] if keep else [math.prod(shape) // depth, units]
    y = c.act(out, _out_q(c, x, math.sqrt(depth) * 0.5, code), "fc")
    c.b.op(
        "FULLY_CONNECTED",
        [x, filt, bias],
        [y],
        "FullyConnectedOptions",
        FusedActivationFunction=code,
        KeepNumDims=keep,
    )
    return y


def _pool(kind: str):
    def build(c: Ctx, x: int) -> int:
        rng = c.rng
        shape = c.shape(x)
        k = (int(rng.integers(1, min(shape[1], 4) + 1)), int(rng.integers(1, min(shape[2], 4) + 1)))
        s = (int(rng.integers(1, 4)), int(rng.integers(1, 4)))
        same = bool(rng.random() < 0.5)
        code = int(rng.choice(CLAMP_CODES))
        c.words.append(f"{kind} {k[0]}x{k[1]} s{s} {'SAME' if same else 'VALID'} act{code}")
        out = [shape[0], _out_size(shape[1], k[0], s[0], 1, same), _out_size(shape[2], k[1], s[1], 1, same), shape[3]]
        y = c.act(out, c.qof(x), kind.lower())
        c.b.op(
            kind,
            [x],
            [y],
            "Pool2DOptions",
            Padding=0 if same else 1,
            StrideH=s[0],
            StrideW=s[1],
            FilterHeight=k[0],
            FilterWidth=k[1],
            FusedActivationFunction=code,
        )
        return y

    return build


def _broadcast_partner(c: Ctx, shape: list) -> list:
    """A shape that broadcasts with `shape`: some dimensions 1, maybe lower rank."""
    other = [d if c.rng.random() < 0.6 else 1 for d in shape]
    if c.rng.random() < 0.3 and len(other) > 1:
        other = other[int(c.rng.integers(1, len(other))) :]
    return other


def _binary(kind: str):
    def build(c: Ctx, x: int) -> int:
        shape = c.shape(x)
        other_shape = _broadcast_partner(c, shape) if c.rng.random() < 0.6 else list(shape)
        swap = bool(c.rng.random() < 0.3)
        code = int(c.rng.choice(CLAMP_CODES))
        c.words.append(f"{kind} {shape} {other_shape} swap{int(swap)} act{code}")
        if c.float:
            other = c.b.tensor(
                c.name("k"), other_shape, "float32", data=c.rng.standard_normal(other_shape).astype(np.float32)
            )
        else:
            oq = c.q()
            other = c.b.tensor(
                c.name("k"),
                other_shape,
                "int8",
                data=c.rng.integers(-128, 128, other_shape),
                scale=oq[0],
                zero_point=oq[1],
            )
        xq = c.qof(x)
        if c.float:
            yq = None
        elif kind == "MUL":
            yq = c.out_q((xq[0] * c.qof(other)[0] * 128, 0), 1.0)
        else:
            yq = c.out_q((max(xq[0], c.qof(other)[0]), 0), 2.0)
        out = list(np.broadcast_shapes(tuple(shape), tuple(other_shape)))
        y = c.act(out, yq, kind.lower())
        pair = [other, x] if swap else [x, other]
        c.b.op(kind, pair, [y], f"{kind.capitalize()}Options", FusedActivationFunction=code)
        return y

    return build


def reshape(c: Ctx, x: int) -> int:
    shape = c.shape(x)
    total = math.prod(shape)
    out = [1, total] if c.rng.random() < 0.5 else [total]
    if c.rng.random() < 0.5:
        divisors = [d for d in range(1, total + 1) if total % d == 0]
        d = int(c.rng.choice(divisors))
        out = [d, total // d]
    c.words.append(f"reshape {shape}->{out}")
    y = c.act(out, c.qof(x), "reshape")
    c.b.op("RESHAPE", [x, c.ints(out, "shape")], [y], "ReshapeOptions")
    return y


def squeeze(c: Ctx, x: int) -> int:
    shape = c.shape(x)
    ones = [i for i, d in enumerate(shape) if d == 1]
    out = [d for d in shape if d != 1] or [1]
    c.words.append(f"squeeze {shape}->{out}")
    y = c.act(out, c.qof(x), "squeeze")
    c.b.op("SQUEEZE", [x], [y], "SqueezeOptions") if ones else c.b.op("RESHAPE", [x, c.ints(out, "shape")], [y])
    return y


def softmax(c: Ctx, x: int) -> int:
    beta = float(c.rng.choice([1.0, 0.5, 2.0, float(c.rng.uniform(0.05, 4.0))]))
    c.words.append(f"softmax beta{beta:.3g} {c.shape(x)}")
    y = c.act(c.shape(x), (1 / 256, -128), "softmax")
    c.b.op("SOFTMAX", [x], [y], "SoftmaxOptions", Beta=beta)
    return y


# Unary op -> its int8 output (scale, zero point) as TFLM requires, or None (drawn).
UNARY = {"LOGISTIC": (1 / 256, -128), "TANH": (1 / 128, 0), "RELU": None, "RELU6": None, "HARD_SWISH": None}


def _unary(kind: str):
    def build(c: Ctx, x: int) -> int:
        c.words.append(f"{kind.lower()} {c.shape(x)}")
        fixed = UNARY[kind]
        q = fixed or (None if c.float else c.out_q(c.qof(x), 1.0))
        if kind == "RELU6" and not c.float:
            q = c.qof(x)  # TFLM's int8 RELU6 keeps the input's quantization
        y = c.act(c.shape(x), q, kind.lower())
        c.b.op(kind, [x], [y])
        return y

    return build


def requantize(c: Ctx, x: int) -> int:
    """QUANTIZE int8 -> int8 with another scale and zero point."""
    if c.float:
        return _unary("RELU")(c, x)
    q = c.out_q(c.qof(x), 1.0)
    c.words.append(f"requantize {c.qof(x)}->{q}")
    y = c.act(c.shape(x), q, "requant")
    c.b.op("QUANTIZE", [x], [y])
    return y


def pad(c: Ctx, x: int) -> int:
    shape = c.shape(x)
    pads = [[int(v) for v in c.rng.integers(0, 3, 2)] for _ in shape]
    v2 = bool(c.rng.random() < 0.4)
    c.words.append(f"{'padv2' if v2 else 'pad'} {shape} {pads}")
    out = [d + a + b for d, (a, b) in zip(shape, pads)]
    y = c.act(out, c.qof(x), "pad")
    inputs = [x, c.ints(pads, "paddings")]
    if v2:
        if c.float:
            inputs.append(c.b.tensor(c.name("value"), [1], "float32", data=[float(c.rng.uniform(-2, 2))]))
        else:
            q = c.qof(x)
            inputs.append(
                c.b.tensor(
                    c.name("value"), [1], "int8", data=[int(c.rng.integers(-128, 128))], scale=q[0], zero_point=q[1]
                )
            )
    c.b.op("PADV2" if v2 else "PAD", inputs, [y])
    return y


def concatenation(c: Ctx, x: int) -> int:
    shape = c.shape(x)
    axis = int(c.rng.integers(0, len(shape)))
    count = int(c.rng.integers(1, 3))
    same_scale = bool(c.rng.random() < 0.75)
    parts = [x]
    for _ in range(count):
        s = list(shape)
        s[axis] = int(c.rng.integers(1, 4))
        if c.float:
            parts.append(c.b.tensor(c.name("k"), s, "float32", data=c.rng.standard_normal(s).astype(np.float32)))
        else:
            q = c.qof(x) if same_scale else c.q()
            parts.append(
                c.b.tensor(c.name("k"), s, "int8", data=c.rng.integers(-128, 128, s), scale=q[0], zero_point=q[1])
            )
    neg = bool(c.rng.random() < 0.3)
    c.words.append(f"concat axis{axis - len(shape) if neg else axis} of {len(parts)} same_scale{int(same_scale)}")
    out = list(shape)
    out[axis] = sum(c.shape(p)[axis] for p in parts)
    y = c.act(out, c.qof(x) if same_scale else None, "concat")
    order = [parts[i] for i in c.rng.permutation(len(parts))]
    c.b.op(
        "CONCATENATION",
        order,
        [y],
        "ConcatenationOptions",
        Axis=axis - len(shape) if neg else axis,
        FusedActivationFunction=0,
    )
    return y


def mean(c: Ctx, x: int) -> int:
    shape = c.shape(x)
    rank = len(shape)
    if rank == 4 and c.rng.random() < 0.5:
        axes = [1, 2]
    else:
        axes = sorted(int(a) for a in c.rng.choice(rank, int(c.rng.integers(1, rank + 1)), replace=False))
    keep = bool(c.rng.random() < 0.5)
    c.words.append(f"mean {shape} axes{axes} keep{int(keep)}")
    out = (
        [1 if i in axes else d for i, d in enumerate(shape)]
        if keep
        else [d for i, d in enumerate(shape) if i not in axes]
    )
    y = c.act(out, None if c.float or c.rng.random() < 0.5 else c.qof(x), "mean")
    c.b.op("MEAN", [x, c.ints(axes, "axes")], [y], "ReducerOptions", KeepDims=keep)
    return y


def strided_slice(c: Ctx, x: int) -> int:
    shape = c.shape(x)
    rng = c.rng
    begin, end, strides = [], [], []
    bmask = emask = smask = 0
    out = []
    for i, d in enumerate(shape):
        step = int(rng.choice([1, 1, 2, 3, -1, -2]))
        b = int(rng.integers(-d, d))
        e = int(rng.integers(-d - 1, d + 2))
        if rng.random() < 0.25:
            bmask |= 1 << i
        if rng.random() < 0.25:
            emask |= 1 << i
        shrink = rng.random() < 0.15
        if shrink:
            smask |= 1 << i
            bmask &= ~(1 << i)
            emask &= ~(1 << i)
            step = 1
            e = b + 1 if b != -1 else 0
        begin.append(b)
        end.append(e)
        strides.append(step)
        if shrink:
            continue
        s = slice(None if bmask >> i & 1 else b, None if emask >> i & 1 else e, step)
        out.append(len(range(*s.indices(d))))
    if 0 in out:
        return x  # an empty slice: left out
    c.words.append(f"strided_slice {shape} b{begin} e{end} s{strides} masks{bmask},{emask},{smask}")
    y = c.act(out or [1], c.qof(x), "slice")
    if not out:
        c.b.tensors[y] = (c.b.tensors[y][0], [], *c.b.tensors[y][2:])
    c.b.op(
        "STRIDED_SLICE",
        [x, c.ints(begin, "begin"), c.ints(end, "end"), c.ints(strides, "strides")],
        [y],
        "StridedSliceOptions",
        BeginMask=bmask,
        EndMask=emask,
        ShrinkAxisMask=smask,
    )
    return y


def transpose(c: Ctx, x: int) -> int:
    shape = c.shape(x)
    perm = [int(p) for p in c.rng.permutation(len(shape))]
    c.words.append(f"transpose {shape} {perm}")
    y = c.act([shape[p] for p in perm], c.qof(x), "transpose")
    c.b.op("TRANSPOSE", [x, c.ints(perm, "perm")], [y])
    return y


# Op class -> (builder, input rank: 4 NHWC, or None for any rank 1..4).
OPS = {
    "CONV_2D": (conv_2d, 4),
    "DEPTHWISE_CONV_2D": (depthwise_conv_2d, 4),
    "FULLY_CONNECTED": (fully_connected, None),
    "AVERAGE_POOL_2D": (_pool("AVERAGE_POOL_2D"), 4),
    "MAX_POOL_2D": (_pool("MAX_POOL_2D"), 4),
    "ADD": (_binary("ADD"), None),
    "SUB": (_binary("SUB"), None),
    "MUL": (_binary("MUL"), None),
    "RESHAPE": (reshape, None),
    "SQUEEZE": (squeeze, None),
    "SOFTMAX": (softmax, None),
    "LOGISTIC": (_unary("LOGISTIC"), None),
    "TANH": (_unary("TANH"), None),
    "RELU": (_unary("RELU"), None),
    "RELU6": (_unary("RELU6"), None),
    "HARD_SWISH": (_unary("HARD_SWISH"), None),
    "QUANTIZE": (requantize, None),
    "PAD": (pad, None),
    "CONCATENATION": (concatenation, None),
    "MEAN": (mean, None),
    "STRIDED_SLICE": (strided_slice, None),
    "TRANSPOSE": (transpose, None),
}
# Op classes a chain draws its later ops from (any rank in, rank kept or not).
CHAIN_TAIL = [k for k, (_, rank) in OPS.items() if rank is None]
# Op classes of the sweep: each op alone, and chains of 2 to 4 ops.
CLASSES = [*OPS, "CHAIN"]
# Interfaces of an int8 model: the activations' own type, uint8 or float
# behind a QUANTIZE (and QUANTIZE or DEQUANTIZE out).
INTERFACES = ("int8", "int8", "uint8", "float32")


def random_model(seed: int, op_class: str | None = None) -> Drawn:
    """The model of draw `seed`: op class `op_class` (or drawn from CLASSES)."""
    rng = np.random.default_rng(seed)
    op_class = op_class or str(rng.choice(CLASSES))
    dtype = "float32" if rng.random() < 0.2 else "int8"
    extreme = bool(rng.random() < 0.25)
    c = Ctx(seed * 7919 + 13, dtype, extreme)
    c.wide = bool(rng.random() < 0.25)
    c.converter_like = bool(rng.random() < 0.5)
    ops = [op_class] if op_class != "CHAIN" else _chain(c.rng)
    first_rank = OPS[ops[0]][1] or int(c.rng.integers(1, 5))
    shape = _first_shape(c, first_rank)
    if first_rank == 4:
        batch = int(c.rng.choice([1, 1, 1, 2]))
        channels = int(c.rng.integers(1, 5)) if not c.wide else int(c.rng.integers(5, 41))
        shape = [batch, int(c.rng.integers(3, 10)), int(c.rng.integers(3, 10)), channels]
        if ops[0] in ("CONV_2D", "DEPTHWISE_CONV_2D"):
            shape[1], shape[2] = max(shape[1], 7), max(shape[2], 7)  # room for a VALID kernel up to 4, dilation 2
    interface = "float32" if c.float else str(c.rng.choice(INTERFACES))
    x_q = c.q()
    x = c.act(shape, x_q, "x")
    inputs = [x]
    if interface == "uint8":
        u = c.b.tensor("input", shape, "uint8", scale=x_q[0] * float(c.rng.choice([1.0, 1.3])), zero_point=x_q[1] + 128)
        c.b.op("QUANTIZE", [u], [x])
        inputs = [u]
    elif interface == "float32" and not c.float:
        f = c.b.tensor("input", shape, "float32")
        c.b.op("QUANTIZE", [f], [x])
        inputs = [f]
    y = x
    for op in ops:
        if not c.shape(y):  # a scalar (a MEAN over every axis): a RESHAPE to [1] first
            y = _to_vector(c, y)
        y = OPS[op][0](c, y)
    if y == x:  # nothing drawn (an empty slice): a RELU keeps the model valid
        y = _unary("RELU")(c, x)
    outputs = [y]
    if interface == "uint8":
        q = c.qof(y)
        u = c.b.tensor("output", c.shape(y), "uint8", scale=q[0], zero_point=min(q[1] + 128, 255))
        c.b.op("QUANTIZE", [y], [u])
        outputs = [u]
    elif interface == "float32" and not c.float:
        f = c.b.tensor("output", c.shape(y), "float32")
        c.b.op("DEQUANTIZE", [y], [f])
        outputs = [f]
    text = f"{dtype} io={interface}{' extreme' if extreme else ''}: " + "; ".join(c.words)
    return Drawn(c.b.build(inputs, outputs), op_class, text)


def _to_vector(c: Ctx, x: int) -> int:
    y = c.act([1], c.qof(x), "vector")
    c.b.op("RESHAPE", [x, c.ints([1], "shape")], [y], "ReshapeOptions")
    return y


def _chain(rng) -> list:
    head = str(rng.choice(list(OPS)))
    return [head, *(str(rng.choice(CHAIN_TAIL)) for _ in range(int(rng.integers(1, 4))))]
