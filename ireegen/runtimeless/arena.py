"""Static memory planning: buffers with lifetimes in, arena offsets out.

Each buffer is live over an inclusive interval of step indices; two buffers
may share bytes only if their intervals do not meet.  Placement is greedy
by size (largest first, then earliest, then id: deterministic), each at the
lowest aligned offset that overlaps no live-together buffer already placed.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass
class Region:
    key: str  # stable name for the manifest
    size: int
    first: int  # first step that uses it
    last: int  # last step that uses it
    role: str  # intermediate, input-staging, output-staging
    offset: int = -1


def align_up(value: int, alignment: int) -> int:
    return -(-value // alignment) * alignment


def plan(regions: list, alignment: int, base: int = 0, placed=()) -> int:
    """Sets each region's offset (>= base, aligned), clear of the regions
    `placed` before that are live at the same time; returns the end of the
    highest region of `regions` (base when there are none)."""
    placed = list(placed)
    order = sorted(regions, key=lambda r: (-r.size, r.first, r.key))
    for r in order:
        conflicts = sorted((p for p in placed if p.first <= r.last and r.first <= p.last), key=lambda p: p.offset)
        offset = align_up(base, alignment)
        for p in conflicts:
            if offset + r.size <= p.offset:
                break
            offset = max(offset, align_up(p.offset + p.size, alignment))
        r.offset = offset
        placed.append(r)
    return max((r.offset + r.size for r in regions), default=base)
