// Requantization as TFLite Micro does it, for a model whose source is a
// .tflite file: each output channel's real factor (x_scale * w_scale[o] /
// y_scale, in double) is a 31-bit significand `multiplier` and a power of
// two `shift` (real = multiplier * 2^(shift - 31)), computed at compile
// time by the match spec, and the int32 accumulator becomes
//
//   rounding_divide_by_pot(doubling_high_mul(acc * 2^left, multiplier), right)
//
// with left = max(shift, 0) and right = max(-shift, 0), plus the zero point,
// clamped to int8.  gemmlowp's definitions, which TFLM's reference kernels
// use:
//   doubling_high_mul(a, b): a * b * 2 / 2^32 rounded to nearest, ties up
//     (toward +infinity): (a * b + 2^30) >> 31, the one overflow
//     (a = b = INT32_MIN) saturating to INT32_MAX;
//   rounding_divide_by_pot(x, r): x / 2^r rounded to nearest, ties away
//     from zero.
// The multiplier is positive (at most 2^31 - 1), so the saturating case
// never arises.  A left shift wraps in 32 bits as TFLM's int32 product does.
//
// Compiled in by the TFLM kernels only (IREEGEN_I8_TFLM: tflm.h); the
// kernels' bodies take an ireegen_i8_scale_t per output channel.
#ifndef IREEGEN_INT8_REQUANTIZE_TFLM_H_
#define IREEGEN_INT8_REQUANTIZE_TFLM_H_

#include <stdint.h>

// One output channel's fixed-point factor, as the match spec lays out the
// table: pairs of int32 (multiplier, shift).
typedef struct {
  int32_t multiplier;
  int32_t shift;
} ireegen_i8_scale_t;

// The table argument of the entry points, and filter o's factor in it.
typedef int32_t ireegen_i8_table_t;
#define IREEGEN_I8_SCALES(table, offset) \
  ((const ireegen_i8_scale_t*)(const void*)((table) + (offset)))
#define IREEGEN_I8_NO_SCALE ((ireegen_i8_scale_t){0, 0})
#define IREEGEN_I8_TABLE_STRIDE 2
#define IREEGEN_I8_PC_ENTRY(name) name##_tflm

// (a * b + 2^30) >> 31: the 64-bit product's high word after doubling,
// rounded half up.  gcc makes it SMULL and a shift pair on Armv7-M.
static inline int32_t ireegen_i8_doubling_high_mul(int32_t a, int32_t b) {
  return (int32_t)(((int64_t)a * b + ((int64_t)1 << 30)) >> 31);
}

// x / 2^r rounded to nearest, ties away from zero (0 <= r <= 31).
static inline int32_t ireegen_i8_rounding_divide_by_pot(int32_t x, int32_t r) {
  const int32_t mask = (int32_t)(((int64_t)1 << r) - 1);
  const int32_t remainder = x & mask;
  const int32_t threshold = (mask >> 1) + (x < 0);
  return (x >> r) + (remainder > threshold);
}

static inline int8_t ireegen_i8_requantize(int32_t acc, ireegen_i8_scale_t s,
                                           int32_t y_zero) {
  int32_t v;
  if (s.shift <= 0 && (uint32_t)acc + (1u << 30) < (1u << 31)) {
    // No left shift and |acc| < 2^30, as every real layer's: t, the high
    // multiply, is then below 2^30 in magnitude, so t + 2^(r-1) cannot
    // overflow, and x / 2^r rounded half away from zero is
    // (t + 2^(r-1) - (t < 0)) >> r for r > 0 (t itself for r = 0): an add,
    // a subtract of the sign bit and a shift in place of the mask and
    // threshold.
    const int32_t r = -s.shift;
    const int32_t t = ireegen_i8_doubling_high_mul(acc, s.multiplier);
    const int32_t negative = r ? (int32_t)((uint32_t)t >> 31) : 0;
    v = (t + (int32_t)((1u << r) >> 1) - negative) >> r;
  } else {
    const int32_t left = s.shift > 0 ? s.shift : 0;
    const int32_t right = s.shift > 0 ? 0 : -s.shift;
    const int32_t scaled = (int32_t)((uint32_t)acc << left);
    v = ireegen_i8_rounding_divide_by_pot(
        ireegen_i8_doubling_high_mul(scaled, s.multiplier), right);
    // Far outside int8 either way: kept so that adding the zero point
    // cannot overflow.
    v = v < -256 ? -256 : (v > 256 ? 256 : v);
  }
  v += y_zero;
  v = v < -128 ? -128 : v;
  v = v > 127 ? 127 : v;
  return (int8_t)v;
}

#endif  // IREEGEN_INT8_REQUANTIZE_TFLM_H_
