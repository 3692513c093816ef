// int8 Softmax over the last axis, as ONNX Runtime's QLinearSoftmax
// computes it (the operator its QDQ fusion runs for DequantizeLinear ->
// Softmax -> QuantizeLinear):
//
//   shift = max(0, log(FLT_MAX / d) - 5) / x_scale        (double)
//   e[j]  = (float)exp((x[j] - max(x) + shift) * x_scale)  (double exp)
//   sum   = e[0] + e[1] + ... in float, in order
//   y[j]  = saturate(round_half_even(e[j] * floor(1 / y_scale) / sum) + y_zero)
//
// The input's zero point cancels (only x - max(x) matters).  ORT builds a
// table of the 256 possible e values; this computes each e where the row
// needs it.
//
// Without double arithmetic or the C library's exp and log (on a core
// without a double FPU they take about 5 KB of flash): since shift * x_scale
// is log(F) - 5 with F = FLT_MAX / d in float, e for x - max(x) = -k is
// F * exp(-(5 + k * x_scale)), and that exp is computed in 64-bit fixed
// point (softmax_exp below) to about 2^-50, then rounded once to float.  ORT's
// own argument carries a rounding error of about 2^-45 (it is a double near
// 80), so the two floats can differ only where e lies that close to the
// midpoint between two floats (none of the 10.24 M entries the test
// checks), and then by one float ulp, which moves a quantized output only if
// that lands on a rounding boundary too.
//
// Matched by compile/int8_match_softmax.py.  It can differ from IREE's
// float softmax by one quantization step, as ORT does; emit's verification
// allows one step on a quantized output (docs/kernels-int8.md).
#include <float.h>

#include "ireegen_int8.h"
#include "requantize.h"

// 1/i! in Q62, truncated, i = 0..9: the Taylor coefficients of exp(-v) for
// v = r / 16 < ln 2 / 16 (the first term left out, v^10 / 10!, is below 2^-66).
static const uint64_t kInverseFactorials[10] = {
    0x4000000000000000u, 0x4000000000000000u, 0x2000000000000000u,
    0x0AAAAAAAAAAAAAAAu, 0x02AAAAAAAAAAAAAAu, 0x0088888888888888u,
    0x0016C16C16C16C16u, 0x0003403403403403u, 0x0000680680680680u,
    0x00000B8EF1D2AB63u,
};
// ln 2 and 1 / ln 2 in fixed point, truncated: n ln 2 never exceeds u below.
#define LN2_Q55 0x0058B90BFBE8E7BCu
#define INV_LN2_Q31 0xB8AA3B29u

// (a * b) >> 62 for a, b <= 2^62, from four 32x32 -> 64 multiplies.
static uint64_t mul_q62(uint64_t a, uint64_t b) {
  const uint64_t a1 = a >> 32, a0 = (uint32_t)a, b1 = b >> 32, b0 = (uint32_t)b;
  const uint64_t a1b0 = a1 * b0, a0b1 = a0 * b1;
  const uint64_t mid = ((a0 * b0) >> 32) + (uint32_t)a1b0 + (uint32_t)a0b1;
  const uint64_t high = a1 * b1 + (a1b0 >> 32) + (a0b1 >> 32) + (mid >> 32);
  return (high << 2) | ((uint32_t)mid >> 30);
}

// m * 2^exponent rounded to float, half to even; m > 0.  A result below
// the smallest normal float gives 0: an e that small (F * exp(-u) < 2^-126,
// against a sum of at least F * exp(-5) > 2^88) moves no output, not even
// with the largest float as floor(1 / y_scale).
static float round_to_float(uint64_t m, int exponent) {
  while (!(m >> 63)) {
    m <<= 1;
    --exponent;
  }
  const int biased = exponent + 63 + 127;  // of a float with mantissa m / 2^63
  if (biased < 1) return 0.0f;
  // The top 24 bits, rounded on the 40 below them; a mantissa that rounds up
  // to 2^24 carries into the exponent field by itself.
  const uint64_t rest = m & ((UINT64_C(1) << 40) - 1), half = UINT64_C(1) << 39;
  uint32_t kept = (uint32_t)(m >> 40);
  if (rest > half || (rest == half && (kept & 1))) ++kept;
  return ireegen_i8_float(((uint32_t)(biased - 1) << 23) + kept);
}

// F * exp(-(5 + k * x_scale)), rounded once to float: e for x - max(x) = -k.
// scale is x_scale * 2^55 (see scale_q55) and f_bits the bits of F.
static float softmax_exp(uint32_t k, uint64_t scale, uint32_t f_bits) {
  // u = 5 + k * x_scale in Q55.  e underflows to 0 long before u = 200:
  // F * exp(-200) < 2^128 * 2^-288 is below every float.
  if (k * (uint32_t)(scale >> 55) >= 195) return 0.0f;
  const uint64_t u = ((uint64_t)5 << 55) + k * scale;  // below 450 * 2^55
  if (u >= (uint64_t)200 << 55) return 0.0f;
  // u = n ln 2 + r, 0 <= r < ln 2: n from u * (1 / ln 2), then corrected.
  uint32_t n = (uint32_t)(((u >> 31) * INV_LN2_Q31) >> 55);
  uint64_t r = u - n * LN2_Q55;
  while (r >= LN2_Q55) {
    r -= LN2_Q55;
    ++n;
  }
  // exp(-r / 16) in Q62 by Horner (every partial sum of the alternating
  // series is positive and at most 1), squared four times.
  const uint64_t v = r << 3;  // r / 16 in Q62
  uint64_t p = kInverseFactorials[9];
  for (int i = 8; i >= 0; --i) p = kInverseFactorials[i] - mul_q62(v, p);
  for (int i = 0; i < 4; ++i) p = mul_q62(p, p);
  // F * exp(-r) * 2^-n: F's 24-bit mantissa times p, its top 64 bits.
  const uint64_t f_mantissa = (f_bits & 0x7FFFFFu) | 0x800000u;
  const int f_exponent = (int)((f_bits >> 23) & 0xFF) - 150;
  const uint64_t top = (f_mantissa * (p >> 32) << 8) + ((f_mantissa * (uint32_t)p) >> 24);
  return round_to_float(top, f_exponent + 24 - 62 - (int)n);
}

// x_scale * 2^55, truncated; all ones from 2^9 up, where any k > 0
// underflows (k * 511 >= 195 in softmax_exp).
static uint64_t scale_q55(uint32_t scale_bits) {
  const uint64_t mantissa = (scale_bits & 0x7FFFFFu) | 0x800000u;
  const int shift = (int)((scale_bits >> 23) & 0xFF) - 150 + 55;  // x_scale = mantissa * 2^(shift - 55)
  if (shift > 40) return UINT64_MAX;
  return shift >= 0 ? mantissa << shift : shift > -24 ? mantissa >> -shift : 0;
}

void ireegen_i8_softmax(const int8_t* x, size_t x_offset, int8_t* y,
                        size_t y_offset, size_t rows, size_t d,
                        uint32_t x_scale, uint32_t y_scale, int32_t y_zero) {
  x += x_offset;
  y += y_offset;
  if (d == 0) return;
  // log(F) - 5 > 0, so ORT's max(0, .) is the first term, for any d below
  // 10^36.
  const float f = FLT_MAX / (float)d;
  const uint64_t scale = scale_q55(x_scale);
  uint32_t f_bits;
  memcpy(&f_bits, &f, sizeof f_bits);
  // floor(1 / y_scale): a float from 2^23 up is already whole.
  const float inverse = 1.0f / ireegen_i8_float(y_scale);
  const float y_range = inverse < 8388608.0f ? (float)(int32_t)inverse : inverse;
  // Each e twice, in the sum and in the output: no table on the stack, and
  // a row's exps cost a few hundred instructions each next to the model.
  for (size_t r = 0; r < rows; ++r, x += d, y += d) {
    int32_t max = -128;
    for (size_t j = 0; j < d; ++j) max = x[j] > max ? x[j] : max;
    float sum = 0.0f;
    for (size_t j = 0; j < d; ++j)
      sum += softmax_exp((uint32_t)(max - x[j]), scale, f_bits);
    for (size_t j = 0; j < d; ++j) {
      const float e = softmax_exp((uint32_t)(max - x[j]), scale, f_bits);
      y[j] = ireegen_i8_round_clamp(e * y_range / sum, y_zero);
    }
  }
}
