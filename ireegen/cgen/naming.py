"""C symbol names: sanitizing, prefixing and clash checking (after TVM's
C-interface emitter).  Every symbol the wrappers export starts with the
model's prefix, and two exported names never collide silently."""

from __future__ import annotations

import functools
import re
from pathlib import Path

from ireegen.common.errors import UsageError
from ireegen.common.resources import templates_dir

_IDENT_RE = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")

C_KEYWORDS = frozenset(
    """auto break case char const continue default do double else enum extern float for goto if
    inline int long register restrict return short signed sizeof static struct switch typedef union
    unsigned void volatile while _Alignas _Alignof _Atomic _Bool _Complex _Generic _Imaginary
    _Noreturn _Static_assert _Thread_local bool true false""".split()
)

# Suffixes of the model-level API; an exported function may not take them.
# `initialize` is runtimeless C's NAME_initialize(); it is refused in every
# mode, so that a model that emits in one mode emits in all of them.
RESERVED_SUFFIXES = frozenset(
    {
        "create",
        "destroy",
        "last_error",
        "device_allocator",
        "call",
        "t",
        "module",
        "module_data",
        "module_size",
        "initialize",
    }
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
        raise UsageError(
            f"{model_path}: the name derived from the file name, {name!r}: {reason}; pass --name"
        ) from None


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
                    f"{source}: functions @{other} and @{f.name} both map to the C name {prefix}_{suffix}; rename one"
                )
        symbols[f.name] = suffix
    return symbols


# Identifiers the generated function bodies use next to the parameters
# without declaring them (library functions, types, macros, ireegen's
# helpers): a parameter may not take them.
_BODY_USES = frozenset(
    """model memcpy memmove memset strcmp size_t uintptr_t int8_t int16_t int32_t int64_t uint8_t uint16_t
    uint32_t uint64_t NULL UINT64_C f32_bits bits_f32 f64_bits bits_f64""".split()
)
# The templates that hold function bodies, between these comments.
_BODY_TEMPLATES = ("runtime.c.j2", "runtimeless.c.j2")
_BODY_BEGIN = "{# function bodies:"
_BODY_END = "{# end of function bodies #}"
# A local declaration in a body: `[static] [const] type [*] [const] name =|[|;`.
_DECLARATION = re.compile(
    r"^\s+(?:static\s+)?(?:const\s+)?[A-Za-z_]\w*(?:\s*\*+\s*|\s+)(?:const\s+)?([A-Za-z_]\w*)\s*(?:=|\[|;)", re.M
)


# Locals a body declares through the layout helpers (c_layout.py), which
# the template expressions hold: `lead="type name = "` of call(), the
# left side of assign(), the name of variable() and braced_variable().
_HELPER_DECLARATIONS = (
    re.compile(r'lead="([^"]*?)\s*=\s*"'),
    re.compile(r'\bassign\(\s*\d+\s*,\s*"([^"]*)"'),
)
_HELPER_VARIABLE = re.compile(r'\b(?:braced_)?variable\(\s*\d+\s*,[^,]*,\s*"([A-Za-z_]\w*)"\s*,')


def _helper_locals(body: str) -> set:
    names = {m.group(1) for m in _HELPER_VARIABLE.finditer(body)}
    for pattern in _HELPER_DECLARATIONS:
        for m in pattern.finditer(body):
            names.update(d.group(1) for d in _DECLARATION.finditer(f"  {m.group(1)} ="))
    return names


@functools.lru_cache(maxsize=1)
def reserved_parameters() -> frozenset:
    """Names a parameter may not take: the locals the templates' function
    bodies declare (read off the templates, so that a new local is never
    missed) and what the bodies use without declaring."""
    declared = set()
    for template in _BODY_TEMPLATES:
        text = (templates_dir() / template).read_text()
        for section in text.split(_BODY_BEGIN)[1:]:
            body = section.split(_BODY_END, 1)[0]
            declared.update(_helper_locals(body))
            # A template expression joined to a name by `_` (`{{ v.name }}_data`)
            # is part of it; elsewhere (`{{ "static " if ... }}const`) it is
            # nothing.
            body = re.sub(r"(?<=\w)\{\{(?:(?!\}\}).)*\}\}|\{\{(?:(?!\}\}).)*\}\}(?=_)", "X", body, flags=re.S)
            body = re.sub(r"\{\{.*?\}\}|\{%.*?%\}|\{#.*?#\}", " ", body, flags=re.S)
            declared.update(m.group(1) for m in _DECLARATION.finditer(body))
    # Names built on a parameter (`X_data`) are the _DERIVED ones.
    return frozenset(_BODY_USES | {n for n in declared if not n.startswith("X")})


# The host scalars runtimeless C computes at run time: scalar1, scalar2, ...
_LOCAL_SCALAR = re.compile(r"scalar\d+")

# Identifiers a generated body derives from a parameter name `x`.
_DERIVED = ("{}", "{}_data", "{}_shape", "out_{}")


def _value_identifier(text: str, prefix: str) -> str:
    ident = re.sub(r"[^A-Za-z0-9_]", "_", text).strip("_").lower()
    ident = re.sub(r"_+", "_", ident) or "value"
    if ident[0].isdigit():
        ident = "v_" + ident
    reserved = (
        ident in C_KEYWORDS
        or ident in reserved_parameters()
        or _LOCAL_SCALAR.fullmatch(ident)
        or ident.startswith("iree_")
        # The model's own functions and types (prefix_create, prefix_t, prefix__fail ...), which bodies use.
        or (prefix and ident.startswith(prefix.lower() + "_"))
    )
    return ident + "_arg" if reserved else ident


def value_identifiers(names, prefix: str = "") -> list:
    """C parameter names for a function's values (inputs, then outputs), in
    order: sanitized, never a C keyword or a name the generated body uses
    (including the model's `prefix_*` symbols), and unique with every
    identifier derived from them (x, x_data, x_shape, out_x); a name taken
    already gets _2, _3, ... in order."""
    taken, out = set(), []
    for name in names:
        base = _value_identifier(name, prefix)
        ident, n = base, 1
        while any(d.format(ident) in taken for d in _DERIVED):
            n += 1
            ident = f"{base}_{n}"
        taken.update(d.format(ident) for d in _DERIVED)
        out.append(ident)
    return out


def check_macros(macros, source: str) -> None:
    """Refuses two #defines with one name (`macros`: (name, what) pairs)."""
    seen = {}
    for macro, what in macros:
        if macro in seen and seen[macro] != what:
            raise UsageError(f"{source}: {seen[macro]} and {what} both define the C macro {macro}; rename one")
        seen[macro] = what


def check_library_queries(prefix: str, queries, source: str) -> None:
    """Refuses executable library entry points (global C symbols the
    compiler named) that are not C identifiers under `prefix__`
    (compile/executable_names.py renames them; a compiler that names them
    otherwise must not put a foreign or unsafe global into the library)."""
    for query in queries:
        if not (_IDENT_RE.match(query) and query.startswith(prefix + "__")):
            raise UsageError(
                f"{source}: iree-compile named an executable library {query[:80]!r}, which is not a C identifier "
                f"under {prefix}__; ireegen cannot give it the model's prefix with this compiler"
            )
