// Which cores take the MVE (Helium) loops: Armv8.1-M with the integer
// vector extension (__ARM_FEATURE_MVE bit 0: the Cortex-M55, M85).  Those
// cores have the DSP extension too; the MVE loops replace the SMLAD ones
// where both exist (fully_connected_mve.h, convolution_mve.h,
// depthwise_mve.h); what they leave (long columns, wide planes) takes the
// SMLAD loops as on the M4.  The TFLM compile (tflm.h) takes them too,
// with TFLite Micro's requantization (requantize_mve.h).
#ifndef IREEGEN_INT8_MVE_H_
#define IREEGEN_INT8_MVE_H_

#if defined(__ARM_FEATURE_MVE) && (__ARM_FEATURE_MVE & 1)
#include <arm_mve.h>
#define IREEGEN_I8_MVE 1
#else
#define IREEGEN_I8_MVE 0
#endif

#endif  // IREEGEN_INT8_MVE_H_
