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
// scalar loop's on four lanes with the factors in general registers (the
// scalar forms of VQRDMULH, VSHL, VRSHL and VMLA: no vector constants):
// each input less its zero point, shifted up by `left`, times its factor
// (its term); the two terms' sum requantized by `so`.  The division by
// 2^right rounded half away from zero is requantize_mve.h's, its negative
// fix-up a VMLA of the sign by `right > 0` (0 or 1): the product of VQRDMULH
// by a positive multiplier is above INT32_MIN, so lowering it by one cannot
// wrap.  An input's factor is at most 1/2 (add_tflm.c: its scale over twice
// the larger), so its shift is never above 0.
__attribute__((always_inline)) static inline int32x4_t ireegen_i8_add_scale_mve(
    int32x4_t v, ireegen_i8_scale_t s) {
  v = vqrdmulhq_n_s32(vshlq_r_s32(v, s.shift > 0 ? s.shift : 0), s.multiplier);
  v = vmlaq_n_s32(v, vshrq_n_s32(v, 31), s.shift < 0);
  return vrshlq_n_s32(v, s.shift < 0 ? s.shift : 0);
}

// An input's terms of four int8 values.
__attribute__((always_inline)) static inline int32x4_t ireegen_i8_add_term4_mve(
    int32x4_t x, int32_t left, int32_t zero, ireegen_i8_scale_t s) {
  // (x - zero) * 2^left as x * 2^left plus a base: |x - zero| < 2^8 and
  // left is 20, so neither wraps.
  return ireegen_i8_add_scale_mve(
      vaddq_n_s32(vshlq_r_s32(x, left), -(zero * (1 << left))), s);
}

// The sums of four lanes' terms, requantized to [-128, 127].
__attribute__((always_inline)) static inline int32x4_t ireegen_i8_add_out4_mve(
    int32x4_t sum, ireegen_i8_scale_t so, int32_t y_zero) {
  sum = vqaddq_n_s32(ireegen_i8_add_scale_mve(sum, so), y_zero);
  return vshrq_n_s32(vqshlq_n_s32(sum, 24), 24);
}

// An input's term depends on its int8 value alone: from this many elements
// on, each input's 256 terms are tabled once (64 vectors) and every element
// takes a gather (VLDRW by its value times four, from the table's middle)
// in place of its five steps.
#define IREEGEN_I8_ADD_TABLE_MIN 512

static inline void ireegen_i8_add_fixed_mve(
    const int8_t* a, const int8_t* b, int8_t* y, size_t count, int32_t left,
    int32_t a_zero, ireegen_i8_scale_t sa, int32_t b_zero,
    ireegen_i8_scale_t sb, ireegen_i8_scale_t so, int32_t y_zero) {
  if (count >= IREEGEN_I8_ADD_TABLE_MIN) {
    int32_t terms[2][256];
    int32x4_t x = {-128, -127, -126, -125};
    for (size_t k = 0; k < 256; k += 4, x = vaddq_n_s32(x, 4)) {
      vstrwq_s32(terms[0] + k, ireegen_i8_add_term4_mve(x, left, a_zero, sa));
      vstrwq_s32(terms[1] + k, ireegen_i8_add_term4_mve(x, left, b_zero, sb));
    }
    // Offsets from the middle: a negative value's wraps, and so does the
    // 32-bit address sum, to below the middle.
    const int32_t* ta = terms[0] + 128;
    const int32_t* tb = terms[1] + 128;
    for (; count >= 4; count -= 4, a += 4, b += 4, y += 4) {
      const uint32x4_t ia = vreinterpretq_u32_s32(vldrbq_s32(a));
      const uint32x4_t ib = vreinterpretq_u32_s32(vldrbq_s32(b));
      const int32x4_t sum = vaddq_s32(vldrwq_gather_shifted_offset_s32(ta, ia),
                                      vldrwq_gather_shifted_offset_s32(tb, ib));
      vstrbq_s32(y, ireegen_i8_add_out4_mve(sum, so, y_zero));
    }
  }
  for (size_t i = 0; i < count; i += 4) {
    const mve_pred16_t p = vctp32q((uint32_t)(count - i));
    const int32x4_t sum = vaddq_s32(
        ireegen_i8_add_term4_mve(vldrbq_z_s32(a + i, p), left, a_zero, sa),
        ireegen_i8_add_term4_mve(vldrbq_z_s32(b + i, p), left, b_zero, sb));
    vstrbq_p_s32(y + i, ireegen_i8_add_out4_mve(sum, so, y_zero), p);
  }
}

#endif  // IREEGEN_I8_MVE_REQUANTIZE && IREEGEN_I8_TFLM

#endif  // IREEGEN_INT8_ADD_MVE_H_
