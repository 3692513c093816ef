// The TFLM entry points of convolution.c: the same source, compiled with
// TFLite Micro's requantization (ireegen_int8.h, requantize_tflm.h).
// tflm.h first: it renames the static functions.
// clang-format off
#include "tflm.h"
#include "convolution.c"
// clang-format on
