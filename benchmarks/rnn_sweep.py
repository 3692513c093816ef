"""Benchmark: a randomized sweep of recurrent exports, emitted as a user
emits them and run as shipped.

The issue's case first (PINNED: a two-layer bidirectional GRU from each
exporter), then two kinds of case, drawn from a seeded generator:

- torch: `torch.nn.GRU`, `LSTM` and `RNN` (tanh and relu), one or two
  layers, bidirectional or not, batch_first or not, with or without the
  initial states as inputs, with or without bias, odd and even sizes, one
  step or more, LSTM with proj_size, packed sequences (the lengths an
  input), from either exporter (TorchScript, dynamo=False; torch.export,
  dynamo=True); an export the exporter refuses is a row saying so;
- node: one ONNX GRU, LSTM or RNN node (tests/onnx_rnn_models.py) with the
  attributes exporters rarely set: direction reverse, linear_before_reset,
  layout 1, clip, activations, unequal sequence_lens, initial_c,
  peepholes, input_forget, only Y_h or only Y_c wired.

Each case is first checked in ONNX Runtime as ireegen rewrites it
(prepare_onnx: what IREE's importer is given; milliseconds), then emitted
through the CLI with default options (`--tune quick`, its own tuning
directory) per mode, and what was written is run on inputs drawn with
another seed than verification's: async's module with IREE's Python
runtime, runtimeless's C with `ireegen run`.  Every output is compared
with ONNX Runtime's on the model as exported; an error above 1e-3 of the
output's range is WRONG.  An emit that exits non-zero is a row with its
exit status and first line.

    python benchmarks/rnn_sweep.py [--quick] [--count N] [--seed S] [--modes async,runtimeless]
                                   [--tune LEVEL] [--rewrites-only] [--json FILE] [--keep DIR]

--rewrites-only checks only the rewritten graphs in ONNX Runtime (no
IREE): hundreds of cases a minute.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import os
import subprocess
import sys
import tempfile
import time
import warnings
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))

import numpy as np  # noqa: E402
from onnx_rnn_models import RnnForm, random_form, reference_outputs, write_rnn_model  # noqa: E402

WRONG = 1e-3  # of the output's range
RUN_SEED = 12345  # the inputs the shipped code is run on; verification draws with seed 0
DEFAULT_COUNT, QUICK_COUNT = 10, 2  # drawn cases, after PINNED


@dataclass(frozen=True)
class TorchCase:
    cell: str  # GRU, LSTM, RNN_TANH, RNN_RELU
    layers: int = 1
    bidirectional: bool = False
    batch_first: bool = False
    states: bool = False  # h0 (and c0) are inputs
    bias: bool = True
    input_size: int = 3
    hidden: int = 4
    seq: int = 5
    batch: int = 2
    proj: int = 0  # LSTM proj_size
    packed: bool = False  # pack_padded_sequence with the lengths an input
    dynamo: bool = False
    dynamic: bool = False  # exported with the sequence and batch axes dynamic, emitted with --input-shape

    @property
    def label(self) -> str:
        parts = [self.cell.lower(), f"l{self.layers}", "bi" if self.bidirectional else "uni"]
        parts += ["bf"] if self.batch_first else []
        parts += ["states"] if self.states else []
        parts += [] if self.bias else ["nobias"]
        parts += [f"in{self.input_size}", f"h{self.hidden}", f"t{self.seq}", f"n{self.batch}"]
        parts += [f"proj{self.proj}"] if self.proj else []
        parts += ["packed"] if self.packed else []
        parts += ["dynamic"] if self.dynamic else []
        parts += ["dynamo" if self.dynamo else "torchscript"]
        return "_".join(parts)

    def write(self, path: Path, rng) -> dict:
        """Exports to `path`; returns the run inputs {name: array}."""
        import torch

        torch.manual_seed(int(rng.integers(1 << 31)))
        d = 2 if self.bidirectional else 1
        kind, extra = self.cell.split("_")[0], {}
        if self.cell.startswith("RNN"):
            extra["nonlinearity"] = self.cell.split("_")[1].lower()
        if self.proj:
            extra["proj_size"] = self.proj
        layer = getattr(torch.nn, kind)(
            self.input_size,
            self.hidden,
            num_layers=self.layers,
            bidirectional=self.bidirectional,
            batch_first=self.batch_first,
            bias=self.bias,
            **extra,
        )
        case = self

        class Net(torch.nn.Module):
            def __init__(self):
                super().__init__()
                self.rnn = layer

            def forward(self, x, *rest):
                rest = list(rest)
                lengths = rest.pop() if case.packed else None
                state = None
                if case.states:
                    state = (rest[0], rest[1]) if kind == "LSTM" else rest[0]
                if lengths is not None:
                    x = torch.nn.utils.rnn.pack_padded_sequence(
                        x, lengths, batch_first=case.batch_first, enforce_sorted=False
                    )
                y, last = self.rnn(x, state)
                if lengths is not None:
                    y, _ = torch.nn.utils.rnn.pad_packed_sequence(
                        y, batch_first=case.batch_first, total_length=case.seq
                    )
                return (y, *last) if kind == "LSTM" else (y, last)

        x_shape = (
            (self.batch, self.seq, self.input_size) if self.batch_first else (self.seq, self.batch, self.input_size)
        )
        inputs = {"x": rng.standard_normal(x_shape).astype(np.float32)}
        out_hidden = self.proj or self.hidden
        if self.states:
            inputs["h0"] = (0.5 * rng.standard_normal((self.layers * d, self.batch, out_hidden))).astype(np.float32)
            if kind == "LSTM":
                inputs["c0"] = (0.5 * rng.standard_normal((self.layers * d, self.batch, self.hidden))).astype(
                    np.float32
                )
        if self.packed:  # unequal lengths, one of them the whole sequence
            lengths = rng.integers(1, self.seq + 1, self.batch)
            lengths[int(rng.integers(self.batch))] = self.seq
            inputs["lengths"] = lengths.astype(np.int64)
        outputs = ["y", "h_n"] + (["c_n"] if kind == "LSTM" else [])
        args = tuple(torch.from_numpy(v) for v in inputs.values())
        dynamic = {}
        if self.dynamic and self.dynamo:  # forward(x, *rest): one spec for x, a tuple for the rest
            specs = [{axis: torch.export.Dim.AUTO for axis in self.dynamic_axes()[k]} for k in inputs]
            dynamic["dynamic_shapes"] = (specs[0], tuple(specs[1:])) if specs[1:] else (specs[0],)
        elif self.dynamic:
            dynamic["dynamic_axes"] = {k: v for k, v in self.dynamic_axes().items() if k in inputs}
        with contextlib.redirect_stdout(io.StringIO()), warnings.catch_warnings():
            warnings.simplefilter("ignore")
            torch.onnx.export(
                Net().eval(),
                args,
                str(path),
                dynamo=self.dynamo,
                input_names=list(inputs),
                output_names=outputs,
                **dynamic,
            )
        return inputs

    def dynamic_axes(self) -> dict:
        seq, batch = (1, 0) if self.batch_first else (0, 1)
        return {"x": {seq: "seq", batch: "batch"}, "h0": {1: "batch"}, "c0": {1: "batch"}, "lengths": {0: "batch"}}

    def input_shapes(self, inputs: dict) -> dict:
        """{input: dims} for each input a dynamic export leaves symbolic (--input-shape)."""
        return {k: list(v.shape) for k, v in inputs.items() if k in self.dynamic_axes()} if self.dynamic else {}

    def reference(self, path: Path, inputs: dict) -> list:
        import onnxruntime as ort

        session = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"])
        names = [i.name for i in session.get_inputs()]
        return session.run(None, {k: v for k, v in inputs.items() if k in names})


@dataclass(frozen=True)
class NodeCase:
    form: RnnForm

    @property
    def label(self) -> str:
        f = self.form
        return f"node_{f.label}_in{f.input_size}_h{f.hidden}_t{f.seq}_n{f.batch}"

    def write(self, path: Path, rng) -> dict:
        return write_rnn_model(path, self.form, seed=int(rng.integers(1 << 31)))

    def reference(self, path: Path, inputs: dict) -> list:
        return reference_outputs(path, self.form, inputs)

    def input_shapes(self, inputs: dict) -> dict:
        return {}


def draw_torch(rng) -> TorchCase:
    cell = str(rng.choice(["GRU", "LSTM", "RNN_TANH", "RNN_RELU"]))
    seq = int(rng.choice([1, 2, 5, 8]))
    batch = int(rng.choice([1, 2, 3]))
    proj = int(rng.choice([0, 0, 2])) if cell == "LSTM" else 0
    hidden = int(rng.choice([1, 3, 4, 7, 8]))
    return TorchCase(
        cell,
        layers=int(rng.choice([1, 2])),
        bidirectional=bool(rng.random() < 0.6),
        batch_first=bool(rng.random() < 0.5),
        states=bool(rng.random() < 0.4),
        bias=bool(rng.random() < 0.8),
        input_size=int(rng.choice([1, 2, 3, 5, 8])),
        hidden=max(hidden, proj + 1),
        seq=seq,
        batch=batch,
        proj=proj,
        packed=bool(rng.random() < 0.2) and batch > 1 and seq > 1,
        dynamo=bool(rng.random() < 0.5),
        dynamic=bool(rng.random() < 0.25),
    )


# Every sweep starts with the case: a bidirectional GRU from each exporter.
PINNED = [
    TorchCase("GRU", layers=2, bidirectional=True, batch_first=True, input_size=5, hidden=7, seq=6),
    TorchCase("GRU", layers=2, bidirectional=True, batch_first=True, input_size=5, hidden=7, seq=6, dynamo=True),
]


def draw(seed: int, count: int) -> list:
    """`count` cases, torch exports and hand-built nodes alternating."""
    rngs = [np.random.default_rng([seed, i]) for i in range(count)]  # a case's draw does not move the next
    return [draw_torch(rng) if i % 2 == 0 else NodeCase(random_form(rng)) for i, rng in enumerate(rngs)]


def relative_errors(got: list, want: list) -> list:
    """Per output: the largest absolute error over the output's range."""
    errors = []
    for g, w in zip(got, want, strict=True):
        g, w = np.asarray(g, np.float64), np.asarray(w, np.float64)
        if g.shape != w.shape:
            errors.append(float("inf"))
            continue
        # The range, or a constant output's magnitude (as verification's tolerance).
        span = float(w.max() - w.min()) if w.size else 0.0
        span = span or (float(np.abs(w).max()) if w.size else 0.0)
        errors.append(float(np.abs(g - w).max() / max(span, 1e-30)) if w.size else 0.0)
    return errors


def export_failure(error: Exception) -> str:
    """The first line of the innermost cause: torch.onnx wraps what failed."""
    while error.__cause__ is not None:
        error = error.__cause__
    return f"{type(error).__name__}: {(str(error).strip().splitlines() or [''])[0][:200]}"


def rewritten_in_onnxruntime(path: Path, inputs: dict, expected: list, shapes: dict) -> str:
    """The model ireegen hands IREE's importer, run by ONNX Runtime:
    'ok <error>', 'WRONG <error>' or 'refused: <line>'."""
    import onnxruntime as ort

    from ireegen.common.errors import IreegenError
    from ireegen.frontend.import_options import ImportOptions
    from ireegen.frontend.onnx_import import prepare_onnx

    try:
        model = prepare_onnx(path, ImportOptions(input_shapes=shapes))[0]
    except IreegenError as e:
        return f"refused: {str(e).splitlines()[0]}"
    session = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    names = [i.name for i in session.get_inputs()]
    worst = max(relative_errors(session.run(None, {k: v for k, v in inputs.items() if k in names}), expected))
    return f"{'ok' if worst <= WRONG else 'WRONG'} {worst:.1e}"


def run_async(out: Path, manifest: dict, inputs: dict) -> list:
    import iree.runtime as rt

    function = manifest["functions"][0]
    module = rt.load_vm_flatbuffer_file(str(out / f"{manifest['name']}.vmfb"), driver="local-sync")
    result = getattr(module, function["name"])(*(inputs[i["name"]] for i in function["inputs"]))
    return [np.asarray(r) for r in (result if isinstance(result, (list, tuple)) else [result])]


def run_runtimeless(out: Path, manifest: dict, inputs: dict) -> list:
    function = manifest["functions"][0]
    work = out.parent / f"{out.name}.run"
    work.mkdir(exist_ok=True)
    args = [sys.executable, "-m", "ireegen", "run", str(out), "--function", function["name"]]
    for i in function["inputs"]:
        np.save(work / f"in{len(args)}.npy", inputs[i["name"]])
        args.append(f"--input={i['name']}=@{work / f'in{len(args)}.npy'}")
    outs = [work / f"out{k}.npy" for k in range(len(function["outputs"]))]
    args += [f"--output=@{o}" for o in outs]
    proc = subprocess.run(args, capture_output=True, text=True, timeout=600)
    if proc.returncode:
        raise RuntimeError(f"ireegen run exit {proc.returncode}: {(proc.stderr.strip().splitlines() or [''])[-1]}")
    return [np.load(o) for o in outs]


RUNNERS = {"async": run_async, "runtimeless": run_runtimeless}


def emit_and_run(path: Path, mode: str, inputs: dict, expected: list, tune: str, extra: list, workdir: Path) -> dict:
    out = workdir / f"{path.stem}.{mode}"
    env = {**os.environ, "IREEGEN_TUNING_DIR": str(workdir / "tuning")}
    env.pop("IREEGEN_TUNE", None)
    args = [sys.executable, "-m", "ireegen", "emit", str(path), "-o", str(out), "--execution-model", mode]
    args += ([] if tune == "default" else ["--tune", tune]) + extra
    start = time.monotonic()
    try:
        proc = subprocess.run(args, capture_output=True, text=True, env=env, timeout=1200)
    except subprocess.TimeoutExpired:
        return {"result": "timeout", "emit_s": round(time.monotonic() - start, 1)}
    seconds = round(time.monotonic() - start, 1)
    if proc.returncode:
        lines = proc.stderr.strip().splitlines() or [""]
        kind = {1: "refused (exit 1)", 2: "refused (exit 2)"}.get(proc.returncode, f"failed (exit {proc.returncode})")
        return {"result": kind, "message": lines[-1][:400], "lines": len(lines), "emit_s": seconds}
    manifest = json.loads((out / "manifest.json").read_text())
    if expected is None:
        return {"result": "emitted, no reference", "emit_s": seconds}
    try:
        got = RUNNERS[mode](out, manifest, inputs)
    except Exception as e:  # a run that fails is a row
        return {"result": "run failed", "message": str(e)[:400], "emit_s": seconds}
    worst = max(relative_errors(got, expected))
    tuning = manifest.get("tuning", {}).get("choice", "")
    rewrites = [r["rewrite"] for r in manifest.get("onnx_rewrites", [])]
    return {
        "result": "ok" if worst <= WRONG else "WRONG",
        "error": worst,
        "emit_s": seconds,
        "tuning": tuning,
        "rewrites": rewrites,
    }


def sweep(cases: list, modes: list, tune: str, rewrites_only: bool, seed: int, workdir: Path) -> list:
    rows = []
    for index, case in enumerate(cases):
        rng = np.random.default_rng([seed, index, RUN_SEED])
        path = workdir / f"case{index}.onnx"
        row = {"case": case.label, "kind": type(case).__name__}
        try:
            inputs = case.write(path, rng)
        except Exception as e:  # an exporter's failure is a row, not the end of the run
            row["export"] = f"failed: {export_failure(e)}"
            rows.append(row)
            print(json.dumps(row), flush=True)
            continue

        try:
            expected = [np.asarray(v) for v in case.reference(path, inputs)]
        except Exception as e:  # an export ONNX Runtime cannot run: what ireegen says of it is still a row
            row["export"] = f"invalid: ONNX Runtime: {str(e).strip().splitlines()[0][-200:]}"
            expected = None
        if expected is not None:
            row["rewritten_in_onnxruntime"] = rewritten_in_onnxruntime(
                path, inputs, expected, case.input_shapes(inputs)
            )
        if not rewrites_only:
            for mode in modes:
                shapes = [f"--input-shape={k}={'x'.join(map(str, v))}" for k, v in case.input_shapes(inputs).items()]
                row[mode] = emit_and_run(path, mode, inputs, expected, tune, shapes, workdir)
        rows.append(row)
        print(json.dumps(row), flush=True)
    return rows


def summary(rows: list, modes: list) -> str:
    failed = sum(r.get("export", "").startswith("failed") for r in rows)
    invalid = sum(r.get("export", "").startswith("invalid") for r in rows)
    lines = [f"{len(rows)} cases; {failed} not exported, {invalid} exported but not loadable by ONNX Runtime"]
    checked = [r for r in rows if "rewritten_in_onnxruntime" in r]
    wrong = [r["case"] for r in checked if r["rewritten_in_onnxruntime"].startswith("WRONG")]
    refused = [r["case"] for r in checked if r["rewritten_in_onnxruntime"].startswith("refused")]
    agree = len(checked) - len(wrong) - len(refused)
    lines.append(
        f"rewritten graphs in ONNX Runtime: {agree} of {len(checked)} agree, {len(refused)} refused {refused}; "
        f"WRONG: {wrong}"
    )
    for mode in modes:
        results = [r[mode] for r in rows if mode in r]
        if not results:
            continue
        ok = [x for x in results if x["result"] == "ok"]
        largest = max((x["error"] for x in ok), default=0.0)
        times = sorted(x["emit_s"] for x in results)
        lines.append(
            f"{mode}: {len(ok)} of {len(results)} ok (largest {largest:.1e} of range), "
            f"{sum(x['result'] == 'WRONG' for x in results)} WRONG, "
            f"{sum(x['result'].startswith('refused') for x in results)} refused, "
            f"{sum(x['result'] not in ('ok', 'WRONG') and not x['result'].startswith('refused') for x in results)} "
            f"failed; emit median {times[len(times) // 2]:.0f} s, max {times[-1]:.0f} s"
        )
    return "\n".join(lines)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help=f"{QUICK_COUNT} drawn cases instead of {DEFAULT_COUNT}")
    parser.add_argument("--count", type=int, help="the number of drawn cases (the pinned ones run too)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--only", default="", help="only cases whose label contains this")
    parser.add_argument("--modes", default="async,runtimeless")
    parser.add_argument("--tune", default="default", help="--tune for emit (default: emit's own default)")
    parser.add_argument("--rewrites-only", action="store_true", help="only the rewritten graphs in ONNX Runtime")
    parser.add_argument("--json", help="write the rows here")
    parser.add_argument("--keep", help="keep the models and outputs in this directory")
    args = parser.parse_args()
    count = args.count or (QUICK_COUNT if args.quick else DEFAULT_COUNT)
    cases = [c for c in PINNED + draw(args.seed, count) if args.only in c.label]
    modes = args.modes.split(",")
    with tempfile.TemporaryDirectory() as tmp:
        workdir = Path(args.keep or tmp)
        workdir.mkdir(parents=True, exist_ok=True)
        rows = sweep(cases, modes, args.tune, args.rewrites_only, args.seed, workdir)
    text = summary(rows, [] if args.rewrites_only else modes)
    print(text)
    if args.json:
        Path(args.json).write_text(json.dumps({"seed": args.seed, "rows": rows, "summary": text}, indent=1) + "\n")
    bad = any(
        r.get("rewritten_in_onnxruntime", "").startswith("WRONG")
        or any(r.get(m, {}).get("result") == "WRONG" for m in modes)
        for r in rows
    )
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
