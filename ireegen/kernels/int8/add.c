// Elementwise int8 Add of two tensors with their own scale and zero point,
// as ONNX Runtime's QLinearAdd computes it on x86 (MLAS's SSE kernel, which
// its QDQ fusion runs for DequantizeLinear -> Add -> QuantizeLinear):
//
//   ra = a_scale / y_scale, rb = b_scale / y_scale   (float divisions)
//   fixed = y_zero - fma(ra, a_zero, rb * b_zero)     (MLAS is built with FMA
//                                                     contraction there)
//   y = saturate(round_half_even((fixed + a * ra) + b * rb))
//
// Every step is one IEEE single operation, so the result is the same on a
// core with an FPU and on one without.  docs/kernels-int8.md lists where
// ONNX Runtime's other paths agree with this and where they differ.
#include "add_mve.h"
#include "ireegen_int8.h"
#include "requantize.h"

// fma(x, y, z) rounded once to float.  Hardware FMA where the core has it
// (the M4F, M7 and M33 FPUs, an x86 with FMA3); elsewhere in double: x * y is
// exact there (24 x 8 bits), and the sum rounded twice (to double, then to
// float) differs from the fused result only when the two terms lie about
// 2^29 apart and the sum falls on a float midpoint.
static float fused_multiply_add(float x, float y, float z) {
#if defined(__ARM_FEATURE_FMA) || defined(__FMA__)
  return __builtin_fmaf(x, y, z);
#else
  return (float)((double)x * (double)y + (double)z);
#endif
}

void ireegen_i8_add(const int8_t* a, size_t a_offset, const int8_t* b,
                    size_t b_offset, int8_t* y, size_t y_offset, size_t count,
                    uint32_t a_scale, int32_t a_zero, uint32_t b_scale,
                    int32_t b_zero, uint32_t y_scale, int32_t y_zero) {
  a += a_offset;
  b += b_offset;
  y += y_offset;
  const float ra = ireegen_i8_float(a_scale) / ireegen_i8_float(y_scale);
  const float rb = ireegen_i8_float(b_scale) / ireegen_i8_float(y_scale);
  const float fixed =
      (float)y_zero - fused_multiply_add(ra, (float)a_zero, rb * (float)b_zero);
#if IREEGEN_I8_MVE_FLOAT
  ireegen_i8_add_mve(a, b, y, count, fixed, ra, rb);
  return;
#endif
  for (size_t i = 0; i < count; ++i) {
    const float v = (fixed + (float)a[i] * ra) + (float)b[i] * rb;
    y[i] = ireegen_i8_round_clamp(v, 0);
  }
}
