// Calls the model ireegen generated from simple_mul.mlir and checks each
// product against the one computed here; prints them, exits 1 on a mismatch.
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
  float a[SIMPLE_MUL_SIMPLE_MUL_INPUT0_ELEMENT_COUNT];
  float b[SIMPLE_MUL_SIMPLE_MUL_INPUT1_ELEMENT_COUNT];
  float product[SIMPLE_MUL_SIMPLE_MUL_OUTPUT0_ELEMENT_COUNT] = {0};
  for (int i = 0; i < SIMPLE_MUL_SIMPLE_MUL_INPUT0_ELEMENT_COUNT; ++i) {
    a[i] = 1.5f * (float)i - 2.0f;
    b[i] = 0.25f * (float)i + 3.0f;
  }
  if (simple_mul_simple_mul(model, a, b, product) != 0) {
    fprintf(stderr, "simple_mul failed: %s\n", simple_mul_last_error(model));
    simple_mul_destroy(model);
    return 1;
  }
  int mismatches = 0;
  for (int i = 0; i < SIMPLE_MUL_SIMPLE_MUL_OUTPUT0_ELEMENT_COUNT; ++i) {
    printf("%g * %g = %g\n", a[i], b[i], product[i]);
    if (product[i] != a[i] * b[i]) ++mismatches;
  }
  simple_mul_destroy(model);
  if (mismatches) fprintf(stderr, "%d product(s) differ\n", mismatches);
  return mismatches ? 1 : 0;
}
