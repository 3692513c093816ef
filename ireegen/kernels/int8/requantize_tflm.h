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
// rounded half up.  gcc makes it SMLAL onto 2^30 and a shift pair on
// Armv7-M.
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

#if defined(__ARM_FEATURE_DSP) && __ARM_FEATURE_DSP
#include <arm_acle.h>

// The zero point added saturating (QADD) and the clamp to int8 (SSAT).
static inline int8_t ireegen_i8_offset_clamp(int32_t v, int32_t y_zero) {
  return (int8_t)__ssat(__qadd(v, y_zero), 8);
}
#else
static inline int8_t ireegen_i8_offset_clamp(int32_t v, int32_t y_zero) {
  int64_t w = (int64_t)v + y_zero;
  w = w < -128 ? -128 : w;
  w = w > 127 ? 127 : w;
  return (int8_t)w;
}
#endif

// The same value in one rounding step, for a right shift (shift < 0, so
// 1 <= right <= 31) and |acc| < 2^30.  With s = 1 for a negative acc, else
// 0, the division's ties-away rounding is floor((x + 2^(right-1) - s) /
// 2^right) (s may be taken from acc: where acc < 0 and x = 0 both give 0),
// and the nested floors of the two steps merge into one:
//
//   floor((2 * acc * multiplier + 2^31 + 2^32 * (2^(right-1) - s)) / 2^32)
//     >> right,
//
// whose inner floor is SMMLAR (the high word of Ra * 2^32 + Rn * Rm +
// 2^31) of 2 * acc, which fits 32 bits, the multiplier and 2^(right-1) - s.
static inline int32_t ireegen_i8_smmlar(int32_t a, int32_t b, int32_t c) {
#if defined(__ARM_FEATURE_DSP) && __ARM_FEATURE_DSP
  int32_t r;
  __asm__("smmlar %0, %1, %2, %3" : "=r"(r) : "r"(a), "r"(b), "r"(c));
  return r;
#else
  return (int32_t)((((int64_t)c << 32) + (int64_t)a * b + ((int64_t)1 << 31)) >>
                   32);
#endif
}

static inline int8_t ireegen_i8_requantize(int32_t acc, ireegen_i8_scale_t s,
                                           int32_t y_zero) {
  const int32_t left = s.shift > 0 ? s.shift : 0;
  const int32_t right = s.shift > 0 ? 0 : -s.shift;
  const int32_t scaled = (int32_t)((uint32_t)acc << left);
  return ireegen_i8_offset_clamp(
      ireegen_i8_rounding_divide_by_pot(
          ireegen_i8_doubling_high_mul(scaled, s.multiplier), right),
      y_zero);
}

// The same value in one rounding step for any accumulator, for a right
// shift of 2 to 31: the numerator above, acc * multiplier + 2^30 + 2^31 *
// (2^(right-1) - s), is the 64-bit product plus a constant whose high word
// is 2^(right-2) - s and whose low word is 2^30 + 2^31 * s (SMLAL onto
// them), and the division by 2^(31+right) is its high word shifted right by
// right - 1.
static inline int32_t ireegen_i8_scale_wide(int32_t acc, ireegen_i8_scale_t s) {
  const uint32_t lo =
      UINT32_C(0x40000000) | ((uint32_t)acc & UINT32_C(0x80000000));
  const int32_t hi = (int32_t)(UINT32_C(1) << (-s.shift - 2)) + (acc >> 31);
  const int64_t n = (int64_t)(((uint64_t)(uint32_t)hi << 32) | lo) +
                    (int64_t)acc * s.multiplier;
  return (int32_t)(n >> 32) >> (-s.shift - 1);
}

// The one-step forms alone, for a layer that ireegen_i8_fast_layer() has
// checked once (`fast`: its answer): 2, SMMLAR, every accumulator within
// 2^30 and every shift from -31 to -1; 1, SMLAL, every shift from -31 to
// -2.  A channel whose multiplier is 0 (TFLM's for a factor below 2^-31,
// with any shift) gives 0 either way.
static inline int8_t ireegen_i8_requantize_fast(int32_t acc,
                                                ireegen_i8_scale_t s,
                                                int32_t y_zero, int fast) {
  if (s.multiplier == 0) return ireegen_i8_offset_clamp(0, y_zero);
  if (fast == 1)
    return ireegen_i8_offset_clamp(ireegen_i8_scale_wide(acc, s), y_zero);
  const int32_t half = (int32_t)(UINT32_C(0x40000000) >> (31 + s.shift));
  return ireegen_i8_offset_clamp(
      ireegen_i8_smmlar((int32_t)((uint32_t)acc << 1), s.multiplier,
                        half + (acc >> 31)) >>
          -s.shift,
      y_zero);
}

// Which one-step form a layer of f channels, `length` products each, may
// take (ireegen_i8_requantize_fast), or 0: the channels whose multiplier is
// not 0 need a right shift of at most 31, and for 2 a bound on their
// accumulators bias[o] + sum (x - x_zero) * w (|x - x_zero| <= 128 +
// |x_zero|, |w| <= 128) below 2^30, for 1 a right shift of at least 2.
// Trained models have channels past the bound (VWW: a bias of 2^30).
static inline int ireegen_i8_fast_layer(const int32_t* bias,
                                        const ireegen_i8_scale_t* scales,
                                        size_t f, size_t length,
                                        int32_t x_zero) {
  const int64_t limit = (int64_t)1 << 30;
  int bounded =
      x_zero >= -128 && x_zero <= 127 && length <= (size_t)(limit >> 15);
  const int64_t products =
      bounded ? (int64_t)(128 + (x_zero < 0 ? -x_zero : x_zero)) * 128 *
                    (int64_t)length
              : 0;
  int wide = 1;
  for (size_t o = 0; o < f; ++o) {
    const ireegen_i8_scale_t s = scales[o];
    if (s.multiplier == 0) continue;
    if (s.shift >= 0 || s.shift < -31) return 0;
    if (s.shift == -1) wide = 0;
    const int64_t b = bias[o] < 0 ? -(int64_t)bias[o] : (int64_t)bias[o];
    if (b + products >= limit) bounded = 0;
  }
  return bounded ? 2 : wide;
}

// A kernel's requantization where a checked layer (fast) takes the one-step
// form: `fast` is a constant of each inlined copy of the kernel's loop.
#define IREEGEN_I8_REQUANTIZE_IN(acc, s, y_zero, fast)       \
  ((fast) ? ireegen_i8_requantize_fast(acc, s, y_zero, fast) \
          : ireegen_i8_requantize(acc, s, y_zero))
#define IREEGEN_I8_FAST_LAYER(bias, per_channel, f, length, x_zero) \
  ireegen_i8_fast_layer(bias, per_channel, f, length, x_zero)

#endif  // IREEGEN_INT8_REQUANTIZE_TFLM_H_
