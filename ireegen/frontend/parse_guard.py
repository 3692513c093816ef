"""The Python bindings' MLIR parser crashes (SIGSEGV) on some malformed
custom-op syntax, e.g. `linalg.transpose ... permutation = ([1, 0]` (found
by tests/test_fuzz.py with iree-base-compiler 3.13); iree-opt reports
"expected '['" and then crashes too, but in its own process.  So the model is parsed by iree-opt (shipped beside
iree-compile) first; a model it rejects is refused with its diagnostics, and
the bindings only ever parse models that parse.  (A fork of the running
process cannot do this check: MLIR contexts start threads, and a forked
child can deadlock on a lock one of them held.)"""

from __future__ import annotations

import os
import re
import subprocess

import numpy as np

from ireegen.common.errors import DiagnosticsError, UsageError
from ireegen.common.untrusted import argv_path


def _iree_opt():
    try:
        from iree.compiler.tools import binaries

        return binaries.find_tool("iree-opt")
    except Exception:  # noqa: BLE001 - without the tool there is no pre-check
        return None


# Brackets, braces and parentheses an MLIR file may nest: MLIR's parser
# recurses once per level and overflows its stack (SIGSEGV) somewhere between
# 5,000 and 20,000 levels (iree-opt 3.13); real models nest a few dozen deep.
MAX_NESTING = 1000
_SKIPPED = re.compile(rb'"(?:[^"\\\n]|\\.)*"|//[^\n]*|->|[<>]=')  # strings, comments, arrows
_OPEN = np.frombuffer(b"([{<", np.uint8)
_CLOSE = np.frombuffer(b")]}>", np.uint8)


def nesting_depth(data: bytes) -> int:
    """How deep brackets, braces, parentheses and angle brackets nest in MLIR
    text, outside string literals and comments."""
    code = np.frombuffer(_SKIPPED.sub(b" ", data), np.uint8)
    if code.size == 0:
        return 0
    steps = np.isin(code, _OPEN).astype(np.int64) - np.isin(code, _CLOSE).astype(np.int64)
    return int(max(np.cumsum(steps).max(), 0))


def check_nesting(path) -> None:
    """Refuses MLIR text nested deeper than the parser's stack can take,
    before any parser sees it."""
    with open(path, "rb") as f:
        data = f.read()
    if data.startswith(b"ML\xefR"):  # MLIR bytecode: no text to scan
        return
    depth = nesting_depth(data)
    if depth > MAX_NESTING:
        raise UsageError(
            f"{path}: MLIR nested {depth:,} levels deep (brackets, braces, parentheses); "
            f"ireegen reads at most {MAX_NESTING:,} levels, as MLIR's parser would overflow its stack"
        )


def check_parses(path) -> None:
    check_nesting(path)
    tool = _iree_opt()
    if not tool:
        return
    try:
        proc = subprocess.run(
            [tool, argv_path(path), "-o", os.devnull],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
            errors="replace",
            timeout=600,
        )
    except (OSError, subprocess.TimeoutExpired):
        return
    if proc.returncode == 0:
        return
    # Up to the crash report some parser errors end in (an MLIR bug of its own).
    text = proc.stderr.split("Please report issues to", 1)[0].split("Stack dump:", 1)[0]
    lines = [line for line in text.splitlines() if line.strip()][:8]
    if not lines:
        how = f"crashed with signal {-proc.returncode}" if proc.returncode < 0 else f"exited with {proc.returncode}"
        raise UsageError(f"{path}: iree-opt {how} reading it, without a diagnostic")
    raise DiagnosticsError(f"{path}: malformed MLIR:", ["  " + line for line in lines])
