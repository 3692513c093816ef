"""docs/detectors.md's SSDlite figures: torchvision's
ssdlite320_mobilenet_v3_large (weights=None, seed 0, torch.onnx.export
opset 17) bounded by frontend/onnx_bounded.py; the bounded graph run in ONNX
Runtime against the exported graph on random images (its boxes, scores and
labels must agree exactly on the valid rows, zeros after them); with
--emit, also emitted in runtimeless and async with default options, each
emit's wall and CPU seconds (its subprocesses') and the wall seconds of
each phase its progress lines name (before the first line: reading and
rewriting the model), and the CPU milliseconds per call of the runtimeless
C against ONNX Runtime on one thread.

    python benchmarks/ssdlite.py [--onnx PATH] [--emit]   # writes docs/ssdlite.json
    python benchmarks/ssdlite.py --onnx PATH --time OUTDIR   # times an emitted runtimeless OUTDIR only
"""

from __future__ import annotations

import argparse
import json
import os
import re
import resource
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent

from ireegen.cbuild.native_run import build_runner  # noqa: E402
from ireegen.cbuild.timing import CPU_TIME, Meter, Timer  # noqa: E402
from ireegen.check.subjects import bounded_as, onnxruntime_session  # noqa: E402
from ireegen.frontend.onnx_import import prepare_onnx  # noqa: E402

IMAGES = 3
MODES = ("runtimeless", "async")


def export(path: Path) -> None:
    import torch
    import torchvision

    torch.manual_seed(0)
    model = torchvision.models.detection.ssdlite320_mobilenet_v3_large(weights=None, weights_backbone=None).eval()
    torch.onnx.export(
        model,
        (torch.rand(1, 3, 320, 320),),
        str(path),
        opset_version=17,
        input_names=["image"],
        output_names=["boxes", "scores", "labels"],
        dynamo=False,
    )


# A progress line: "ireegen: [  12.3s] phase: detail".
PROGRESS = re.compile(r"^ireegen: \[\s*([0-9.]+)s\] ([a-z]+)", re.M)


def phases(stderr: str, total: float) -> dict:
    """Wall seconds from each phase's first progress line to the next phase's
    ("model": before the first line)."""
    starts, seen = [("model", 0.0)], set()
    for at, phase in PROGRESS.findall(stderr):
        if phase not in seen:
            seen.add(phase)
            starts.append((phase, float(at)))
    ends = [at for _, at in starts[1:]] + [total]
    return {phase: round(end - at, 1) for (phase, at), end in zip(starts, ends)}


def emit(model: Path, out: Path, mode: str) -> dict:
    env = {k: v for k, v in os.environ.items() if k != "IREEGEN_TUNE"} | {"IREEGEN_PROGRESS": "1"}
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    proc = subprocess.run(
        [sys.executable, "-m", "ireegen", "emit", model, "-o", out, "--execution-model", mode],
        capture_output=True,
        text=True,
        env=env,
    )
    seconds = round(time.perf_counter() - started, 1)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = round(after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime, 1)
    # The largest resident set of any child so far (this script runs the emits one at a time).
    peak_mb = round(after.ru_maxrss / 1024)
    timing = {
        "emit_seconds": seconds,
        "cpu_seconds": cpu,
        "peak_mb": peak_mb,
        "phase_seconds": phases(proc.stderr, seconds),
    }
    if proc.returncode != 0:
        return timing | {"exit": proc.returncode, "message": proc.stderr.strip()[-300:]}
    verification = json.loads((out / "manifest.json").read_text())["verification"]
    outputs = next(iter(verification["functions"].values()))["outputs"]
    return timing | {
        "verified": verification["verified"],
        "vs_onnxruntime": {n: o.get("onnxruntime", {}).get("max_abs_error") for n, o in sorted(outputs.items())},
    }


def call_times(outdir: Path, model: Path) -> dict:
    """CPU milliseconds per call of the runtimeless C in `outdir` (its runner
    built here, cbuild/timing.py: R+1 calls minus 1 over R) and of ONNX
    Runtime on one thread, on one random image."""
    import onnxruntime as ort

    image = np.random.default_rng(1).random((1, 3, 320, 320), dtype=np.float32)
    with tempfile.TemporaryDirectory() as build:
        runner = build_runner(outdir, build_dir=build)
        timer = Timer(runner, {next(iter(runner.functions)): [image]}, Meter(CPU_TIME))
        try:
            c_ms = min(timer.sample() for _ in range(3)) / 1e6
        finally:
            timer.close()
    options = ort.SessionOptions()
    options.log_severity_level, options.intra_op_num_threads, options.inter_op_num_threads = 3, 1, 1
    session = ort.InferenceSession(str(model), options, providers=["CPUExecutionProvider"])
    session.run(None, {"image": image})
    runs = 10
    started = time.process_time()
    for _ in range(runs):
        session.run(None, {"image": image})
    ort_ms = (time.process_time() - started) / runs * 1e3
    return {"c_call_ms": round(c_ms, 1), "onnxruntime_call_ms": round(ort_ms, 1)}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--onnx", type=Path, help="an SSDlite export to use (else exported here)")
    parser.add_argument("--emit", action="store_true", help="emit it in runtimeless and async too")
    parser.add_argument("--time", type=Path, help="only time this emitted runtimeless directory against ONNX Runtime")
    args = parser.parse_args()
    figures = ROOT / "docs" / "ssdlite.json"
    if args.time:
        result = json.loads(figures.read_text())
        result["runtimeless"].update(call_times(args.time, args.onnx))
        figures.write_text(json.dumps(result, indent=1, sort_keys=True) + "\n")
        print(json.dumps(result["runtimeless"], indent=1, sort_keys=True))
        return
    with tempfile.TemporaryDirectory() as tmp:
        path = args.onnx or Path(tmp) / "ssdlite.onnx"
        if not path.exists():
            export(path)
        import onnx

        exported = onnx.load(str(path))
        ops = Counter(n.op_type for n in exported.graph.node)
        started, cpu = time.perf_counter(), time.process_time()
        model, _, _, bounded = prepare_onnx(path)
        rewrite_seconds = round(time.perf_counter() - started, 1)
        rewrite_cpu_seconds = round(time.process_time() - cpu, 1)
        reference, ours = onnxruntime_session(path), onnxruntime_session(model.SerializeToString())
        names = [o.name for o in ours.get_outputs()]
        rng = np.random.default_rng(0)
        images = []
        for _ in range(IMAGES):
            image = {"image": rng.random((1, 3, 320, 320), dtype=np.float32)}
            got = dict(zip(names, ours.run(None, image)))
            row = {}
            for bound, want in zip(bounded, reference.run(None, image)):
                padded, count = bounded_as(want, bound)
                row[bound.name] = {
                    "onnxruntime_rows": int(len(want)),
                    "count": int(got[bound.count][0]),
                    "same": bool(np.array_equal(got[bound.name], padded) and got[bound.count][0] == count[0]),
                }
            images.append(row)
        result = {
            "exported_ops": {k: ops[k] for k in ("NonZero", "TopK", "NonMaxSuppression", "If") if k in ops},
            "bounded": {b.name: {"rows": b.rows, "count": b.count} for b in bounded},
            "rewrite_seconds": rewrite_seconds,
            "rewrite_cpu_seconds": rewrite_cpu_seconds,
            "bounded_nodes": len(model.graph.node),
            "images": images,
            "all_same": all(o["same"] for row in images for o in row.values()),
        }
        if args.emit:
            for mode in MODES:
                result[mode] = emit(path, Path(tmp) / mode, mode)
            if "exit" not in result["runtimeless"]:
                result["runtimeless"].update(call_times(Path(tmp) / "runtimeless", path))
    if figures.exists():  # the figures measured before the suppression became a Loop, kept as they were
        result["before"] = json.loads(figures.read_text()).get("before")
        if not args.emit:
            result.update({m: json.loads(figures.read_text()).get(m) for m in MODES})
    figures.write_text(json.dumps(result, indent=1, sort_keys=True) + "\n")
    print(json.dumps(result, indent=1, sort_keys=True))


if __name__ == "__main__":
    main()
