"""TFLite Micro's fixed-point activations, computed in Python integers.

TFLM's int8 LOGISTIC, TANH, HARD_SWISH and SOFTMAX are written in the
fixed-point arithmetic of gemmlowp (`FixedPoint<int32, IntegerBits>`: a raw
int32 with 31 - IntegerBits fractional bits).  Each elementwise op (and
RELU's requantization) maps one int8 input to one int8 output, so its whole
behaviour is a 256-entry table: the `*_table` functions compute it by
running the same integer steps on each of the 256 inputs, and the
translation looks the input up (an int8 Gather).  SOFTMAX's exponentials depend only on the
difference between an element and its row's maximum (at most 255 steps), so
they are tables too; its reciprocal of the row's sum is written as integer
ONNX ops by the translation, with `one_over_one_plus_x` here as its model.

The primitives, as gemmlowp defines them (values are int32 unless said):
- srdhm(a, b): (a*b + nudge) / 2^31 truncated toward zero, the nudge 2^30
  (1 - 2^30 for a negative product); INT32_MIN squared saturates to INT32_MAX;
- rdbp(x, e): x / 2^e rounded half away from zero;
- a saturating multiply by 2^e clamps to the int32 range.
"""

from __future__ import annotations

import math

import numpy as np

from .tflite_arith import quantize_multiplier, round_away

INT32_MIN, INT32_MAX = -(1 << 31), (1 << 31) - 1
INT16_MIN, INT16_MAX = -(1 << 15), (1 << 15) - 1


def wrap32(v: int) -> int:
    """`v` as the int32 two's-complement arithmetic of C leaves it."""
    return (v + (1 << 31)) % (1 << 32) - (1 << 31)


def srdhm(a: int, b: int, bits: int = 32) -> int:
    """SaturatingRoundingDoublingHighMul of two `bits`-bit integers."""
    low = -(1 << (bits - 1))
    if a == b == low:
        return -low - 1
    ab = a * b
    nudge = 1 << (bits - 2) if ab >= 0 else 1 - (1 << (bits - 2))
    return _trunc_div(ab + nudge, 1 << (bits - 1))


def _trunc_div(n: int, d: int) -> int:
    q = abs(n) // d
    return q if n >= 0 else -q


def rdbp(x: int, exponent: int) -> int:
    """RoundingDivideByPOT: x / 2^exponent, half away from zero."""
    mask = (1 << exponent) - 1
    remainder = x & mask
    threshold = (mask >> 1) + (1 if x < 0 else 0)
    return (x >> exponent) + (1 if remainder > threshold else 0)


def saturating_mul_pot(x: int, exponent: int) -> int:
    """SaturatingRoundingMultiplyByPOT<exponent> of an int32."""
    if exponent == 0:
        return x
    if exponent < 0:
        return rdbp(x, -exponent)
    threshold = (1 << (31 - exponent)) - 1
    if x > threshold:
        return INT32_MAX
    if x < -threshold:
        return INT32_MIN
    return x << exponent


def rescale(x: int, src_bits: int, dst_bits: int) -> int:
    """Rescale<dst_bits> of a FixedPoint<int32, src_bits>."""
    return saturating_mul_pot(x, src_bits - dst_bits)


def one(integer_bits: int) -> int:
    return INT32_MAX if integer_bits == 0 else 1 << (31 - integer_bits)


def rounding_half_sum(a: int, b: int) -> int:
    s = a + b
    return _trunc_div(s + (1 if s >= 0 else -1), 2)


def _exp_on_quarter_interval(a: int) -> int:
    """exp(a) for FixedPoint<0> a in [-1/4, 0): exp(-1/8) times a Taylor
    series in a + 1/8."""
    constant_term = 1895147668
    one_third = 715827883
    x = wrap32(a + (1 << 28))
    x2 = srdhm(x, x)
    x3 = srdhm(x2, x)
    x4 = srdhm(x2, x2)
    x4_over_4 = saturating_mul_pot(x4, -2)
    poly = saturating_mul_pot(wrap32(srdhm(wrap32(x4_over_4 + x3), one_third) + x2), -1)
    # AddSaturatingIf16Bit is a plain add for int32.
    return wrap32(constant_term + srdhm(constant_term, wrap32(x + poly)))


# exp(-2^k) as FixedPoint<0>, k = -2 .. 4: the barrel shifter's factors.
EXP_BARREL = {-2: 1672461947, -1: 1302514674, 0: 790015084, 1: 290630308, 2: 39332535, 3: 720401, 4: 242}


def exp_on_negative_values(a: int, integer_bits: int) -> int:
    """exp(a) as FixedPoint<0> of FixedPoint<integer_bits> a <= 0."""
    fractional = 31 - integer_bits
    quarter = 1 << (fractional - 2)
    mask = quarter - 1
    a_mod = wrap32((a & mask) - quarter)
    result = _exp_on_quarter_interval(rescale(a_mod, integer_bits, 0))
    remainder = wrap32(a_mod - a)
    for exponent, factor in EXP_BARREL.items():
        if integer_bits > exponent and remainder & (1 << (fractional + exponent)):
            result = srdhm(result, factor)
    if integer_bits > 5 and a < -(1 << (36 - integer_bits)):
        result = 0
    return INT32_MAX if a == 0 else result


def _newton_reciprocal(a: int) -> int:
    """x ~ 1 / (1 + a) as FixedPoint<2>, for FixedPoint<0> a in [0, 1):
    48/17 - 32/17 d, then three Newton-Raphson steps, d = (1 + a) / 2."""
    half_denominator = rounding_half_sum(a, INT32_MAX)
    x = wrap32(1515870810 + srdhm(half_denominator, -1010580540))
    for _ in range(3):
        t = wrap32(one(2) - srdhm(half_denominator, x))
        x = wrap32(x + rescale(srdhm(x, t), 4, 2))
    return x


def one_over_one_plus_x(a: int) -> int:
    """1 / (1 + a) as FixedPoint<0> of FixedPoint<0> a in [0, 1)."""
    return rescale(_newton_reciprocal(a), 1, 0)


def one_minus_x_over_one_plus_x(a: int) -> int:
    """(1 - a) / (1 + a) as FixedPoint<0> of FixedPoint<0> a in [0, 1)."""
    return rescale(wrap32(_newton_reciprocal(a) - one(2)), 2, 0)


def logistic_fp(a: int, integer_bits: int) -> int:
    """gemmlowp's logistic of FixedPoint<integer_bits> a, as FixedPoint<0>."""
    if a == 0:
        return 1 << 30
    positive = one_over_one_plus_x(exp_on_negative_values(wrap32(-abs(a)), integer_bits))
    return positive if a > 0 else wrap32(INT32_MAX - positive)


def tanh_fp(a: int, integer_bits: int) -> int:
    """gemmlowp's tanh of FixedPoint<integer_bits> a, as FixedPoint<0>."""
    if a == 0:
        return 0
    n = a if a < 0 else wrap32(-a)
    # neg_tanh_on_negative_values: exp(2n) reads the raw n with one more integer bit.
    t = one_minus_x_over_one_plus_x(exp_on_negative_values(n, integer_bits + 1))
    return wrap32(-t) if a < 0 else t


def mbqm(x: int, multiplier: int, shift: int) -> int:
    """MultiplyByQuantizedMultiplier of an int32 (TFLM's double rounding)."""
    left, right = max(shift, 0), max(-shift, 0)
    return rdbp(srdhm(wrap32(x * (1 << left)), multiplier), right)


class Unsupported(ValueError):
    """Quantization parameters TFLM's kernel cannot take (its own arithmetic overflows)."""


INPUT_INTEGER_BITS = 4  # LOGISTIC and TANH read their int8 input as FixedPoint<int32, 4>


def _sigmoid_tanh_params(input_scale: float) -> tuple:
    """(multiplier, left shift, radius) of TFLM's int8 LOGISTIC and TANH."""
    real = float(np.float32(input_scale)) * float(1 << (31 - INPUT_INTEGER_BITS))
    q, shift = math.frexp(real)
    multiplier = round_away(q * (1 << 31))
    if shift > 30:
        # The radius (below) is 0: TFLM saturates every input, the
        # fixed-point path (whose shift would overflow) never runs.
        return 0, shift, 0
    if shift < 0 or multiplier >= 1 << 31:
        raise Unsupported(f"input scale {input_scale} is outside what TFLM's kernel computes in 32 bits")
    radius = math.floor(((1 << INPUT_INTEGER_BITS) - 1) * float(1 << (31 - INPUT_INTEGER_BITS)) / float(1 << shift))
    return multiplier, shift, radius


def _int8_table(fn) -> np.ndarray:
    return np.array([fn(v) for v in range(-128, 128)], np.int8)


def _saturating_table(input_scale: float, input_zero_point: int, fixed_point, output_shift: int, offset: int):
    """TFLM's int8 LOGISTIC or TANH of each int8 input: saturated outside
    the radius, else `fixed_point` of the rescaled input, divided by
    2^output_shift rounding, plus `offset`, clamped to int8."""
    multiplier, shift, radius = _sigmoid_tanh_params(input_scale)

    def f(v):
        x = v - input_zero_point
        if x <= -radius:
            return -128
        if x >= radius:
            return 127
        q0 = fixed_point(mbqm(x, multiplier, shift), INPUT_INTEGER_BITS)
        return min(max(rdbp(q0, output_shift) + offset, -128), 127)

    return _int8_table(f)


def logistic_table(input_scale: float, input_zero_point: int) -> np.ndarray:
    """TFLM's int8 LOGISTIC of each int8 input -128 .. 127 (output scale
    1/256, zero point -128, as TFLM requires and assumes)."""
    return _saturating_table(input_scale, input_zero_point, logistic_fp, 23, -128)


def tanh_table(input_scale: float, input_zero_point: int) -> np.ndarray:
    """TFLM's int8 TANH of each int8 input (output scale 1/128, zero point
    0, which TFLM assumes without reading the output's parameters)."""
    return _saturating_table(input_scale, input_zero_point, tanh_fp, 24, 0)


def _int16_multiplier(fixed: int) -> int:
    """DownScaleInt32ToInt16Multiplier."""
    if fixed >= INT32_MAX - (1 << 15):
        return INT16_MAX
    return (fixed + (1 << 15)) >> 16


def _wrap16(v: int) -> int:
    return (v + (1 << 15)) % (1 << 16) - (1 << 15)


def _saturating_left_shift16(v: int, amount: int) -> int:
    return min(max(v * (1 << amount), INT16_MIN), INT16_MAX)


def _doubling_high_mul16(a: int, b: int) -> int:
    """HARD_SWISH's non-rounding SaturatingDoublingHighMul of int16s."""
    if a == b == INT16_MIN:
        return INT16_MAX
    return _wrap16(_trunc_div(a * b, 1 << 15))


def hard_swish_table(input_scale: float, input_zero_point: int, output_scale: float, output_zero_point: int):
    """TFLM's int8 HARD_SWISH of each int8 input: x * relu6(x + 3) / 6 in
    int16 fixed point, its multipliers derived from float32 scales."""
    f32 = np.float32
    hires_scale = f32(1.0 / 128.0) * f32(input_scale)
    out_m, out_e = quantize_multiplier(float(hires_scale / f32(output_scale)))
    relu_m, relu_e = quantize_multiplier(float(hires_scale / f32(3.0 / 32768.0)))
    if out_e > 0:
        raise Unsupported("its output scale is less than 1/128 of its input scale, which TFLM's kernel refuses")
    out_m16, relu_m16 = _int16_multiplier(out_m), _int16_multiplier(relu_m)

    def f(v):
        x = _wrap16(v - input_zero_point)
        hires = _wrap16(x * (1 << 7))
        preshift = srdhm(hires, out_m16, 16)
        reluish = hires
        if relu_e > 0:
            reluish = _saturating_left_shift16(reluish, relu_e - 1)
        reluish = srdhm(reluish, relu_m16, 16)
        if relu_e > 0:
            reluish = _saturating_left_shift16(reluish, 1)
        if relu_e < 0:
            reluish = rdbp(reluish, -relu_e)
        reluish = _wrap16((reluish + (1 << 15)) >> 1)
        out = rdbp(_doubling_high_mul16(reluish, preshift), -out_e)
        out = _wrap16(out + output_zero_point)
        return min(max(out, -128), 127)

    return _int8_table(f)


SOFTMAX_DIFF_BITS = 5  # SOFTMAX scales an input difference to FixedPoint<int32, 5>
SOFTMAX_SUM_BITS = 12  # and sums the exponentials as FixedPoint<int32, 12>


def softmax_params(beta: float, input_scale: float) -> tuple:
    """(multiplier, left shift, diff_min) of TFLM's int8 SOFTMAX."""
    real = min(
        float(beta) * float(np.float32(input_scale)) * float(1 << (31 - SOFTMAX_DIFF_BITS)), float((1 << 31) - 1)
    )
    # QuantizeMultiplierGreaterThanOne.
    multiplier, shift = quantize_multiplier(real)
    if not 0 <= shift <= 30:
        raise Unsupported(f"beta x input scale {beta * input_scale:g} is outside what TFLM's kernel computes")
    radius = math.floor(((1 << SOFTMAX_DIFF_BITS) - 1) * float(1 << (31 - SOFTMAX_DIFF_BITS)) / float(1 << shift))
    return multiplier, shift, -radius


def softmax_exp_tables(beta: float, input_scale: float) -> tuple:
    """(exp as FixedPoint<0>, exp as FixedPoint<12>) of each input
    difference d = 0, -1, .., -255 from the row's maximum, indexed by -d;
    zero below diff_min, where TFLM leaves an element out of the sum and
    writes -128."""
    multiplier, shift, diff_min = softmax_params(beta, input_scale)
    exp0, exp12 = [], []
    for d in range(0, -256, -1):
        if d < diff_min:
            exp0.append(0)
            exp12.append(0)
            continue
        e = exp_on_negative_values(srdhm(wrap32(d * (1 << shift)), multiplier), SOFTMAX_DIFF_BITS)
        exp0.append(e)
        exp12.append(rescale(e, 0, SOFTMAX_SUM_BITS))
    return np.array(exp0, np.int64), np.array(exp12, np.int64)


def softmax_reference(row: np.ndarray, beta: float, input_scale: float) -> np.ndarray:
    """TFLM's int8 SOFTMAX of one int8 row, in Python integers (the tests'
    model of what the translation writes as ONNX)."""
    exp0, exp12 = softmax_exp_tables(beta, input_scale)
    top = int(row.max())
    total = sum(int(exp12[top - int(v)]) for v in row)
    headroom = 32 - wrap32(total).bit_length() if total > 0 else 32
    bits_over_unit = SOFTMAX_SUM_BITS - headroom
    scale = one_over_one_plus_x(wrap32((total << headroom) - (1 << 31)))
    out = []
    for v in row:
        unsat = rdbp(srdhm(scale, int(exp0[top - int(v)])), bits_over_unit + 23)
        out.append(min(max(unsat - 128, -128), 127))
    return np.array(out, np.int8)


def relu_table(input_scale: float, input_zero_point: int, output_scale: float, output_zero_point: int):
    """TFLM's int8 RELU of each int8 input: the input less its zero point
    requantized by float32 input scale / output scale, plus the output zero
    point, clamped to [max(-128, output zero point), 127]."""
    multiplier, shift = quantize_multiplier(float(np.float32(input_scale) / np.float32(output_scale)))
    low = max(-128, output_zero_point)
    return _int8_table(lambda v: min(max(output_zero_point + mbqm(v - input_zero_point, multiplier, shift), low), 127))
