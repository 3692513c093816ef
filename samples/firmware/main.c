// Firmware sample: the MLP on a Cortex-M board, with no heap for the model.
// The instance is a static object (mlp_t is a complete type) and the arena a
// static buffer in its own section, so the linker map shows every byte; no
// mlp_create().  Prints the logits over semihosting, one per line.
//
// SAMPLE_CALL is the model's function (mlp_predict for samples/mlp), and
// SAMPLE_IN / SAMPLE_OUT the macro prefixes of its input and output
// (MLP_PREDICT_INPUT0, MLP_PREDICT_OUTPUT0): CMakeLists.txt reads them from
// `ireegen info`, so another model with one float32 input and output runs too;
// SAMPLE_IN_INT8 / SAMPLE_OUT_INT8 make the input or output int8 (a quantized
// .tflite model's own interface).
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
  // x[i] = i * 0.25 - 2, the input samples/mlp and the tests use too (int8:
  // i % 256 - 128); static, as a bigger model's tensors would not fit a small
  // stack.
#if SAMPLE_IN_INT8
  static int8_t x[INPUT_COUNT];
  for (int i = 0; i < INPUT_COUNT; ++i) x[i] = (int8_t)(i % 256 - 128);
#else
  static float x[INPUT_COUNT];
  for (int i = 0; i < INPUT_COUNT; ++i) x[i] = i * 0.25f - 2.0f;
#endif
#if SAMPLE_OUT_INT8
  static int8_t logits[OUTPUT_COUNT];
#else
  static float logits[OUTPUT_COUNT];
#endif
  if (SAMPLE_CALL(&model, x, logits) != 0) {
    printf("predict failed: %s\n", mlp_last_error(&model));
    return 1;
  }
#if SAMPLE_OUT_INT8
  for (int i = 0; i < OUTPUT_COUNT; ++i) printf("%d\n", logits[i]);
#else
  for (int i = 0; i < OUTPUT_COUNT; ++i) printf("%.9g\n", (double)logits[i]);
#endif
  return 0;
}
