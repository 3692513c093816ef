"""The parity harness: compile one model in several execution models with
exactly the code `emit` uses, run every mode on the same inputs, and compare
every output of every function against async.

async runs in-process through iree.runtime; the inline models run through
iree-run-module (the Python runtime cannot load them); runtimeless C is
emitted and built into a runner (`ireegen run`), under qemu-user for a
foreign target.  With another IREE
release's tools (`--iree-compile`, `--iree-runtime-bin` or `--iree-venv`)
every mode goes through that release's iree-run-module.
"""

from __future__ import annotations

import json
import tempfile
from dataclasses import asdict, dataclass, field
from pathlib import Path

import numpy as np

from .compile_model import compile_model
from .compiler import Compiler, find_compiler
from .dtypes import bfloat16_from_float32
from .progress import progress
from .errors import IreegenError, UsageError
from .models import load_model
from .modes import EXECUTION_MODELS, make_config
from .runners import RunError, RuntimeTools, find_runtime_tools, run_in_process, run_with_tool
from .signature import Function, Value

REFERENCE = "async"
DEFAULT_MODES = ("async", "inline-static", "inline-dynamic")
DYNAMIC_DIM = 3  # size given to each dynamic dimension of generated inputs


@dataclass
class Row:
    function: str
    output: str
    mode: str
    max_abs_error: float | None
    max_rel_error: float | None
    verdict: str  # "ok", "mismatch", "run-error", "compile-error", "reference"
    message: str = ""


@dataclass
class Report:
    model: str
    compiler_version: str
    runtime: str
    modes: list
    rows: list = field(default_factory=list)
    compile_errors: dict = field(default_factory=dict)  # mode -> message
    results: dict = field(default_factory=dict)  # mode -> function -> outputs (not in the JSON)

    @property
    def exit_code(self) -> int:
        if self.compile_errors:
            return 2
        return 1 if any(r.verdict not in ("ok", "reference") for r in self.rows) else 0

    @property
    def agrees(self) -> bool:
        return self.exit_code == 0

    def to_json(self) -> dict:
        return {
            "model": self.model,
            "compiler_version": self.compiler_version,
            "runtime": self.runtime,
            "modes": self.modes,
            "exit_code": self.exit_code,
            "compile_errors": self.compile_errors,
            "rows": [asdict(r) for r in self.rows],
        }

    def table(self) -> str:
        header = ("function", "output", "mode", "max abs err", "max rel err", "verdict")
        lines = [header]
        for r in self.rows:
            fmt = lambda v: "-" if v is None else f"{v:.3g}"  # noqa: E731
            lines.append((r.function, r.output, r.mode, fmt(r.max_abs_error), fmt(r.max_rel_error), r.verdict))
        widths = [max(len(str(line[i])) for line in lines) for i in range(len(header))]
        text = [
            f"parity of {self.model} (compiler {self.compiler_version}, runtime {self.runtime})",
            "  ".join(h.ljust(w) for h, w in zip(header, widths)),
            "  ".join("-" * w for w in widths),
        ]
        text += ["  ".join(str(c).ljust(w) for c, w in zip(line, widths)) for line in lines[1:]]
        for r in self.rows:
            if r.message:
                text.append(f"{r.mode} @{r.function}: {r.message.strip().splitlines()[0][:300]}")
        for mode, message in self.compile_errors.items():
            text.append(f"{mode}: does not compile: {message.strip()[:2000]}")
        return "\n".join(text)


def _random_value(v: Value, rng: np.random.Generator) -> np.ndarray:
    shape = tuple(DYNAMIC_DIM if d is None else d for d in v.shape)
    dtype = np.dtype(v.dtype) if v.dtype != "bfloat16" else np.dtype("float32")
    if v.dtype == "bfloat16":  # numpy has none: ml_dtypes' (or bit patterns without it)
        out = bfloat16_from_float32(rng.standard_normal(shape).astype(np.float32))
        return out if v.is_tensor else out.reshape(())[()]
    if dtype.kind == "f":
        out = rng.standard_normal(shape).astype(dtype)
    elif dtype.kind == "b":
        out = rng.integers(0, 2, shape).astype(bool)
    elif dtype.kind == "u":
        out = rng.integers(0, 10, shape).astype(dtype)
    elif dtype == np.int64 or v.name.endswith("index"):
        # 64-bit integers are often indices or sizes: keep them small and non-negative.
        out = rng.integers(0, 4, shape).astype(dtype)
    else:
        # Safe for +, -, * without overflow, including in 8-bit types.
        out = rng.integers(-10, 11, shape).astype(dtype)
    # A scalar argument is a numpy scalar; a 0-d tensor stays a 0-d array.
    return out if v.is_tensor else dtype.type(out.reshape(()).item())


def make_inputs(function: Function, seed: int) -> list:
    rng = np.random.default_rng(seed)
    return [_random_value(v, rng) for v in function.inputs]


def load_inputs(path: Path, functions) -> dict:
    """An .npz with arrays named `<function>.input<i>` (or `input<i>` when the
    model has one function)."""
    try:
        data = np.load(path)
    except (OSError, ValueError) as e:
        raise UsageError(f"--inputs {path}: not a readable .npz ({e})") from None
    out = {}
    for f in functions:
        values = []
        for i, v in enumerate(f.inputs):
            for key in (f"{f.name}.{v.name}", v.name if len(functions) == 1 else None):
                if key and key in data:
                    values.append(data[key])
                    break
            else:
                break
        if len(values) == len(f.inputs):
            out[f.name] = values
        elif values:
            raise UsageError(f"--inputs {path}: has some but not all inputs of @{f.name}")
    return out


@dataclass
class Toolchain:
    """The IREE release to check against."""

    compiler: Compiler
    runtime: RuntimeTools | None  # None: the installed packages (async in-process)

    @property
    def description(self) -> str:
        return str(self.runtime.bin_dir) if self.runtime else "iree-base-runtime (in-process for async)"


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


def _prepare(mode: str, model, model_path, extra_flags, toolchain: Toolchain, workdir: Path,
             apply_workarounds: bool):
    """Compiles one mode: the module's path, or for runtimeless a built runner."""
    config = make_config(mode)
    if not config.execution_model.has_vm_module:
        from .emit import emit
        from .native_run import build_runner

        emit(model_path, workdir / "out", config, name="parity", extra_flags=extra_flags, compiler=toolchain.compiler)
        try:
            return build_runner(workdir / "out", workdir / "build")
        except RunError as e:
            raise UsageError(str(e)) from None
    compiled = compile_model(model, "parity", config, extra_flags, toolchain.compiler, workdir, apply_workarounds)
    return workdir / compiled.module_file


def _run(mode: str, prepared, function: Function, inputs, toolchain: Toolchain) -> list:
    """Runs what _prepare made: a module's path, or a runtimeless runner."""
    if not isinstance(prepared, Path):
        return prepared.call(function.name, inputs)[0]
    vmfb = prepared
    if mode == REFERENCE and toolchain.runtime is None:
        return run_in_process(vmfb, function.name, inputs)
    return run_with_tool(vmfb, function.name, inputs, function.outputs, toolchain.runtime)


def _errors(got: np.ndarray, want: np.ndarray):
    if got.dtype == bool or want.dtype == bool:
        got, want = got.astype(np.int64), want.astype(np.int64)
    got64, want64 = got.astype(np.float64), want.astype(np.float64)
    if got64.size == 0:
        return 0.0, 0.0
    diff = np.abs(got64 - want64)
    abs_err = float(np.nanmax(diff)) if not np.isnan(diff).all() else float("nan")
    rel = diff / np.maximum(np.abs(want64), np.finfo(np.float64).tiny)
    rel_err = float(np.nanmax(np.where(diff == 0, 0.0, rel)))
    return abs_err, rel_err


def _compare(function: str, output: str, mode: str, got, want, rtol: float, atol: float) -> Row:
    if want is None:
        return Row(function, output, mode, None, None, "no-reference")
    got, want = np.asarray(got), np.asarray(want)
    if got.shape != want.shape:
        return Row(function, output, mode, None, None, "mismatch", f"shape {got.shape} != {want.shape}")
    abs_err, rel_err = _errors(got, want)
    same = np.allclose(got.astype(np.float64), want.astype(np.float64), rtol=rtol, atol=atol, equal_nan=True)
    return Row(function, output, mode, abs_err, rel_err, "ok" if same else "mismatch")


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
) -> Report:
    """Runs the parity check; see the module docstring."""
    modes = list(modes)
    for m in modes:
        if m not in EXECUTION_MODELS:
            raise UsageError(f"--execution-models {m!r}: unknown; choose from {', '.join(EXECUTION_MODELS)}")
    if REFERENCE not in modes:
        modes.insert(0, REFERENCE)
    toolchain = toolchain or toolchain_from()
    model = load_model(model_path)
    functions = [model.function(function)] if function else list(model.functions)
    given = dict(inputs or {})
    if inputs_file:
        given.update(load_inputs(Path(inputs_file), functions))
    feeds = {f.name: given.get(f.name) or make_inputs(f, seed) for f in functions}

    report = Report(str(model_path), toolchain.compiler.version, toolchain.description, modes)
    with tempfile.TemporaryDirectory(prefix="ireegen-parity-") as tmp:
        modules = {}
        for mode in modes:
            workdir = Path(tmp) / mode
            workdir.mkdir()
            progress("compiling", f"{Path(model_path).name} for {mode}")
            try:
                modules[mode] = _prepare(mode, model, model_path, extra_flags, toolchain, workdir, apply_workarounds)
            except IreegenError as e:
                report.compile_errors[mode] = str(e)
        for f in functions:
            failures = {}  # mode -> run-time error message
            for mode in modes:
                if mode in modules:
                    progress("running", f"@{f.name} in {mode}")
                    try:
                        report.results.setdefault(mode, {})[f.name] = _run(mode, modules[mode], f, feeds[f.name],
                                                                           toolchain)
                    except RunError as e:
                        failures[mode] = str(e)
            reference = report.results.get(REFERENCE, {}).get(f.name)
            # Rows in mode order: the reference first, each mode's outputs together.
            for mode in modes:
                results = report.results.get(mode, {}).get(f.name)
                for i, v in enumerate(f.outputs):
                    if mode in failures:
                        row = Row(f.name, v.name, mode, None, None, "run-error", failures[mode])
                    elif results is None:
                        continue  # did not compile: reported in compile_errors
                    elif mode == REFERENCE:
                        row = Row(f.name, v.name, mode, 0.0, 0.0, "reference")
                    else:
                        row = _compare(f.name, v.name, mode, results[i], reference[i] if reference else None,
                                       rtol, atol)
                    report.rows.append(row)
    return report


def assert_parity(model_path, **kwargs) -> Report:
    """For a user's own tests: raises AssertionError with the report table
    unless every mode agrees with async."""
    report = parity(model_path, **kwargs)
    if not report.agrees:
        raise AssertionError("execution models disagree:\n" + report.table())
    return report


def write_json(report: Report, path) -> None:
    Path(path).write_text(json.dumps(report.to_json(), indent=2) + "\n")
