"""Running iree-compile.

By default the iree-compile of the installed `iree-base-compiler` package;
`IREEGEN_IREE_COMPILE` (or an explicit path) selects another release, which
is how the parity harness checks a model against the IREE a user ships.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

from .errors import CompileError, UsageError


@dataclass(frozen=True)
class Compiler:
    path: str
    version: str  # e.g. "3.13.0rc20261016 @ 89ece87b..."

    def compile(self, source: Path, output: Path, flags, diagnostics_name: str, quiet_warnings=True) -> None:
        """Compiles `source` to `output`; on failure raises CompileError with
        the compiler's own diagnostics (which name the model's file:line)."""
        cmd = [self.path, str(source), "-o", str(output), *flags]
        proc = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        if proc.returncode != 0:
            raise CompileError(
                f"iree-compile failed for {diagnostics_name} (exit status {proc.returncode}):\n"
                + proc.stderr.rstrip()
                + "\ncommand: "
                + " ".join(cmd)
            )
        if proc.stderr.strip() and not quiet_warnings:
            sys.stderr.write(proc.stderr)


def _package_compiler() -> Compiler:
    try:
        from iree.compiler.tools import binaries
        from iree.compiler import version as vmod
    except ImportError as e:  # pragma: no cover - dependency is declared
        raise UsageError(f"the iree-base-compiler package is not installed ({e})") from None
    path = binaries.find_tool("iree-compile")
    rev = getattr(vmod, "REVISIONS", {}).get("IREE", "")
    return Compiler(path, f"{vmod.VERSION} @ {rev}" if rev else vmod.VERSION)


def compiler_at(path: str) -> Compiler:
    """An iree-compile binary given by path (or a name on PATH)."""
    resolved = shutil.which(path) or (path if os.path.isfile(path) else None)
    if not resolved:
        raise UsageError(f"iree-compile {path!r}: no such executable")
    proc = subprocess.run([resolved, "--version"], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    m = re.search(r"IREE compiler version (\S+)(?: @ (\S+))?", proc.stdout)
    if proc.returncode != 0 or not m:
        raise UsageError(f"{resolved}: does not look like iree-compile (--version said: {proc.stdout.strip()[:200]})")
    return Compiler(resolved, f"{m.group(1)} @ {m.group(2)}" if m.group(2) else m.group(1))


def find_compiler(path: str | None = None) -> Compiler:
    path = path or os.environ.get("IREEGEN_IREE_COMPILE")
    return compiler_at(path) if path else _package_compiler()
