// Runs ireegen's int8 kernels on the cases of a file, on a bare-metal core
// under qemu (tests/test_int8_kernels.py writes the cases and compares the
// outputs with ONNX Runtime's): `driver CASES OUT`, over semihosting.
//
// Each case: the kernel (0 fully connected, 1 convolution, 2 depthwise, 3
// add; 4, 5, 6 the first three per channel; 7, 8, 9, 10 the four with
// TFLite Micro's requantization, the _tflm entry points), 20 uint32
// parameters (the
// kernel's sizes, then the scales' bits and zero points), the byte counts of
// x, w, bias and y, the weights' element offset, then x, w and the int32
// bias (an Add's two inputs are x and w), and per channel one float
// multiplier per output channel (TFLM: two int32, its multiplier and shift).
// The y of each case is appended to OUT.
#include <stdint.h>
#include <stdio.h>

#include "ireegen_int8.h"

#define BUFFER (65536 + 16)

static int8_t x[BUFFER] __attribute__((aligned(16)));
static int8_t w[BUFFER] __attribute__((aligned(16)));
static int32_t bias[BUFFER / 4];
static union {
  float multipliers[BUFFER / 4];
  int32_t factors[BUFFER / 4];
} table;
#define multipliers table.multipliers
static int8_t y[BUFFER];

static int read_all(FILE* f, void* p, size_t n) {
  return fread(p, 1, n, f) == n;
}

int main(int argc, char** argv) {
  if (argc != 3) return 2;
  FILE* in = fopen(argv[1], "rb");
  FILE* out = fopen(argv[2], "wb");
  if (in == NULL || out == NULL) return 3;
  uint32_t kind;
  while (fread(&kind, sizeof kind, 1, in) == 1) {
    uint32_t p[20], count[5];
    if (!read_all(in, p, sizeof p) || !read_all(in, count, sizeof count))
      return 4;
    const uint32_t offset = count[4];
    if (count[0] > BUFFER || count[1] + offset > BUFFER || count[2] > BUFFER ||
        count[3] > BUFFER)
      return 5;
    if (!read_all(in, x, count[0]) || !read_all(in, w + offset, count[1]) ||
        !read_all(in, bias, count[2]))
      return 6;
    // Per channel: a multiplier per output (the FC's n, a convolution's f).
    const uint32_t tflm = kind >= 7 && kind <= 9;
    const uint32_t outputs = kind == 4 || kind == 7   ? p[1]
                             : kind > 4 && kind != 10 ? p[4]
                                                      : 0;
    if (outputs > BUFFER / 8 ||
        !read_all(in, multipliers, (1 + tflm) * outputs * sizeof(float)))
      return 6;
    if (kind == 7) {
      ireegen_i8_fully_connected_tflm(x, 0, w, offset, bias, 0, table.factors,
                                      0, y, 0, p[0], p[1], p[2], (int32_t)p[4],
                                      (int32_t)p[7]);
    } else if (kind == 10) {
      ireegen_i8_add_tflm(x, 0, w, offset, y, 0, p[0], p[1], (int32_t)p[2],
                          p[3], (int32_t)p[4], p[5], (int32_t)p[6]);
    } else if (kind >= 8) {
      (kind == 8 ? ireegen_i8_convolution_tflm
                 : ireegen_i8_depthwise_conv_tflm)(
          x, 0, w, offset, bias, 0, table.factors, 0, y, 0, p[0], p[1], p[2],
          p[3], p[4], p[5], p[6], p[7], p[8], p[9], p[10], p[11],
          (int32_t)p[13], (int32_t)p[16]);
    } else if (kind == 4) {
      ireegen_i8_fully_connected_per_channel(
          x, 0, w, offset, bias, 0, multipliers, 0, y, 0, p[0], p[1], p[2],
          (int32_t)p[4], (int32_t)p[7]);
    } else if (kind >= 5) {
      (kind == 5 ? ireegen_i8_convolution_per_channel
                 : ireegen_i8_depthwise_conv_per_channel)(
          x, 0, w, offset, bias, 0, multipliers, 0, y, 0, p[0], p[1], p[2],
          p[3], p[4], p[5], p[6], p[7], p[8], p[9], p[10], p[11],
          (int32_t)p[13], (int32_t)p[16]);
    } else if (kind == 0) {
      ireegen_i8_fully_connected(x, 0, w, offset, bias, 0, y, 0, p[0], p[1],
                                 p[2], p[3], (int32_t)p[4], p[5], p[6],
                                 (int32_t)p[7]);
    } else if (kind == 3) {
      ireegen_i8_add(x, 0, w, offset, y, 0, p[0], p[1], (int32_t)p[2], p[3],
                     (int32_t)p[4], p[5], (int32_t)p[6]);
    } else {
      void (*conv)(const int8_t*, size_t, const int8_t*, size_t, const int32_t*,
                   size_t, int8_t*, size_t, size_t, size_t, size_t, size_t,
                   size_t, size_t, size_t, size_t, size_t, size_t, size_t,
                   size_t, uint32_t, int32_t, uint32_t, uint32_t, int32_t) =
          kind == 1 ? ireegen_i8_convolution : ireegen_i8_depthwise_conv;
      conv(x, 0, w, offset, bias, 0, y, 0, p[0], p[1], p[2], p[3], p[4], p[5],
           p[6], p[7], p[8], p[9], p[10], p[11], p[12], (int32_t)p[13], p[14],
           p[15], (int32_t)p[16]);
    }
    if (fwrite(y, 1, count[3], out) != count[3]) return 7;
  }
  fclose(out);
  return 0;
}
