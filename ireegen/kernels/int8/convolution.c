// NCHW int8 convolution and depthwise convolution with ONNX Runtime's
// rounding; the zero padding is done by skipping, not by a padded copy.
//
// Compiled twice: as itself, the per-tensor entry points; included by
// convolution_per_channel.c with IREEGEN_I8_PER_CHANNEL 1, the per-channel
// ones (a multiplier per output channel).  The bodies are the same.
#include <string.h>

#include "convolution_mve.h"
#include "depthwise_mve.h"
#include "dot.h"
#include "dot_pair.h"
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

// The offset of each column element, in the weights' (c, kh, kw) order,
// from its pixel's first input (channel 0, top-left tap): one table for
// every pixel whose receptive field lies inside the image.  0 when an
// offset does not fit 16 bits (the pixels then take the general gather).
static int ireegen_i8_offsets(uint16_t* table, size_t c, size_t h, size_t wd,
                              size_t kh, size_t kw) {
  if ((c - 1) * h * wd + (kh - 1) * wd + (kw - 1) > UINT16_MAX) return 0;
  for (size_t ci = 0; ci < c; ++ci)
    for (size_t ky = 0; ky < kh; ++ky)
      for (size_t kx = 0; kx < kw; ++kx)
        *table++ = (uint16_t)(ci * h * wd + ky * wd + kx);
  return 1;
}

// The first input (channel 0, top-left tap) of output pixel (oy, ox) when
// its receptive field lies inside the image, else NULL.
static const int8_t* ireegen_i8_field(const int8_t* image, size_t h, size_t wd,
                                      size_t kh, size_t kw, size_t oy,
                                      size_t ox, size_t stride, size_t pad_top,
                                      size_t pad_left) {
  const size_t iy = oy * stride, ix = ox * stride;  // in padded coordinates
  if (iy < pad_top || ix < pad_left || iy - pad_top + kh > h ||
      ix - pad_left + kw > wd)
    return NULL;
  return image + (iy - pad_top) * wd + (ix - pad_left);
}

// Both columns of a pair column whose pixels' fields lie inside the image
// (first inputs s0 and s1): each offset of the table read once for both.
static __attribute__((noinline)) void ireegen_i8_gather_inside(
    int16_t* d, const int8_t* s0, const int8_t* s1, const uint16_t* table,
    size_t length, int32_t x_zero) {
  size_t i = 0;
  for (; i + 4 <= length; i += 4, d += 8, table += 4) {
    const size_t o0 = table[0], o1 = table[1], o2 = table[2], o3 = table[3];
    d[IREEGEN_I8_SLOT(0)] = (int16_t)(s0[o0] - x_zero);
    d[IREEGEN_I8_SLOT(1)] = (int16_t)(s0[o1] - x_zero);
    d[IREEGEN_I8_SLOT(2)] = (int16_t)(s0[o2] - x_zero);
    d[IREEGEN_I8_SLOT(3)] = (int16_t)(s0[o3] - x_zero);
    d[4 + IREEGEN_I8_SLOT(0)] = (int16_t)(s1[o0] - x_zero);
    d[4 + IREEGEN_I8_SLOT(1)] = (int16_t)(s1[o1] - x_zero);
    d[4 + IREEGEN_I8_SLOT(2)] = (int16_t)(s1[o2] - x_zero);
    d[4 + IREEGEN_I8_SLOT(3)] = (int16_t)(s1[o3] - x_zero);
  }
  for (size_t r = 0; i + r < length; ++r) {
    const size_t o = table[r];
    d[r] = (int16_t)(s0[o] - x_zero);
    d[4 + r] = (int16_t)(s1[o] - x_zero);
  }
}

// The column of output pixel (oy, ox), (x - x_zero) over its receptive
// field and 0 where the field lies in the padding, in chunks of four `step`
// int16 apart from `d` on: 8 for one half of a pair column (dot_pair.h), 4
// for a column of its own (dot.h).
static void ireegen_i8_gather(int16_t* d, size_t step, const int8_t* image,
                              const uint16_t* table, size_t length, size_t c,
                              size_t h, size_t wd, size_t kh, size_t kw,
                              size_t oy, size_t ox, size_t stride,
                              size_t pad_top, size_t pad_left, int32_t x_zero) {
  const size_t iy = oy * stride, ix = ox * stride;  // in padded coordinates
  const int8_t* src = table ? ireegen_i8_field(image, h, wd, kh, kw, oy, ox,
                                               stride, pad_top, pad_left)
                            : NULL;
  if (src) {
    size_t i = 0;
    for (; i + 4 <= length; i += 4, d += step) {
      d[IREEGEN_I8_SLOT(0)] = (int16_t)(src[table[i]] - x_zero);
      d[IREEGEN_I8_SLOT(1)] = (int16_t)(src[table[i + 1]] - x_zero);
      d[IREEGEN_I8_SLOT(2)] = (int16_t)(src[table[i + 2]] - x_zero);
      d[IREEGEN_I8_SLOT(3)] = (int16_t)(src[table[i + 3]] - x_zero);
    }
    for (size_t r = 0; i + r < length; ++r)
      d[r] = (int16_t)(src[table[i + r]] - x_zero);
    return;
  }
  // A pixel at the border: zeros, then the taps inside the image (the
  // same for every channel), each written to its place in the chunks.
  static const uint8_t slot[4] = {IREEGEN_I8_SLOT(0), IREEGEN_I8_SLOT(1),
                                  IREEGEN_I8_SLOT(2), IREEGEN_I8_SLOT(3)};
  const size_t shift = step == 8;  // chunk j starts at (4 * j) << shift
  int16_t* z = d;
  for (size_t i = 0; i < length; i += 4, z += step)
    z[0] = z[1] = z[2] = z[3] = 0;  // the last chunk's padding too: it is
                                    // inside the buffer, and never read
  size_t ky0, ky1, kx0, kx1;
  ireegen_i8_taps(oy, stride, pad_top, h, kh, &ky0, &ky1);
  ireegen_i8_taps(ox, stride, pad_left, wd, kw, &kx0, &kx1);
  for (size_t ci = 0; ci < c; ++ci) {
    const int8_t* plane = image + ci * h * wd;
    for (size_t ky = ky0; ky < ky1; ++ky) {
      // kx >= kx0 keeps the column index ix + kx - pad_left >= 0.
      const int8_t* row = plane + (iy + ky - pad_top) * wd;
      size_t i = (ci * kh + ky) * kw + kx0;
      for (size_t kx = kx0; kx < kx1; ++kx, ++i)
        d[((i & ~(size_t)3) << shift) + slot[i & 3]] =
            (int16_t)(row[ix + kx - pad_left] - x_zero);
    }
  }
  // The last length % 4 elements are in order: undo the slots there.
  if (length % 4 >= 2 && IREEGEN_I8_SLOT(1) != 1) {
    int16_t* tail = d + ((length & ~(size_t)3) << shift);
    const int16_t t1 = tail[1];
    tail[1] = tail[2];
    tail[2] = t1;
  }
}

// y[o * pixels] and, when `two`, y[o * pixels + 1]: the requantized dot
// products of the pair column's two pixels with the f filters (rows of
// `length` weights), two filters at a time; `fast`: the layer's check of
// IREEGEN_I8_FAST_LAYER (dot.h), a constant of each copy.
IREEGEN_I8_BODY void ireegen_i8_pair_filters_in(
    const int16_t* pair, const int8_t* w, size_t length, size_t f,
    const int32_t* bias, ireegen_i8_scale_t multiplier,
    const ireegen_i8_scale_t* per_channel, int32_t y_zero, int8_t* y,
    size_t pixels, int two, const int fast) {
  (void)fast;  // the plain kernels have one form
  for (size_t o = 0; o < f; o += 2, y += 2 * pixels) {
    const size_t o1 = o + 1 < f ? o + 1 : o;
    int32_t acc[4] = {bias[o], bias[o], bias[o1], bias[o1]};
    ireegen_i8_dot_pair(pair, w + o * length, w + o1 * length, length, acc);
    const ireegen_i8_scale_t m0 = IREEGEN_I8_MULTIPLIER(o);
    y[0] = IREEGEN_I8_REQUANTIZE_IN(acc[0], m0, y_zero, fast);
    if (two) y[1] = IREEGEN_I8_REQUANTIZE_IN(acc[1], m0, y_zero, fast);
    if (o1 != o) {
      const ireegen_i8_scale_t m1 = IREEGEN_I8_MULTIPLIER(o1);
      y[pixels] = IREEGEN_I8_REQUANTIZE_IN(acc[2], m1, y_zero, fast);
      if (two)
        y[pixels + 1] = IREEGEN_I8_REQUANTIZE_IN(acc[3], m1, y_zero, fast);
    }
  }
}

// A function of its own, so that its few live values stay in registers
// around the SMLAD loop.
static __attribute__((noinline)) void ireegen_i8_pair_filters(
    const int16_t* pair, const int8_t* w, size_t length, size_t f,
    const int32_t* bias, ireegen_i8_scale_t multiplier,
    const ireegen_i8_scale_t* per_channel, int32_t y_zero, int8_t* y,
    size_t pixels, int two, int fast) {
  if (fast == 2)
    ireegen_i8_pair_filters_in(pair, w, length, f, bias, multiplier,
                               per_channel, y_zero, y, pixels, two, 2);
  else if (fast)
    ireegen_i8_pair_filters_in(pair, w, length, f, bias, multiplier,
                               per_channel, y_zero, y, pixels, two, 1);
  else
    ireegen_i8_pair_filters_in(pair, w, length, f, bias, multiplier,
                               per_channel, y_zero, y, pixels, two, 0);
}

// The convolution of the DSP (SMLAD) and plain loops: filter o's
// multiplier is IREEGEN_I8_MULTIPLIER(o).  On MVE cores a function of its
// own, as the MVE loops' is (convolution_mve.h): each has its columns on
// the stack, and the entry point's frame would otherwise hold both.
#if IREEGEN_I8_MVE_REQUANTIZE
static __attribute__((noinline)) void
#else
IREEGEN_I8_BODY void
#endif
ireegen_i8_conv_columns(const int8_t* x, const int8_t* w, const int32_t* bias,
                        int8_t* y, size_t n, size_t c, size_t h, size_t wd,
                        size_t f, size_t kh, size_t kw, size_t oh, size_t ow,
                        size_t stride, size_t pad_top, size_t pad_left,
                        int32_t x_zero, ireegen_i8_scale_t multiplier,
                        const ireegen_i8_scale_t* per_channel, int32_t y_zero) {
  const size_t length = c * kh * kw;
  const size_t pixels = oh * ow;
  // The pair column, or one column when it is longer (word-aligned), and
  // the gather's offsets.
  uint32_t words[IREEGEN_I8_PAIR_MAX > IREEGEN_I8_COLUMN_MAX / 2
                     ? IREEGEN_I8_PAIR_MAX
                     : IREEGEN_I8_COLUMN_MAX / 2];
  int16_t* const column = (int16_t*)(void*)words;
  uint16_t offsets[IREEGEN_I8_PAIR_MAX];
  const uint16_t* table = length <= IREEGEN_I8_PAIR_MAX &&
                                  ireegen_i8_offsets(offsets, c, h, wd, kh, kw)
                              ? offsets
                              : NULL;
  if (length <= IREEGEN_I8_PAIR_MAX) {
    const int fast =
        IREEGEN_I8_FAST_LAYER(bias, per_channel, f, length, x_zero);
    // Two output pixels at a time (the next in (oy, ox) order, across rows
    // too): both receptive fields unpacked to int16 into one pair column,
    // then dotted with the filters two at a time.  A last odd pixel is
    // paired with itself.
    int16_t* const pair = column;
    for (size_t b = 0; b < n; ++b) {
      const int8_t* image = x + b * c * h * wd;
      int8_t* out = y + b * f * pixels;
      size_t oy = 0, ox = 0;  // of pixel p
      for (size_t p = 0; p < pixels; p += 2) {
        const int two = p + 1 < pixels;
        size_t oy1 = oy, ox1 = ox + two;  // of the second pixel
        if (ox1 == ow) oy1 += 1, ox1 = 0;
        const int8_t* s0 = table
                               ? ireegen_i8_field(image, h, wd, kh, kw, oy, ox,
                                                  stride, pad_top, pad_left)
                               : NULL;
        const int8_t* s1 =
            table ? ireegen_i8_field(image, h, wd, kh, kw, oy1, ox1, stride,
                                     pad_top, pad_left)
                  : NULL;
        if (s0 && s1) {
          ireegen_i8_gather_inside(pair, s0, s1, table, length, x_zero);
        } else {
          ireegen_i8_gather(pair, 8, image, table, length, c, h, wd, kh, kw, oy,
                            ox, stride, pad_top, pad_left, x_zero);
          ireegen_i8_gather(pair + 4, 8, image, table, length, c, h, wd, kh, kw,
                            oy1, ox1, stride, pad_top, pad_left, x_zero);
        }
        ireegen_i8_pair_filters(pair, w, length, f, bias, multiplier,
                                per_channel, y_zero, out + p, pixels, two,
                                fast);
        ox = ox1 + two;
        oy = oy1;
        if (ox == ow) oy += 1, ox = 0;
      }
    }
    return;
  }
  if (length <= IREEGEN_I8_COLUMN_MAX) {
    // A longer column: one pixel at a time, dotted with four filters at a
    // time.
    for (size_t b = 0; b < n; ++b) {
      const int8_t* image = x + b * c * h * wd;
      int8_t* out = y + b * f * pixels;
      for (size_t oy = 0; oy < oh; ++oy) {
        for (size_t ox = 0; ox < ow; ++ox) {
          ireegen_i8_gather(column, 4, image, NULL, length, c, h, wd, kh, kw,
                            oy, ox, stride, pad_top, pad_left, x_zero);
          ireegen_i8_filters(column, w, length, f, bias, multiplier,
                             per_channel, y_zero, out + oy * ow + ox, pixels);
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
              ireegen_i8_requantize(acc, IREEGEN_I8_MULTIPLIER(o), y_zero);
        }
      }
    }
  }
}

// The convolution: the MVE loops where they take it, else the columns'.
// Its one caller is this file's entry point, so it is inlined there.
IREEGEN_I8_BODY void ireegen_i8_conv(
    const int8_t* x, const int8_t* w, const int32_t* bias, int8_t* y, size_t n,
    size_t c, size_t h, size_t wd, size_t f, size_t kh, size_t kw, size_t oh,
    size_t ow, size_t stride, size_t pad_top, size_t pad_left, int32_t x_zero,
    ireegen_i8_scale_t multiplier, const ireegen_i8_scale_t* per_channel,
    int32_t y_zero) {
#if IREEGEN_I8_MVE_REQUANTIZE
  if (ireegen_i8_convolution_mve(x, w, bias, y, n, c, h, wd, f, kh, kw, oh, ow,
                                 stride, pad_top, pad_left, x_zero, multiplier,
                                 per_channel, y_zero))
    return;
#endif
  ireegen_i8_conv_columns(x, w, bias, y, n, c, h, wd, f, kh, kw, oh, ow, stride,
                          pad_top, pad_left, x_zero, multiplier, per_channel,
                          y_zero);
}

// dst[i] = src[i] - x_zero for i < n, in int16.  On DSP cores four at a
// time: SXTB16 splits a word into (x0, x2) and (x1, x3), SSUB16 takes the
// zero point off both lanes (the differences fit 16 bits), and two packs
// (PKHBT, PKHTB) put them back in order.
static inline void ireegen_i8_widen(int16_t* dst, const int8_t* src, size_t n,
                                    int32_t x_zero) {
  size_t i = 0;
#if IREEGEN_I8_DSP
  const uint32_t zeros = (uint32_t)(uint16_t)x_zero * UINT32_C(0x00010001);
  for (; i + 4 <= n; i += 4) {
    const uint32_t v = ireegen_i8_load32(src + i);
    const uint32_t even = __ssub16(__sxtb16(v), zeros);
    const uint32_t odd = __ssub16(ireegen_i8_sxtb16_ror8(v), zeros);
    const uint32_t lo = (even & 0xFFFFu) | (odd << 16);
    const uint32_t hi = (odd & 0xFFFF0000u) | (even >> 16);
    memcpy(dst + i, &lo, sizeof lo);
    memcpy(dst + i + 2, &hi, sizeof hi);
  }
#endif
  for (; i < n; ++i) dst[i] = (int16_t)(src[i] - x_zero);
}

#if IREEGEN_I8_DSP
// One tap row's products for two neighbouring outputs whose first inputs
// are p and p + stride: SMLAD (p0, p1).(t0, t1) plus p2 * t2 (SMLABT) for
// each; at stride 1 the second output's (p1, p2, p3) shares the first's
// words: p1 * t0 (SMLATB), then (p2, p3).(t1, t2).
static inline __attribute__((always_inline)) void ireegen_i8_tap_row2(
    const int16_t* p, size_t stride, uint32_t t01, uint32_t t12, int32_t* a0,
    int32_t* a1) {
  const int32_t w0 = (int32_t)ireegen_i8_load32(p);
  const int32_t w1 = (int32_t)ireegen_i8_load32(p + 2);
  *a0 = __smlad((uint32_t)w0, t01, *a0);
  *a0 = __smlabt(w1, (int32_t)t12, *a0);
  if (stride == 1) {
    *a1 = __smlatb(w0, (int32_t)t01, *a1);
    *a1 = __smlad((uint32_t)w1, t12, *a1);
  } else {
    *a1 = __smlad(ireegen_i8_load32(p + stride), t01, *a1);
    *a1 =
        __smlabt((int32_t)ireegen_i8_load32(p + stride + 2), (int32_t)t12, *a1);
  }
}
#endif

// Depthwise 3x3 on one output row of one channel from its three padded
// int16 input rows: every output pixel is a full 3x3 dot product, with no
// edge cases; on DSP cores two neighbouring outputs at a time
// (ireegen_i8_tap_row2) with the tap pairs (t0, t1), (t1, t2) of each row
// in `pairs`.  `stride1`: the stride is 1, a constant of each copy.
IREEGEN_I8_BODY void ireegen_i8_depthwise_row3x3_in(
    const int16_t* r0, const int16_t* r1, const int16_t* r2, const int8_t* taps,
    const uint32_t pairs[6], int32_t bias, int8_t* out, size_t ow,
    size_t stride, ireegen_i8_scale_t multiplier, int32_t y_zero,
    const int fast, const int stride1) {
  (void)fast;  // the plain kernels have one form
  (void)pairs;
  if (stride1) stride = 1;
  size_t ox = 0;
#if IREEGEN_I8_DSP
  const uint32_t t01_0 = pairs[0], t12_0 = pairs[1], t01_1 = pairs[2],
                 t12_1 = pairs[3], t01_2 = pairs[4], t12_2 = pairs[5];
  for (; ox + 2 <= ow; ox += 2) {
    int32_t a0 = bias, a1 = bias;
    const size_t at = ox * stride;
    ireegen_i8_tap_row2(r0 + at, stride, t01_0, t12_0, &a0, &a1);
    ireegen_i8_tap_row2(r1 + at, stride, t01_1, t12_1, &a0, &a1);
    ireegen_i8_tap_row2(r2 + at, stride, t01_2, t12_2, &a0, &a1);
    out[ox] = IREEGEN_I8_REQUANTIZE_IN(a0, multiplier, y_zero, fast);
    out[ox + 1] = IREEGEN_I8_REQUANTIZE_IN(a1, multiplier, y_zero, fast);
  }
#endif
  for (; ox < ow; ++ox) {
    const int16_t* const rows[3] = {r0, r1, r2};
    int32_t acc = bias;
    for (size_t r = 0; r < 3; ++r) {
      const int16_t* p = rows[r] + ox * stride;
      acc +=
          p[0] * taps[3 * r] + p[1] * taps[3 * r + 1] + p[2] * taps[3 * r + 2];
    }
    out[ox] = IREEGEN_I8_REQUANTIZE_IN(acc, multiplier, y_zero, fast);
  }
}

// The int16 (x - x_zero) rows of one channel, padded with zeros: the whole
// plane when it fits this many values (each row widened once, one setup
// per channel), else three rows at a time (the rows one output row reads).
#define IREEGEN_I8_PLANE_MAX 1280
#define IREEGEN_I8_ROW_MAX (IREEGEN_I8_PLANE_MAX / 3 - 1)

// Padded row yy of one channel (input row yy - pad_top, zeros outside the
// image) into dst: `head` zeros, the image's `inside` columns, zeros up to
// `length`.
static inline void ireegen_i8_padded_row(int16_t* dst, const int8_t* plane,
                                         size_t yy, size_t h, size_t wd,
                                         size_t pad_top, size_t head,
                                         size_t inside, size_t length,
                                         int32_t x_zero) {
  if (yy < pad_top || yy - pad_top >= h) {
    memset(dst, 0, length * sizeof dst[0]);
    return;
  }
  for (size_t i = 0; i < head; ++i) dst[i] = 0;
  ireegen_i8_widen(dst + head, plane + (yy - pad_top) * wd, inside, x_zero);
  for (size_t i = head + inside; i < length; ++i) dst[i] = 0;
}

// One channel's output rows, each from the three padded rows it reads: out
// of the whole padded plane when it fits, else out of a ring of three rows,
// padded row yy made once, in slot yy % 3, when first read.  Each row has
// one element more: the second output's last word reads one past the last
// column.
static void ireegen_i8_depthwise_plane3x3(
    const int8_t* plane, const int8_t* taps, int32_t bias, int8_t* out,
    size_t h, size_t wd, size_t oh, size_t ow, size_t stride, size_t pad_top,
    size_t pad_left, int32_t x_zero, ireegen_i8_scale_t multiplier,
    int32_t y_zero) {
  const size_t wp = (ow - 1) * stride + 3;  // the columns read
  const size_t hp = (oh - 1) * stride + 3;  // the rows read
  const size_t head = pad_left < wp ? pad_left : wp + 1;
  const size_t inside =
      pad_left < wp ? (wd < wp - pad_left ? wd : wp - pad_left) : 0;
  int16_t rows[IREEGEN_I8_PLANE_MAX];
  const int whole = hp * (wp + 1) <= IREEGEN_I8_PLANE_MAX;
  if (whole) {
    memset(rows, 0, hp * (wp + 1) * sizeof rows[0]);
    for (size_t iy = 0; iy < h && iy + pad_top < hp; ++iy)
      ireegen_i8_widen(rows + (iy + pad_top) * (wp + 1) + head, plane + iy * wd,
                       inside, x_zero);
  }
  uint32_t pairs[6];
  for (size_t r = 0; r < 3; ++r) {
    pairs[2 * r] = (uint16_t)taps[3 * r] | (uint32_t)(uint16_t)taps[3 * r + 1]
                                               << 16;
    pairs[2 * r + 1] =
        (uint16_t)taps[3 * r + 1] | (uint32_t)(uint16_t)taps[3 * r + 2] << 16;
  }
  const int fast = IREEGEN_I8_FAST_LAYER(&bias, &multiplier, 1, 9, x_zero);
  size_t made = 0;  // ring: padded rows [0, made) have been made
  for (size_t oy = 0; oy < oh; ++oy) {
    const size_t top = oy * stride;
    const int16_t *r0, *r1, *r2;
    if (whole) {
      r0 = rows + top * (wp + 1);
      r1 = r0 + (wp + 1);
      r2 = r1 + (wp + 1);
    } else {
      for (; made < top + 3; ++made)
        ireegen_i8_padded_row(rows + made % 3 * (wp + 1), plane, made, h, wd,
                              pad_top, head, inside, wp + 1, x_zero);
      r0 = rows + top % 3 * (wp + 1);
      r1 = rows + (top + 1) % 3 * (wp + 1);
      r2 = rows + (top + 2) % 3 * (wp + 1);
    }
    int8_t* row = out + oy * ow;
    if (fast == 2 && stride == 1)
      ireegen_i8_depthwise_row3x3_in(r0, r1, r2, taps, pairs, bias, row, ow,
                                     stride, multiplier, y_zero, 2, 1);
    else if (fast == 2)
      ireegen_i8_depthwise_row3x3_in(r0, r1, r2, taps, pairs, bias, row, ow,
                                     stride, multiplier, y_zero, 2, 0);
    else if (fast)
      ireegen_i8_depthwise_row3x3_in(r0, r1, r2, taps, pairs, bias, row, ow,
                                     stride, multiplier, y_zero, 1, 0);
    else
      ireegen_i8_depthwise_row3x3_in(r0, r1, r2, taps, pairs, bias, row, ow,
                                     stride, multiplier, y_zero, 0, 0);
  }
}

// The depthwise convolution: channel ch's multiplier is
// IREEGEN_I8_MULTIPLIER(ch) (dot.h).
IREEGEN_I8_BODY void ireegen_i8_depthwise(
    const int8_t* x, const int8_t* w, const int32_t* bias, int8_t* y, size_t n,
    size_t c, size_t h, size_t wd, size_t kh, size_t kw, size_t oh, size_t ow,
    size_t stride, size_t pad_top, size_t pad_left, int32_t x_zero,
    ireegen_i8_scale_t multiplier, const ireegen_i8_scale_t* per_channel,
    int32_t y_zero) {
#if IREEGEN_I8_MVE_REQUANTIZE
  if (ireegen_i8_depthwise_conv_mve(x, w, bias, y, n, c, h, wd, kh, kw, oh, ow,
                                    stride, pad_top, pad_left, x_zero,
                                    multiplier, per_channel, y_zero))
    return;
#endif
  const int is3x3 = kh == 3 && kw == 3;
  for (size_t b = 0; b < n; ++b) {
    for (size_t ch = 0; ch < c; ++ch) {
      const ireegen_i8_scale_t channel_multiplier = IREEGEN_I8_MULTIPLIER(ch);
      const int8_t* plane = x + (b * c + ch) * h * wd;
      const int8_t* taps = w + ch * kh * kw;
      int8_t* out = y + (b * c + ch) * oh * ow;
      if (is3x3 && (ow - 1) * stride + 3 <= IREEGEN_I8_ROW_MAX) {
        ireegen_i8_depthwise_plane3x3(plane, taps, bias[ch], out, h, wd, oh, ow,
                                      stride, pad_top, pad_left, x_zero,
                                      channel_multiplier, y_zero);
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
                  ireegen_i8_requantize(acc, channel_multiplier, y_zero);
              continue;
            }
#endif
            for (size_t r = 0; r < 3; ++r) {
              const int8_t* row = r0 + r * wd;
              const int8_t* tap = taps + 3 * r;
              acc += row[0] * tap[0] + row[1] * tap[1] + row[2] * tap[2];
            }
            out[oy * ow + ox] =
                ireegen_i8_requantize(acc, channel_multiplier, y_zero);
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
          out[oy * ow + ox] =
              ireegen_i8_requantize(acc, channel_multiplier, y_zero);
        }
      }
    }
  }
}

#ifndef IREEGEN_I8_PER_CHANNEL
void ireegen_i8_convolution(const int8_t* x, size_t x_offset, const int8_t* w,
                            size_t w_offset, const int32_t* bias,
                            size_t bias_offset, int8_t* y, size_t y_offset,
                            size_t n, size_t c, size_t h, size_t wd, size_t f,
                            size_t kh, size_t kw, size_t oh, size_t ow,
                            size_t stride, size_t pad_top, size_t pad_left,
                            uint32_t x_scale, int32_t x_zero, uint32_t w_scale,
                            uint32_t y_scale, int32_t y_zero) {
  ireegen_i8_conv(x + x_offset, w + w_offset, bias + bias_offset, y + y_offset,
                  n, c, h, wd, f, kh, kw, oh, ow, stride, pad_top, pad_left,
                  x_zero, ireegen_i8_multiplier(x_scale, w_scale, y_scale),
                  NULL, y_zero);
}

void ireegen_i8_depthwise_conv(
    const int8_t* x, size_t x_offset, const int8_t* w, size_t w_offset,
    const int32_t* bias, size_t bias_offset, int8_t* y, size_t y_offset,
    size_t n, size_t c, size_t h, size_t wd, size_t f, size_t kh, size_t kw,
    size_t oh, size_t ow, size_t stride, size_t pad_top, size_t pad_left,
    uint32_t x_scale, int32_t x_zero, uint32_t w_scale, uint32_t y_scale,
    int32_t y_zero) {
  (void)f;
  ireegen_i8_depthwise(
      x + x_offset, w + w_offset, bias + bias_offset, y + y_offset, n, c, h, wd,
      kh, kw, oh, ow, stride, pad_top, pad_left, x_zero,
      ireegen_i8_multiplier(x_scale, w_scale, y_scale), NULL, y_zero);
}
#else
void IREEGEN_I8_PC_ENTRY(ireegen_i8_convolution)(
    const int8_t* x, size_t x_offset, const int8_t* w, size_t w_offset,
    const int32_t* bias, size_t bias_offset,
    const ireegen_i8_table_t* multipliers, size_t multipliers_offset, int8_t* y,
    size_t y_offset, size_t n, size_t c, size_t h, size_t wd, size_t f,
    size_t kh, size_t kw, size_t oh, size_t ow, size_t stride, size_t pad_top,
    size_t pad_left, int32_t x_zero, int32_t y_zero) {
  ireegen_i8_conv(x + x_offset, w + w_offset, bias + bias_offset, y + y_offset,
                  n, c, h, wd, f, kh, kw, oh, ow, stride, pad_top, pad_left,
                  x_zero, IREEGEN_I8_NO_SCALE,
                  IREEGEN_I8_SCALES(multipliers, multipliers_offset), y_zero);
}

void IREEGEN_I8_PC_ENTRY(ireegen_i8_depthwise_conv)(
    const int8_t* x, size_t x_offset, const int8_t* w, size_t w_offset,
    const int32_t* bias, size_t bias_offset,
    const ireegen_i8_table_t* multipliers, size_t multipliers_offset, int8_t* y,
    size_t y_offset, size_t n, size_t c, size_t h, size_t wd, size_t f,
    size_t kh, size_t kw, size_t oh, size_t ow, size_t stride, size_t pad_top,
    size_t pad_left, int32_t x_zero, int32_t y_zero) {
  (void)f;
  ireegen_i8_depthwise(
      x + x_offset, w + w_offset, bias + bias_offset, y + y_offset, n, c, h, wd,
      kh, kw, oh, ow, stride, pad_top, pad_left, x_zero, IREEGEN_I8_NO_SCALE,
      IREEGEN_I8_SCALES(multipliers, multipliers_offset), y_zero);
}
#endif
