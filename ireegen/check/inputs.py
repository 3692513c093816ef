"""Inputs that exercise a model.

Seeded random inputs can leave a model's outputs degenerate: a ReLU network
fed the wrong range returns zeros, a loop whose trip count comes from the
data runs no iteration, a mask is all false.  Two execution models then
"agree" on numbers that prove nothing.  So inputs are drawn from a table of
distributions, in order, and the first draw whose outputs (computed by the
reference) are not degenerate is used:

- all zero, constant, or all NaN/Inf (for outputs of more than one element);
- identical for two different draws from the same distribution (the output
  does not depend on the inputs).

Then, for a function of several inputs, each input is redrawn alone from
each distribution, the others kept: a model may use one input as data and
another as a length or a mask that must be in range first.  The last
distribution, `counts(0..5)`, draws small non-negative integers for every
input, floats included: the lengths, counts and indices a sequence model
takes (an LSTM with sequence lengths outputs zeros for any negative or
fractional length).

If nothing works, the least degenerate draw is used and the choice says so:
the comparison then proves little, and emit's verification says "not
exercised" instead of "verified".
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ireegen.frontend.dtypes import bfloat16_from_float32
from ireegen.frontend.signature import Function, Value

DYNAMIC_DIM = 3  # size given to each dynamic dimension of generated inputs
SECOND_DRAW = 1000  # seed offset of the draw that checks inputs matter
DRAW_STRIDE = 100  # seed offset between the draws of one distribution
ALONE_DRAW = 2000  # seed offset of the draws that vary one input alone
ALONE_MAX_INPUTS = 8  # inputs varied alone at most (each costs a reference run per distribution)


def _ints(low: int, high: int):
    return lambda v, rng, shape, dtype: rng.integers(low, high, shape).astype(dtype)


def _floats(sample):
    return lambda v, rng, shape, dtype: sample(rng, shape).astype(dtype)


@dataclass(frozen=True)
class Distribution:
    name: str
    floats: object  # (value, rng, shape, dtype) -> array
    signed: object  # signed integers that are data, not indices
    indices: object  # int64 / index-like inputs: sizes, counts, positions
    unsigned: object
    draws: int = 1  # draws tried (seeds seed + k, + k + DRAW_STRIDE, ...) before the next distribution


# Tried in order.  The first is the historical default, so reports of models
# that it already exercises do not change.
DISTRIBUTIONS = (
    Distribution("normal", _floats(lambda rng, s: rng.standard_normal(s)), _ints(-10, 11), _ints(0, 4), _ints(0, 10)),
    Distribution(
        "uniform(0.5,2)", _floats(lambda rng, s: rng.uniform(0.5, 2.0, s)), _ints(1, 8), _ints(1, 8), _ints(1, 8)
    ),
    Distribution(
        "normal(1,3)",
        _floats(lambda rng, s: 1.0 + 3.0 * rng.standard_normal(s)),
        _ints(-100, 101),
        _ints(0, 16),
        _ints(0, 200),
    ),
    Distribution(
        "uniform(0,1)", _floats(lambda rng, s: rng.uniform(0.0, 1.0, s)), _ints(0, 2), _ints(0, 2), _ints(0, 2)
    ),
    # Several draws: a length vector must often hold a 0 at the right place
    # (an LSTM that runs between the first and the last zero length).
    Distribution(
        "counts(0..5)", _floats(lambda rng, s: rng.integers(0, 6, s)), _ints(0, 6), _ints(0, 6), _ints(0, 6), 8
    ),
)


def draw_value(v: Value, dist: Distribution, rng: np.random.Generator):
    shape = tuple(DYNAMIC_DIM if d is None else d for d in v.shape)
    if v.dtype == "bfloat16":  # numpy has none: ml_dtypes' (or bit patterns without it)
        out = bfloat16_from_float32(np.asarray(dist.floats(v, rng, shape, np.float32), np.float32))
        return out if v.is_tensor else out.reshape(())[()]
    dtype = np.dtype(v.dtype)
    q = v.quantization
    if q is not None and q.dtype == v.dtype:
        # A quantized input (--quantized-io): the distribution's real values,
        # quantized as the caller would.
        real = dist.floats(v, rng, shape, np.float32)
        info = np.iinfo(dtype)
        out = np.clip(np.rint(real / np.float32(q.scale)) + q.zero_point, info.min, info.max).astype(dtype)
    elif dtype.kind == "f":
        out = dist.floats(v, rng, shape, dtype)
    elif dtype.kind == "b":
        out = rng.integers(0, 2, shape).astype(bool)
    elif dtype.kind == "u":
        out = dist.unsigned(v, rng, shape, dtype)
    elif dtype == np.int64 or v.name.endswith("index"):
        out = dist.indices(v, rng, shape, dtype)
    else:
        # Safe for +, -, * without overflow, including in 8-bit types.
        out = np.clip(dist.signed(v, rng, shape, np.int64), -100, 100).astype(dtype)
    out = np.asarray(out, dtype=dtype).reshape(shape)  # numpy turns 0-d results into scalars
    # A scalar argument is a numpy scalar; a 0-d tensor stays a 0-d array.
    return out if v.is_tensor else dtype.type(out.reshape(()).item())


def draw(function: Function, seed: int, dist: Distribution = DISTRIBUTIONS[0]) -> list:
    rng = np.random.default_rng(seed)
    return [draw_value(v, dist, rng) for v in function.inputs]


def degenerate_reason(value) -> str | None:
    """Why one output proves little on its own, or None."""
    a = np.asarray(value)
    if a.size == 0:
        return None
    if a.dtype.kind in "fc":
        finite = np.isfinite(a)
        if not finite.any():
            return "all NaN/Inf"
    if a.size > 1 and a.dtype.kind == "b":
        return "constant" if a.all() or not a.any() else None
    if not np.any(a):
        return "all zero"
    if a.size > 1 and np.all(a == a.reshape(-1)[0]):
        return "constant"
    return None


@dataclass
class InputChoice:
    """The inputs used for one function, and why."""

    function: str
    inputs: list
    distribution: str  # a DISTRIBUTIONS name, or "given"
    seed: int | None
    degenerate: dict = field(default_factory=dict)  # output name -> reason (of the chosen draw)
    tried: list = field(default_factory=list)  # distribution names tried before the chosen one
    reference_outputs: list | None = None  # the reference's outputs on these inputs, if run

    @property
    def note(self) -> str:
        if not self.degenerate:
            return ""
        what = ", ".join(f"{k} {v}" for k, v in self.degenerate.items())
        if self.distribution == "given":
            return f"@{self.function}: on the given inputs {what}; the comparison proves little"
        return f"@{self.function}: outputs are degenerate for every input tried ({what}); the comparison proves little"

    def to_json(self) -> dict:
        return {
            "distribution": self.distribution,
            "seed": self.seed,
            "tried": self.tried,
            "degenerate": self.degenerate,
            "inputs": [_describe(x) for x in self.inputs],
        }


def _describe(x) -> dict:
    a = np.asarray(x)
    out = {"dtype": str(a.dtype), "shape": list(a.shape)}
    if a.size and a.dtype.kind in "iufb":
        out["range"] = [_plain(a.min()), _plain(a.max())]
    return out


def _plain(v):
    v = np.asarray(v).item()
    return v if not isinstance(v, float) or np.isfinite(v) else str(v)


def _degenerate_outputs(function: Function, outputs, other) -> dict:
    reasons = {}
    for i, v in enumerate(function.outputs):
        reason = degenerate_reason(outputs[i])
        if reason is None and other is not None:
            a, b = np.asarray(outputs[i]), np.asarray(other[i])
            # One element (a count, a flag) may well repeat by chance; only tensors are judged.
            if a.size > 1 and a.shape == b.shape and np.array_equal(a, b, equal_nan=a.dtype.kind in "fc"):
                reason = "the same for two different inputs"
        if reason:
            reasons[v.name] = reason
    return reasons


def choose_inputs(function: Function, seed: int, run_reference) -> InputChoice:
    """Draws inputs for `function` until the reference's outputs are not
    degenerate.  `run_reference(inputs) -> outputs` may raise; a draw the
    reference fails on counts as degenerate, and if every draw fails the
    first draw is returned so that the caller reports the failure."""
    best = None
    tried = []
    draws = [(k, j, dist) for k, dist in enumerate(DISTRIBUTIONS) for j in range(dist.draws)]
    for k, j, dist in draws:
        s = seed + k + j * DRAW_STRIDE
        inputs = draw(function, s, dist)
        try:
            outputs = run_reference(inputs)
        except Exception:  # noqa: BLE001 - the caller's reference run reports it
            tried.append(dist.name)
            continue
        reasons = _degenerate_outputs(function, outputs, None)
        if not reasons and function.inputs:
            try:
                second = run_reference(draw(function, s + SECOND_DRAW, dist))
            except Exception:  # noqa: BLE001
                second = None
            reasons = _degenerate_outputs(function, outputs, second)
        choice = InputChoice(function.name, inputs, dist.name, s, reasons, list(tried), outputs)
        if not reasons:
            return choice
        if best is None or len(reasons) < len(best.degenerate):
            best = choice
        tried.append(dist.name)
        if not function.inputs:
            break  # nothing to redraw
    if best is None:
        return InputChoice(function.name, draw(function, seed), DISTRIBUTIONS[0].name, seed, {}, tried)
    best.tried = [t for t in tried if t != best.distribution]
    return _vary_each_alone(function, best, run_reference) or best


def _vary_each_alone(function: Function, base: InputChoice, run_reference) -> InputChoice | None:
    """The first choice, from `base` with one input redrawn from one
    distribution, whose outputs are not degenerate and differ from base's
    (the input moved them); None if there is none."""
    if not 2 <= len(function.inputs) <= ALONE_MAX_INPUTS or base.reference_outputs is None:
        return None
    for i, v in enumerate(function.inputs):
        for k, dist in enumerate(DISTRIBUTIONS):
            rng = np.random.default_rng(base.seed + ALONE_DRAW + i * len(DISTRIBUTIONS) + k)
            inputs = list(base.inputs)
            inputs[i] = draw_value(v, dist, rng)
            try:
                outputs = run_reference(inputs)
            except Exception:  # noqa: BLE001 - out of the model's range: try the next
                continue
            if not _degenerate_outputs(function, outputs, base.reference_outputs):
                how = f"{base.distribution}, {v.name} from {dist.name}"
                tried = base.tried + [base.distribution]
                return InputChoice(function.name, inputs, how, base.seed, {}, tried, outputs)
    return None


def given_inputs(function: Function, inputs, run_reference=None) -> InputChoice:
    """Inputs the user gave; still checked, so the report can warn."""
    outputs = None
    reasons = {}
    if run_reference is not None:
        try:
            outputs = run_reference(inputs)
            reasons = _degenerate_outputs(function, outputs, None)
        except Exception:  # noqa: BLE001 - reported by the caller's own run
            outputs = None
    return InputChoice(function.name, list(inputs), "given", None, reasons, [], outputs)
