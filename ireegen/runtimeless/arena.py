"""Static memory planning: buffers with lifetimes in, arena offsets out.

Each buffer (a Region) is live over an inclusive interval of step indices;
two buffers may share bytes only if their intervals do not meet.  Offsets
are aligned, and every rule below is deterministic (ties go by key):

- plan(): greedy placement in one order, each buffer at the lowest aligned
  offset that overlaps no live-together buffer placed before it (`placed`
  holds buffers fixed beforehand, which staging uses to share the bytes of
  buffers no step touches while it is live);
- plan_best(): plan() in each of the three ORDERS (largest first, earliest
  first, longest-lived first), keeping the lowest end (the first order on a
  tie), then search() for a layout that ends at least one alignment step
  lower;
- search(): a bounded depth-first search over the buffers, largest first,
  each tried at 0 and where a buffer placed before it starts or ends (clear
  of the live-together ones), lowest first, pruned at the best end so far
  and stopped after SEARCH_NODES placements; plan_best() runs it for at
  most SEARCH_REGIONS buffers.
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


SEARCH_NODES = 5000  # placements search() tries at most
SEARCH_REGIONS = 64  # search() only below this many regions (its recursion is one level per region)


def search(regions: list, alignment: int, top: int, nodes: int = SEARCH_NODES) -> list | None:
    """Offsets (per region) whose highest end is below `top`, or None: a
    depth-first search over the regions, largest first, each at the aligned
    offsets clear of the live-together regions placed before it where a
    region placed before starts or ends (or 0), lowest first, pruned at the
    best end found so far and stopped after `nodes` placements.  The greedy
    orders miss the layouts where a buffer must not take the lowest free
    offset: a chain of equal buffers through a small bottleneck, which has
    to swap its two halves there."""
    order = sorted(range(len(regions)), key=lambda i: ORDERS[0](regions[i]))
    before = {
        i: [j for j in order[:k] if regions[j].first <= regions[i].last and regions[i].first <= regions[j].last]
        for k, i in enumerate(order)
    }
    offsets = [0] * len(regions)
    best = [top, None]
    left = [nodes]

    def place(k: int, end: int) -> None:
        if k == len(order):
            best[0], best[1] = end, list(offsets)
            return
        i = order[k]
        size = regions[i].size
        placed = order[:k]
        candidates = sorted(
            {0, *(offsets[j] for j in placed), *(align_up(offsets[j] + regions[j].size, alignment) for j in placed)}
        )
        for offset in candidates:
            if offset + size >= best[0] or left[0] <= 0:
                return
            if any(offset < offsets[j] + regions[j].size and offsets[j] < offset + size for j in before[i]):
                continue
            left[0] -= 1
            offsets[i] = offset
            place(k + 1, max(end, offset + size))

    place(0, 0)
    return best[1]


def plan_best(regions: list, alignment: int) -> int:
    """plan() in each of ORDERS, keeping the smallest (the first on a tie),
    then search() for a layout that ends lower, aligned."""
    best = None
    for k, order in enumerate(ORDERS):
        top = plan(regions, alignment, order=order)
        if best is None or top < best[0]:
            best = (top, k, [r.offset for r in regions])
    better = None
    if 0 < len(regions) <= SEARCH_REGIONS:
        better = search(regions, alignment, align_up(best[0], alignment) - alignment + 1)
    if better is not None:
        best = (max(o + r.size for o, r in zip(better, regions)), -1, better)
    for r, offset in zip(regions, best[2]):
        r.offset = offset
    return best[0]
