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

Generated inputs are chosen so that the reference's outputs are not
degenerate (see inputs.py).  A failure inside one mode, ireegen's own
included, becomes that mode's rows; it never ends the run.
"""

from __future__ import annotations

import json
import tempfile
from dataclasses import dataclass
from pathlib import Path

import numpy as np

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
from ireegen.frontend.models import load_model

REFERENCES = ("async", "onnxruntime")  # --reference: what every mode is also compared with
DEFAULT_MODES = ("async", "inline-static", "inline-dynamic")
# --kernels: every mode but the reference links them, and its label says so.
KERNELS_SUFFIX = "+kernels"

__all__ = [
    "DEFAULT_MODES",
    "REFERENCES",
    "Report",
    "Toolchain",
    "assert_parity",
    "parity",
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


def prepare_mode(
    mode: str,
    model,
    model_path,
    extra_flags,
    toolchain: Toolchain,
    workdir: Path,
    apply_workarounds: bool,
    runtimeless_target: dict | None = None,
    input_shapes: dict | None = None,
    input_values: dict | None = None,
    kernels=None,
) -> Subject:
    """Compiles one mode with its default formats for the host; runtimeless
    for `runtimeless_target` (triple, cpu, emulator; default the host).
    `kernels` (a KernelLink) links the user's kernels (--kernels)."""
    label = f"{mode}{KERNELS_SUFFIX}" if kernels is not None else mode
    config = make_config(mode)
    if not config.execution_model.has_vm_module:
        target = runtimeless_target or {}
        config = make_config(mode, target_triple=target.get("triple"), target_cpu=target.get("cpu"))
        # Parity compares the modes itself: no need for emit's own verification.
        emit(
            model_path,
            workdir / "out",
            config,
            name="parity",
            extra_flags=extra_flags,
            compiler=toolchain.compiler,
            verify=False,
            input_shapes=input_shapes,
            input_values=input_values,
            kernels=kernels,
        )
        try:
            runner = build_runner(workdir / "out", workdir / "build", emulator=target.get("emulator"))
        except RunError as e:
            raise IreegenFailure(f"building the emitted C failed: {e}") from None
        return runner_subject(label, runner)
    compiled = compile_model(
        model, "parity", config, extra_flags, toolchain.compiler, workdir, apply_workarounds, kernels
    )
    return module_subject(label, workdir / compiled.module_file, toolchain.runtime)


class IreegenFailure(Exception):
    """ireegen's own step failed for one mode (not the model's fault)."""


# ---------------------------------------------------------------------------


def parity(
    model_path,
    modes=DEFAULT_MODES,
    function: str | None = None,
    inputs_file=None,
    inputs: dict | None = None,
    rtol: float = 1e-5,
    atol: float = 1e-6,
    seed: int = 0,
    toolchain: Toolchain | None = None,
    extra_flags=(),
    apply_workarounds: bool = True,
    expected_file=None,
    expected: dict | None = None,
    save_outputs=None,
    runtimeless_target: dict | None = None,
    input_shapes: dict | None = None,
    reference: str = REFERENCE,
    input_values: dict | None = None,
    kernels=None,
) -> Report:
    """Runs the parity check; see the module docstring.  `runtimeless_target`
    ({"triple", "cpu", "emulator"}, each optional) builds and runs the
    runtimeless C for another target, a bare-metal board for instance; the
    other modes run on the host.  `input_shapes` pins an ONNX model's
    symbolic dimensions and `input_values` makes its inputs constants
    (ONNX Runtime is fed them); `reference="onnxruntime"` also compares every mode,
    async included, with ONNX Runtime.  `kernels` (a --kernels SPEC) links
    the user's kernels into every mode, async too (`async+kernels`), and
    compares them with async without them."""
    modes = list(modes)
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
    modes = list(dict.fromkeys(modes))
    link = None
    if kernels is not None:
        from ireegen.cbuild.kernels import kernel_link
        from ireegen.frontend.kernel_spec import load_kernel_spec

        link = kernel_link(load_kernel_spec(kernels))
    # (row label, execution model, kernels)
    runs = [(m, m, None) for m in modes if link is None or m == REFERENCE]
    if link is not None:
        runs += [(f"{m}{KERNELS_SUFFIX}", m, link) for m in modes]
    toolchain = toolchain or toolchain_from()
    model = load_model(model_path, input_shapes, toolchain.compiler, input_values, onnx_rewrites=apply_workarounds)
    everything = list(model.functions)
    functions = [model.function(function)] if function else everything
    given = dict(inputs or {})
    if inputs_file:
        given.update(load_inputs(Path(inputs_file), everything))
    wanted = dict(expected or {})
    if expected_file:
        wanted.update(load_expected(Path(expected_file), everything))
    if save_outputs is not None:
        save_outputs = _check_writable_dir(Path(save_outputs))

    labels = [label for label, _, _ in runs]
    report = Report(str(model_path), toolchain.compiler.version, toolchain.description, labels, reference=reference)
    with tempfile.TemporaryDirectory(prefix="ireegen-parity-") as tmp:
        subjects = {}
        for label, mode, with_kernels in runs:
            workdir = Path(tmp) / label
            workdir.mkdir()
            progress("compiling", f"{Path(model_path).name} for {label}")
            try:
                subjects[label] = prepare_mode(
                    mode,
                    model,
                    model_path,
                    extra_flags,
                    toolchain,
                    workdir,
                    apply_workarounds,
                    runtimeless_target,
                    input_shapes,
                    input_values,
                    with_kernels,
                )
            except IreegenError as e:
                report.compile_errors[label] = str(e)
            except IreegenFailure as e:
                report.ireegen_errors[label] = str(e)
            except Exception as e:  # noqa: BLE001 - ireegen's own failure: this mode's row, not the end
                report.ireegen_errors[label] = f"{type(e).__name__}: {e}"
        extra = None
        if reference == "onnxruntime":
            from ireegen.frontend.onnx_import import input_value_arrays

            fixed = input_value_arrays(model_path, input_shapes, input_values)
            extra = Subject("onnxruntime", lambda f, inputs: onnxruntime_outputs(model_path, f, inputs, fixed))
        run_subjects(report, functions, subjects, given, seed, rtol, atol, wanted, extra)
    if save_outputs is not None:
        write_outputs(report, functions, save_outputs)
    return report


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
