"""Runtimeless C: from a program's schedule to what the templates lay out.

Memory has three regions, after Glow bundles, plus the caller's tensors:
- constants: one `const` blob (`NAME_CONSTANTS_SIZE`), so weights stay in flash;
- state (`NAME_STATE_SIZE`, inside each instance): every buffer the
  initializers allocate (data they compute once, and the slots of mutable
  globals), written by NAME_initialize and kept across calls;
- the arena (`NAME_ARENA_SIZE`): every buffer a call allocates, placed
  with liveness reuse, then staging space for caller tensors that are not
  aligned.  `NAME_ARENA_SIZE_ALIGNED_IO` is the arena without that staging,
  for callers that promise aligned tensors;
- the caller's tensors: bound in place when aligned to the binding alignment.
A result buffer that holds exactly one output is not in the arena at all:
the dispatches write the caller's output directly.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass, field

from ireegen.compile import slice_liveness
from ireegen.compile.size_limits import check_static_memory

from . import arena, host_scalars, slab
from .schedule import Alloc, Buf, Check, Copy, Dispatch, Fill, Let, Load, RuntimelessError, Schedule, Sym

BINDING_ALIGNMENT = 64  # IREE's buffer alignment, which executables assume


@dataclass
class Place:
    """Where the bytes of one allocation live in C."""

    kind: str  # constant, state, arena, input, output
    offset: int = 0  # in the constants blob, the state region or the arena
    index: int = 0  # input/output position


@dataclass
class CFunctionPlan:
    fn: object  # c_api.CFunction
    steps: list  # dicts for the template
    staged_inputs: list  # (CValue, arena offset) for inputs bound in place
    mapped_outputs: list  # (CValue, arena offset of its staging)
    result_copies: list  # (CValue, C source expression, bytes)
    scalar_results: list  # (CValue, C expression)
    arena_size: int  # without staging
    arena_size_staged: int  # with staging
    regions: list = field(default_factory=list)
    transient_bytes: int = 0  # every buffer the program allocates, without reuse
    regions_bound: int = 0  # the most bytes of its arena regions live at once (64-byte rounded)
    used: list = field(default_factory=list)  # the byte ranges of the regions the steps touch (slab.py)
    read_inputs: list = field(default_factory=list)  # CValues of the tensor inputs the call reads
    transitions: dict = field(default_factory=dict)  # state version -> the version after the call
    symbol: str = ""  # the C function that runs this plan

    def _texts(self) -> list:
        texts = [b for s in self.steps for b in s.get("bindings", [])]
        texts += [s[k] for s in self.steps for k in ("target", "source") if k in s]
        return texts + [src for _, src, _ in self.result_copies]

    @property
    def uses_arena(self) -> bool:
        """Whether the generated call touches the arena at all."""
        if self.staged_inputs or self.mapped_outputs:
            return True
        return any(re.match(r"arena\b", t) for t in self._texts())

    @property
    def uses_state(self) -> bool:
        # The local `state`, not a parameter called state_arg.
        return any(re.match(r"state\b", t) for t in self._texts())


def _accesses(steps) -> list:
    """(step index, Buf) for every buffer range a step touches."""
    out = []
    for i, step in enumerate(steps):
        if isinstance(step, Dispatch):
            out += [(i, b) for b in step.bindings]
        elif isinstance(step, Fill):
            out.append((i, step.target))
        elif isinstance(step, Copy):
            out += [(i, step.source), (i, step.target)]
        elif isinstance(step, Load):
            out.append((i, step.source))
    return out


def plan_function(cfn, fs, where: str, constant_offsets: dict, state_offsets: dict) -> tuple:
    """Places every allocation of one function; returns (CFunctionPlan, places)."""
    steps = fs.steps
    end = len(steps)  # the step that copies results out
    accesses = _accesses(steps)
    uses = {}
    for i, b in accesses:
        first, last, extent = uses.get(b.alloc.id, (i, i, 0))
        uses[b.alloc.id] = (min(first, i), max(last, i), max(extent, b.offset + b.length))

    places = {}
    # Inputs: in place.
    for i, alloc in enumerate(fs.inputs):
        if isinstance(alloc, Alloc):
            places[alloc.id] = Place("input", index=i)
    # Outputs written in place: a transient that is exactly one result.
    result_allocs = [r.alloc.id for r in fs.results if isinstance(r, Buf)]
    for j, r in enumerate(fs.results):
        if not isinstance(r, Buf) or r.alloc.kind != "transient" or r.offset != 0:
            continue
        if result_allocs.count(r.alloc.id) != 1 or r.alloc.id not in uses:
            continue  # shared, or never written (a zero-element result)
        extent = uses.get(r.alloc.id, (0, 0, 0))[2]
        if extent <= r.length:
            places[r.alloc.id] = Place("output", index=j)

    allocs = {b.alloc.id: b.alloc for _, b in accesses}
    allocs.update({r.alloc.id: r.alloc for r in fs.results if isinstance(r, Buf)})
    region_of = {}  # alloc id -> its arena Region
    for aid, alloc in sorted(allocs.items()):
        if alloc.kind == "constant":
            places[aid] = Place("constant", constant_offsets[aid])
        elif alloc.kind == "state":
            places[aid] = Place("state", state_offsets[aid])
        elif alloc.kind == "transient" and aid not in places:
            first, last, _ = uses.get(aid, (end, end, 0))
            if aid in result_allocs:
                last = end
            region_of[aid] = arena.Region(f"buffer{aid}", alloc.size, first, last, "intermediate")
    regions = list(region_of.values())
    top = arena.align_up(arena.plan_best(regions, BINDING_ALIGNMENT), BINDING_ALIGNMENT)
    for aid, r in region_of.items():
        places[aid] = Place("arena", r.offset)

    # Staging for caller tensors bound in place, used when they are not aligned.
    staging = []
    staged_inputs, mapped_outputs = [], []
    bound = {b.alloc.id for s in steps if isinstance(s, Dispatch) for b in s.bindings}
    for i, alloc in enumerate(fs.inputs):
        if isinstance(alloc, Alloc) and alloc.id in bound:
            last = uses[alloc.id][1]
            staging.append(arena.Region(f"input{i}", alloc.size, -1, last, "input-staging"))
    for aid, place in places.items():
        if place.kind == "output":
            staging.append(arena.Region(f"output{place.index}", allocs[aid].size, uses[aid][0], end, "output-staging"))
    # Staging shares the bytes of the buffers no step touches while it is live.
    used = slab.used_ranges(accesses, region_of, fs.results, end)
    top_staged = max(top, arena.plan(staging, BINDING_ALIGNMENT, placed=used))
    offsets = {r.key: r.offset for r in staging}
    for i in range(len(fs.inputs)):
        if f"input{i}" in offsets:
            staged_inputs.append((cfn.inputs[i], offsets[f"input{i}"]))
    for place in sorted(places.values(), key=lambda p: p.index):
        if place.kind == "output":
            mapped_outputs.append((cfn.outputs[place.index], offsets[f"output{place.index}"]))

    result_copies, scalar_results = [], []
    for j, r in enumerate(fs.results):
        v = cfn.outputs[j]
        if isinstance(r, Buf):
            place = places[r.alloc.id]
            if place.kind == "output" and place.index == j:
                continue
            result_copies.append((v, _pointer(place, r.offset, cfn, cfn.prefix), r.length))
        elif isinstance(r, (int, Sym)):
            scalar_results.append((v, _c_value(r)))
        else:
            raise RuntimelessError(f"{where}: function @{fs.name}: result {v.name} is not a tensor or an integer")
    plan = CFunctionPlan(
        cfn,
        [],
        staged_inputs,
        mapped_outputs,
        result_copies,
        scalar_results,
        top,
        top_staged,
        regions + staging,
        sum(a.size for a in allocs.values() if a.kind == "transient"),
    )
    plan.used = used
    plan.regions_bound = slice_liveness.lower_bound([(r.first, r.last, r.size) for r in regions], BINDING_ALIGNMENT)
    plan.read_inputs = [cfn.inputs[i] for i, a in enumerate(fs.inputs) if isinstance(a, Alloc) and a.id in allocs]
    return plan, places


def _pin_hint(v, where: str) -> str:
    """How the user gives a dynamic input a static shape."""
    if where.endswith(".onnx"):
        example = "x".join("N" if d is None else str(d) for d in v.value.shape) or "scalar"
        return (
            f"pin it with --input-shape {v.value.name}={example} (CLI) or "
            f"INPUT_SHAPES {v.value.name}={example} (CMake), N the size you need"
        )
    return "give the MLIR function static dimensions (--input-shape and INPUT_SHAPES take .onnx models)"


def check_functions(functions: list, where: str) -> None:
    """Refuses, before compiling, a signature runtimeless C cannot take,
    naming the value at fault."""
    for cfn in functions:
        for v in cfn.inputs + cfn.outputs:
            if v.is_tensor and not v.value.is_static:
                onnx = str(where).endswith(".onnx")
                why = (
                    "; runtimeless C needs static shapes (a result whose shape depends on input values "
                    "cannot be planned" + ("; fix such an input with --input-value NAME=V" if onnx else "") + ")"
                    if v in cfn.outputs
                    else f"; runtimeless C needs static shapes: {_pin_hint(v, where)}"
                )
                kind = "result" if v in cfn.outputs else "argument"
                raise RuntimelessError(
                    f"{where}: function @{cfn.name}: {kind} {v.name} has a dynamic shape ({v.value.mlir_type}){why}"
                )
        for v in cfn.inputs + cfn.outputs:
            if not v.is_tensor and not v.vm_scalar:
                raise RuntimelessError(
                    f"{where}: function @{cfn.name}: {v.name} is a {v.value.mlir_type} scalar, "
                    "which has no typed C form"
                )
        if not cfn.typed:
            raise RuntimelessError(f"{where}: function @{cfn.name} has no typed C form")


def _c_value(v) -> str:
    return v.expr if isinstance(v, Sym) else str(v)


def _pointer(place: Place, offset: int, cfn, prefix: str) -> str:
    def at(base: str, at: int) -> str:
        return f"{base} + {at}" if at else base

    suffix = f" + {offset}" if offset else ""
    if place.kind == "constant":
        return at(f"{prefix}__constants", place.offset + offset)
    if place.kind == "arena":
        return at("arena", place.offset + offset)
    if place.kind == "state":
        return at("state", place.offset + offset)
    if place.kind == "input":
        return f"{cfn.inputs[place.index].name}_data{suffix}"
    return f"{cfn.outputs[place.index].name}_data{suffix}"


def lower(schedule: Schedule, functions: list, where: str, binding_access: dict | None = None) -> dict:
    """The template context of the runtimeless sources."""
    # Constants: one blob, each aligned as the program asked.
    constant_offsets = {}
    blob = bytearray()
    for c in schedule.constants:
        start = arena.align_up(len(blob), max(c.alignment, 1))
        blob.extend(b"\0" * (start - len(blob)))
        constant_offsets[c.id] = start
        blob.extend(c.data)

    # State: every buffer the initializers make, each live for the instance's life.
    state_offsets = {}
    state_size = 0
    for alloc in schedule.state:
        start = arena.align_up(state_size, max(alloc.alignment, BINDING_ALIGNMENT))
        state_offsets[alloc.id] = start
        state_size = start + alloc.size

    exports = []  # (executable index, export name) in first-use order
    prefix = functions[0].prefix if functions else ""
    init_places = {a.id: Place("constant", off) for a in schedule.constants for off in [constant_offsets[a.id]]}
    init_places.update({aid: Place("state", off) for aid, off in state_offsets.items()})
    init_steps = [_step(step, init_places, None, schedule, exports, prefix) for step in schedule.init_steps]
    plans = []  # per function: its plans, one per distinct schedule over the state versions
    next_id = 1 + max(slab.alloc_ids(schedule), default=0)  # for the buffers slab.split makes
    for cfn in functions:
        variants = []
        for k, fs in enumerate(schedule.functions[cfn.name]):
            # IREE's layout of its slab, or the slab's buffers placed here: the smaller arena.
            split, next_id = slab.split(fs, binding_access or {}, next_id)
            tried = [(fs, *plan_function(cfn, fs, where, constant_offsets, state_offsets))]
            if split is not fs:
                tried.append((split, *plan_function(cfn, split, where, constant_offsets, state_offsets)))
            fs, plan, places = min(tried, key=lambda t: (t[1].arena_size_staged, t[1].arena_size))
            for step in fs.steps:
                plan.steps.append(_step(step, places, cfn, schedule, exports, cfn.prefix))
            plan.transitions = dict(fs.transitions)
            plan.symbol = (
                cfn.symbol
                if schedule.state_versions == 1
                else f"{cfn.prefix}__{cfn.symbol[len(cfn.prefix) + 1 :]}__v{k}"
            )
            variants.append(plan)
        plans.append(variants)
    flat = [p for variants in plans for p in variants]
    return dict(
        state_offsets=state_offsets,
        state_size=state_size,
        state_versions=schedule.state_versions,
        init_steps=init_steps,
        constants_blob=bytes(blob),
        constants=[
            {"offset": constant_offsets[c.id], "size": c.size, "alignment": c.alignment} for c in schedule.constants
        ],
        executables=schedule.executables,
        exports=exports,
        plans=plans,
        arena_size=max((p.arena_size_staged for p in flat), default=0),
        arena_size_aligned_io=max((p.arena_size for p in flat), default=0),
        binding_alignment=BINDING_ALIGNMENT,
    )


def _place_json(place: Place, b: Buf) -> dict:
    """Where a binding points, for the manifest: a caller tensor (by position),
    the constants blob or the arena (by offset)."""
    if place.kind in ("input", "output"):
        return {"in": place.kind, "index": place.index, "offset": b.offset, "length": b.length}
    return {"in": place.kind, "offset": place.offset + b.offset, "length": b.length}


def _step(step, places, cfn, schedule, exports, prefix: str) -> dict:
    def ptr(b: Buf) -> str:
        return _pointer(places[b.alloc.id], b.offset, cfn, prefix)

    if isinstance(step, Dispatch):
        key = (schedule.executables.index(step.executable), step.export)
        if key not in exports:
            exports.append(key)
        constants = [_c_value(c) if isinstance(c, Sym) else f"{c}u" for c in step.constants]
        return dict(
            kind="dispatch",
            export=step.export,
            export_index=exports.index(key),
            library=f"{step.executable}_library_query",
            workgroups=[f"(uint32_t){w.expr}" if isinstance(w, Sym) else w for w in step.workgroups],
            workgroups_json=[{"expr": w.expr} if isinstance(w, Sym) else w for w in step.workgroups],
            constants=constants,
            constants_json=[{"expr": c.expr} if isinstance(c, Sym) else c for c in step.constants],
            constants_static=not any(isinstance(c, Sym) for c in step.constants),
            bindings=[ptr(b) for b in step.bindings],
            lengths=[f"(size_t){n.expr}" if isinstance(n, Sym) else n for n in step.lengths]
            if step.lengths
            else [b.length for b in step.bindings],
            lengths_static=not step.lengths,
            lengths_table=None,  # a shared file-scope table (share_lengths)
            places=[_place_json(places[b.alloc.id], b) for b in step.bindings],
        )
    if isinstance(step, Fill):
        return dict(
            kind="fill",
            target=ptr(step.target),
            length=step.target.length,
            pattern=f"(uint32_t){step.pattern.expr}"
            if isinstance(step.pattern, Sym)
            else f"0x{step.pattern:0{2 * step.pattern_size}X}u",
            pattern_size=step.pattern_size,
        )
    if isinstance(step, Load):
        return dict(
            kind="load",
            name=step.name,
            c_type=step.c_type,
            source=ptr(step.source),
            length=step.source.length,
            place=_place_json(places[step.source.alloc.id], step.source),
        )
    if isinstance(step, Let):
        return dict(kind="let", name=step.name, c_type=step.c_type, expr=step.expr)
    if isinstance(step, Check):
        return dict(kind="check", condition=step.condition, message=step.message)
    return dict(kind="copy", source=ptr(step.source), target=ptr(step.target), length=step.source.length)


def share_lengths(steps: list, name: str) -> list:
    """One file-scope table for the static binding lengths that several
    dispatches bind alike (a chain of equal layers binds the same lengths
    at each): sets each such step's `lengths_table`; returns the tables,
    [{"name", "lengths"}], in first-use order.  A table used once stays in
    its step."""
    static = [tuple(s["lengths"]) for s in steps if s["kind"] == "dispatch" and s["lengths_static"]]
    counts = Counter(static)
    names = {}
    for lengths in static:
        if counts[lengths] > 1 and lengths not in names:
            names[lengths] = f"{name}__binding_lengths_{len(names)}"
    for s in steps:
        if s["kind"] == "dispatch" and s["lengths_static"]:
            s["lengths_table"] = names.get(tuple(s["lengths"]))  # None: its own table
    return [{"name": table, "lengths": list(lengths)} for lengths, table in names.items()]


def write_sources(
    staging,
    name: str,
    files: dict,
    functions: list,
    program_ir,
    context: dict,
    link_libraries: list,
    data_format: str = "asm",
    lower_bounds: dict | None = None,
    binding_access: dict | None = None,
) -> dict:
    """Reads the schedule from `program_ir` (the HAL-level program), writes
    the runtimeless sources into `staging`, and returns the manifest's
    `runtimeless` section.  `context` carries banner/summary/guard;
    `lower_bounds` each function's transient lower bound (slice_liveness);
    `binding_access` how each dispatch uses its bindings (stream_access)."""
    from iree.compiler import ir

    from ireegen.cgen.render import render
    from ireegen.compile.direct_exports import alias_exports

    from .interpret.read import read_schedule

    where = context["source"]
    with ir.Context():
        module = ir.Module.parseFile(str(program_ir))
        schedule = read_schedule(module, {f.name: f.function for f in functions}, where)
    lowered = lower(schedule, functions, where, binding_access)
    check_static_memory(lowered["arena_size"], lowered["state_size"], where)
    object_file = files["executables-object"]
    header_file = files["abi-header"]
    queries = [f"{symbol}_library_query" for symbol in schedule.executables]
    # The glue calls the dispatch functions by symbol where the object says
    # which they are (direct_exports.py), else looks them up at init.
    direct = (
        alias_exports(staging / object_file, queries, [export for _, export in lowered["exports"]], name)
        if lowered["exports"]
        else None
    )
    blob = lowered["constants_blob"]
    macro = name.upper()
    flat = [(k, p) for variants in lowered["plans"] for k, p in enumerate(variants)]
    all_steps = lowered["init_steps"] + [s for _, p in flat for s in p.steps]
    shared_lengths = share_lengths(all_steps, name)
    scalar_texts = (
        [c for s in all_steps for c in s.get("constants", [])]
        + [s.get("expr", "") for s in all_steps]
        + [s.get("condition", "") for s in all_steps]
        + [s.get("pattern", "") for s in all_steps]
        + [expr for _, p in flat for _, expr in p.scalar_results]
    )
    common = dict(
        context,
        name=name,
        macro=macro,
        functions=functions,
        object=object_file,
        constants_source=files["constants-source"],
        binding_alignment=lowered["binding_alignment"],
        arena_size=lowered["arena_size"],
        arena_size_aligned_io=lowered["arena_size_aligned_io"],
        constants_size=len(blob),
        state_size=lowered["state_size"],
        state_versions=lowered["state_versions"],
        init_steps=lowered["init_steps"],
        export_count=len(lowered["exports"]),
        exports=lowered["exports"],
        library_queries=queries,
        direct=direct,
        plans=lowered["plans"],
        any_fill=any(s["kind"] == "fill" for s in all_steps),
        shared_lengths=shared_lengths,
        helpers=host_scalars.helpers_used(scalar_texts),
        uses_libm=host_scalars.uses_libm(scalar_texts),
    )
    (staging / files["api-header"]).write_text(render("runtimeless.h.j2", **common))
    (staging / files["runtime-source"]).write_text(render("runtimeless.c.j2", header=files["api-header"], **common))
    write_constants(staging, name, files, data_format, blob, lowered["constants"], common)
    (staging / header_file).write_text(render("ireegen_executable_library.h"))
    return {
        "abi": {
            "header": header_file,
            "library_version": "0.6",
            "library_queries": queries,
            # The dispatch functions the glue calls by symbol (none: it looks them up).
            "direct_exports": [e["symbol"] for e in direct or []],
        },
        "link_libraries": link_libraries,
        "constants": {"size": len(blob), "items": lowered["constants"]},
        "state": {
            "size": lowered["state_size"],
            "alignment": BINDING_ALIGNMENT,
            "versions": lowered["state_versions"],
            "buffers": [{"offset": lowered["state_offsets"][a.id], "size": a.size} for a in schedule.state],
            "initialize": [_step_json(s) for s in lowered["init_steps"]],
            # When calls change the state's layout: each function's schedules,
            # with the state versions each runs from ("from": "to").
            "variants": {
                variants[0].fn.name: [
                    {
                        "state_versions": {str(a): b for a, b in sorted(p.transitions.items())},
                        "schedule": [_step_json(s) for s in p.steps],
                        "arena": _arena_json(p),
                    }
                    for p in variants
                ]
                for variants in lowered["plans"]
            }
            if lowered["state_versions"] > 1
            else {},
        },
        "arena": {
            "size": lowered["arena_size"],
            "size_aligned_io": lowered["arena_size_aligned_io"],
            "alignment": BINDING_ALIGNMENT,
            # Per function, as its first call (from the initial state) runs.
            "functions": {
                _first_call(variants).fn.name: _arena_json(_first_call(variants)) for variants in lowered["plans"]
            },
            **_lower_bound_json(lower_bounds, lowered["plans"]),
        },
        "schedule": {
            _first_call(variants).fn.name: [_step_json(s) for s in _first_call(variants).steps]
            for variants in lowered["plans"]
        },
    }


def write_constants(
    staging, name: str, files: dict, data_format: str, blob: bytes, constants: list, context: dict
) -> None:
    """NAME_constants.S + NAME_constants.bin, or NAME_constants.c (see data_source.py)."""
    from ireegen.cgen.data_source import write_data_source

    alignment = max([c["alignment"] for c in constants] + [BINDING_ALIGNMENT])
    description = [
        f"The const weights of `{name}`: {len(constants)} constant(s) in one {len(blob)}-byte block,",
        "each at the alignment the program asked for:",
    ]
    description += [
        f"  [{c['offset']}, {c['offset'] + c['size']}): {c['size']} bytes, aligned to {c['alignment']}"
        for c in constants
    ]
    write_data_source(
        staging,
        data_format,
        files["constants-source"],
        files.get("constants-blob"),
        blob,
        symbol=f"{name}__constants",
        alignment=alignment,
        description=description,
        section_macro=f"{name.upper()}_CONSTANTS_SECTION",
        macro=name.upper(),
        c_template="runtimeless_constants.c.j2",
        context=dict(context, constants=constants, alignment=alignment),
    )


def _first_call(variants: list):
    """The plan that runs from the initial state (state version 0)."""
    return next(p for p in variants if 0 in p.transitions)


def _arena_json(p) -> dict:
    return {
        "size": p.arena_size_staged,
        "size_aligned_io": p.arena_size,
        "sum_of_buffers": p.transient_bytes,
        "regions": [
            {"name": r.key, "role": r.role, "offset": r.offset, "size": r.size, "live": [r.first, r.last]}
            for r in sorted(p.regions, key=lambda r: (r.offset, r.key))
        ],
        # What staging may share: the byte ranges of the intermediates the steps touch.
        "used": [{"offset": r.offset, "size": r.size, "live": [r.first, r.last]} for r in p.used],
    }


def _lower_bound_json(lower_bounds: dict | None, plans: list) -> dict:
    """The arena's liveness lower bound (the most bytes of IREE's transient
    buffers live at once, from compile/slice_liveness.py), when known for
    every function: {"lower_bound": bytes}.  Where the arena holds IREE's
    buffers split out of its slab (slab.py), their own bound when lower: a
    result written in place or a concurrent schedule run one dispatch at a
    time keeps fewer bytes live than IREE's buffers."""
    if lower_bounds is None:
        return {}
    bounds = []
    for variants in plans:
        bound = slice_liveness.bound_of(lower_bounds, variants[0].fn.name)
        if bound is None:
            return {}
        bounds.append(min(bound, max(p.regions_bound for p in variants)))
    return {"lower_bound": max(bounds, default=0)}


def _step_json(s: dict) -> dict:
    """One step for the manifest: what runs, and the bytes it touches."""
    if s["kind"] == "dispatch":
        return {
            "dispatch": s["export"],
            "library": s["library"],
            "workgroups": s["workgroups_json"],
            "constants": s["constants_json"],
            "bindings": s["places"],
        }
    if s["kind"] == "load":
        return {"load": s["name"], "type": s["c_type"], "from": s["place"]}
    if s["kind"] == "let":
        return {"let": s["name"], "type": s["c_type"], "expr": s["expr"]}
    if s["kind"] == "check":
        return {"check": s["condition"], "message": s["message"]}
    return {s["kind"]: s["length"]}
