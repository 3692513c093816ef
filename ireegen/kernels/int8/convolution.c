// NCHW int8 convolution and depthwise convolution with ONNX Runtime's
// rounding; the zero padding is done by skipping, not by a padded copy.
#include <string.h>

#include "convolution_mve.h"
#include "depthwise_mve.h"
#include "dot.h"
#include "ireegen_int8.h"
#include "requantize.h"

// The range [*lo, *hi) of kernel taps k for which the input row
// out * stride + k - pad lies inside [0, size).
static void ireegen_i8_taps(size_t out, size_t stride, size_t pad, size_t size,
                            size_t taps, size_t* lo, size_t* hi) {
  const size_t start = out * stride;  // input index of tap k is start + k - pad
  *lo = start < pad ? pad - start : 0;
  const size_t end = size + pad;  // tap k is inside when start + k < end
  *hi = start >= end ? 0 : (end - start < taps ? end - start : taps);
  if (*hi < *lo) *hi = *lo;
}

// The column of output pixel (oy, ox): (x - x_zero) over its receptive
// field in the weights' (c, kh, kw) order, 0 where the field lies in the
// padding, then interleaved for the dot products (dot.h).
static void ireegen_i8_fill_column(int16_t* column, const int8_t* image,
                                   size_t c, size_t h, size_t wd, size_t kh,
                                   size_t kw, size_t oy, size_t ox,
                                   size_t stride, size_t pad_top,
                                   size_t pad_left, int32_t x_zero) {
  if (kh == 1 && kw == 1 && oy * stride >= pad_top && ox * stride >= pad_left &&
      oy * stride - pad_top < h && ox * stride - pad_left < wd) {
    // A pointwise convolution: one value per channel, h * wd apart.
    const int8_t* src =
        image + (oy * stride - pad_top) * wd + (ox * stride - pad_left);
    for (size_t ci = 0; ci < c; ++ci, src += h * wd)
      column[ci] = (int16_t)(*src - x_zero);
    ireegen_i8_column_interleave(column, c);
    return;
  }
  // The taps inside the image are the same for every channel.
  size_t ky0, ky1, kx0, kx1;
  ireegen_i8_taps(oy, stride, pad_top, h, kh, &ky0, &ky1);
  ireegen_i8_taps(ox, stride, pad_left, wd, kw, &kx0, &kx1);
  const size_t length = c * kh * kw;
  if (ky0 != 0 || ky1 != kh || kx0 != 0 || kx1 != kw)
    memset(column, 0, length * sizeof column[0]);
  int16_t* col = column;
  for (size_t ci = 0; ci < c; ++ci, col += kh * kw) {
    const int8_t* plane = image + ci * h * wd;
    for (size_t ky = ky0; ky < ky1; ++ky) {
      // kx >= kx0 keeps the column index >= 0 (see the plain loop).
      const int8_t* row = plane + (oy * stride + ky - pad_top) * wd +
                          (ox * stride + kx0 - pad_left);
      int16_t* dst = col + ky * kw + kx0;
      for (size_t kx = 0; kx < kx1 - kx0; ++kx)
        dst[kx] = (int16_t)(row[kx] - x_zero);
    }
  }
  ireegen_i8_column_interleave(column, length);
}

void ireegen_i8_convolution(const int8_t* x, size_t x_offset, const int8_t* w,
                            size_t w_offset, const int32_t* bias,
                            size_t bias_offset, int8_t* y, size_t y_offset,
                            size_t n, size_t c, size_t h, size_t wd, size_t f,
                            size_t kh, size_t kw, size_t oh, size_t ow,
                            size_t stride, size_t pad_top, size_t pad_left,
                            uint32_t x_scale, int32_t x_zero, uint32_t w_scale,
                            uint32_t y_scale, int32_t y_zero) {
  x += x_offset;
  w += w_offset;
  bias += bias_offset;
  y += y_offset;
  const float multiplier = ireegen_i8_multiplier(x_scale, w_scale, y_scale);
#if IREEGEN_I8_MVE_FLOAT
  if (ireegen_i8_convolution_mve(x, w, bias, y, n, c, h, wd, f, kh, kw, oh, ow,
                                 stride, pad_top, pad_left, x_zero, multiplier,
                                 y_zero))
    return;
#endif
  const size_t length = c * kh * kw;
  if (length <= IREEGEN_I8_COLUMN_MAX) {
    // Per output pixel: its receptive field unpacked once to int16
    // (x - x_zero, 0 in the padding) in the weights' (c, kh, kw) order, then
    // dotted with every filter; two pixels at a time when they fit.
    int16_t columns[2 * IREEGEN_I8_PAIR_MAX > IREEGEN_I8_COLUMN_MAX
                        ? 2 * IREEGEN_I8_PAIR_MAX
                        : IREEGEN_I8_COLUMN_MAX];
    int16_t* second = columns + length;
    const int pairs = length <= IREEGEN_I8_PAIR_MAX;
    for (size_t b = 0; b < n; ++b) {
      const int8_t* image = x + b * c * h * wd;
      int8_t* out = y + b * f * oh * ow;
      for (size_t oy = 0; oy < oh; ++oy) {
        size_t ox = 0;
        for (; pairs && ox + 2 <= ow; ox += 2) {
          ireegen_i8_fill_column(columns, image, c, h, wd, kh, kw, oy, ox,
                                 stride, pad_top, pad_left, x_zero);
          ireegen_i8_fill_column(second, image, c, h, wd, kh, kw, oy, ox + 1,
                                 stride, pad_top, pad_left, x_zero);
          ireegen_i8_filters_pair(columns, second, w, length, f, bias,
                                  multiplier, y_zero, out + oy * ow + ox,
                                  oh * ow);
        }
        for (; ox < ow; ++ox) {
          ireegen_i8_fill_column(columns, image, c, h, wd, kh, kw, oy, ox,
                                 stride, pad_top, pad_left, x_zero);
          ireegen_i8_filters(columns, w, length, f, bias, multiplier, y_zero,
                             out + oy * ow + ox, oh * ow);
        }
      }
    }
    return;
  }
  for (size_t b = 0; b < n; ++b) {
    const int8_t* image = x + b * c * h * wd;
    for (size_t oy = 0; oy < oh; ++oy) {
      size_t ky0, ky1;
      ireegen_i8_taps(oy, stride, pad_top, h, kh, &ky0, &ky1);
      for (size_t ox = 0; ox < ow; ++ox) {
        size_t kx0, kx1;
        ireegen_i8_taps(ox, stride, pad_left, wd, kw, &kx0, &kx1);
        const int8_t* filter = w;
        for (size_t o = 0; o < f; ++o, filter += c * kh * kw) {
          int32_t acc = bias[o];
          for (size_t ci = 0; ci < c; ++ci) {
            const int8_t* plane = image + ci * h * wd;
            const int8_t* taps = filter + ci * kh * kw;
            for (size_t ky = ky0; ky < ky1; ++ky) {
              // kx >= kx0 keeps the column index ox * stride + kx - pad_left >=
              // 0.
              const int8_t* row = plane + (oy * stride + ky - pad_top) * wd +
                                  (ox * stride + kx0 - pad_left);
              const int8_t* tap = taps + ky * kw + kx0;
              for (size_t kx = 0; kx < kx1 - kx0; ++kx)
                acc += ((int32_t)row[kx] - x_zero) * tap[kx];
            }
          }
          y[((b * f + o) * oh + oy) * ow + ox] =
              ireegen_i8_requantize(acc, multiplier, y_zero);
        }
      }
    }
  }
}

// The int16 (x - x_zero) plane of one channel, padded with zeros, held at
// most this long on the stack (2.5 KiB).
#define IREEGEN_I8_PLANE_MAX 1280

// Depthwise 3x3 on one channel through its padded int16 plane: every
// output pixel is then a full 3x3 dot product, with no edge cases.
static void ireegen_i8_depthwise_plane3x3(
    const int8_t* plane, const int8_t* taps, int32_t bias, int8_t* out,
    size_t h, size_t wd, size_t oh, size_t ow, size_t stride, size_t pad_top,
    size_t pad_left, int32_t x_zero, float multiplier, int32_t y_zero) {
  const size_t hp = (oh - 1) * stride + 3,
               wp = (ow - 1) * stride + 3;  // the rows and columns read
  int16_t padded[IREEGEN_I8_PLANE_MAX];
  memset(padded, 0, hp * wp * sizeof padded[0]);
  for (size_t iy = 0; iy < h && iy + pad_top < hp; ++iy) {
    int16_t* dst = padded + (iy + pad_top) * wp + pad_left;
    const int8_t* src = plane + iy * wd;
    for (size_t ix = 0; ix < wd && ix + pad_left < wp; ++ix)
      dst[ix] = (int16_t)(src[ix] - x_zero);
  }
#if IREEGEN_I8_DSP
  uint32_t t01[3];
  for (size_t r = 0; r < 3; ++r)
    t01[r] = (uint16_t)taps[3 * r] | (uint32_t)(uint16_t)taps[3 * r + 1] << 16;
#endif
  for (size_t oy = 0; oy < oh; ++oy) {
    for (size_t ox = 0; ox < ow; ++ox) {
      const int16_t* p = padded + oy * stride * wp + ox * stride;
      int32_t acc = bias;
      for (size_t r = 0; r < 3; ++r, p += wp) {
#if IREEGEN_I8_DSP
        acc = __smlad(ireegen_i8_load32(p), t01[r], acc);
#else
        acc += p[0] * taps[3 * r] + p[1] * taps[3 * r + 1];
#endif
        acc += p[2] * taps[3 * r + 2];
      }
      out[oy * ow + ox] = ireegen_i8_requantize(acc, multiplier, y_zero);
    }
  }
}

void ireegen_i8_depthwise_conv(
    const int8_t* x, size_t x_offset, const int8_t* w, size_t w_offset,
    const int32_t* bias, size_t bias_offset, int8_t* y, size_t y_offset,
    size_t n, size_t c, size_t h, size_t wd, size_t f, size_t kh, size_t kw,
    size_t oh, size_t ow, size_t stride, size_t pad_top, size_t pad_left,
    uint32_t x_scale, int32_t x_zero, uint32_t w_scale, uint32_t y_scale,
    int32_t y_zero) {
  (void)f;
  x += x_offset;
  w += w_offset;
  bias += bias_offset;
  y += y_offset;
  const float multiplier = ireegen_i8_multiplier(x_scale, w_scale, y_scale);
#if IREEGEN_I8_MVE_FLOAT
  if (ireegen_i8_depthwise_conv_mve(x, w, bias, y, n, c, h, wd, kh, kw, oh, ow,
                                    stride, pad_top, pad_left, x_zero,
                                    multiplier, y_zero))
    return;
#endif
  const int is3x3 = kh == 3 && kw == 3;
  for (size_t b = 0; b < n; ++b) {
    for (size_t ch = 0; ch < c; ++ch) {
      const int8_t* plane = x + (b * c + ch) * h * wd;
      const int8_t* taps = w + ch * kh * kw;
      int8_t* out = y + (b * c + ch) * oh * ow;
      if (is3x3 && ((oh - 1) * stride + 3) * ((ow - 1) * stride + 3) <=
                       IREEGEN_I8_PLANE_MAX) {
        ireegen_i8_depthwise_plane3x3(plane, taps, bias[ch], out, h, wd, oh, ow,
                                      stride, pad_top, pad_left, x_zero,
                                      multiplier, y_zero);
        continue;
      }
      // Inside the image, sum (x - x_zero) * t = sum x * t - x_zero * sum t.
      int32_t tap_sum = 0;
      for (size_t i = 0; i < kh * kw; ++i) tap_sum += taps[i];
      const int32_t inner_bias = bias[ch] - x_zero * tap_sum;
#if IREEGEN_I8_DSP
      // Each row of three taps as two lane pairs: (t0, t2) and (t1, 0).
      uint32_t t02[3] = {0, 0, 0}, t1[3] = {0, 0, 0};
      if (is3x3) {
        for (size_t r = 0; r < 3; ++r) {
          t02[r] = (uint16_t)taps[3 * r] | (uint32_t)(uint16_t)taps[3 * r + 2]
                                               << 16;
          t1[r] = (uint16_t)taps[3 * r + 1];
        }
      }
#endif
      for (size_t oy = 0; oy < oh; ++oy) {
        size_t ky0, ky1;
        ireegen_i8_taps(oy, stride, pad_top, h, kh, &ky0, &ky1);
        for (size_t ox = 0; ox < ow; ++ox) {
          size_t kx0, kx1;
          ireegen_i8_taps(ox, stride, pad_left, wd, kw, &kx0, &kx1);
          if (is3x3 && ky1 - ky0 == 3 && kx1 - kx0 == 3) {
            // All nine taps inside the image.
            const size_t ix = ox * stride - pad_left;
            const int8_t* r0 = plane + (oy * stride - pad_top) * wd + ix;
            int32_t acc = inner_bias;
#if IREEGEN_I8_DSP
            if (ix + 4 <= wd) {  // a 32-bit load stays inside the row
              for (size_t r = 0; r < 3; ++r) {
                const uint32_t v = ireegen_i8_load32(r0 + r * wd);
                acc = __smlad(__sxtb16(v), t02[r], acc);
                acc = __smlad(ireegen_i8_sxtb16_ror8(v), t1[r], acc);
              }
              out[oy * ow + ox] =
                  ireegen_i8_requantize(acc, multiplier, y_zero);
              continue;
            }
#endif
            for (size_t r = 0; r < 3; ++r) {
              const int8_t* row = r0 + r * wd;
              const int8_t* tap = taps + 3 * r;
              acc += row[0] * tap[0] + row[1] * tap[1] + row[2] * tap[2];
            }
            out[oy * ow + ox] = ireegen_i8_requantize(acc, multiplier, y_zero);
            continue;
          }
          int32_t acc = bias[ch];
          for (size_t ky = ky0; ky < ky1; ++ky) {
            const int8_t* row = plane + (oy * stride + ky - pad_top) * wd +
                                (ox * stride + kx0 - pad_left);
            const int8_t* tap = taps + ky * kw + kx0;
            for (size_t kx = 0; kx < kx1 - kx0; ++kx)
              acc += ((int32_t)row[kx] - x_zero) * tap[kx];
          }
          out[oy * ow + ox] = ireegen_i8_requantize(acc, multiplier, y_zero);
        }
      }
    }
  }
}
