// Calls the typed API that ireegen generated for simple_mul.mlir and prints
// the product of two vectors.
#include <stdio.h>

#include "simple_mul.h"

int main(void) {
  simple_mul_t* model = NULL;
  iree_status_t status = simple_mul_create(iree_allocator_system(), &model);
  if (!iree_status_is_ok(status)) {
    iree_status_fprint(stderr, status);
    iree_status_free(status);
    return 1;
  }
  const float a[SIMPLE_MUL_SIMPLE_MUL_INPUT0_ELEMENT_COUNT] = {1.5f, -2.0f, 3.25f, 4.0f};
  const float b[SIMPLE_MUL_SIMPLE_MUL_INPUT1_ELEMENT_COUNT] = {2.0f, 0.5f, -1.0f, 8.0f};
  float c[SIMPLE_MUL_SIMPLE_MUL_OUTPUT0_ELEMENT_COUNT] = {0};
  if (simple_mul_simple_mul(model, a, b, c) != 0) {
    fprintf(stderr, "simple_mul failed: %s\n", simple_mul_last_error(model));
    simple_mul_destroy(model);
    return 1;
  }
  for (int i = 0; i < SIMPLE_MUL_SIMPLE_MUL_OUTPUT0_ELEMENT_COUNT; ++i) {
    printf("%.9g\n", c[i]);
  }
  simple_mul_destroy(model);
  return 0;
}
