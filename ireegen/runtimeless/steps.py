"""The steps of runtimeless C as data: one dataclass per kind, built by
lower.py from the schedule, each knowing the places it touches and its
manifest form.  The template (runtimeless.c.j2) lays each kind out with
its own macro, chosen by `kind`.

A place (`At`) is where the bytes of one binding, fill, copy or load live:
a region (the constants blob, the state region, the arena, or a caller's
tensor), the offset of its allocation in that region with the macro that
names it, the offset into the allocation, and the length.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from .schedule import Sym

# Regions that are one block of bytes, and the C name of their base pointer
# (the constants' is the model's `NAME__constants`).
BLOCK_REGIONS = ("constant", "state", "arena")
# Regions that are a caller's tensor, reached through `NAME_data`.
TENSOR_REGIONS = ("input", "output")


@dataclass(frozen=True)
class At:
    """`length` bytes at `offset` into one allocation of `region`."""

    region: str  # BLOCK_REGIONS or TENSOR_REGIONS
    offset: int  # bytes into the allocation
    length: int
    base: int = 0  # the allocation's offset in a block region
    macro: str = ""  # the #define of `base` (block regions)
    index: int = 0  # the caller tensor's position (tensor regions)
    value: str = ""  # the caller tensor's C parameter name (tensor regions)

    def to_json(self) -> dict:
        """Where the bytes are, for the manifest: a caller tensor (by
        position), the constants blob, the state or the arena (by offset)."""
        if self.region in TENSOR_REGIONS:
            return {"in": self.region, "index": self.index, "offset": self.offset, "length": self.length}
        return {"in": self.region, "offset": self.base + self.offset, "length": self.length}


def c_scalar(value, cast: str = "", literal: str = "{}") -> str:
    """A host scalar in C: an int as `literal` formats it, a run-time value
    as its expression (with `cast` in front when given)."""
    if isinstance(value, Sym):
        return f"({cast}){value.expr}" if cast else value.expr
    return literal.format(value)


def scalar_json(value) -> object:
    """An int, or a run-time value as its C expression."""
    return {"expr": value.expr} if isinstance(value, Sym) else value


@dataclass
class DispatchStep:
    """Runs every workgroup of one export of the executables."""

    kind: ClassVar[str] = "dispatch"
    export: str  # the export's name in its library
    library: str  # the library's query function
    export_index: int  # into the exports the glue resolves, in first-use order
    workgroups: tuple  # x, y, z: int or Sym
    constants: tuple  # u32 bits: int or Sym
    bindings: tuple  # of At
    lengths: tuple  # each binding's byte length: int or Sym
    lengths_table: str | None = None  # a shared file-scope table of `lengths` (lower.share_lengths)

    @property
    def places(self) -> tuple:
        return self.bindings

    @property
    def scalars(self) -> tuple:
        return self.workgroups + self.constants + self.lengths

    @property
    def constants_static(self) -> bool:
        return not any(isinstance(c, Sym) for c in self.constants)

    @property
    def lengths_static(self) -> bool:
        return not any(isinstance(n, Sym) for n in self.lengths)

    @property
    def static(self) -> bool:
        """Whether every number of the dispatch is known at emit time."""
        return not any(isinstance(x, Sym) for x in self.scalars)

    @property
    def c_workgroups(self) -> list:
        return [c_scalar(w, "uint32_t") for w in self.workgroups]

    @property
    def c_constants(self) -> list:
        return [c_scalar(c, literal="{}u") for c in self.constants]

    @property
    def c_lengths(self) -> list:
        return [c_scalar(n, "size_t") for n in self.lengths]

    def to_json(self) -> dict:
        return {
            "dispatch": self.export,
            "library": self.library,
            "workgroups": [scalar_json(w) for w in self.workgroups],
            "constants": [scalar_json(c) for c in self.constants],
            "bindings": [b.to_json() for b in self.bindings],
        }


@dataclass(frozen=True)
class FillStep:
    """Repeats a 1, 2 or 4 byte pattern over `target`."""

    kind: ClassVar[str] = "fill"
    target: At
    pattern: object  # int or Sym
    pattern_size: int

    @property
    def places(self) -> tuple:
        return (self.target,)

    @property
    def c_pattern(self) -> str:
        return c_scalar(self.pattern, "uint32_t", f"0x{{:0{2 * self.pattern_size}X}}u")

    def to_json(self) -> dict:
        return {"fill": self.target.length}


@dataclass(frozen=True)
class CopyStep:
    """Copies `source` to `target` (they may overlap)."""

    kind: ClassVar[str] = "copy"
    source: At
    target: At

    @property
    def places(self) -> tuple:
        return (self.source, self.target)

    def to_json(self) -> dict:
        return {"copy": self.source.length}


@dataclass(frozen=True)
class LoadStep:
    """The host reads the scalar `name` from device data."""

    kind: ClassVar[str] = "load"
    name: str
    c_type: str
    source: At

    @property
    def places(self) -> tuple:
        return (self.source,)

    def to_json(self) -> dict:
        return {"load": self.name, "type": self.c_type, "from": self.source.to_json()}


@dataclass(frozen=True)
class LetStep:
    """A host scalar the call computes: `const c_type name = expr;`."""

    kind: ClassVar[str] = "let"
    name: str
    c_type: str
    expr: str
    calls: tuple = ()  # the C functions `expr` calls (host_scalars.HELPERS, <math.h>)

    @property
    def places(self) -> tuple:
        return ()

    def to_json(self) -> dict:
        return {"let": self.name, "type": self.c_type, "expr": self.expr}


@dataclass(frozen=True)
class CheckStep:
    """The call fails unless `condition` holds."""

    kind: ClassVar[str] = "check"
    condition: str  # a C expression
    message: str

    @property
    def places(self) -> tuple:
        return ()

    def to_json(self) -> dict:
        return {"check": self.condition, "message": self.message}


STEP_KINDS = (DispatchStep, FillStep, CopyStep, LoadStep, LetStep, CheckStep)
