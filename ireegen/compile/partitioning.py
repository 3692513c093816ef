"""Runtimeless: how IREE partitions the stream, chosen per model for the
smaller arena.

The runtimeless C runs one dispatch at a time, so IREE's default
partitioning for concurrency buys nothing and can keep buffers live early
(the zero fill of a convolution's padded input starts while the layer
before still runs): keyword spotting's float arena is 131.6 KB with it and
83.2 KB with `debug` partitioning (no concurrency).  But IREE's layout of
the buffers is greedy, and on some int8 models it lays the sequential
schedule out worse than the concurrent one (keyword spotting int8: 52.1 KB
against 40.0 KB).  So the stream phase is compiled both ways and the one
with fewer transient bytes is kept (the first on a tie); a partitioning the
user passes with --iree-flag is kept as given.  Each compile's buffer
lifetimes are read for the arena's lower bound (slice_liveness.py)."""

from __future__ import annotations

import re
from pathlib import Path

from . import slice_liveness

FLAG = "--iree-stream-partitioning-favor"
CHOICES = ("debug", "max-concurrency")  # the first wins a tie

_TRANSIENT = re.compile(r"stream\.resource\.alloca\b[^\n]*!stream\.resource<transient>\{(%[\w$.-]+)\}")
_INDEX_CONSTANT = re.compile(r"(%[\w$.-]+)\s*=\s*arith\.constant\s+(\d+)\s*:\s*index\b")


def user_chose(flags) -> bool:
    return any(str(f).split("=", 1)[0] == FLAG for f in flags)


def transient_bytes(stream_text: str) -> int | None:
    """The bytes of every transient allocation in a stream-phase program;
    None when one has a size known only at run time."""
    constants = {m.group(1): int(m.group(2)) for m in _INDEX_CONSTANT.finditer(stream_text)}
    sizes = [constants.get(v) for v in _TRANSIENT.findall(stream_text)]
    return None if None in sizes else sum(sizes)


def compile_stream(compiler, workdir: Path, diagnostics_name: str, source, stream, staged) -> tuple:
    """Compiles `source` to the stream phase into `stream` (flags `staged`)
    with each partitioning and keeps the one with fewer transient bytes.
    Returns its lower bounds (slice_liveness.read_lower_bounds) and its flag
    (None when `staged` already names a partitioning)."""
    workdir = Path(workdir)
    if user_chose(staged):
        dump = slice_liveness.dump_flags()
        compiler.compile(source, stream, [*staged, "--compile-to=stream", *dump], diagnostics_name, cwd=workdir)
        return slice_liveness.read_lower_bounds(workdir), None
    tried = []
    for i, choice in enumerate(CHOICES):
        out = stream if i == 0 else f"stream-{choice}.mlir"
        directory = f"{slice_liveness.DUMP_DIR}-{choice}"
        dump = slice_liveness.dump_flags(directory)
        compiler.compile(
            source, out, [*staged, "--compile-to=stream", f"{FLAG}={choice}", *dump], diagnostics_name, cwd=workdir
        )
        bounds = slice_liveness.read_lower_bounds(workdir, directory)
        size = transient_bytes((workdir / out).read_text(errors="replace"))
        tried.append((size is None, size or 0, i, choice, out, bounds))
    best = min(tried)
    for _, _, _, _, out, _ in tried:
        if out != best[4]:
            (workdir / out).unlink()
    if best[4] != stream:
        (workdir / best[4]).replace(workdir / stream)
    return best[5], f"{FLAG}={best[3]}"
