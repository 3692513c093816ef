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
import subprocess

from ireegen.common.errors import UsageError


def _iree_opt():
    try:
        from iree.compiler.tools import binaries

        return binaries.find_tool("iree-opt")
    except Exception:  # noqa: BLE001 - without the tool there is no pre-check
        return None


def check_parses(path) -> None:
    tool = _iree_opt()
    if not tool:
        return
    try:
        proc = subprocess.run(
            [tool, str(path), "-o", os.devnull],
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
    if proc.returncode < 0 or not lines:
        lines = lines or [f"iree-opt exited with {proc.returncode}"]
    raise UsageError(f"{path}: malformed MLIR:\n" + "\n".join("  " + line for line in lines))
