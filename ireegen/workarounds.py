"""Workarounds for IREE compiler bugs that ireegen meets, each with the
versions it applies to.  See docs/known-iree-issues.md.

Inline constants (IREE 3.11 and later, inline-static and inline-dynamic):
`util.buffer.constant` became ConstantLike (iree-org/iree#23425), so after
`iree-hal-inline-conversion` the initializer's `util.global.store` of a
packed constant is folded by `iree-util-fold-globals` into an initial value
that is then dropped (a `#util.composite` is not a TypedAttr).  The global is
never set and every dispatch that reads the weights sees a null buffer.

The fix here: compile to the `stream` phase, hide each host-side
`util.buffer.constant` behind a `util.optimization_barrier` (not
ConstantLike, so the fold keeps the store), continue to `hal`, check that no
buffer global is read without ever being set, and finish the compile.  The
intermediate files are MLIR text: a bytecode round trip through the Python
bindings drops `dense_resource` blobs.
"""

from __future__ import annotations

import re
from pathlib import Path

from .compiler import Compiler
from .errors import UsageError

_DEVICE_CODE = ("stream.executable", "hal.executable", "flow.executable")


def inline_constant_fix_applies(execution_model: str, compiler_version: str) -> bool:
    if execution_model not in ("inline-static", "inline-dynamic"):
        return False
    m = re.match(r"(\d+)\.(\d+)", compiler_version)
    return not m or (int(m.group(1)), int(m.group(2))) >= (3, 11)


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
        n for n, (ty, has_init) in globals_.items() if ty == "!util.buffer" and n in loaded and n not in stored and not has_init
    )


def _parse_intermediate(path: Path, compiler: Compiler):
    """Parses the compiler's intermediate IR with the installed bindings; a
    compiler of another release may print IR they cannot read."""
    from iree.compiler import ir

    try:
        return ir.Module.parseFile(str(path))
    except ir.MLIRError as e:
        raise UsageError(
            f"cannot apply ireegen's inline-constant workaround with iree-compile {compiler.version}: "
            f"its {path.stem} IR does not parse with the installed iree-base-compiler bindings "
            f"({str(e).splitlines()[-1].strip()[:200]})"
        ) from None


def _rewrite_text(path: Path, transform, compiler: Compiler):
    from iree.compiler import ir

    with ir.Context():
        module = _parse_intermediate(path, compiler)
        result = transform(module)
        path.write_text(module.operation.get_asm(enable_debug_info=True, large_elements_limit=None))
    return result


def _inspect_text(path: Path, inspect, compiler: Compiler):
    from iree.compiler import ir

    with ir.Context():
        return inspect(_parse_intermediate(path, compiler))


def compile_inline_with_constant_fix(
    compiler: Compiler, source: Path, output: Path, flags: list, workdir: Path, model_name: str, execution_model: str
) -> int:
    """The three-stage compile described above; returns how many constants it
    protected.  Refuses the mode if constants would still be lost."""
    # Relative names, compiled inside workdir: the module records where the
    # hal.mlir it was finished from lives (as its location).
    stream, hal = "stream.mlir", "hal.mlir"
    # Intermediate files keep the model's locations, so that diagnostics and
    # debug info name the model, not this run's temporary files.
    keep_locations = ["--mlir-print-debuginfo"]
    compiler.compile(source, stream, flags + keep_locations + ["--compile-to=stream"], model_name, cwd=workdir)
    protected = _rewrite_text(workdir / stream, hide_buffer_constants, compiler)
    compiler.compile(stream, hal, flags + keep_locations + ["--compile-from=stream", "--compile-to=hal"], model_name,
                     cwd=workdir)
    lost = _inspect_text(workdir / hal, lost_buffer_globals, compiler)
    if lost:
        raise UsageError(
            f"{model_name}: ireegen cannot make --execution-model {execution_model} correct for this model with "
            f"IREE {compiler.version}: the constants {', '.join(lost)} would be null at run time "
            f"(IREE's inline constant bug, see docs/known-iree-issues.md); use --execution-model async"
        )
    compiler.compile(hal, output, flags + ["--compile-from=hal"], model_name, cwd=workdir)
    (workdir / stream).unlink()
    (workdir / hal).unlink()
    return protected
