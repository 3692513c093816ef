// Requantization as ONNX Runtime does it (MLAS's MlasRequantizeOutput and
// the output scale of QLinearConv/QGemm): the multiplier is
// (x_scale * w_scale) / y_scale in float, the int32 accumulator is converted
// to float, multiplied, clamped to the int8 range around the zero point and
// rounded half to even.  Every step is one IEEE single operation, so a core
// with an FPU and one without (libgcc's soft float) give the same bits.
#ifndef IREEGEN_INT8_REQUANTIZE_H_
#define IREEGEN_INT8_REQUANTIZE_H_

#include <stdint.h>
#include <string.h>

static inline float ireegen_i8_float(uint32_t bits) {
  float f;
  memcpy(&f, &bits, sizeof f);
  return f;
}

// The output multiplier of one channel: as ONNX Runtime computes it.
static inline float ireegen_i8_multiplier(uint32_t x_scale, uint32_t w_scale,
                                          uint32_t y_scale) {
  return ireegen_i8_float(x_scale) * ireegen_i8_float(w_scale) /
         ireegen_i8_float(y_scale);
}

#if defined(__ARM_FEATURE_DSP) && __ARM_FEATURE_DSP && defined(__ARM_FP) && \
    (__ARM_FP & 4)
#include <arm_acle.h>

// saturate(round_half_even(v) + y_zero) to int8.
// Cores with the DSP extension and a single-precision FPU (M4F, M7, M33):
// VCVTR converts with the FPSCR's rounding, round to nearest even (the
// reset default, which C code does not change), saturating to int32; then
// a saturating add of the zero point and SSAT to 8 bits clamp.  Clamping
// after rounding equals ONNX Runtime's clamping before it, the bounds
// being integers.
static inline int8_t ireegen_i8_round_clamp(float v, int32_t y_zero) {
  float rounded;
  __asm__("vcvtr.s32.f32 %0, %1" : "=t"(rounded) : "t"(v));
  int32_t r;
  memcpy(&r, &rounded, sizeof r);
  return (int8_t)__ssat(__qadd(r, y_zero), 8);
}
#else
static inline int8_t ireegen_i8_round_clamp(float v, int32_t y_zero) {
  const float lo = (float)(-128 - y_zero);
  const float hi = (float)(127 - y_zero);
  v = v < lo ? lo : v;
  v = v > hi ? hi : v;
  // Adding 1.5 * 2^23 moves the integer part, rounded half to even, into the
  // low bits of the mantissa (|v| <= 255 here).
  v += 12582912.0f;
  uint32_t bits;
  memcpy(&bits, &v, sizeof bits);
  return (int8_t)((int32_t)(bits - 0x4B400000u) + y_zero);
}
#endif

#if defined(IREEGEN_I8_TFLM)
// The TFLM kernels' requantization instead (tflm.h).
#include "requantize_tflm.h"
#else
// A kernel body's per-channel factor: the float multiplier; the entry
// points' table is the floats.
typedef float ireegen_i8_scale_t;
typedef float ireegen_i8_table_t;
#define IREEGEN_I8_SCALES(table, offset) ((table) + (offset))
#define IREEGEN_I8_NO_SCALE 0.0f
// Table entries per output channel, and the name of a per-channel entry
// point.
#define IREEGEN_I8_TABLE_STRIDE 1
#define IREEGEN_I8_PC_ENTRY(name) name##_per_channel

static inline int8_t ireegen_i8_requantize(int32_t acc, float multiplier,
                                           int32_t y_zero) {
  return ireegen_i8_round_clamp((float)acc * multiplier, y_zero);
}
#endif

#endif  // IREEGEN_INT8_REQUANTIZE_H_
