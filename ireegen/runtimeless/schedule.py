"""What a schedule is: the work a compiled program asks of the device, in
program order, read from iree-compile's HAL-level IR at emit time (the
interpreter in interpret/ reads it; lower.py turns it into C).

A schedule holds the allocations (constants in flash, the caller's tensors,
the state the initializers make, each call's transients), the steps of the
initializers and of each exported function (dispatches, fills, copies, and
host scalars read or computed at run time), and each function's results.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace

from ireegen.common.errors import UsageError

from . import host_scalars as hs


class RuntimelessError(UsageError):
    """The model cannot be expressed as runtimeless C."""


# ---------------------------------------------------------------------------
# Allocations, buffers and run-time host scalars


@dataclass(eq=False)
class Alloc:
    """One allocation: a constant (bytes in flash), a caller's input, or a
    buffer the program allocates (transient, lives in the arena)."""

    id: int
    kind: str  # "constant", "input", "transient" (one call's), "state" (made by the initializers)
    size: int
    data: bytes | None = None  # constant contents
    alignment: int = 64
    run_size: Sym | None = None  # a run-time size; `size` is then its upper bound


@dataclass(frozen=True)
class Buf:
    alloc: Alloc
    offset: int
    length: int


@dataclass(frozen=True)
class Sym:
    """A host scalar known only at run time: a C expression (a local the
    call computes, or an argument) of the C type that holds `type`
    (host_scalars.c_type)."""

    expr: str
    type: str = "i64"  # the MLIR type
    # What the interpreter knows of the value: signed (lo, hi), -inf/inf
    # where unknown (host_scalars).  A buffer whose size is a run-time value
    # gets its upper bound.
    bounds: tuple = hs.UNKNOWN
    reads: frozenset = frozenset()  # the call's scalar locals (scalarN) `expr` reads


def reads_of(values) -> frozenset:
    """The scalar locals that the run-time values among `values` read."""
    return frozenset().union(*(v.reads for v in values if isinstance(v, Sym)))


# ---------------------------------------------------------------------------
# What the device is asked to do


@dataclass
class Dispatch:
    executable: str
    export: str
    workgroups: tuple
    constants: list  # int (u32 bits) or Sym
    bindings: list  # of Buf
    lengths: list | None = None  # each binding's length when one is a run-time value (int or Sym)

    @property
    def bufs(self) -> list:
        """The buffer ranges the step touches (every step kind has this)."""
        return list(self.bindings)

    def rebound(self, bufs: list):
        """The step with `bufs` (in the order of .bufs) in place of its own."""
        return replace(self, bindings=list(bufs))


@dataclass
class Fill:
    target: Buf
    pattern: int
    pattern_size: int

    @property
    def bufs(self) -> list:
        return [self.target]

    # (reads, writes) of each of .bufs; a dispatch's come from the program (stream_access)
    access = ((False, True),)

    def rebound(self, bufs: list):
        return replace(self, target=bufs[0])


@dataclass
class Copy:
    source: Buf
    target: Buf

    @property
    def bufs(self) -> list:
        return [self.source, self.target]

    access = ((True, False), (False, True))

    def rebound(self, bufs: list):
        return replace(self, source=bufs[0], target=bufs[1])


@dataclass
class Load:
    """The host reads a scalar from device data: `name` = the bytes at `source`."""

    source: Buf
    name: str
    c_type: str

    @property
    def bufs(self) -> list:
        return [self.source]

    access = ((True, False),)

    def rebound(self, bufs: list):
        return replace(self, source=bufs[0])


class _HostStep:
    """A step of the host alone: it touches no buffer."""

    access = ()

    @property
    def bufs(self) -> list:
        return []

    def rebound(self, bufs: list):
        return self


@dataclass
class Let(_HostStep):
    """A host scalar the call computes at run time: `const c_type name = expr;`."""

    name: str
    c_type: str
    expr: str
    calls: tuple = ()  # the C functions `expr` calls (host_scalars.HELPERS, <math.h>)
    reads: frozenset = frozenset()  # the scalar locals `expr` reads


@dataclass
class Check(_HostStep):
    """The program fails unless `condition` (a C expression) holds."""

    condition: str
    message: str
    reads: frozenset = frozenset()  # the scalar locals `condition` reads


@dataclass
class FunctionSchedule:
    name: str
    inputs: list  # per argument: Alloc (tensor) or Sym (scalar)
    steps: list  # Dispatch/Fill/Copy/Load/Let/Check in order
    results: list  # per result: Buf (tensor) or int/Sym (scalar)
    transitions: dict = field(default_factory=dict)  # state version it starts from -> version it leaves


@dataclass
class Schedule:
    constants: list  # Alloc
    executables: list  # Executable symbols used, in first-use order
    functions: dict  # name -> [FunctionSchedule], one per distinct schedule over the state versions
    init_steps: list  # work the initializers do, once per instance
    state: list  # Allocs of the state region (kind "state")
    state_versions: int  # distinct states the globals take; 1 when calls never change them
