// TFLite Micro's int8 ADD of two tensors of one shape, for a .tflite source
// (the TFLM twin of add.c): each input less its zero point, shifted up 20
// bits, rescaled to twice the larger input scale, summed, and rescaled to the
// output, every rescaling requantize_tflm.h's.  The three factors are TFLM's,
// derived per call from the float scales in double as TFLM does (soft float
// on a core without a double-precision FPU: three divisions per call).  On
// MVE cores the elements go four at a time (add_mve.h).
// tflm.h first: it renames the static functions.
// clang-format off
#include "tflm.h"
// clang-format on

#include <string.h>

#include "add_mve.h"
#include "ireegen_int8.h"
#include "requantize.h"

#define IREEGEN_I8_ADD_LEFT_SHIFT 20

// TFLM's QuantizeMultiplier of a positive double: frexp's significand,
// rounded half away from zero to 31 bits (2^31 halves, the exponent grows),
// and (0, 0) below 2^-31.
static ireegen_i8_scale_t ireegen_i8_tflm_factor(double real) {
  uint64_t bits;
  memcpy(&bits, &real, sizeof bits);
  const int32_t biased = (int32_t)((bits >> 52) & 2047);
  const ireegen_i8_scale_t zero = {0, 0};
  if (biased == 0) return zero;  // 0 or subnormal: below 2^-31
  const uint64_t significand = (bits & ((1ull << 52) - 1)) | (1ull << 52);
  int64_t q = (int64_t)((significand + (1ull << 21)) >> 22);
  int32_t shift = biased - 1022;
  if (q == (int64_t)1 << 31) {
    q >>= 1;
    ++shift;
  }
  if (shift < -31) return zero;
  const ireegen_i8_scale_t s = {(int32_t)q, shift};
  return s;
}

// An input's term: (x - zero) * 2^20 rescaled by `s` (shift <= 0: the
// factor is at most 1/2).
static inline int32_t ireegen_i8_add_term(int8_t x, int32_t zero,
                                          ireegen_i8_scale_t s) {
  const int32_t shifted =
      ((int32_t)x - zero) * (1 << IREEGEN_I8_ADD_LEFT_SHIFT);
  return ireegen_i8_rounding_divide_by_pot(
      ireegen_i8_doubling_high_mul(shifted, s.multiplier), -s.shift);
}

void ireegen_i8_add_tflm(const int8_t* a, size_t a_offset, const int8_t* b,
                         size_t b_offset, int8_t* y, size_t y_offset,
                         size_t count, uint32_t a_scale, int32_t a_zero,
                         uint32_t b_scale, int32_t b_zero, uint32_t y_scale,
                         int32_t y_zero) {
  a += a_offset;
  b += b_offset;
  y += y_offset;
  const float fa = ireegen_i8_float(a_scale), fb = ireegen_i8_float(b_scale);
  const double twice = 2.0 * (double)(fa > fb ? fa : fb);
  const ireegen_i8_scale_t sa = ireegen_i8_tflm_factor((double)fa / twice);
  const ireegen_i8_scale_t sb = ireegen_i8_tflm_factor((double)fb / twice);
  const ireegen_i8_scale_t so =
      ireegen_i8_tflm_factor(twice / ((double)(1 << IREEGEN_I8_ADD_LEFT_SHIFT) *
                                      (double)ireegen_i8_float(y_scale)));
#if IREEGEN_I8_MVE_REQUANTIZE
  ireegen_i8_add_fixed_mve(a, b, y, count, IREEGEN_I8_ADD_LEFT_SHIFT, a_zero,
                           sa, b_zero, sb, so, y_zero);
  return;
#endif
  for (size_t i = 0; i < count; ++i) {
    const int32_t sum = ireegen_i8_add_term(a[i], a_zero, sa) +
                        ireegen_i8_add_term(b[i], b_zero, sb);
    y[i] = ireegen_i8_requantize(sum, so, y_zero);
  }
}
