// The per-channel entry points of convolution.c: the same source, compiled
// with a multiplier per output channel (ireegen_int8.h).
// per_channel.h first: it renames the static functions.
// clang-format off
#include "per_channel.h"
#include "convolution.c"
// clang-format on
