"""Values only the interpreter sees: a tensor as the program passes it (a
buffer view), device handles, command buffers being recorded, executables;
and what a terminator's handler returns instead of results."""

from __future__ import annotations

from dataclasses import dataclass, field

from ..schedule import Buf


@dataclass(frozen=True)
class View:
    buf: Buf
    shape: tuple


@dataclass(frozen=True)
class Token:
    kind: str  # device, allocator, fence, file


@dataclass(eq=False)
class CommandBuffer:
    steps: list = field(default_factory=list)


@dataclass(frozen=True)
class Executable:
    symbol: str  # the hal.executable's symbol: its library query is <symbol>_library_query


@dataclass(frozen=True)
class Jump:
    """A branch's transfer: on to `block`, whose arguments take `args`."""

    block: object
    args: list


@dataclass(frozen=True)
class Return:
    """A return: the region's results."""

    values: list
