// The per-channel entry point of fully_connected.c: the same source,
// compiled with a multiplier per output (ireegen_int8.h).
// per_channel.h first: it renames the static functions.
// clang-format off
#include "per_channel.h"
#include "fully_connected.c"
// clang-format on
