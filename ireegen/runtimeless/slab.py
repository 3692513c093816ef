"""Runtimeless: which bytes of the arena's buffers are in use when, for
staging the caller's tensors in the bytes no buffer needs at the time.

IREE packs every transient buffer of a call into one slab and lays the
buffers out inside it; to the arena planner the slab is one buffer, live
for the whole call.  With binding optimization off
(compile/binding_ranges.py) each dispatch binds the byte range it uses, so
the schedule shows which ranges are touched at which step.  A byte carries
data only from a step that writes it to the last step that reads it, both
touches, so a range is in use from its first touch to its last (to the end
of the call for a result).

That is exact for staging: an input's copy is written before the first
step and read until its last reader, so it may share the bytes of every
range first touched after that; an unaligned output's copy is written at
its producer and read after the last step, so it may share the bytes of
every range last touched before its producer."""

from __future__ import annotations

from . import arena


def used_ranges(accesses, region_of: dict, results, end: int) -> list:
    """arena.Regions (role "used", placed) for every byte range of the
    arena's buffers a step touches, live from its first touch to its last;
    `accesses` are (step, Buf) pairs, `region_of` maps an allocation id to
    its placed Region, `results` the function's results (Bufs live to
    `end`)."""
    spans = {}
    for i, b in accesses:
        if b.alloc.id in region_of:
            key = (b.alloc.id, b.offset, b.length)
            first, last = spans.get(key, (i, i))
            spans[key] = (min(first, i), max(last, i))
    for r in results:
        if hasattr(r, "alloc") and r.alloc.id in region_of:
            key = (r.alloc.id, r.offset, r.length)
            spans[key] = (spans.get(key, (end, end))[0], end)
    used = []
    for (aid, offset, length), (first, last) in sorted(spans.items()):
        region = region_of[aid]
        start = region.offset + offset
        used.append(arena.Region(f"{region.key}+{offset}", length, first, last, "used", start))
    return used
