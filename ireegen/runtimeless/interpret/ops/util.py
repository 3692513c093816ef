"""util: globals, constant buffers, status checks and host-scalar helpers;
util.call and util.return are func's."""

from __future__ import annotations

from ... import host_scalars as hs
from ...schedule import Alloc, Buf, Check, Sym
from ..attrs import string_attr, symbol_ref
from ..constants import constant_bytes
from ..values import View
from .func import call, return_


def align(interp, op, a):
    x, n = a
    if isinstance(x, Sym) or isinstance(n, Sym):
        mlir_type = op.results[0].type
        return [
            interp.let(
                op,
                str(mlir_type),
                hs.c_align(interp.c_operand(op, x, 0), interp.c_operand(op, n, 1)),
                hs.bounds_align(interp.bounds(x, mlir_type), interp.bounds(n, mlir_type)),
            )
        ]
    return [hs.fold_align(x, n)]


def null(interp, op, a):
    return [None]


def cmp_eq(interp, op, a):
    return [1 if a[0] is a[1] or a[0] == a[1] else 0]


def optimization_barrier(interp, op, a):
    return list(a)


def global_load(interp, op, a):
    key = symbol_ref(op.attributes["global"])
    if key not in interp.globals:
        interp.fail(op, f"global @{key} is read before it is set")
    return [interp.globals[key]]


def global_store(interp, op, a):
    key = symbol_ref(op.attributes["global"])
    value = a[0]
    if isinstance(value, View):
        interp.fail(op, f"global @{key} keeps a tensor view across calls, which runtimeless C does not follow")
    if isinstance(value, Sym):
        interp.fail(op, f"global @{key} keeps a run-time scalar across calls (state that depends on the data)")
    if not interp.initializing and isinstance(value, Buf):
        interp.stored[key] = value
    interp.globals[key] = value
    return []


def status_check_ok(interp, op, a):
    msg = string_attr(op, "message", "failed")
    if isinstance(a[0], Sym):
        interp.steps.append(Check(f"{a[0].expr} == 0", msg, a[0].reads))
    elif a[0]:
        interp.fail(op, f"the program fails when run: {msg}")
    return []


def buffer_constant(interp, op, a):
    data, alignment = constant_bytes(interp, op)
    interp.allocs += 1
    alloc = Alloc(interp.allocs, "constant", len(data), data=data, alignment=alignment)
    interp.constants.append(alloc)
    return [Buf(alloc, 0, len(data))]


def buffer_size(interp, op, a):
    return [interp.buf(op, a[0]).length]


OPS = {
    "util.align": align,
    "util.null": null,
    "util.cmp.eq": cmp_eq,
    "util.optimization_barrier": optimization_barrier,
    "util.global.load": global_load,
    "util.global.store": global_store,
    "util.status.check_ok": status_check_ok,
    "util.call": call,
    "util.return": return_,
    "util.buffer.constant": buffer_constant,
    "util.buffer.size": buffer_size,
}
