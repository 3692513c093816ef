"""Deterministic EmitC output.

IREE's VM-to-EmitC conversion (ConvertVMToEmitC.cpp, `retainOrMoveRefs`,
used for branches, calls and returns that pass refs) iterates an IRMapping's
value map, a DenseMap keyed by pointer, so the order of the independent
ref copies it emits changes from run to run with heap addresses:

      v323 = &v322; ...; iree_vm_ref_retain(v17, v323);    <- order of these
      v326 = &v325; ...; iree_vm_ref_retain(v11, v326);       pairs varies
      iree_vm_ref_assign(v323, v8);
      iree_vm_ref_assign(v326, v5);

Every source is copied into its own temporary before any destination is
written, so any order of the pairs computes the same thing.  This pass puts
the (source, destination) pairs of each such group in one canonical order
(by destination), keeping the temporaries where they are; it touches only
groups that match the pattern exactly.
"""

from __future__ import annotations

import re

_TEMP = re.compile(r"^(\s*)(v\d+) = &(v\d+);$")
_SIZE = re.compile(r"^\s*(v\d+) = sizeof\(iree_vm_ref_t\);$")
_MEMSET = re.compile(r"^\s*memset\((v\d+), 0, (v\d+)\);$")
_FIRST = re.compile(r"^(\s*)(iree_vm_ref_retain|iree_vm_ref_move)\((v\d+), (v\d+)\);$")
_SECOND = re.compile(r"^(\s*)(iree_vm_ref_assign|iree_vm_ref_move)\((v\d+), (v\d+)\);$")
_SECOND_OF = {"iree_vm_ref_retain": "iree_vm_ref_assign", "iree_vm_ref_move": "iree_vm_ref_move"}


def _temp_block(lines, i):
    """(next index, temp, source, callee) when lines[i:] start one temporary's
    copy (an optional `;` line, address, sizeof, memset, retain/move)."""
    j = i + 1 if lines[i].strip() == ";" else i
    if j + 3 >= len(lines):
        return None
    t, s, m, c = (
        _TEMP.match(lines[j]),
        _SIZE.match(lines[j + 1]),
        _MEMSET.match(lines[j + 2]),
        _FIRST.match(lines[j + 3]),
    )
    if not (t and s and m and c):
        return None
    temp = t.group(2)
    if m.group(1) != temp or m.group(2) != s.group(1) or c.group(4) != temp:
        return None
    return j + 4, temp, c.group(3), c.group(2)


def _number(var: str) -> int:
    return int(var[1:])


def canonical_ref_copies(text: str) -> str:
    lines = text.split("\n")
    i = 0
    while i < len(lines):
        blocks, k = [], i
        while k < len(lines):
            b = _temp_block(lines, k)
            if not b or (blocks and b[3] != blocks[0][4]):
                break
            blocks.append((k, *b))
            k = b[0]
        if len(blocks) < 2:
            i += 1
            continue
        callee = _SECOND_OF[blocks[0][4]]
        seconds = []
        for n, block in enumerate(blocks):
            m = _SECOND.match(lines[k + n]) if k + n < len(lines) else None
            if not m or m.group(2) != callee or m.group(3) != block[2]:
                break
            seconds.append(m)
        if len(seconds) != len(blocks):
            i = k
            continue
        pairs = sorted(((b[3], s.group(4)) for b, s in zip(blocks, seconds)), key=lambda p: _number(p[1]))
        for n, (block, (src, dst)) in enumerate(zip(blocks, pairs)):
            first = block[1] - 1  # the retain/move line
            indent = _FIRST.match(lines[first]).group(1)
            lines[first] = f"{indent}{block[4]}({src}, {block[2]});"
            indent = seconds[n].group(1)
            lines[k + n] = f"{indent}{callee}({block[2]}, {dst});"
        i = k + len(blocks)
    return "\n".join(lines)
