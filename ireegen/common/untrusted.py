"""Reading what comes from outside: paths on a tool's command line, files
opened without blocking, JSON within a depth limit, tools run with a deadline.

Rules every reader of untrusted input follows:

- a path handed to a tool (gcc, clang, ld, nm, objcopy, iree-compile, iree-opt)
  goes as `argv_path(path)`: absolute, or relative starting with `./`, so a
  name such as `@resp.c`, `-wrapper` or `-o...` is read as a file, never as a
  response file or an option;
- a file is opened with O_NONBLOCK and checked to be a regular file before a
  byte is read (`read_regular`): a FIFO, a socket or a device, or a link to
  one, is refused in one line instead of blocking;
- JSON is checked for nesting depth before it is parsed (`load_json`);
- every compiler run has a deadline (`tool_deadline`, IREEGEN_TOOL_TIMEOUT
  seconds), after which it is killed and the run ends in one line.
"""

from __future__ import annotations

import json
import os
import re
import stat
from pathlib import Path

from .errors import UsageError

# Seconds a compiler (iree-compile, iree-import-onnx, gcc ...) may run;
# IREEGEN_TOOL_TIMEOUT overrides it (0 or less: no deadline).
TOOL_TIMEOUT_ENV = "IREEGEN_TOOL_TIMEOUT"
DEFAULT_TOOL_TIMEOUT = 3600.0

# JSON from outside (kernel specs, tuning records, manifests) nests at most this deep.
MAX_JSON_DEPTH = 64

_KINDS = (
    (stat.S_ISDIR, "a directory"),
    (stat.S_ISFIFO, "a FIFO (named pipe)"),
    (stat.S_ISSOCK, "a socket"),
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
)
_JSON_STRING = re.compile(rb'"(?:[^"\\]|\\.)*"', re.DOTALL)


def argv_path(path) -> str:
    """`path` as an argument no tool reads as an option or a response file."""
    text = os.fspath(path)
    if os.path.isabs(text) or text.startswith("./") or text.startswith("../"):
        return text
    return "./" + text


def file_kind(mode: int) -> str | None:
    """None for a regular file, else what the file is, in words."""
    if stat.S_ISREG(mode):
        return None
    for test, kind in _KINDS:
        if test(mode):
            return kind
    return "not a regular file"


def read_regular(path, what: str, limit: int | None = None) -> bytes:
    """The bytes of `path`, refused in one line (naming `what`) unless it is
    a regular file (links followed) of at most `limit` bytes.  The open never
    blocks: O_NONBLOCK, then fstat before any read."""
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOCTTY", 0) | getattr(os, "O_CLOEXEC", 0)
    try:
        fd = os.open(path, flags)
    except FileNotFoundError:
        raise UsageError(f"{what}: no such file") from None
    except IsADirectoryError:
        raise UsageError(f"{what}: is a directory, not a regular file") from None
    except OSError as e:
        raise UsageError(f"{what}: cannot be read ({e.strerror or e})") from None
    try:
        st = os.fstat(fd)
        kind = file_kind(st.st_mode)
        if kind is not None:
            raise UsageError(f"{what}: is {kind}, not a regular file")
        if limit is not None and st.st_size > limit:
            raise UsageError(f"{what}: {st.st_size:,} bytes; at most {limit:,} are read")
        os.set_blocking(fd, True)
        with os.fdopen(fd, "rb", closefd=False) as f:
            data = f.read() if limit is None else f.read(limit + 1)
    except OSError as e:
        raise UsageError(f"{what}: cannot be read ({e.strerror or e})") from None
    finally:
        os.close(fd)
    if limit is not None and len(data) > limit:
        raise UsageError(f"{what}: more than {limit:,} bytes; at most {limit:,} are read")
    return data


def check_regular(path, what: str) -> None:
    """Refuses `path` in one line unless it is a regular file (links followed),
    without opening it."""
    try:
        st = os.stat(path)
    except FileNotFoundError:
        raise UsageError(f"{what}: no such file") from None
    except OSError as e:
        raise UsageError(f"{what}: cannot be read ({e.strerror or e})") from None
    kind = file_kind(st.st_mode)
    if kind is not None:
        raise UsageError(f"{what}: is {kind}, not a regular file")


def json_depth(data: bytes) -> int:
    """How deep arrays and objects nest in JSON text (strings skipped)."""
    code = _JSON_STRING.sub(b'""', data)
    depth = deepest = 0
    for chunk in re.finditer(rb"[\[\]{}]", code):
        depth += 1 if chunk.group() in (b"[", b"{") else -1
        deepest = max(deepest, depth)
    return deepest


def load_json(data: bytes, what: str, max_depth: int = MAX_JSON_DEPTH):
    """JSON text from outside, parsed; one line naming `what` when it is not
    UTF-8 JSON or nests deeper than `max_depth`."""
    depth = json_depth(data)
    if depth > max_depth:
        raise UsageError(f"{what}: JSON nested {depth:,} levels deep; at most {max_depth} are read")
    try:
        return json.loads(data.decode("utf-8"))
    except UnicodeDecodeError:
        raise UsageError(f"{what}: not UTF-8 text") from None
    except (ValueError, RecursionError) as e:
        raise UsageError(f"{what}: not JSON ({str(e).splitlines()[0][:120] if str(e) else type(e).__name__})") from None


def tool_deadline() -> float | None:
    """Seconds a compiler may run (IREEGEN_TOOL_TIMEOUT), None for no deadline."""
    raw = os.environ.get(TOOL_TIMEOUT_ENV, "").strip()
    if not raw:
        return DEFAULT_TOOL_TIMEOUT
    try:
        seconds = float(raw)
    except ValueError:
        raise UsageError(f"{TOOL_TIMEOUT_ENV}={raw[:40]!r}: expected a number of seconds") from None
    if seconds != seconds:
        raise UsageError(f"{TOOL_TIMEOUT_ENV}={raw[:40]!r}: expected a number of seconds")
    return seconds if seconds > 0 else None


def deadline_message(tool: str, what: str, seconds: float) -> str:
    return (
        f"{what}: {Path(tool).name} did not finish in {seconds:g} s and was stopped "
        f"(set {TOOL_TIMEOUT_ENV} to allow longer)"
    )
