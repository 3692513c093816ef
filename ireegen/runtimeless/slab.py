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

from dataclasses import replace

from . import arena
from .schedule import Alloc, Buf, Dispatch, FunctionSchedule

ALIGNMENT = 64  # a piece starts where its bytes did, modulo this: each binding keeps its alignment


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


# ---------------------------------------------------------------------------
# IREE's slab split back into its buffers.
#
# With each dispatch's bindings read or written as the stream phase says
# (compile/stream_access.py), the slab's bytes become values again: a read
# belongs with the writes whose bytes it reads (the latest write of each
# byte before it), a write that reads nothing earlier starts a new value.
# Each value (the touches joined by what they read) becomes an allocation of
# its own, of the bytes it spans, that the arena planner places with
# liveness reuse instead of IREE's greedy layout.  Used only where every
# dispatch of the function matches the stream phase's, binding for binding.

_MODES = {"ro": (True, False), "wo": (False, True), "rw": (True, True)}


def alloc_ids(schedule) -> list:
    """Every allocation id the schedule uses."""
    ids = [a.id for a in (*schedule.constants, *schedule.state)]
    for variants in schedule.functions.values():
        for fs in variants:
            ids += [a.id for a in fs.inputs if isinstance(a, Alloc)]
            ids += [b.alloc.id for step in fs.steps for b in step.bufs]
            ids += [r.alloc.id for r in fs.results if isinstance(r, Buf)]
    ids += [b.alloc.id for step in schedule.init_steps for b in step.bufs]
    return ids


def _modes(fs: FunctionSchedule, binding_access: dict):
    """Per Dispatch step index, (reads, writes) per binding, from the
    stream phase's function whose dispatches match this schedule's; None
    when none matches or the matches disagree."""
    dispatches = [(i, s) for i, s in enumerate(fs.steps) if isinstance(s, Dispatch)]
    found = set()
    for accesses in binding_access.values():
        if len(accesses) != len(dispatches):
            continue
        same = all(
            len(a) == len(s.bindings)
            and all(
                length == b.length and (b.alloc.kind != "transient" or offset == b.offset)
                for (_, offset, length), b in zip(a, s.bindings)
            )
            for a, (_, s) in zip(accesses, dispatches)
        )
        if same:
            found.add(tuple(tuple(mode for mode, _, _ in a) for a in accesses))
    if len(found) != 1:
        return None
    (modes,) = found
    return {i: [_MODES[m] for m in ms] for (i, _), ms in zip(dispatches, modes)}


class _Sets:
    def __init__(self, n):
        self.parent = list(range(n))

    def find(self, i):
        while self.parent[i] != i:
            self.parent[i] = self.parent[self.parent[i]]
            i = self.parent[i]
        return i

    def union(self, i, j):
        self.parent[self.find(i)] = self.find(j)


def _subtract(intervals: list, lo: int, hi: int) -> tuple:
    """(intervals minus [lo, hi), whether they met)."""
    left, met = [], False
    for a, b in intervals:
        if b <= lo or hi <= a:
            left.append((a, b))
            continue
        met = True
        if a < lo:
            left.append((a, lo))
        if hi < b:
            left.append((hi, b))
    return left, met


def _values(touches: list) -> list:
    """Component index per touch ((step, lo, hi, reads, writes)); a read is
    joined with the latest earlier write of each byte it reads, and touches
    of one step that overlap are joined (a dispatch may alias its bindings)."""
    sets = _Sets(len(touches))
    writes = sorted((t for t in range(len(touches)) if touches[t][4]), key=lambda t: -touches[t][0])
    by_step = {}
    for k, (step, lo, hi, _, _) in enumerate(touches):
        for j in by_step.get(step, []):
            if touches[j][1] < hi and lo < touches[j][2]:
                sets.union(k, j)
        by_step.setdefault(step, []).append(k)
    for k, (step, lo, hi, reads, _) in enumerate(touches):
        if not reads:
            continue
        remaining = [(lo, hi)]
        for w in writes:
            wstep, wlo, whi = touches[w][:3]
            if wstep >= step:
                continue
            remaining, met = _subtract(remaining, wlo, whi)
            if met:
                sets.union(k, w)
            if not remaining:
                break
    return [sets.find(k) for k in range(len(touches))]


def split(fs: FunctionSchedule, binding_access: dict, next_id: int) -> tuple:
    """`fs` with its transients split into their values (above), and the
    next free allocation id; `fs` itself when nothing splits."""
    modes = _modes(fs, binding_access)
    if modes is None:
        return fs, next_id
    touches = {}  # alloc id -> [(step, lo, hi, reads, writes)]
    where = {}  # (step, position) -> (alloc id, index into touches[alloc id])
    dynamic = set()
    for i, step in enumerate(fs.steps):
        uses = list(zip(step.bufs, modes[i] if isinstance(step, Dispatch) else step.access))
        if isinstance(step, Dispatch) and step.lengths:
            dynamic |= {b.alloc.id for b in step.bindings}
        for position, (b, (reads, writes)) in enumerate(uses):
            if b.alloc.kind == "transient":
                where[(i, position)] = (b.alloc.id, len(touches.setdefault(b.alloc.id, [])))
                touches[b.alloc.id].append((i, b.offset, b.offset + b.length, reads, writes))
    end = len(fs.steps)
    for j, r in enumerate(fs.results):
        if isinstance(r, Buf) and r.alloc.kind == "transient":
            where[("result", j)] = (r.alloc.id, len(touches.setdefault(r.alloc.id, [])))
            touches[r.alloc.id].append((end, r.offset, r.offset + r.length, True, False))
    allocs = {b.alloc.id: b.alloc for step in fs.steps for b in step.bufs}
    allocs.update({r.alloc.id: r.alloc for r in fs.results if isinstance(r, Buf)})
    pieces = {}  # alloc id -> per touch: (piece Alloc, its start in the old allocation)
    for aid in sorted(touches):
        alloc = allocs[aid]
        if alloc.run_size is not None or aid in dynamic:
            continue
        value_of = _values(touches[aid])
        spans = {}
        for (_, lo, hi, _, _), v in zip(touches[aid], value_of):
            a, b = spans.get(v, (lo, hi))
            spans[v] = (min(a, lo), max(b, hi))
        if len(spans) == 1:
            continue
        made = {}
        for v in sorted(spans, key=lambda v: spans[v]):
            lo, hi = spans[v]
            lo -= lo % ALIGNMENT  # each binding keeps its alignment
            made[v] = (Alloc(next_id, "transient", hi - lo, alignment=alloc.alignment), lo)
            next_id += 1
        pieces[aid] = [made[v] for v in value_of]
    if not pieces:
        return fs, next_id

    def moved(key, b):
        aid, k = where.get(key, (None, None))
        if aid not in pieces:
            return b
        piece, lo = pieces[aid][k]
        return Buf(piece, b.offset - lo, b.length)

    steps = [step.rebound([moved((i, p), b) for p, b in enumerate(step.bufs)]) for i, step in enumerate(fs.steps)]
    results = [moved(("result", j), r) if isinstance(r, Buf) else r for j, r in enumerate(fs.results)]
    return replace(fs, steps=steps, results=results), next_id
