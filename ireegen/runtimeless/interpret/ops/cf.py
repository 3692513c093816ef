"""cf: branches between blocks, followed when their condition is known at
emit time, and asserts, checked at run time when it is not."""

from __future__ import annotations

from ...schedule import Check, Sym
from ..attrs import string_attr
from ..values import Jump


def br(interp, op, a):
    return Jump(op.successors[0], a)


def cond_br(interp, op, a):
    cond = a[0]
    if isinstance(cond, Sym):
        interp.fail(
            op,
            "a branch on a value only known at run time (data-dependent control "
            "flow: a loop or branch on tensor values), which runtimeless C does not "
            "follow",
        )
    sizes = list(op.attributes["operandSegmentSizes"])
    true_args = a[1 : 1 + sizes[1]]
    false_args = a[1 + sizes[1] :]
    return Jump(op.successors[0], true_args) if cond else Jump(op.successors[1], false_args)


def assert_(interp, op, a):
    message = string_attr(op, "msg", "assertion failed")
    if isinstance(a[0], Sym):
        interp.steps.append(Check(a[0].expr, message, a[0].reads))
    elif not a[0]:
        interp.fail(op, f"the program always fails: {message}")
    return []


OPS = {
    "cf.br": br,
    "cf.cond_br": cond_br,
    "cf.assert": assert_,
}
