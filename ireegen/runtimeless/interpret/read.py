"""read_schedule: the schedule of a compiled program, from its HAL-level IR.

The initializers run first, then every exported function from every state
version the globals can be in (see the package's docstring); a function
that does the same work from two versions has one schedule for both."""

from __future__ import annotations

from .. import host_scalars as hs
from ..schedule import (
    Alloc,
    Buf,
    Check,
    Copy,
    Dispatch,
    Fill,
    FunctionSchedule,
    Let,
    Load,
    RuntimelessError,
    Schedule,
    Sym,
    reads_of,
)
from .attrs import symbol_name
from .interpreter import Interpreter
from .values import View

_MAX_STATE_VERSIONS = 8


def _mutable_globals(module) -> set:
    out = set()
    for op in module.body.operations:
        op = op.operation
        if op.name == "util.global" and "is_mutable" in op.attributes:
            out.add(symbol_name(op))
    return out


def _fingerprint(fs: FunctionSchedule) -> tuple:
    """The schedule with its transient buffers numbered by first use: two
    runs of one function that do the same work compare equal."""
    numbers = {}
    inputs = {x.id: i for i, x in enumerate(fs.inputs) if isinstance(x, Alloc)}

    def alloc_key(alloc):
        if alloc.kind == "input":
            return ("input", inputs[alloc.id])
        if alloc.kind != "transient":
            return (alloc.kind, alloc.id)
        return ("transient", numbers.setdefault(alloc.id, len(numbers)), alloc.size)

    def value(x):
        if isinstance(x, Buf):
            return (alloc_key(x.alloc), x.offset, x.length)
        if isinstance(x, Alloc):
            return alloc_key(x)
        if isinstance(x, (list, tuple)):
            return tuple(value(y) for y in x)
        return x

    steps = []
    for step in fs.steps:
        if isinstance(step, Dispatch):
            steps.append(
                (
                    "dispatch",
                    step.executable,
                    step.export,
                    step.workgroups,
                    value(step.constants),
                    value(step.bindings),
                    value(step.lengths),
                )
            )
        elif isinstance(step, Fill):
            steps.append(("fill", value(step.target), step.pattern, step.pattern_size))
        elif isinstance(step, Copy):
            steps.append(("copy", value(step.source), value(step.target)))
        elif isinstance(step, Load):
            steps.append(("load", value(step.source), step.name, step.c_type))
        else:
            steps.append((type(step).__name__, tuple(vars(step).values())))
    return (tuple(steps), value(fs.results))


def _without_unused_scalars(steps: list, results: list) -> list:
    """`steps` without the run-time scalars (Load, Let) that nothing reads:
    C's -Wunused-variable would reject them."""

    def names_in(x) -> frozenset:
        if isinstance(x, (Sym, Let, Check)):
            return x.reads
        if isinstance(x, Dispatch):
            return reads_of(list(x.constants) + list(x.workgroups) + list(x.lengths or []))
        if isinstance(x, Fill):
            return reads_of([x.pattern])
        return frozenset()

    used = set().union(*(names_in(r) for r in results))
    kept = []
    for step in reversed(steps):
        if isinstance(step, (Load, Let)) and step.name not in used:
            continue
        used |= names_in(step)
        kept.append(step)
    return kept[::-1]


def read_schedule(hal_module, signature, where: str) -> Schedule:
    """Interprets `hal_module` (the parsed `--compile-to=hal` output).
    `signature` maps each exported function's name to its Function (for the
    argument kinds); `where` names the model in errors."""
    interp = Interpreter(hal_module, where)
    for op in hal_module.body.operations:
        op = op.operation
        if op.name == "util.initializer":
            interp.where = f"{where}: initializer"
            interp.run_region(op.regions[0], [])
    interp.initializing = False
    init_steps, interp.steps = _without_unused_scalars(interp.steps, []), []

    # Each mutable buffer global gets a place of its own in the state region
    # (a slot); one that starts out as a constant, as part of a buffer, or in
    # a buffer another global has, gets a copy of its value there.
    mutable = _mutable_globals(hal_module)
    slot_of = {}
    for key in sorted(mutable):
        value = interp.globals.get(key)
        if not isinstance(value, Buf):
            continue
        claimed = any(slot is value.alloc for slot in slot_of.values())
        if value.alloc.kind != "state" or value.offset != 0 or claimed:
            interp.allocs += 1
            slot = Alloc(interp.allocs, "state", value.length)
            interp.state.append(slot)
            init_steps.append(Copy(value, Buf(slot, 0, value.length)))
            value = Buf(slot, 0, value.length)
            interp.globals[key] = value
        slot_of[key] = value.alloc
    interp.slots = {a.id for a in slot_of.values()}

    # What each call does depends on the globals it starts from; the states
    # reachable from the initializers' are numbered (state versions), and a
    # function gets one schedule per version it can start from.
    def state_key(g):
        return frozenset(g.items())

    states = [dict(interp.globals)]
    keys = {state_key(states[0]): 0}
    variants = {name: [] for name in signature}  # name -> [(fingerprint, FunctionSchedule)]
    version = 0
    while version < len(states):
        for fn_name, fn in signature.items():
            op = interp.funcs.get(fn_name)
            if op is None:
                raise RuntimelessError(f"{where}: function @{fn_name} is missing from the compiled program")
            interp.where = f"{where}: function @{fn_name}"
            interp.globals = dict(states[version])
            fs = _run_function(interp, op, fn, slot_of)
            key = state_key(interp.globals)
            if key not in keys:
                if len(states) == _MAX_STATE_VERSIONS:
                    changing = sorted(k for k in interp.globals if interp.globals[k] != states[0].get(k))
                    raise RuntimelessError(
                        f"{interp.where}: the program's state keeps changing across calls (more than "
                        f"{_MAX_STATE_VERSIONS} distinct states, in global(s) "
                        f"{', '.join('@' + k for k in changing[:4])}): runtimeless C keeps tensors in state, "
                        "not host values that change on every call, such as counters or growing sizes"
                    )
                keys[key] = len(states)
                states.append(dict(interp.globals))
            fingerprint = _fingerprint(fs)
            for known_print, known in variants[fn_name]:
                if known_print == fingerprint:
                    known.transitions[version] = keys[key]
                    break
            else:
                fs.transitions = {version: keys[key]}
                variants[fn_name].append((fingerprint, fs))
        version += 1
    functions = {name: [fs for _, fs in found] for name, found in variants.items()}
    return Schedule(interp.constants, interp.executables, functions, init_steps, interp.state, len(states))


def _run_function(interp: Interpreter, op, fn, slot_of: dict) -> FunctionSchedule:
    args = []
    block_args = list(op.regions[0].blocks[0].arguments)
    interp.scalars = 0
    for value in fn.inputs:
        if value.is_tensor:
            if not value.is_static:
                raise RuntimelessError(
                    f"{interp.where}: argument {value.name} has a dynamic shape "
                    f"({value.mlir_type}); runtimeless C needs static shapes"
                )
            interp.allocs += 1
            args.append(Alloc(interp.allocs, "input", value.byte_size))
        else:
            mlir_type = str(block_args[len(args)].type)
            c_type = hs.c_type(mlir_type)
            if c_type is None:
                raise RuntimelessError(
                    f"{interp.where}: argument {value.name} is a {mlir_type} scalar, which runtimeless C does not take"
                )
            args.append(
                Sym(
                    value.name if hs.is_float(mlir_type) else f"({c_type}){value.name}",
                    mlir_type,
                    hs.type_bounds(mlir_type),
                )
            )
    values = [View(Buf(x, 0, x.size), tuple(v.shape)) if isinstance(x, Alloc) else x for x, v in zip(args, fn.inputs)]
    interp.steps, interp.stored = [], {}
    results = interp.run_region(op.regions[0], values)
    out = []
    for value, result in zip(fn.outputs, results):
        if value.is_tensor:
            if not value.is_static:
                raise RuntimelessError(
                    f"{interp.where}: result {value.name} has a dynamic shape "
                    f"({value.mlir_type}); runtimeless C needs static shapes"
                )
            if not isinstance(result, View):
                raise RuntimelessError(f"{interp.where}: result {value.name} is not a buffer the schedule knows")
            if result.buf.length < value.byte_size:
                raise RuntimelessError(
                    f"{interp.where}: result {value.name} ({value.mlir_type}) needs {value.byte_size} bytes but the "
                    f"compiled program returns {result.buf.length}: the compiler changed its element type"
                    + (" (f64 is demoted to f32 by --iree-input-demote-f64-to-f32)" if value.dtype == "float64" else "")
                )
            out.append(Buf(result.buf.alloc, result.buf.offset, value.byte_size))
        else:
            out.append(result)
    # State written back: each buffer a call stored into a mutable global is
    # copied into the global's slot after the call's work.
    committed = set()
    stored = dict(interp.stored)
    for key, value in sorted(stored.items()):
        # A value that is another global's slot (a swap) is saved first, as
        # that slot may be overwritten before this one.
        if value.alloc.id in interp.slots and value.alloc is not slot_of.get(key):
            saved = interp.new_alloc(None, value.length)
            interp.steps.append(Copy(value, Buf(saved, 0, value.length)))
            stored[key] = Buf(saved, 0, value.length)
    for key, value in sorted(stored.items()):
        slot = slot_of.get(key)
        if slot is None:
            raise RuntimelessError(
                f"{interp.where}: global @{key} gets a buffer that the initializers did not "
                "allocate; runtimeless C keeps state only in buffers made when the model loads"
            )
        if value.alloc is slot and value.offset == 0:
            continue
        # IREE may store one packed buffer into several globals (each with
        # its own offset global): each slot holds all of it, and is as large
        # as the largest buffer any state version stores.
        slot.size = max(slot.size, value.length)
        interp.steps.append(Copy(value, Buf(slot, 0, value.length)))
        interp.globals[key] = Buf(slot, 0, value.length)
        committed.add(slot.id)
    for value, result in zip(fn.outputs, out):
        if isinstance(result, Buf) and result.alloc.id in committed:
            raise RuntimelessError(
                f"{interp.where}: result {value.name} is a view of state that the call "
                "replaces; runtimeless C cannot return it"
            )
    return FunctionSchedule(fn.name, args, _without_unused_scalars(interp.steps, out), out)
