// Included first by the TFLM kernels' sources (convolution_tflm.c,
// fully_connected_tflm.c and their compact twins for --optimize-for size),
// which compile the per-channel kernels a third time with TFLite Micro's
// requantization (requantize_tflm.h): the kernels of a .tflite source.  The
// entry points are the per-channel ones with the suffix _tflm, their table
// the (multiplier, shift) pairs.  Every static function gets a name of its
// own, for the reason per_channel.h gives (a new static function belongs
// here too: tests/test_int8_kernels.py checks).  The MVE loops take float
// multipliers, so the TFLM compile leaves them out (mve.h): on the
// Cortex-M55 these kernels run the DSP loops.
#ifndef IREEGEN_INT8_TFLM_H_
#define IREEGEN_INT8_TFLM_H_

#define IREEGEN_I8_TFLM 1

#define ireegen_i8_doubling_high_mul ireegen_i8_tflm_doubling_high_mul
#define ireegen_i8_rounding_divide_by_pot ireegen_i8_tflm_rounding_divide_by_pot
#define ireegen_i8_offset_clamp ireegen_i8_tflm_offset_clamp
#define ireegen_i8_tflm_factor ireegen_i8_tflm_tflm_factor
#define ireegen_i8_add_term ireegen_i8_tflm_add_term
#define ireegen_i8_smmlar ireegen_i8_tflm_smmlar
#define ireegen_i8_scale_wide ireegen_i8_tflm_scale_wide
#define ireegen_i8_requantize_fast ireegen_i8_tflm_requantize_fast
#define ireegen_i8_fast_layer ireegen_i8_tflm_fast_layer

#if defined(IREEGEN_I8_SMALL)
// The compact kernels (convolution_small.c, fully_connected_small.c).
#define ireegen_i8_small_gather ireegen_i8_tflm_small_gather
#define ireegen_i8_small_dot ireegen_i8_tflm_small_dot
#define ireegen_i8_small_conv ireegen_i8_tflm_small_conv
#define ireegen_i8_small_dot_packed ireegen_i8_tflm_small_dot_packed
#define ireegen_i8_small_fc ireegen_i8_tflm_small_fc
#define ireegen_i8_float ireegen_i8_tflm_float
#define ireegen_i8_multiplier ireegen_i8_tflm_multiplier
#define ireegen_i8_round_clamp ireegen_i8_tflm_round_clamp
#define ireegen_i8_requantize ireegen_i8_tflm_requantize
#else
// The per-channel compile's names (per_channel.h), renamed once more.
#include "per_channel.h"
#define ireegen_i8_pc_taps ireegen_i8_tflm_taps
#define ireegen_i8_pc_offsets ireegen_i8_tflm_offsets
#define ireegen_i8_pc_field ireegen_i8_tflm_field
#define ireegen_i8_pc_gather_inside ireegen_i8_tflm_gather_inside
#define ireegen_i8_pc_gather ireegen_i8_tflm_gather
#define ireegen_i8_pc_pair_filters ireegen_i8_tflm_pair_filters
#define ireegen_i8_pc_pair_filters_in ireegen_i8_tflm_pair_filters_in
#define ireegen_i8_pc_conv ireegen_i8_tflm_conv
#define ireegen_i8_pc_depthwise_plane3x3 ireegen_i8_tflm_depthwise_plane3x3
#define ireegen_i8_pc_depthwise_row3x3_in ireegen_i8_tflm_depthwise_row3x3_in
#define ireegen_i8_pc_widen ireegen_i8_tflm_widen
#define ireegen_i8_pc_padded_row ireegen_i8_tflm_padded_row
#define ireegen_i8_pc_tap_row2 ireegen_i8_tflm_tap_row2
#define ireegen_i8_pc_depthwise ireegen_i8_tflm_depthwise
#define ireegen_i8_pc_round4 ireegen_i8_tflm_round4
#define ireegen_i8_pc_dot4_packed ireegen_i8_tflm_dot4_packed
#define ireegen_i8_pc_fc ireegen_i8_tflm_fc
#define ireegen_i8_pc_column_interleave ireegen_i8_tflm_column_interleave
#define ireegen_i8_pc_load32 ireegen_i8_tflm_load32
#define ireegen_i8_pc_sxtb16_ror8 ireegen_i8_tflm_sxtb16_ror8
#define ireegen_i8_pc_dot4 ireegen_i8_tflm_dot4
#define ireegen_i8_pc_dot ireegen_i8_tflm_dot
#define ireegen_i8_pc_filters ireegen_i8_tflm_filters
#define ireegen_i8_pc_pair_chunks ireegen_i8_tflm_pair_chunks
#define ireegen_i8_pc_dot_pair ireegen_i8_tflm_dot_pair
#define ireegen_i8_pc_float ireegen_i8_tflm_float
#define ireegen_i8_pc_multiplier ireegen_i8_tflm_multiplier
#define ireegen_i8_pc_round_clamp ireegen_i8_tflm_round_clamp
#define ireegen_i8_pc_requantize ireegen_i8_tflm_requantize
#endif

#endif  // IREEGEN_INT8_TFLM_H_
