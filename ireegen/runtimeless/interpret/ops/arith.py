"""arith: host scalars, folded when known, else a line of C
(host_scalars.py holds the folds, the C and the bounds of every op)."""

from __future__ import annotations

from ... import host_scalars as hs
from ...schedule import Sym
from .math import float_unary


def constant(interp, op, a):
    text = str(op.attributes["value"])
    if text in ("true", "false"):
        return [1 if text == "true" else 0]
    try:
        return [hs.wrap(int(text.split(":")[0].strip()), hs.width(op.results[0].type))]
    except ValueError:
        return [hs.round_float(float(text.split(":")[0].strip()), op.results[0].type)]


def int_binary(interp, op, a):
    """Every op of host_scalars.FOLD_INT (name -> fold function)."""
    x, y = a
    if isinstance(x, Sym) or isinstance(y, Sym):
        return [c_binary(interp, op, x, y)]
    try:
        return [hs.fold_int(op.name, x, y, hs.width(op.results[0].type))]
    except ZeroDivisionError:
        interp.fail(op, "division by zero")


def float_binary(interp, op, a):
    """Every op of host_scalars.FLOAT_BINARY."""
    x, y = a
    if isinstance(x, Sym) or isinstance(y, Sym):
        return [c_binary(interp, op, x, y)]
    return [hs.fold_float(op.name, x, y, op.results[0].type)]


def c_binary(interp, op, x, y) -> Sym:
    """A binary op on a run-time value: its C, and the bounds of an integer result."""
    mlir_type = str(op.results[0].type)
    bits = hs.width(mlir_type)
    bounds = (
        hs.bounds_binary(op.name, interp.bounds(x, mlir_type), interp.bounds(y, mlir_type), bits)
        if bits
        else hs.UNKNOWN
    )
    return interp.let(
        op, mlir_type, hs.c_binary(op.name, interp.c_operand(op, x, 0), interp.c_operand(op, y, 1), mlir_type), bounds
    )


def cmpi(interp, op, a):
    x, y = a
    predicate, bits = hs.cmpi_predicate(op.attributes["predicate"]), hs.width(op.operands[0].type)
    if isinstance(x, Sym) or isinstance(y, Sym):
        return [
            interp.let(
                op, "i1", hs.c_cmpi(predicate, interp.c_operand(op, x, 0), interp.c_operand(op, y, 1), bits), (0, 1)
            )
        ]
    return [hs.fold_cmpi(predicate, x, y, bits)]


def cmpf(interp, op, a):
    x, y = a
    predicate = hs.cmpf_predicate(op.attributes["predicate"])
    if isinstance(x, Sym) or isinstance(y, Sym):
        return [
            interp.let(
                op,
                "i1",
                hs.c_cmpf(predicate, interp.c_operand(op, x, 0), interp.c_operand(op, y, 1), op.operands[0].type),
                (0, 1),
            )
        ]
    return [hs.fold_cmpf(predicate, x, y)]


def select(interp, op, a):
    cond, x, y = a
    if not isinstance(cond, Sym):
        return [x if cond else y]
    if hs.c_type(op.results[0].type) is None:
        interp.fail(
            op,
            "a choice between buffers or views made on a value only known at run time (data-dependent control flow)",
        )
    return [
        interp.let(
            op,
            str(op.results[0].type),
            hs.c_select(cond.expr, interp.c_operand(op, x, 1), interp.c_operand(op, y, 2), op.results[0].type),
            hs.bounds_select(interp.bounds(x, op.results[0].type), interp.bounds(y, op.results[0].type)),
        )
    ]


CASTS = (
    "arith.index_cast",
    "arith.index_castui",
    "arith.trunci",
    "arith.extui",
    "arith.extsi",
    "arith.bitcast",
    "arith.sitofp",
    "arith.uitofp",
    "arith.fptosi",
    "arith.fptoui",
    "arith.extf",
    "arith.truncf",
)


def cast(interp, op, a):
    x = a[0]
    source, result = op.operands[0].type, op.results[0].type
    if isinstance(x, Sym):
        expr = hs.c_cast(op.name, x.expr, source, result)
        if expr is None:
            interp.fail(op, f"`{op.name}` from {source} to {result} on a run-time value")
        bounds = hs.bounds_cast(op.name, x.bounds, source, result)
        return [interp.let(op, str(result), expr, bounds, hs.cast_calls(op.name, source, result))]
    try:
        return [hs.fold_cast(op.name, x, source, result)]
    except ValueError as e:
        interp.fail(op, str(e))


OPS = {
    "arith.constant": constant,
    **dict.fromkeys(hs.FOLD_INT, int_binary),
    **dict.fromkeys(hs.FLOAT_BINARY, float_binary),
    **{name: float_unary for name in hs.FLOAT_UNARY if name.startswith("arith.")},
    "arith.cmpi": cmpi,
    "arith.cmpf": cmpf,
    "arith.select": select,
    **dict.fromkeys(CASTS, cast),
}
