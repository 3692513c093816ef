"""Emit verification: before `emit` commits its output, it runs what it
emitted on inputs that exercise the model (inputs.py) and compares every
output with async, IREE's default execution model.  A difference refuses the
output: nothing is written, and the parity table says what differed.

What runs is the emitted configuration itself when this machine can run it,
else its nearest runnable twin, and the manifest says which:
- EmitC modules: the same program as bytecode (EmitC C needs the IREE
  runtime C SDK, which is on no package registry);
- static-library executables in a VM module: the same executables as
  embedded ELF (static libraries are linked into a runtime, not loaded);
- a foreign --target-triple: runtimeless C is built with the target's cross
  compiler and run under its emulator when both are here; otherwise, like
  the VM modes, the same configuration built for this machine.
The reference is always async with embedded-ELF executables for this
machine, run by iree-run-module in a child process (a kernel that corrupts
memory on the drawn inputs then fails that process, not emit).
"""

from __future__ import annotations

import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from ireegen.cbuild.baremetal import DoesNotFit
from ireegen.cbuild.native_run import build_runner
from ireegen.cbuild.toolchains import runs_natively
from ireegen.check.compare import run_subjects
from ireegen.check.given_arrays import load_inputs
from ireegen.check.report import REFERENCE, Report
from ireegen.check.subjects import module_subject, runner_subject
from ireegen.common.errors import IreegenError, RunError, UsageError
from ireegen.common.progress import progress
from ireegen.compile.compile_model import compile_model
from ireegen.config.baselines import missing_here
from ireegen.config.modes import Config, make_config
from ireegen.output.outputs import MANIFEST, manifest_text, sha256_of

DEFAULT_RTOL = 1e-4
DEFAULT_ATOL = 1e-5


class VerificationError(IreegenError):
    """The emitted code computes different numbers from async (status 1)."""

    exit_code = 1


@dataclass(frozen=True)
class VerifyOptions:
    enabled: bool = True
    seed: int = 0
    rtol: float = DEFAULT_RTOL
    atol: float = DEFAULT_ATOL
    inputs: Path | None = None  # an .npz of inputs to verify on, instead of drawn ones
    strict: bool = False  # a function whose outputs never moved is an error, not a warning


def load_verify_inputs(options: VerifyOptions, functions) -> dict:
    """The --verify-inputs arrays, checked against the model's signature
    (before anything is compiled); function -> inputs."""
    if not options.enabled or options.inputs is None:
        return {}
    return load_inputs(options.inputs, functions, "--verify-inputs")


class ReferenceCache:
    """The async reference of one model, compiled once for the several
    verifications of one emit (`--tune` verifies every candidate against
    the same reference), in a directory the caller owns and removes."""

    def __init__(self, directory: Path):
        self.directory = Path(directory)
        self._modules: dict = {}

    def module(self, flags: list, compile_into: Callable[[Path], object]) -> Path:
        """The reference module compiled with `flags`; `compile_into(dir)`
        compiles it (a compile_model result) on first use."""
        key = tuple(flags)
        if key not in self._modules:
            workdir = self.directory / f"reference{len(self._modules) + 1}"
            workdir.mkdir(parents=True)
            progress("verifying", "compiling the async reference")
            self._modules[key] = workdir / compile_into(workdir).module_file
        return self._modules[key]


def describe(config: Config) -> str:
    parts = [config.execution_model.name, config.executable_format.name]
    if config.module_format:
        parts.append(config.module_format)
    text = ", ".join(parts)
    return f"{text} for {config.target.triple}" if config.target else text


def reference_config() -> Config:
    return make_config("async")


def _host_runnable(config: Config) -> bool:
    return config.target is None or runs_natively(config.target.triple)


def _check_runs_here(config: Config) -> None:
    """Refuses, in one line, code that needs more of the CPU than this
    machine has (the default x86-64-v3 on a CPU without AVX2): it would die
    of an illegal instruction."""
    for target in (config.target if _host_runnable(config) else None, reference_config().target):
        missing = missing_here(target.cpu) if target else ()
        if missing:
            raise UsageError(
                f"--target-cpu {target.cpu}: this machine's CPU lacks {', '.join(missing)}, so the code cannot "
                "run here to be verified; pass --target-cpu generic (any x86-64) or host, or --no-verify"
            )


def runnable_twin(config: Config) -> tuple:
    """(the VM configuration to run, why it differs from `config`)."""
    reasons = []
    module_format, fmt, target = config.module_format, config.executable_format.name, config.target
    if module_format == "emitc":
        module_format = "vmfb"
        reasons.append("EmitC C needs the IREE runtime C SDK to run: verified the same program as bytecode")
    if fmt == "static-library":
        fmt = "embedded-elf"
        reasons.append("static-library executables link into a runtime: verified them as embedded ELF")
    if not _host_runnable(config):
        target = reference_config().target
        reasons.append(
            f"{config.target.triple} code cannot run on this machine: "
            f"verified the same configuration built for {target.triple}"
        )
    twin = make_config(
        config.execution_model.name,
        fmt,
        module_format,
        target.triple if target else None,
        target.cpu if target and target is config.target else None,
        target.cpu_features if target and target is config.target else None,
        config.optimize_for,
    )
    return twin, reasons


def _vm_subject(
    model, name, config, staging, module_file, extra_flags, compiler, workdir, apply_workarounds, kernels
) -> tuple:
    twin, reasons = runnable_twin(config)
    if twin == config:
        return module_subject(config.execution_model.name, Path(staging) / module_file, None), twin, reasons
    compiled = compile_model(model, name, twin, extra_flags, compiler, workdir, apply_workarounds, kernels)
    return module_subject(config.execution_model.name, workdir / compiled.module_file, None), twin, reasons


def _runtimeless_subject(config, staging, manifest, workdir, emit_twin) -> tuple:
    (Path(staging) / MANIFEST).write_text(manifest_text(manifest))
    label = config.execution_model.name
    try:
        return runner_subject(label, _built_runner(staging, workdir / "build")), config, []
    except UsageError as e:  # no cross compiler or emulator for the target here
        if _host_runnable(config) or isinstance(e, DoesNotFit):
            raise
        reasons = [
            f"{config.target.triple} programs cannot run here ({e}): verified the same model emitted for this machine"
        ]
    twin = make_config(config.execution_model.name, optimize_for=config.optimize_for, data_format=config.data_format)
    emit_twin(twin, workdir / "twin")
    return runner_subject(label, _built_runner(workdir / "twin", workdir / "twin-build")), twin, reasons


def _file_json(path) -> dict:
    """A file by name and content (never its directory: manifests are path-independent)."""
    return {"name": Path(path).name, "sha256": sha256_of(Path(path))}


def _built_runner(outdir, build_dir):
    try:
        return build_runner(outdir, build_dir)
    except RunError as e:
        raise VerificationError(f"cannot verify the emitted C: building it failed:\n{e}") from None


def _tolerance(function, output: str) -> dict:
    """A quantized output's tolerance as the manifest records it: one
    quantization step, in the output's units (check/compare.py)."""
    v = next((v for v in function.outputs if v.name == output), None)
    return {"tolerance": {"quantization_steps": 1, "atol": v.step}} if v is not None and v.step else {}


def not_exercised(report: Report, functions) -> dict:
    """{function name: why} for the functions whose outputs never moved
    across the inputs tried (degenerate outputs): the emitted code agreeing
    with async on them proves nothing about it."""
    out = {}
    for f in functions:
        choice = report.inputs.get(f.name)
        if choice is not None and choice.degenerate:
            what = ", ".join(f"{k} {v}" for k, v in choice.degenerate.items())
            where = "on the given inputs" if choice.distribution == "given" else "for every input tried"
            out[f.name] = f"{what} {where}"
    return out


def verify(
    model,
    model_path,
    name: str,
    config: Config,
    staging,
    module_file: str,
    manifest: dict,
    functions,
    extra_flags,
    compiler,
    options: VerifyOptions,
    apply_workarounds=True,
    emit_twin: Callable[[Config, Path], None] | None = None,
    given: dict | None = None,
    kernels=None,
    reference_flags=None,
    reference_cache: ReferenceCache | None = None,
) -> dict:
    """Runs the emitted code against async; returns the manifest's
    `verification` section, or raises VerificationError.  `emit_twin(config,
    outdir)` emits the same model, unverified, for another configuration:
    runtimeless C for this machine when the target's cannot run here.
    With `kernels` (--kernels) the subject links the user's kernels and
    the reference does not: a kernel that computes something else than the
    ops it replaced is refused like any other difference.
    `reference_flags` (default `extra_flags`) are the extra iree-compile
    flags of the async reference: a tuning candidate's flags are checked
    against a reference compiled without them.  `reference_cache` keeps the
    compiled reference for the next verification of the same model."""
    reference_flags = list(extra_flags if reference_flags is None else reference_flags)
    if not options.enabled:
        return {"verified": False, "reason": "--no-verify"}
    _check_runs_here(config)
    label = config.execution_model.name
    with tempfile.TemporaryDirectory(prefix="ireegen-verify-") as tmp:
        tmp = Path(tmp)
        (tmp / "subject").mkdir()
        if config.execution_model.has_vm_module:
            subject, ran, reasons = _vm_subject(
                model,
                name,
                config,
                staging,
                module_file,
                extra_flags,
                compiler,
                tmp / "subject",
                apply_workarounds,
                kernels,
            )
        else:
            subject, ran, reasons = _runtimeless_subject(config, staging, manifest, tmp / "subject", emit_twin)
        ref_config = reference_config()
        if ran == ref_config and kernels is None and reference_flags == list(extra_flags):
            return {
                "verified": True,
                "reference": describe(ref_config),
                "ran": describe(ran),
                "notes": reasons + ["this configuration is the reference itself: nothing to compare"],
            }
        cache = reference_cache or ReferenceCache(tmp)
        try:
            module = cache.module(
                reference_flags, lambda d: compile_model(model, name, ref_config, reference_flags, compiler, d)
            )
        except IreegenError as e:
            raise VerificationError(
                f"{model_path}: cannot verify --execution-model {label}: the async reference does not compile "
                f"(use --no-verify to emit unverified):\n{e}"
            ) from None
        reference = module_subject(REFERENCE, module, None)
        # The subject's row: async with kernels is not the reference async.
        row = f"{label}+kernels" if kernels is not None else label
        report = Report(str(model_path), compiler.version, "iree-base-runtime", [REFERENCE, row])
        subjects = {REFERENCE: reference, row: subject}
        run_subjects(
            report,
            [f.function for f in functions],
            subjects,
            given or {},
            options.seed,
            options.rtol,
            options.atol,
            scale_atol=True,
            quantized_steps=True,
        )
    if not report.agrees:
        why = (
            f"the kernels of {kernels.spec.path} compute something else than the ops they replace, see docs/kernels.md"
            if kernels is not None
            else "see docs/known-iree-issues.md"
        )
        raise VerificationError(
            f"{model_path}: --execution-model {label} ({describe(config)}) computes different numbers from "
            f"async, so nothing was written ({why}; --no-verify skips this check):\n" + report.table()
        )
    idle = not_exercised(report, functions)
    if idle and options.strict:
        raise VerificationError(
            f"{model_path}: --execution-model {label}: verification proved nothing about "
            + "; ".join(f"@{f}: {why}" for f, why in idle.items())
            + ", so nothing was written (--verify-strict; give inputs that make the outputs move with "
            "--verify-inputs)"
        )
    return {
        "verified": not idle,
        **({"reason": "not exercised", "not_exercised": idle} if idle else {}),
        "reference": describe(ref_config) + " (iree-run-module, local-sync)",
        "ran": describe(ran),
        "ran_the_emitted_code": ran == config,
        "notes": reasons + report.notes,
        "seed": options.seed,
        "inputs_file": _file_json(options.inputs) if options.inputs else None,
        "rtol": options.rtol,
        "atol": options.atol,
        "functions": {
            f.name: {
                "inputs": report.inputs[f.name].to_json(),
                "outputs": {
                    r.output: {
                        "max_abs_error": r.max_abs_error,
                        "max_rel_error": r.max_rel_error,
                        "range": r.value_range,
                        **_tolerance(f.function, r.output),
                    }
                    for r in report.rows
                    if r.function == f.name and r.mode == row
                },
            }
            for f in functions
        },
    }
