// Convolution on MVE (Helium: the Cortex-M55): convolution.c's loops (a
// column of (x - x_zero) per output pixel in the weights' (c, kh, kw) order,
// two pixels at a time, dotted with every filter by dot_mve.h), with the
// column gathered eight values at a time: the offsets of a pixel's receptive
// field from its first value are the same for every pixel, so they are
// tabled once per call, and a pixel whose field lies inside the image takes
// one VLDRB.S16 gather, one subtract and one store per eight values.  A
// pixel whose field reaches into the padding is filled value by value.
#ifndef IREEGEN_INT8_CONVOLUTION_MVE_H_
#define IREEGEN_INT8_CONVOLUTION_MVE_H_

#include <stddef.h>
#include <stdint.h>

#include "dot.h"
#include "mve.h"

#if IREEGEN_I8_MVE

// The column of output pixel (oy, ox) at `column` (length c * kh * kw).
static inline void ireegen_i8_gather_column(
    int16_t* column, const int8_t* image, const uint16_t* offsets,
    size_t length, size_t c, size_t h, size_t wd, size_t kh, size_t kw,
    size_t oy, size_t ox, size_t stride, size_t pad_top, size_t pad_left,
    int32_t x_zero) {
  const ptrdiff_t iy0 = (ptrdiff_t)(oy * stride) - (ptrdiff_t)pad_top;
  const ptrdiff_t ix0 = (ptrdiff_t)(ox * stride) - (ptrdiff_t)pad_left;
  if (iy0 >= 0 && ix0 >= 0 && (size_t)iy0 + kh <= h && (size_t)ix0 + kw <= wd) {
    const int8_t* origin = image + (size_t)iy0 * wd + (size_t)ix0;
    size_t e = 0;
    for (; e + 8 <= length; e += 8) {
      const int16x8_t v =
          vldrbq_gather_offset_s16(origin, vldrhq_u16(offsets + e));
      vstrhq_s16(column + e, vsubq_n_s16(v, (int16_t)x_zero));
    }
    if (e < length) {
      const mve_pred16_t p = vctp16q((uint32_t)(length - e));
      const int16x8_t v =
          vldrbq_gather_offset_z_s16(origin, vldrhq_z_u16(offsets + e, p), p);
      vstrhq_p_s16(column + e, vsubq_n_s16(v, (int16_t)x_zero), p);
    }
    return;
  }
  for (size_t ci = 0; ci < c; ++ci) {
    const int8_t* plane = image + ci * h * wd;
    for (size_t ky = 0; ky < kh; ++ky) {
      const ptrdiff_t iy = iy0 + (ptrdiff_t)ky;
      for (size_t kx = 0; kx < kw; ++kx, ++column) {
        const ptrdiff_t ix = ix0 + (ptrdiff_t)kx;
        *column = iy >= 0 && iy < (ptrdiff_t)h && ix >= 0 && ix < (ptrdiff_t)wd
                      ? (int16_t)(plane[(size_t)iy * wd + (size_t)ix] - x_zero)
                      : 0;
      }
    }
  }
}

// ireegen_i8_convolution (convolution.c) on MVE, pointers already offset; 0
// when a column does not fit IREEGEN_I8_PAIR_MAX or a field spans more than
// 16-bit offsets reach (the caller's loops then do it).
static inline int ireegen_i8_convolution_mve(
    const int8_t* x, const int8_t* w, const int32_t* bias, int8_t* y, size_t n,
    size_t c, size_t h, size_t wd, size_t f, size_t kh, size_t kw, size_t oh,
    size_t ow, size_t stride, size_t pad_top, size_t pad_left, int32_t x_zero,
    float multiplier, int32_t y_zero) {
  const size_t length = c * kh * kw;
  if (length > IREEGEN_I8_PAIR_MAX ||
      (c - 1) * h * wd + (kh - 1) * wd + (kw - 1) > UINT16_MAX)
    return 0;
  uint16_t offsets[IREEGEN_I8_PAIR_MAX];
  size_t e = 0;
  for (size_t ci = 0; ci < c; ++ci)
    for (size_t ky = 0; ky < kh; ++ky)
      for (size_t kx = 0; kx < kw; ++kx)
        offsets[e++] = (uint16_t)(ci * h * wd + ky * wd + kx);
  int16_t columns[2 * IREEGEN_I8_PAIR_MAX];
  int16_t* second = columns + length;
  for (size_t b = 0; b < n; ++b) {
    const int8_t* image = x + b * c * h * wd;
    int8_t* out = y + b * f * oh * ow;
    for (size_t oy = 0; oy < oh; ++oy) {
      size_t ox = 0;
      for (; ox + 2 <= ow; ox += 2) {
        ireegen_i8_gather_column(columns, image, offsets, length, c, h, wd, kh,
                                 kw, oy, ox, stride, pad_top, pad_left, x_zero);
        ireegen_i8_gather_column(second, image, offsets, length, c, h, wd, kh,
                                 kw, oy, ox + 1, stride, pad_top, pad_left,
                                 x_zero);
        ireegen_i8_filters_pair(columns, second, w, length, f, bias, multiplier,
                                y_zero, out + oy * ow + ox, oh * ow);
      }
      if (ox < ow) {
        ireegen_i8_gather_column(columns, image, offsets, length, c, h, wd, kh,
                                 kw, oy, ox, stride, pad_top, pad_left, x_zero);
        ireegen_i8_filters(columns, w, length, f, bias, multiplier, y_zero,
                           out + oy * ow + ox, oh * ow);
      }
    }
  }
  return 1;
}

#endif  // IREEGEN_I8_MVE

#endif  // IREEGEN_INT8_CONVOLUTION_MVE_H_
