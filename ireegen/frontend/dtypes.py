"""numpy dtypes for the signature's element types.  numpy has no bfloat16:
with the `ml_dtypes` package installed ireegen uses its bfloat16, without it
bf16 values are uint16 bit patterns (the upper half of a float32's bits),
the same thing the C API passes."""

from __future__ import annotations

import numpy as np


def numpy_dtype(name: str) -> np.dtype:
    if name == "bfloat16":
        try:
            import ml_dtypes

            return np.dtype(ml_dtypes.bfloat16)
        except ImportError:
            return np.dtype(np.uint16)
    return np.dtype(name)


def as_signature_dtype(a: np.ndarray, name: str) -> np.ndarray:
    """`a` as the signature's dtype when it holds the same bits: uint16 bit
    patterns for f16/bf16 (and bf16 .npy files as numpy reads them) are
    accepted and viewed, not converted."""
    want = numpy_dtype(name)
    if a.dtype == want or name not in ("float16", "bfloat16"):
        return a
    # uint16 bit patterns, or ml_dtypes' bfloat16 as np.load reads it back
    # without ml_dtypes' help (a 2-byte void).
    if a.dtype == np.uint16 or (a.dtype.kind == "V" and a.dtype.itemsize == 2 and name == "bfloat16"):
        return a.view(want)
    return a


def bfloat16_from_float32(x: np.ndarray) -> np.ndarray:
    """float32 values as bfloat16 (rounded to nearest even), in
    numpy_dtype("bfloat16")."""
    bits = np.ascontiguousarray(x, np.float32).view(np.uint32).astype(np.uint64)
    rounded = ((bits + 0x7FFF + ((bits >> 16) & 1)) >> 16).astype(np.uint16)
    return rounded.view(numpy_dtype("bfloat16"))
