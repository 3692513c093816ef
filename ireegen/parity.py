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
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Callable

import numpy as np

from .compile_model import compile_model
from .compiler import Compiler, find_compiler
from .progress import progress
from .errors import IreegenError, UsageError
from .inputs import InputChoice, choose_inputs, given_inputs
from .models import load_model
from .modes import EXECUTION_MODELS, make_config
from .runners import RunError, RuntimeTools, find_runtime_tools, run_with_tool
from .signature import Function

REFERENCE = "async"
REFERENCES = ("async", "onnxruntime")  # --reference: what every mode is also compared with
DEFAULT_MODES = ("async", "inline-static", "inline-dynamic")
EXPECTED = "expected"  # the name of reference outputs given with --expected

# verdict -> does it fail the run (exit 1)?
VERDICTS = {
    "reference": False,
    "ok": False,
    "no-reference": False,
    "mismatch": True,
    "run-error": True,
    "ireegen-error": True,
}


@dataclass
class Row:
    function: str
    output: str
    mode: str
    max_abs_error: float | None
    max_rel_error: float | None
    verdict: str  # a VERDICTS key
    message: str = ""
    against: str = REFERENCE  # what the mode is compared with: async, or expected
    dtype: str = ""
    shape: list | None = None
    value_range: list | None = None  # [min, max] of this mode's output (finite values)


@dataclass
class Subject:
    """One thing to run: a mode's compiled module or built runner."""

    label: str
    run: Callable  # (Function, inputs) -> outputs; raises RunError


@dataclass
class Report:
    model: str
    compiler_version: str
    runtime: str
    modes: list
    rows: list = field(default_factory=list)
    reference: str = REFERENCE
    compile_errors: dict = field(default_factory=dict)  # mode -> message (refused or does not compile)
    ireegen_errors: dict = field(default_factory=dict)  # mode -> message (ireegen itself failed)
    inputs: dict = field(default_factory=dict)  # function -> InputChoice
    results: dict = field(default_factory=dict)  # mode -> function -> outputs (not in the JSON)

    @property
    def exit_code(self) -> int:
        if self.compile_errors:
            return 2
        failed = any(VERDICTS.get(r.verdict, True) for r in self.rows) or self.ireegen_errors
        return 1 if failed else 0

    @property
    def agrees(self) -> bool:
        return self.exit_code == 0

    @property
    def notes(self) -> list:
        return [c.note for c in self.inputs.values() if c.note]

    def to_json(self) -> dict:
        return {
            "model": self.model,
            "compiler_version": self.compiler_version,
            "runtime": self.runtime,
            "modes": self.modes,
            "reference": self.reference,
            "exit_code": self.exit_code,
            "compile_errors": self.compile_errors,
            "ireegen_errors": self.ireegen_errors,
            "inputs": {f: c.to_json() for f, c in self.inputs.items()},
            "notes": self.notes,
            "rows": [asdict(r) for r in self.rows],
        }

    def table(self) -> str:
        header = ("function", "output", "mode", "vs", "max abs err", "max rel err", "range", "verdict")
        lines = [header]
        for r in self.rows:
            lines.append((r.function, r.output, r.mode, "-" if r.verdict == "reference" else r.against,
                          _fmt(r.max_abs_error), _fmt(r.max_rel_error), _fmt_range(r.value_range), r.verdict))
        widths = [max(len(str(line[i])) for line in lines) for i in range(len(header))]
        text = [
            f"parity of {self.model} (compiler {self.compiler_version}, runtime {self.runtime})",
            "  ".join(h.ljust(w) for h, w in zip(header, widths)).rstrip(),
            "  ".join("-" * w for w in widths),
        ]
        text += ["  ".join(str(c).ljust(w) for c, w in zip(line, widths)).rstrip() for line in lines[1:]]
        text += [_inputs_line(c) for c in self.inputs.values()]
        text += [f"note: {n}" for n in self.notes]
        seen = set()
        for r in self.rows:
            if r.message and (r.mode, r.function) not in seen:
                seen.add((r.mode, r.function))
                text.append(f"{r.mode} @{r.function}: {r.message.strip().splitlines()[0][:300]}")
        for mode, message in self.ireegen_errors.items():
            text.append(f"{mode}: ireegen error: {message.strip()[:2000]}")
        for mode, message in self.compile_errors.items():
            text.append(f"{mode}: does not compile: {message.strip()[:2000]}")
        return "\n".join(text)


def _fmt(v) -> str:
    return "-" if v is None else f"{v:.3g}"


def _fmt_range(r) -> str:
    return "-" if not r else f"[{_fmt(r[0])}, {_fmt(r[1])}]"


def _inputs_line(c: InputChoice) -> str:
    if c.distribution == "given":
        return f"inputs @{c.function}: given"
    tried = f" (after {', '.join(c.tried)} gave degenerate outputs)" if c.tried else ""
    return f"inputs @{c.function}: {c.distribution}, seed {c.seed}{tried}"


# ---------------------------------------------------------------------------
# Given arrays: --inputs and --expected


def _load_npz(path: Path, flag: str):
    try:
        data = np.load(path, allow_pickle=False)
    except (OSError, ValueError, EOFError) as e:
        raise UsageError(f"{flag} {path}: not a readable .npz ({e})") from None
    if not hasattr(data, "files"):
        raise UsageError(f"{flag} {path}: is a single .npy array, not an .npz of named arrays")
    try:
        return {k: data[k] for k in data.files}
    except (OSError, ValueError, EOFError) as e:
        raise UsageError(f"{flag} {path}: not a readable .npz ({e})") from None


def _match_arrays(arrays: dict, functions, values_of, flag: str, what: str) -> dict:
    """Maps `<function>.<name>` keys (or `<name>` when the model has one
    function) to each function's values, strictly: every key must match, and
    a function gets all of its values or none."""
    single = len(functions) == 1
    out, used = {}, set()
    for f in functions:
        found = []
        for i, v in enumerate(values_of(f)):
            positional = f"{what[:-1]}{i}"  # input0, output1, ...: the names of models without names
            keys = (f"{f.name}.{v.name}", f"{f.name}.{positional}", v.name if single else None,
                    positional if single else None)
            for key in keys:
                if key is not None and key in arrays:
                    found.append(arrays[key])
                    used.add(key)
                    break
            else:
                found.append(None)
        present = [x is not None for x in found]
        if all(present):
            out[f.name] = found
        elif any(present):
            missing = [f"{f.name}.{v.name}" for v, x in zip(values_of(f), found) if x is None]
            raise UsageError(f"{flag}: has some {what} of @{f.name} but not {', '.join(missing)}")
    unknown = sorted(set(arrays) - used)
    if unknown:
        names = [f"{f.name}.{v.name}" for f in functions for v in values_of(f)]
        raise UsageError(f"{flag}: key {unknown[0]!r} names no {what[:-1]} of the model "
                         f"(expected keys like {', '.join(names[:6])})")
    return out


def load_inputs(path: Path, functions, flag: str = "--inputs") -> dict:
    """An .npz with arrays named `<function>.<input>` (or `<input>` when the
    model has one function); function -> list of arrays, each checked
    against the input's type and shape."""
    from .native_run import check_inputs

    out = _match_arrays(_load_npz(Path(path), flag), functions, lambda f: f.inputs, f"{flag} {path}", "inputs")
    for f in functions:
        if f.name not in out and f.inputs:
            raise UsageError(f"{flag} {path}: has no inputs for @{f.name} "
                             f"(add {', '.join(f'{f.name}.{v.name}' for v in f.inputs)})")
        if f.name in out and all(v.is_static for v in f.inputs):
            try:
                out[f.name] = check_inputs(f, out[f.name])
            except UsageError as e:
                raise UsageError(f"{flag} {path}: {e}") from None
    return out


def load_expected(path: Path, functions) -> dict:
    """Reference outputs: `<function>.<output>` (or `<output>`); function -> list."""
    out = _match_arrays(_load_npz(Path(path), "--expected"), functions, lambda f: f.outputs,
                        f"--expected {path}", "outputs")
    if not out:
        raise UsageError(f"--expected {path}: holds no output of the model")
    return out


# ---------------------------------------------------------------------------
# Modes


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


def module_subject(label: str, vmfb: Path, runtime: RuntimeTools | None) -> Subject:
    """A compiled VM module, run by iree-run-module in a child process."""

    def run(function: Function, inputs):
        # The VM checks element types: hand it the module's (int8 for an ONNX
        # uint8 value, same bytes) and give the caller's dtype back.
        inputs = [_as_dtype(x, v.module_dtype) for x, v in zip(inputs, function.inputs)]
        results = run_with_tool(vmfb, function.name, inputs, function.outputs, runtime)
        return [_as_dtype(r, v.dtype) for r, v in zip(results, function.outputs)]

    return Subject(label, run)


def _as_dtype(x, dtype: str):
    """`x` reinterpreted as `dtype` when only the signedness differs."""
    if not isinstance(x, np.ndarray) or dtype == "bfloat16" or x.dtype == np.dtype(dtype):
        return x
    if x.dtype.kind in "iu" and np.dtype(dtype).kind in "iu" and x.dtype.itemsize == np.dtype(dtype).itemsize:
        return x.view(dtype)
    return x


def _require_onnxruntime():
    try:
        import onnxruntime
    except ImportError:
        raise UsageError("--reference onnxruntime needs the onnxruntime package: "
                         "pip install 'ireegen[onnxruntime]'") from None
    return onnxruntime


def onnxruntime_outputs(model_path, function: Function, inputs) -> list:
    """The reference provider for --reference onnxruntime: runs the .onnx
    model in ONNX Runtime (CPU) on `inputs`, fed and read by ONNX name."""
    ort = _require_onnxruntime()
    options = ort.SessionOptions()
    options.log_severity_level = 3
    try:
        session = ort.InferenceSession(str(model_path), options, providers=["CPUExecutionProvider"])
        feeds = {v.name: np.asarray(x) for v, x in zip(function.inputs, inputs)}
        return session.run([v.name for v in function.outputs], feeds)
    except Exception as e:  # noqa: BLE001 - onnxruntime raises its own exception types
        raise RunError(f"onnxruntime: {str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__}") \
            from None


def runner_subject(label: str, runner) -> Subject:
    """A built runtimeless runner (native_run.Runner)."""
    return Subject(label, lambda function, inputs: runner.call(function.name, inputs)[0])


def prepare_mode(mode: str, model, model_path, extra_flags, toolchain: Toolchain, workdir: Path,
                 apply_workarounds: bool, runtimeless_target: dict | None = None,
                 input_shapes: dict | None = None) -> Subject:
    """Compiles one mode with its default formats for the host; runtimeless
    for `runtimeless_target` (triple, cpu, emulator; default the host)."""
    config = make_config(mode)
    if not config.execution_model.has_vm_module:
        from .emit import emit
        from .native_run import build_runner

        target = runtimeless_target or {}
        config = make_config(mode, target_triple=target.get("triple"), target_cpu=target.get("cpu"))
        # Parity compares the modes itself: no need for emit's own verification.
        emit(model_path, workdir / "out", config, name="parity", extra_flags=extra_flags,
             compiler=toolchain.compiler, verify=False, input_shapes=input_shapes)
        try:
            runner = build_runner(workdir / "out", workdir / "build", emulator=target.get("emulator"))
        except RunError as e:
            raise IreegenFailure(f"building the emitted C failed: {e}") from None
        return runner_subject(mode, runner)
    compiled = compile_model(model, "parity", config, extra_flags, toolchain.compiler, workdir, apply_workarounds)
    return module_subject(mode, workdir / compiled.module_file, toolchain.runtime)


class IreegenFailure(Exception):
    """ireegen's own step failed for one mode (not the model's fault)."""


# ---------------------------------------------------------------------------
# Comparing


def _errors(got: np.ndarray, want: np.ndarray):
    if got.dtype == bool or want.dtype == bool:
        got, want = got.astype(np.int64), want.astype(np.int64)
    got64, want64 = got.astype(np.float64), want.astype(np.float64)
    if got64.size == 0:
        return 0.0, 0.0
    diff = np.abs(got64 - want64)
    same_nonfinite = (got64 == want64) | (np.isnan(got64) & np.isnan(want64))
    diff = np.where(same_nonfinite, 0.0, diff)
    abs_err = float(np.nanmax(diff)) if not np.isnan(diff).all() else float("nan")
    rel = diff / np.maximum(np.abs(want64), np.finfo(np.float64).tiny)
    rel_err = float(np.nanmax(np.where(diff == 0, 0.0, rel)))
    return abs_err, rel_err


def value_range(x) -> list | None:
    a = np.asarray(x)
    if a.size == 0 or a.dtype.kind not in "iufb":
        return None
    if a.dtype.kind == "f":
        a = a[np.isfinite(a)]
        if a.size == 0:
            return None
    return [float(a.min()), float(a.max())]


def compare(function: str, output: str, mode: str, got, want, rtol: float, atol: float,
            against: str = REFERENCE, scale_atol: bool = False) -> Row:
    """One output against its reference.  With `scale_atol`, `atol` is
    relative to the reference's largest magnitude (at least 1): float
    results of a different vectorization or FMA contraction differ by a few
    ulps of the largest value, which a fixed atol mistakes for an error
    near zero."""
    got = np.asarray(got)
    described = dict(dtype=str(got.dtype), shape=list(got.shape), value_range=value_range(got))
    if want is None:
        return Row(function, output, mode, None, None, "no-reference", against=against, **described)
    want = np.asarray(want)
    if got.shape != want.shape:
        return Row(function, output, mode, None, None, "mismatch", f"shape {got.shape} != {want.shape}",
                   against=against, **described)
    abs_err, rel_err = _errors(got, want)
    if scale_atol and want.dtype.kind == "f" and want.size:
        finite = np.abs(want[np.isfinite(want)])
        atol *= max(1.0, float(finite.max()) if finite.size else 1.0)
    if want.dtype.kind in "iub" and got.dtype.kind in "iub":
        same = np.array_equal(got.astype(np.int64), want.astype(np.int64))
    else:
        same = np.allclose(got.astype(np.float64), want.astype(np.float64), rtol=rtol, atol=atol, equal_nan=True)
    return Row(function, output, mode, abs_err, rel_err, "ok" if same else "mismatch", against=against,
               **described)


def run_subjects(report: Report, functions, subjects: dict, given: dict, seed: int, rtol: float, atol: float,
                 expected: dict | None = None, extra_reference=None, scale_atol: bool = False) -> Report:
    """Runs every subject on every function and adds the rows.  `subjects`
    maps each mode to its Subject (the reference, async, first); modes
    missing from it were reported as compile or ireegen errors already.
    `expected` (function -> outputs) and `extra_reference` (a Subject, e.g.
    ONNX Runtime) are further references every mode is compared with."""
    expected = dict(expected or {})
    reference = subjects.get(REFERENCE)
    for f in functions:
        run_reference = (lambda inputs, f=f: reference.run(f, inputs)) if reference else None
        if f.name in given:
            choice = given_inputs(f, given[f.name], run_reference)
        elif run_reference is not None:
            choice = choose_inputs(f, seed, run_reference)
        else:  # no reference to judge the draws by: the first draw
            choice = choose_inputs(f, seed, _no_reference)
        report.inputs[f.name] = choice
        others = []  # (name, outputs) of the further references
        if f.name in expected:
            others.append((EXPECTED, expected[f.name]))
        if extra_reference is not None:
            try:
                others.append((extra_reference.label, extra_reference.run(f, choice.inputs)))
            except RunError as e:
                report.rows.append(Row(f.name, "*", extra_reference.label, None, None, "run-error", str(e)))
        failures, broken = {}, {}
        for mode in report.modes:
            subject = subjects.get(mode)
            if subject is None:
                continue
            if mode == REFERENCE and choice.reference_outputs is not None:
                report.results.setdefault(mode, {})[f.name] = choice.reference_outputs
                continue
            progress("running", f"@{f.name} in {mode}")
            try:
                report.results.setdefault(mode, {})[f.name] = subject.run(f, choice.inputs)
            except RunError as e:
                failures[mode] = str(e)
            except IreegenError as e:
                broken[mode] = str(e)
            except Exception as e:  # noqa: BLE001 - one mode's failure is its row, not the end of the run
                broken[mode] = f"{type(e).__name__}: {e}"
        ref_out = report.results.get(REFERENCE, {}).get(f.name)
        for mode in report.modes:
            results = report.results.get(mode, {}).get(f.name)
            for i, v in enumerate(f.outputs):
                if mode in failures:
                    report.rows.append(Row(f.name, v.name, mode, None, None, "run-error", failures[mode]))
                elif mode in broken:
                    report.rows.append(Row(f.name, v.name, mode, None, None, "ireegen-error", broken[mode]))
                elif results is None:
                    continue  # did not compile: reported in compile_errors / ireegen_errors
                elif mode == REFERENCE:
                    got = np.asarray(results[i])
                    report.rows.append(Row(f.name, v.name, mode, 0.0, 0.0, "reference", dtype=str(got.dtype),
                                           shape=list(got.shape), value_range=value_range(got)))
                else:
                    want = ref_out[i] if ref_out is not None and i < len(ref_out) else None
                    report.rows.append(compare(f.name, v.name, mode, results[i], want, rtol, atol,
                                               scale_atol=scale_atol))
                for against, outputs in others:
                    if results is not None:
                        report.rows.append(compare(f.name, v.name, mode, results[i], outputs[i], rtol, atol,
                                                   against=against))
    return report


def _no_reference(inputs):
    raise RunError("no reference")


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
) -> Report:
    """Runs the parity check; see the module docstring.  `runtimeless_target`
    ({"triple", "cpu", "emulator"}, each optional) builds and runs the
    runtimeless C for another target, a bare-metal board for instance; the
    other modes run on the host.  `input_shapes` pins an ONNX model's
    symbolic dimensions; `reference="onnxruntime"` also compares every mode,
    async included, with ONNX Runtime."""
    modes = list(modes)
    if reference not in REFERENCES:
        raise UsageError(f"--reference {reference!r}: choose from {', '.join(REFERENCES)}")
    if reference == "onnxruntime":
        if Path(model_path).suffix != ".onnx":
            raise UsageError(f"--reference onnxruntime: needs an .onnx model, not {model_path}")
        _require_onnxruntime()  # a missing package fails now, not after compiling
    for m in modes:
        if m not in EXECUTION_MODELS:
            raise UsageError(f"--execution-models {m!r}: unknown; choose from {', '.join(EXECUTION_MODELS)}")
    if REFERENCE not in modes:
        modes.insert(0, REFERENCE)
    modes = list(dict.fromkeys(modes))
    toolchain = toolchain or toolchain_from()
    model = load_model(model_path, input_shapes, toolchain.compiler)
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

    report = Report(str(model_path), toolchain.compiler.version, toolchain.description, modes, reference=reference)
    with tempfile.TemporaryDirectory(prefix="ireegen-parity-") as tmp:
        subjects = {}
        for mode in modes:
            workdir = Path(tmp) / mode
            workdir.mkdir()
            progress("compiling", f"{Path(model_path).name} for {mode}")
            try:
                subjects[mode] = prepare_mode(mode, model, model_path, extra_flags, toolchain, workdir,
                                              apply_workarounds, runtimeless_target, input_shapes)
            except IreegenError as e:
                report.compile_errors[mode] = str(e)
            except IreegenFailure as e:
                report.ireegen_errors[mode] = str(e)
            except Exception as e:  # noqa: BLE001 - ireegen's own failure: this mode's row, not the end
                report.ireegen_errors[mode] = f"{type(e).__name__}: {e}"
        extra = None
        if reference == "onnxruntime":
            extra = Subject("onnxruntime", lambda f, inputs: onnxruntime_outputs(model_path, f, inputs))
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
