// Firmware sample: the MLP on a Cortex-M board, with no heap for the model.
// The instance is a static object (mlp_t is a complete type) and the arena a
// static buffer in its own section, so the linker map shows every byte; no
// mlp_create().  Prints the logits over semihosting, one per line.
#include <stdio.h>

#include "mlp.h"

static mlp_t model;
static _Alignas(MLP_ARENA_ALIGNMENT) uint8_t arena[MLP_ARENA_SIZE + 1]
    __attribute__((section(".bss.model_arena")));

int main(void) {
  iree_status_t status = mlp_initialize(&model, arena, MLP_ARENA_SIZE);
  if (!iree_status_is_ok(status)) {
    printf("initialize failed: %s\n", mlp_last_error(&model));
    return 1;
  }
  // x[i] = i * 0.25 - 2, the input samples/mlp and the tests use too.
  float x[MLP_PREDICT_INPUT0_ELEMENT_COUNT];
  for (int i = 0; i < MLP_PREDICT_INPUT0_ELEMENT_COUNT; ++i) x[i] = i * 0.25f - 2.0f;
  float logits[MLP_PREDICT_OUTPUT0_ELEMENT_COUNT];
  if (mlp_predict(&model, x, logits) != 0) {
    printf("predict failed: %s\n", mlp_last_error(&model));
    return 1;
  }
  for (int i = 0; i < MLP_PREDICT_OUTPUT0_ELEMENT_COUNT; ++i) printf("%.9g\n", (double)logits[i]);
  return 0;
}
