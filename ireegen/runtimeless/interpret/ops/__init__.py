"""The interpreter's op table: op name -> handler, merged from one table
per dialect, as MLIR groups its patterns.

A handler is `handler(interp, op, operands) -> results`: `interp` the
Interpreter (its state and shared helpers), `op` the MLIR operation, and
`operands` the abstract values of its operands (an int or float when known
at emit time, a Sym when only known at run time, a Buf, a View, ...).  It
returns one value per result, or, for a terminator, a Jump or a Return
(values.py); it refuses what runtimeless C cannot do with `interp.fail(op,
reason)`.  An op name belongs to the table of its dialect (its prefix).
"""

from __future__ import annotations

from . import arith, cf, func, hal, math, util

DIALECTS = {"arith": arith.OPS, "math": math.OPS, "util": util.OPS, "func": func.OPS, "cf": cf.OPS, "hal": hal.OPS}


def _merged(tables: dict) -> dict:
    merged = {}
    for dialect, table in tables.items():
        for name, handler in table.items():
            if not name.startswith(dialect + "."):
                raise AssertionError(f"ops/{dialect}.py: `{name}` belongs in the table of its own dialect")
            if name in merged:
                raise AssertionError(f"ops/{dialect}.py: `{name}` has a handler in two tables")
            merged[name] = handler
    return merged


OPS = _merged(DIALECTS)
