"""Running iree-compile.

By default the iree-compile of the installed `iree-base-compiler` package;
`IREEGEN_IREE_COMPILE` (or an explicit path) selects another release, which
is how the parity harness checks a model against the IREE a user ships.
"""

from __future__ import annotations

import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

from ireegen.common.errors import CompileError, DiskFullError, UsageError
from ireegen.common.untrusted import argv_path, deadline_message, tool_deadline
from ireegen.output.outputs import STAGING_PREFIX


@dataclass(frozen=True)
class Compiler:
    path: str
    version: str  # e.g. "3.13.0rc20261016 @ 89ece87b..."

    def compile(
        self, source: Path, output: Path, flags, diagnostics_name: str, quiet_warnings=True, cwd: Path | None = None
    ) -> None:
        """Compiles `source` to `output`; on failure raises CompileError with
        the compiler's own diagnostics (which name the model's file:line).
        With `cwd`, the compiler runs there, so that relative paths (which end
        up in the module) do not depend on where the caller works."""
        cmd = [self.path, argv_path(source), "-o", argv_path(output), *flags]
        proc = run_killable(cmd, cwd=cwd, what=f"compiling {diagnostics_name}")
        if proc.returncode != 0:
            full = full_disk_of(proc.stderr, [(Path(cwd or ".") / output).parent, Path(tempfile.gettempdir())])
            if full is not None:
                raise DiskFullError(
                    f"No space left on device: {full} (iree-compile could not write there while compiling "
                    f"{diagnostics_name}); free some space{' or point TMPDIR elsewhere' if full == _tmp() else ''} "
                    "and run it again"
                )
            raise CompileError(
                f"iree-compile failed for {diagnostics_name} (exit status {proc.returncode}):\n"
                + proc.stderr.rstrip()
                + "\ncommand: "
                + " ".join(cmd)
            )
        if proc.stderr.strip() and not quiet_warnings:
            sys.stderr.write(proc.stderr)


# Free bytes under which a failed compile is taken to have run out of space
# (a tool that hits ENOSPC does not always say so: iree-lld reports the
# truncated object it wrote instead).
LOW_SPACE = 1 << 20
_DISK_FULL_WORDS = ("No space left on device", "Disk quota exceeded", "File too large")


def _tmp() -> Path:
    return Path(tempfile.gettempdir())


def full_disk_of(stderr: str, directories) -> Path | None:
    """The directory, among those a failed tool wrote to, whose file system
    is (nearly) full; None when the failure is not a full disk."""
    said_so = any(words in stderr for words in _DISK_FULL_WORDS)
    for directory in directories:
        try:
            free = shutil.disk_usage(directory).free
        except OSError:
            continue
        if free < LOW_SPACE:
            return _shown(Path(directory))
    return _shown(Path(directories[0])) if said_so else None


def _shown(directory: Path) -> Path:
    """OUTDIR rather than the staging directory inside it, which is gone
    by the time the user reads the message."""
    return directory.parent if directory.name.startswith(STAGING_PREFIX) else directory


def _die_with_parent():  # runs in the child between fork and exec
    if _PRCTL is not None:
        _PRCTL(1, signal.SIGKILL)  # PR_SET_PDEATHSIG: killed when ireegen dies, even by SIGKILL


def _load_prctl():
    if not sys.platform.startswith("linux"):
        return None
    try:
        import ctypes

        return ctypes.CDLL(None, use_errno=True).prctl
    except (OSError, AttributeError):
        return None


_PRCTL = _load_prctl()


def run_killable(cmd, cwd=None, what: str = "") -> subprocess.CompletedProcess:
    """Runs a compiler in its own process group, so that a terminal's SIGINT
    reaches ireegen only; if ireegen is interrupted (KeyboardInterrupt,
    SIGTERM turned into an exception by the CLI) the whole group is killed,
    and on Linux the child also dies if ireegen is killed outright.  Past
    the tool deadline (untrusted.tool_deadline) the group is killed and the
    run ends in one line.  Output that is not UTF-8 is read with U+FFFD."""
    deadline = tool_deadline()
    proc = subprocess.Popen(
        cmd,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        errors="replace",
        cwd=cwd,
        start_new_session=True,
        preexec_fn=_die_with_parent if _PRCTL is not None else None,
    )
    try:
        out, err = proc.communicate(timeout=deadline)
    except subprocess.TimeoutExpired:
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except OSError:
            pass
        proc.communicate()
        raise UsageError(deadline_message(cmd[0], what or Path(cmd[0]).name, deadline)) from None
    except BaseException:
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except OSError:
            pass
        proc.wait()
        raise
    return subprocess.CompletedProcess(cmd, proc.returncode, out, err)


def _package_compiler() -> Compiler:
    try:
        from iree.compiler import version as vmod
        from iree.compiler.tools import binaries
    except ImportError as e:  # pragma: no cover - dependency is declared
        raise UsageError(f"the iree-base-compiler package is not installed ({e})") from None
    path = binaries.find_tool("iree-compile")
    rev = getattr(vmod, "REVISIONS", {}).get("IREE", "")
    return Compiler(path, f"{vmod.VERSION} @ {rev}" if rev else vmod.VERSION)


def compiler_at(path: str) -> Compiler:
    """An iree-compile binary given by path (or a name on PATH)."""
    resolved = shutil.which(path) or (path if os.path.isfile(path) else None)
    if not resolved:
        if os.path.exists(path):
            raise UsageError(f"--iree-compile {path}: is not an executable file")
        raise UsageError(f"--iree-compile {path}: no such executable")
    if not os.access(resolved, os.X_OK):
        raise UsageError(f"--iree-compile {path}: is not executable (no execute permission)")
    resolved = os.path.abspath(resolved)  # iree-compile runs in the staging directory
    try:
        proc = subprocess.run(
            [resolved, "--version"],
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            errors="replace",
            timeout=60,
        )
    except (OSError, subprocess.TimeoutExpired) as e:
        raise UsageError(f"--iree-compile {path}: cannot run it ({getattr(e, 'strerror', None) or e})") from None
    m = re.search(r"IREE compiler version (\S+)(?: @ (\S+))?", proc.stdout)
    if proc.returncode != 0 or not m:
        raise UsageError(
            f"--iree-compile {resolved}: does not look like iree-compile (--version said: {proc.stdout.strip()[:200]})"
        )
    return Compiler(resolved, f"{m.group(1)} @ {m.group(2)}" if m.group(2) else m.group(1))


def find_compiler(path: str | None = None) -> Compiler:
    path = path or os.environ.get("IREEGEN_IREE_COMPILE")
    return compiler_at(path) if path else _package_compiler()
