"""hal: the device (one local device that takes static libraries), its
buffers and views, and the work asked of it (dispatches, fills, copies),
recorded into the schedule in program order."""

from __future__ import annotations

from ... import host_scalars as hs
from ...schedule import Buf, Copy, Dispatch, Fill, Load, Sym
from ..attrs import symbol_path
from ..values import CommandBuffer, Executable, Token, View

# Ops that only order work or describe buffers; the serial schedule needs none.
ORDERING_ONLY = (
    "hal.command_buffer.execution_barrier",
    "hal.command_buffer.finalize",
    "hal.buffer.assert",
    "hal.buffer_view.assert",
    "hal.device.queue.flush",
    "hal.device.queue.barrier",
    "hal.device.queue.dealloca",
)


def nothing(interp, op, a):
    return []


# -- device discovery


def devices_count(interp, op, a):
    return [1]


def devices_get(interp, op, a):
    return [Token("device")]


def device_query(interp, op, a):
    category, key = str(op.attributes["category"]).strip('"'), str(op.attributes["key"]).strip('"')
    if category == "hal.device.id" and key in ("local*", "local"):
        return [1, 1]
    if category == "hal.executable.format" and key == "static":
        return [1, 1]
    interp.fail(op, f"the program queries the device for {category}::{key}, which runtimeless C cannot answer")


def allocator(interp, op, a):
    return [Token("allocator")]


def fence(interp, op, a):
    return [Token("fence")]


def fence_await(interp, op, a):
    return [0]


def enum(interp, op, a):
    return [Token(op.name)]


def executable_create(interp, op, a):
    return [Executable(symbol_path(op.attributes["executable_target"])[0])]


def lookup_function(interp, op, a):
    return [tuple(symbol_path(op.attributes["entry_point"]))]


# -- buffers and views


def allocator_import(interp, op, a):
    # (allocator, affinity, type, usage, source, offset, length)
    src = interp.buf(op, a[4])
    return [1, Buf(src.alloc, src.offset + a[5], a[6])]


def queue_alloca(interp, op, a):
    alloc = interp.new_alloc(op, a[7])
    return [Buf(alloc, 0, alloc.size)]


def allocate(interp, op, a):
    alloc = interp.new_alloc(op, a[-1])
    return [Buf(alloc, 0, alloc.size)]


def file_from_memory(interp, op, a):
    # (device, affinity, buffer, offset, length, flags): a file over host bytes
    b = interp.buf(op, a[2])
    return [Buf(b.alloc, b.offset + interp.known(op, a[3], "a file offset"), interp.known(op, a[4], "a file length"))]


def subspan(interp, op, a):
    b = interp.buf(op, a[0])
    offset, length = interp.known(op, a[1], "a subspan"), interp.known(op, a[2], "a subspan")
    return [Buf(b.alloc, b.offset + offset, length)]


def buffer_length(interp, op, a):
    b = interp.buf(op, a[0])
    whole = b.offset == 0 and b.length == b.alloc.size
    return [b.alloc.run_size if whole and b.alloc.run_size is not None else b.length]


def view_buffer(interp, op, a):
    if not isinstance(a[0], View):
        interp.fail(op, "a buffer view the schedule does not know")
    return [a[0].buf]


def view_create(interp, op, a):
    # (buffer, offset, length, element_type, encoding_type, shape...)
    b = interp.buf(op, a[0])
    shape = tuple(interp.known(op, d, "a result shape (dynamic result shapes are not supported)") for d in a[5:])
    return [View(Buf(b.alloc, b.offset + a[1], a[2]), shape)]


def view_dim(interp, op, a):
    return [a[0].shape[int(str(op.attributes["index"]).split(":")[0])]]


def view_rank(interp, op, a):
    return [len(a[0].shape)]


def buffer_load(interp, op, a):
    # (buffer, offset): a scalar the host reads once the work before it is done
    b = interp.buf(op, a[0])
    mlir_type = str(op.results[0].type)
    c_type, size = hs.c_type(mlir_type), hs.byte_size(mlir_type)
    if c_type is None or not size:
        interp.fail(op, f"the program reads a {mlir_type} from device data, which runtimeless C does not read")
    offset = interp.known(op, a[1], "the offset of a read of device data")
    if offset < 0 or offset + size > b.length:
        interp.fail(op, f"a read of {size} bytes at {offset} from a buffer of {b.length}")
    name = interp.new_scalar_name()
    interp.steps.append(Load(Buf(b.alloc, b.offset + offset, size), name, c_type))
    expr = f"({name} & 1u)" if mlir_type == "i1" else name
    return [Sym(expr, mlir_type, hs.type_bounds(mlir_type), frozenset({name}))]


# -- work: command buffers and queue operations


def command_buffer_create(interp, op, a):
    return [CommandBuffer()]


def command_buffer_dispatch(interp, op, a):
    sizes = list(op.attributes["operandSegmentSizes"])
    groups, pos = [], 0
    for n in sizes:
        groups.append(a[pos : pos + n])
        pos += n
    cmd, executable, function, wx, wy, wz, constants, buffers, offsets, lengths = groups
    if not isinstance(executable[0], Executable) or not isinstance(function[0], tuple):
        interp.fail(op, "a dispatch of an executable the schedule does not know")
    export = function[0][-1]
    workgroups = tuple(w[0] for w in (wx, wy, wz))  # run-time counts are fine
    bindings, run_lengths = [], []
    for b, off, length in zip(buffers, offsets, lengths):
        b = interp.buf(op, b)
        offset = interp.known(op, off, "a binding offset")
        bound = interp.upper_bound(op, length, "a binding length") if isinstance(length, Sym) else length
        if offset + bound > b.length:
            interp.fail(op, f"a binding of up to {bound} bytes at {offset} in a buffer of {b.length}")
        bindings.append(Buf(b.alloc, b.offset + offset, bound))
        run_lengths.append(length)
    consts = [
        v
        if isinstance(v, Sym)
        else hs.wrap(v, 32)
        if isinstance(v, int)
        else interp.fail(op, "a dispatch constant that is not an i32")
        for v in constants
    ]
    if executable[0].symbol not in interp.executables:
        interp.executables.append(executable[0].symbol)
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


def command_buffer_fill(interp, op, a):
    # (cmd, target, offset, length, pattern)
    t = interp.buf(op, a[1])
    target = Buf(t.alloc, t.offset + interp.known(op, a[2], "a fill"), interp.known(op, a[3], "a fill"))
    a[0].steps.append(_fill(interp, op, target, a[4], hs.width(op.operands[4].type) // 8))
    return []


def command_buffer_copy(interp, op, a):
    # (cmd, source, source_offset, target, target_offset, length)
    a[0].steps.append(_copy(interp, op, a[1], a[2], a[3], a[4], a[5]))
    return []


def queue_execute(interp, op, a):
    # (device, affinity, wait, signal, command_buffer)
    interp.record(op, a[4].steps)
    return []


def queue_copy(interp, op, a):
    # (device, affinity, wait, signal, source, source_offset, target, target_offset, length)
    interp.record(op, [_copy(interp, op, a[4], a[5], a[6], a[7], a[8])])
    return []


def queue_fill(interp, op, a):
    # (device, affinity, wait, signal, target, offset, length, pattern)
    t = interp.buf(op, a[4])
    fill = _fill(interp, op, Buf(t.alloc, t.offset + a[5], a[6]), a[7], hs.width(op.operands[7].type) // 8)
    interp.record(op, [fill])
    return []


def _fill(interp, op, target: Buf, pattern, pattern_size: int) -> Fill:
    # A run-time pattern (a pad value read from an input) is fine.
    if pattern_size not in (1, 2, 4) or target.length % pattern_size:
        interp.fail(op, f"a fill of {target.length} bytes with a {pattern_size}-byte pattern")
    return Fill(target, pattern, pattern_size)


def _copy(interp, op, src, src_offset, dst, dst_offset, length) -> Copy:
    s, t = interp.buf(op, src), interp.buf(op, dst)
    length = interp.known(op, length, "a copy length")
    src_offset = interp.known(op, src_offset, "a copy offset")
    dst_offset = interp.known(op, dst_offset, "a copy offset")
    return Copy(Buf(s.alloc, s.offset + src_offset, length), Buf(t.alloc, t.offset + dst_offset, length))


OPS = {
    **dict.fromkeys(ORDERING_ONLY, nothing),
    # device discovery
    "hal.devices.count": devices_count,
    "hal.devices.get": devices_get,
    "hal.device.query": device_query,
    "hal.device.allocator": allocator,
    "hal.fence.create": fence,
    "hal.fence.join": fence,
    "hal.fence.await": fence_await,
    "hal.memory_type": enum,
    "hal.buffer_usage": enum,
    "hal.element_type": enum,
    "hal.encoding_type": enum,
    "hal.executable.create": executable_create,
    "hal.executable.lookup.function": lookup_function,
    # buffers and views
    "hal.allocator.import": allocator_import,
    "hal.device.queue.alloca": queue_alloca,
    "hal.allocator.allocate": allocate,
    "hal.ex.file.from_memory": file_from_memory,
    "hal.buffer.subspan": subspan,
    "hal.buffer.length": buffer_length,
    "hal.buffer_view.buffer": view_buffer,
    "hal.buffer_view.create": view_create,
    "hal.buffer_view.dim": view_dim,
    "hal.buffer_view.rank": view_rank,
    "hal.buffer.load": buffer_load,
    # work
    "hal.command_buffer.create": command_buffer_create,
    "hal.command_buffer.dispatch": command_buffer_dispatch,
    "hal.command_buffer.fill_buffer": command_buffer_fill,
    "hal.command_buffer.copy_buffer": command_buffer_copy,
    "hal.device.queue.execute": queue_execute,
    "hal.device.queue.copy": queue_copy,
    "hal.device.queue.read": queue_copy,
    "hal.device.queue.fill": queue_fill,
}
