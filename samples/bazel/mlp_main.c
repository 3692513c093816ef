// Runs the MLP that ireegen generated from mlp.mlir (samples/mlp) on a fixed batch and
// prints the logits, one per line.
#include <stdio.h>

#include "mlp.h"

int main(void) {
  mlp_t* model = NULL;
  iree_status_t status = mlp_create(iree_allocator_system(), &model);
  if (!iree_status_is_ok(status)) {
    iree_status_fprint(stderr, status);
    iree_status_free(status);
    return 1;
  }
  // x[i] = i * 0.25 - 2, the input the tests feed numpy too.
  float x[MLP_PREDICT_INPUT0_ELEMENT_COUNT];
  for (int i = 0; i < MLP_PREDICT_INPUT0_ELEMENT_COUNT; ++i) x[i] = i * 0.25f - 2.0f;
  float logits[MLP_PREDICT_OUTPUT0_ELEMENT_COUNT] = {0};
  if (mlp_predict(model, x, logits) != 0) {
    fprintf(stderr, "predict failed: %s\n", mlp_last_error(model));
    mlp_destroy(model);
    return 1;
  }
  for (int i = 0; i < MLP_PREDICT_OUTPUT0_ELEMENT_COUNT; ++i) printf("%.9g\n", logits[i]);
  mlp_destroy(model);
  return 0;
}
