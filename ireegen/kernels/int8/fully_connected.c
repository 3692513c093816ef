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
