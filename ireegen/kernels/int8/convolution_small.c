// The convolution and depthwise convolution of --optimize-for size
// (kernels.size.json): the entry points, arguments and weight layouts of
// convolution.c, in the fewest bytes.  One plain loop serves both: each
// output is its bias plus (x - x_zero) * w over the taps that lie inside
// the image, then the requantization of requantize.h, so the results equal
// convolution.c's and ONNX Runtime's bit for bit.  A depthwise convolution
// is one such convolution per channel (one input channel, one filter).  No
// int16 column, no offset table, no DSP path: a few times the instructions
// of convolution.c (docs/kernels-int8.md has the figures).
#include "ireegen_int8.h"
#include "requantize.h"

// The per-channel entry points (ireegen_int8.h once they are matched).
void ireegen_i8_convolution_per_channel(
    const int8_t* x, size_t x_offset, const int8_t* w, size_t w_offset,
    const int32_t* bias, size_t bias_offset, const float* multipliers,
    size_t multipliers_offset, int8_t* y, size_t y_offset, size_t n, size_t c,
    size_t h, size_t wd, size_t f, size_t kh, size_t kw, size_t oh, size_t ow,
    size_t stride, size_t pad_top, size_t pad_left, int32_t x_zero,
    int32_t y_zero);
void ireegen_i8_depthwise_conv_per_channel(
    const int8_t* x, size_t x_offset, const int8_t* w, size_t w_offset,
    const int32_t* bias, size_t bias_offset, const float* multipliers,
    size_t multipliers_offset, int8_t* y, size_t y_offset, size_t n, size_t c,
    size_t h, size_t wd, size_t f, size_t kh, size_t kw, size_t oh, size_t ow,
    size_t stride, size_t pad_top, size_t pad_left, int32_t x_zero,
    int32_t y_zero);

// The first tap k and one past the last for which the input index
// out * stride + k - pad lies inside [0, size).
static size_t ireegen_i8_small_first(size_t out, size_t stride, size_t pad) {
  const size_t start = out * stride;
  return start < pad ? pad - start : 0;
}

static size_t ireegen_i8_small_end(size_t out, size_t stride, size_t pad,
                                   size_t size, size_t taps) {
  const size_t end = size + pad, start = out * stride;
  return start >= end ? 0 : (end - start < taps ? end - start : taps);
}

// The convolution: output channel o's multiplier is per_channel[o], or
// `multiplier` when per_channel is NULL.  Inlined into its two entry points
// (a model calls one of them; a call passing the geometry on would cost
// about as many bytes as the loop).
static inline __attribute__((always_inline)) void ireegen_i8_small_conv(
    const int8_t* x, const int8_t* w, const int32_t* bias, int8_t* y, size_t n,
    size_t c, size_t h, size_t wd, size_t f, size_t kh, size_t kw, size_t oh,
    size_t ow, size_t stride, size_t pad_top, size_t pad_left, int32_t x_zero,
    float multiplier, const float* per_channel, int32_t y_zero) {
  for (size_t b = 0; b < n; ++b) {
    const int8_t* image = x + b * c * h * wd;
    for (size_t o = 0; o < f; ++o) {
      const int8_t* filter = w + o * c * kh * kw;
      const float m = per_channel ? per_channel[o] : multiplier;
      for (size_t oy = 0; oy < oh; ++oy) {
        const size_t ky0 = ireegen_i8_small_first(oy, stride, pad_top);
        const size_t ky1 = ireegen_i8_small_end(oy, stride, pad_top, h, kh);
        for (size_t ox = 0; ox < ow; ++ox) {
          const size_t kx0 = ireegen_i8_small_first(ox, stride, pad_left);
          const size_t kx1 = ireegen_i8_small_end(ox, stride, pad_left, wd, kw);
          int32_t acc = bias[o];
          for (size_t ci = 0; ci < c; ++ci) {
            for (size_t ky = ky0; ky < ky1; ++ky) {
              // ky >= ky0 and kx >= kx0 keep both input indices >= 0.
              const int8_t* row = image +
                                  (ci * h + oy * stride + ky - pad_top) * wd +
                                  ox * stride - pad_left;
              const int8_t* tap = filter + (ci * kh + ky) * kw;
              for (size_t kx = kx0; kx < kx1; ++kx)
                acc += ((int32_t)row[kx] - x_zero) * tap[kx];
            }
          }
          *y++ = ireegen_i8_requantize(acc, m, y_zero);
        }
      }
    }
  }
}

void ireegen_i8_convolution(const int8_t* x, size_t x_offset, const int8_t* w,
                            size_t w_offset, const int32_t* bias,
                            size_t bias_offset, int8_t* y, size_t y_offset,
                            size_t n, size_t c, size_t h, size_t wd, size_t f,
                            size_t kh, size_t kw, size_t oh, size_t ow,
                            size_t stride, size_t pad_top, size_t pad_left,
                            uint32_t x_scale, int32_t x_zero, uint32_t w_scale,
                            uint32_t y_scale, int32_t y_zero) {
  ireegen_i8_small_conv(
      x + x_offset, w + w_offset, bias + bias_offset, y + y_offset, n, c, h, wd,
      f, kh, kw, oh, ow, stride, pad_top, pad_left, x_zero,
      ireegen_i8_multiplier(x_scale, w_scale, y_scale), NULL, y_zero);
}

void ireegen_i8_convolution_per_channel(
    const int8_t* x, size_t x_offset, const int8_t* w, size_t w_offset,
    const int32_t* bias, size_t bias_offset, const float* multipliers,
    size_t multipliers_offset, int8_t* y, size_t y_offset, size_t n, size_t c,
    size_t h, size_t wd, size_t f, size_t kh, size_t kw, size_t oh, size_t ow,
    size_t stride, size_t pad_top, size_t pad_left, int32_t x_zero,
    int32_t y_zero) {
  ireegen_i8_small_conv(x + x_offset, w + w_offset, bias + bias_offset,
                        y + y_offset, n, c, h, wd, f, kh, kw, oh, ow, stride,
                        pad_top, pad_left, x_zero, 0.0f,
                        multipliers + multipliers_offset, y_zero);
}

// Plane by plane (batch b, channel ch): a convolution of one channel with
// one filter.
void ireegen_i8_depthwise_conv(
    const int8_t* x, size_t x_offset, const int8_t* w, size_t w_offset,
    const int32_t* bias, size_t bias_offset, int8_t* y, size_t y_offset,
    size_t n, size_t c, size_t h, size_t wd, size_t f, size_t kh, size_t kw,
    size_t oh, size_t ow, size_t stride, size_t pad_top, size_t pad_left,
    uint32_t x_scale, int32_t x_zero, uint32_t w_scale, uint32_t y_scale,
    int32_t y_zero) {
  (void)f;
  for (size_t p = 0; p < n * c; ++p)
    ireegen_i8_convolution(x, x_offset + p * h * wd, w,
                           w_offset + p % c * kh * kw, bias,
                           bias_offset + p % c, y, y_offset + p * oh * ow, 1, 1,
                           h, wd, 1, kh, kw, oh, ow, stride, pad_top, pad_left,
                           x_scale, x_zero, w_scale, y_scale, y_zero);
}

void ireegen_i8_depthwise_conv_per_channel(
    const int8_t* x, size_t x_offset, const int8_t* w, size_t w_offset,
    const int32_t* bias, size_t bias_offset, const float* multipliers,
    size_t multipliers_offset, int8_t* y, size_t y_offset, size_t n, size_t c,
    size_t h, size_t wd, size_t f, size_t kh, size_t kw, size_t oh, size_t ow,
    size_t stride, size_t pad_top, size_t pad_left, int32_t x_zero,
    int32_t y_zero) {
  (void)f;
  for (size_t p = 0; p < n * c; ++p)
    ireegen_i8_convolution_per_channel(
        x, x_offset + p * h * wd, w, w_offset + p % c * kh * kw, bias,
        bias_offset + p % c, multipliers, multipliers_offset + p % c, y,
        y_offset + p * oh * ow, 1, 1, h, wd, 1, kh, kw, oh, ow, stride, pad_top,
        pad_left, x_zero, y_zero);
}
