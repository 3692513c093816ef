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

This module compares; it compiles and emits nothing.  The emit driver
(driver/verification.py) builds the subject (a `Ran`) and compiles the
reference, and hands both to `compare_with_reference`.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from ireegen.cbuild.baremetal import DoesNotFit
from ireegen.cbuild.native_run import build_runner
from ireegen.cbuild.toolchains import runs_natively
from ireegen.check.compare import run_subjects
from ireegen.check.given_arrays import load_inputs
from ireegen.check.report import REFERENCE, Report
from ireegen.check.subjects import Subject
from ireegen.common.errors import IreegenError, RunError, UsageError
from ireegen.common.resources import doc
from ireegen.config.baselines import missing_here
from ireegen.config.modes import Config, make_config
from ireegen.output.outputs import sha256_of

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


def describe(config: Config) -> str:
    parts = [config.execution_model.name, config.executable_format.name]
    if config.module_format:
        parts.append(config.module_format)
    text = ", ".join(parts)
    text = f"{text} for {config.target.triple}" if config.target else text
    # Only a worker count other than the calling thread's is named.
    return text + (f" ({_threads_text(config.threads)})" if config.threads != 1 else "")


def _threads_text(threads: int) -> str:
    return f"{threads} worker threads, local-task" if threads else "one worker per core, local-task"


def reference_config() -> Config:
    return make_config("async")


def host_runnable(config: Config) -> bool:
    return config.target is None or runs_natively(config.target.triple)


def check_runs_here(config: Config) -> None:
    """Refuses, in one line, code that needs more of the CPU than this
    machine has (the default x86-64-v3 on a CPU without AVX2): it would die
    of an illegal instruction."""
    for target in (config.target if host_runnable(config) else None, reference_config().target):
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
    if not host_runnable(config):
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
        threads=config.threads,
    )
    return twin, reasons


def _file_json(path) -> dict:
    """A file by name and content (never its directory: manifests are path-independent)."""
    return {"name": Path(path).name, "sha256": sha256_of(Path(path))}


# Runtimeless C is verified with each dispatch's workgroups spread over this
# many threads (NAME_PARALLEL_FOR and the pthreads pool) where the target has
# an OS: the threaded build is the one checked, and one thread's output is the
# same bits (tests/test_threads.py).
VERIFY_THREADS = 2


def built_runner(outdir, build_dir):
    try:
        return build_runner(outdir, build_dir, threads=VERIFY_THREADS)
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


@dataclass(frozen=True)
class Ran:
    """What verification ran: the subject, the configuration it was built
    for (the emitted one, or its runnable twin), and why they differ."""

    subject: Subject
    config: Config
    reasons: list


@dataclass(frozen=True)
class Verification:
    """What one emit's verification compares, besides the subject and the reference."""

    model_path: str
    config: Config
    functions: list  # the C API's functions (cgen/c_api.py)
    options: VerifyOptions
    given: dict  # --verify-inputs, function -> inputs
    compiler_version: str
    kernels_spec: Path | None = None  # --kernels: the subject links them, the reference does not

    @property
    def label(self) -> str:
        return self.config.execution_model.name


NOT_VERIFIED = {"verified": False, "reason": "--no-verify"}


def runtimeless_twin(config: Config, error: UsageError) -> tuple:
    """(the configuration for this machine to emit and run instead, why),
    when `config`'s runtimeless C cannot be built or run here (`error`);
    raises `error` when no twin can stand in for it (code for this
    machine, or a program that does not fit its board)."""
    if host_runnable(config) or isinstance(error, DoesNotFit):
        raise error
    reasons = [
        f"{config.target.triple} programs cannot run here ({error}): verified the same model emitted for this machine"
    ]
    twin = make_config(config.execution_model.name, optimize_for=config.optimize_for, data_format=config.data_format)
    return twin, reasons


def reference_itself(ran: Ran, compared_as_emitted: bool) -> dict | None:
    """The verification section when what ran is the reference itself
    (async for this machine, compiled with the reference's flags and no
    --kernels: `compared_as_emitted`); None otherwise."""
    ref_config = reference_config()
    if ran.config != ref_config or not compared_as_emitted:
        return None
    return {
        "verified": True,
        "reference": describe(ref_config),
        "ran": describe(ran.config),
        "notes": ran.reasons + ["this configuration is the reference itself: nothing to compare"],
    }


def reference_failed(model_path, config: Config, error: IreegenError) -> VerificationError:
    return VerificationError(
        f"{model_path}: cannot verify --execution-model {config.execution_model.name}: the async reference does "
        f"not compile (use --no-verify to emit unverified):\n{error}"
    )


def compare_with_reference(what: Verification, ran: Ran, reference: Subject) -> dict:
    """Runs `ran`'s subject and the async `reference` on every function;
    returns the manifest's `verification` section, or raises
    VerificationError.  With --kernels the subject links the user's
    kernels and the reference does not: a kernel that computes something
    else than the ops it replaced is refused like any other difference."""
    # The subject's row: async with kernels is not the reference async.
    row = f"{what.label}+kernels" if what.kernels_spec is not None else what.label
    report = Report(what.model_path, what.compiler_version, "iree-base-runtime", [REFERENCE, row])
    options = what.options
    run_subjects(
        report,
        [f.function for f in what.functions],
        {REFERENCE: reference, row: ran.subject},
        what.given or {},
        options.seed,
        options.rtol,
        options.atol,
        scale_atol=True,
        quantized_steps=True,
    )
    _check_agrees(what, report)
    return _section(what, ran, report, row)


def _check_agrees(what: Verification, report: Report) -> None:
    if not report.agrees:
        why = (
            f"the kernels of {what.kernels_spec} compute something else than the ops they replace, "
            f"see {doc('kernels.md')}"
            if what.kernels_spec is not None
            else f"see {doc('known-iree-issues.md')}"
        )
        raise VerificationError(
            f"{what.model_path}: --execution-model {what.label} ({describe(what.config)}) computes different "
            f"numbers from async, so nothing was written ({why}; --no-verify skips this check):\n" + report.table()
        )
    idle = not_exercised(report, what.functions)
    if idle and what.options.strict:
        raise VerificationError(
            f"{what.model_path}: --execution-model {what.label}: verification proved nothing about "
            + "; ".join(f"@{f}: {why}" for f, why in idle.items())
            + ", so nothing was written (--verify-strict; give inputs that make the outputs move with "
            "--verify-inputs)"
        )


def _section(what: Verification, ran: Ran, report: Report, row: str) -> dict:
    options = what.options
    idle = not_exercised(report, what.functions)
    return {
        "verified": not idle,
        **({"reason": "not exercised", "not_exercised": idle} if idle else {}),
        "reference": describe(reference_config()) + " (iree-run-module, local-sync)",
        "ran": describe(ran.config),
        "ran_the_emitted_code": ran.config == what.config,
        "notes": ran.reasons + report.notes,
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
            for f in what.functions
        },
    }
