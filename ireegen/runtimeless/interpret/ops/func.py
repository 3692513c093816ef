"""func: calls and returns (util.call and util.return share these handlers)."""

from __future__ import annotations

from ..attrs import symbol_ref
from ..values import Return


def call(interp, op, a):
    callee = interp.funcs.get(symbol_ref(op.attributes["callee"]))
    if callee is None or not callee.regions or not callee.regions[0].blocks:
        interp.fail(op, "a call to an external function (an import runtimeless C does not provide)")
    return interp.run_region(callee.regions[0], a)


def return_(interp, op, a):
    return Return(list(a))


OPS = {
    "func.call": call,
    "func.return": return_,
}
