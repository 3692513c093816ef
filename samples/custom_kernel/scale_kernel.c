// The kernel scale.match.mlir calls: c = a * b over n floats.  IREE passes
// each buffer as a base pointer and an element offset (llvm.bareptr with
// iree_codegen.extract_strided_metadata), and MLIR's index as size_t.
#include "scale_kernel.h"

#include <stddef.h>

void scale_mul_f32(const float* a, size_t a_offset, const float* b,
                   size_t b_offset, float* c, size_t c_offset, size_t n) {
  a += a_offset;
  b += b_offset;
  c += c_offset;
  for (size_t i = 0; i < n; ++i) c[i] = a[i] * b[i];
}
