"""Workarounds for IREE compiler bugs that ireegen meets, each with the
execution models and compiler versions it applies to (the WORKAROUNDS
table).  See docs/known-iree-issues.md, which has a section per entry.

The compile they need: compile to `stream`, rewrite the IR with the
iree.compiler MLIR bindings, continue to `hal`, rewrite and check again,
finish the compile.  The intermediate files are MLIR text: a bytecode round
trip through the Python bindings drops `dense_resource` blobs.

inline-constants (IREE 3.11 and later, inline-static and inline-dynamic):
`util.buffer.constant` became ConstantLike (iree-org/iree#23425), so after
`iree-hal-inline-conversion` the initializer's `util.global.store` of a
packed constant is folded by `iree-util-fold-globals` into an initial value
that is then dropped (a `#util.composite` is not a TypedAttr).  The global is
never set and every dispatch that reads the weights sees a null buffer.
Fix, at `stream`: hide each host-side `util.buffer.constant` behind a
`util.optimization_barrier` (not ConstantLike, so the fold keeps the store).
Check, at `hal`: no buffer global is read without ever being set.

inline-allocations (every release measured, 3.10 to 3.13; inline-static and
inline-dynamic): the VM import `hal_inline.buffer.allocate` is declared
`nosideeffects`, so the `cse` pass of the VM pipeline merges two
allocations of the same size and alignment in one block into one buffer.
A dispatch's operand and its result (a square layer after another layer), two
results of a reduction, or the loop-carried 0-d tensors of a loop then share
memory and the module computes wrong numbers.  Fix, at `hal`: give every
allocation its own size value through a `util.optimization_barrier`, which
CSE never merges.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from ireegen.common.errors import UsageError
from ireegen.common.resources import doc

from .compiler import Compiler

_DEVICE_CODE = ("stream.executable", "hal.executable", "flow.executable")
_INLINE = ("inline-static", "inline-dynamic")


def _version(compiler_version: str):
    m = re.match(r"(\d+)\.(\d+)", compiler_version)
    return (int(m.group(1)), int(m.group(2))) if m else None


def _host_ops(module):
    """Every op of the module outside device code, depth first."""

    def walk(op):
        for region in op.regions:
            for block in region.blocks:
                for child in block.operations:
                    c = child.operation
                    if c.name in _DEVICE_CODE:
                        continue
                    yield c
                    yield from walk(c)

    return walk(module.operation)


def _behind_barrier(op, operand_index: int) -> None:
    """Makes `op` read its operand through a util.optimization_barrier of its own."""
    from iree.compiler import ir

    value = op.operands[operand_index]
    with ir.InsertionPoint(op), op.location:
        barrier = ir.Operation.create("util.optimization_barrier", results=[value.type], operands=[value])
    op.operands[operand_index] = barrier.results[0]


def hide_buffer_constants(module) -> int:
    """Routes every use of a host-side util.buffer.constant through a
    util.optimization_barrier; returns how many constants it wrapped."""
    from iree.compiler import ir

    count = 0
    for op in [c for c in _host_ops(module) if c.name == "util.buffer.constant"]:
        result = op.results[0]
        uses = [(u.owner, u.operand_number) for u in result.uses]
        if not uses:
            continue
        with ir.InsertionPoint(op), op.location:
            barrier = ir.Operation.create("util.optimization_barrier", results=[result.type], operands=[result])
        barrier.move_after(op)
        for owner, index in uses:
            owner.operands[index] = barrier.results[0]
        count += 1
    return count


def lost_buffer_globals(module) -> list:
    """!util.buffer globals that are loaded but never initialized or stored:
    each is a null buffer at run time."""
    from iree.compiler import ir

    globals_, stored, loaded = {}, set(), set()
    for c in _host_ops(module):
        if c.name == "util.global":
            name = ir.StringAttr(c.attributes["sym_name"]).value
            globals_[name] = (str(ir.TypeAttr(c.attributes["type"]).value), "initial_value" in c.attributes)
        elif c.name == "util.global.store":
            stored.add(ir.FlatSymbolRefAttr(c.attributes["global"]).value)
        elif c.name == "util.global.load":
            loaded.add(ir.FlatSymbolRefAttr(c.attributes["global"]).value)
    return sorted(
        n
        for n, (ty, has_init) in globals_.items()
        if ty == "!util.buffer" and n in loaded and n not in stored and not has_init
    )


def _lost_constants_message(module) -> str | None:
    lost = lost_buffer_globals(module)
    if not lost:
        return None
    return f"the constants {', '.join(lost)} would be null at run time (IREE's inline constant bug)"


# The host-side allocations of the inline HAL -> the index of their size
# operand (allocate: alignment, size; allocate.initialized: alignment,
# source, offset, length).
_INLINE_ALLOCATIONS = {"hal_inline.buffer.allocate": 1, "hal_inline.buffer.allocate.initialized": 3}


def separate_inline_allocations(module) -> int:
    """Gives every hal_inline.buffer.allocate its own size value, so that the
    VM pipeline's CSE cannot merge two allocations of equal size into one
    buffer; returns how many allocations it separated."""
    allocations = [c for c in _host_ops(module) if c.name in _INLINE_ALLOCATIONS]
    for op in allocations:
        _behind_barrier(op, _INLINE_ALLOCATIONS[op.name])
    return len(allocations)


@dataclass(frozen=True)
class Workaround:
    name: str  # as recorded in the manifest's iree_workarounds
    execution_models: tuple
    first_version: tuple  # (major, minor) of the first affected release
    phase: str  # the compile phase whose output it rewrites: "stream" or "hal"
    rewrite: Callable  # (module) -> int, how many places it changed
    check: Callable | None = None  # (hal module) -> reason it still fails, or None

    def applies(self, execution_model: str, compiler_version: str) -> bool:
        version = _version(compiler_version)
        # An unparsable version (a source build) gets every workaround.
        return execution_model in self.execution_models and (version is None or version >= self.first_version)


WORKAROUNDS = (
    Workaround("inline-constants", _INLINE, (3, 11), "stream", hide_buffer_constants, _lost_constants_message),
    Workaround("inline-allocations", _INLINE, (3, 0), "hal", separate_inline_allocations),
)


def applicable_workarounds(execution_model: str, compiler_version: str) -> list:
    return [w for w in WORKAROUNDS if w.applies(execution_model, compiler_version)]


@dataclass(frozen=True)
class FlagWorkaround:
    """A bug avoided by compiler flags alone, for some execution models and
    target architectures (docs/known-iree-issues.md has a section each)."""

    name: str
    execution_models: tuple
    architectures: tuple  # the triples' architectures
    flags: tuple

    def applies(self, config) -> bool:
        return (
            config.execution_model.name in self.execution_models
            and config.target is not None
            and config.target.triple.split("-", 1)[0] in self.architectures
            and config.optimize_for == "speed"  # "size" has narrower vectors already
        )


# inline-dynamic-vector-width (3.13, x86_64): an inline-dynamic module whose
# executables use 32-byte (AVX) vectors crashes iree-run-module (SIGSEGV)
# with the default x86-64-v3 CPU; at 16-byte vectors it runs and agrees.
# m55-low-overhead-loops (3.13, Armv8.1-M: the Cortex-M55): LLVM's ARM Low
# Overhead Loops pass crashes iree-compile (SIGSEGV) on IREE's own int8
# convolutions (ResNet-8's, docs/repro/m55_low_overhead_loops.mlir); the
# LLVM option --disable-arm-loloops keeps counted loops as compare and branch.
FLAG_WORKAROUNDS = (
    FlagWorkaround(
        "inline-dynamic-vector-width",
        ("inline-dynamic",),
        ("x86_64",),
        ("--iree-llvmcpu-target-vector-width-in-bytes=16",),
    ),
    FlagWorkaround(
        "m55-low-overhead-loops",
        ("async", "inline-static", "inline-dynamic", "runtimeless"),
        ("thumbv8.1m.main",),
        ("--disable-arm-loloops",),
    ),
)


def applicable_flag_workarounds(config) -> list:
    return [w for w in FLAG_WORKAROUNDS if w.applies(config)]


def _parse_intermediate(path: Path, compiler: Compiler):
    """Parses the compiler's intermediate IR with the installed bindings; a
    compiler of another release may print IR they cannot read."""
    from iree.compiler import ir

    try:
        return ir.Module.parseFile(str(path))
    except ir.MLIRError as e:
        raise UsageError(
            f"cannot apply ireegen's IREE workarounds with iree-compile {compiler.version}: "
            f"its {path.stem} IR does not parse with the installed iree-base-compiler bindings "
            f"({str(e).splitlines()[-1].strip()[:200]})"
        ) from None


def _rewrite_text(path: Path, rewrites, checks, compiler: Compiler) -> list:
    """Applies `rewrites` to the IR in `path` (rewriting the file only if one
    changed something) and returns the reasons `checks` give."""
    from iree.compiler import ir

    with ir.Context():
        module = _parse_intermediate(path, compiler)
        changed = sum(rewrite(module) for rewrite in rewrites)
        if changed:
            path.write_text(module.operation.get_asm(enable_debug_info=True, large_elements_limit=None))
        return [reason for reason in (check(module) for check in checks) if reason]


def compile_with_workarounds(
    compiler: Compiler,
    source: Path,
    output: Path,
    flags: list,
    workdir: Path,
    model_name: str,
    execution_model: str,
    workarounds: list,
    stream_rewrites=(),
    stream_compile=None,
) -> None:
    """The staged compile described above.  Refuses the mode (UsageError) if
    a check finds that the module would still compute wrong numbers.
    `stream_rewrites` ((module) -> int) run at `stream` besides the
    workarounds' (executable_names.py's renaming); without a `hal` rewrite
    or check the compile goes from `stream` straight to the end.
    `stream_compile(source, stream, flags)`, when given, does the compile
    that stops at `stream` (partitioning.py's)."""
    # Relative names, compiled inside workdir: the module records where the
    # hal.mlir it was finished from lives (as its location).
    stream, hal = "stream.mlir", "hal.mlir"
    # Intermediate files keep the model's locations, so that diagnostics and
    # debug info name the model, not this run's temporary files.  The stages
    # before the last stop where they say, not where the flags' own
    # --compile-to (runtimeless: hal) would.
    keep_locations = ["--mlir-print-debuginfo"]
    staged = [f for f in flags if not f.startswith("--compile-to=")] + keep_locations
    if stream_compile is None:
        compiler.compile(source, stream, staged + ["--compile-to=stream"], model_name, cwd=workdir)
    else:
        stream_compile(source, stream, staged)
    _rewrite_text(
        workdir / stream,
        [w.rewrite for w in workarounds if w.phase == "stream"] + list(stream_rewrites),
        [],
        compiler,
    )
    hal_rewrites = [w.rewrite for w in workarounds if w.phase == "hal"]
    checks = [w.check for w in workarounds if w.check]
    if not hal_rewrites and not checks:
        compiler.compile(stream, output, flags + ["--compile-from=stream"], model_name, cwd=workdir)
        (workdir / stream).unlink()
        return
    compiler.compile(stream, hal, staged + ["--compile-from=stream", "--compile-to=hal"], model_name, cwd=workdir)
    reasons = _rewrite_text(workdir / hal, hal_rewrites, checks, compiler)
    if reasons:
        raise UsageError(
            f"{model_name}: ireegen cannot make --execution-model {execution_model} correct for this model with "
            f"IREE {compiler.version}: {'; '.join(reasons)}, see {doc('known-iree-issues.md')}; "
            f"use --execution-model async"
        )
    compiler.compile(hal, output, flags + ["--compile-from=hal"], model_name, cwd=workdir)
    (workdir / stream).unlink()
    (workdir / hal).unlink()
