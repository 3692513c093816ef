// Firmware sample: the MLP on a Cortex-M board, with no heap for the model.
// The instance is a static object (mlp_t is a complete type) and the arena a
// static buffer in its own section, so the linker map shows every byte; no
// mlp_create().  Prints the logits over semihosting, one per line.
//
// SAMPLE_CALL is the model's function (mlp_predict for samples/mlp), and
// SAMPLE_IN / SAMPLE_OUT the macro prefixes of its input and output
// (MLP_PREDICT_INPUT0, MLP_PREDICT_OUTPUT0): CMakeLists.txt reads them from
// `ireegen info`, so another model with one float32 input and output runs too.
#include <stdio.h>

#include "mlp.h"

#define SAMPLE_PASTE(prefix, suffix) prefix##suffix
#define SAMPLE_MACRO(prefix, suffix) SAMPLE_PASTE(prefix, suffix)
#define INPUT_COUNT SAMPLE_MACRO(SAMPLE_IN, _ELEMENT_COUNT)
#define OUTPUT_COUNT SAMPLE_MACRO(SAMPLE_OUT, _ELEMENT_COUNT)

static mlp_t model;
static _Alignas(MLP_ARENA_ALIGNMENT) uint8_t arena[MLP_ARENA_SIZE + 1]
    __attribute__((section(".bss.model_arena")));

int main(void) {
  iree_status_t status = mlp_initialize(&model, arena, MLP_ARENA_SIZE);
  if (!iree_status_is_ok(status)) {
    printf("initialize failed: %s\n", mlp_last_error(&model));
    return 1;
  }
  // x[i] = i * 0.25 - 2, the input samples/mlp and the tests use too; static,
  // as a bigger model's tensors would not fit a small stack.
  static float x[INPUT_COUNT];
  for (int i = 0; i < INPUT_COUNT; ++i) x[i] = i * 0.25f - 2.0f;
  static float logits[OUTPUT_COUNT];
  if (SAMPLE_CALL(&model, x, logits) != 0) {
    printf("predict failed: %s\n", mlp_last_error(&model));
    return 1;
  }
  for (int i = 0; i < OUTPUT_COUNT; ++i) printf("%.9g\n", (double)logits[i]);
  return 0;
}
