// The dot products of dot.h on MVE (Helium: the Cortex-M55): the int16
// column (x - x_zero) is read eight values at a time in order (no
// interleave), the weights by a widening byte load (VLDRB.S16), and
// VMLADAVA.S16 does eight multiplies into an int32 accumulator.  The last
// length % 8 values take the same instructions under a tail predicate
// (VCTP), which neither loads nor counts the lanes past the end.
#ifndef IREEGEN_INT8_DOT_MVE_H_
#define IREEGEN_INT8_DOT_MVE_H_

#include <stddef.h>
#include <stdint.h>

#include "mve.h"

#if IREEGEN_I8_MVE

static inline void ireegen_i8_column_interleave(int16_t* column,
                                                size_t length) {
  (void)column;
  (void)length;
}

// acc[j] += column . w[j * length] for j = 0..3.
static inline void ireegen_i8_dot4(const int16_t* column, const int8_t* w,
                                   size_t length, int32_t acc[4]) {
  int32_t a0 = acc[0], a1 = acc[1], a2 = acc[2], a3 = acc[3];
  const int8_t* w1 = w + length;
  const int8_t* w2 = w1 + length;
  const int8_t* w3 = w2 + length;
  size_t i = 0;
  for (; i + 8 <= length; i += 8) {
    const int16x8_t c = vldrhq_s16(column + i);
    a0 = vmladavaq_s16(a0, c, vldrbq_s16(w + i));
    a1 = vmladavaq_s16(a1, c, vldrbq_s16(w1 + i));
    a2 = vmladavaq_s16(a2, c, vldrbq_s16(w2 + i));
    a3 = vmladavaq_s16(a3, c, vldrbq_s16(w3 + i));
  }
  if (i < length) {
    const mve_pred16_t p = vctp16q((uint32_t)(length - i));
    const int16x8_t c = vldrhq_z_s16(column + i, p);
    a0 = vmladavaq_s16(a0, c, vldrbq_z_s16(w + i, p));
    a1 = vmladavaq_s16(a1, c, vldrbq_z_s16(w1 + i, p));
    a2 = vmladavaq_s16(a2, c, vldrbq_z_s16(w2 + i, p));
    a3 = vmladavaq_s16(a3, c, vldrbq_z_s16(w3 + i, p));
  }
  acc[0] = a0;
  acc[1] = a1;
  acc[2] = a2;
  acc[3] = a3;
}

// acc[0] += c0 . w0, acc[1] += c1 . w0, acc[2] += c0 . w1,
// acc[3] += c1 . w1: each load serves two products.
static inline void ireegen_i8_dot2x2(const int16_t* c0, const int16_t* c1,
                                     const int8_t* w0, const int8_t* w1,
                                     size_t length, int32_t acc[4]) {
  int32_t a00 = acc[0], a10 = acc[1], a01 = acc[2], a11 = acc[3];
  size_t i = 0;
  for (; i + 8 <= length; i += 8) {
    const int16x8_t x0 = vldrhq_s16(c0 + i), x1 = vldrhq_s16(c1 + i);
    const int16x8_t v0 = vldrbq_s16(w0 + i), v1 = vldrbq_s16(w1 + i);
    a00 = vmladavaq_s16(a00, x0, v0);
    a10 = vmladavaq_s16(a10, x1, v0);
    a01 = vmladavaq_s16(a01, x0, v1);
    a11 = vmladavaq_s16(a11, x1, v1);
  }
  if (i < length) {
    const mve_pred16_t p = vctp16q((uint32_t)(length - i));
    const int16x8_t x0 = vldrhq_z_s16(c0 + i, p), x1 = vldrhq_z_s16(c1 + i, p);
    const int16x8_t v0 = vldrbq_z_s16(w0 + i, p), v1 = vldrbq_z_s16(w1 + i, p);
    a00 = vmladavaq_s16(a00, x0, v0);
    a10 = vmladavaq_s16(a10, x1, v0);
    a01 = vmladavaq_s16(a01, x0, v1);
    a11 = vmladavaq_s16(a11, x1, v1);
  }
  acc[0] = a00;
  acc[1] = a10;
  acc[2] = a01;
  acc[3] = a11;
}

static inline int32_t ireegen_i8_dot(const int16_t* column, const int8_t* w,
                                     size_t length, int32_t acc) {
  for (size_t i = 0; i < length; i += 8) {
    const mve_pred16_t p = vctp16q((uint32_t)(length - i));
    acc =
        vmladavaq_s16(acc, vldrhq_z_s16(column + i, p), vldrbq_z_s16(w + i, p));
  }
  return acc;
}

#endif  // IREEGEN_I8_MVE

#endif  // IREEGEN_INT8_DOT_MVE_H_
