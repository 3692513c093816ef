"""The Python bindings' MLIR parser crashes (SIGSEGV) on some malformed
custom-op syntax, e.g. `linalg.transpose ... permutation = ([1, 0]` (found
by tests/test_fuzz.py with iree-base-compiler 3.13), where iree-opt reports
"expected '['".  In-process that kills ireegen with no message, so the model
is parsed once in a forked child first; a child killed by a signal becomes a
UsageError carrying iree-opt's diagnostic.  The fork shares memory
copy-on-write and execs nothing; it costs one extra parse."""

from __future__ import annotations

import os
import signal
import sys

from .errors import UsageError


def check_parser_survives(path) -> None:
    if not hasattr(os, "fork") or sys.platform == "emscripten":
        return
    pid = os.fork()
    if pid == 0:  # child: parse, report nothing, exit without cleanup
        status = 1
        try:
            from iree.compiler import ir

            ir.Module.parseFile(str(path), ir.Context())
            status = 0
        except BaseException:
            status = 1
        finally:
            os._exit(status)
    _, status = os.waitpid(pid, 0)
    if os.WIFSIGNALED(status):
        sig = os.WTERMSIG(status)
        name = signal.Signals(sig).name if sig in signal.Signals._value2member_map_ else str(sig)
        raise UsageError(f"{path}: malformed MLIR (the Python bindings' parser crashed with {name}):\n"
                         + (_iree_opt_diagnostic(path) or "  (iree-opt gave no diagnostic)"))


def _iree_opt_diagnostic(path) -> str:
    import subprocess

    try:
        from iree.compiler.tools import binaries

        tool = binaries.find_tool("iree-opt")
        proc = subprocess.run([tool, str(path), "-o", os.devnull], stdout=subprocess.DEVNULL,
                              stderr=subprocess.PIPE, text=True, errors="replace", timeout=120)
    except Exception:  # noqa: BLE001 - only the message is at stake
        return ""
    return "\n".join("  " + line for line in proc.stderr.splitlines()[:3])
