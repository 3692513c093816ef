"""Verification of a `.tflite` source against TFLite Micro itself.

The subject (what emit built, or its runnable twin) and TFLM's own host
interpreter (the `tflite-micro` package) run the same inputs: the whole
range of each integer input, and normal draws of each float input.  An
integer output must equal TFLM's bit for bit; a float output must be within
FLOAT_RTOL of TFLM's, relative to the output's largest magnitude.  Anything
else is refused in one line: which output, in how many elements, by how
much at most.
"""

from __future__ import annotations

import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

from ireegen.check.verify import VerificationError
from ireegen.common.errors import UsageError
from ireegen.frontend.tflite_import import TFLM_PACKAGE

# A float output's largest difference from TFLM's, relative to its largest
# magnitude.  Not relative to each element: an element that is a sum of
# larger terms of both signs (a convolution's, a mean's) carries the
# rounding of those terms, which differs with the order of the sum.
FLOAT_RTOL = 1e-5
DRAWS = 3  # input draws compared, seeds seed .. seed + DRAWS - 1
REFERENCE_NAME = "tflite-micro"
ARENA_HEADROOM = 8 << 20  # bytes of TFLM arena beyond ten times the model's size


def require_tflm():
    try:
        from tflite_micro.python.tflite_micro import runtime
    except ImportError:
        raise UsageError(
            f"verifying a .tflite model needs TFLite Micro's interpreter: pip install '{TFLM_PACKAGE}' (or --no-verify)"
        ) from None
    return runtime


def tflm_version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("tflite-micro")
    except PackageNotFoundError:
        return "unknown"


# Run in a child process: TFLM trusts the model (a missing optional input
# can crash it), and a crash must be a refusal, not ireegen's.
_CHILD = """
import sys
import numpy as np
from tflite_micro.python.tflite_micro import runtime
model, arena, count, inputs, outputs = sys.argv[1:6]
given = np.load(inputs)
interpreter = runtime.Interpreter.from_file(model, arena_size=int(arena))
for i in range(len(given.files)):
    interpreter.set_input(np.ascontiguousarray(given[f"x{i}"]), i)
interpreter.invoke()
np.savez(outputs, **{f"y{i}": np.array(interpreter.get_output(i)) for i in range(int(count))})
"""
CHILD_TIMEOUT = 600  # seconds TFLM may take on one draw


def tflm_outputs(model_path, inputs, count: int) -> list:
    """TFLM's `count` outputs of the .tflite model at `model_path` on
    `inputs` (both in the subgraph's order), computed in a child process."""
    require_tflm()
    model_path = Path(model_path)
    arena = model_path.stat().st_size * 10 + ARENA_HEADROOM
    with tempfile.TemporaryDirectory(prefix="ireegen-tflm-") as tmp:
        given, got = Path(tmp) / "inputs.npz", Path(tmp) / "outputs.npz"
        np.savez(given, **{f"x{i}": np.asarray(x) for i, x in enumerate(inputs)})
        try:
            proc = subprocess.run(
                [sys.executable, "-c", _CHILD, str(model_path.resolve()), str(arena), str(count), given, got],
                capture_output=True,
                text=True,
                timeout=CHILD_TIMEOUT,
            )
        except subprocess.TimeoutExpired:
            proc = None
        if proc is None or proc.returncode != 0:
            why = (
                f"did not finish within {CHILD_TIMEOUT} s"
                if proc is None
                else f"failed ({_last_line(proc.stderr) or f'exit status {proc.returncode}'})"
            )
            raise VerificationError(
                f"{model_path}: TFLite Micro's interpreter {why} on the model, so it cannot be verified "
                "(--no-verify skips this check)"
            )
        with np.load(got) as out:
            return [out[f"y{i}"] for i in range(count)]


def _last_line(text: str) -> str:
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    return lines[-1][:200] if lines else ""


def draw_inputs(function, seed: int) -> list:
    """One draw per input: every value of an integer type equally likely, floats normal."""
    rng = np.random.default_rng(seed)
    out = []
    for v in function.inputs:
        dtype = np.dtype(v.dtype)
        shape = tuple(v.shape)
        if dtype.kind in "iu":
            info = np.iinfo(dtype)
            out.append(rng.integers(info.min, int(info.max) + 1, shape).astype(dtype))
        else:
            out.append(rng.standard_normal(shape).astype(dtype))
    return out


def _difference(got: np.ndarray, want: np.ndarray) -> tuple:
    """(elements that differ beyond the rule, the largest difference)."""
    if got.shape != want.shape:
        got = got.reshape(want.shape) if got.size == want.size else got
    diff = np.abs(got.astype(np.float64) - want.astype(np.float64))
    if want.dtype.kind == "f":
        peak = float(np.max(np.abs(want))) if want.size else 0.0
        bound = FLOAT_RTOL * peak
        bad = ~(diff <= bound)
    else:
        bad = diff != 0
    return int(np.count_nonzero(bad)), float(diff.max()) if diff.size else 0.0


def compare_with_tflm(model_path, function, subject, seed: int, given: list | None = None) -> dict:
    """Runs `subject` (a check.subjects.Subject) and TFLM on DRAWS draws of
    inputs (and `given`, the --verify-inputs); the manifest's record of the
    comparison, or VerificationError."""
    model_path = Path(model_path)
    require_tflm()
    draws = [draw_inputs(function, seed + k) for k in range(DRAWS)] + ([given] if given else [])
    worst = {v.name: 0.0 for v in function.outputs}
    for inputs in draws:
        want = tflm_outputs(model_path, inputs, len(function.outputs))
        got = subject.run(function, inputs)
        if len(want) != len(got):
            raise VerificationError(
                f"{model_path}: TFLite Micro returns {len(want)} outputs, the emitted code {len(got)}, "
                "so nothing was written"
            )
        for v, g, w in zip(function.outputs, got, want):
            g = np.asarray(g).view(w.dtype) if np.asarray(g).dtype.itemsize == w.dtype.itemsize else np.asarray(g)
            count, largest = _difference(g, w)
            if count:
                rule = "bit for bit" if w.dtype.kind != "f" else f"within {FLOAT_RTOL:g} of its largest magnitude"
                raise VerificationError(
                    f"{model_path}: output {v.name!r} differs from TFLite Micro's ({rule}) in {count} of {w.size} "
                    f"elements, by up to {largest:g}, so nothing was written (--no-verify skips this check)"
                )
            worst[v.name] = max(worst[v.name], largest)
    return {
        "reference": f"{REFERENCE_NAME} {tflm_version()}",
        "draws": len(draws),
        "seed": seed,
        "outputs": {name: {"max_abs_error": err} for name, err in worst.items()},
    }
