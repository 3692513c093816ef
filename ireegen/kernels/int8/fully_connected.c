// Fully connected (Gemm) on int8 with ONNX Runtime's rounding, on weights
// packed by the match spec at compile time (ireegen_int8.h).  Compiled
// twice, as convolution.c is: per tensor, and from
// fully_connected_per_channel.c per channel.
#include "dot.h"
#include "fully_connected_mve.h"
#include "ireegen_int8.h"
#include "requantize.h"

static inline size_t ireegen_i8_round4(size_t v) {
  return (v + 3) & ~(size_t)3;
}

#if IREEGEN_I8_DSP
// One chunk of four inputs by the group's four rows: an LDRD of the column
// (c0, c2, c1, c3), two LDRD of the rows' words, eight SXTB16, eight SMLAD.
#define IREEGEN_I8_GROUP_CHUNK          \
  "ldrd %[xa], %[xb], [%[c]], #8\n\t"   \
  "ldrd %[p], %[q], [%[w]], #8\n\t"     \
  "sxtb16 %[t], %[p]\n\t"               \
  "sxtb16 %[p], %[p], ror #8\n\t"       \
  "smlad %[a0], %[xa], %[t], %[a0]\n\t" \
  "smlad %[a0], %[xb], %[p], %[a0]\n\t" \
  "sxtb16 %[t], %[q]\n\t"               \
  "sxtb16 %[q], %[q], ror #8\n\t"       \
  "smlad %[a1], %[xa], %[t], %[a1]\n\t" \
  "smlad %[a1], %[xb], %[q], %[a1]\n\t" \
  "ldrd %[p], %[q], [%[w]], #8\n\t"     \
  "sxtb16 %[t], %[p]\n\t"               \
  "sxtb16 %[p], %[p], ror #8\n\t"       \
  "smlad %[a2], %[xa], %[t], %[a2]\n\t" \
  "smlad %[a2], %[xb], %[p], %[a2]\n\t" \
  "sxtb16 %[t], %[q]\n\t"               \
  "sxtb16 %[q], %[q], ror #8\n\t"       \
  "smlad %[a3], %[xa], %[t], %[a3]\n\t" \
  "smlad %[a3], %[xb], %[q], %[a3]\n\t"
#define IREEGEN_I8_GROUP_OPERANDS                                              \
  [a0] "+r"(a0), [a1] "+r"(a1), [a2] "+r"(a2), [a3] "+r"(a3), [c] "+r"(c),     \
      [w] "+r"(w), [xa] "=&r"(xa), [xb] "=&r"(xb), [p] "=&r"(p), [q] "=&r"(q), \
      [t] "=&r"(t)
#endif

// acc[r] += column . (row r of one packed group of four rows), r = 0..3;
// `length` is a multiple of four.  A group's weights for one chunk of four
// inputs are 16 contiguous bytes (four per row), read as four words.
static inline void ireegen_i8_dot4_packed(const int16_t* column,
                                          const int8_t* w, size_t length,
                                          int32_t acc[4]) {
  int32_t a0 = acc[0], a1 = acc[1], a2 = acc[2], a3 = acc[3];
#if IREEGEN_I8_DSP
  // Written out in assembler, as dot_pair.h's loop is: gcc's allocation of
  // the same C spills the loop's end.  An odd chunk first, then two chunks
  // per pass.  LDRD needs word-aligned weights (the column is); other
  // weights take the C loop.
  const int16_t* c = column;
  const size_t chunks = length / 4;
  uint32_t xa, xb, p, q, t;
  if ((uintptr_t)(const void*)w & 3) {
    const int16_t* const end = column + length;
    for (; c != end; c += 4, w += 16) {
      uint32_t pair[2];
      memcpy(pair, c, sizeof pair);
      for (size_t r = 0; r < 4; ++r) {
        const uint32_t v = ireegen_i8_load32(w + 4 * r);
        acc[r] = __smlad(pair[0], __sxtb16(v), acc[r]);
        acc[r] = __smlad(pair[1], ireegen_i8_sxtb16_ror8(v), acc[r]);
      }
    }
    return;
  }
  if (chunks & 1) {
    __asm__(IREEGEN_I8_GROUP_CHUNK:IREEGEN_I8_GROUP_OPERANDS : : "memory");
  }
  if (chunks >= 2) {
    const int16_t* const end = column + length;
    __asm__("1:\n\t" IREEGEN_I8_GROUP_CHUNK IREEGEN_I8_GROUP_CHUNK
            "cmp %[c], %[end]\n\t"
            "bne 1b\n\t"
            : IREEGEN_I8_GROUP_OPERANDS
            : [end] "r"(end)
            : "cc", "memory");
  }
#else
  const int16_t* const end = column + length;
  for (const int16_t* c = column; c != end; c += 4, w += 16) {
    for (size_t j = 0; j < 4; ++j) {
      const int32_t v = c[j];
      a0 += v * w[j];
      a1 += v * w[4 + j];
      a2 += v * w[8 + j];
      a3 += v * w[12 + j];
    }
  }
#endif
  acc[0] = a0;
  acc[1] = a1;
  acc[2] = a2;
  acc[3] = a3;
}

// Output j's multiplier is IREEGEN_I8_MULTIPLIER(j); inlined into this
// file's one entry point.
IREEGEN_I8_BODY void ireegen_i8_fc(const int8_t* x, const int8_t* w,
                                   const int32_t* bias, int8_t* y, size_t m,
                                   size_t n, size_t k, int32_t x_zero,
                                   ireegen_i8_scale_t multiplier,
                                   const ireegen_i8_scale_t* per_channel,
                                   int32_t y_zero) {
#if IREEGEN_I8_MVE
  ireegen_i8_fully_connected_mve(x, w, bias, y, m, n, k, multiplier,
                                 per_channel, x_zero, y_zero);
  return;
#endif
  const size_t k4 = ireegen_i8_round4(k);
  if (k4 <= IREEGEN_I8_COLUMN_MAX) {
    // Each row of x unpacked once to int16 (x - x_zero), zeros up to k4,
    // then dotted with every group of four rows of w.
    // Word-aligned: the DSP loop reads it with LDRD.
    uint32_t words[IREEGEN_I8_COLUMN_MAX / 2];
    int16_t* const column = (int16_t*)(void*)words;
    const int fast = IREEGEN_I8_FAST_LAYER(bias, per_channel, n, k, x_zero);
    for (size_t i = 0; i < m; ++i) {
      size_t c = 0;
      for (; c < k; ++c) column[c] = (int16_t)(x[i * k + c] - x_zero);
      for (; c < k4; ++c) column[c] = 0;
      ireegen_i8_column_interleave(column, k4);
      int8_t* out = y + i * n;
      const size_t groups = n & ~(size_t)3;
      for (size_t o = 0; o < groups; o += 4) {
        int32_t acc[4] = {bias[o], bias[o + 1], bias[o + 2], bias[o + 3]};
        ireegen_i8_dot4_packed(column, w + o * k4, k4, acc);
        if (fast) {
          for (size_t r = 0; r < 4; ++r)
            out[o + r] = IREEGEN_I8_REQUANTIZE_IN(
                acc[r], IREEGEN_I8_MULTIPLIER(o + r), y_zero, fast);
        } else {
          for (size_t r = 0; r < 4; ++r)
            out[o + r] = ireegen_i8_requantize(
                acc[r], IREEGEN_I8_MULTIPLIER(o + r), y_zero);
        }
      }
      // The last n % 4 rows, each K4 weights in order.
      for (size_t o = groups; o < n; ++o)
        out[o] = ireegen_i8_requantize(
            ireegen_i8_dot(column, w + o * k4, k4, bias[o]),
            IREEGEN_I8_MULTIPLIER(o), y_zero);
    }
    return;
  }
  // A longer row than the stack column holds: one output at a time, each
  // weight found where the packing put it.
  const size_t groups = n & ~(size_t)3;
  for (size_t i = 0; i < m; ++i) {
    const int8_t* row = x + i * k;
    for (size_t j = 0; j < n; ++j) {
      int32_t acc = bias[j];
      if (j < groups) {
        const int8_t* group = w + (j & ~(size_t)3) * k4 + (j & 3) * 4;
        for (size_t c = 0; c < k; ++c)
          acc += ((int32_t)row[c] - x_zero) *
                 group[(c & ~(size_t)3) * 4 + (c & 3)];
      } else {
        for (size_t c = 0; c < k; ++c)
          acc += ((int32_t)row[c] - x_zero) * w[j * k4 + c];
      }
      y[i * n + j] =
          ireegen_i8_requantize(acc, IREEGEN_I8_MULTIPLIER(j), y_zero);
    }
  }
}

#ifndef IREEGEN_I8_PER_CHANNEL
void ireegen_i8_fully_connected(const int8_t* x, size_t x_offset,
                                const int8_t* w, size_t w_offset,
                                const int32_t* bias, size_t bias_offset,
                                int8_t* y, size_t y_offset, size_t m, size_t n,
                                size_t k, uint32_t x_scale, int32_t x_zero,
                                uint32_t w_scale, uint32_t y_scale,
                                int32_t y_zero) {
  ireegen_i8_fc(x + x_offset, w + w_offset, bias + bias_offset, y + y_offset, m,
                n, k, x_zero, ireegen_i8_multiplier(x_scale, w_scale, y_scale),
                NULL, y_zero);
}
#else
void IREEGEN_I8_PC_ENTRY(ireegen_i8_fully_connected)(
    const int8_t* x, size_t x_offset, const int8_t* w, size_t w_offset,
    const int32_t* bias, size_t bias_offset,
    const ireegen_i8_table_t* multipliers, size_t multipliers_offset, int8_t* y,
    size_t y_offset, size_t m, size_t n, size_t k, int32_t x_zero,
    int32_t y_zero) {
  ireegen_i8_fc(x + x_offset, w + w_offset, bias + bias_offset, y + y_offset, m,
                n, k, x_zero, IREEGEN_I8_NO_SCALE,
                IREEGEN_I8_SCALES(multipliers, multipliers_offset), y_zero);
}
#endif
