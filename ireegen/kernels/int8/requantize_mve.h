// requantize.h on four int32 accumulators at once, on MVE with the
// floating-point extension (__ARM_FEATURE_MVE bit 1: the Cortex-M55):
// VCVT to float, VMUL by the multiplier, VCVTN (round to nearest, ties to
// even, saturating), a saturating add of the zero point and a clamp to
// int8, which is ireegen_i8_requantize step by step: every step one IEEE
// single operation rounded to nearest even, so the bits are the scalar
// path's (and ONNX Runtime's).
#ifndef IREEGEN_INT8_REQUANTIZE_MVE_H_
#define IREEGEN_INT8_REQUANTIZE_MVE_H_

#include <stdint.h>

#include "mve.h"

#if IREEGEN_I8_MVE && (__ARM_FEATURE_MVE & 2)
#define IREEGEN_I8_MVE_FLOAT 1

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
#endif

#endif  // IREEGEN_INT8_REQUANTIZE_MVE_H_
