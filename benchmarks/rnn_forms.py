"""Benchmark: every GRU, LSTM and RNN form (tests/onnx_rnn_models.py)
against ONNX Runtime, in async and runtimeless, with ireegen's rewrites
(or, with --raw, without them: what IREE's own lowering does).  Prints one
line per form: each mode's largest error relative to the output's range,
or the refusal.

    python benchmarks/rnn_forms.py [--raw] [--modes async,runtimeless] [--only REGEX]
"""

import argparse
import re
import sys
import tempfile
from dataclasses import replace
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))

from onnx_rnn_models import DIRECTIONS, RnnForm, reference_outputs, write_rnn_model  # noqa: E402

from ireegen.common.errors import IreegenError  # noqa: E402
from ireegen.parity import parity  # noqa: E402


def matrix() -> list:
    """Each op in each direction plainly, then each option on its own (in
    every direction), then a few together."""
    forms = []
    for op in ("GRU", "LSTM", "RNN"):
        for direction in DIRECTIONS:
            base = RnnForm(op, direction)
            d = 2 if direction == "bidirectional" else 1
            acts = {"GRU": ("Sigmoid", "Tanh"), "LSTM": ("Sigmoid", "Tanh", "Tanh"), "RNN": ("Tanh",)}[op]
            other = {"GRU": ("HardSigmoid", "Relu"), "LSTM": ("HardSigmoid", "Tanh", "Relu"), "RNN": ("Relu",)}[op]
            variants = [
                base,
                replace(base, layout=1),
                replace(base, initial_h=True),
                replace(base, sequence_lens=(5, 3)),
                replace(base, bias=False),
                replace(base, activations=acts * d),
                replace(base, activations=other * d),
                replace(base, clip=0.5),
            ]
            if op == "GRU":
                variants.append(replace(base, linear_before_reset=1))
            if op == "LSTM":
                variants += [
                    replace(base, initial_h=True, initial_c=True),
                    replace(base, peepholes=True),
                    replace(base, input_forget=1),
                ]
            variants.append(
                replace(base, layout=1, initial_h=True, initial_c=op == "LSTM", sequence_lens=(2, 5), batch=2)
            )
            forms += variants
    return forms


def measure(form: RnnForm, modes: list, raw: bool, workdir: Path) -> str:
    path = workdir / f"{form.label}.onnx"
    inputs = write_rnn_model(path, form)
    options = {"apply_workarounds": False} if raw else {}
    try:
        report = parity(
            path,
            modes=modes,
            inputs={form.label: list(inputs.values())},
            expected={form.label: reference_outputs(path, form, inputs)},
            rtol=1e-5,
            atol=1e-5,
            **options,
        )
    except IreegenError as e:
        return f"{form.label}: refused: {str(e).splitlines()[0].split(': ', 1)[1][:200]}"
    return f"{form.label}: " + mode_cells(report, modes, lambda against: against != "async")


def mode_cells(report, modes, judged) -> str:
    """Per mode of a parity report: refused, no result, or ok/WRONG with the
    worst error relative to the output's range, over the rows whose
    reference `judged(against)` accepts."""
    cells = []
    for mode in modes:
        if mode in report.compile_errors:
            cells.append(f"{mode}: refused: {report.compile_errors[mode].strip().splitlines()[0][:160]}")
            continue
        rows = [r for r in report.rows if r.mode == mode and judged(r.against)]
        if not rows or any(r.max_abs_error is None for r in rows):
            cells.append(f"{mode}: no result {[r.message[:120] for r in rows]}")
            continue
        worst = max(r.max_abs_error / max(abs(r.value_range[1] - r.value_range[0]), 1e-30) for r in rows)
        cells.append(f"{mode}: {'ok' if worst <= 1e-5 else 'WRONG'} {worst:.1e}")
    return "; ".join(cells)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--raw", action="store_true", help="without ireegen's ONNX rewrites")
    parser.add_argument("--modes", default="async,runtimeless")
    parser.add_argument("--only", default="", help="only forms whose label this regular expression matches")
    args = parser.parse_args()
    modes = args.modes.split(",")
    with tempfile.TemporaryDirectory() as tmp:
        for form in matrix():
            if re.search(args.only, form.label):
                print(measure(form, modes, args.raw, Path(tmp)), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
