// The per-channel entry points of convolution.c: the same source, compiled
// with a multiplier per output channel (ireegen_int8.h).
#define IREEGEN_I8_PER_CHANNEL 1
#include "convolution.c"
