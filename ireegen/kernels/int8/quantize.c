// QuantizeLinear of a model's float input to int8, as ONNX Runtime computes it.
#include "ireegen_int8.h"
#include "requantize.h"

void ireegen_i8_quantize(const float* x, size_t x_offset, int8_t* y,
                         size_t y_offset, size_t count, uint32_t scale,
                         int32_t zero) {
  x += x_offset;
  y += y_offset;
  const float s = ireegen_i8_float(scale);
  // x / s, then the requantization's rounding and clamp (a multiplier of 1
  // changes nothing: 1.0f * v is v exactly).  A NaN input gives what the
  // float-to-int conversion gives, as in ONNX Runtime (undefined there).
  for (const float* const end = x + count; x != end; ++x)
    *y++ = ireegen_i8_round_clamp(*x / s, zero);
}
