"""Op attributes, read from their printed form."""

from __future__ import annotations


def symbol_name(op) -> str:
    """The name an op defines (`sym_name`): a function's, a global's."""
    return str(op.attributes["sym_name"]).strip('"')


def symbol_ref(attr) -> str:
    """The name a symbol reference (`@name`) points to."""
    return str(attr).lstrip("@").strip('"')


def symbol_path(attr) -> list:
    """The parts of a nested symbol reference (`@a::@b`)."""
    return [part.lstrip("@").strip('"') for part in str(attr).split("::")]
