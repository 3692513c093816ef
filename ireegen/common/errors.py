"""Errors that the CLI reports as a one-line message instead of a traceback."""

import errno
import os


class IreegenError(Exception):
    """Base of every error a user can cause; `exit_code` is the CLI status."""

    exit_code = 2


class UsageError(IreegenError):
    """Bad flags, names or files: refused before any work is done (status 2)."""

    exit_code = 2


class RunError(Exception):
    """A compiled module or built program failed at run time; the message is the runtime's."""


class CompileError(IreegenError):
    """The IREE compiler rejected the model; its diagnostics were shown (status 1)."""

    exit_code = 1


class DiskFullError(IreegenError):
    """A file system ran out of space (or quota) while ireegen or a tool it
    runs was writing: nothing was committed (status 2)."""

    exit_code = 2


# errno values that mean "the disk is full", not "the program is wrong".
DISK_FULL_ERRNOS = frozenset({errno.ENOSPC, errno.EDQUOT, errno.EFBIG})


def disk_full(e: OSError, what: str = "") -> DiskFullError | None:
    """The one-line error for an OSError that says the disk is full, naming
    the file; None for any other OSError."""
    if e.errno not in DISK_FULL_ERRNOS:
        return None
    where = f": {os.fsdecode(e.filename)}" if e.filename is not None else ""
    reason = os.strerror(errno.ENOSPC) if e.errno == errno.ENOSPC else e.strerror
    return DiskFullError(f"{reason}{where}{f' ({what})' if what else ''}; free some space and run it again")
