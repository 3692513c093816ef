"""The schedule of a compiled program, read from iree-compile's HAL-level IR.

Runtimeless C has no VM to run the program's host code, so ireegen runs that
host code here, once, at emit time.  `read_schedule()` interprets the
initializers and each exported function of the `--compile-to=hal` output over
abstract values: integers are known, the function's tensors are "the caller's
input i", buffers are allocations with a size, and scalar arguments are C
expressions.  What the device would have been asked to do (dispatches, fills,
copies) is recorded in program order, which is a valid serial order: IREE
issues queue work in dependency order.

Initializers run first: their work goes into `init_steps` and what they
allocate into the state region.  A mutable global that holds a buffer gets a
fixed slot there; a call that stores a new buffer into it is followed by a
copy into the slot.  The globals' values after a call may differ from those
before it (a size recorded next to the buffer, say): each distinct state is a
state version, and a function has one schedule per version it can start from.

Anything the interpretation cannot pin down at emit time (a branch on a
value only known at run time, a size that depends on an argument, a read of
device data on the host, an op it does not know) is refused with a
RuntimelessError naming the function and the op.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field

import numpy as np

from ireegen.common.errors import UsageError

from . import host_scalars as hs


class RuntimelessError(UsageError):
    """The model cannot be expressed as runtimeless C."""


# ---------------------------------------------------------------------------
# Abstract values


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
class View:
    buf: Buf
    shape: tuple


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


@dataclass(frozen=True)
class Token:
    kind: str  # device, allocator, fence, file


@dataclass(eq=False)
class CommandBuffer:
    steps: list = field(default_factory=list)


@dataclass(frozen=True)
class Executable:
    symbol: str  # the hal.executable's symbol: its library query is <symbol>_library_query


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


@dataclass
class Fill:
    target: Buf
    pattern: int
    pattern_size: int


@dataclass
class Copy:
    source: Buf
    target: Buf


@dataclass
class Load:
    """The host reads a scalar from device data: `name` = the bytes at `source`."""

    source: Buf
    name: str
    c_type: str


@dataclass
class Let:
    """A host scalar the call computes at run time: `const c_type name = expr;`."""

    name: str
    c_type: str
    expr: str


@dataclass
class Check:
    """The program fails unless `condition` (a C expression) holds."""

    condition: str
    message: str


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


# ---------------------------------------------------------------------------
# The interpreter


_MAX_STEPS = 1_000_000  # interpreted ops per function, against runaway loops


_width, _wrap = hs.width, hs.wrap


# Ops that only order work or describe buffers; the serial schedule needs none.
_NO_OPS = {
    "hal.command_buffer.execution_barrier",
    "hal.command_buffer.finalize",
    "hal.buffer.assert",
    "hal.buffer_view.assert",
    "hal.device.queue.flush",
    "hal.device.queue.barrier",
    "hal.device.queue.dealloca",
}

_OPS = {}  # op name -> _Interpreter method: the interpreter's op table


def _handles(*names):
    """Registers the decorated method as the handler of `names`."""

    def register(method):
        for name in names:
            _OPS[name] = method
        return method

    return register


class _Interpreter:
    def __init__(self, module, where: str):
        self.where = where
        self.globals = {}
        self.constants = []
        self.state = []  # Allocs the initializers make: they persist for the instance's life
        self.executables = []
        self.allocs = 0
        self.funcs = {}
        self.initializing = True
        self.steps = []  # where device work goes: the initializers', then each call's
        self.stored = {}  # buffer globals a call stored to: name -> Buf
        self.slots = set()  # ids of the state Allocs that mutable globals live in
        self.scalars = 0  # run-time host scalars so far (scalarN, per function)
        for op in module.body.operations:
            op = op.operation
            if op.name in ("util.func", "func.func"):
                self.funcs[_symbol_name(op)] = op
            elif op.name == "util.global" and "initial_value" in op.attributes:
                # A host scalar with its value inline (`util.global @n = 0 : i32`).
                text = str(op.attributes["initial_value"])
                try:
                    self.globals[_symbol_name(op)] = _wrap(
                        int(text.split(":")[0].strip()),
                        _width(
                            op.attributes["type"].value
                            if hasattr(op.attributes["type"], "value")
                            else op.attributes["type"]
                        ),
                    )
                except ValueError:
                    pass  # not an integer: a load before a store is refused as before

    # -- helpers
    def fail(self, op, message: str):
        raise RuntimelessError(f"{self.where}: {message} (at `{_op_text(op)}`)")

    def new_alloc(self, op, size) -> Alloc:
        """A buffer the program allocates: state when an initializer makes
        it (it outlives every call), else a call's transient."""
        run_size = None
        if isinstance(size, Sym):
            run_size, size = size, self.upper_bound(op, size, "the size of a buffer")
        self.allocs += 1
        alloc = Alloc(self.allocs, "state" if self.initializing else "transient", size, run_size=run_size)
        if self.initializing:
            self.state.append(alloc)
        return alloc

    _MAX_BOUND = 1 << 30  # bytes: a bound above this is no bound for an arena

    def upper_bound(self, op, value: Sym, what: str) -> int:
        """The largest value a run-time size can take, from the bounds the
        interpreter derived (an allocation gets that much); the C checks it
        before the size is used, as the bounds assume no arithmetic wraps."""
        if value.bounds[1] > self._MAX_BOUND:
            self.fail(
                op,
                f"{what} depends on a run-time value with no bound the interpreter can derive "
                "(dynamic shapes are not supported)",
            )
        hi = max(int(value.bounds[1]), 0)
        self.steps.append(Check(f"{value.expr} <= {hi}u", f"a run-time size exceeds its bound of {hi}"))
        return hi

    def known(self, op, value, what: str):
        if isinstance(value, Sym):
            self.fail(op, f"{what} depends on a run-time value (data-dependent control flow or shapes)")
        return value

    def buf(self, op, value) -> Buf:
        if not isinstance(value, Buf):
            self.fail(op, "a buffer operand is not a buffer the schedule knows")
        return value

    # -- running regions
    def run_region(self, region, args):
        block = region.blocks[0]
        values = dict(zip(block.arguments, args))
        count = 0
        while True:
            jumped = False
            for op in block.operations:
                op = op.operation
                count += 1
                if count > _MAX_STEPS:
                    self.fail(op, "the program does not finish within the interpreter's step limit")
                name = op.name
                if name in ("util.return", "func.return"):
                    return [values[v] for v in op.operands]
                if name == "cf.br":
                    block = op.successors[0]
                    values.update(zip(block.arguments, [values[v] for v in op.operands]))
                    jumped = True
                    break
                if name == "cf.cond_br":
                    cond = values[op.operands[0]]
                    if isinstance(cond, Sym):
                        self.fail(
                            op,
                            "a branch on a value only known at run time (data-dependent control "
                            "flow: a loop or branch on tensor values), which runtimeless C does not "
                            "follow",
                        )
                    sizes = list(op.attributes["operandSegmentSizes"])
                    true_args = list(op.operands)[1 : 1 + sizes[1]]
                    false_args = list(op.operands)[1 + sizes[1] :]
                    block, args_ = (op.successors[0], true_args) if cond else (op.successors[1], false_args)
                    values.update(zip(block.arguments, [values[v] for v in args_]))
                    jumped = True
                    break
                results = self.run_op(op, [values[v] for v in op.operands])
                if len(results) != len(op.results):
                    raise AssertionError(f"{name}: {len(results)} results for {len(op.results)}")
                values.update(zip(op.results, results))
            if not jumped:
                raise AssertionError("block without terminator")

    def run_op(self, op, a):
        handler = _OPS.get(op.name)
        if handler is not None:
            return handler(self, op, a)
        if op.name.startswith(("scf.", "cf.")):
            self.fail(op, f"control flow `{op.name}` the schedule cannot follow")
        self.fail(op, f"`{op.name}` is not supported by runtimeless C")

    # -- ops that only order work or describe buffers
    @_handles(*_NO_OPS)
    def op_nothing(self, op, a):
        return []

    # -- arith and util on host scalars
    @_handles("arith.constant")
    def op_constant(self, op, a):
        text = str(op.attributes["value"])
        if text in ("true", "false"):
            return [1 if text == "true" else 0]
        try:
            return [_wrap(int(text.split(":")[0].strip()), _width(op.results[0].type))]
        except ValueError:
            return [hs.round_float(float(text.split(":")[0].strip()), op.results[0].type)]

    # Host scalars: folded when known, else a line of C (see host_scalars.py).
    @_handles(*hs.FOLD_INT)
    def op_binary(self, op, a):
        x, y = a
        if isinstance(x, Sym) or isinstance(y, Sym):
            return [self.c_binary(op, x, y)]
        try:
            return [hs.fold_int(op.name, x, y, _width(op.results[0].type))]
        except ZeroDivisionError:
            self.fail(op, "division by zero")

    @_handles(*hs.FLOAT_BINARY)
    def op_float_binary(self, op, a):
        x, y = a
        if isinstance(x, Sym) or isinstance(y, Sym):
            return [self.c_binary(op, x, y)]
        return [hs.fold_float(op.name, x, y, op.results[0].type)]

    @_handles("arith.cmpi")
    def op_cmpi(self, op, a):
        x, y = a
        predicate, bits = hs.cmpi_predicate(op.attributes["predicate"]), _width(op.operands[0].type)
        if isinstance(x, Sym) or isinstance(y, Sym):
            return [
                self.let(
                    op, "i1", hs.c_cmpi(predicate, self.c_operand(op, x, 0), self.c_operand(op, y, 1), bits), (0, 1)
                )
            ]
        return [hs.fold_cmpi(predicate, x, y, bits)]

    @_handles("arith.cmpf")
    def op_cmpf(self, op, a):
        x, y = a
        predicate = hs.cmpf_predicate(op.attributes["predicate"])
        if isinstance(x, Sym) or isinstance(y, Sym):
            return [
                self.let(
                    op,
                    "i1",
                    hs.c_cmpf(predicate, self.c_operand(op, x, 0), self.c_operand(op, y, 1), op.operands[0].type),
                    (0, 1),
                )
            ]
        return [hs.fold_cmpf(predicate, x, y)]

    @_handles("util.align")
    def op_align(self, op, a):
        x, n = a
        if isinstance(x, Sym) or isinstance(n, Sym):
            mlir_type = op.results[0].type
            return [
                self.let(
                    op,
                    str(mlir_type),
                    hs.c_align(self.c_operand(op, x, 0), self.c_operand(op, n, 1)),
                    hs.bounds_align(self.bounds(x, mlir_type), self.bounds(n, mlir_type)),
                )
            ]
        return [hs.fold_align(x, n)]

    @_handles(*hs.FLOAT_UNARY)
    def op_float_unary(self, op, a):
        x, mlir_type = a[0], op.results[0].type
        if isinstance(x, Sym):
            return [self.let(op, str(mlir_type), hs.c_float_unary(op.name, x.expr, mlir_type))]
        return [hs.fold_float_unary(op.name, x, mlir_type)]

    @_handles("arith.select")
    def op_select(self, op, a):
        cond, x, y = a
        if not isinstance(cond, Sym):
            return [x if cond else y]
        if hs.c_type(op.results[0].type) is None:
            self.fail(
                op,
                "a choice between buffers or views made on a value only known at run time "
                "(data-dependent control flow)",
            )
        return [
            self.let(
                op,
                str(op.results[0].type),
                hs.c_select(cond.expr, self.c_operand(op, x, 1), self.c_operand(op, y, 2), op.results[0].type),
                hs.bounds_select(self.bounds(x, op.results[0].type), self.bounds(y, op.results[0].type)),
            )
        ]

    @_handles(
        "arith.index_cast",
        "arith.index_castui",
        "arith.trunci",
        "arith.extui",
        "arith.extsi",
        "arith.bitcast",
        "arith.sitofp",
        "arith.uitofp",
        "arith.fptosi",
        "arith.fptoui",
        "arith.extf",
        "arith.truncf",
    )
    def op_cast(self, op, a):
        return [self.cast(op, a[0])]

    @_handles("util.null")
    def op_null(self, op, a):
        return [None]

    @_handles("util.cmp.eq")
    def op_cmp_eq(self, op, a):
        return [1 if a[0] is a[1] or a[0] == a[1] else 0]

    @_handles("util.optimization_barrier")
    def op_barrier(self, op, a):
        return list(a)

    @_handles("util.global.load")
    def op_global_load(self, op, a):
        key = _symbol_attr(op.attributes["global"])
        if key not in self.globals:
            self.fail(op, f"global @{key} is read before it is set")
        return [self.globals[key]]

    @_handles("util.global.store")
    def op_global_store(self, op, a):
        key = _symbol_attr(op.attributes["global"])
        value = a[0]
        if isinstance(value, View):
            self.fail(op, f"global @{key} keeps a tensor view across calls, which runtimeless C does not follow")
        if isinstance(value, Sym):
            self.fail(op, f"global @{key} keeps a run-time scalar across calls (state that depends on the data)")
        if not self.initializing and isinstance(value, Buf):
            self.stored[key] = value
        self.globals[key] = value
        return []

    @_handles("util.status.check_ok")
    def op_check_ok(self, op, a):
        msg = _string_attr(op, "message", "failed")
        if isinstance(a[0], Sym):
            self.steps.append(Check(f"{a[0].expr} == 0", msg))
        elif a[0]:
            self.fail(op, f"the program fails when run: {msg}")
        return []

    @_handles("util.call", "func.call")
    def op_call(self, op, a):
        callee = self.funcs.get(_symbol_attr(op.attributes["callee"]))
        if callee is None or not callee.regions or not callee.regions[0].blocks:
            self.fail(op, "a call to an external function (an import runtimeless C does not provide)")
        return self.run_region(callee.regions[0], a)

    @_handles("util.buffer.constant")
    def op_buffer_constant(self, op, a):
        data, alignment = _constant_bytes(self, op)
        self.allocs += 1
        alloc = Alloc(self.allocs, "constant", len(data), data=data, alignment=alignment)
        self.constants.append(alloc)
        return [Buf(alloc, 0, len(data))]

    @_handles("util.buffer.size")
    def op_buffer_size(self, op, a):
        return [self.buf(op, a[0]).length]

    # -- device discovery: one local device that takes static libraries
    @_handles("hal.devices.count")
    def op_devices_count(self, op, a):
        return [1]

    @_handles("hal.devices.get")
    def op_devices_get(self, op, a):
        return [Token("device")]

    @_handles("hal.device.query")
    def op_device_query(self, op, a):
        category, key = str(op.attributes["category"]).strip('"'), str(op.attributes["key"]).strip('"')
        if category == "hal.device.id" and key in ("local*", "local"):
            return [1, 1]
        if category == "hal.executable.format" and key == "static":
            return [1, 1]
        self.fail(op, f"the program queries the device for {category}::{key}, which runtimeless C cannot answer")

    @_handles("hal.device.allocator")
    def op_allocator(self, op, a):
        return [Token("allocator")]

    @_handles("hal.fence.create", "hal.fence.join")
    def op_fence(self, op, a):
        return [Token("fence")]

    @_handles("hal.fence.await")
    def op_fence_await(self, op, a):
        return [0]

    @_handles("hal.memory_type", "hal.buffer_usage", "hal.element_type", "hal.encoding_type")
    def op_enum(self, op, a):
        return [Token(op.name)]

    @_handles("hal.executable.create")
    def op_executable_create(self, op, a):
        return [Executable(_symbol_path(op.attributes["executable_target"])[0])]

    @_handles("hal.executable.lookup.function")
    def op_lookup_function(self, op, a):
        return [tuple(_symbol_path(op.attributes["entry_point"]))]

    # -- buffers
    @_handles("hal.allocator.import")
    def op_allocator_import(self, op, a):
        # (allocator, affinity, type, usage, source, offset, length)
        src = self.buf(op, a[4])
        return [1, Buf(src.alloc, src.offset + a[5], a[6])]

    @_handles("hal.device.queue.alloca")
    def op_queue_alloca(self, op, a):
        alloc = self.new_alloc(op, a[7])
        return [Buf(alloc, 0, alloc.size)]

    @_handles("hal.allocator.allocate")
    def op_allocate(self, op, a):
        alloc = self.new_alloc(op, a[-1])
        return [Buf(alloc, 0, alloc.size)]

    @_handles("hal.ex.file.from_memory")
    def op_file_from_memory(self, op, a):
        # (device, affinity, buffer, offset, length, flags): a file over host bytes
        b = self.buf(op, a[2])
        return [Buf(b.alloc, b.offset + self.known(op, a[3], "a file offset"), self.known(op, a[4], "a file length"))]

    @_handles("hal.buffer.subspan")
    def op_subspan(self, op, a):
        b = self.buf(op, a[0])
        offset, length = self.known(op, a[1], "a subspan"), self.known(op, a[2], "a subspan")
        return [Buf(b.alloc, b.offset + offset, length)]

    @_handles("hal.buffer.length")
    def op_buffer_length(self, op, a):
        b = self.buf(op, a[0])
        whole = b.offset == 0 and b.length == b.alloc.size
        return [b.alloc.run_size if whole and b.alloc.run_size is not None else b.length]

    @_handles("hal.buffer_view.buffer")
    def op_view_buffer(self, op, a):
        if not isinstance(a[0], View):
            self.fail(op, "a buffer view the schedule does not know")
        return [a[0].buf]

    @_handles("hal.buffer_view.create")
    def op_view_create(self, op, a):
        # (buffer, offset, length, element_type, encoding_type, shape...)
        b = self.buf(op, a[0])
        shape = tuple(self.known(op, d, "a result shape (dynamic result shapes are not supported)") for d in a[5:])
        return [View(Buf(b.alloc, b.offset + a[1], a[2]), shape)]

    @_handles("hal.buffer_view.dim")
    def op_view_dim(self, op, a):
        return [a[0].shape[int(str(op.attributes["index"]).split(":")[0])]]

    @_handles("hal.buffer_view.rank")
    def op_view_rank(self, op, a):
        return [len(a[0].shape)]

    @_handles("hal.buffer.load")
    def op_buffer_load(self, op, a):
        # (buffer, offset): a scalar the host reads once the work before it is done
        b = self.buf(op, a[0])
        mlir_type = str(op.results[0].type)
        c_type, size = hs.c_type(mlir_type), hs.byte_size(mlir_type)
        if c_type is None or not size:
            self.fail(op, f"the program reads a {mlir_type} from device data, which runtimeless C does not read")
        offset = self.known(op, a[1], "the offset of a read of device data")
        if offset < 0 or offset + size > b.length:
            self.fail(op, f"a read of {size} bytes at {offset} from a buffer of {b.length}")
        name = self.new_scalar_name()
        self.steps.append(Load(Buf(b.alloc, b.offset + offset, size), name, c_type))
        return [Sym(f"({name} & 1u)" if mlir_type == "i1" else name, mlir_type, hs.type_bounds(mlir_type))]

    @_handles("cf.assert")
    def op_assert(self, op, a):
        message = _string_attr(op, "msg", "assertion failed")
        if isinstance(a[0], Sym):
            self.steps.append(Check(a[0].expr, message))
        elif not a[0]:
            self.fail(op, f"the program always fails: {message}")
        return []

    # -- work: command buffers and queue operations
    @_handles("hal.command_buffer.create")
    def op_command_buffer(self, op, a):
        return [CommandBuffer()]

    @_handles("hal.command_buffer.dispatch")
    def op_dispatch(self, op, a):
        return self.dispatch(op, a)

    @_handles("hal.command_buffer.fill_buffer")
    def op_fill_buffer(self, op, a):
        # (cmd, target, offset, length, pattern)
        t = self.buf(op, a[1])
        target = Buf(t.alloc, t.offset + self.known(op, a[2], "a fill"), self.known(op, a[3], "a fill"))
        a[0].steps.append(self.fill(op, target, a[4], _width(op.operands[4].type) // 8))
        return []

    @_handles("hal.command_buffer.copy_buffer")
    def op_copy_buffer(self, op, a):
        # (cmd, source, source_offset, target, target_offset, length)
        a[0].steps.append(self.copy(op, a[1], a[2], a[3], a[4], a[5]))
        return []

    @_handles("hal.device.queue.execute")
    def op_queue_execute(self, op, a):
        # (device, affinity, wait, signal, command_buffer)
        self.record(op, a[4].steps)
        return []

    @_handles("hal.device.queue.copy", "hal.device.queue.read")
    def op_queue_copy(self, op, a):
        # (device, affinity, wait, signal, source, source_offset, target, target_offset, length)
        self.record(op, [self.copy(op, a[4], a[5], a[6], a[7], a[8])])
        return []

    @_handles("hal.device.queue.fill")
    def op_queue_fill(self, op, a):
        # (device, affinity, wait, signal, target, offset, length, pattern)
        t = self.buf(op, a[4])
        self.record(op, [self.fill(op, Buf(t.alloc, t.offset + a[5], a[6]), a[7], _width(op.operands[7].type) // 8)])
        return []

    def fill(self, op, target: Buf, pattern, pattern_size: int) -> Fill:
        # A run-time pattern (a pad value read from an input) is fine.
        if pattern_size not in (1, 2, 4) or target.length % pattern_size:
            self.fail(op, f"a fill of {target.length} bytes with a {pattern_size}-byte pattern")
        return Fill(target, pattern, pattern_size)

    def copy(self, op, src, src_offset, dst, dst_offset, length):
        s, t = self.buf(op, src), self.buf(op, dst)
        length = self.known(op, length, "a copy length")
        src_offset = self.known(op, src_offset, "a copy offset")
        dst_offset = self.known(op, dst_offset, "a copy offset")
        return Copy(Buf(s.alloc, s.offset + src_offset, length), Buf(t.alloc, t.offset + dst_offset, length))

    def dispatch(self, op, a):
        sizes = list(op.attributes["operandSegmentSizes"])
        groups, pos = [], 0
        for n in sizes:
            groups.append(a[pos : pos + n])
            pos += n
        cmd, executable, function, wx, wy, wz, constants, buffers, offsets, lengths = groups
        if not isinstance(executable[0], Executable) or not isinstance(function[0], tuple):
            self.fail(op, "a dispatch of an executable the schedule does not know")
        export = function[0][-1]
        workgroups = tuple(w[0] for w in (wx, wy, wz))  # run-time counts are fine
        bindings, run_lengths = [], []
        for b, off, length in zip(buffers, offsets, lengths):
            b = self.buf(op, b)
            offset = self.known(op, off, "a binding offset")
            bound = self.upper_bound(op, length, "a binding length") if isinstance(length, Sym) else length
            if offset + bound > b.length:
                self.fail(op, f"a binding of up to {bound} bytes at {offset} in a buffer of {b.length}")
            bindings.append(Buf(b.alloc, b.offset + offset, bound))
            run_lengths.append(length)
        consts = [
            v
            if isinstance(v, Sym)
            else _wrap(v, 32)
            if isinstance(v, int)
            else self.fail(op, "a dispatch constant that is not an i32")
            for v in constants
        ]
        if executable[0].symbol not in self.executables:
            self.executables.append(executable[0].symbol)
        cmd[0].steps.append(
            Dispatch(
                executable[0].symbol,
                export,
                workgroups,
                consts,
                bindings,
                run_lengths if any(isinstance(n, Sym) for n in run_lengths) else None,
            )
        )
        return []

    def record(self, op, steps):
        for step in steps:
            for b in _written(step):
                if b.alloc.kind in ("constant", "input"):
                    self.fail(op, f"the program writes into a {b.alloc.kind} buffer")
                if b.alloc.kind == "state" and not self.initializing and not self.is_state_slot(b.alloc):
                    self.fail(
                        op,
                        "a call writes into a buffer the initializers made that is not a "
                        "mutable global's (shared read-only data)",
                    )
        self.steps.extend(steps)

    def is_state_slot(self, alloc) -> bool:
        return alloc.id in self.slots

    # -- host scalars only known at run time
    def let(self, op, mlir_type: str, expr: str, bounds=hs.UNKNOWN) -> Sym:
        """A new local of the call, `expr`, computed where the program computes
        it; `bounds` are what the interpreter knows of its value."""
        c_type = hs.c_type(mlir_type)
        if c_type is None:
            self.fail(op, f"a run-time host value of type {mlir_type}, which runtimeless C does not compute")
        name = self.new_scalar_name()
        self.steps.append(Let(name, c_type, expr))
        return Sym(name, mlir_type, bounds)

    def new_scalar_name(self) -> str:
        """The C local of the next run-time scalar: scalar1, scalar2, ... per function."""
        self.scalars += 1
        return f"scalar{self.scalars}"

    def c_operand(self, op, x, index: int):
        """Operand `index` of `op` for host_scalars: a run-time value's C
        expression, or the known value itself (written as a literal)."""
        if isinstance(x, Sym):
            return x.expr
        if isinstance(x, float) and not math.isfinite(x):
            self.fail(op, "a non-finite host constant next to a run-time value")
        if not isinstance(x, (int, float)) or hs.c_type(op.operands[index].type) is None:
            self.fail(op, "an operand that is not a host scalar")
        return x

    def c_binary(self, op, x, y) -> Sym:
        mlir_type = str(op.results[0].type)
        bits = _width(mlir_type)
        bounds = (
            hs.bounds_binary(op.name, self.bounds(x, mlir_type), self.bounds(y, mlir_type), bits)
            if bits
            else hs.UNKNOWN
        )
        return self.let(
            op, mlir_type, hs.c_binary(op.name, self.c_operand(op, x, 0), self.c_operand(op, y, 1), mlir_type), bounds
        )

    def bounds(self, x, mlir_type):
        """What the interpreter knows of an integer: its signed (lo, hi)."""
        if isinstance(x, Sym):
            return x.bounds
        return hs.known_bounds(x, mlir_type) if isinstance(x, int) and _width(mlir_type) else hs.UNKNOWN

    def cast(self, op, x):
        source, result = op.operands[0].type, op.results[0].type
        if isinstance(x, Sym):
            expr = hs.c_cast(op.name, x.expr, source, result)
            if expr is None:
                self.fail(op, f"`{op.name}` from {source} to {result} on a run-time value")
            return self.let(op, str(result), expr, hs.bounds_cast(op.name, x.bounds, source, result))
        try:
            return hs.fold_cast(op.name, x, source, result)
        except ValueError as e:
            self.fail(op, str(e))


def _written(step) -> list:
    if isinstance(step, (Fill, Copy)):
        return [step.target]
    return []


def _string_attr(op, key: str, default: str) -> str:
    """A string attribute's text as the model wrote it (not MLIR's escaped
    form); text.py escapes it where it enters C."""
    if key not in op.attributes:
        return default
    attr = op.attributes[key]
    value = getattr(attr, "value", None)
    return value if isinstance(value, str) else str(attr).strip('"')


def _op_text(op) -> str:
    text = op.get_asm(large_elements_limit=4).strip().splitlines()[0]
    return text if len(text) <= 160 else text[:157] + "..."


# Symbols as the model wrote them, not as MLIR prints them: `@"say \22hi\22"`
# is the function `say "hi"`, and a quoted name may hold `::`.
def _symbol_name(op) -> str:
    return _symbol_attr(op.attributes["sym_name"])


def _symbol_attr(attr) -> str:
    value = getattr(attr, "value", None)
    if isinstance(value, str):
        return value
    if isinstance(value, list) and len(value) == 1:
        return value[0]
    return str(attr).lstrip("@").strip('"')


def _symbol_path(attr) -> list:
    value = getattr(attr, "value", None)
    if isinstance(value, list):
        return list(value)
    if isinstance(value, str):
        return [value]
    return [part.lstrip("@").strip('"') for part in str(attr).split("::")]


_SPLIT_TOKENS = re.compile(r'"[^"]*"|[<\[({]|[>\])}]|,')


def _split_top_level(text: str) -> list:
    """Splits `a, b<c, d>, "e,f"` at the commas outside brackets and quotes.
    A quoted string (megabytes of hex weights) is skipped in one regex step."""
    parts, depth, start = [], 0, 0
    for m in _SPLIT_TOKENS.finditer(text):
        ch = m.group()
        if ch in "<[({":
            depth += 1
        elif ch in ">])}":
            depth -= 1
        elif ch == "," and depth == 0:
            parts.append(text[start : m.start()])
            start = m.end()
    parts.append(text[start:])
    return [p.strip() for p in parts if p.strip()]


def _constant_bytes(interp: _Interpreter, op):
    """The bytes of a util.buffer.constant: a dense attribute or a
    #util.composite of them."""
    from iree.compiler import ir

    attrs = op.attributes
    alignment = int(str(attrs["alignment"]).split(":")[0]) if "alignment" in attrs else 64
    text = str(attrs["value"])
    if text.startswith("#util.composite<"):
        inner = text[len("#util.composite<") : -1]
        total_text, items_text = inner.split(",", 1)
        total = int(total_text.strip().split("x")[0])
        items = _split_top_level(items_text.strip()[1:-1])
    else:
        total, items = None, [text]
    chunks = []
    for item in items:
        if not item.startswith("dense<"):
            interp.fail(op, f"a constant stored as `{item[:40]}` (external or resource data is not supported)")
        bf16 = _bf16_constant(item)
        if bf16 is not None:
            chunks.append(bf16)
            continue
        array = np.array(ir.DenseElementsAttr(ir.Attribute.parse(item, op.context)))
        if array.dtype == object:
            interp.fail(op, f"a constant of element type the bindings cannot read ({item.rsplit(':', 1)[-1].strip()})")
        chunks.append(array.astype(np.uint8) if array.dtype == np.bool_ else array)
    data = b"".join(c.tobytes() for c in chunks)
    if total is not None and len(data) != total:
        interp.fail(op, f"a constant of {len(data)} bytes where {total} were declared")
    return data, alignment


_BF16_DENSE = re.compile(r"dense<(.*)>\s*:\s*(?:tensor|vector)<((?:\d+x)*)bf16>", re.S)
_BF16_TOKEN = re.compile(r"0x[0-9A-Fa-f]+|[-+]?(?:inf|nan|\d+(?:\.\d*)?(?:[eE][-+]?\d+)?)")


def _bf16_constant(item: str):
    """The elements of a dense bf16 attribute (which the Python bindings
    cannot read) as uint16 bits: from MLIR's hex blob, or from its elements,
    printed as floats or, where a float would not round-trip, as bits."""
    m = _BF16_DENSE.fullmatch(item.strip())
    if m is None:
        return None
    body, dims = m.group(1).strip(), m.group(2)
    count = int(np.prod([int(d) for d in dims.split("x") if d])) if dims else 1
    if body.startswith('"0x'):
        bits = np.frombuffer(bytes.fromhex(body.strip('"')[2:]), dtype="<u2")
    else:
        values = []
        for token in _BF16_TOKEN.findall(body):
            if token.lower().startswith("0x"):
                values.append(int(token, 16))
            else:
                f32 = int(np.array(float(token), np.float32).view(np.uint32))
                values.append((f32 + 0x7FFF + ((f32 >> 16) & 1)) >> 16 if token.lower() != "nan" else 0x7FC0)
        bits = np.array(values, dtype=np.uint16)
    if bits.size == 1 and count != 1:
        bits = np.full(count, bits[0], dtype=np.uint16)
    return bits if bits.size == count else None


_MAX_STATE_VERSIONS = 8


def _mutable_globals(module) -> set:
    out = set()
    for op in module.body.operations:
        op = op.operation
        if op.name == "util.global" and "is_mutable" in op.attributes:
            out.add(_symbol_name(op))
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


_SCALAR_NAME = re.compile(r"\bscalar\d+\b")


def _without_unused_scalars(steps: list, results: list) -> list:
    """`steps` without the run-time scalars (Load, Let) that nothing reads:
    C's -Wunused-variable would reject them."""

    def names_in(x) -> set:
        if isinstance(x, Sym):
            return set(_SCALAR_NAME.findall(x.expr))
        if isinstance(x, Let):
            return set(_SCALAR_NAME.findall(x.expr))
        if isinstance(x, Check):
            return set(_SCALAR_NAME.findall(x.condition))
        if isinstance(x, Dispatch):
            return set().union(*(names_in(c) for c in list(x.constants) + list(x.workgroups) + list(x.lengths or [])))
        if isinstance(x, Fill):
            return names_in(x.pattern)
        return set()

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
    interp = _Interpreter(hal_module, where)
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


def _run_function(interp: _Interpreter, op, fn, slot_of: dict) -> FunctionSchedule:
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
