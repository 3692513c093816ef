"""Runtimeless C: from a program's schedule to what the templates lay out.

Memory has three regions, after Glow bundles, plus the caller's tensors:
- constants: one `const` blob (`NAME_CONSTANTS_SIZE`), so weights stay in
  flash; each constant's offset in it is `NAME__CONSTANTn_OFFSET`;
- state (`NAME_STATE_SIZE`, inside each instance): every buffer the
  initializers allocate (data they compute once, and the slots of mutable
  globals), written by NAME_initialize and kept across calls; each at
  `NAME__STATEn_OFFSET`;
- the arena (`NAME_ARENA_SIZE`): every buffer a call allocates, placed
  with liveness reuse, then staging space for caller tensors that are not
  aligned.  `NAME_ARENA_SIZE_ALIGNED_IO` is the arena without that staging,
  for callers that promise aligned tensors.  Per function (FN = its macro
  prefix, NAME_FN): `FN_ARENA_SIZE` the arena its call needs,
  `FN_BUFFERn_OFFSET` each of its buffers (the manifest's region `buffern`),
  `FN_<VALUE>_STAGING_OFFSET` the staging of a caller tensor;
- the caller's tensors: bound in place when aligned to the binding alignment.
A result buffer that holds exactly one output is not in the arena at all:
the dispatches write the caller's output directly.

`lower()` returns a `Lowered`: the steps as typed data (steps.py) and each
function's `CFunctionPlan`; `write_sources()` renders them and returns the
manifest's `runtimeless` section, built from the same data.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field

from ireegen.cgen.data_source import DataSource, write_data_source
from ireegen.cgen.render import render
from ireegen.compile import direct_exports, slice_liveness
from ireegen.compile.size_limits import check_static_memory

from . import arena, host_scalars, slab
from .interpret.read import read_schedule
from .schedule import Alloc, Buf, Check, Copy, Dispatch, Fill, Let, Load, RuntimelessError, Schedule, Sym
from .steps import TENSOR_REGIONS, At, CheckStep, CopyStep, DispatchStep, FillStep, LetStep, LoadStep, c_scalar

BINDING_ALIGNMENT = 64  # IREE's buffer alignment, which executables assume


@dataclass
class Place:
    """Where the bytes of one allocation live in C."""

    kind: str  # constant, state, arena, input, output
    offset: int = 0  # in the constants blob, the state region or the arena
    index: int = 0  # input/output position
    macro: str = ""  # the #define of `offset` (constant, state, arena)


@dataclass
class CFunctionPlan:
    fn: object  # c_api.CFunction
    steps: list  # steps.*Step, in order
    staged_inputs: list  # (CValue, macro of its arena staging offset) for inputs bound in place
    mapped_outputs: list  # (CValue, macro of its arena staging offset)
    result_copies: list  # (CValue, At): results copied out of the arena, state or constants
    scalar_results: list  # (CValue, int or Sym)
    arena_size: int  # without staging
    arena_size_staged: int  # with staging
    regions: list = field(default_factory=list)
    transient_bytes: int = 0  # every buffer the program allocates, without reuse
    regions_bound: int = 0  # the most bytes of its arena regions live at once (64-byte rounded)
    used: list = field(default_factory=list)  # the byte ranges of the regions the steps touch (slab.py)
    read_inputs: list = field(default_factory=list)  # CValues of the tensor inputs the call reads
    transitions: dict = field(default_factory=dict)  # state version -> the version after the call
    symbol: str = ""  # the C function that runs this plan
    macro: str = ""  # the prefix of its #defines (the function's, or the variant's symbol)
    defines: list = field(default_factory=list)  # (macro, value): its arena's size and offsets

    def _places(self) -> list:
        return [at for s in self.steps for at in s.places] + [at for _, at in self.result_copies]

    @property
    def uses_arena(self) -> bool:
        """Whether the generated call touches the arena at all."""
        if self.staged_inputs or self.mapped_outputs:
            return True
        return any(at.region == "arena" for at in self._places())

    @property
    def uses_state(self) -> bool:
        return any(at.region == "state" for at in self._places())


@dataclass
class Lowered:
    """What the runtimeless sources hold, as data: the template context's
    core and the manifest's source."""

    constants_blob: bytes
    constants: list  # Place (kind "constant") per constant, in the blob's order
    constant_sizes: list  # bytes of each constant
    constant_alignments: list  # alignment each constant asked for
    state: list  # Place (kind "state") per state buffer, in the region's order
    state_sizes: list  # bytes of each state buffer
    state_size: int
    state_versions: int
    init_steps: list  # steps.*Step the initializers run
    exports: list  # (executable index, export name) in first-use order
    plans: list  # per function: its CFunctionPlans, one per distinct schedule over the state versions
    arena_size: int
    arena_size_aligned_io: int
    binding_alignment: int = BINDING_ALIGNMENT

    @property
    def constants_json(self) -> list:
        return [
            {"offset": p.offset, "size": size, "alignment": alignment}
            for p, size, alignment in zip(self.constants, self.constant_sizes, self.constant_alignments)
        ]

    @property
    def all_steps(self) -> list:
        return self.init_steps + [s for variants in self.plans for p in variants for s in p.steps]


def plan_function(cfn, fs, where: str, block_places: dict, macro: str) -> tuple:
    """Places every allocation of one function; returns (CFunctionPlan,
    places).  `block_places` holds the constants' and the state's Places;
    `macro` prefixes the #defines of this plan's arena."""
    steps = fs.steps
    end = len(steps)  # the step that copies results out
    accesses = [(i, b) for i, step in enumerate(steps) for b in step.bufs]
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
        if alloc.kind in ("constant", "state"):
            places[aid] = block_places[aid]
        elif alloc.kind == "transient" and aid not in places:
            first, last, _ = uses.get(aid, (end, end, 0))
            if aid in result_allocs:
                last = end
            region_of[aid] = arena.Region(f"buffer{aid}", alloc.size, first, last, "intermediate")
    regions = list(region_of.values())
    top = arena.align_up(arena.plan_best(regions, BINDING_ALIGNMENT), BINDING_ALIGNMENT)
    for aid, r in region_of.items():
        places[aid] = Place("arena", r.offset, macro=f"{macro}_{r.key.upper()}_OFFSET")

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

    def staging_macro(v) -> str:
        return f"{macro}{v.macro[len(cfn.macro) :]}_STAGING_OFFSET"

    defines = [(f"{macro}_ARENA_SIZE", top_staged)]
    defines += [(places[aid].macro, r.offset) for aid, r in region_of.items()]
    for i in range(len(fs.inputs)):
        if f"input{i}" in offsets:
            staged_inputs.append((cfn.inputs[i], staging_macro(cfn.inputs[i])))
            defines.append((staging_macro(cfn.inputs[i]), offsets[f"input{i}"]))
    for place in sorted(places.values(), key=lambda p: p.index):
        if place.kind == "output":
            mapped_outputs.append((cfn.outputs[place.index], staging_macro(cfn.outputs[place.index])))
            defines.append((staging_macro(cfn.outputs[place.index]), offsets[f"output{place.index}"]))

    result_copies, scalar_results = _results(cfn, fs, places, where)
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
        macro=macro,
        defines=defines,
    )
    plan.used = used
    plan.regions_bound = slice_liveness.lower_bound([(r.first, r.last, r.size) for r in regions], BINDING_ALIGNMENT)
    plan.read_inputs = [cfn.inputs[i] for i, a in enumerate(fs.inputs) if isinstance(a, Alloc) and a.id in allocs]
    return plan, places


def _results(cfn, fs, places: dict, where: str) -> tuple:
    """(result copies, scalar results) of a call: the results not written
    in place, as (CValue, At) and (CValue, int or Sym)."""
    result_copies, scalar_results = [], []
    for j, r in enumerate(fs.results):
        v = cfn.outputs[j]
        if isinstance(r, Buf):
            place = places[r.alloc.id]
            if place.kind == "output" and place.index == j:
                continue
            result_copies.append((v, _at(places, r, cfn)))
        elif isinstance(r, (int, Sym)):
            scalar_results.append((v, r))
        else:
            raise RuntimelessError(f"{where}: function @{fs.name}: result {v.name} is not a tensor or an integer")
    return result_copies, scalar_results


def _pin_hint(v, where: str) -> str:
    """How the user gives a dynamic input a static shape."""
    if where.endswith(".onnx"):
        example = "x".join("N" if d is None else str(d) for d in v.value.shape) or "scalar"
        return (
            f"pin it with --input-shape {v.value.name}={example} (CLI) or "
            f"INPUT_SHAPES {v.value.name}={example} (CMake), N the size you need"
        )
    return "give the MLIR function static dimensions (--input-shape and INPUT_SHAPES take .onnx models)"


# The element types of inputs whose values can decide a result's shape.
SETTABLE_DTYPES = ("int", "uint", "bool")


def _dynamic_result_why(cfn, where: str) -> str:
    """Why a result with a dynamic shape is refused, with --input-value as
    the hint only where it can help: an ONNX model with integer or boolean
    inputs (a count, a shape, a configuration switch), whose values fixed at
    build time can make the shape static.  A shape that follows from float
    data (NonZero, NonMaxSuppression on scores) no constant input fixes."""
    why = "; runtimeless C needs static shapes (a result whose size depends on values computed at run time cannot be planned"
    settable = [v.name for v in cfn.inputs if v.value.dtype.startswith(SETTABLE_DTYPES)]
    if str(where).endswith(".onnx") and settable:
        names = ", ".join(settable)
        return f"{why}; if it follows from the value of {names}, fix that with --input-value NAME=V)"
    return why + ")"


def check_functions(functions: list, where: str) -> None:
    """Refuses, before compiling, a signature runtimeless C cannot take,
    naming the value at fault."""
    for cfn in functions:
        for v in cfn.inputs + cfn.outputs:
            if v.is_tensor and not v.value.is_static:
                why = (
                    _dynamic_result_why(cfn, where)
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


def _at(places: dict, b: Buf, cfn) -> At:
    """The place of `b`: its allocation's region and offset, and `b`'s
    range in it."""
    place = places[b.alloc.id]
    if place.kind in TENSOR_REGIONS:
        values = cfn.inputs if place.kind == "input" else cfn.outputs
        return At(place.kind, b.offset, b.length, index=place.index, value=values[place.index].name)
    return At(place.kind, b.offset, b.length, base=place.offset, macro=place.macro)


class _Lowering:
    """Turns one schedule's steps into steps.*Step, numbering the exports
    the dispatches call in first-use order."""

    def __init__(self, schedule: Schedule):
        self.executables = schedule.executables
        self.exports = []  # (executable index, export name)

    def step(self, step, places: dict, cfn):
        return _STEP_LOWERING[type(step)](self, step, lambda b: _at(places, b, cfn))

    def dispatch(self, step: Dispatch, at) -> DispatchStep:
        key = (self.executables.index(step.executable), step.export)
        if key not in self.exports:
            self.exports.append(key)
        return DispatchStep(
            export=step.export,
            library=f"{step.executable}_library_query",
            export_index=self.exports.index(key),
            workgroups=tuple(step.workgroups),
            constants=tuple(step.constants),
            bindings=tuple(at(b) for b in step.bindings),
            lengths=tuple(step.lengths) if step.lengths else tuple(b.length for b in step.bindings),
        )

    def fill(self, step: Fill, at) -> FillStep:
        return FillStep(at(step.target), step.pattern, step.pattern_size)

    def copy(self, step: Copy, at) -> CopyStep:
        return CopyStep(at(step.source), at(step.target))

    def load(self, step: Load, at) -> LoadStep:
        return LoadStep(step.name, step.c_type, at(step.source))

    def let(self, step: Let, at) -> LetStep:
        return LetStep(step.name, step.c_type, step.expr, step.calls)

    def check(self, step: Check, at) -> CheckStep:
        return CheckStep(step.condition, step.message)


# Each schedule step's lowering, by its class.
_STEP_LOWERING = {
    Dispatch: _Lowering.dispatch,
    Fill: _Lowering.fill,
    Copy: _Lowering.copy,
    Load: _Lowering.load,
    Let: _Lowering.let,
    Check: _Lowering.check,
}


def _block_places(schedule: Schedule, name: str) -> tuple:
    """The constants blob (each constant aligned as the program asked) and
    the Places of the constants and of the state buffers (each live for the
    instance's life): (blob, constant Places, state Places, state size)."""
    macro = name.upper()
    blob = bytearray()
    constants = []
    for k, c in enumerate(schedule.constants):
        start = arena.align_up(len(blob), max(c.alignment, 1))
        blob.extend(b"\0" * (start - len(blob)))
        constants.append(Place("constant", start, macro=f"{macro}__CONSTANT{k}_OFFSET"))
        blob.extend(c.data)
    state = []
    state_size = 0
    for k, alloc in enumerate(schedule.state):
        start = arena.align_up(state_size, max(alloc.alignment, BINDING_ALIGNMENT))
        state.append(Place("state", start, macro=f"{macro}__STATE{k}_OFFSET"))
        state_size = start + alloc.size
    return bytes(blob), constants, state, state_size


def lower(schedule: Schedule, functions: list, where: str, name: str, binding_access: dict | None = None) -> Lowered:
    """The runtimeless sources of `schedule` as data: every allocation
    placed, every step typed."""
    blob, constants, state, state_size = _block_places(schedule, name)
    block_places = {c.id: p for c, p in zip(schedule.constants, constants)}
    block_places.update({a.id: p for a, p in zip(schedule.state, state)})
    lowering = _Lowering(schedule)
    init_steps = [lowering.step(step, block_places, None) for step in schedule.init_steps]
    plans = []  # per function: its plans, one per distinct schedule over the state versions
    next_id = 1 + max(slab.alloc_ids(schedule), default=0)  # for the buffers slab.split makes
    for cfn in functions:
        variants = []
        for k, fs in enumerate(schedule.functions[cfn.name]):
            symbol = (
                cfn.symbol
                if schedule.state_versions == 1
                else f"{cfn.prefix}__{cfn.symbol[len(cfn.prefix) + 1 :]}__v{k}"
            )
            macro = cfn.macro if schedule.state_versions == 1 else symbol.upper()
            # IREE's layout of its slab, or the slab's buffers placed here: the smaller arena.
            split, next_id = slab.split(fs, binding_access or {}, next_id)
            tried = [(fs, *plan_function(cfn, fs, where, block_places, macro))]
            if split is not fs:
                tried.append((split, *plan_function(cfn, split, where, block_places, macro)))
            fs, plan, places = min(tried, key=lambda t: (t[1].arena_size_staged, t[1].arena_size))
            plan.steps = [lowering.step(step, places, cfn) for step in fs.steps]
            plan.transitions = dict(fs.transitions)
            plan.symbol = symbol
            variants.append(plan)
        plans.append(variants)
    flat = [p for variants in plans for p in variants]
    return Lowered(
        constants_blob=blob,
        constants=constants,
        constant_sizes=[c.size for c in schedule.constants],
        constant_alignments=[c.alignment for c in schedule.constants],
        state=state,
        state_sizes=[a.size for a in schedule.state],
        state_size=state_size,
        state_versions=schedule.state_versions,
        init_steps=init_steps,
        exports=lowering.exports,
        plans=plans,
        arena_size=max((p.arena_size_staged for p in flat), default=0),
        arena_size_aligned_io=max((p.arena_size for p in flat), default=0),
    )


def share_lengths(steps: list, name: str) -> list:
    """One file-scope table for the static binding lengths that several
    dispatches bind alike (a chain of equal layers binds the same lengths
    at each): sets each such step's `lengths_table`; returns the tables,
    [{"name", "lengths"}], in first-use order.  A table used once stays in
    its step."""
    dispatches = [s for s in steps if isinstance(s, DispatchStep) and s.lengths_static]
    counts = Counter(s.lengths for s in dispatches)
    names = {}
    for s in dispatches:
        if counts[s.lengths] > 1 and s.lengths not in names:
            names[s.lengths] = f"{name}__binding_lengths_{len(names)}"
    for s in dispatches:
        s.lengths_table = names.get(s.lengths)  # None: its own table
    return [{"name": table, "lengths": list(lengths)} for lengths, table in names.items()]


def _read(program_ir, functions: list, where: str):
    from iree.compiler import ir

    with ir.Context():
        module = ir.Module.parseFile(str(program_ir))
        return read_schedule(module, {f.name: f.function for f in functions}, where)


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
    where = context["source"]
    schedule = _read(program_ir, functions, where)
    lowered = lower(schedule, functions, where, name, binding_access)
    check_static_memory(lowered.arena_size, lowered.state_size, where)
    object_file = files["executables-object"]
    queries = [f"{symbol}_library_query" for symbol in schedule.executables]
    # The glue calls the dispatch functions by symbol where the object says
    # which they are (direct_exports.py), else looks them up at init.
    exports = [export for _, export in lowered.exports]
    direct = direct_exports.alias_exports(staging / object_file, queries, exports, name) if exports else None
    all_steps = lowered.all_steps
    # Only a host scalar the call computes (a `let`) calls a function.
    calls = [c for s in all_steps if isinstance(s, LetStep) for c in s.calls]
    common = dict(
        context,
        name=name,
        macro=name.upper(),
        functions=functions,
        object=object_file,
        constants_source=files["constants-source"],
        lowered=lowered,
        binding_alignment=lowered.binding_alignment,
        arena_size=lowered.arena_size,
        arena_size_aligned_io=lowered.arena_size_aligned_io,
        constants_size=len(lowered.constants_blob),
        state_size=lowered.state_size,
        state_versions=lowered.state_versions,
        init_steps=lowered.init_steps,
        export_count=len(lowered.exports),
        exports=lowered.exports,
        library_queries=queries,
        direct=direct,
        plans=lowered.plans,
        any_fill=any(isinstance(s, FillStep) for s in all_steps),
        shared_lengths=share_lengths(all_steps, name),
        c_scalar=c_scalar,
        helpers=host_scalars.helpers_used(calls),
        uses_libm=host_scalars.uses_libm(calls),
    )
    (staging / files["api-header"]).write_text(render("runtimeless.h.j2", **common))
    (staging / files["runtime-source"]).write_text(render("runtimeless.c.j2", header=files["api-header"], **common))
    write_constants(staging, name, files, data_format, lowered, common)
    (staging / files["abi-header"]).write_text(render("ireegen_executable_library.h"))
    return _manifest(lowered, files["abi-header"], queries, direct, link_libraries, lower_bounds)


def _manifest(lowered: Lowered, header_file: str, queries: list, direct, link_libraries: list, lower_bounds) -> dict:
    """The manifest's `runtimeless` section."""
    plans = lowered.plans
    return {
        "abi": {
            "header": header_file,
            "library_version": "0.6",
            "library_queries": queries,
            # The dispatch functions the glue calls by symbol (none: it looks them up).
            "direct_exports": [e["symbol"] for e in direct or []],
        },
        "link_libraries": link_libraries,
        "constants": {"size": len(lowered.constants_blob), "items": lowered.constants_json},
        "state": {
            "size": lowered.state_size,
            "alignment": BINDING_ALIGNMENT,
            "versions": lowered.state_versions,
            "buffers": [{"offset": p.offset, "size": size} for p, size in zip(lowered.state, lowered.state_sizes)],
            "initialize": [s.to_json() for s in lowered.init_steps],
            # When calls change the state's layout: each function's schedules,
            # with the state versions each runs from ("from": "to").
            "variants": {
                variants[0].fn.name: [
                    {
                        "state_versions": {str(a): b for a, b in sorted(p.transitions.items())},
                        "schedule": [s.to_json() for s in p.steps],
                        "arena": _arena_json(p),
                    }
                    for p in variants
                ]
                for variants in plans
            }
            if lowered.state_versions > 1
            else {},
        },
        "arena": {
            "size": lowered.arena_size,
            "size_aligned_io": lowered.arena_size_aligned_io,
            "alignment": BINDING_ALIGNMENT,
            # Per function, as its first call (from the initial state) runs.
            "functions": {_first_call(variants).fn.name: _arena_json(_first_call(variants)) for variants in plans},
            **_lower_bound_json(lower_bounds, plans),
        },
        "schedule": {
            _first_call(variants).fn.name: [s.to_json() for s in _first_call(variants).steps] for variants in plans
        },
    }


def write_constants(staging, name: str, files: dict, data_format: str, lowered: Lowered, context: dict) -> None:
    """NAME_constants.S + NAME_constants.bin, or NAME_constants.c (see data_source.py)."""
    constants = lowered.constants_json
    blob = lowered.constants_blob
    alignment = max([c["alignment"] for c in constants] + [BINDING_ALIGNMENT])
    description = [
        f"The const weights of `{name}`: {len(constants)} constant(s) in one {len(blob)}-byte block,",
        "each at the alignment the program asked for:",
    ]
    description += [
        f"  [{c['offset']}, {c['offset'] + c['size']}): {c['size']} bytes, aligned to {c['alignment']}"
        for c in constants
    ]
    source = DataSource(
        symbol=f"{name}__constants",
        alignment=alignment,
        description=description,
        section_macro=f"{name.upper()}_CONSTANTS_SECTION",
        macro=name.upper(),
        c_template="runtimeless_constants.c.j2",
    )
    context = dict(context, constants=constants, alignment=alignment)
    write_data_source(
        staging, data_format, files["constants-source"], files.get("constants-blob"), blob, source, context
    )


def _first_call(variants: list):
    """The plan that runs from the initial state (state version 0)."""
    return next(p for p in variants if 0 in p.transitions)


def _arena_json(p: CFunctionPlan) -> dict:
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
