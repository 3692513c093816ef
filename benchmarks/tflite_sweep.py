"""Benchmark: random small .tflite models (tests/tflite_random.py) against
TFLite Micro's own interpreter.

Each draw is one op class of the TFLite op table (or a chain of them) with
random shapes, strides, paddings, activations, scales and zero points, int8
(per tensor or per channel, behind an int8, uint8 or float interface) or
float.  Two levels:

- translate (every draw): the ONNX graph the .tflite becomes
  (frontend/tflite_import.py), run by ONNX Runtime, against TFLM on
  random inputs over each integer input's whole range: int8 outputs bit
  for bit, float within 1e-5 of the output's largest magnitude
  (check/tflm.py's rule);
- emit (`--emit N`, the first N draws the translation computes as TFLM
  does): `ireegen emit --tune off` in each `--modes` execution model,
  whose verification compares the compiled code with TFLM.

Each draw ends as one of: exact (equal to TFLM as above), refused (a
one-line refusal), caught (emit's verification refusing an output that
differs from TFLM's: counted apart, a wrong number that did not ship),
invalid (TFLM itself refuses the model: the generator's mistake), or
mismatch / crash (a silent difference or a traceback: ireegen's bug).
Prints one line per draw that is not exact or that ran the int8 kernels
(which dispatches), and the counts per op class;
`--json` writes them.  Exit status 1 when a draw mismatches or crashes.

    python benchmarks/tflite_sweep.py [--seeds 0:400] [--emit 20] [--modes runtimeless,inline-static,runtimeless@cortex-m4]
    python benchmarks/tflite_sweep.py --emit 99 MODEL.tflite...   # given models (e.g. TFLM's examples)
"""

from __future__ import annotations

import argparse
import collections
import json
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))

from tflite_random import CLASSES, random_model  # noqa: E402

from ireegen.check.tflm import ARENA_HEADROOM, _difference, require_tflm  # noqa: E402
from ireegen.common.errors import UsageError  # noqa: E402
from ireegen.frontend.tflite_import import tflite_to_onnx  # noqa: E402

DRAWS = 3  # input draws per model at the translate level
ONNX_TYPES = {"tensor(int8)": np.int8, "tensor(uint8)": np.uint8, "tensor(float)": np.float32}


def _inputs(session, rng) -> list:
    out = []
    for v in session.get_inputs():
        dtype = np.dtype(ONNX_TYPES[v.type])
        if dtype.kind in "iu":
            info = np.iinfo(dtype)
            out.append(rng.integers(info.min, int(info.max) + 1, v.shape).astype(dtype))
        else:
            out.append((2 * rng.standard_normal(v.shape)).astype(dtype))
    return out


def tflm_outputs(path: Path, draws: list, count: int) -> list:
    """TFLM's outputs of each draw of inputs, in this process (the sweep's
    models are ones TFLM runs: emit runs it in a child, check/tflm.py)."""
    runtime = require_tflm()
    interpreter = runtime.Interpreter.from_file(str(path), arena_size=ARENA_HEADROOM)
    out = []
    for inputs in draws:
        for i, x in enumerate(inputs):
            interpreter.set_input(x, i)
        interpreter.invoke()
        out.append([np.array(interpreter.get_output(i)) for i in range(count)])
    return out


def translate_level(path: Path, seed: int) -> tuple:
    """(outcome, detail) of the translation of `path` run by ONNX Runtime against TFLM."""
    import onnxruntime as ort

    try:
        model = tflite_to_onnx(path)
    except UsageError as e:
        return "refused", str(e).replace(f"{path}: ", "")
    except Exception as e:  # noqa: BLE001 - any other exception is the bug being looked for
        return "crash", f"{type(e).__name__}: {e}"
    try:
        session = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    except Exception as e:  # noqa: BLE001
        return "crash", f"ONNX Runtime cannot load the translation: {e}"[:300]
    rng = np.random.default_rng(seed)
    draws = [_inputs(session, rng) for _ in range(DRAWS)]
    try:
        wants = tflm_outputs(path, draws, len(session.get_outputs()))
    except RuntimeError as e:
        return "invalid", f"TFLM: {e}"[:200]
    for inputs, want in zip(draws, wants):
        got = session.run(None, {v.name: x for v, x in zip(session.get_inputs(), inputs)})
        for v, g, w in zip(session.get_outputs(), got, want):
            if g.shape != w.shape or g.dtype != w.dtype:
                return "mismatch", f"output {v.name!r}: {g.dtype}{list(g.shape)} vs TFLM's {w.dtype}{list(w.shape)}"
            count, largest = _difference(g, w)
            if count:
                return "mismatch", f"output {v.name!r}: {count} of {w.size} differ, by up to {largest:g}"
    return "exact", ""


def emit_level(path: Path, mode: str, work: Path) -> tuple:
    """(outcome, detail) of `ireegen emit` of `path` in `mode`: an execution
    model, or MODEL@CPU for a bare-metal core (where the int8 kernels take
    the convolutions and fully connected ops, with TFLM's requantization)."""
    model, _, cpu = mode.partition("@")
    out = work / f"out-{model}-{cpu}"
    cmd = [sys.executable, "-m", "ireegen", "emit", str(path), "-o", str(out), "--tune", "off"]
    cmd += ["--execution-model", model, "--name", "m", *(["--target-cpu", cpu] if cpu else [])]
    proc = subprocess.run(cmd, capture_output=True, text=True)
    lines = [line for line in proc.stderr.splitlines() if line.strip()]
    last = lines[-1] if lines else ""
    if proc.returncode == 0:
        kernels = json.loads((out / "manifest.json").read_text()).get("kernels") or {}
        dispatches = [d["dispatch"] for d in kernels.get("dispatches", [])]
        return "exact", f"int8 kernels: {', '.join(dispatches)}" if dispatches else ""
    first = lines[0] if lines else ""
    if proc.returncode == 1 and "Traceback" not in proc.stderr:
        # Verification's refusal: one line, or the parity table of a difference from async.
        caught = "differs from TFLite Micro" in first or "computes different numbers" in first
        return "caught" if caught else "refused", first.replace(f"{path}: ", "")[:300]
    if proc.returncode == 2 and len(lines) == 1:
        return "refused", last.replace(f"{path}: ", "")[:300]
    return "crash", f"exit {proc.returncode}: {last}"[:300]


def _cases(models: list, seeds, op_classes: list):
    """(seed, (file name, op class, description, bytes)) of the given models, or of the random draws."""
    if models:
        for seed, path in enumerate(models):
            yield seed, (path.name, path.stem, str(path), path.read_bytes())
        return
    for seed in seeds:
        drawn = random_model(seed, op_classes[seed % len(op_classes)] if op_classes else None)
        yield seed, (f"sweep{seed}.tflite", drawn.op_class, drawn.description, drawn.data)


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--seeds", default="0:400", help="START:STOP, the draws")
    p.add_argument("--op", help="only these op classes (comma-separated, in turn), of: " + ", ".join(CLASSES))
    p.add_argument("--emit", type=int, default=0, help="emit the first N draws the translation computes exactly")
    p.add_argument(
        "--modes",
        default="runtimeless,inline-static",
        help="execution models of the emit level; MODEL@CPU for a bare-metal core, e.g. runtimeless@cortex-m4",
    )
    p.add_argument("--json", type=Path, help="write the outcomes here")
    p.add_argument("--keep", type=Path, help="keep the models that are not exact in this directory")
    p.add_argument("models", nargs="*", type=Path, help="run these .tflite files instead of random draws")
    args = p.parse_args()
    op_classes = args.op.split(",") if args.op else []
    if not set(op_classes) <= set(CLASSES):
        p.error(f"--op: not an op class: {', '.join(sorted(set(op_classes) - set(CLASSES)))}")
    start, stop = (int(v) for v in args.seeds.split(":"))
    counts = collections.defaultdict(collections.Counter)
    records = []
    emitted = 0
    with tempfile.TemporaryDirectory(prefix="tflite-sweep-") as tmp:
        for seed, (name, op_class, description, data) in _cases(args.models, range(start, stop), op_classes):
            work = Path(tmp) / f"s{seed}"
            work.mkdir()
            path = work / name
            path.write_bytes(data)
            outcomes = {"translate": translate_level(path, seed)}
            if args.emit and emitted < args.emit and outcomes["translate"][0] == "exact":
                emitted += 1
                for mode in args.modes.split(","):
                    outcomes[mode] = emit_level(path, mode, work)
            for level, (outcome, detail) in outcomes.items():
                counts[(level, op_class)][outcome] += 1
                if outcome != "exact" or args.models or detail:
                    print(f"{name} {level} {outcome}: {description} -- {detail}", flush=True)
                    if args.keep and outcome != "exact":
                        args.keep.mkdir(parents=True, exist_ok=True)
                        (args.keep / name).write_bytes(data)
            records.append({"seed": seed, "class": op_class, "model": description, "outcomes": outcomes})
    print()
    totals = collections.defaultdict(collections.Counter)
    for (level, op_class), c in sorted(counts.items()):
        totals[level].update(c)
        print(f"{level:22} {op_class:18} " + " ".join(f"{k}={v}" for k, v in sorted(c.items())))
    for level, c in totals.items():
        print(f"{level:22} {'all':18} " + " ".join(f"{k}={v}" for k, v in sorted(c.items())))
    if args.json:
        args.json.write_text(json.dumps(records, indent=1) + "\n")
    bad = any(c["mismatch"] or c["crash"] for c in totals.values())
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
