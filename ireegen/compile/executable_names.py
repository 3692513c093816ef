"""The executables' C symbols, under the model's prefix.

IREE names an executable after the function its dispatch came from
(`<function>_dispatch_0`), and a static library's entry point after the
executable (`<executable>_library_query`): a global C symbol.  Only a program
with several executables gets a name ireegen chose (they are linked into
`<module>_linked`, and ireegen names the module NAME__module).  So a graph
called `main_graph` (torch.onnx.export's default) gave two models the same
global symbol, and the linker silently kept one of them; and a graph name
with `;{}()` went into C as it was.

The compile therefore stops at `stream`, where every executable is a
`stream.executable` symbol, renames each to NAME__<the old name as a C
identifier> (model names never contain `__`, so no other model, and no
ireegen name, can have it), and continues.  The name is then a C identifier
whatever the model called its functions."""

from __future__ import annotations

import re

# Executable ops at the stages the rename may run at.
_EXECUTABLE_OPS = ("stream.executable", "hal.executable", "flow.executable")
# How much of the old name the new one keeps (C99 keeps 63 significant
# characters of external names; NAME is at most 64, and the suffix
# `_library_query` follows).
_KEPT = 40


def executable_symbol(prefix: str, old: str, taken: set) -> str:
    """NAME__<old as an identifier>, unique among `taken` (which it joins)."""
    ident = re.sub(r"_+", "_", re.sub(r"[^A-Za-z0-9_]", "_", old)).strip("_")[:_KEPT].strip("_") or "executable"
    base = f"{prefix}__{ident}"
    symbol, n = base, 1
    while symbol in taken:
        n += 1
        symbol = f"{base}_{n}"
    taken.add(symbol)
    return symbol


def prefix_executables(module, prefix: str) -> int:
    """Renames every executable of `module` (MLIR at `stream`, before IREE
    links executables) with every reference to it; returns how many.  A name
    that already starts with NAME__ is renamed too: it came from the model's
    function names, which may hold anything after it."""
    from iree.compiler import ir

    ops = [op.operation for op in module.body.operations if op.operation.name in _EXECUTABLE_OPS]
    names = [ir.StringAttr(op.attributes["sym_name"]).value for op in ops]
    taken = {
        ir.StringAttr(op.operation.attributes["sym_name"]).value
        for op in module.body.operations
        if "sym_name" in op.operation.attributes
    }
    renamed = 0
    for op, old in zip(ops, names):
        new = executable_symbol(prefix, old, taken)
        ir.SymbolTable.replace_all_symbol_uses(old, new, module.operation)
        op.attributes["sym_name"] = ir.StringAttr.get(new)
        renamed += 1
    return renamed
