"""Errors that the CLI reports as a one-line message instead of a traceback."""

import errno
import os
import unicodedata


class IreegenError(Exception):
    """Base of every error a user can cause; `exit_code` is the CLI status."""

    exit_code = 2


class UsageError(IreegenError):
    """Bad flags, names or files: refused before any work is done (status 2)."""

    exit_code = 2


class DiagnosticsError(UsageError):
    """A model its parser rejects: a summary line, then the parser's
    diagnostics, one per line (the only refusal that takes several lines)."""

    def __init__(self, summary: str, diagnostics):
        self.summary = summary
        self.diagnostics = [d for text in diagnostics for d in str(text).split("\n")]
        super().__init__("\n".join([summary, *self.diagnostics]))


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


def disk_full(e: OSError, what: str = "", directory=None) -> DiskFullError | None:
    """The one-line error for an OSError that says the disk is full, naming
    the file (or, for a write that names none, `directory`); None for any
    other OSError."""
    if e.errno not in DISK_FULL_ERRNOS:
        return None
    path = e.filename if e.filename is not None else directory
    where = f": {os.fsdecode(path)}" if path is not None else ""
    reason = os.strerror(errno.ENOSPC) if e.errno == errno.ENOSPC else e.strerror
    return DiskFullError(f"{reason}{where}{f' ({what})' if what else ''}; free some space and run it again")


# Unicode categories a message shows escaped: controls (a newline or an
# escape sequence from a file name must not start a line of its own or
# recolour the terminal), format characters (bidirectional overrides,
# zero-width marks), line and paragraph separators, surrogates, unassigned.
_ESCAPED_CATEGORIES = frozenset({"Cc", "Cf", "Zl", "Zp", "Cs", "Co", "Cn"})


def printable(text: str) -> str:
    """`text` with every character that could change how a terminal line
    reads escaped as \\xNN, \\uNNNN or \\UNNNNNNNN."""
    out = []
    for ch in str(text):
        if ch != " " and unicodedata.category(ch) in _ESCAPED_CATEGORIES:
            code = ord(ch)
            out.append(f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}" if code < 0x10000 else f"\\U{code:08x}")
        else:
            out.append(ch)
    return "".join(out)


def message_lines(e: IreegenError) -> list:
    """What the CLI prints for `e`: a refusal (status 2) is one line, whatever
    names or paths it quotes; a parser's diagnostics and the reports of
    status 1 (a compiler's output, a comparison table) keep their lines."""
    if isinstance(e, DiagnosticsError):
        return [printable(e.summary)] + [printable(d) for d in e.diagnostics]
    if e.exit_code == 2:
        return [printable(str(e))]
    return [printable(line) for line in str(e).split("\n")]
