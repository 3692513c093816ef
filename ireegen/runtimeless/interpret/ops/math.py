"""math: unary float functions on host scalars (arith.negf shares the handler)."""

from __future__ import annotations

from ... import host_scalars as hs
from ...schedule import Sym


def float_unary(interp, op, a):
    """Every op of host_scalars.FLOAT_UNARY: folded, or a call of C's <math.h>."""
    x, mlir_type = a[0], op.results[0].type
    if isinstance(x, Sym):
        expr = hs.c_float_unary(op.name, x.expr, mlir_type)
        return [interp.let(op, str(mlir_type), expr, calls=hs.float_unary_calls(op.name, mlir_type))]
    return [hs.fold_float_unary(op.name, x, mlir_type)]


OPS = {name: float_unary for name in hs.FLOAT_UNARY if name.startswith("math.")}
