// C23 functions that IREE's executables call on soft-float cores (LLVM lowers
// its maximum/minimum intrinsics to them) and that newlib 3.3 lacks.  Weak,
// so a C library that has them wins.  IEEE 754-2019 semantics: a NaN operand
// gives NaN, and -0 is less than +0.
#include <math.h>

__attribute__((weak)) float fmaximumf(float a, float b) {
  if (isnan(a) || isnan(b)) return a + b;
  if (a == b) return signbit(a) ? b : a;
  return a > b ? a : b;
}

__attribute__((weak)) float fminimumf(float a, float b) {
  if (isnan(a) || isnan(b)) return a + b;
  if (a == b) return signbit(a) ? a : b;
  return a < b ? a : b;
}

__attribute__((weak)) double fmaximum(double a, double b) {
  if (isnan(a) || isnan(b)) return a + b;
  if (a == b) return signbit(a) ? b : a;
  return a > b ? a : b;
}

__attribute__((weak)) double fminimum(double a, double b) {
  if (isnan(a) || isnan(b)) return a + b;
  if (a == b) return signbit(a) ? a : b;
  return a < b ? a : b;
}
