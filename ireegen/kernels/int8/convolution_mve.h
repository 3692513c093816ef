// Convolution on MVE (Helium: the Cortex-M55), in convolution.c's order (a
// column per output pixel in the weights' (c, kh, kw) order, two pixels by
// two filters at a time), with two differences:
// - The column holds x itself, int8, x_zero where the field lies in the
//   padding: sum (x - x_zero) * w = sum x * w - x_zero * sum w, so the dot
//   products are VMLADAVA.S8, sixteen multiplies each, and each filter's
//   bias - x_zero * sum w is tabled once per call.
// - The column is gathered eight values at a time: the offsets of a pixel's
//   receptive field from its first value are the same for every pixel, so
//   they are tabled once per call, and a pixel whose field lies inside the
//   image takes one VLDRB gather and one narrowing store per eight values.
//   A pixel whose field reaches into the padding is filled value by value.
#ifndef IREEGEN_INT8_CONVOLUTION_MVE_H_
#define IREEGEN_INT8_CONVOLUTION_MVE_H_

#include <stddef.h>
#include <stdint.h>

#include "dot.h"
#include "mve.h"
#include "requantize_mve.h"

#if IREEGEN_I8_MVE_REQUANTIZE

// The longest column taken here (two columns and the gather's tables:
// 3.75 KiB of stack), and the filters whose bases and factors are tabled at
// once (the columns are gathered again for each further 32 filters, a small
// cost next to the filters' dot products).
#define IREEGEN_I8_MVE_COLUMN_MAX 640
#define IREEGEN_I8_MVE_FILTERS 32

// A chunk's tables, in the sums' lane order (ireegen_i8_triples_mve): each
// filter's base and factor twice, and two filters more (a last odd filter's
// vector reads them).  The factors are a row of floats (the multipliers),
// or with TFLM's rounding two rows of int32, the multipliers and the shifts,
// IREEGEN_I8_MVE_ROW apart.
#define IREEGEN_I8_MVE_ROW (2 * IREEGEN_I8_MVE_FILTERS + 4)
#if defined(IREEGEN_I8_TFLM)
typedef int32_t ireegen_i8_factor_t;
#define IREEGEN_I8_MVE_ROWS 2
static inline void ireegen_i8_factor_set(int32_t* table, size_t lane,
                                         ireegen_i8_scale_t s) {
  table[lane] = s.multiplier;
  table[IREEGEN_I8_MVE_ROW + lane] = s.shift;
}
#else
typedef float ireegen_i8_factor_t;
#define IREEGEN_I8_MVE_ROWS 1
static inline void ireegen_i8_factor_set(float* table, size_t lane,
                                         float multiplier) {
  table[lane] = multiplier;
}
#endif

// The column of output pixel (oy, ox) at `column` (length c * kh * kw).
// Value e of the column is at offsets[e] from the field's first value, in
// row rows[e] and column cols[e] of the field (the tables of the call).
__attribute__((always_inline)) static inline void ireegen_i8_gather_column(
    int8_t* column, const int8_t* image, const uint16_t* offsets,
    const uint8_t* rows, const uint8_t* cols, size_t length, size_t c, size_t h,
    size_t wd, size_t kh, size_t kw, size_t oy, size_t ox, size_t stride,
    size_t pad_top, size_t pad_left, int32_t x_zero) {
  const ptrdiff_t iy0 = (ptrdiff_t)(oy * stride) - (ptrdiff_t)pad_top;
  const ptrdiff_t ix0 = (ptrdiff_t)(ox * stride) - (ptrdiff_t)pad_left;
  if (iy0 >= 0 && ix0 >= 0 && (size_t)iy0 + kh <= h && (size_t)ix0 + kw <= wd) {
    const int8_t* origin = image + (size_t)iy0 * wd + (size_t)ix0;
    const size_t e = length & ~(size_t)7;
    if (e) {
      // In assembler, so that the loop's pointers stay in registers (in
      // C, inlined into the convolution, gcc 12 reloaded them each pass);
      // a widening load's or narrowing store's written-back base is a low
      // register ("l").
      const uint16_t* o = offsets;
      int8_t* d = column;
      uint16x8_t q;
      int16x8_t v;
      // clang-format off
      __asm__ volatile(
          "wls lr, %[groups], 2f\n"
          "1:\n\t"
          "vldrh.u16 %q[q], [%[o]], #16\n\t"
          "vldrb.s16 %q[v], [%[origin], %q[q]]\n\t"
          "vstrb.16 %q[v], [%[d]], #8\n\t"
          "le lr, 1b\n"
          "2:\n"
          : [o] "+r"(o), [d] "+l"(d), [q] "=&w"(q), [v] "=&w"(v)
          : [origin] "r"(origin), [groups] "r"(e / 8)
          : "memory", "lr");
      // clang-format on
    }
    if (e < length) {
      const mve_pred16_t p = vctp16q((uint32_t)(length - e));
      vstrbq_p_s16(
          column + e,
          vldrbq_gather_offset_z_s16(origin, vldrhq_z_u16(offsets + e, p), p),
          p);
    }
    return;
  }
  if (h < 32768 && wd < 32768) {
    // A field reaching into the padding, eight values at a time: value e
    // lies in the image when its row iy0 + rows[e] is in [0, h) and its
    // column ix0 + cols[e] in [0, wd) (compared as 16-bit unsigned, which
    // a negative wraps past), and is gathered from the field's first value
    // under that predicate (the address outside the image is never read);
    // the other lanes take x_zero.
    const int8_t* origin =
        (const int8_t*)((uintptr_t)image +
                        (uintptr_t)(iy0 * (ptrdiff_t)wd + ix0));
    const uint16x8_t height = vdupq_n_u16((uint16_t)h);
    const uint16x8_t width = vdupq_n_u16((uint16_t)wd);
    const int16x8_t pad = vdupq_n_s16((int16_t)x_zero);
    size_t e = length & ~(size_t)7;
    if (e) {
      // The whole groups of eight in assembler, as above.
      const uint16_t* o = offsets;
      const uint8_t *r = rows, *k = cols;
      int8_t* d = column;
      uint16x8_t q, qr, qc;
      int16x8_t v;
      // clang-format off
      __asm__ volatile(
          "wls lr, %[groups], 2f\n"
          "1:\n\t"
          "vldrb.u16 %q[qr], [%[r]], #8\n\t"
          "vldrb.u16 %q[qc], [%[k]], #8\n\t"
          "vadd.i16 %q[qr], %q[qr], %[iy0]\n\t"
          "vadd.i16 %q[qc], %q[qc], %[ix0]\n\t"
          "vcmp.u16 hi, %q[height], %q[qr]\n\t"
          "vpst\n\t"
          "vcmpt.u16 hi, %q[width], %q[qc]\n\t"
          "vldrh.u16 %q[q], [%[o]], #16\n\t"
          "vpst\n\t"
          "vldrbt.s16 %q[v], [%[origin], %q[q]]\n\t"
          "vpsel %q[v], %q[v], %q[pad]\n\t"
          "vstrb.16 %q[v], [%[d]], #8\n\t"
          "le lr, 1b\n"
          "2:\n"
          : [o] "+r"(o), [r] "+l"(r), [k] "+l"(k), [d] "+l"(d), [q] "=&w"(q),
            [qr] "=&w"(qr), [qc] "=&w"(qc), [v] "=&w"(v)
          : [origin] "r"(origin), [groups] "r"(e / 8), [iy0] "r"(iy0),
            [ix0] "r"(ix0), [height] "w"(height), [width] "w"(width),
            [pad] "w"(pad)
          : "memory", "lr");
      // clang-format on
    }
    for (; e < length; e += 8) {
      const mve_pred16_t tail = vctp16q((uint32_t)(length - e));
      const uint16x8_t iy =
          vaddq_n_u16(vldrbq_z_u16(rows + e, tail), (uint16_t)iy0);
      const uint16x8_t ix =
          vaddq_n_u16(vldrbq_z_u16(cols + e, tail), (uint16_t)ix0);
      mve_pred16_t inside = vcmphiq_m_u16(height, iy, tail);
      inside = vcmphiq_m_u16(width, ix, inside);
      const int16x8_t v = vldrbq_gather_offset_z_s16(
          origin, vldrhq_z_u16(offsets + e, inside), inside);
      vstrbq_p_s16(column + e, vpselq_s16(v, pad, inside), tail);
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
                      ? plane[(size_t)iy * wd + (size_t)ix]
                      : (int8_t)x_zero;
      }
    }
  }
}

// Two pixels' columns c0, c1 by the filters w0, w1 (all `length` long):
// {b0 + c0 . w0, b0 + c1 . w0, b1 + c0 . w1, b1 + c1 . w1}.
static inline int32x4_t ireegen_i8_dot2x2_s8(const int8_t* c0, const int8_t* c1,
                                             const int8_t* w0, const int8_t* w1,
                                             size_t length, int32_t b0,
                                             int32_t b1) {
  int32_t a00 = b0, a10 = b0, a01 = b1, a11 = b1;
  // Pointers stepped, not indexed: gcc then uses post-incrementing loads.
  const int8_t* const end = c0 + (length & ~(size_t)15);
  for (; c0 != end; c0 += 16, c1 += 16, w0 += 16, w1 += 16) {
    const int8x16_t x0 = vldrbq_s8(c0), x1 = vldrbq_s8(c1);
    const int8x16_t v0 = vldrbq_s8(w0), v1 = vldrbq_s8(w1);
    a00 = vmladavaq_s8(a00, x0, v0);
    a10 = vmladavaq_s8(a10, x1, v0);
    a01 = vmladavaq_s8(a01, x0, v1);
    a11 = vmladavaq_s8(a11, x1, v1);
  }
  if (length & 15) {
    const mve_pred16_t p = vctp8q((uint32_t)(length & 15));
    const int8x16_t x0 = vldrbq_z_s8(c0, p), x1 = vldrbq_z_s8(c1, p);
    const int8x16_t v0 = vldrbq_z_s8(w0, p), v1 = vldrbq_z_s8(w1, p);
    a00 = vmladavaq_s8(a00, x0, v0);
    a10 = vmladavaq_s8(a10, x1, v0);
    a01 = vmladavaq_s8(a01, x0, v1);
    a11 = vmladavaq_s8(a11, x1, v1);
  }
  int32x4_t acc = vdupq_n_s32(a00);
  acc = vsetq_lane_s32(a10, acc, 1);
  acc = vsetq_lane_s32(a01, acc, 2);
  return vsetq_lane_s32(a11, acc, 3);
}

// What ireegen_i8_triples_mve reads and steps, in memory: its loop needs
// every general register but one for the dot products.
struct ireegen_i8_triples {
  const int8_t* c0;  // the two pixels' columns
  const int8_t* c1;
  uint32_t blocks;       // length / 16
  uint32_t length;       // of a column and a filter
  const int32_t* pairs;  // each filter's base twice, stepped
  int32_t* sums;         // the dot products, stepped
  uint32_t triples;      // left to do
  uint32_t tail;         // length % 16
};
// The offsets the assembler below reads the fields at.
_Static_assert(offsetof(struct ireegen_i8_triples, c0) == 0, "c0");
_Static_assert(offsetof(struct ireegen_i8_triples, c1) == 4, "c1");
_Static_assert(offsetof(struct ireegen_i8_triples, blocks) == 8, "blocks");
_Static_assert(offsetof(struct ireegen_i8_triples, length) == 12, "length");
_Static_assert(offsetof(struct ireegen_i8_triples, pairs) == 16, "pairs");
_Static_assert(offsetof(struct ireegen_i8_triples, sums) == 20, "sums");
_Static_assert(offsetof(struct ireegen_i8_triples, triples) == 24, "triples");
_Static_assert(offsetof(struct ireegen_i8_triples, tail) == 28, "tail");

// The pixel pair's triples of filters (from w, t->triples of them)
// dot-multiplied, sixteen values a pass and the last length % 16 under a
// tail predicate, in assembler: in C, gcc 12 spilled and reloaded the
// loop's state around each triple's sixteen-value loop.  VMLADAVA.S8 from
// the bases; the six sums go to t->sums in the lanes' order of
// ireegen_i8_sums_mve: filter o's two pixels, then o + 1's, o + 2's.
static inline void ireegen_i8_triples_mve(const int8_t* w,
                                          struct ireegen_i8_triples* t) {
  int32_t a0, a1, a2, a3, a4, a5;
  const int8_t *p0, *p1, *w2;
  const void* state = t;
  register uint32_t count __asm__("lr");
  int8x16_t x0, x1, v0, v1;
  // clang-format off
  __asm__ volatile(
      "2:\n\t"
      "ldr %[p0], [%[t], #0]\n\t"
      "ldr %[p1], [%[t], #4]\n\t"
      "ldr %[count], [%[t], #8]\n\t"
      "ldr %[w2], [%[t], #16]\n\t"
      "ldrd %[a0], %[a1], [%[w2]]\n\t"
      "ldrd %[a2], %[a3], [%[w2], #8]\n\t"
      "ldrd %[a4], %[a5], [%[w2], #16]\n\t"
      "adds %[w2], %[w2], #24\n\t"
      "str %[w2], [%[t], #16]\n\t"
      "ldr %[w2], [%[t], #12]\n\t"
      "push {%[t]}\n\t"
      "add %[t], %[w], %[w2]\n\t"
      "add %[w2], %[t], %[w2]\n\t"
      "wls lr, %[count], 3f\n"
      "1:\n\t"
      "vldrb.u8 %q[x0], [%[p0]], #16\n\t"
      "vldrb.u8 %q[v0], [%[w]], #16\n\t"
      "vldrb.u8 %q[x1], [%[p1]], #16\n\t"
      "vmladava.s8 %[a0], %q[x0], %q[v0]\n\t"
      "vldrb.u8 %q[v1], [%[t]], #16\n\t"
      "vmladava.s8 %[a1], %q[x1], %q[v0]\n\t"
      "vldrb.u8 %q[v0], [%[w2]], #16\n\t"
      "vmladava.s8 %[a2], %q[x0], %q[v1]\n\t"
      "vmladava.s8 %[a3], %q[x1], %q[v1]\n\t"
      "vmladava.s8 %[a4], %q[x0], %q[v0]\n\t"
      "vmladava.s8 %[a5], %q[x1], %q[v0]\n\t"
      "le lr, 1b\n"
      // The last length % 16 values under a tail predicate (the lanes
      // past it loaded as zeros), the state's address from the stack.
      "3:\n\t"
      "ldr lr, [sp]\n\t"
      "ldr lr, [lr, #28]\n\t"
      "cmp lr, #0\n\t"
      "beq 4f\n\t"
      "vctp.8 lr\n\t"
      "vpstttt\n\t"
      "vldrbt.u8 %q[x0], [%[p0]]\n\t"
      "vldrbt.u8 %q[v0], [%[w]]\n\t"
      "vldrbt.u8 %q[x1], [%[p1]]\n\t"
      "vldrbt.u8 %q[v1], [%[t]]\n\t"
      "vmladava.s8 %[a0], %q[x0], %q[v0]\n\t"
      "vmladava.s8 %[a1], %q[x1], %q[v0]\n\t"
      "vmladava.s8 %[a2], %q[x0], %q[v1]\n\t"
      "vmladava.s8 %[a3], %q[x1], %q[v1]\n\t"
      "vpst\n\t"
      "vldrbt.u8 %q[v0], [%[w2]]\n\t"
      "vmladava.s8 %[a4], %q[x0], %q[v0]\n\t"
      "vmladava.s8 %[a5], %q[x1], %q[v0]\n\t"
      "add %[w2], %[w2], lr\n"
      "4:\n\t"
      "mov %[w], %[w2]\n\t"
      "pop {%[t]}\n\t"
      "ldr %[p0], [%[t], #20]\n\t"
      "strd %[a0], %[a1], [%[p0]], #8\n\t"
      "strd %[a2], %[a3], [%[p0]], #8\n\t"
      "strd %[a4], %[a5], [%[p0]], #8\n\t"
      "str %[p0], [%[t], #20]\n\t"
      "ldr %[a0], [%[t], #24]\n\t"
      "subs %[a0], %[a0], #1\n\t"
      "str %[a0], [%[t], #24]\n\t"
      "bne 2b\n\t"
      : [a0] "=&Te"(a0), [a1] "=&Te"(a1), [a2] "=&Te"(a2), [a3] "=&Te"(a3),
        [a4] "=&Te"(a4), [a5] "=&Te"(a5), [p0] "=&r"(p0), [p1] "=&r"(p1),
        [w2] "=&r"(w2), [w] "+r"(w), [t] "+r"(state), [count] "=&r"(count),
        [x0] "=&w"(x0), [x1] "=&w"(x1), [v0] "=&w"(v0), [v1] "=&w"(v1)
      :
      : "memory", "cc");
  // clang-format on
  (void)a0, (void)a1, (void)a2, (void)a3, (void)a4, (void)a5;
  (void)p0, (void)p1, (void)w2, (void)count;
  (void)x0, (void)x1, (void)v0, (void)v1;
}

// The sums of filters [0, f) of a pixel pair (two lanes a filter, in
// ireegen_i8_triples_mve's order) requantized and stored, four lanes at a
// time: filters o and o + 1 go to {0, 1, plane, plane + 1} from filter o's
// pixel, under `pixels` (lanes 1 and 3 off for a pair's missing second
// pixel), lanes 2 and 3 off for a last odd filter.  With TFLM's rounding,
// `right_only` (a constant of each copy) when the chunk's every shift is
// below 0: the scaling is requantize_mve.h's without the left shift, and
// the negative fix-up takes the sign of the sum (the product VQRDMULH makes
// of it by a positive multiplier has that sign or is 0, and a 0 lowered by
// one rounds back to 0 when shifted right by at least 1).  Then the zero
// point added saturating and the clamp to int8 as a saturating shift left by
// 24 and back.  The whole pairs of filters in assembler (in C, inlined into
// the convolution, gcc 12 reloaded the loop's pointers each pass), scaled
// by IREEGEN_I8_SUMS_SCALE.
#define IREEGEN_I8_MVE_ROW_BYTES (4 * IREEGEN_I8_MVE_ROW)
#if defined(IREEGEN_I8_TFLM)
#define IREEGEN_I8_SUMS_SCALE            \
  "vldrw.u32 %q[r], [%[s], %[row]]\n\t"  \
  "vldrw.u32 %q[m], [%[s]], #16\n\t"     \
  "vshr.s32 %q[t], %q[a], #31\n\t"       \
  "vqrdmulh.s32 %q[a], %q[a], %q[m]\n\t" \
  "vadd.i32 %q[a], %q[a], %q[t]\n\t"     \
  "vrshl.s32 %q[a], %q[a], %q[r]\n\t"
#else
#define IREEGEN_I8_SUMS_SCALE        \
  "vldrw.u32 %q[m], [%[s]], #16\n\t" \
  "vcvt.f32.s32 %q[a], %q[a]\n\t"    \
  "vmul.f32 %q[a], %q[a], %q[m]\n\t" \
  "vcvtn.s32.f32 %q[a], %q[a]\n\t"
#endif
__attribute__((always_inline)) static inline void ireegen_i8_sums_mve(
    const int32_t* sums, const ireegen_i8_factor_t* scales, size_t f,
    int8_t* dst, uint32_t plane, mve_pred16_t pixels, int32_t y_zero,
    const int right_only) {
  const uint32x4_t block = {0, 1, plane, plane + 1};
  size_t o = 0;
#if defined(IREEGEN_I8_TFLM)
  if (right_only)
#endif
  {
    if (f >= 2) {
      const int32_t* a = sums;
      const ireegen_i8_factor_t* s = scales;
      int8_t* d = dst;
      int32x4_t qa, qm, qr, qt;
      // clang-format off
      __asm__ volatile(
          "vmsr p0, %[pixels]\n\t"
          "wls lr, %[pairs], 2f\n"
          "1:\n\t"
          "vldrw.u32 %q[a], [%[sums]], #16\n\t"
          IREEGEN_I8_SUMS_SCALE
          "vqadd.s32 %q[a], %q[a], %[y_zero]\n\t"
          "vqshl.s32 %q[a], %q[a], #24\n\t"
          "vshr.s32 %q[a], %q[a], #24\n\t"
          "vpst\n\t"
          "vstrbt.32 %q[a], [%[d], %q[block]]\n\t"
          "add %[d], %[d], %[step]\n\t"
          "le lr, 1b\n"
          "2:\n"
          : [sums] "+r"(a), [s] "+r"(s), [d] "+r"(d), [a] "=&w"(qa),
            [m] "=&w"(qm), [r] "=&w"(qr), [t] "=&w"(qt)
          : [pairs] "r"(f / 2), [pixels] "r"((uint32_t)pixels),
            [y_zero] "r"(y_zero), [block] "w"(block), [step] "r"(2 * plane),
            [row] "i"(IREEGEN_I8_MVE_ROW_BYTES)
          : "memory", "lr");
      // clang-format on
      (void)qm, (void)qr, (void)qt;
      o = f & ~(size_t)1;
    }
  }
  for (; o < f; o += 2) {
    const int32x4_t acc = vldrwq_s32(sums + 2 * o);
#if defined(IREEGEN_I8_TFLM)
    const int32x4_t m = vldrwq_s32(scales + 2 * o);
    const int32x4_t shift = vldrwq_s32(scales + IREEGEN_I8_MVE_ROW + 2 * o);
    int32x4_t v;
    if (right_only) {
      v = vaddq_s32(vqrdmulhq_s32(acc, m), vshrq_n_s32(acc, 31));
      v = vrshlq_s32(v, shift);
    } else {
      ireegen_i8_scales4_t s = {m, vmaxq_s32(shift, vdupq_n_s32(0)),
                                vminq_s32(shift, vdupq_n_s32(0))};
      v = ireegen_i8_scale4v_mve(acc, s);
    }
#else
    (void)right_only;
    const int32x4_t v = vcvtnq_s32_f32(
        vmulq_f32(vcvtq_f32_s32(acc), vldrwq_f32(scales + 2 * o)));
#endif
    const int32x4_t q =
        vshrq_n_s32(vqshlq_n_s32(vqaddq_n_s32(v, y_zero), 24), 24);
    vstrbq_scatter_offset_p_s32(dst + o * plane, block, q,
                                o + 1 < f ? pixels : pixels & 0x00FF);
  }
}
#undef IREEGEN_I8_SUMS_SCALE

// bias[o] - x_zero * sum of filter o's weights, for f filters.
static inline void ireegen_i8_filter_bases(const int8_t* w, size_t length,
                                           size_t f, const int32_t* bias,
                                           int32_t x_zero, int32_t* base) {
  for (size_t o = 0; o < f; ++o, w += length) {
    int32_t sum = 0;
    for (size_t i = 0; i < length; i += 16)
      sum =
          vaddvaq_p_s8(sum, vldrbq_z_s8(w + i, vctp8q((uint32_t)(length - i))),
                       vctp8q((uint32_t)(length - i)));
    base[o] = bias[o] - x_zero * sum;
  }
}

// ireegen_i8_convolution (convolution.c) on MVE, pointers already offset; 0
// when a column is longer than IREEGEN_I8_MVE_COLUMN_MAX or a field spans
// more than 16-bit offsets reach (the caller's loops then do it).  One
// multiplier, or with IREEGEN_I8_PER_CHANNEL filter o's per_channel[o].
static __attribute__((noinline)) int ireegen_i8_convolution_mve(
    const int8_t* x, const int8_t* w, const int32_t* bias, int8_t* y, size_t n,
    size_t c, size_t h, size_t wd, size_t f, size_t kh, size_t kw, size_t oh,
    size_t ow, size_t stride, size_t pad_top, size_t pad_left, int32_t x_zero,
    ireegen_i8_scale_t multiplier, const ireegen_i8_scale_t* per_channel,
    int32_t y_zero) {
  const size_t length = c * kh * kw;
  if (length > IREEGEN_I8_MVE_COLUMN_MAX || kh > UINT8_MAX || kw > UINT8_MAX ||
      (c - 1) * h * wd + (kh - 1) * wd + (kw - 1) > UINT16_MAX)
    return 0;
  uint16_t offsets[IREEGEN_I8_MVE_COLUMN_MAX];
  uint8_t rows[IREEGEN_I8_MVE_COLUMN_MAX], cols[IREEGEN_I8_MVE_COLUMN_MAX];
  size_t e = 0;
  for (size_t ci = 0; ci < c; ++ci)
    for (size_t ky = 0; ky < kh; ++ky)
      for (size_t kx = 0; kx < kw; ++kx, ++e) {
        offsets[e] = (uint16_t)(ci * h * wd + ky * wd + kx);
        rows[e] = (uint8_t)ky;
        cols[e] = (uint8_t)kx;
      }
  int8_t c0[IREEGEN_I8_MVE_COLUMN_MAX], c1[IREEGEN_I8_MVE_COLUMN_MAX];
  // Each filter's base twice (ireegen_i8_triples_mve's accumulators start
  // from them), the sums, and the factor table, in the sums' lane order.
  int32_t pairs[IREEGEN_I8_MVE_ROW], sums[IREEGEN_I8_MVE_ROW];
  ireegen_i8_factor_t scales[IREEGEN_I8_MVE_ROWS * IREEGEN_I8_MVE_ROW];
  const uint32_t plane = (uint32_t)(oh * ow);
  // Filters in chunks of IREEGEN_I8_MVE_FILTERS, each chunk's tables first.
  for (size_t first = 0; first < f; first += IREEGEN_I8_MVE_FILTERS) {
    const size_t count =
        f - first < IREEGEN_I8_MVE_FILTERS ? f - first : IREEGEN_I8_MVE_FILTERS;
    const int8_t* filters = w + first * length;
    ireegen_i8_filter_bases(filters, length, count, bias + first, x_zero,
                            pairs);
    int right_only = 1;
    for (size_t o = count; o-- > 0;) {
      const ireegen_i8_scale_t scale = IREEGEN_I8_MULTIPLIER(first + o);
#if defined(IREEGEN_I8_TFLM)
      right_only &= scale.shift < 0;
#endif
      pairs[2 * o] = pairs[2 * o + 1] = pairs[o];
      ireegen_i8_factor_set(scales, 2 * o, scale);
      ireegen_i8_factor_set(scales, 2 * o + 1, scale);
    }
    for (size_t lane = 2 * count; lane < IREEGEN_I8_MVE_ROW; ++lane) {
      pairs[lane] = 0;
      ireegen_i8_factor_set(scales, lane, IREEGEN_I8_NO_SCALE);
    }
    for (size_t b = 0; b < n; ++b) {
      const int8_t* image = x + b * c * h * wd;
      int8_t* out = y + (b * f + first) * oh * ow;
      for (size_t oy = 0; oy < oh; ++oy) {
        for (size_t ox = 0; ox < ow; ox += 2) {
          // A last odd pixel goes through as a pair with itself, its second
          // lanes not stored.
          const size_t ox1 = ox + 1 < ow ? ox + 1 : ox;
          ireegen_i8_gather_column(c0, image, offsets, rows, cols, length, c, h,
                                   wd, kh, kw, oy, ox, stride, pad_top,
                                   pad_left, x_zero);
          if (ox1 != ox)
            ireegen_i8_gather_column(c1, image, offsets, rows, cols, length, c,
                                     h, wd, kh, kw, oy, ox1, stride, pad_top,
                                     pad_left, x_zero);
          const int8_t* second = ox1 != ox ? c1 : c0;
          // Lanes 0, 2 (pixel ox) always; 1, 3 (pixel ox + 1) when it
          // exists.
          const mve_pred16_t pixels = ox1 != ox ? 0xFFFF : 0x0F0F;
          int8_t* dst = out + oy * ow + ox;
          if (count >= 3) {
            // Filters three at a time, and when count % 3 filters are left,
            // the last three once more (the sums of the two it repeats are
            // the same).  Field by field: an initializer would zero the
            // struct with a memset call per pixel pair.
            struct ireegen_i8_triples t;
            t.c0 = c0;
            t.c1 = second;
            t.blocks = (uint32_t)(length / 16);
            t.length = (uint32_t)length;
            t.pairs = pairs;
            t.sums = sums;
            t.triples = (uint32_t)(count / 3);
            t.tail = (uint32_t)(length % 16);
            ireegen_i8_triples_mve(filters, &t);
            if (count % 3) {
              const size_t last = count - 3;
              t.pairs = pairs + 2 * last;
              t.sums = sums + 2 * last;
              t.triples = 1;
              ireegen_i8_triples_mve(filters + last * length, &t);
            }
          } else {
            // One or two filters: their pair of dot products each.
            const int odd = count == 1;
            const int32x4_t acc = ireegen_i8_dot2x2_s8(
                c0, second, filters, odd ? filters : filters + length, length,
                pairs[0], pairs[odd ? 0 : 2]);
            vstrwq_s32(sums, acc);
          }
          if (right_only)
            ireegen_i8_sums_mve(sums, scales, count, dst, plane, pixels, y_zero,
                                1);
          else
            ireegen_i8_sums_mve(sums, scales, count, dst, plane, pixels, y_zero,
                                0);
        }
      }
    }
  }
  return 1;
}

#endif  // IREEGEN_I8_MVE_REQUANTIZE

#endif  // IREEGEN_INT8_CONVOLUTION_MVE_H_
