#ifndef SCALE_KERNEL_H_
#define SCALE_KERNEL_H_

#include <stddef.h>

void scale_mul_f32(const float* a, size_t a_offset, const float* b,
                   size_t b_offset, float* c, size_t c_offset, size_t n);

#endif  // SCALE_KERNEL_H_
