// Fully connected on MVE (Helium: the Cortex-M55), on the weights as the
// match spec packs them (ireegen_int8.h): sixteen inputs at a time, each
// of a group's four rows one VMLADAVA.S8 doing sixteen 8-bit multiplies
// into the row's int32 accumulator.  The input stays int8: sum (x - x_zero)
// * w is computed as sum x * w + (-x_zero) * sum w, the second term a
// second VMLADAVA.S8 by -x_zero in every lane into the same accumulator, so
// the weights are read once, no int16 column is built and any K fits.
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

// acc[r] += sum (x ^ flip) * w_r + c * sum w_r over `blocks` blocks of
// sixteen inputs of one packed group (g on a word boundary).  Row r's
// sixteen weights are word r of each of four chunks: one gather of four
// words per row, from the chunks' addresses plus 4 r (the first gather
// steps the addresses by 64).  Each row takes two VMLADAVA.S8 into its one
// accumulator, by the input and by c in every lane, so one pass over the
// weights does both terms (VMLADAVA accumulates in even registers only,
// seven of them: too few for four dot products and four sums).  In
// assembler: gcc 12 copies the address vector and reloads the input
// pointer from the stack in every pass; this is 15 instructions a pass.
static inline void ireegen_i8_fc_blocks_mve(const int8_t* x, const int8_t* g,
                                            size_t blocks, int8x16_t flip,
                                            int8x16_t c, int32_t acc[4]) {
  uint32x4_t chunks = vaddq_n_u32(vshlq_n_u32(vidupq_n_u32(0, 4), 2),
                                  (uint32_t)(uintptr_t)g - 64);
  int32_t a0 = acc[0], a1 = acc[1], a2 = acc[2], a3 = acc[3];
  int8x16_t xv, w0, w1;
  // clang-format off
  __asm__ volatile(
      "dls lr, %[blocks]\n"
      "1:\n\t"
      "vldrw.u32 %q[w0], [%q[chunks], #64]!\n\t"
      "vldrb.u8 %q[xv], [%[x]], #16\n\t"
      "vldrw.u32 %q[w1], [%q[chunks], #4]\n\t"
      "veor %q[xv], %q[xv], %q[flip]\n\t"
      "vmladava.s8 %[a0], %q[xv], %q[w0]\n\t"
      "vmladava.s8 %[a0], %q[c], %q[w0]\n\t"
      "vldrw.u32 %q[w0], [%q[chunks], #8]\n\t"
      "vmladava.s8 %[a1], %q[xv], %q[w1]\n\t"
      "vmladava.s8 %[a1], %q[c], %q[w1]\n\t"
      "vldrw.u32 %q[w1], [%q[chunks], #12]\n\t"
      "vmladava.s8 %[a2], %q[xv], %q[w0]\n\t"
      "vmladava.s8 %[a2], %q[c], %q[w0]\n\t"
      "vmladava.s8 %[a3], %q[xv], %q[w1]\n\t"
      "vmladava.s8 %[a3], %q[c], %q[w1]\n\t"
      "le lr, 1b\n\t"
      : [a0] "+Te"(a0), [a1] "+Te"(a1), [a2] "+Te"(a2), [a3] "+Te"(a3),
        [x] "+r"(x), [chunks] "+w"(chunks), [xv] "=&w"(xv), [w0] "=&w"(w0),
        [w1] "=&w"(w1)
      : [blocks] "r"(blocks), [flip] "w"(flip), [c] "w"(c)
      : "lr", "memory");
  // clang-format on
  acc[0] = a0;
  acc[1] = a1;
  acc[2] = a2;
  acc[3] = a3;
}

// The four rows of one packed group (k inputs, from g) with the int8 row x:
// out[r] = sum (x - x_zero) * w_r.  With c = -x_zero in [-127, 127] the
// blocks compute sum x * w + c * sum w; x_zero = -128 (c = 128, past int8:
// a ReLU's output) takes x ^ 0xFF = -x - 1 and c = -127, which is
// -(sum (x + 128) * w), negated after.
__attribute__((always_inline)) static inline void ireegen_i8_fc_group_mve(
    const int8_t* x, const int8_t* g, size_t k, int32_t x_zero,
    int32_t out[4]) {
  int32_t acc[4] = {0, 0, 0, 0};
  size_t c = 0;
  if (((uintptr_t)g & 3) == 0 && k >= 16) {
    const int negate = x_zero == -128;
    ireegen_i8_fc_blocks_mve(x, g, k / 16, vdupq_n_s8(negate ? -1 : 0),
                             vdupq_n_s8((int8_t)(negate ? -127 : -x_zero)),
                             acc);
    if (negate)
      for (size_t r = 0; r < 4; ++r) acc[r] = -acc[r];
    c = k & ~(size_t)15;
    g += 4 * c;
  }
  // The last k % 16 inputs, and every input of a group not on a word
  // boundary: byte gathers, the lanes past k neither loaded nor counted.
  const uint8x16_t offsets = vldrbq_u8(ireegen_i8_fc_row_offsets);
  for (; c < k; c += 16, g += 64) {
    const mve_pred16_t p = vctp8q((uint32_t)(k - c));
    const int8x16_t xv = vldrbq_z_s8(x + c, p);
    for (size_t r = 0; r < 4; ++r) {
      const int8x16_t wv = vldrbq_gather_offset_z_s8(g + 4 * r, offsets, p);
      acc[r] += vmladavq_s8(xv, wv) - x_zero * vaddvq_s8(wv);
    }
  }
  for (size_t r = 0; r < 4; ++r) out[r] = acc[r];
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
    size_t n, size_t k, ireegen_i8_scale_t multiplier,
    const ireegen_i8_scale_t* per_channel, int32_t x_zero, int32_t y_zero) {
  const size_t k4 = (k + 3) & ~(size_t)3;
  const size_t groups = n & ~(size_t)3;
  // Group by group, each row of x through the group's four rows.
  for (size_t o = 0; o < groups; o += 4) {
    const int8_t* g = w + o * k4;
    const int32x4_t base = vldrwq_s32(bias + o);
#if IREEGEN_I8_MVE_REQUANTIZE && defined(IREEGEN_I8_PER_CHANNEL)
    // The group's four factors, one per lane.
    const ireegen_i8_scales4_t scales =
        ireegen_i8_scales4_load(per_channel + o);
#endif
    for (size_t i = 0; i < m; ++i) {
      int32_t dot[4];
      ireegen_i8_fc_group_mve(x + i * k, g, k, x_zero, dot);
#if IREEGEN_I8_MVE_REQUANTIZE
      const int32x4_t acc = vaddq_s32(base, vldrwq_s32(dot));
#if defined(IREEGEN_I8_PER_CHANNEL)
      vstrbq_s32(y + i * n + o,
                 ireegen_i8_requantize4v_mve(acc, scales, y_zero));
#else
      vstrbq_s32(y + i * n + o,
                 ireegen_i8_requantize4_mve(acc, multiplier, y_zero));
#endif
#else
      (void)base;
      for (size_t r = 0; r < 4; ++r)
        y[i * n + o + r] = ireegen_i8_requantize(
            bias[o + r] + dot[r], IREEGEN_I8_MULTIPLIER(o + r), y_zero);
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
