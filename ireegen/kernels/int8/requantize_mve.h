// The requantization of four int32 accumulators at once on MVE, in the
// rounding the compile chooses (requantize.h):
//
// - ONNX Runtime's, on MVE with the floating-point extension
//   (__ARM_FEATURE_MVE bit 1: the Cortex-M55): VCVT to float, VMUL by the
//   multiplier, VCVTN (round to nearest, ties to even, saturating), a
//   saturating add of the zero point and a clamp to int8, which is
//   ireegen_i8_requantize step by step: every step one IEEE single
//   operation rounded to nearest even, so the bits are the scalar path's
//   (and ONNX Runtime's).
// - TFLite Micro's (the TFLM compile, tflm.h; any MVE core), which is
//   requantize_tflm.h lane by lane: VSHL by the left shift (wrapping, as
//   the scalar shift does), VQRDMULH by the multiplier (the saturating
//   rounding doubling high multiply: (a * b + 2^30) >> 31, ties up, which is
//   gemmlowp's), then the division by 2^right rounded half away from zero.
//   VRSHL by -right rounds half up, so a negative value is first lowered by
//   one when right > 0 (a saturating add of its sign), which moves a
//   negative tie down and leaves every other quotient as it is; the
//   saturating add keeps INT32_MIN, an exact multiple of 2^right.  Then the
//   zero point added saturating and the clamp to int8, as the scalar path.
//
// A kernel names its four lanes' factors ireegen_i8_scales4_t: the float
// multipliers, or TFLM's multipliers and shifts.
#ifndef IREEGEN_INT8_REQUANTIZE_MVE_H_
#define IREEGEN_INT8_REQUANTIZE_MVE_H_

#include <stdint.h>

#include "mve.h"
#include "requantize.h"

#if IREEGEN_I8_MVE && defined(IREEGEN_I8_TFLM)
#define IREEGEN_I8_MVE_FLOAT 0
#define IREEGEN_I8_MVE_REQUANTIZE 1

// Four lanes' fixed-point factors, and the shifts split as the arithmetic
// takes them: left = max(shift, 0), right = min(shift, 0) (VRSHL's count).
typedef struct {
  int32x4_t multiplier;
  int32x4_t left;
  int32x4_t right;
} ireegen_i8_scales4_t;

static inline ireegen_i8_scales4_t ireegen_i8_scales4_split(int32x4_t m,
                                                            int32x4_t shift) {
  const int32x4_t zero = vdupq_n_s32(0);
  const ireegen_i8_scales4_t s = {m, vmaxq_s32(shift, zero),
                                  vminq_s32(shift, zero)};
  return s;
}

// The factors of channels p[0] .. p[3], one per lane (VLD2 splits the
// table's (multiplier, shift) pairs).
static inline ireegen_i8_scales4_t ireegen_i8_scales4_load(
    const ireegen_i8_scale_t* p) {
  const int32x4x2_t pairs = vld2q_s32((const int32_t*)(const void*)p);
  return ireegen_i8_scales4_split(pairs.val[0], pairs.val[1]);
}

// Lanes {0, 1} channel p[0]'s factor, {2, 3} p[1]'s (p[0]'s when `odd`).
static inline ireegen_i8_scales4_t ireegen_i8_scales4_pair(
    const ireegen_i8_scale_t* p, int odd) {
  const int32_t* words = (const int32_t*)(const void*)p;
  const uint32x4_t pair = {0, 0, 2, 2};
  const uint32x4_t lanes = odd ? vdupq_n_u32(0) : pair;
  return ireegen_i8_scales4_split(
      vldrwq_gather_shifted_offset_s32(words, lanes),
      vldrwq_gather_shifted_offset_s32(words + 1, lanes));
}

// The lanes of `acc` times their factors: TFLM's
// MultiplyByQuantizedMultiplier.
static inline int32x4_t ireegen_i8_scale4v_mve(int32x4_t acc,
                                               ireegen_i8_scales4_t s) {
  int32x4_t v = vqrdmulhq_s32(vshlq_s32(acc, s.left), s.multiplier);
  v = vqaddq_s32(v, vshrq_n_s32(vandq_s32(v, s.right), 31));
  return vrshlq_s32(v, s.right);
}

// The lanes of `acc` requantized, each in [-128, 127] (VSTRB stores their
// low bytes): the clamp a saturating shift left by 24 and back (a value
// outside [-128, 127] saturates to INT32_MIN or INT32_MAX, whose top byte
// is -128 or 127), which needs no constant registers.
static inline int32x4_t ireegen_i8_requantize4v_mve(int32x4_t acc,
                                                    ireegen_i8_scales4_t s,
                                                    int32_t y_zero) {
  const int32x4_t v = vqaddq_n_s32(ireegen_i8_scale4v_mve(acc, s), y_zero);
  return vshrq_n_s32(vqshlq_n_s32(v, 24), 24);
}

// One factor in all four lanes.
static inline ireegen_i8_scales4_t ireegen_i8_scales4_dup(
    ireegen_i8_scale_t s) {
  return ireegen_i8_scales4_split(vdupq_n_s32(s.multiplier),
                                  vdupq_n_s32(s.shift));
}

// The same with one factor for all four lanes.
static inline int32x4_t ireegen_i8_requantize4_mve(int32x4_t acc,
                                                   ireegen_i8_scale_t s,
                                                   int32_t y_zero) {
  return ireegen_i8_requantize4v_mve(acc, ireegen_i8_scales4_dup(s), y_zero);
}

#elif IREEGEN_I8_MVE && (__ARM_FEATURE_MVE & 2)
#define IREEGEN_I8_MVE_FLOAT 1
#define IREEGEN_I8_MVE_REQUANTIZE 1

typedef float32x4_t ireegen_i8_scales4_t;

// The multipliers of channels p[0] .. p[3], one per lane.
static inline ireegen_i8_scales4_t ireegen_i8_scales4_load(const float* p) {
  return vldrwq_f32(p);
}

// Lanes {0, 1} channel p[0]'s multiplier, {2, 3} p[1]'s (p[0]'s when `odd`).
static inline ireegen_i8_scales4_t ireegen_i8_scales4_pair(const float* p,
                                                           int odd) {
  const uint32x4_t pair = {0, 0, 1, 1};
  return vldrwq_gather_shifted_offset_f32(p, odd ? vdupq_n_u32(0) : pair);
}

// The lanes of `acc` requantized, each in [-128, 127] (VSTRB stores their
// low bytes).
static inline int32x4_t ireegen_i8_requantize4_mve(int32x4_t acc,
                                                   float multiplier,
                                                   int32_t y_zero) {
  const int32x4_t r = vqaddq_n_s32(
      vcvtnq_s32_f32(vmulq_n_f32(vcvtq_f32_s32(acc), multiplier)), y_zero);
  return vmaxq_s32(vminq_s32(r, vdupq_n_s32(127)), vdupq_n_s32(-128));
}

// The same with a multiplier per lane (per-channel weights: each lane's
// output channel's).
static inline int32x4_t ireegen_i8_requantize4v_mve(int32x4_t acc,
                                                    float32x4_t multipliers,
                                                    int32_t y_zero) {
  const int32x4_t r = vqaddq_n_s32(
      vcvtnq_s32_f32(vmulq_f32(vcvtq_f32_s32(acc), multipliers)), y_zero);
  return vmaxq_s32(vminq_s32(r, vdupq_n_s32(127)), vdupq_n_s32(-128));
}
#else
#define IREEGEN_I8_MVE_FLOAT 0
#define IREEGEN_I8_MVE_REQUANTIZE 0
#endif

#endif  // IREEGEN_INT8_REQUANTIZE_MVE_H_
