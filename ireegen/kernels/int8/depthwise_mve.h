// Depthwise convolution on MVE (Helium: the Cortex-M55), four output pixels
// of a row at a time: each tap one widening load of four input bytes
// (VLDRB.S32; a gather for stride 2) and one VMLA by the tap into four
// int32 accumulators, then requantize_mve.h.  The input goes through an
// int8 band of the channel's plane on the stack with the padding filled with
// x_zero, so every pixel takes all its taps: sum (x - x_zero) * t is
// sum x * t - x_zero * sum t, the second term folded into the bias.
#ifndef IREEGEN_INT8_DEPTHWISE_MVE_H_
#define IREEGEN_INT8_DEPTHWISE_MVE_H_

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "dot.h"
#include "mve.h"
#include "requantize_mve.h"

#if IREEGEN_I8_MVE_REQUANTIZE

// The band's bytes on the stack (as the int16 plane of convolution.c), and
// what the last eight lanes of a row may read past it (7 * stride, stride
// <= 4; those lanes are not stored).
#define IREEGEN_I8_BAND_MAX 2560
#define IREEGEN_I8_BAND_SLACK 32
// The largest kernel (kh * kw) taken here.
#define IREEGEN_I8_TAPS_MAX 64
// The most output pixels of a narrow plane taken a field at a time
// (ireegen_i8_depthwise_flat: their origins, 528 B of stack).
#define IREEGEN_I8_FLAT_MAX 128

// Rows [0, rows) of the band, each `wp` bytes: input row row0 + r of the
// plane, columns from -pad_left; x_zero outside the image.  The whole band
// filled with x_zero (unless `padded`: a band of the same rows and x_zero
// before, whose padding holds it still), then each row inside the image
// copied, sixteen bytes a store under a tail predicate: the rows are short
// (a few to a few hundred bytes), where a memset or memcpy call costs more
// than the copy.
static inline void ireegen_i8_fill_band(int8_t* band, const int8_t* plane,
                                        ptrdiff_t row0, size_t rows, size_t h,
                                        size_t wd, size_t wp, size_t pad_left,
                                        int32_t x_zero, int padded) {
  const size_t left = pad_left < wp ? pad_left : wp;
  const size_t inside = wp - left < wd ? wp - left : wd;
  const size_t total = rows * wp;
  const int8x16_t fill = vdupq_n_s8((int8_t)x_zero);
  for (size_t i = 0; !padded && i < total; i += 16)
    vstrbq_p_s8(band + i, fill, vctp8q((uint32_t)(total - i)));
  // Band rows [first, last) lie inside the image.
  const ptrdiff_t first = row0 < 0 ? -row0 : 0;
  const ptrdiff_t below = (ptrdiff_t)h - row0;
  const ptrdiff_t last = below < (ptrdiff_t)rows ? below : (ptrdiff_t)rows;
  const int8_t* src = plane + (row0 + first) * (ptrdiff_t)wd;
  int8_t* dst = band + (size_t)first * wp + left;
  if (inside <= 16) {
    // A row in one predicated load and store.
    const mve_pred16_t p = vctp8q((uint32_t)inside);
    for (ptrdiff_t r = first; r < last; ++r, src += wd, dst += wp)
      vstrbq_p_s8(dst, vldrbq_z_s8(src, p), p);
    return;
  }
  for (ptrdiff_t r = first; r < last; ++r, src += wd, dst += wp)
    for (size_t i = 0; i < inside; i += 16) {
      const mve_pred16_t p = vctp8q((uint32_t)(inside - i));
      vstrbq_p_s8(dst + i, vldrbq_z_s8(src + i, p), p);
    }
}

// One pass of a 3x3 stride-1 band: *lo, *hi = base + the nine taps times
// the bytes at p (pixels 0-3) and p + 4 (pixels 4-7), rows wp apart.  In
// assembler: gcc 12 reloads and copies the taps and recomputes addresses
// around the same loads and VMLAs (about 95 instructions a pass; this is
// 50).  VLDRB.S32 takes a low register (r0-r7) as its base.
static inline void ireegen_i8_depthwise_pass3x3s1(const int8_t* p, size_t wp,
                                                  const int32_t* taps,
                                                  int32_t base, int32x4_t* lo,
                                                  int32x4_t* hi) {
  int32x4_t a, b, x;
  int32_t tap;
  const int8_t* row;
// clang-format off
#define IREEGEN_I8_DW_TAP(offset, column)               \
  "ldr %[tap], [%[taps], #" offset "]\n\t"             \
  "vldrb.s32 %q[x], [%[row], #" column "]\n\t"         \
  "vmla.s32 %q[a], %q[x], %[tap]\n\t"                  \
  "vldrb.s32 %q[x], [%[row], #4+" column "]\n\t"       \
  "vmla.s32 %q[b], %q[x], %[tap]\n\t"
  __asm__(
      "vdup.32 %q[a], %[base]\n\t"
      "vdup.32 %q[b], %[base]\n\t"
      "mov %[row], %[p]\n\t"
      IREEGEN_I8_DW_TAP("0", "0") IREEGEN_I8_DW_TAP("4", "1") IREEGEN_I8_DW_TAP("8", "2")
      "add %[row], %[row], %[wp]\n\t"
      IREEGEN_I8_DW_TAP("12", "0") IREEGEN_I8_DW_TAP("16", "1") IREEGEN_I8_DW_TAP("20", "2")
      "add %[row], %[row], %[wp]\n\t"
      IREEGEN_I8_DW_TAP("24", "0") IREEGEN_I8_DW_TAP("28", "1") IREEGEN_I8_DW_TAP("32", "2")
      : [a] "=&w"(a), [b] "=&w"(b), [x] "=&w"(x), [tap] "=&r"(tap),
        [row] "=&l"(row)
      : [p] "r"(p), [wp] "r"(wp), [taps] "r"(taps), [base] "r"(base)
      : "memory");
  // clang-format on
#undef IREEGEN_I8_DW_TAP
  *lo = a;
  *hi = b;
}

// Output rows [0, rows) of one band: out[oy][ox] for ox < ow, eight
// pixels (two vectors of four) per pass, so each tap, kept in a register
// or a stack slot, serves eight multiplies.
__attribute__((always_inline)) static inline void ireegen_i8_depthwise_band(
    const int8_t* band, const int32_t* taps, int32_t base, int8_t* out,
    size_t rows, size_t ow, size_t wp, size_t stride, size_t kh, size_t kw,
    ireegen_i8_scale_t multiplier, int32_t y_zero) {
  const uint32x4_t lanes = vmulq_n_u32(vidupq_n_u32(0, 1), (uint32_t)stride);
  for (size_t oy = 0; oy < rows; ++oy, out += ow) {
    const int8_t* top = band + oy * stride * wp;
    for (size_t ox = 0; ox < ow; ox += 8) {
      const int8_t* p0 = top + ox * stride;
      int32x4_t lo = vdupq_n_s32(base), hi = lo;
      if (stride == 1 && kh == 3 && kw == 3) {
        ireegen_i8_depthwise_pass3x3s1(p0, wp, taps, base, &lo, &hi);
      } else {
#pragma GCC unroll 3
        for (size_t ky = 0; ky < kh; ++ky) {
          const int8_t* p = p0 + ky * wp;
#pragma GCC unroll 3
          for (size_t kx = 0; kx < kw; ++kx) {
            const int32_t t = taps[ky * kw + kx];
            const int8_t* q = p + kx + 4 * stride;
            if (stride == 1) {
              lo = vmlaq_n_s32(lo, vldrbq_s32(p + kx), t);
              hi = vmlaq_n_s32(hi, vldrbq_s32(q), t);
            } else {
              lo = vmlaq_n_s32(lo, vldrbq_gather_offset_s32(p + kx, lanes), t);
              hi = vmlaq_n_s32(hi, vldrbq_gather_offset_s32(q, lanes), t);
            }
          }
        }
      }
      const size_t left = ow - ox;
      vstrbq_p_s32(out + ox, ireegen_i8_requantize4_mve(lo, multiplier, y_zero),
                   vctp32q((uint32_t)left));
      if (left > 4)
        vstrbq_p_s32(out + ox + 4,
                     ireegen_i8_requantize4_mve(hi, multiplier, y_zero),
                     vctp32q((uint32_t)(left - 4)));
    }
  }
}

// A narrow plane (fewer than eight output columns, where a row's passes
// leave lanes idle) whose padded plane the band holds whole, and a kernel
// of at most sixteen taps whose field spans at most 256 bytes of the band:
// each output pixel's whole field in one byte gather (VLDRB.S8, the
// field's offsets from its origin in `field`, lanes past the kernel at
// offset 0) and one VMLADAVA.S8 by the taps (zero past the kernel) from
// the base, four pixels in output order, across rows, then requantized
// together.  The pixels' origins (fields[p], in the band; the band's
// start past the last pixel) are the same for every channel.
static inline void ireegen_i8_depthwise_flat(const int8_t* const* fields,
                                             size_t pixels, uint8x16_t field,
                                             int8x16_t taps, int32_t base,
                                             int8_t* out,
                                             ireegen_i8_scale_t multiplier,
                                             int32_t y_zero) {
  for (size_t p = 0; p < pixels; p += 4, fields += 4, out += 4) {
    int32x4_t acc = vdupq_n_s32(
        vmladavaq_s8(base, vldrbq_gather_offset_s8(fields[0], field), taps));
    acc = vsetq_lane_s32(
        vmladavaq_s8(base, vldrbq_gather_offset_s8(fields[1], field), taps),
        acc, 1);
    acc = vsetq_lane_s32(
        vmladavaq_s8(base, vldrbq_gather_offset_s8(fields[2], field), taps),
        acc, 2);
    acc = vsetq_lane_s32(
        vmladavaq_s8(base, vldrbq_gather_offset_s8(fields[3], field), taps),
        acc, 3);
    const int32x4_t q = ireegen_i8_requantize4_mve(acc, multiplier, y_zero);
    if (pixels - p >= 4)
      vstrbq_s32(out, q);
    else
      vstrbq_p_s32(out, q, vctp32q((uint32_t)(pixels - p)));
  }
}

// The band loop for 3x3 of stride 1 and 2 (unrolled) and any other
// kernel, each its own function: inlined into the caller, gcc keeps the
// taps array in registers it then spills and copies per pixel; here the
// taps are memory, one load per use.
#define IREEGEN_I8_DEPTHWISE_BAND(name, stride_, kh_, kw_)                    \
  __attribute__((noinline)) static void name(                                 \
      const int8_t* band, const int32_t* taps, int32_t base, int8_t* out,     \
      size_t rows, size_t ow, size_t wp, size_t stride, size_t kh, size_t kw, \
      ireegen_i8_scale_t multiplier, int32_t y_zero) {                        \
    (void)stride;                                                             \
    (void)kh;                                                                 \
    (void)kw;                                                                 \
    ireegen_i8_depthwise_band(band, taps, base, out, rows, ow, wp, stride_,   \
                              kh_, kw_, multiplier, y_zero);                  \
  }
#ifndef __OPTIMIZE_SIZE__
IREEGEN_I8_DEPTHWISE_BAND(ireegen_i8_depthwise_band_3x3s1, 1, 3, 3)
IREEGEN_I8_DEPTHWISE_BAND(ireegen_i8_depthwise_band_3x3s2, 2, 3, 3)
#endif
IREEGEN_I8_DEPTHWISE_BAND(ireegen_i8_depthwise_band_any, stride, kh, kw)

// ireegen_i8_depthwise_conv (convolution.c) on MVE, pointers already
// offset; channel ch's multiplier is IREEGEN_I8_MULTIPLIER(ch) (dot.h); 0
// when a band of kh rows does not fit or the stride is past 4 (the caller's
// loops then do it).
static inline int ireegen_i8_depthwise_conv_mve(
    const int8_t* x, const int8_t* w, const int32_t* bias, int8_t* y, size_t n,
    size_t c, size_t h, size_t wd, size_t kh, size_t kw, size_t oh, size_t ow,
    size_t stride, size_t pad_top, size_t pad_left, int32_t x_zero,
    ireegen_i8_scale_t multiplier, const ireegen_i8_scale_t* per_channel,
    int32_t y_zero) {
  const size_t wp = (ow - 1) * stride + kw;  // the columns read
  if (stride > 4 || wp * kh > IREEGEN_I8_BAND_MAX ||
      kh * kw > IREEGEN_I8_TAPS_MAX)
    return 0;
  // Output rows per band: its (rows - 1) * stride + kh input rows fit.
  const size_t band_rows = (IREEGEN_I8_BAND_MAX / wp - kh) / stride + 1;
  int8_t band[IREEGEN_I8_BAND_MAX + IREEGEN_I8_BAND_SLACK];
  // A narrow plane in one band: ireegen_i8_depthwise_flat, from each
  // output pixel's origin in the band (four past the last: the band's
  // start) and the field's offsets from it.
  const size_t pixels = oh * ow;
  const int flat = ow < 8 && band_rows >= oh && pixels <= IREEGEN_I8_FLAT_MAX &&
                   kh * kw <= 16 && (kh - 1) * wp + kw - 1 <= UINT8_MAX;
  const int8_t* fields[IREEGEN_I8_FLAT_MAX + 4];
  uint8_t offsets[16] = {0};
  if (flat) {
    for (size_t p = 0; p < pixels + 4; ++p)
      fields[p] =
          band + (p < pixels ? (p / ow) * stride * wp + (p % ow) * stride : 0);
    for (size_t i = 0; i < kh * kw; ++i)
      offsets[i] = (uint8_t)((i / kw) * wp + i % kw);
  }
  const uint8x16_t field = vldrbq_u8(offsets);
  for (size_t b = 0; b < n; ++b) {
    for (size_t ch = 0; ch < c; ++ch) {
      const int8_t* plane = x + (b * c + ch) * h * wd;
      const int8_t* taps = w + ch * kh * kw;
      int8_t* out = y + (b * c + ch) * oh * ow;
      const ireegen_i8_scale_t channel_multiplier = IREEGEN_I8_MULTIPLIER(ch);
      // The taps as int32 in a local copy: the int8 output may alias the
      // int8 weights as far as C knows, which would reload them per pixel.
      int32_t t[IREEGEN_I8_TAPS_MAX], tap_sum = 0;
      for (size_t i = 0; i < kh * kw; ++i) tap_sum += t[i] = taps[i];
      const int32_t base = bias[ch] - x_zero * tap_sum;
      if (flat) {
        // The same rows for every channel: the padding filled once.
        ireegen_i8_fill_band(band, plane, -(ptrdiff_t)pad_top,
                             (oh - 1) * stride + kh, h, wd, wp, pad_left,
                             x_zero, b + ch > 0);
        ireegen_i8_depthwise_flat(
            fields, pixels, field,
            vldrbq_z_s8(taps, vctp8q((uint32_t)(kh * kw))), base, out,
            channel_multiplier, y_zero);
        continue;
      }
      for (size_t oy = 0; oy < oh; oy += band_rows) {
        const size_t rows = oh - oy < band_rows ? oh - oy : band_rows;
        ireegen_i8_fill_band(
            band, plane, (ptrdiff_t)(oy * stride) - (ptrdiff_t)pad_top,
            (rows - 1) * stride + kh, h, wd, wp, pad_left, x_zero, 0);
#ifndef __OPTIMIZE_SIZE__  // -Os (kernels.size.json) keeps the one loop
        if (kh == 3 && kw == 3 && stride == 1)
          ireegen_i8_depthwise_band_3x3s1(band, t, base, out + oy * ow, rows,
                                          ow, wp, 1, 3, 3, channel_multiplier,
                                          y_zero);
        else if (kh == 3 && kw == 3 && stride == 2)
          ireegen_i8_depthwise_band_3x3s2(band, t, base, out + oy * ow, rows,
                                          ow, wp, 2, 3, 3, channel_multiplier,
                                          y_zero);
        else
#endif
          ireegen_i8_depthwise_band_any(band, t, base, out + oy * ow, rows, ow,
                                        wp, stride, kh, kw, channel_multiplier,
                                        y_zero);
      }
    }
  }
  return 1;
}

#endif  // IREEGEN_I8_MVE_REQUANTIZE

#endif  // IREEGEN_INT8_DEPTHWISE_MVE_H_
