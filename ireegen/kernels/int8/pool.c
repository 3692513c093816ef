// int8 average pooling (NCHW, no padding), as ONNX Runtime's
// QLinearAveragePool and QLinearGlobalAveragePool compute it.
//
// A window covering the whole image (every MLPerf Tiny pool, and
// GlobalAveragePool): ORT falls back to MLAS's global average pool, an exact
// int32 sum then one float multiply by x_scale / (y_scale * count):
//   y = saturate(round_half_even(float(sum(x) - x_zero * count) * m) + y_zero)
// Any other window: ORT dequantizes each value (x_scale * (x - x_zero), in
// float), sums the window in float in row order, divides by the count and
// quantizes: y = saturate(round_half_even(avg / y_scale + y_zero)).
//
// The divisor is the window's size: no padding is matched, so
// count_include_pad changes nothing.
#include "ireegen_int8.h"
#include "requantize.h"

// Four bytes at a time on DSP cores, but not at -Os (kernels.size.json):
// the plain loop is 44 B smaller.
#if defined(__ARM_FEATURE_DSP) && __ARM_FEATURE_DSP && \
    !defined(__OPTIMIZE_SIZE__)
#define IREEGEN_I8_POOL_DSP 1
#include <arm_acle.h>
#else
#define IREEGEN_I8_POOL_DSP 0
#endif

// The sum of one window of int8 values, exact.
static int32_t window_sum(const int8_t* x, size_t width, size_t kh, size_t kw) {
  int32_t sum = 0;
  for (size_t i = 0; i < kh; ++i, x += width) {
    size_t j = 0;
#if IREEGEN_I8_POOL_DSP
    // Four bytes at a time: SXTB16 splits them into two pairs of halfwords,
    // SMUAD with 0x00010001 adds each pair; both pairs go to the sum.
    for (; j + 4 <= kw; j += 4) {
      uint32_t word;
      memcpy(&word, x + j, sizeof word);
      sum = __smlad(__sxtb16(word), 0x00010001u, sum);
      sum = __smlad(__sxtb16((word >> 8) | (word << 24)), 0x00010001u, sum);
    }
#endif
    for (; j < kw; ++j) sum += x[j];
  }
  return sum;
}

// A window covering the image: ORT's global path (the matcher calls this
// directly where the shapes say so, and the windowed code stays out of the
// binary).
void ireegen_i8_global_average_pool(const int8_t* x, size_t x_offset,
                                    int8_t* y, size_t y_offset, size_t n,
                                    size_t c, size_t h, size_t w, size_t kh,
                                    size_t kw, size_t oh, size_t ow,
                                    size_t stride, uint32_t x_scale,
                                    int32_t x_zero, uint32_t y_scale,
                                    int32_t y_zero) {
  (void)oh, (void)ow, (void)stride;
  x += x_offset;
  y += y_offset;
  const size_t count = kh * kw;
  const float m = ireegen_i8_float(x_scale) /
                  (ireegen_i8_float(y_scale) * (float)count);
  const int32_t bias = -x_zero * (int32_t)count;
  for (size_t p = 0; p < n * c; ++p)
    y[p] = ireegen_i8_round_clamp(
        (float)(window_sum(x + p * h * w, w, kh, kw) + bias) * m, y_zero);
}

void ireegen_i8_average_pool(const int8_t* x, size_t x_offset, int8_t* y,
                             size_t y_offset, size_t n, size_t c, size_t h,
                             size_t w, size_t kh, size_t kw, size_t oh,
                             size_t ow, size_t stride, uint32_t x_scale,
                             int32_t x_zero, uint32_t y_scale, int32_t y_zero) {
  if (kh == h && kw == w && oh == 1 && ow == 1) {
    ireegen_i8_global_average_pool(x, x_offset, y, y_offset, n, c, h, w, kh,
                                   kw, oh, ow, stride, x_scale, x_zero,
                                   y_scale, y_zero);
    return;
  }
  x += x_offset;
  y += y_offset;
  const float sx = ireegen_i8_float(x_scale);
  const float sy = ireegen_i8_float(y_scale);
  const float div = (float)(kh * kw);
  for (size_t p = 0; p < n * c; ++p) {
    const int8_t* plane = x + p * h * w;
    for (size_t i = 0; i < oh; ++i) {
      for (size_t j = 0; j < ow; ++j) {
        const int8_t* window = plane + i * stride * w + j * stride;
        float sum = 0.0f;
        for (size_t a = 0; a < kh; ++a)
          for (size_t b = 0; b < kw; ++b)
            sum += sx * (float)((int32_t)window[a * w + b] - x_zero);
        const float v = sum / div / sy + (float)y_zero;
        y[(p * oh + i) * ow + j] = ireegen_i8_round_clamp(v, 0);
      }
    }
  }
}
