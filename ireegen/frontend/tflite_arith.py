"""TFLite Micro's integer arithmetic, as ONNX integer ops.

TFLM's int8 kernels requantize an int32 accumulator with a fixed-point
multiplier: the real factor (input scale x filter scale / output scale, in
double) becomes a 31-bit significand M and a power-of-two shift
(`quantize_multiplier`), and the value is

    rounding_divide_by_pot(doubling_high_mul(acc << left, M), right)

where doubling_high_mul(a, b) is (a*b + nudge) / 2^31 truncated toward
zero with nudge 2^30 (1 - 2^30 for a negative product), and
rounding_divide_by_pot(x, r) divides by 2^r rounding half away from zero.
Both are sign(v) * floor((|v| + c) / 2^k) for a non-negative numerator, which
`requantize` writes with int64 Abs, Add, Mul, a division of the
non-negative numerator by the constant 2^31 (where truncation and floor
agree), Neg and Where.  A float QDQ graph rounds once,
half to even, so it differs from TFLM in about one element in fifty; this
form is bit-exact.

The output is then offset by the zero point and clamped to the activation
range TFLM computes (`activation_range`: the fused activation's bounds
quantized with round-half-away-from-zero, within the type's range).
"""

from __future__ import annotations

import math

import numpy as np

INT64_HALF = 1 << 30
Q31 = 1 << 31


def round_away(x: float) -> int:
    """TFLite's rounding: half away from zero."""
    return int(math.copysign(math.floor(abs(x) + 0.5), x))


def quantize_multiplier(real: float) -> tuple:
    """(significand, shift) with real = significand * 2^(shift - 31), as TFLM
    derives them; a factor below 2^-31 flushes to (0, 0)."""
    if real == 0.0:
        return 0, 0
    q, shift = math.frexp(real)
    fixed = round_away(q * Q31)
    if fixed == Q31:
        fixed //= 2
        shift += 1
    if shift < -31:
        return 0, 0
    return fixed, shift


def multipliers(reals) -> tuple:
    """(significands, left shifts, right shifts), int64 arrays, of each real factor."""
    pairs = [quantize_multiplier(float(r)) for r in np.ravel(reals)]
    m = np.array([p[0] for p in pairs], np.int64)
    left = np.array([max(p[1], 0) for p in pairs], np.int64)
    right = np.array([max(-p[1], 0) for p in pairs], np.int64)
    return m, left, right


def activation_range(code: int, scale: float, zero_point: int, dtype: str) -> tuple:
    """(low, high) quantized bounds of fused activation `code` (NONE, RELU,
    RELU_N1_TO_1, RELU6) for an output of `scale`, `zero_point`, `dtype`."""
    info = np.iinfo(dtype)
    low, high = int(info.min), int(info.max)

    def q(v):
        return zero_point + round_away(float(np.float32(v) / np.float32(scale)))

    bounds = {0: (None, None), 1: (0.0, None), 2: (-1.0, 1.0), 3: (0.0, 6.0)}[code]
    if bounds[0] is not None:
        low = max(low, q(bounds[0]))
    if bounds[1] is not None:
        high = min(high, q(bounds[1]))
    return low, high


def _rounded_shift(tr, value: str, add, bits) -> str:
    """sign(value) * floor((|value| + add) / 2^bits) for int64 `value`;
    `add` is an int64 array or a value name, `bits` (at most 31) an int64
    array.  The numerator is not negative, so truncation and floor agree;
    a per-channel `bits` scales it up by 2^(31 - bits) first, so that every
    division is by the one constant 2^31 (a shift once compiled, where a
    per-channel divisor would be a 64-bit division per element)."""
    negative = tr.node("Less", [value, tr.constant(np.int64(0), "zero")])
    magnitude = tr.node("Abs", [value])
    add_name = add if isinstance(add, str) else tr.constant(np.asarray(add, np.int64), "nudge")
    numerator = tr.node("Add", [magnitude, add_name])
    bits = np.asarray(bits, np.int64)
    if np.any(bits != 31):
        up = tr.constant(np.left_shift(np.int64(1), 31 - bits).astype(np.int64), "scale_up")
        numerator = tr.node("Mul", [numerator, up])
    quotient = tr.node("Div", [numerator, tr.constant(np.int64(Q31), "q31")])
    return tr.node("Where", [negative, tr.node("Neg", [quotient]), quotient])


def requantize(tr, acc: str, reals, channel_shape: tuple) -> str:
    """The int64 value of TFLM's MultiplyByQuantizedMultiplier of int64 `acc`
    by each real factor in `reals` (one, or one per channel, shaped to
    broadcast as `channel_shape`)."""
    m, left, right = multipliers(reals)
    shape = channel_shape if m.size > 1 else ()

    def c(a, hint):
        return tr.constant(np.asarray(a, np.int64).reshape(shape), hint)

    if np.any(left):
        acc = tr.node("Mul", [acc, c(np.left_shift(np.int64(1), left), "left_shift")])
    product = tr.node("Mul", [acc, c(m, "multiplier")])
    # doubling_high_mul: the nudge is 2^30, less one for a negative product.
    negative = tr.node("Cast", [tr.node("Less", [product, tr.constant(np.int64(0), "zero")])], to=7)
    nudge = tr.node("Sub", [tr.constant(np.int64(INT64_HALF), "half"), negative])
    high = _rounded_shift(tr, product, nudge, np.int64(31))
    if not np.any(right):
        return high
    half = np.where(right > 0, np.left_shift(np.int64(1), np.maximum(right - 1, 0)), 0)
    return _rounded_shift(tr, high, c(half, "round_half"), right.reshape(shape))


def clamp_to(tr, value: str, zero_point: int, low: int, high: int, dtype: str) -> str:
    """int64 `value` plus `zero_point`, clamped to [low, high], as `dtype`."""
    onnx_type = {"int8": 3, "uint8": 2}[dtype]
    value = tr.node("Add", [value, tr.constant(np.int64(zero_point), "zero_point")])
    value = tr.node("Max", [value, tr.constant(np.int64(low), "low")])
    value = tr.node("Min", [value, tr.constant(np.int64(high), "high")])
    return tr.node("Cast", [value], to=onnx_type)


def doubling_high_mul(tr, a: str, b: str) -> str:
    """gemmlowp's SaturatingRoundingDoublingHighMul of int64 values `a`, `b`
    holding int32s: (a*b + nudge) / 2^31 truncated toward zero, the nudge
    2^30 (2^30 - 1 for a negative product).  The saturating case (both
    INT32_MIN) is the callers' to rule out."""
    product = tr.node("Mul", [a, b])
    negative = tr.node("Cast", [tr.node("Less", [product, tr.constant(np.int64(0), "zero")])], to=7)
    nudge = tr.node("Sub", [tr.constant(np.int64(INT64_HALF), "half"), negative])
    return _rounded_shift(tr, product, nudge, np.int64(31))


def multiply_by_quantized_multiplier(tr, acc: str, multiplier: int, shift: int) -> str:
    """TFLM's MultiplyByQuantizedMultiplier of int64 `acc` by one fixed-point
    (multiplier, shift) pair given as such (not derived from a real factor)."""
    if shift > 0:
        acc = tr.node("Mul", [acc, tr.constant(np.int64(1 << shift), "left_shift")])
    high = doubling_high_mul(tr, acc, tr.constant(np.int64(multiplier), "multiplier"))
    if shift >= 0:
        return high
    return _rounded_shift(tr, high, np.int64(1 << (-shift - 1)), np.int64(-shift))


def affine_quantize(tr, x: str, scale: float, zero_point: int, dtype: str) -> str:
    """TFLM's QUANTIZE of float32 `x`: x / scale in float32, rounded half
    away from zero (floor(|v|) plus one where its fraction is at least a
    half: both exact in float32, where |v| + 0.5 would round), plus the zero
    point, clamped to `dtype`."""
    v = tr.node("Div", [x, tr.constant(np.float32(scale), "scale")])
    v = tr.node("Clip", [v, tr.constant(np.float32(-(2.0**31)), "low"), tr.constant(np.float32(2.0**31 - 256), "high")])
    magnitude = tr.node("Abs", [v])
    whole = tr.node("Floor", [magnitude])
    half_up = tr.node("GreaterOrEqual", [tr.node("Sub", [magnitude, whole]), tr.constant(np.float32(0.5), "half")])
    rounded = tr.node("Add", [whole, tr.node("Cast", [half_up], to=1)])
    negative = tr.node("Less", [v, tr.constant(np.float32(0), "zero")])
    signed = tr.node("Cast", [tr.node("Where", [negative, tr.node("Neg", [rounded]), rounded])], to=7)
    info = np.iinfo(dtype)
    return clamp_to(tr, signed, zero_point, int(info.min), int(info.max), dtype)
