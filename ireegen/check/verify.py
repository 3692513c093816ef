"""Emit verification: before `emit` commits its output, it runs what it
emitted on inputs that exercise the model (inputs.py) and compares every
output with references that share no optional part with it (References):
IREE's defaults (async, no --iree-flag, no tuning flag, no ireegen rewrite,
workaround or kernel) and, for an ONNX model when onnxruntime is installed,
ONNX Runtime.  A difference refuses the output: nothing is written, and the
parity table says what differed.  docs/verification.md states which
transformations the references share with what they check (the required
ones: the import, --input-shape, --input-value, --quantized-io) and how a
disagreement between the two references is decided (`verdict`).

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

from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from ireegen.cbuild.baremetal import DoesNotFit
from ireegen.cbuild.native_run import build_runner
from ireegen.cbuild.toolchains import runs_natively
from ireegen.check.compare import compare, run_subjects, value_range
from ireegen.check.given_arrays import load_inputs
from ireegen.check.report import REFERENCE, Report, Row
from ireegen.check.subjects import Subject, onnxruntime_selection
from ireegen.common.errors import IreegenError, RunError, UsageError
from ireegen.common.progress import progress
from ireegen.common.resources import doc
from ireegen.config.baselines import missing_here
from ireegen.config.modes import Config, make_config
from ireegen.frontend.containment import shown
from ireegen.frontend.onnx_detections import rank_selections
from ireegen.output.outputs import sha256_of

DEFAULT_RTOL = 1e-4
DEFAULT_ATOL = 1e-5
# The independent reference's row label, and how close a float output must
# come to it: this fraction of the output's range (its max - min; its
# largest magnitude when it is constant).  Another runtime's kernels sum in
# another order, so the async tolerances above would refuse correct code.
INDEPENDENT = "onnxruntime"
RANGE_TOLERANCE = 1e-3
# The row of an async output that is not IREE's defaults (flags, rewrites, workarounds).
EMITTED_ASYNC = "async-emitted"


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
    bounded: tuple = ()  # frontend/onnx_detections.BoundedOutput: a detector's selections
    # The iree-compile flags the subject was built with and IREE's defaults
    # were not (--iree-flag, a tuning candidate's): named when it disagrees.
    flags: tuple = ()

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


@dataclass(frozen=True)
class References:
    """What a subject is compared with.  `iree`: IREE's defaults (a Subject;
    None when they do not compile the model, see `section`); `itself`: the
    subject is built exactly as IREE's defaults are, so it is its own IREE
    reference; `independent`: ONNX Runtime (None where it does not apply);
    `section`: the manifest's `references`, what each one is and why one is
    missing."""

    iree: Subject | None
    independent: Subject | None
    section: dict = field(default_factory=dict)
    itself: bool = False

    @property
    def labels(self) -> list:
        names = {"iree_defaults": "async with IREE's defaults", INDEPENDENT: "ONNX Runtime"}
        used = [k for k, v in self.section.items() if v.get("used")]
        return [names.get(k, k) for k in used]


def reference_itself(ran: Ran, references: References) -> dict:
    """The verification section when what ran is IREE's defaults
    themselves and no independent reference applies: nothing to compare."""
    return {
        "verified": True,
        "reference": describe(reference_config()),
        "references": references.section,
        "ran": describe(ran.config),
        "notes": ran.reasons + ["this configuration is the reference itself: nothing to compare"],
    }


def reference_failed(model_path, config: Config, error: IreegenError) -> VerificationError:
    return VerificationError(
        f"{model_path}: cannot verify --execution-model {config.execution_model.name}: the async reference does "
        f"not compile (use --no-verify to emit unverified):\n{error}"
    )


def compare_with_reference(what: Verification, ran: Ran, references: References) -> dict:
    """Runs `ran`'s subject and the `references` on every function; returns
    the manifest's `verification` section, or raises VerificationError.
    With --kernels the subject links the user's kernels and the references
    do not: a kernel that computes something else than the ops it replaced
    is refused like any other difference."""
    # The subject's row, never the reference's: async with kernels or with
    # flags is not IREE's defaults (one key for both compared the subject with itself).
    row = f"{what.label}+kernels" if what.kernels_spec is not None else what.label
    if references.itself:
        row = REFERENCE
    elif row == REFERENCE:
        row = EMITTED_ASYNC
    report = Report(what.model_path, what.compiler_version, "iree-base-runtime", list(dict.fromkeys([REFERENCE, row])))
    options = what.options
    subjects = {row: ran.subject}
    if references.iree is not None and not references.itself:
        subjects[REFERENCE] = references.iree
    run_subjects(
        report,
        [f.function for f in what.functions],
        subjects,
        what.given or {},
        options.seed,
        options.rtol,
        options.atol,
        scale_atol=True,
        quantized_steps=True,
    )
    selections = []
    if references.independent is not None:
        _compare_independent(what, report, references, row)
        selections = _compare_selections(what, report, row)
    disagree = _check_agrees(what, report, references, row)
    section = _section(what, ran, report, row, references, disagree)
    section["notes"] = section["notes"] + selections
    return section


def independent_row(
    function: str,
    output: str,
    mode: str,
    got,
    want,
    step: float | None,
    rtol: float = DEFAULT_RTOL,
    atol: float = DEFAULT_ATOL,
) -> Row:
    """`got` against the independent reference's `want`: a float output
    within RANGE_TOLERANCE of the reference's range, a quantized one within
    one step, an integer one exactly.  A float output whose range is
    degenerate (a saturated sigmoid spanning 1e-24 to 6e-5) also agrees
    within the tolerance IREE's own configurations get (`rtol`, and `atol`
    scaled by the largest magnitude, at least 1): float reassociation alone
    moves such an output by more than 1e-3 of its range."""
    want = np.asarray(want)
    if step is None and want.dtype.kind == "f":
        low_high = value_range(want)
        width = low_high[1] - low_high[0] if low_high else 0.0
        largest = max(abs(low_high[0]), abs(low_high[1])) if low_high else 0.0
        by_range = compare(
            function, output, mode, got, want, 0.0, RANGE_TOLERANCE * (width or largest or 1.0), against=INDEPENDENT
        )
        if by_range.verdict == "ok":
            return by_range
        return compare(function, output, mode, got, want, rtol, atol, against=INDEPENDENT, scale_atol=True)
    return compare(function, output, mode, got, want, 0.0, 0.0, against=INDEPENDENT, step=step)


def _compare_independent(what: Verification, report: Report, references: References, row: str) -> None:
    """Adds the rows of the subject and of IREE's defaults against ONNX
    Runtime, run on the inputs the subject ran on.  ONNX Runtime failing to
    run the model is a note, not a refusal: it is the reference that failed."""
    for f in what.functions:
        choice = report.inputs.get(f.name)
        if choice is None:
            continue
        progress("running", f"@{f.name} in ONNX Runtime")
        try:
            wanted = references.independent.run(f.function, choice.inputs)
        except RunError as e:
            references.section[INDEPENDENT].update(used=False, error=str(e).strip().splitlines()[0][:300])
            return
        for mode in dict.fromkeys([row, REFERENCE]):
            results = report.results.get(mode, {}).get(f.name)
            if results is None:
                continue
            for i, v in enumerate(f.function.outputs):
                report.rows.append(
                    independent_row(
                        f.name, v.name, mode, results[i], wanted[i], v.step, what.options.rtol, what.options.atol
                    )
                )


def _compare_selections(what: Verification, report: Report, row: str) -> list:
    """A bounded NonMaxSuppression's rows and count, in the subject and in
    IREE's defaults, are compared with what ONNX Runtime's NonMaxSuppression
    selects from that run's own boxes and scores, exactly, instead of with
    another run's selection: a score or overlap within rounding of a
    threshold selects another box in any two runtimes.  The boxes and
    scores are outputs, compared with every reference like any other.
    Returns the manifest's notes saying so."""
    notes = []
    for f in what.functions:
        choice = report.inputs.get(f.name)
        outputs = [v.name for v in f.function.outputs]
        inputs = [v.name for v in f.function.inputs]
        for bound in (b for b in what.bounded if b.selects and b.name in outputs and b.count in outputs):
            for mode in dict.fromkeys([row, REFERENCE]):
                results = report.results.get(mode, {}).get(f.name)
                if results is None or choice is None:
                    continue
                values = {**dict(zip(inputs, choice.inputs)), **dict(zip(outputs, results))}
                rows, count = onnxruntime_selection(values[bound.boxes], values[bound.scores], bound)
                replaced = (bound.name, bound.count)
                report.rows = [
                    r
                    for r in report.rows
                    if not (r.function == f.name and r.mode == mode and r.output in replaced and r.verdict in _COMPARED)
                ]
                for name, want in zip(replaced, (rows, count)):
                    got = results[outputs.index(name)]
                    report.rows.append(compare(f.name, name, mode, got, want, 0.0, 0.0, against=INDEPENDENT))
                    if mode != REFERENCE:  # the row the manifest lists the output by
                        report.rows.append(compare(f.name, name, mode, got, want, 0.0, 0.0))
            notes.append(
                f"@{f.name} {bound.name}, {bound.count}: compared with ONNX Runtime's NonMaxSuppression on each "
                f"run's own {bound.boxes} and {bound.scores}, which are compared with the references like any output"
            )
    return notes


_COMPARED = ("ok", "mismatch")


def _failing(report: Report, mode: str, against: str) -> list:
    return [r for r in report.rows if r.mode == mode and r.against == against and r.verdict not in ("ok", "reference")]


def _flags_clause(flags: tuple, reference: str) -> str:
    """The flags a disagreeing subject was built with and the reference
    was not, as a clause of the refusal ('' when none)."""
    if not flags:
        return ""
    return f"; it was built with the iree-compile flags {' '.join(shown(f)[:200] for f in flags)} and {reference}"


def _both_disagree(model_path: str) -> str:
    """The refusal's clause where IREE's defaults disagree with ONNX Runtime
    as the subject does: a model that selects by comparing computed values
    (frontend/onnx_detections.RANK_OPS) may select otherwise on rounding
    alone, which inputs whose values lie apart tell from a wrong result."""
    ranks = rank_selections(model_path)
    if not ranks:
        return "; IREE's defaults disagree with ONNX Runtime too, so IREE itself computes this model differently"
    ops = ", ".join(f"{op} x{n}" for op, n in sorted(ranks.items()))
    return (
        f"; IREE's defaults disagree with ONNX Runtime too. The model selects by comparing computed values ({ops}): "
        "a value within rounding of another's or of a threshold selects other entries in two runtimes, as tied "
        "scores of untrained weights do. Verify on inputs whose scores lie apart (--verify-inputs) to tell that "
        "from a wrong selection"
    )


def _check_agrees(what: Verification, report: Report, references: References, row: str) -> list:
    """Refuses the subject unless it agrees with every reference, with one
    exception: where IREE's defaults disagree with ONNX Runtime and the
    subject agrees with ONNX Runtime (an IREE bug that ireegen's rewrites
    or workarounds avoid), the subject is kept and the disagreement
    returned, to be reported.  Returns those disagreements' rows."""
    if what.kernels_spec is not None:
        why = f"the kernels of {what.kernels_spec} compute something else than the ops they replace, see {doc('kernels.md')}"
    else:
        why = f"see {doc('known-iree-issues.md')}"
    failed_runs = [r for r in report.rows if r.verdict in ("run-error", "ireegen-error") and r.against == REFERENCE]
    subject_vs_iree = [r for r in _failing(report, row, REFERENCE) if r.verdict == "mismatch"]
    subject_vs_ort = _failing(report, row, INDEPENDENT)
    iree_vs_ort = _failing(report, REFERENCE, INDEPENDENT) if row != REFERENCE else []
    used = " and ".join(references.labels)
    iree_agrees = any(r.mode == REFERENCE and r.against == INDEPENDENT for r in report.rows) and not iree_vs_ort
    if subject_vs_ort:
        both = (
            _both_disagree(what.model_path)
            if iree_vs_ort
            else _flags_clause(what.flags, "IREE's defaults, built without them, agree with ONNX Runtime")
            if iree_agrees
            else ""
        )
        raise VerificationError(
            f"{what.model_path}: --execution-model {what.label} ({describe(what.config)}) computes different "
            f"numbers from ONNX Runtime (more than {RANGE_TOLERANCE:g} of an output's range){both}, so nothing was "
            f"written ({why}; --no-verify skips this check):\n" + report.table()
        )
    # IREE's defaults are wrong where ONNX Runtime and the subject agree: the disagreement is reported, not refused.
    excused = bool(iree_vs_ort) and any(r.against == INDEPENDENT and r.mode == row for r in report.rows)
    if failed_runs or report.ireegen_errors or (subject_vs_iree and not excused):
        flags = _flags_clause(what.flags, "IREE's defaults were built without them") if subject_vs_iree else ""
        raise VerificationError(
            f"{what.model_path}: --execution-model {what.label} ({describe(what.config)}) computes different "
            f"numbers from {used}{flags}, so nothing was written ({why}; --no-verify skips this check):\n"
            + report.table()
        )
    idle = not_exercised(report, what.functions)
    if idle and what.options.strict:
        raise VerificationError(
            f"{what.model_path}: --execution-model {what.label}: verification proved nothing about "
            + "; ".join(f"@{f}: {why}" for f, why in idle.items())
            + ", so nothing was written (--verify-strict; give inputs that make the outputs move with "
            "--verify-inputs)"
        )
    return iree_vs_ort


def _section(what: Verification, ran: Ran, report: Report, row: str, references: References, disagree: list) -> dict:
    options = what.options
    idle = not_exercised(report, what.functions)

    def output(f, r) -> dict:
        against = {
            x.against: x
            for x in report.rows
            if x.function == f.name and x.output == r.output and x.mode == row and x.against == INDEPENDENT
        }
        out = {
            "max_abs_error": r.max_abs_error,
            "max_rel_error": r.max_rel_error,
            "range": r.value_range,
            **_tolerance(f.function, r.output),
        }
        if INDEPENDENT in against:
            out[INDEPENDENT] = {"max_abs_error": against[INDEPENDENT].max_abs_error}
        return out

    notes = ran.reasons + report.notes
    if references.itself:
        notes = notes + ["this configuration is IREE's defaults itself: compared with the independent reference only"]
    section = {
        "verified": not idle,
        **({"reason": "not exercised", "not_exercised": idle} if idle else {}),
        "reference": describe(reference_config()) + " (iree-run-module, local-sync)",
        "references": references.section,
        "ran": describe(ran.config),
        "ran_the_emitted_code": ran.config == what.config,
        "notes": notes,
        "seed": options.seed,
        "inputs_file": _file_json(options.inputs) if options.inputs else None,
        "rtol": options.rtol,
        "atol": options.atol,
        "independent_tolerance": {"fraction_of_range": RANGE_TOLERANCE},
        "functions": {
            f.name: {
                "inputs": report.inputs[f.name].to_json(),
                "outputs": {
                    r.output: output(f, r)
                    for r in report.rows
                    if r.function == f.name and r.mode == row and r.against == REFERENCE
                },
            }
            for f in what.functions
        },
    }
    if disagree:
        section["references_disagree"] = [
            {"function": r.function, "output": r.output, "max_abs_error": r.max_abs_error, "range": r.value_range}
            for r in disagree
        ]
    return section
