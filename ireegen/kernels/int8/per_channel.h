// Included first by convolution_per_channel.c and
// fully_connected_per_channel.c, which compile convolution.c and
// fully_connected.c a second time for per-channel weights.  It renames every
// static function of those sources and of their headers: -ffunction-sections
// names a function's section after it, a relocatable link (the kernels'
// object, cbuild/kernels.py) merges sections of one name, and a firmware's
// --gc-sections could then not drop the per-channel copy of a function
// without the per-tensor one.  A new static function belongs here too
// (tests/test_int8_kernels.py checks that no name is defined by both).
#ifndef IREEGEN_INT8_PER_CHANNEL_H_
#define IREEGEN_INT8_PER_CHANNEL_H_

#define IREEGEN_I8_PER_CHANNEL 1

#define ireegen_i8_taps ireegen_i8_pc_taps
#define ireegen_i8_offsets ireegen_i8_pc_offsets
#define ireegen_i8_field ireegen_i8_pc_field
#define ireegen_i8_gather_inside ireegen_i8_pc_gather_inside
#define ireegen_i8_gather ireegen_i8_pc_gather
#define ireegen_i8_pair_filters ireegen_i8_pc_pair_filters
#define ireegen_i8_pair_filters_in ireegen_i8_pc_pair_filters_in
#define ireegen_i8_conv ireegen_i8_pc_conv
#define ireegen_i8_depthwise_plane3x3 ireegen_i8_pc_depthwise_plane3x3
#define ireegen_i8_depthwise_row3x3_in ireegen_i8_pc_depthwise_row3x3_in
#define ireegen_i8_widen ireegen_i8_pc_widen
#define ireegen_i8_padded_row ireegen_i8_pc_padded_row
#define ireegen_i8_tap_row2 ireegen_i8_pc_tap_row2
#define ireegen_i8_depthwise ireegen_i8_pc_depthwise
#define ireegen_i8_round4 ireegen_i8_pc_round4
#define ireegen_i8_dot4_packed ireegen_i8_pc_dot4_packed
#define ireegen_i8_fc ireegen_i8_pc_fc
#define ireegen_i8_column_interleave ireegen_i8_pc_column_interleave
#define ireegen_i8_load32 ireegen_i8_pc_load32
#define ireegen_i8_sxtb16_ror8 ireegen_i8_pc_sxtb16_ror8
#define ireegen_i8_dot4 ireegen_i8_pc_dot4
#define ireegen_i8_dot ireegen_i8_pc_dot
#define ireegen_i8_filters ireegen_i8_pc_filters
#define ireegen_i8_pair_chunks ireegen_i8_pc_pair_chunks
#define ireegen_i8_dot_pair ireegen_i8_pc_dot_pair
#define ireegen_i8_float ireegen_i8_pc_float
#define ireegen_i8_multiplier ireegen_i8_pc_multiplier
#define ireegen_i8_round_clamp ireegen_i8_pc_round_clamp
#define ireegen_i8_requantize ireegen_i8_pc_requantize

// The MVE loops (fully_connected_mve.h, convolution_mve.h, depthwise_mve.h,
// requantize_mve.h).
#define ireegen_i8_fc_row_offsets ireegen_i8_pc_fc_row_offsets
#define ireegen_i8_fc_group_mve ireegen_i8_pc_fc_group_mve
#define ireegen_i8_fc_blocks_mve ireegen_i8_pc_fc_blocks_mve
#define ireegen_i8_fc_row_mve ireegen_i8_pc_fc_row_mve
#define ireegen_i8_fully_connected_mve ireegen_i8_pc_fully_connected_mve
#define ireegen_i8_requantize4_mve ireegen_i8_pc_requantize4_mve
#define ireegen_i8_requantize4v_mve ireegen_i8_pc_requantize4v_mve
#define ireegen_i8_gather_column ireegen_i8_pc_gather_column
#define ireegen_i8_dot2x2_s8 ireegen_i8_pc_dot2x2_s8
#define ireegen_i8_triples_mve ireegen_i8_pc_triples_mve
#define ireegen_i8_triples ireegen_i8_pc_triples
#define ireegen_i8_filter_bases ireegen_i8_pc_filter_bases
#define ireegen_i8_convolution_mve ireegen_i8_pc_convolution_mve
#define ireegen_i8_fill_band ireegen_i8_pc_fill_band
#define ireegen_i8_depthwise_pass3x3s1 ireegen_i8_pc_depthwise_pass3x3s1
#define ireegen_i8_depthwise_band ireegen_i8_pc_depthwise_band
#define ireegen_i8_depthwise_band_3x3s1 ireegen_i8_pc_depthwise_band_3x3s1
#define ireegen_i8_depthwise_band_3x3s2 ireegen_i8_pc_depthwise_band_3x3s2
#define ireegen_i8_depthwise_band_any ireegen_i8_pc_depthwise_band_any
#define ireegen_i8_depthwise_conv_mve ireegen_i8_pc_depthwise_conv_mve
#define ireegen_i8_depthwise_flat ireegen_i8_pc_depthwise_flat
#define ireegen_i8_factor_set ireegen_i8_pc_factor_set
#define ireegen_i8_scales4_split ireegen_i8_pc_scales4_split
#define ireegen_i8_scales4_load ireegen_i8_pc_scales4_load
#define ireegen_i8_scales4_pair ireegen_i8_pc_scales4_pair
#define ireegen_i8_scales4_dup ireegen_i8_pc_scales4_dup
#define ireegen_i8_scale4v_mve ireegen_i8_pc_scale4v_mve

#endif  // IREEGEN_INT8_PER_CHANNEL_H_
