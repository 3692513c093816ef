// The TFLM entry points of fully_connected.c: the same source, compiled with
// TFLite Micro's requantization (ireegen_int8.h, requantize_tflm.h).
// tflm.h first: it renames the static functions.
// clang-format off
#include "tflm.h"
#include "fully_connected.c"
// clang-format on
