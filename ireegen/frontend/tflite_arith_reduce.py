"""TFLite Micro's int8 SOFTMAX and MEAN, as ONNX integer ops.

SOFTMAX (last axis, output scale 1/256 and zero point -128, as TFLM
requires): each element's difference d from its row's maximum (0 .. -255)
indexes two tables of exp(beta x scale x d) computed by
`tflite_fixedpoint.softmax_exp_tables` (zero below TFLM's diff_min).  The
row's sum of the FixedPoint<12> exponentials, normalised so its top bit is
bit 31, goes through gemmlowp's 1 / (1 + x) (an initial 48/17 - 32/17 x and
three Newton-Raphson steps, each a doubling high multiply), and each
element is exp x reciprocal divided by 2^(bits over unit + 23) rounding
half away from zero, less 128, clamped to int8.

MEAN: the raw values summed over the axes in int64, less the zero point
times the count n; the multiplier of input scale / output scale absorbs
1/n as TFLM does (its significand shifted up by floor(log2 n), at most 32
bits and at most 31 + its exponent, then divided by n truncating); then
TFLM's MultiplyByQuantizedMultiplier, the output zero point and the int8
clamp.
"""

from __future__ import annotations

import numpy as np

from .tflite_arith import clamp_to, doubling_high_mul, multiply_by_quantized_multiplier, quantize_multiplier
from .tflite_fixedpoint import Unsupported, softmax_exp_tables

# Powers of two a Gather reads by exponent: 2^0 .. 2^34.
POWERS = np.left_shift(np.int64(1), np.arange(35, dtype=np.int64))
# The largest softmax row whose sum of FixedPoint<12> exponentials (each at
# most 2^19) stays below 2^31, TFLM's int32.
SOFTMAX_MAX_DEPTH = (1 << 31) // (1 << 19) - 1
INT32_LIMITS = (-(1 << 31), (1 << 31) - 1)


def _c(tr, value, hint: str) -> str:
    return tr.constant(np.asarray(value, np.int64), hint)


def _lookup(tr, table: np.ndarray, index: str, hint: str) -> str:
    """int64 `table[index]`, the table stored as int32 (its values fit)."""
    return tr.node("Cast", [tr.node("Gather", [tr.constant(table.astype(np.int32), hint), index])], to=7)


def _saturating_shift_left(tr, value: str, bits: int) -> str:
    """gemmlowp's saturating multiply by 2^bits: the product clamped to int32."""
    value = tr.node("Mul", [value, _c(tr, 1 << bits, "pot")])
    value = tr.node("Max", [value, _c(tr, INT32_LIMITS[0], "int32_min")])
    return tr.node("Min", [value, _c(tr, INT32_LIMITS[1], "int32_max")])


def _one_over_one_plus_x(tr, a: str) -> str:
    """gemmlowp's one_over_one_plus_x_for_x_in_0_1 of int64 `a` holding a
    FixedPoint<0> in [0, 1): FixedPoint<2> Newton-Raphson, then to FixedPoint<0>."""
    # RoundingHalfSum(a, One): (a + 2^31 - 1 + 1) / 2, non-negative.
    half_denominator = tr.node("Div", [tr.node("Add", [a, _c(tr, 1 << 31, "one")]), _c(tr, 2, "two")])
    x = tr.node(
        "Add", [_c(tr, 1515870810, "c48_17"), doubling_high_mul(tr, half_denominator, _c(tr, -1010580540, "c32_17"))]
    )
    for _ in range(3):
        t = tr.node("Sub", [_c(tr, 1 << 29, "one_f2"), doubling_high_mul(tr, half_denominator, x)])
        x = tr.node("Add", [x, _saturating_shift_left(tr, doubling_high_mul(tr, x, t), 2)])
    return _saturating_shift_left(tr, x, 1)


def softmax_int8(tr, x: str, depth: int, beta: float, input_scale: float) -> str:
    """TFLM's int8 SOFTMAX of int8 value `x` over its last axis (`depth` long)."""
    if depth > SOFTMAX_MAX_DEPTH:
        raise Unsupported(f"a softmax over {depth} values overflows TFLM's int32 sum (at most {SOFTMAX_MAX_DEPTH})")
    exp0, exp12 = softmax_exp_tables(beta, input_scale)
    value = tr.node("Cast", [x], to=7)
    top = tr.node("ReduceMax", [value], axes=[-1], keepdims=1)
    index = tr.node("Sub", [top, value])  # -d, 0 .. 255
    total = tr.node("ReduceSum", [_lookup(tr, exp12, index, "exp_f12"), _c(tr, [-1], "axes")], keepdims=1)
    # CountLeadingZeros of the (positive) int32 sum: 32 less its bit length.
    above = tr.node(
        "GreaterOrEqual", [tr.node("Unsqueeze", [total, _c(tr, [-1], "axes")]), _c(tr, POWERS[:32], "powers")]
    )
    bit_length = tr.node("ReduceSum", [tr.node("Cast", [above], to=7), _c(tr, [-1], "axes")], keepdims=0)
    headroom = tr.node("Sub", [_c(tr, 32, "bits"), bit_length])
    powers = _c(tr, POWERS, "powers")
    shifted = tr.node("Sub", [tr.node("Mul", [total, tr.node("Gather", [powers, headroom])]), _c(tr, 1 << 31, "one")])
    reciprocal = _one_over_one_plus_x(tr, shifted)
    product = doubling_high_mul(tr, reciprocal, _lookup(tr, exp0, index, "exp_f0"))
    # RoundingDivideByPOT of the non-negative product by e = bits over unit
    # + 31 - 8 = 35 - headroom (23 .. 34): (p + 2^(e-1)) / 2^e, both scaled by
    # 2^(34 - e) = 2^(headroom - 1), so that the divisor is the constant 2^34.
    numerator = tr.node("Add", [product, tr.node("Gather", [powers, tr.node("Sub", [_c(tr, 34, "e"), headroom])])])
    numerator = tr.node("Mul", [numerator, tr.node("Gather", [powers, tr.node("Sub", [headroom, _c(tr, 1, "one")])])])
    unsaturated = tr.node("Div", [numerator, _c(tr, 1 << 34, "divisor")])
    return clamp_to(tr, unsaturated, -128, -128, 127, "int8")


def mean_int8(tr, x: str, shape: tuple, axes: list, scales: tuple, zero_points: tuple) -> str:
    """TFLM's int8 MEAN of int8 value `x` (of `shape`) over `axes` (resolved,
    distinct), keeping the reduced axes; `scales` and `zero_points` are the
    input's and the output's."""
    count = int(np.prod([shape[a] for a in axes], dtype=np.int64))
    if count < 1:
        raise Unsupported("a mean over no values")
    multiplier, shift = quantize_multiplier(float(np.float64(scales[0]) / np.float64(scales[1])))
    bits = min(count.bit_length() - 1, 32, 31 + shift)
    multiplier = (multiplier << bits) // count
    shift -= bits
    if 255 * count * (1 << max(shift, 0)) >= 1 << 31:
        raise Unsupported(f"a mean of {count} values at this scale overflows TFLM's int32 arithmetic")
    total = tr.node("ReduceSum", [tr.node("Cast", [x], to=7), _c(tr, axes, "axes")], keepdims=1)
    centred = tr.node("Sub", [total, _c(tr, zero_points[0] * count, "zero_sum")])
    y = multiply_by_quantized_multiplier(tr, centred, multiplier, shift)
    return clamp_to(tr, y, zero_points[1], -128, 127, "int8")
