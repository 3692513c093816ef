// The convolution and depthwise convolution of --optimize-for size
// (kernels.size.json): the entry points, arguments and weight layouts of
// convolution.c, in the fewest bytes.  One plain loop serves both: each
// output is its bias plus (x - x_zero) * w over the taps that lie inside
// the image, then the requantization of requantize.h, so the results equal
// convolution.c's and ONNX Runtime's bit for bit.  A depthwise convolution
// is one such convolution per channel (one input channel, one filter).  No
// pair column, no offset table, no DSP path, no special cases: more
// instructions than convolution.c (docs/kernels-int8.md has the figures).
#include "ireegen_int8.h"
#include "requantize.h"

// The longest stretch of a pixel's column kept on the stack (2 KiB, as
// convolution.c's column); a longer column is gathered in stretches of this
// length, again for every filter.
#define IREEGEN_I8_SMALL_COLUMN 1024

// column[i] = x - x_zero at tap t = first + i of one output pixel's
// receptive field, in the weights' (c, kh, kw) order, or 0 where the tap
// lies in the padding, for i < count.  iy0 and ix0 are the input row and
// column of the pixel's top-left tap, wrapped past SIZE_MAX when it lies
// in the top or left padding: iy0 + ky is then below h only inside.
static __attribute__((noinline)) void ireegen_i8_small_gather(
    int16_t* column, const int8_t* image, size_t first, size_t count, size_t h,
    size_t wd, size_t kh, size_t kw, size_t iy0, size_t ix0, int32_t x_zero) {
  const size_t taps = kh * kw;
  for (size_t t = first; t < first + count; ++t) {
    const size_t iy = iy0 + t % taps / kw, ix = ix0 + t % kw;
    *column++ = iy < h && ix < wd
                    ? (int16_t)(image[(t / taps * h + iy) * wd + ix] - x_zero)
                    : 0;
  }
}

// acc + column . w over count entries.  A function of its own, so that the
// loop keeps its values in registers.
static __attribute__((noinline)) int32_t ireegen_i8_small_dot(
    const int16_t* column, const int8_t* w, size_t count, int32_t acc) {
  for (size_t i = 0; i < count; ++i) acc += column[i] * w[i];
  return acc;
}

// The convolution: output channel o's multiplier is per_channel[o], or
// `multiplier` when per_channel is NULL.  Pixel by pixel: its column
// (ireegen_i8_small_gather), then one dot product per filter.  Inlined into
// its two entry points (a model calls one of them; a call passing the
// geometry on would cost about as many bytes as the loop).
static inline __attribute__((always_inline)) void ireegen_i8_small_conv(
    const int8_t* x, const int8_t* w, const int32_t* bias, int8_t* y, size_t n,
    size_t c, size_t h, size_t wd, size_t f, size_t kh, size_t kw, size_t oh,
    size_t ow, size_t stride, size_t pad_top, size_t pad_left, int32_t x_zero,
    ireegen_i8_scale_t multiplier, const ireegen_i8_scale_t* per_channel,
    int32_t y_zero) {
  const size_t length = c * kh * kw, pixels = oh * ow;
  const size_t stretch =
      length < IREEGEN_I8_SMALL_COLUMN ? length : IREEGEN_I8_SMALL_COLUMN;
  int16_t column[IREEGEN_I8_SMALL_COLUMN];
  for (size_t b = 0; b < n; ++b) {
    const int8_t* image = x + b * c * h * wd;
    int8_t* out = y + b * f * pixels;
    for (size_t p = 0; p < pixels; ++p) {
      const size_t iy0 = p / ow * stride - pad_top;
      const size_t ix0 = p % ow * stride - pad_left;
      for (size_t o = 0; o < f; ++o) {
        int32_t acc = bias[o];
        for (size_t first = 0; first < length; first += stretch) {
          const size_t count =
              length - first < stretch ? length - first : stretch;
          if (o == 0 || stretch < length)
            ireegen_i8_small_gather(column, image, first, count, h, wd, kh, kw,
                                    iy0, ix0, x_zero);
          acc =
              ireegen_i8_small_dot(column, w + o * length + first, count, acc);
        }
        out[o * pixels + p] = ireegen_i8_requantize(
            acc, per_channel ? per_channel[o] : multiplier, y_zero);
      }
    }
  }
}

// The per-tensor entry points: ONNX Runtime's rounding only.
#ifndef IREEGEN_I8_TFLM
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
#endif

void IREEGEN_I8_PC_ENTRY(ireegen_i8_convolution)(
    const int8_t* x, size_t x_offset, const int8_t* w, size_t w_offset,
    const int32_t* bias, size_t bias_offset,
    const ireegen_i8_table_t* multipliers, size_t multipliers_offset, int8_t* y,
    size_t y_offset, size_t n, size_t c, size_t h, size_t wd, size_t f,
    size_t kh, size_t kw, size_t oh, size_t ow, size_t stride, size_t pad_top,
    size_t pad_left, int32_t x_zero, int32_t y_zero) {
  ireegen_i8_small_conv(
      x + x_offset, w + w_offset, bias + bias_offset, y + y_offset, n, c, h, wd,
      f, kh, kw, oh, ow, stride, pad_top, pad_left, x_zero, IREEGEN_I8_NO_SCALE,
      IREEGEN_I8_SCALES(multipliers, multipliers_offset), y_zero);
}

// Plane by plane (batch b, channel ch): a convolution of one channel with
// one filter.
#ifndef IREEGEN_I8_TFLM
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
#endif

void IREEGEN_I8_PC_ENTRY(ireegen_i8_depthwise_conv)(
    const int8_t* x, size_t x_offset, const int8_t* w, size_t w_offset,
    const int32_t* bias, size_t bias_offset,
    const ireegen_i8_table_t* multipliers, size_t multipliers_offset, int8_t* y,
    size_t y_offset, size_t n, size_t c, size_t h, size_t wd, size_t f,
    size_t kh, size_t kw, size_t oh, size_t ow, size_t stride, size_t pad_top,
    size_t pad_left, int32_t x_zero, int32_t y_zero) {
  (void)f;
  for (size_t p = 0; p < n * c; ++p)
    IREEGEN_I8_PC_ENTRY(ireegen_i8_convolution)
    (x, x_offset + p * h * wd, w, w_offset + p % c * kh * kw, bias,
     bias_offset + p % c, multipliers,
     multipliers_offset + p % c * IREEGEN_I8_TABLE_STRIDE, y,
     y_offset + p * oh * ow, 1, 1, h, wd, 1, kh, kw, oh, ow, stride, pad_top,
     pad_left, x_zero, y_zero);
}
