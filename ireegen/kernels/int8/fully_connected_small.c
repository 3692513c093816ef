// The fully connected kernel of --optimize-for size (kernels.size.json):
// the entry points, arguments and packed weight layout of
// fully_connected.c (ireegen_int8.h), in the fewest bytes.  One plain loop:
// each output is its bias plus (x - x_zero) * w over the row, each weight
// read where the packing put it, then the requantization of requantize.h,
// so the results equal fully_connected.c's and ONNX Runtime's bit for bit.
#include "ireegen_int8.h"
#include "requantize.h"

// acc + (x - x_zero) . row over k inputs, the row's weights in chunks of
// four, `gap` bytes between chunks.  A function of its own, so that the
// loop keeps its values in registers.
static __attribute__((noinline)) int32_t ireegen_i8_small_dot_packed(
    const int8_t* x, const int8_t* row, size_t k, size_t gap, int32_t x_zero,
    int32_t acc) {
  for (size_t c = 0; c < k; ++c) {
    acc += ((int32_t)x[c] - x_zero) * *row++;
    if (c % 4 == 3) row += gap;  // the next chunk
  }
  return acc;
}

// Output j's multiplier is per_channel[j], or `multiplier` when per_channel
// is NULL.  Inlined into its two entry points (a model calls one of them).
static inline __attribute__((always_inline)) void ireegen_i8_small_fc(
    const int8_t* x, const int8_t* w, const int32_t* bias, int8_t* y, size_t m,
    size_t n, size_t k, int32_t x_zero, ireegen_i8_scale_t multiplier,
    const ireegen_i8_scale_t* per_channel, int32_t y_zero) {
  const size_t k4 = (k + 3) & ~(size_t)3;
  const size_t groups = n & ~(size_t)3;  // rows packed in groups of four
  for (size_t i = 0; i < m; ++i, x += k) {
    for (size_t j = 0; j < n; ++j) {
      // Row j's weights: in a group, four rows' chunks of four interleave
      // (12 bytes of the other rows between two chunks of this one); a last
      // row is in order.
      const int8_t* row = w + j * k4;
      size_t gap = 0;
      if (j < groups) row = w + (j & ~(size_t)3) * k4 + (j & 3) * 4, gap = 12;
      const int32_t acc =
          ireegen_i8_small_dot_packed(x, row, k, gap, x_zero, bias[j]);
      *y++ = ireegen_i8_requantize(
          acc, per_channel ? per_channel[j] : multiplier, y_zero);
    }
  }
}

// The per-tensor entry points: ONNX Runtime's rounding only.
#ifndef IREEGEN_I8_TFLM
void ireegen_i8_fully_connected(const int8_t* x, size_t x_offset,
                                const int8_t* w, size_t w_offset,
                                const int32_t* bias, size_t bias_offset,
                                int8_t* y, size_t y_offset, size_t m, size_t n,
                                size_t k, uint32_t x_scale, int32_t x_zero,
                                uint32_t w_scale, uint32_t y_scale,
                                int32_t y_zero) {
  ireegen_i8_small_fc(
      x + x_offset, w + w_offset, bias + bias_offset, y + y_offset, m, n, k,
      x_zero, ireegen_i8_multiplier(x_scale, w_scale, y_scale), NULL, y_zero);
}
#endif

void IREEGEN_I8_PC_ENTRY(ireegen_i8_fully_connected)(
    const int8_t* x, size_t x_offset, const int8_t* w, size_t w_offset,
    const int32_t* bias, size_t bias_offset,
    const ireegen_i8_table_t* multipliers, size_t multipliers_offset, int8_t* y,
    size_t y_offset, size_t m, size_t n, size_t k, int32_t x_zero,
    int32_t y_zero) {
  ireegen_i8_small_fc(x + x_offset, w + w_offset, bias + bias_offset,
                      y + y_offset, m, n, k, x_zero, IREEGEN_I8_NO_SCALE,
                      IREEGEN_I8_SCALES(multipliers, multipliers_offset),
                      y_zero);
}
