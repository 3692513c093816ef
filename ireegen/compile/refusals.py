"""Configurations ireegen refuses for a model because IREE builds a module
that computes wrong numbers or fails at run time, and ireegen has no
workaround for it.  Each refusal is a detection in the model's IR (the
construct that triggers the bug), never the model's name or size, and its
message names the bug, the configuration to use instead, and
docs/known-iree-issues.md, which has a section per entry.

emitc-control-flow: EmitC (`--output-format=vm-c`) output of a function with
host-side control flow (a loop or branch the VM runs: scf.for/while/if,
cf.br/cond_br, several blocks) fails at run time with IREE 3.13 async
(`ref type mismatch; while invoking native function hal.fence.join`) while
the bytecode module of the same compile runs.  The inline models' EmitC is
refused too: no IREE runtime SDK was at hand to show it correct.

emitc-names: EmitC pastes every function's name into C as it is
(`static iree_status_t NAME__module_torch-jit-export(...)`): a name that is
not a C identifier gives C that does not compile, and a name with a newline
gives C directives or code.  Checked always, workarounds or not (it is the
model's text becoming code, not a wrong number).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

from ireegen.common.errors import UsageError
from ireegen.common.resources import doc

# Host-side control flow: ops that make the VM branch at run time.
_CONTROL_FLOW = {
    "scf.for",
    "scf.while",
    "scf.if",
    "scf.index_switch",
    "scf.execute_region",
    "cf.br",
    "cf.cond_br",
    "cf.switch",
}
_FUNCTIONS = ("func.func", "util.func")


def _control_flow_in(body_region) -> str | None:
    """The first host control-flow op of a function body (looking inside
    control-flow regions, not inside linalg/tensor ops, whose regions are
    device code), or a description of a multi-block body."""
    blocks = list(body_region.blocks)
    if len(blocks) > 1:
        return "branches between blocks"
    for block in blocks:
        for child in block.operations:
            op = child.operation
            if op.name in _CONTROL_FLOW:
                return op.name
    return None


def functions_with_control_flow(module) -> dict:
    """name -> the control-flow construct found, for every function of the
    module (public or private) whose body runs control flow on the host."""
    from iree.compiler import ir

    found = {}
    for child in module.body.operations:
        op = child.operation
        if op.name not in _FUNCTIONS or not op.regions or not list(op.regions[0].blocks):
            continue
        what = _control_flow_in(op.regions[0])
        if what:
            found[ir.StringAttr(op.attributes["sym_name"]).value] = what
    return found


@dataclass(frozen=True)
class Refusal:
    name: str
    module_formats: tuple
    execution_models: tuple
    detect: Callable  # (module) -> description of the trigger, or None
    bug: str  # what IREE gets wrong, for the message
    instead: str  # what to use instead


def _emitc_control_flow(module) -> str | None:
    found = functions_with_control_flow(module)
    if not found:
        return None
    name, what = sorted(found.items())[0]
    return f"@{name} has host control flow ({what})"


REFUSALS = (
    Refusal(
        "emitc-control-flow",
        module_formats=("emitc",),
        execution_models=("async", "inline-static", "inline-dynamic"),
        detect=_emitc_control_flow,
        bug="IREE's EmitC output fails at run time on loops and branches (EmitC control-flow bug)",
        instead="--module-format vmfb",
    ),
)


def check_refusals(model, model_name: str, execution_model: str, module_format: str | None) -> None:
    """Raises UsageError if IREE is known to build a broken module for this
    model in this configuration."""
    for refusal in REFUSALS:
        if module_format not in refusal.module_formats or execution_model not in refusal.execution_models:
            continue
        with model.context:
            trigger = refusal.detect(model.module)
        if trigger:
            raise UsageError(
                f"{model_name}: --module-format {module_format} refused: {trigger}, and {refusal.bug}; "
                f"use {refusal.instead} (see {doc('known-iree-issues.md')})"
            )


_C_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def check_emitc_names(model, model_name: str, module_format: str | None) -> None:
    """Refuses EmitC for a module with a function (public or private) whose
    name is not a C identifier: IREE's EmitC writes it into C as it is."""
    if module_format != "emitc":
        return
    from iree.compiler import ir

    with model.context:
        for child in model.module.body.operations:
            op = child.operation
            if op.name not in _FUNCTIONS or "sym_name" not in op.attributes:
                continue
            name = ir.StringAttr(op.attributes["sym_name"]).value
            if not _C_IDENTIFIER.fullmatch(name):
                raise UsageError(
                    f"{model_name}: --module-format emitc refused: function {_shown(name)} is not a C identifier, "
                    f"and IREE's EmitC writes function names into C as they are; use --module-format vmfb "
                    f"(see {doc('known-iree-issues.md')})"
                )


def _shown(name: str) -> str:
    """A function name for a one-line message: @name, quoted and escaped when
    it holds anything but printable ASCII."""
    text = "@" + name
    return text if text.isascii() and text.isprintable() else repr(text)
