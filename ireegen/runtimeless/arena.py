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


# Orders the greedy placement tries (plan_best): largest first, earliest
# first, longest-lived first; each then by key, so the result is deterministic.
ORDERS = (
    lambda r: (-r.size, r.first, r.key),
    lambda r: (r.first, -r.size, r.key),
    lambda r: (r.first - r.last, -r.size, r.key),
)


def plan(regions: list, alignment: int, base: int = 0, placed=(), order=ORDERS[0]) -> int:
    """Sets each region's offset (>= base, aligned), clear of the regions
    `placed` before that are live at the same time; returns the end of the
    highest region of `regions` (base when there are none)."""
    placed = list(placed)
    order = sorted(regions, key=order)
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


def plan_best(regions: list, alignment: int) -> int:
    """plan() in each of ORDERS, keeping the smallest (the first on a tie)."""
    best = None
    for k, order in enumerate(ORDERS):
        top = plan(regions, alignment, order=order)
        if best is None or top < best[0]:
            best = (top, k, [r.offset for r in regions])
    for r, offset in zip(regions, best[2]):
        r.offset = offset
    return best[0]
