// Calls the model whose multiply runs in scale_kernel.c; prints y = x * w + x.
#include <stdio.h>

#include "scale.h"

int main(void) {
  scale_t* model = NULL;
  iree_status_t status = scale_create(iree_allocator_system(), &model);
  if (!iree_status_is_ok(status)) {
    iree_status_fprint(stderr, status);
    iree_status_free(status);
    return 1;
  }
  float x[SCALE_PREDICT_INPUT0_ELEMENT_COUNT];
  float y[SCALE_PREDICT_OUTPUT0_ELEMENT_COUNT] = {0};
  for (int i = 0; i < SCALE_PREDICT_INPUT0_ELEMENT_COUNT; ++i) {
    x[i] = 0.25f * (float)i - 8.0f;
  }
  if (scale_predict(model, x, y) != 0) {
    fprintf(stderr, "scale_predict failed: %s\n", scale_last_error(model));
    scale_destroy(model);
    return 1;
  }
  for (int i = 0; i < SCALE_PREDICT_OUTPUT0_ELEMENT_COUNT; ++i) {
    printf("%.9g\n", y[i]);
  }
  scale_destroy(model);
  return 0;
}
