// The Add of add.c on MVE with the floating-point extension (the
// Cortex-M55), four elements at a time: each step the scalar loop's one
// IEEE single operation (VCVT, VMUL, VADD, VADD, then VCVTN: round to
// nearest, ties to even, saturating) in the same order, so the bits are the
// same; a product small enough to be flushed to zero cannot move the sum's
// rounding to an integer.
#ifndef IREEGEN_INT8_ADD_MVE_H_
#define IREEGEN_INT8_ADD_MVE_H_

#include <stddef.h>
#include <stdint.h>

#include "mve.h"
#include "requantize_mve.h"

#if IREEGEN_I8_MVE_FLOAT

// y[i] = saturate(round_half_even((fixed + a[i] * ra) + b[i] * rb)).
static inline void ireegen_i8_add_mve(const int8_t* a, const int8_t* b,
                                      int8_t* y, size_t count, float fixed,
                                      float ra, float rb) {
  const float32x4_t base = vdupq_n_f32(fixed);
  for (size_t i = 0; i < count; i += 4) {
    const mve_pred16_t p = vctp32q((uint32_t)(count - i));
    const float32x4_t va = vcvtq_f32_s32(vldrbq_z_s32(a + i, p));
    const float32x4_t vb = vcvtq_f32_s32(vldrbq_z_s32(b + i, p));
    const float32x4_t v =
        vaddq_f32(vaddq_f32(base, vmulq_n_f32(va, ra)), vmulq_n_f32(vb, rb));
    int32x4_t r = vcvtnq_s32_f32(v);
    r = vmaxq_s32(vminq_s32(r, vdupq_n_s32(127)), vdupq_n_s32(-128));
    vstrbq_p_s32(y + i, r, p);
  }
}

#endif  // IREEGEN_I8_MVE_FLOAT

#if IREEGEN_I8_MVE_REQUANTIZE && defined(IREEGEN_I8_TFLM)

// TFLite Micro's ADD (add_tflm.c) four elements at a time, each step the
// scalar loop's on four lanes (requantize_mve.h): each input less its zero
// point, shifted up by `left`, times its factor; the sum requantized by
// `so`.
static inline void ireegen_i8_add_fixed_mve(
    const int8_t* a, const int8_t* b, int8_t* y, size_t count, int32_t left,
    int32_t a_zero, ireegen_i8_scale_t sa, int32_t b_zero,
    ireegen_i8_scale_t sb, ireegen_i8_scale_t so, int32_t y_zero) {
  const ireegen_i8_scales4_t va = ireegen_i8_scales4_dup(sa);
  const ireegen_i8_scales4_t vb = ireegen_i8_scales4_dup(sb);
  const ireegen_i8_scales4_t vo = ireegen_i8_scales4_dup(so);
  for (size_t i = 0; i < count; i += 4) {
    const mve_pred16_t p = vctp32q((uint32_t)(count - i));
    const int32x4_t xa =
        vshlq_r_s32(vsubq_n_s32(vldrbq_z_s32(a + i, p), a_zero), left);
    const int32x4_t xb =
        vshlq_r_s32(vsubq_n_s32(vldrbq_z_s32(b + i, p), b_zero), left);
    const int32x4_t sum = vaddq_s32(ireegen_i8_scale4v_mve(xa, va),
                                    ireegen_i8_scale4v_mve(xb, vb));
    vstrbq_p_s32(y + i, ireegen_i8_requantize4v_mve(sum, vo, y_zero), p);
  }
}

#endif  // IREEGEN_I8_MVE_REQUANTIZE && IREEGEN_I8_TFLM

#endif  // IREEGEN_INT8_ADD_MVE_H_
