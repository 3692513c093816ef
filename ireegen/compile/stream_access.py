"""How each dispatch uses its bindings, read from the stream phase.

The HAL-level program the runtimeless interpreter reads says which byte
ranges a dispatch binds, not whether it reads or writes them (the
executables are compiled into a static library, their layouts are gone).
The stream phase says it: `ro`, `wo` or `rw` on each binding of each
`stream.cmd.dispatch`.  This reads them, in program order, per function,
with each binding's offset and length when they are constants, so that the
runtimeless lowering can match them to the HAL program's dispatches
(runtimeless/slab.py) and use them only where they match."""

from __future__ import annotations

import re

_FUNC = re.compile(
    r"^\s*(?:util\.func\s+(?:(?:public|private|nested)\s+)?@(\"(?:[^\"\\]|\\.)*\"|[\w$.-]+)|util\.initializer\b)", re.M
)
_DISPATCH = re.compile(r"stream\.cmd\.dispatch\b[^{\n]*\{(.*?)\n\s*\}", re.S)
_BINDING = re.compile(r"^\s*(ro|wo|rw)\s+%[\w$.-]+\[(%[\w$.-]+)\s+for\s+(%[\w$.-]+)\]", re.M)
_INDEX_CONSTANT = re.compile(r"(%[\w$.-]+)\s*=\s*arith\.constant\s+(\d+)\s*:\s*index\b")


def read(text: str) -> dict:
    """{function symbol as MLIR prints it (quotes dropped, `$async` kept):
    [per dispatch, in order: [(mode, offset or None, length or None) per
    binding]]}."""
    starts = [(m.start(), (m.group(1) or "").strip('"')) for m in _FUNC.finditer(text)]  # "": an initializer
    functions = {}
    for k, (start, name) in enumerate(starts):
        body = text[start : starts[k + 1][0] if k + 1 < len(starts) else len(text)]
        constants = {m.group(1): int(m.group(2)) for m in _INDEX_CONSTANT.finditer(body)}
        dispatches = [
            [(mode, constants.get(off), constants.get(length)) for mode, off, length in _BINDING.findall(d)]
            for d in _DISPATCH.findall(body)
        ]
        if dispatches and name:
            functions[name] = dispatches
    return functions
