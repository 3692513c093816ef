// Fully connected on MVE (Helium: the Cortex-M55), on the weights as the
// match spec packs them (ireegen_int8.h): sixteen inputs at a time, one
// VMLADAVA.S8 per row doing sixteen 8-bit multiplies into the row's int32
// accumulator.  The input stays int8: sum (x - x_zero) * w is computed as
// sum x * w - x_zero * sum w, with sum w (VADDVA.S8) in the same pass, so
// no int16 column is built and any K fits (no stack column).
#ifndef IREEGEN_INT8_FULLY_CONNECTED_MVE_H_
#define IREEGEN_INT8_FULLY_CONNECTED_MVE_H_

#include <stddef.h>
#include <stdint.h>

#include "dot.h"
#include "mve.h"
#include "requantize.h"
#include "requantize_mve.h"

#if IREEGEN_I8_MVE

// Within 64 bytes of a packed group of four rows (sixteen inputs), the
// offset of row 0's weight for input l: chunk l / 4 (16 bytes each), byte
// l % 4 of the row's four.  Row r's offsets are these plus 4 r.
static const uint8_t ireegen_i8_fc_row_offsets[16] = {
    0, 1, 2, 3, 16, 17, 18, 19, 32, 33, 34, 35, 48, 49, 50, 51};

// The four rows of one packed group (k inputs, from g) with the int8 row x:
// out[r] = sum x * w_r, or with `sums` set out[r] = sum w_r (x unread).  Two
// passes, not one: VMLADAVA and VADDVA accumulate in even registers only, seven
// of them, too few for four dot products and four sums at once.
__attribute__((always_inline)) static inline void ireegen_i8_fc_group_mve(
    const int8_t* x, const int8_t* g, size_t k, int sums, int32_t out[4]) {
  int32_t a0 = 0, a1 = 0, a2 = 0, a3 = 0;
  size_t c = 0;
  if (((uintptr_t)g & 3) == 0 && k >= 16) {
    // Row r's sixteen weights are word r of each of four chunks: one
    // gather of four words per row, from the chunks' addresses plus 4 r
    // (the first gather steps the addresses by 64).  Pointers stepped, not
    // indexed: gcc then uses post-incrementing loads.
    uint32x4_t chunks = vaddq_n_u32(vshlq_n_u32(vidupq_n_u32(0, 4), 2),
                                    (uint32_t)(uintptr_t)g - 64);
    const int8_t* const end = x + (k & ~(size_t)15);
    for (; x != end; x += 16) {
      const int8x16_t w0 =
          vreinterpretq_s8_s32(vldrwq_gather_base_wb_s32(&chunks, 64));
      const int8x16_t w1 =
          vreinterpretq_s8_s32(vldrwq_gather_base_s32(chunks, 4));
      const int8x16_t w2 =
          vreinterpretq_s8_s32(vldrwq_gather_base_s32(chunks, 8));
      const int8x16_t w3 =
          vreinterpretq_s8_s32(vldrwq_gather_base_s32(chunks, 12));
      if (!sums) {
        const int8x16_t xv = vldrbq_s8(x);
        a0 = vmladavaq_s8(a0, xv, w0);
        a1 = vmladavaq_s8(a1, xv, w1);
        a2 = vmladavaq_s8(a2, xv, w2);
        a3 = vmladavaq_s8(a3, xv, w3);
      } else {
        a0 = vaddvaq_s8(a0, w0);
        a1 = vaddvaq_s8(a1, w1);
        a2 = vaddvaq_s8(a2, w2);
        a3 = vaddvaq_s8(a3, w3);
      }
    }
    c = k & ~(size_t)15;
    g += 4 * c;
    x -= c;
  }
  // The last k % 16 inputs, and every input of a group not on a word
  // boundary: byte gathers, the lanes past k neither loaded nor counted.
  const uint8x16_t offsets = vldrbq_u8(ireegen_i8_fc_row_offsets);
  for (; c < k; c += 16, g += 64) {
    const mve_pred16_t p = vctp8q((uint32_t)(k - c));
    const int8x16_t w0 = vldrbq_gather_offset_z_s8(g, offsets, p);
    const int8x16_t w1 = vldrbq_gather_offset_z_s8(g + 4, offsets, p);
    const int8x16_t w2 = vldrbq_gather_offset_z_s8(g + 8, offsets, p);
    const int8x16_t w3 = vldrbq_gather_offset_z_s8(g + 12, offsets, p);
    if (!sums) {
      const int8x16_t xv = vldrbq_z_s8(x + c, p);
      a0 = vmladavaq_s8(a0, xv, w0);
      a1 = vmladavaq_s8(a1, xv, w1);
      a2 = vmladavaq_s8(a2, xv, w2);
      a3 = vmladavaq_s8(a3, xv, w3);
    } else {
      a0 = vaddvaq_s8(a0, w0);
      a1 = vaddvaq_s8(a1, w1);
      a2 = vaddvaq_s8(a2, w2);
      a3 = vaddvaq_s8(a3, w3);
    }
  }
  out[0] = a0;
  out[1] = a1;
  out[2] = a2;
  out[3] = a3;
}

// One row of k weights in order (the last n % 4 rows): bias + sum (x -
// x_zero) * w.
static inline int32_t ireegen_i8_fc_row_mve(const int8_t* x, const int8_t* w,
                                            size_t k, int32_t bias,
                                            int32_t x_zero) {
  int32_t d = 0, s = 0;
  for (size_t c = 0; c < k; c += 16) {
    const mve_pred16_t p = vctp8q((uint32_t)(k - c));
    const int8x16_t wv = vldrbq_z_s8(w + c, p);
    d = vmladavaq_s8(d, vldrbq_z_s8(x + c, p), wv);
    s = vaddvaq_s8(s, wv);
  }
  return bias + d - x_zero * s;
}

// ireegen_i8_fully_connected (fully_connected.c) on MVE, pointers already
// offset; output o's multiplier is IREEGEN_I8_MULTIPLIER(o) (dot.h).
static inline void ireegen_i8_fully_connected_mve(
    const int8_t* x, const int8_t* w, const int32_t* bias, int8_t* y, size_t m,
    size_t n, size_t k, float multiplier, const float* per_channel,
    int32_t x_zero, int32_t y_zero) {
  const size_t k4 = (k + 3) & ~(size_t)3;
  const size_t groups = n & ~(size_t)3;
  // Group by group: the group's sums once, then its dot product with every
  // row of x.
  for (size_t o = 0; o < groups; o += 4) {
    const int8_t* g = w + o * k4;
    int32_t base[4];
    ireegen_i8_fc_group_mve(x, g, k, 1, base);
    for (size_t r = 0; r < 4; ++r) base[r] = bias[o + r] - x_zero * base[r];
#if IREEGEN_I8_MVE_FLOAT && defined(IREEGEN_I8_PER_CHANNEL)
    // The group's four multipliers, one per lane.
    const float32x4_t scales = vldrwq_f32(per_channel + o);
#endif
    for (size_t i = 0; i < m; ++i) {
      int32_t dot[4];
      ireegen_i8_fc_group_mve(x + i * k, g, k, 0, dot);
#if IREEGEN_I8_MVE_FLOAT
      const int32x4_t acc = vaddq_s32(vldrwq_s32(base), vldrwq_s32(dot));
#if defined(IREEGEN_I8_PER_CHANNEL)
      vstrbq_s32(y + i * n + o,
                 ireegen_i8_requantize4v_mve(acc, scales, y_zero));
#else
      vstrbq_s32(y + i * n + o,
                 ireegen_i8_requantize4_mve(acc, multiplier, y_zero));
#endif
#else
      for (size_t r = 0; r < 4; ++r)
        y[i * n + o + r] = ireegen_i8_requantize(
            base[r] + dot[r], IREEGEN_I8_MULTIPLIER(o + r), y_zero);
#endif
    }
  }
  for (size_t i = 0; i < m; ++i)
    for (size_t o = groups; o < n; ++o)
      y[i * n + o] = ireegen_i8_requantize(
          ireegen_i8_fc_row_mve(x + i * k, w + o * k4, k, bias[o], x_zero),
          IREEGEN_I8_MULTIPLIER(o), y_zero);
}

#endif  // IREEGEN_I8_MVE

#endif  // IREEGEN_INT8_FULLY_CONNECTED_MVE_H_
