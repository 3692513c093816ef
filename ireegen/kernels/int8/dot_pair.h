// The convolution's inner loop: two output pixels by two filters, on a
// "pair column" that holds both pixels' int16 columns (x - x_zero) chunk by
// chunk, so that one pointer walks both.
//
// Layout, for a column of `length` elements: each full chunk j of four
// elements takes eight int16, pair[8j .. 8j + 3] for the first pixel and
// pair[8j + 4 .. 8j + 7] for the second, element 4j + r at slot
// IREEGEN_I8_SLOT(r); the last length % 4 elements follow in the same way,
// in order.  On DSP cores the slots are (0, 2, 1, 3): SXTB16 of a word of
// four weights gives the lanes (w0, w2), and with its rotate (w1, w3), so
// each 32-bit load of the column is the matching pair (dot.h).
#ifndef IREEGEN_INT8_DOT_PAIR_H_
#define IREEGEN_INT8_DOT_PAIR_H_

#include <stddef.h>
#include <stdint.h>

#include "dot.h"

#if IREEGEN_I8_DSP
#define IREEGEN_I8_SLOT(r) ((r) == 1 ? 2 : (r) == 2 ? 1 : (r))
#else
#define IREEGEN_I8_SLOT(r) (r)
#endif

// The speed build takes two chunks per pass of the DSP loop; the size
// build (-Os, __OPTIMIZE_SIZE__) keeps the one-chunk loop.
#ifndef IREEGEN_I8_UNROLL
#ifdef __OPTIMIZE_SIZE__
#define IREEGEN_I8_UNROLL 0
#else
#define IREEGEN_I8_UNROLL 1
#endif
#endif

#if IREEGEN_I8_DSP
// One chunk of both pixels by both filters: two word loads of weights
// unpacked by four SXTB16, two LDRD of the pair column, eight SMLAD.
#define IREEGEN_I8_PAIR_CHUNK               \
  "ldr %[p], [%[w0]], #4\n\t"               \
  "ldr %[q], [%[w1]], #4\n\t"               \
  "ldrd %[xa], %[xb], [%[c]], #16\n\t"      \
  "sxtb16 %[lo0], %[p]\n\t"                 \
  "sxtb16 %[p], %[p], ror #8\n\t"           \
  "sxtb16 %[lo1], %[q]\n\t"                 \
  "sxtb16 %[q], %[q], ror #8\n\t"           \
  "smlad %[a00], %[xa], %[lo0], %[a00]\n\t" \
  "smlad %[a00], %[xb], %[p], %[a00]\n\t"   \
  "smlad %[a01], %[xa], %[lo1], %[a01]\n\t" \
  "smlad %[a01], %[xb], %[q], %[a01]\n\t"   \
  "ldrd %[xa], %[xb], [%[c], #-8]\n\t"      \
  "smlad %[a10], %[xa], %[lo0], %[a10]\n\t" \
  "smlad %[a10], %[xb], %[p], %[a10]\n\t"   \
  "smlad %[a11], %[xa], %[lo1], %[a11]\n\t" \
  "smlad %[a11], %[xb], %[q], %[a11]\n\t"

// The loop over `chunks` (at least one) chunks of 16 MACs.  Written out
// in assembler because it needs all fourteen allocatable registers (four
// accumulators, three pointers, the end, six operands), which gcc's own
// allocation of the same C spills from.
static inline void ireegen_i8_pair_chunks(const int16_t* c, const int8_t* w0,
                                          const int8_t* w1, size_t chunks,
                                          int32_t acc[4]) {
  int32_t a00 = acc[0], a10 = acc[1], a01 = acc[2], a11 = acc[3];
  uint32_t p, q, lo0, lo1, xa, xb;
#if IREEGEN_I8_UNROLL
  if (chunks & 1) {
    __asm__(
        IREEGEN_I8_PAIR_CHUNK
        : [a00] "+r"(a00), [a10] "+r"(a10), [a01] "+r"(a01), [a11] "+r"(a11),
          [c] "+r"(c), [w0] "+r"(w0), [w1] "+r"(w1), [p] "=&r"(p), [q] "=&r"(q),
          [lo0] "=&r"(lo0), [lo1] "=&r"(lo1), [xa] "=&r"(xa), [xb] "=&r"(xb)
        :
        : "memory");
  }
  if (chunks >= 2) {
    const int16_t* const end = c + 8 * (chunks & ~(size_t)1);
    __asm__(
        "1:\n\t" IREEGEN_I8_PAIR_CHUNK IREEGEN_I8_PAIR_CHUNK
        "cmp %[c], %[end]\n\t"
        "bne 1b\n\t"
        : [a00] "+r"(a00), [a10] "+r"(a10), [a01] "+r"(a01), [a11] "+r"(a11),
          [c] "+r"(c), [w0] "+r"(w0), [w1] "+r"(w1), [p] "=&r"(p), [q] "=&r"(q),
          [lo0] "=&r"(lo0), [lo1] "=&r"(lo1), [xa] "=&r"(xa), [xb] "=&r"(xb)
        : [end] "r"(end)
        : "cc", "memory");
  }
#else
  const int16_t* const end = c + 8 * chunks;
  __asm__(
      "1:\n\t" IREEGEN_I8_PAIR_CHUNK
      "cmp %[c], %[end]\n\t"
      "bne 1b\n\t"
      : [a00] "+r"(a00), [a10] "+r"(a10), [a01] "+r"(a01), [a11] "+r"(a11),
        [c] "+r"(c), [w0] "+r"(w0), [w1] "+r"(w1), [p] "=&r"(p), [q] "=&r"(q),
        [lo0] "=&r"(lo0), [lo1] "=&r"(lo1), [xa] "=&r"(xa), [xb] "=&r"(xb)
      : [end] "r"(end)
      : "cc", "memory");
#endif
  acc[0] = a00;
  acc[1] = a10;
  acc[2] = a01;
  acc[3] = a11;
}
#endif

// acc[0] += column 0 . w0, acc[1] += column 1 . w0, acc[2] += column 0 .
// w1, acc[3] += column 1 . w1, the columns in `pair`'s layout.
static inline __attribute__((always_inline)) void ireegen_i8_dot_pair(
    const int16_t* pair, const int8_t* w0, const int8_t* w1, size_t length,
    int32_t acc[4]) {
  const size_t chunks = length / 4;
#if IREEGEN_I8_DSP
  if (chunks) ireegen_i8_pair_chunks(pair, w0, w1, chunks, acc);
#else
  int32_t a00 = acc[0], a10 = acc[1], a01 = acc[2], a11 = acc[3];
  for (size_t j = 0; j < chunks; ++j) {
    const int16_t* c = pair + 8 * j;
    for (size_t r = 0; r < 4; ++r) {
      const int32_t x0 = c[r], x1 = c[4 + r];
      a00 += x0 * w0[4 * j + r];
      a10 += x1 * w0[4 * j + r];
      a01 += x0 * w1[4 * j + r];
      a11 += x1 * w1[4 * j + r];
    }
  }
  acc[0] = a00;
  acc[1] = a10;
  acc[2] = a01;
  acc[3] = a11;
#endif
  const int16_t* c = pair + 8 * chunks;
  for (size_t r = 0; r < length % 4; ++r) {
    const int32_t x0 = c[r], x1 = c[4 + r];
    const int32_t v0 = w0[4 * chunks + r], v1 = w1[4 * chunks + r];
    acc[0] += x0 * v0;
    acc[1] += x1 * v0;
    acc[2] += x0 * v1;
    acc[3] += x1 * v1;
  }
}

#endif  // IREEGEN_INT8_DOT_PAIR_H_
