"""Comparing outputs: one output against its reference, and running every
subject on every function into a Report."""

from __future__ import annotations

import numpy as np

from ireegen.check.inputs import choose_inputs, given_inputs
from ireegen.check.report import EXPECTED, REFERENCE, Report, Row
from ireegen.check.runners import RunError
from ireegen.common.errors import IreegenError
from ireegen.common.progress import progress


def _errors(got: np.ndarray, want: np.ndarray, atol: float = 0.0):
    """(max abs error, max rel error).  The relative error of an element is
    |got - want| / max(|want|, floor), floor = max(atol, 1e-12 x the largest
    |want|): relative where the reference is above the absolute tolerance,
    in units of atol where it is at or near zero (a bare |want| there would
    turn 1e-7 / 1e-304 into 1e+297 beside "ok")."""
    if got.dtype == bool or want.dtype == bool:
        got, want = got.astype(np.int64), want.astype(np.int64)
    got64, want64 = got.astype(np.float64), want.astype(np.float64)
    if got64.size == 0:
        return 0.0, 0.0
    with np.errstate(invalid="ignore"):  # inf - inf: equal non-finite values, zeroed below
        diff = np.abs(got64 - want64)
    same_nonfinite = (got64 == want64) | (np.isnan(got64) & np.isnan(want64))
    diff = np.where(same_nonfinite, 0.0, diff)
    abs_err = float(np.nanmax(diff)) if not np.isnan(diff).all() else float("nan")
    magnitude = np.abs(want64[np.isfinite(want64)])
    largest = float(magnitude.max()) if magnitude.size else 0.0
    floor = max(atol, 1e-12 * largest, np.finfo(np.float64).tiny)
    rel = diff / np.maximum(np.abs(want64), floor)
    rel_err = float(np.nanmax(np.where(diff == 0, 0.0, rel)))
    return abs_err, rel_err


# Slack on one step of a float output: its values are (q - zero) * scale in
# float32, so two neighbours differ by the scale within a float32 rounding.
STEP_SLACK = 1e-3


def _within_one_step(got: np.ndarray, want: np.ndarray, step: float) -> bool:
    """Every element at most one quantization step from the reference (NaN
    nowhere but where the reference has it)."""
    g, w = got.astype(np.float64), want.astype(np.float64)
    if not np.array_equal(np.isnan(g), np.isnan(w)):
        return False
    ok = np.isnan(g) | (np.abs(g - w) <= step * (1 + STEP_SLACK))
    return bool(ok.all())


def value_range(x) -> list | None:
    a = np.asarray(x)
    if a.size == 0 or a.dtype.kind not in "iufb":
        return None
    if a.dtype.kind == "f":
        a = a[np.isfinite(a)]
        if a.size == 0:
            return None
    return [float(a.min()), float(a.max())]


def compare(
    function: str,
    output: str,
    mode: str,
    got,
    want,
    rtol: float,
    atol: float,
    against: str = REFERENCE,
    scale_atol: bool = False,
    step: float | None = None,
) -> Row:
    """One output against its reference.  With `scale_atol`, `atol` is
    relative to the reference's largest magnitude (at least 1): float
    results of a different vectorization or FMA contraction differ by a few
    ulps of the largest value, which a fixed atol mistakes for an error
    near zero.  With `step` (a quantized output's one quantization step, in
    its own units), the output agrees when no element is more than one step
    away, and `rtol`/`atol` do not apply (docs/kernels-int8.md)."""
    got = np.asarray(got)
    described = dict(dtype=str(got.dtype), shape=list(got.shape), value_range=value_range(got))
    if want is None:
        return Row(function, output, mode, None, None, "no-reference", against=against, **described)
    want = np.asarray(want)
    if got.shape != want.shape:
        return Row(
            function,
            output,
            mode,
            None,
            None,
            "mismatch",
            f"shape {got.shape} != {want.shape}",
            against=against,
            **described,
        )
    if scale_atol and want.dtype.kind == "f" and want.size:
        finite = np.abs(want[np.isfinite(want)])
        atol *= max(1.0, float(finite.max()) if finite.size else 1.0)
    abs_err, rel_err = _errors(got, want, atol)
    if step is not None:
        same = _within_one_step(got, want, step)
    elif want.dtype.kind in "iub" and got.dtype.kind in "iub":
        same = np.array_equal(got.astype(np.int64), want.astype(np.int64))
    else:
        same = np.allclose(got.astype(np.float64), want.astype(np.float64), rtol=rtol, atol=atol, equal_nan=True)
    return Row(function, output, mode, abs_err, rel_err, "ok" if same else "mismatch", against=against, **described)


def run_subjects(
    report: Report,
    functions,
    subjects: dict,
    given: dict,
    seed: int,
    rtol: float,
    atol: float,
    expected: dict | None = None,
    extra_reference=None,
    scale_atol: bool = False,
    quantized_steps: bool = False,
) -> Report:
    """Runs every subject on every function and adds the rows.  `subjects`
    maps each mode to its Subject (the reference, async, first); modes
    missing from it were reported as compile or ireegen errors already.
    `expected` (function -> outputs) and `extra_reference` (a Subject, e.g.
    ONNX Runtime) are further references every mode is compared with.
    With `quantized_steps`, a quantized output (Value.step) is compared
    with the reference within one quantization step (emit's verification)."""
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
                    report.rows.append(
                        Row(
                            f.name,
                            v.name,
                            mode,
                            0.0,
                            0.0,
                            "reference",
                            dtype=str(got.dtype),
                            shape=list(got.shape),
                            value_range=value_range(got),
                        )
                    )
                else:
                    want = ref_out[i] if ref_out is not None and i < len(ref_out) else None
                    step = v.step if quantized_steps else None
                    report.rows.append(
                        compare(f.name, v.name, mode, results[i], want, rtol, atol, scale_atol=scale_atol, step=step)
                    )
                for against, outputs in others:
                    if results is not None:
                        report.rows.append(
                            compare(f.name, v.name, mode, results[i], outputs[i], rtol, atol, against=against)
                        )
    return report


def _no_reference(inputs):
    raise RunError("no reference")
