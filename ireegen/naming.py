"""C symbol names: sanitizing, prefixing and clash checking (after TVM's
C-interface emitter).  Every symbol the wrappers export starts with the
model's prefix, and two exported names never collide silently."""

from __future__ import annotations

import re
from pathlib import Path

from .errors import UsageError

_IDENT_RE = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")

C_KEYWORDS = frozenset(
    """auto break case char const continue default do double else enum extern float for goto if
    inline int long register restrict return short signed sizeof static struct switch typedef union
    unsigned void volatile while _Alignas _Alignof _Atomic _Bool _Complex _Generic _Imaginary
    _Noreturn _Static_assert _Thread_local bool true false""".split()
)

# Suffixes of the model-level API; an exported function may not take them.
RESERVED_SUFFIXES = frozenset(
    {"create", "destroy", "last_error", "device_allocator", "call", "t", "module", "module_data", "module_size"}
)


def sanitize(text: str) -> str:
    """Turns arbitrary text into a lower-case C identifier."""
    ident = re.sub(r"[^A-Za-z0-9_]", "_", text).strip("_").lower()
    ident = re.sub(r"_+", "_", ident)
    if not ident:
        ident = "model"
    if ident[0].isdigit():
        ident = "m_" + ident
    if ident in C_KEYWORDS:
        ident += "_model"
    return ident


# Longest name: C89 keeps 31 significant characters of external names, C99
# 63; names also become file names (NAME_module_data.c), which most file
# systems cap at 255 bytes.  64 leaves room for function suffixes.
MAX_NAME_LENGTH = 64


def default_name(model_path) -> str:
    """The name derived from a model's file name, held to check_name's rules
    (the error then says where the name came from)."""
    name = sanitize(Path(model_path).name.split(".")[0])
    try:
        return check_name(name)
    except UsageError as e:
        reason = str(e).split(": ", 1)[1]
        raise UsageError(f"{model_path}: the name derived from the file name, {name!r}: {reason}; "
                         f"pass --name") from None


def check_name(name: str) -> str:
    """Validates a user-given --name: it must already be a C identifier."""
    if len(name or "") > MAX_NAME_LENGTH:
        raise UsageError(f"--name {name[:20]}...: {len(name)} characters; at most {MAX_NAME_LENGTH}")
    if not _IDENT_RE.match(name or ""):
        raise UsageError(
            f"--name {name!r}: not a C identifier (letters, digits and _, not starting with a digit); "
            f"for example {sanitize(name or 'model')!r}"
        )
    if name in C_KEYWORDS:
        raise UsageError(f"--name {name!r}: is a C keyword")
    if name.startswith("iree_"):
        raise UsageError(f"--name {name!r}: the iree_ prefix is reserved for IREE")
    if "__" in name:
        # ireegen names the VM module NAME__module, so that the C names the
        # compiler derives from it can never clash with another model's.
        raise UsageError(f"--name {name!r}: may not contain __ (reserved for ireegen's own symbols)")
    return name


def function_symbols(prefix: str, functions, source: str) -> dict:
    """Maps each exported function name to its C suffix, refusing clashes."""
    symbols = {}
    for f in functions:
        suffix = sanitize(f.name)
        if suffix in RESERVED_SUFFIXES:
            raise UsageError(
                f"{source}: function @{f.name} would be exported as {prefix}_{suffix}, "
                f"which clashes with the model API; rename the function"
            )
        for other, other_suffix in symbols.items():
            if other_suffix == suffix:
                raise UsageError(
                    f"{source}: functions @{other} and @{f.name} both map to the C name {prefix}_{suffix}; "
                    f"rename one"
                )
        symbols[f.name] = suffix
    return symbols
