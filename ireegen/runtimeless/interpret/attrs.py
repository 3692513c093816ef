"""Op attributes, read as the model wrote them (not as MLIR prints them)."""

from __future__ import annotations


# Symbols as the model wrote them, not as MLIR prints them: `@"say \22hi\22"`
# is the function `say "hi"`, and a quoted name may hold `::`.
def symbol_name(op) -> str:
    """The name an op defines (`sym_name`): a function's, a global's."""
    return symbol_ref(op.attributes["sym_name"])


def symbol_ref(attr) -> str:
    """The name a symbol reference (`@name`) points to."""
    value = getattr(attr, "value", None)
    if isinstance(value, str):
        return value
    if isinstance(value, list) and len(value) == 1:
        return value[0]
    return str(attr).lstrip("@").strip('"')


def symbol_path(attr) -> list:
    """The parts of a nested symbol reference (`@a::@b`)."""
    value = getattr(attr, "value", None)
    if isinstance(value, list):
        return list(value)
    if isinstance(value, str):
        return [value]
    return [part.lstrip("@").strip('"') for part in str(attr).split("::")]


def string_attr(op, key: str, default: str) -> str:
    """A string attribute's text as the model wrote it (not MLIR's escaped
    form); text.py escapes it where it enters C."""
    if key not in op.attributes:
        return default
    attr = op.attributes[key]
    value = getattr(attr, "value", None)
    return value if isinstance(value, str) else str(attr).strip('"')
