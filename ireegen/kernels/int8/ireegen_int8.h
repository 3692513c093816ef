// ireegen's int8 kernels: the calls int8.match.mlir puts in place of IREE's
// own code for quantized (QDQ) convolution, fully connected and pooling.
//
// Each buffer comes as a base pointer and an element offset (MLIR's
// llvm.bareptr calling convention), each size as size_t (MLIR's index), each
// scale as the bits of an IEEE float and each zero point as an int32_t.
// The results equal ONNX Runtime's int8 operators bit for bit: an int32
// accumulation of (x - x_zero_point) * w plus the int32 bias, then
// requantization (requantize.h).
#ifndef IREEGEN_INT8_H_
#define IREEGEN_INT8_H_

#include <stddef.h>
#include <stdint.h>

// y[m][n] = requantize(bias[n] + sum_k (x[m][k] - x_zero) * w[n][k]): Gemm.
// w comes packed by the match spec at compile time (IREE's const-eval folds
// the packing of a constant weight into the constant): K padded with zeros
// to K4, a multiple of four; the first N4 = N - N % 4 rows in groups of
// four, each laid out (K4 / 4, 4, 4), so that four rows' weights for four
// adjacent inputs are 16 contiguous bytes, row by row; then the last N % 4
// rows as they are, K4 bytes each.  Element (j, c) of a group sits at
// (j / 4) * 4 * K4 + (c / 4) * 16 + (j % 4) * 4 + c % 4, of the last rows
// at j * K4 + c.  A (K, N) weight (Gemm transB=0) is transposed first, in
// the same folded computation.
void ireegen_i8_fully_connected(const int8_t* x, size_t x_offset,
                                const int8_t* w, size_t w_offset,
                                const int32_t* bias, size_t bias_offset,
                                int8_t* y, size_t y_offset, size_t m, size_t n,
                                size_t k, uint32_t x_scale, int32_t x_zero,
                                uint32_t w_scale, uint32_t y_scale,
                                int32_t y_zero);

// NCHW convolution, weights (F, C, KH, KW), output (N, F, OH, OW):
// y = requantize(bias[f] + sum (x - x_zero) * w).  Positions in the
// padding (pad_top, pad_left, and what lies past the input) contribute
// nothing: they hold x_zero, so (x - x_zero) is 0 there.  No padded copy.
void ireegen_i8_convolution(const int8_t* x, size_t x_offset, const int8_t* w,
                            size_t w_offset, const int32_t* bias,
                            size_t bias_offset, int8_t* y, size_t y_offset,
                            size_t n, size_t c, size_t h, size_t wd, size_t f,
                            size_t kh, size_t kw, size_t oh, size_t ow,
                            size_t stride, size_t pad_top, size_t pad_left,
                            uint32_t x_scale, int32_t x_zero, uint32_t w_scale,
                            uint32_t y_scale, int32_t y_zero);

// Depthwise NCHW convolution (group = C, one filter per channel): weights
// (C, 1, KH, KW), output (N, C, OH, OW); `f` equals `c`.
void ireegen_i8_depthwise_conv(
    const int8_t* x, size_t x_offset, const int8_t* w, size_t w_offset,
    const int32_t* bias, size_t bias_offset, int8_t* y, size_t y_offset,
    size_t n, size_t c, size_t h, size_t wd, size_t f, size_t kh, size_t kw,
    size_t oh, size_t ow, size_t stride, size_t pad_top, size_t pad_left,
    uint32_t x_scale, int32_t x_zero, uint32_t w_scale, uint32_t y_scale,
    int32_t y_zero);

// Per-channel weights (ONNX Runtime's QLinearConv and QGemm with a weight
// scale per output channel): the same three operations, with the output
// multiplier of each output channel o, multipliers[o] =
// x_scale * w_scale[o] / y_scale in float as ONNX Runtime computes it (the
// match spec computes the table at compile time).
void ireegen_i8_fully_connected_per_channel(
    const int8_t* x, size_t x_offset, const int8_t* w, size_t w_offset,
    const int32_t* bias, size_t bias_offset, const float* multipliers,
    size_t multipliers_offset, int8_t* y, size_t y_offset, size_t m, size_t n,
    size_t k, int32_t x_zero, int32_t y_zero);
void ireegen_i8_convolution_per_channel(
    const int8_t* x, size_t x_offset, const int8_t* w, size_t w_offset,
    const int32_t* bias, size_t bias_offset, const float* multipliers,
    size_t multipliers_offset, int8_t* y, size_t y_offset, size_t n, size_t c,
    size_t h, size_t wd, size_t f, size_t kh, size_t kw, size_t oh, size_t ow,
    size_t stride, size_t pad_top, size_t pad_left, int32_t x_zero,
    int32_t y_zero);
void ireegen_i8_depthwise_conv_per_channel(
    const int8_t* x, size_t x_offset, const int8_t* w, size_t w_offset,
    const int32_t* bias, size_t bias_offset, const float* multipliers,
    size_t multipliers_offset, int8_t* y, size_t y_offset, size_t n, size_t c,
    size_t h, size_t wd, size_t f, size_t kh, size_t kw, size_t oh, size_t ow,
    size_t stride, size_t pad_top, size_t pad_left, int32_t x_zero,
    int32_t y_zero);

// The kernels of a .tflite source: the per-channel kernels with TFLite
// Micro's requantization (requantize_tflm.h) in place of ONNX Runtime's.
// `scales` holds two int32 per output channel o, TFLM's fixed-point factor
// of x_scale * w_scale[o] / y_scale (computed in double): scales[2 * o] its
// multiplier, scales[2 * o + 1] its shift; the offset counts int32.
void ireegen_i8_fully_connected_tflm(const int8_t* x, size_t x_offset,
                                     const int8_t* w, size_t w_offset,
                                     const int32_t* bias, size_t bias_offset,
                                     const int32_t* scales,
                                     size_t scales_offset, int8_t* y,
                                     size_t y_offset, size_t m, size_t n,
                                     size_t k, int32_t x_zero, int32_t y_zero);
void ireegen_i8_convolution_tflm(const int8_t* x, size_t x_offset,
                                 const int8_t* w, size_t w_offset,
                                 const int32_t* bias, size_t bias_offset,
                                 const int32_t* scales, size_t scales_offset,
                                 int8_t* y, size_t y_offset, size_t n, size_t c,
                                 size_t h, size_t wd, size_t f, size_t kh,
                                 size_t kw, size_t oh, size_t ow, size_t stride,
                                 size_t pad_top, size_t pad_left,
                                 int32_t x_zero, int32_t y_zero);
void ireegen_i8_depthwise_conv_tflm(
    const int8_t* x, size_t x_offset, const int8_t* w, size_t w_offset,
    const int32_t* bias, size_t bias_offset, const int32_t* scales,
    size_t scales_offset, int8_t* y, size_t y_offset, size_t n, size_t c,
    size_t h, size_t wd, size_t f, size_t kh, size_t kw, size_t oh, size_t ow,
    size_t stride, size_t pad_top, size_t pad_left, int32_t x_zero,
    int32_t y_zero);

// y[i] = saturate(round_half_even(x[i] / scale) + zero) for i < count: ONNX
// Runtime's QuantizeLinear (MLAS divides, then rounds half to even).
void ireegen_i8_quantize(const float* x, size_t x_offset, int8_t* y,
                         size_t y_offset, size_t count, uint32_t scale,
                         int32_t zero);

// y[i] = QLinearAdd(a[i], b[i]) for i < count, each tensor with its own
// scale and zero point (add.c: ONNX Runtime's arithmetic, step by step).
void ireegen_i8_add(const int8_t* a, size_t a_offset, const int8_t* b,
                    size_t b_offset, int8_t* y, size_t y_offset, size_t count,
                    uint32_t a_scale, int32_t a_zero, uint32_t b_scale,
                    int32_t b_zero, uint32_t y_scale, int32_t y_zero);

// The same with TFLite Micro's int8 ADD arithmetic, for a .tflite source
// (add_tflm.c).
void ireegen_i8_add_tflm(const int8_t* a, size_t a_offset, const int8_t* b,
                         size_t b_offset, int8_t* y, size_t y_offset,
                         size_t count, uint32_t a_scale, int32_t a_zero,
                         uint32_t b_scale, int32_t b_zero, uint32_t y_scale,
                         int32_t y_zero);

// NCHW average pool without padding, window (kh, kw), one stride for both
// axes, output (n, c, oh, ow): ONNX Runtime's QLinearAveragePool (its exact
// global path when the window is the image) (pool.c).
void ireegen_i8_average_pool(const int8_t* x, size_t x_offset, int8_t* y,
                             size_t y_offset, size_t n, size_t c, size_t h,
                             size_t w, size_t kh, size_t kw, size_t oh,
                             size_t ow, size_t stride, uint32_t x_scale,
                             int32_t x_zero, uint32_t y_scale, int32_t y_zero);

// The same where the window is the image (kh == h, kw == w): the global path
// alone, which the match spec calls when the shapes show it.
void ireegen_i8_global_average_pool(const int8_t* x, size_t x_offset, int8_t* y,
                                    size_t y_offset, size_t n, size_t c,
                                    size_t h, size_t w, size_t kh, size_t kw,
                                    size_t oh, size_t ow, size_t stride,
                                    uint32_t x_scale, int32_t x_zero,
                                    uint32_t y_scale, int32_t y_zero);

// Softmax over the last axis of a (rows, d) int8 tensor: ONNX Runtime's
// QLinearSoftmax (softmax.c).  The input's zero point cancels out.
void ireegen_i8_softmax(const int8_t* x, size_t x_offset, int8_t* y,
                        size_t y_offset, size_t rows, size_t d,
                        uint32_t x_scale, uint32_t y_scale, int32_t y_zero);

#endif  // IREEGEN_INT8_H_
