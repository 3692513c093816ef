// The TFLM entry points of fully_connected_small.c (--optimize-for size): the
// same source, compiled with TFLite Micro's requantization
// (ireegen_int8.h, requantize_tflm.h).  tflm.h first: it renames the
// static functions.
// clang-format off
#define IREEGEN_I8_SMALL 1
#include "tflm.h"
#include "fully_connected_small.c"
// clang-format on
