// int8 Softmax over the last axis, as ONNX Runtime's QLinearSoftmax
// computes it (the operator its QDQ fusion runs for DequantizeLinear ->
// Softmax -> QuantizeLinear):
//
//   shift = max(0, log(FLT_MAX / d) - 5) / x_scale        (double)
//   e[j]  = (float)exp((x[j] - max(x) + shift) * x_scale)  (double exp)
//   sum   = e[0] + e[1] + ... in float, in order
//   y[j]  = saturate(round_half_even(e[j] * floor(1 / y_scale) / sum) + y_zero)
//
// The input's zero point cancels (only x - max(x) matters).  ORT builds a
// table of the 256 possible e values; this computes the ones a row uses,
// each once.  exp and log are the C library's: the results equal ORT's
// unless the two libraries' doubles differ where a float rounds, which the
// tests have not met.
//
// Matched by compile/int8_match_softmax.py.  It can differ from IREE's
// float softmax by one quantization step, as ORT does; emit's verification
// allows one step on a quantized output (docs/kernels-int8.md).
#include <float.h>
#include <math.h>

#include "ireegen_int8.h"
#include "requantize.h"

void ireegen_i8_softmax(const int8_t* x, size_t x_offset, int8_t* y,
                        size_t y_offset, size_t rows, size_t d,
                        uint32_t x_scale, uint32_t y_scale, int32_t y_zero) {
  x += x_offset;
  y += y_offset;
  if (d == 0) return;
  const float sx = ireegen_i8_float(x_scale);
  const double log_range = log((double)(FLT_MAX / (float)d)) - 5.0;
  const double shift = (log_range > 0.0 ? log_range : 0.0) / (double)sx;
  const float y_range = floorf(1.0f / ireegen_i8_float(y_scale));
  // e for x - max(x) = -k at exps[k], computed when first needed.
  float exps[256];
  uint8_t known[256];
  for (size_t r = 0; r < rows; ++r, x += d, y += d) {
    int32_t max = -128;
    for (size_t j = 0; j < d; ++j) max = x[j] > max ? x[j] : max;
    memset(known, 0, sizeof known);
    float sum = 0.0f;
    for (size_t j = 0; j < d; ++j) {
      const int32_t k = max - x[j];
      if (!known[k]) {
        exps[k] = (float)exp(((double)-k + shift) * (double)sx);
        known[k] = 1;
      }
      sum += exps[k];
    }
    for (size_t j = 0; j < d; ++j)
      y[j] = ireegen_i8_round_clamp(exps[max - x[j]] * y_range / sum, y_zero);
  }
}
