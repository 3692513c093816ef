// The per-channel entry point of fully_connected.c: the same source,
// compiled with a multiplier per output (ireegen_int8.h).
#define IREEGEN_I8_PER_CHANNEL 1
#include "fully_connected.c"
