"""Errors that the CLI reports as a one-line message instead of a traceback."""


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
