"""The liveness lower bound of a program's transient memory, from IREE's own
buffer lifetimes.

IREE packs every transient buffer of an execution region into one
allocation (`stream.resource.pack`): each slice has a lifetime, an interval
of the region's timeline, and a size; iree-stream-layout-slices then gives
them offsets.  After that pass the offsets are folded into the kernels, so
the HAL-level program the runtimeless interpreter reads sees one slab.
ireegen therefore has the stream phase print the packs just before they are
laid out (`--mlir-print-ir-before=iree-stream-layout-slices` into a
directory of files), and reads them here.

The lower bound of one pack is the largest sum of the sizes of the slices
live at one point of the timeline (each rounded up to the alignment): no
layout of those buffers can be smaller.  A function's bound is the largest
of its packs' (a lower bound too: packs of one function may be live
together).  A pack whose sizes are not constants has no bound."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

from ireegen.frontend.mlir_text import mlir_escaped

DUMP_DIR = "stream-slices"  # in the compile's work directory
ALIGNMENT = 64  # IREE's minimum resource offset alignment, as the layout uses it

_PACK = re.compile(r"stream\.resource\.pack\b[^\n]*?slices\(\{(.*?)\}\)", re.S)
_SLICE = re.compile(r"\[\s*(\d+)\s*,\s*(\d+)\s*\]\s*=\s*(%[\w$.-]+)")
_INDEX_CONSTANT = re.compile(r"(%[\w$.-]+)\s*=\s*arith\.constant\s+(\d+)\s*:\s*index\b")


def dump_flags(directory: str = DUMP_DIR) -> list:
    """iree-compile flags that write the packs, before layout, under `directory`."""
    return ["--mlir-print-ir-before=iree-stream-layout-slices", f"--mlir-print-ir-tree-dir={directory}"]


def parse_packs(text: str) -> list:
    """Every pack in one printed function: a list of (first, last, bytes) per
    pack, or None for a pack with a size that is not a constant."""
    constants = {m.group(1): int(m.group(2)) for m in _INDEX_CONSTANT.finditer(text)}
    packs = []
    for body in _PACK.findall(text):
        slices = [(int(a), int(b), constants.get(v)) for a, b, v in _SLICE.findall(body)]
        packs.append(None if any(size is None for _, _, size in slices) else slices)
    return packs


def lower_bound(slices, alignment: int = ALIGNMENT) -> int:
    """The most bytes live at once: the largest sum, over the timeline's
    points, of the (aligned) sizes of the slices live there."""
    points = sorted({first for first, _, _ in slices})
    return max(
        (sum(-(-size // alignment) * alignment for a, b, size in slices if a <= t <= b) for t in points),
        default=0,
    )


_FUNC = re.compile(r"^util\.func\s+(?:(?:public|private|nested)\s+)?@(\"(?:[^\"\\]|\\.)*\"|[\w$.-]+)", re.M)


def _function_symbol(text: str) -> str | None:
    """The symbol of the function a dump prints, as MLIR prints it (quotes
    dropped, escapes kept), without the `$async` of the body IREE wraps in
    NAME; None for initializers."""
    m = _FUNC.search(text)
    return m.group(1).strip('"').removesuffix("$async") if m else None


def read_lower_bounds(workdir: Path, directory: str = DUMP_DIR) -> dict:
    """{function symbol as MLIR prints it: lower bound in bytes, or None
    when a pack is dynamic} from the dump the stream phase wrote under
    workdir/directory (its file names are mangled: the symbol is read from
    the text); deletes the dump."""
    root = Path(workdir) / directory
    bounds = {}
    if not root.is_dir():
        return bounds
    for path in sorted(root.rglob("*.mlir")):
        text = path.read_text(errors="replace")
        name = _function_symbol(text)
        if name is None:
            continue
        bounds.setdefault(name, 0)
        for pack in parse_packs(text):
            known = bounds.get(name, 0)
            if pack is None or known is None:
                bounds[name] = None
            else:
                bounds[name] = max(known, lower_bound(pack))
    shutil.rmtree(root)
    return bounds


def bound_of(bounds: dict, function: str) -> int | None:
    """The lower bound of `function` (its name) in read_lower_bounds' result;
    None when unknown."""
    return bounds.get(mlir_escaped(function))
