// Fully connected (Gemm transB=1) on int8 with ONNX Runtime's rounding.
#include "dot.h"
#include "ireegen_int8.h"
#include "requantize.h"

void ireegen_i8_fully_connected(const int8_t* x, size_t x_offset,
                                const int8_t* w, size_t w_offset,
                                const int32_t* bias, size_t bias_offset,
                                int8_t* y, size_t y_offset, size_t m, size_t n,
                                size_t k, uint32_t x_scale, int32_t x_zero,
                                uint32_t w_scale, uint32_t y_scale,
                                int32_t y_zero) {
  x += x_offset;
  w += w_offset;
  bias += bias_offset;
  y += y_offset;
  const float multiplier = ireegen_i8_multiplier(x_scale, w_scale, y_scale);
  if (k <= IREEGEN_I8_COLUMN_MAX) {
    // Each row of x unpacked once to int16 (x - x_zero), then dotted with
    // every row of w.
    int16_t column[IREEGEN_I8_COLUMN_MAX];
    for (size_t i = 0; i < m; ++i) {
      for (size_t c = 0; c < k; ++c)
        column[c] = (int16_t)(x[i * k + c] - x_zero);
      ireegen_i8_column_interleave(column, k);
      ireegen_i8_filters(column, w, k, n, bias, multiplier, y_zero, y + i * n,
                         1);
    }
    return;
  }
  for (size_t i = 0; i < m; ++i) {
    const int8_t* row = x + i * k;
    const int8_t* weights = w;
    for (size_t j = 0; j < n; ++j, weights += k) {
      int32_t acc = bias[j];
      for (size_t c = 0; c < k; ++c)
        acc += ((int32_t)row[c] - x_zero) * weights[c];
      y[i * n + j] = ireegen_i8_requantize(acc, multiplier, y_zero);
    }
  }
}

void ireegen_i8_fully_connected_kn(const int8_t* x, size_t x_offset,
                                   const int8_t* w, size_t w_offset,
                                   const int32_t* bias, size_t bias_offset,
                                   int8_t* y, size_t y_offset, size_t m,
                                   size_t n, size_t k, uint32_t x_scale,
                                   int32_t x_zero, uint32_t w_scale,
                                   uint32_t y_scale, int32_t y_zero) {
  x += x_offset;
  w += w_offset;
  bias += bias_offset;
  y += y_offset;
  const float multiplier = ireegen_i8_multiplier(x_scale, w_scale, y_scale);
  for (size_t i = 0; i < m; ++i) {
    const int8_t* row = x + i * k;
    size_t j = 0;
    // Four outputs at a time: each row of w gives four adjacent weights.
    for (; j + 4 <= n; j += 4) {
      int32_t a0 = bias[j], a1 = bias[j + 1], a2 = bias[j + 2],
              a3 = bias[j + 3];
      const int8_t* weights = w + j;
      for (size_t c = 0; c < k; ++c, weights += n) {
        const int32_t v = (int32_t)row[c] - x_zero;
#if IREEGEN_I8_DSP
        // (w0, w2) and (w1, w3) as 16-bit lanes; SMLABB/SMLABT multiply v
        // by one lane each.
        const uint32_t p = ireegen_i8_load32(weights);
        const uint32_t p02 = __sxtb16(p), p13 = ireegen_i8_sxtb16_ror8(p);
        a0 = __smlabb(v, p02, a0);
        a1 = __smlabb(v, p13, a1);
        a2 = __smlabt(v, p02, a2);
        a3 = __smlabt(v, p13, a3);
#else
        a0 += v * weights[0];
        a1 += v * weights[1];
        a2 += v * weights[2];
        a3 += v * weights[3];
#endif
      }
      y[i * n + j] = ireegen_i8_requantize(a0, multiplier, y_zero);
      y[i * n + j + 1] = ireegen_i8_requantize(a1, multiplier, y_zero);
      y[i * n + j + 2] = ireegen_i8_requantize(a2, multiplier, y_zero);
      y[i * n + j + 3] = ireegen_i8_requantize(a3, multiplier, y_zero);
    }
    for (; j < n; ++j) {
      int32_t acc = bias[j];
      for (size_t c = 0; c < k; ++c)
        acc += ((int32_t)row[c] - x_zero) * w[c * n + j];
      y[i * n + j] = ireegen_i8_requantize(acc, multiplier, y_zero);
    }
  }
}
