// Classifies the held-out digits (heldout.h, written by make_digits.py) with
// the model ireegen generated, one image per call, and prints the accuracy:
//   accuracy 0.9733 (438/450)
// followed by one predicted label per line (the tests compare them).
#include <stdio.h>

#include "digits.h"
#include "heldout.h"

// ireegen names the arguments of an MLIR function input0/output0; once it
// reads digits.onnx itself they carry the ONNX names, image and logits.
#ifdef DIGITS_PREDICT_IMAGE_ELEMENT_COUNT
#define IMAGE_SIZE DIGITS_PREDICT_IMAGE_ELEMENT_COUNT
#define LOGITS_SIZE DIGITS_PREDICT_LOGITS_ELEMENT_COUNT
#else
#define IMAGE_SIZE DIGITS_PREDICT_INPUT0_ELEMENT_COUNT
#define LOGITS_SIZE DIGITS_PREDICT_OUTPUT0_ELEMENT_COUNT
#endif

_Static_assert(IMAGE_SIZE == HELDOUT_PIXELS, "the model takes one 8x8 image");

static int argmax(const float* values, int count) {
  int best = 0;
  for (int i = 1; i < count; ++i) {
    if (values[i] > values[best]) best = i;
  }
  return best;
}

int main(void) {
  digits_t* model = NULL;
  iree_status_t status = digits_create(iree_allocator_system(), &model);
  if (!iree_status_is_ok(status)) {
    iree_status_fprint(stderr, status);
    iree_status_free(status);
    return 1;
  }
  static int predicted[HELDOUT_COUNT];
  int correct = 0;
  for (int n = 0; n < HELDOUT_COUNT; ++n) {
    float image[IMAGE_SIZE];
    float logits[LOGITS_SIZE];
    for (int i = 0; i < IMAGE_SIZE; ++i) image[i] = (float)heldout_pixels[n][i] / HELDOUT_PIXEL_SCALE;
    if (digits_predict(model, image, logits) != 0) {
      fprintf(stderr, "image %d: predict failed: %s\n", n, digits_last_error(model));
      digits_destroy(model);
      return 1;
    }
    predicted[n] = argmax(logits, LOGITS_SIZE);
    correct += predicted[n] == heldout_labels[n];
  }
  printf("accuracy %.4f (%d/%d)\n", (double)correct / HELDOUT_COUNT, correct, HELDOUT_COUNT);
  for (int n = 0; n < HELDOUT_COUNT; ++n) printf("%d\n", predicted[n]);
  digits_destroy(model);
  return 0;
}
