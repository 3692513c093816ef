"""What a model may read besides itself: files inside its own directory.

An ONNX model names its external data files by a `location` that comes from
the model's bytes, so it is untrusted text.  `contained_file` is the one
rule every reader of such a location goes through (loading the model, its
content key, CMake's DEPENDS from `ireegen resolve`):

- the location is relative;
- after resolving every symlink it stays inside the model's directory (a
  symlink that leaves the directory is refused like `../x`);
- what it names is a regular file, not a symbolic link (a FIFO or a
  directory says what it is).

An outside location gets the same message whether its target exists or
not, so a crafted model cannot probe the file system.  The onnx package
(>= 1.21) checks the same when it reads the data: a second line of defence.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path, PurePosixPath, PureWindowsPath

from ireegen.common.errors import UsageError

# Kinds of file that are not data, by the stat macro that tells them.
_NOT_REGULAR = (
    (stat.S_ISDIR, "a directory"),
    (stat.S_ISFIFO, "a FIFO (named pipe)"),
    (stat.S_ISSOCK, "a socket"),
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
)


def shown(text: str) -> str:
    """Untrusted text as a message shows it: as it is when printable, else
    quoted with its control characters escaped (a message stays one line)."""
    return text if text.isprintable() and text.strip() == text and text else repr(text)


def _is_absolute(location: str) -> bool:
    return (
        PurePosixPath(location).is_absolute()
        or PureWindowsPath(location).is_absolute()
        or bool(PureWindowsPath(location).drive)
        or location.startswith("\\")
    )


def contained_file(model_path: Path, location: str, what: str = "external data file", owner: str = "model") -> Path:
    """`model_path.parent / location`, refused in one line unless it is a
    regular file inside the model's directory (the rules above); `owner`
    names the file in messages (a kernel spec reads its sources the same way)."""
    model_path = Path(model_path)
    if not isinstance(location, str) or not location or "\0" in location:
        raise UsageError(f"{model_path}: its {what} location {shown(str(location))} is not a file name")
    if _is_absolute(location):
        raise UsageError(
            f"{model_path}: its {what} location {shown(location)} is absolute; "
            f"it must be relative to the {owner}'s directory"
        )
    base = os.path.realpath(model_path.parent)
    real = os.path.realpath(os.path.join(base, location))
    if os.path.commonpath([base, real]) != base or real == base:
        # The same words whether or not the target exists: no oracle.
        raise UsageError(
            f"{model_path}: its {what} location {shown(location)} leads outside the {owner}'s directory; "
            "ireegen reads no file outside it"
        )
    path = model_path.parent / location
    if os.path.islink(path):
        # Inside, but onnx reads no data through a link (nor does ireegen).
        raise UsageError(
            f"{model_path}: its {what} {shown(location)} is a symbolic link; "
            f"a {what} must be a regular file (copy it in place of the link)"
        )
    try:
        st = os.stat(real)
    except FileNotFoundError:
        raise UsageError(
            f"{model_path}: its {what} {shown(location)} is missing (looked in {model_path.parent})"
        ) from None
    except OSError as e:
        raise UsageError(f"{model_path}: its {what} {shown(location)} cannot be read ({e.strerror or e})") from None
    for test, kind in _NOT_REGULAR:
        if test(st.st_mode):
            raise UsageError(f"{model_path}: its {what} {shown(location)} is {kind}, not a regular file")
    if not stat.S_ISREG(st.st_mode):
        raise UsageError(f"{model_path}: its {what} {shown(location)} is not a regular file")
    return path
