"""Benchmark: the runtimeless outputs a `benchmarks/real_models.py
--build-dir DIR` run emitted (its flag sets and its `--tune` emit), timed
again against ONNX Runtime in one alternating run: for a run that was
stopped before its own timing, or to time the same outputs again.

    python benchmarks/built_outputs.py DIR [--models ocr_cls mobilenet_v2] [--rounds 3] [--seconds 0.3]

Per model, every DIR/MODEL/rl-CPU-SET output whose manifest is there: its
runner (built again under DIR/MODEL/timing-*), checked against ONNX
Runtime's output on the model's input (max abs error within 1e-3 of the
output's largest magnitude), then CPU time per call, median of --rounds
alternating rounds, as real_models.py measures it (ONNX Runtime on one
thread, its Python loop's floor subtracted).  A tuned output's line gives
its choice, and the emit's CPU and wall time where real_models.py's
manifest has the search's.  Prints a table; asserts nothing.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))
sys.path.insert(0, str(ROOT / "benchmarks"))

from peers import OnnxRuntime, alternating_medians, per_call_cpu, python_loop_floor_ns  # noqa: E402
from real_models import MODELS, TOLERANCE, first_function, max_error, model_file, model_inputs  # noqa: E402

from ireegen.cbuild.native_run import build_runner  # noqa: E402


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("build_dir", type=Path)
    parser.add_argument("--models", nargs="+", default=["ocr_cls", "mobilenet_v2"], choices=list(MODELS))
    parser.add_argument("--models-dir", type=Path, default=Path(tempfile.gettempdir()) / "ireegen-real-models")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--seconds", type=float, default=0.3)
    args = parser.parse_args()
    floor_ns = python_loop_floor_ns(args.build_dir)
    print("| model | contender | ms per call | x ONNX Runtime | choice |")
    print("|---|---|---:|---:|---|")
    for name in args.models:
        feeds = model_inputs(name)
        ort = OnnxRuntime(model_file(name, args.models_dir))
        inputs = [feeds[i.name] for i in ort.session.get_inputs()]
        reference = ort.run(inputs)
        ort.bind(inputs)
        arrays = list(feeds.values())
        timers = {"ONNX Runtime": lambda n, ort=ort: ort.time(n) - floor_ns}
        choices = {}
        for outdir in sorted((args.build_dir / name).glob("rl-*")):
            if not (outdir / "manifest.json").exists():
                continue
            label = outdir.name.removeprefix("rl-")
            tuning = json.loads((outdir / "manifest.json").read_text()).get("tuning") or {}
            if tuning.get("choice"):
                choices[label] = f"{tuning['choice']} ({tuning.get('search_cpu_seconds')} s CPU search)"
            runner = build_runner(outdir, args.build_dir / name / f"timing-{label}")
            function = first_function(outdir)
            got, _ = runner.call(function, arrays)
            error = max_error(got, reference)
            if error > TOLERANCE:
                print(f"{name} {label}: outputs differ from ONNX Runtime's: max error {error:.3g}", file=sys.stderr)
                continue
            timers[label] = lambda n, r=runner, f=function, x=arrays: per_call_cpu(lambda k: r.call(f, x, repeat=k), n)
        medians = alternating_medians(timers, args.rounds, args.seconds)
        ort_ns = medians["ONNX Runtime"]
        for label, ns in medians.items():
            print(f"| {name} | {label} | {ns / 1e6:.2f} | {ns / ort_ns:.2f}x | {choices.get(label, '')} |", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
