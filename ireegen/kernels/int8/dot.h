// Dot products of an int16 column (x - x_zero, already unpacked) with int8
// weight rows: the inner loop of fully connected and convolution.
//
// On cores with the DSP extension (M4, M7, M33: __ARM_FEATURE_DSP) each
// 32-bit load of four weights is sign-extended into two pairs of 16-bit
// lanes by SXTB16 (bytes 0 and 2; bytes 1 and 3 after a rotate by 8), and
// SMLAD multiplies and accumulates two lanes at once.  For that, the column
// stores each full group of four as (c0, c2, c1, c3):
// ireegen_i8_column_interleave() makes that order.  Elsewhere (M0+, M3,
// RV32, the host) the column stays in order and the loop is plain C.
#ifndef IREEGEN_INT8_DOT_H_
#define IREEGEN_INT8_DOT_H_

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "requantize.h"

#if defined(__ARM_FEATURE_DSP) && __ARM_FEATURE_DSP
#include <arm_acle.h>
#define IREEGEN_I8_DSP 1
#else
#define IREEGEN_I8_DSP 0
#endif

// The longest column kept on the stack (2 KiB); longer ones take the
// kernels' plain loops.  A convolution unpacks two pixels at a time into a
// pair column (dot_pair.h) when each column is at most IREEGEN_I8_PAIR_MAX
// long (the pair column and the gather's offsets: 3.75 KiB).
#define IREEGEN_I8_COLUMN_MAX 1024
#define IREEGEN_I8_PAIR_MAX 640

static inline void ireegen_i8_column_interleave(int16_t* column,
                                                size_t length) {
#if IREEGEN_I8_DSP
  for (size_t i = 0; i + 4 <= length; i += 4) {
    const int16_t c1 = column[i + 1];
    column[i + 1] = column[i + 2];
    column[i + 2] = c1;
  }
#else
  (void)column;
  (void)length;
#endif
}

#if IREEGEN_I8_DSP
static inline uint32_t ireegen_i8_load32(const void* p) {
  uint32_t v;
  memcpy(&v, p, sizeof v);
  return v;
}

// Bytes 1 and 3 of v sign-extended to two 16-bit lanes: one SXTB16 with its
// rotate (gcc's arm_acle.h has no rotate, and does not fold a shift into it).
static inline uint32_t ireegen_i8_sxtb16_ror8(uint32_t v) {
  uint32_t r;
  __asm__("sxtb16 %0, %1, ror #8" : "=r"(r) : "r"(v));
  return r;
}
#endif

// acc[j] += column . w[j * length] for j = 0..3: four filters share each
// load of the column.  Rows 1 and 3 are addressed from rows 0 and 2 plus
// the row length, so the DSP loop's pointers, four accumulators and
// operands fit the core's registers without spilling.
static inline void ireegen_i8_dot4(const int16_t* column, const int8_t* w,
                                   size_t length, int32_t acc[4]) {
  int32_t a0 = acc[0], a1 = acc[1], a2 = acc[2], a3 = acc[3];
  size_t i = 0;
#if IREEGEN_I8_DSP
  const int8_t* w0 = w;
  const int8_t* w2 = w + 2 * length;
  const int16_t* c = column;
  const int16_t* end = column + (length & ~(size_t)3);
  for (; c != end; c += 4, w0 += 4, w2 += 4) {
    uint32_t pair[2];
    memcpy(pair, c, sizeof pair);  // one LDRD: (c0, c2) and (c1, c3)
    uint32_t p = ireegen_i8_load32(w0);
    a0 = __smlad(pair[0], __sxtb16(p), a0);
    a0 = __smlad(pair[1], ireegen_i8_sxtb16_ror8(p), a0);
    p = ireegen_i8_load32(w0 + length);
    a1 = __smlad(pair[0], __sxtb16(p), a1);
    a1 = __smlad(pair[1], ireegen_i8_sxtb16_ror8(p), a1);
    p = ireegen_i8_load32(w2);
    a2 = __smlad(pair[0], __sxtb16(p), a2);
    a2 = __smlad(pair[1], ireegen_i8_sxtb16_ror8(p), a2);
    p = ireegen_i8_load32(w2 + length);
    a3 = __smlad(pair[0], __sxtb16(p), a3);
    a3 = __smlad(pair[1], ireegen_i8_sxtb16_ror8(p), a3);
  }
  i = length & ~(size_t)3;
#endif
  const int8_t* w1 = w + length;
  const int8_t* w3 = w + 3 * length;
  for (; i < length; ++i) {
    const int32_t v = column[i];
    a0 += v * w[i];
    a1 += v * w1[i];
    a2 += v * w[2 * length + i];
    a3 += v * w3[i];
  }
  acc[0] = a0;
  acc[1] = a1;
  acc[2] = a2;
  acc[3] = a3;
}

static inline int32_t ireegen_i8_dot(const int16_t* column, const int8_t* w,
                                     size_t length, int32_t acc) {
  size_t i = 0;
#if IREEGEN_I8_DSP
  for (; i + 4 <= length; i += 4) {
    const uint32_t p = ireegen_i8_load32(w + i);
    acc = __smlad(ireegen_i8_load32(column + i), __sxtb16(p), acc);
    acc = __smlad(ireegen_i8_load32(column + i + 2), ireegen_i8_sxtb16_ror8(p),
                  acc);
  }
#endif
  for (; i < length; ++i) acc += column[i] * w[i];
  return acc;
}

// Filter o's output multiplier, of the `multiplier` and `per_channel`
// arguments of the functions that use it: convolution.c and
// fully_connected.c are compiled once for per-tensor weights (one
// multiplier; the table is NULL) and once for per-channel weights
// (IREEGEN_I8_PER_CHANNEL: the table), so that neither pays for the other.
// The body of a kernel, shared by its per-tensor and per-channel entry
// points (one of them per compile): inlined into it, as it was before the
// per-channel entry points.
#define IREEGEN_I8_BODY static inline __attribute__((always_inline))

// A kernel's requantization of a layer whose check passed (fast): only the
// TFLM kernels have a second form (requantize_tflm.h).
#ifndef IREEGEN_I8_REQUANTIZE_IN
#define IREEGEN_I8_REQUANTIZE_IN(acc, s, y_zero, fast) \
  ireegen_i8_requantize(acc, s, y_zero)
#define IREEGEN_I8_FAST_LAYER(bias, per_channel, f, length, x_zero) 0
#endif

#if defined(IREEGEN_I8_PER_CHANNEL)
#define IREEGEN_I8_MULTIPLIER(o) ((void)multiplier, per_channel[o])
#else
#define IREEGEN_I8_MULTIPLIER(o) ((void)per_channel, multiplier)
#endif

// y[o * y_stride] = requantize(bias[o] + column . w[o]) for the f filters
// (rows of `length` weights), four at a time.
static inline void ireegen_i8_filters(const int16_t* column, const int8_t* w,
                                      size_t length, size_t f,
                                      const int32_t* bias,
                                      ireegen_i8_scale_t multiplier,
                                      const ireegen_i8_scale_t* per_channel,
                                      int32_t y_zero, int8_t* y,
                                      size_t y_stride) {
  size_t o = 0;
  for (; o + 4 <= f; o += 4) {
    int32_t acc[4] = {bias[o], bias[o + 1], bias[o + 2], bias[o + 3]};
    ireegen_i8_dot4(column, w + o * length, length, acc);
    for (size_t j = 0; j < 4; ++j)
      y[(o + j) * y_stride] =
          ireegen_i8_requantize(acc[j], IREEGEN_I8_MULTIPLIER(o + j), y_zero);
  }
  for (; o < f; ++o) {
    y[o * y_stride] = ireegen_i8_requantize(
        ireegen_i8_dot(column, w + o * length, length, bias[o]),
        IREEGEN_I8_MULTIPLIER(o), y_zero);
  }
}

#endif  // IREEGEN_INT8_DOT_H_
