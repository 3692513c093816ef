"""The parity harness: compile one model in several execution models with
exactly the code `emit` uses, run every mode on the same inputs, and compare
every output of every function against async (and, with `expected=`,
against given reference outputs).

Every VM module runs in a child process, iree-run-module (the Python
runtime cannot load inline modules, and a kernel that corrupts memory on
odd inputs then cannot take the harness down); runtimeless C is
emitted and built into a runner (`ireegen run`), under qemu-user for a
foreign target.  With another IREE release's tools (`--iree-compile`,
`--iree-runtime-bin` or `--iree-venv`) every mode goes through that
release's iree-run-module, else the installed iree-base-runtime's.

The async reference shares nothing optional with the modes it checks:
it is IREE's defaults (no --iree-flag, ONNX rewrite or workaround), as
emit's verification builds it (docs/verification.md); where IREE's
defaults do not compile the model as exported, the rewritten model, still
without the flags.

Generated inputs are chosen so that the reference's outputs are not
degenerate (see inputs.py).  A failure inside one mode, ireegen's own
included, becomes that mode's rows; it never ends the run.
"""

from __future__ import annotations

import json
import tempfile
from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np

from ireegen.cbuild.kernels import kernel_link
from ireegen.cbuild.native_run import build_runner
from ireegen.check.compare import run_subjects
from ireegen.check.given_arrays import load_expected, load_inputs
from ireegen.check.report import REFERENCE, Report
from ireegen.check.runners import RuntimeTools, find_runtime_tools
from ireegen.check.subjects import Subject, module_subject, onnxruntime_outputs, require_onnxruntime, runner_subject
from ireegen.common.errors import IreegenError, RunError, UsageError
from ireegen.common.progress import progress
from ireegen.compile.compile_model import compile_model
from ireegen.compile.compiler import Compiler, find_compiler
from ireegen.config.modes import EXECUTION_MODELS, make_config
from ireegen.emit import emit
from ireegen.frontend.import_options import ImportOptions
from ireegen.frontend.kernel_spec import load_kernel_spec
from ireegen.frontend.models import load_model
from ireegen.frontend.onnx_import import input_value_arrays

REFERENCES = ("async", "onnxruntime")  # --reference: what every mode is also compared with
DEFAULT_MODES = ("async", "inline-static", "inline-dynamic")
# --kernels: every mode but the reference links them, and its label says so.
KERNELS_SUFFIX = "+kernels"

__all__ = [
    "DEFAULT_MODES",
    "ParityRequest",
    "REFERENCES",
    "Report",
    "Toolchain",
    "assert_parity",
    "parity",
    "run_parity",
    "prepare_mode",
    "toolchain_from",
    "write_json",
    "write_outputs",
]


@dataclass
class Toolchain:
    """The IREE release to check against."""

    compiler: Compiler
    runtime: RuntimeTools | None  # None: the installed iree-base-runtime's tools

    @property
    def description(self) -> str:
        return str(self.runtime.bin_dir) if self.runtime else "iree-base-runtime"


def toolchain_from(iree_compile=None, iree_runtime_bin=None, iree_venv=None) -> Toolchain:
    if iree_venv:
        venv = Path(iree_venv)
        if not (venv / "bin").is_dir():
            raise UsageError(f"--iree-venv {venv}: not a virtual environment (no bin/)")
        iree_compile = iree_compile or str(venv / "bin" / "iree-compile")
        if not iree_runtime_bin:
            found = sorted(venv.glob("lib/python*/site-packages/iree/_runtime_libs"))
            if not found:
                raise UsageError(f"--iree-venv {venv}: has no iree-base-runtime")
            iree_runtime_bin = str(found[0])
    runtime = None
    if iree_runtime_bin:
        runtime = find_runtime_tools(iree_runtime_bin)
        if not runtime.run_module.exists():
            raise UsageError(f"--iree-runtime-bin {iree_runtime_bin}: has no iree-run-module")
    return Toolchain(find_compiler(iree_compile), runtime)


@dataclass(frozen=True)
class ParityRequest:
    """One parity run; see the module docstring.  `runtimeless_target`
    ({"triple", "cpu", "emulator"}, each optional) builds and runs the
    runtimeless C for another target, a bare-metal board for instance; the
    other modes run on the host.  `input_shapes` pins an ONNX model's
    symbolic dimensions and `input_values` makes its inputs constants
    (ONNX Runtime is fed them); `reference="onnxruntime"` also compares every mode,
    async included, with ONNX Runtime.  `kernels` (a --kernels SPEC) links
    the user's kernels into every mode, async too (`async+kernels`), and
    compares them with async without them."""

    model_path: Path | str
    modes: tuple = DEFAULT_MODES
    function: str | None = None
    inputs_file: Path | str | None = None
    inputs: dict | None = None
    rtol: float = 1e-5
    atol: float = 1e-6
    seed: int = 0
    toolchain: Toolchain | None = None
    extra_flags: tuple = ()
    apply_workarounds: bool | tuple = True
    expected_file: Path | str | None = None
    expected: dict | None = None
    save_outputs: Path | str | None = None
    runtimeless_target: dict | None = None
    input_shapes: dict | None = None
    reference: str = REFERENCE
    input_values: dict | None = None
    kernels: Path | str | None = None


def prepare_mode(mode: str, model, request: ParityRequest, workdir: Path, kernels=None) -> Subject:
    """Compiles one mode of `request` with its default formats for the host;
    runtimeless for `request.runtimeless_target` (triple, cpu, emulator;
    default the host).  `kernels` (a KernelLink) links the user's kernels
    (--kernels).  `request.toolchain` is the one to compile with."""
    label = f"{mode}{KERNELS_SUFFIX}" if kernels is not None else mode
    toolchain = request.toolchain
    config = make_config(mode)
    if not config.execution_model.has_vm_module:
        target = request.runtimeless_target or {}
        config = make_config(mode, target_triple=target.get("triple"), target_cpu=target.get("cpu"))
        # Parity compares the modes itself: no need for emit's own verification.
        emit(
            request.model_path,
            workdir / "out",
            config,
            name="parity",
            extra_flags=request.extra_flags,
            compiler=toolchain.compiler,
            verify=False,
            input_shapes=request.input_shapes,
            input_values=request.input_values,
            kernels=kernels,
        )
        try:
            runner = build_runner(workdir / "out", workdir / "build", emulator=target.get("emulator"))
        except RunError as e:
            raise IreegenFailure(f"building the emitted C failed: {e}") from None
        return runner_subject(label, runner)
    if mode == REFERENCE and kernels is None:
        return _reference_subject(model, request, workdir)
    compiled = compile_model(
        model, "parity", config, request.extra_flags, toolchain.compiler, workdir, request.apply_workarounds, kernels
    )
    return module_subject(label, workdir / compiled.module_file, toolchain.runtime)


def _reference_subject(model, request: ParityRequest, workdir: Path) -> Subject:
    """The async reference: IREE's defaults on the model as exported, else
    on the model as ireegen rewrote it; never the request's flags."""
    toolchain, config = request.toolchain, make_config(REFERENCE)
    if model.onnx_rewrites:
        try:
            options = ImportOptions(request.input_shapes, request.input_values).as_exported()
            exported = load_model(request.model_path, toolchain.compiler, options)
            compiled = compile_model(exported, "parity", config, [], toolchain.compiler, workdir, False)
            return module_subject(REFERENCE, workdir / compiled.module_file, toolchain.runtime)
        except IreegenError:
            pass  # IREE's defaults cannot take the model as exported: the rewritten one
    compiled = compile_model(model, "parity", config, [], toolchain.compiler, workdir, False)
    return module_subject(REFERENCE, workdir / compiled.module_file, toolchain.runtime)


class IreegenFailure(Exception):
    """ireegen's own step failed for one mode (not the model's fault)."""


# ---------------------------------------------------------------------------


def parity(model_path, **options) -> Report:
    """Runs the parity check; see the module docstring.  `options` are
    ParityRequest's other fields, by keyword."""
    return run_parity(ParityRequest(model_path, **options))


def _checked_modes(request: ParityRequest) -> list:
    """The modes to run, the reference first; refuses a bad --reference or mode in one line."""
    modes = list(request.modes)
    reference, model_path = request.reference, request.model_path
    if reference not in REFERENCES:
        raise UsageError(f"--reference {reference!r}: choose from {', '.join(REFERENCES)}")
    if reference == "onnxruntime":
        if Path(model_path).suffix != ".onnx":
            raise UsageError(f"--reference onnxruntime: needs an .onnx model, not {model_path}")
        require_onnxruntime()  # a missing package fails now, not after compiling
    for m in modes:
        if m not in EXECUTION_MODELS:
            raise UsageError(f"--execution-models {m!r}: unknown; choose from {', '.join(EXECUTION_MODELS)}")
    if REFERENCE not in modes:
        modes.insert(0, REFERENCE)
    return list(dict.fromkeys(modes))


def _runs(request: ParityRequest, modes: list) -> list:
    """(row label, execution model, KernelLink or None) of every row."""
    link = kernel_link(load_kernel_spec(request.kernels)) if request.kernels is not None else None
    runs = [(m, m, None) for m in modes if link is None or m == REFERENCE]
    if link is not None:
        runs += [(f"{m}{KERNELS_SUFFIX}", m, link) for m in modes]
    return runs


def _given(request: ParityRequest, everything: list) -> tuple:
    """(inputs, expected outputs), function -> arrays: given, and read from their files."""
    given = dict(request.inputs or {})
    if request.inputs_file:
        given.update(load_inputs(Path(request.inputs_file), everything))
    wanted = dict(request.expected or {})
    if request.expected_file:
        wanted.update(load_expected(Path(request.expected_file), everything))
    return given, wanted


def run_parity(request: ParityRequest) -> Report:
    """Runs the parity check of `request`; see the module docstring."""
    modes = _checked_modes(request)
    runs = _runs(request, modes)
    request = replace(request, toolchain=request.toolchain or toolchain_from())
    toolchain, model_path = request.toolchain, request.model_path
    options = ImportOptions(request.input_shapes, request.input_values, onnx_rewrites=request.apply_workarounds)
    model = load_model(model_path, toolchain.compiler, options)
    everything = list(model.functions)
    functions = [model.function(request.function)] if request.function else everything
    given, wanted = _given(request, everything)
    save_outputs = _check_writable_dir(Path(request.save_outputs)) if request.save_outputs is not None else None
    labels = [label for label, _, _ in runs]
    report = Report(
        str(model_path), toolchain.compiler.version, toolchain.description, labels, reference=request.reference
    )
    with tempfile.TemporaryDirectory(prefix="ireegen-parity-") as tmp:
        subjects = _prepare_modes(request, model, runs, report, Path(tmp))
        extra = None
        if request.reference == "onnxruntime":
            fixed = input_value_arrays(model_path, request.input_shapes, request.input_values)
            bounded = model.bounded  # a detector's outputs, in the form ireegen bounds them to
            extra = Subject("onnxruntime", lambda f, inputs: onnxruntime_outputs(model_path, f, inputs, fixed, bounded))
        run_subjects(report, functions, subjects, given, request.seed, request.rtol, request.atol, wanted, extra)
    if save_outputs is not None:
        write_outputs(report, functions, save_outputs)
    return report


def _prepare_modes(request: ParityRequest, model, runs: list, report: Report, tmp: Path) -> dict:
    """{row label: Subject} of every row that compiled; the others' errors go into `report`."""
    subjects = {}
    for label, mode, with_kernels in runs:
        workdir = tmp / label
        workdir.mkdir()
        progress("compiling", f"{Path(request.model_path).name} for {label}")
        try:
            subjects[label] = prepare_mode(mode, model, request, workdir, with_kernels)
        except IreegenError as e:
            report.compile_errors[label] = str(e)
        except IreegenFailure as e:
            report.ireegen_errors[label] = str(e)
        except Exception as e:  # noqa: BLE001 - ireegen's own failure: this mode's row, not the end
            report.ireegen_errors[label] = f"{type(e).__name__}: {e}"
    return subjects


def _check_writable_dir(path: Path) -> Path:
    try:
        path.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        raise UsageError(f"--save-outputs {path}: cannot create it ({e.strerror})") from None
    if not path.is_dir():
        raise UsageError(f"--save-outputs {path}: is not a directory")
    return path


def write_outputs(report: Report, functions, directory: Path) -> None:
    """DIR/<mode>/<function>.<output>.npy for every result, and
    DIR/inputs/<function>.<input>.npy for the inputs used."""
    for f in functions:
        choice = report.inputs.get(f.name)
        if choice is not None:
            (directory / "inputs").mkdir(exist_ok=True)
            for v, x in zip(f.inputs, choice.inputs):
                np.save(directory / "inputs" / f"{f.name}.{v.name}.npy", np.asarray(x))
        for mode, per_function in report.results.items():
            results = per_function.get(f.name)
            if results is None:
                continue
            (directory / mode).mkdir(exist_ok=True)
            for v, x in zip(f.outputs, results):
                np.save(directory / mode / f"{f.name}.{v.name}.npy", np.asarray(x))


def assert_parity(model_path, **kwargs) -> Report:
    """For a user's own tests: raises AssertionError with the report table
    unless every mode agrees with async."""
    report = parity(model_path, **kwargs)
    if not report.agrees:
        raise AssertionError("execution models disagree:\n" + report.table())
    return report


def write_json(report: Report, path) -> None:
    try:
        Path(path).write_text(json.dumps(report.to_json(), indent=2) + "\n")
    except OSError as e:
        raise UsageError(f"--json {path}: cannot write it ({e.strerror})") from None
