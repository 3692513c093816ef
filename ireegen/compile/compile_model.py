"""Compiling a model for one configuration: the single code path that both
`emit` and the parity harness use, workarounds included."""

from __future__ import annotations

import functools
from dataclasses import dataclass, field
from pathlib import Path

from ireegen.cgen.render import banner
from ireegen.common.errors import CompileError, UsageError
from ireegen.config.modes import Config
from ireegen.frontend.models import LoadedModel
from ireegen.output.layout import output_files

from . import binding_ranges, kernel_link, partitioning, stream_access, tile_spec
from .compiler import Compiler
from .emitc_order import canonical_ref_copies
from .executable_names import prefix_executables
from .kernel_link import KernelCalls, KernelLink
from .refusals import check_emitc_names, check_refusals
from .workarounds import applicable_flag_workarounds, applicable_workarounds, compile_with_workarounds

# Flags ireegen sets itself; --iree-flag may not override them.
_OWNED_FLAGS = {
    "--iree-execution-model": "--execution-model",
    "--iree-hal-target-device": "--execution-model/--executable-format",
    "--iree-hal-local-target-device-backends": "--executable-format",
    "--iree-hal-target-backends": "--executable-format",
    "--output-format": "--module-format",
    "--iree-llvmcpu-target-triple": "--target-triple",
    "--iree-llvmcpu-target-cpu": "--target-cpu",
    "--iree-llvmcpu-target-cpu-features": "--target-cpu-features",
    "--iree-llvmcpu-target-abi": "--target-triple",
    "--iree-llvmcpu-link-embedded": "--executable-format",
    "--iree-llvmcpu-link-static": "--executable-format",
    "--iree-llvmcpu-static-library-output-path": "--executable-format",
    "--compile-to": "ireegen's own compile",
    "--iree-hal-memoization": "--execution-model runtimeless",
    "--iree-hal-indirect-command-buffers": "--execution-model runtimeless",
    "--compile-from": "ireegen's own compile",
    "-o": "-o/--output-dir",
    "--iree-input-demote-f64-to-f32": "nothing: f64 stays f64, so that the C API's double is what the module takes",
}


def check_extra_flags(flags) -> list:
    flags = list(flags or [])
    for flag in flags:
        if not flag.startswith("-"):
            raise UsageError(f"--iree-flag {flag!r}: compiler flags start with --")
        key = flag.split("=", 1)[0]
        if key in _OWNED_FLAGS:
            raise UsageError(f"--iree-flag {flag!r}: ireegen sets {key} itself; use {_OWNED_FLAGS[key]}")
    return flags


def vm_module_name(name: str) -> str:
    """The VM module's name; C names the compiler derives from it (EmitC's
    `<module>_create`, static libraries' `<module>_..._library_query`) then
    cannot clash with the model API, since model names never contain `__`."""
    return f"{name}__module"


# The output roles iree-compile itself writes (the rest are rendered).
_COMPILER_OUTPUTS = ("module", "module-emitc", "executables-object", "executables-header")

# What runtimeless compiles to instead of a module: the HAL-level program,
# read by runtimeless/interpret/ and not kept.
PROGRAM_IR = "program.hal.mlir"


@dataclass
class CompiledModule:
    files: dict  # role -> file name in workdir (what output_files promises)
    flags: list  # the iree-compile flags used
    workarounds: list = field(default_factory=list)
    # False when the program dispatches nothing (Identity, Reshape, ...): the
    # executables object then holds no library the program uses.
    has_executables: bool = True
    # --kernels: which dispatch calls which of the user's kernels (kernel_link.py).
    kernel_calls: list | None = None
    # Runtimeless: each function's transient memory lower bound, from IREE's
    # buffer lifetimes (slice_liveness.py); None where it is not known.
    lower_bounds: dict = field(default_factory=dict)
    # Runtimeless: how each dispatch reads and writes its bindings (stream_access.py).
    binding_access: dict = field(default_factory=dict)

    @property
    def module_file(self) -> str:
        return self.files.get("module") or self.files.get("module-emitc") or PROGRAM_IR


@dataclass(frozen=True)
class _Job:
    """One compile_model call: what its steps share."""

    model: LoadedModel
    name: str
    config: Config
    compiler: Compiler
    workdir: Path
    kernels: KernelLink | None
    source: str = "input.mlir"

    @property
    def diagnostics_name(self) -> str:
        return self.model.path.name


def _selected(workarounds, apply_workarounds) -> list:
    """The workarounds `apply_workarounds` applies: all (True), none
    (False), or those of a collection of names."""
    if apply_workarounds is True:
        return list(workarounds)
    return [w for w in workarounds if apply_workarounds and w.name in apply_workarounds]


def compile_model(
    model: LoadedModel,
    name: str,
    config: Config,
    extra_flags,
    compiler: Compiler,
    workdir: Path,
    apply_workarounds=True,
    kernels: KernelLink | None = None,
) -> CompiledModule:
    """Compiles `model` into `workdir` (the module, and for static-library the
    executables' .o/.h); the model's VM module is named after `name`.
    Refuses (UsageError) a configuration that IREE is known to miscompile
    for this model (refusals.py).  `apply_workarounds=False` gives the raw
    compiler's output, without workarounds or refusals (to show that an IREE
    bug is still there); a collection of workaround names applies only those
    (to show one bug with the others worked around), without refusals.
    `kernels` links a user's own kernels (--kernels, kernel_link.py)."""
    check_emitc_names(model, str(model.path), config.module_format)
    if apply_workarounds is True:
        check_refusals(model, str(model.path), config.execution_model.name, config.module_format)
    model.set_module_name(vm_module_name(name))
    job = _Job(model, name, config, compiler, workdir, kernels)
    # iree-compile runs inside workdir with relative names: paths it records
    # (the static library's output path, the intermediate files of the
    # workaround) are then the same on every machine and in every OUTDIR.
    model.write(workdir / job.source)
    files = {r: f for r, f in output_files(name, config).items() if r in _COMPILER_OUTPUTS}
    static_object = files.get("executables-object")
    config_flags = config.compile_flags(static_object)
    flag_workarounds = _selected(applicable_flag_workarounds(config), apply_workarounds)
    for w in flag_workarounds:  # before --iree-flag: the user's own flags still win
        config_flags = [*config_flags, *w.flags]
    if static_object and not config.execution_model.has_vm_module:  # runtimeless
        config_flags = [*config_flags, *binding_ranges.compile_flags(extra_flags)]
    flags = config_flags + list(extra_flags)
    tile_spec.stage(flags, config.target, workdir)
    if kernels is not None:
        kernel_link.stage_inputs(kernels, config, workdir)
        flags += kernel_link.compile_flags()
    compiled = CompiledModule(files, flags)
    workarounds = _selected(applicable_workarounds(config.execution_model.name, compiler.version), apply_workarounds)
    if workarounds or flag_workarounds:
        compiled.workarounds = [w.name for w in (*flag_workarounds, *workarounds)]
    calls = KernelCalls()
    _run_compiler(job, compiled, workarounds, calls, len(config_flags))
    _finish(job, compiled, calls, apply_workarounds)
    return compiled


def _stream_compile(job: _Job, compiled: CompiledModule, chosen_at: int):
    """Runtimeless: the stream phase's compile, which chooses the partitioning
    (partitioning.py) and reads the dispatches' binding access; the chosen
    flag goes into `compiled.flags` at `chosen_at`, after the
    configuration's flags: the later phases and the manifest name it."""

    def stream_compile(source, stream, staged):
        compiled.lower_bounds, chosen = partitioning.compile_stream(
            job.compiler, job.workdir, job.diagnostics_name, source, stream, staged
        )
        compiled.binding_access = stream_access.read((job.workdir / stream).read_text(errors="replace"))
        if chosen:
            compiled.flags.insert(chosen_at, chosen)

    return stream_compile


def _run_compiler(job: _Job, compiled: CompiledModule, workarounds: list, calls: KernelCalls, chosen_at: int) -> None:
    """Runs iree-compile on the staged source, through the workarounds'
    phases and the stream rewrites when there are any."""
    static_object = compiled.files.get("executables-object")
    # A static library's entry points are global C symbols: they get the
    # model's prefix (executable_names.py).
    stream_rewrites = [functools.partial(prefix_executables, prefix=job.name)] if static_object else []
    runtimeless = static_object and not job.config.execution_model.has_vm_module
    stream_compile = _stream_compile(job, compiled, chosen_at) if runtimeless else None
    if job.kernels is not None:
        stream_rewrites.append(functools.partial(kernel_link.link_at_stream, calls=calls, config=job.config))
    with kernel_link.explained_failures(job.kernels):
        if workarounds or stream_rewrites:
            compile_with_workarounds(
                job.compiler,
                job.source,
                compiled.module_file,
                compiled.flags,
                job.workdir,
                job.diagnostics_name,
                job.config.execution_model.name,
                workarounds,
                stream_rewrites,
                stream_compile,
            )
        else:
            job.compiler.compile(
                job.source, compiled.module_file, compiled.flags, job.diagnostics_name, cwd=job.workdir
            )
    (job.workdir / job.source).unlink()


def _finish(job: _Job, compiled: CompiledModule, calls: KernelCalls, apply_workarounds) -> None:
    """After iree-compile: the kernels checked and linked, a placeholder
    for executables the program does not have, every promised file there."""
    workdir, files, kernels = job.workdir, compiled.files, job.kernels
    static_object = files.get("executables-object")
    if kernels is not None:
        kernel_link.cleanup(workdir)
        kernel_link.check_matched(kernels, calls, job.diagnostics_name)
        if static_object and calls.dispatches:
            kernel_link.finish_static(kernels, job.config, workdir, static_object)
        compiled.kernel_calls = calls.to_json()
    if static_object and not (workdir / static_object).exists():
        compiled.has_executables = False
        _write_unused_executables(job.name, job.config, job.compiler, workdir, files, job.diagnostics_name)
    output = compiled.module_file
    missing = [f for f in files.values() if not (workdir / f).exists()]
    if missing or not (workdir / output).exists():
        raise CompileError(
            f"iree-compile ({job.compiler.path}) exited with success for {job.diagnostics_name} but wrote no "
            f"{', '.join(missing or [output])}"
        )
    emitc = files.get("module-emitc")
    if emitc and apply_workarounds:
        compiled.workarounds.append("emitc-ref-copy-order")
        path = workdir / emitc
        path.write_text(canonical_ref_copies(path.read_text()))


# A program that dispatches nothing gets no object from iree-compile.  The
# set of output files is fixed per configuration (CMake declares it before
# anything is compiled), so the object is made from this one-dispatch module
# instead: a real object for exactly the model's target, whose library no
# generated code references (a static library's linker never pulls it in).
# Its locations are fixed, so that no path ends up in the object.
_UNUSED_EXECUTABLES_MODULE = """\
module {{
  func.func @{name}__no_executables(%x: tensor<1xi8> loc("ireegen":1:1)) -> tensor<1xi8> {{
    %y = arith.addi %x, %x : tensor<1xi8> loc("ireegen":1:1)
    return %y : tensor<1xi8> loc("ireegen":1:1)
  }} loc("ireegen":1:1)
}} loc("ireegen":1:1)
"""

_EMPTY_EXECUTABLES_HEADER = """\
{banner}
//
// The program of `{name}` dispatches no work: it has no executable libraries
// to register.  {name}_executables.o holds none that the program uses.
#ifndef {guard}
#define {guard}
#endif  // {guard}
"""


def _write_unused_executables(
    name: str, config: Config, compiler: Compiler, workdir: Path, files: dict, source_name: str
) -> None:
    stub, output = "no_executables.mlir", "no_executables.out"
    (workdir / stub).write_text(_UNUSED_EXECUTABLES_MODULE.format(name=name))
    flags = config.compile_flags(files["executables-object"])
    compiler.compile(stub, output, flags, f"ireegen's placeholder executables for {name}", cwd=workdir)
    (workdir / stub).unlink()
    (workdir / output).unlink()
    if "executables-header" in files:
        guard = f"{name.upper()}_EXECUTABLES_IREEGEN_H_"
        (workdir / files["executables-header"]).write_text(
            _EMPTY_EXECUTABLES_HEADER.format(banner=banner(source_name), name=name, guard=guard)
        )
