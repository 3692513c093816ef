"""docs/detectors.md's YOLO figures: Ultralytics YOLOv8n built from
`yolov8n.yaml` (random weights, seed 0, nothing downloaded; the class
scores' biases drawn around -2 so that some anchors pass the 0.25
threshold), exported as users export it, `export(format="onnx", nms=True,
opset=17)`, at each image size; bounded by frontend/onnx_bounded.py and run
in ONNX Runtime against the exported graph on random images; with --emit,
also emitted in runtimeless and async with default options.

ultralytics is not a dependency of ireegen or its tests (`pip install
ultralytics` to run this).

    python benchmarks/yolo.py [--sizes 320 640] [--emit]   # writes docs/yolo.json
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent

from ireegen.check.subjects import onnxruntime_session  # noqa: E402
from ireegen.frontend.onnx_import import prepare_onnx  # noqa: E402

IMAGES = 3
MODES = ("runtimeless", "async")


def export(path: Path, size: int) -> None:
    import torch
    from ultralytics import YOLO

    torch.manual_seed(0)
    model = YOLO("yolov8n.yaml")
    with torch.no_grad():
        for branch in model.model.model[-1].cv3:
            branch[-1].bias.normal_(-2.0, 1.0)
    written = model.export(format="onnx", nms=True, imgsz=size, opset=17, simplify=False, dynamic=False)
    shutil.move(written, path)


def emit(model: Path, out: Path, mode: str) -> dict:
    started = time.perf_counter()
    proc = subprocess.run(
        [sys.executable, "-m", "ireegen", "emit", model, "-o", out, "--execution-model", mode],
        capture_output=True,
        text=True,
    )
    seconds = round(time.perf_counter() - started, 1)
    if proc.returncode != 0:
        return {"emit_seconds": seconds, "exit": proc.returncode, "message": proc.stderr.strip()[-300:]}
    verification = json.loads((out / "manifest.json").read_text())["verification"]
    outputs = next(iter(verification["functions"].values()))["outputs"]
    return {
        "emit_seconds": seconds,
        "verified": verification["verified"],
        "vs_onnxruntime": {n: o.get("onnxruntime", {}).get("max_abs_error") for n, o in sorted(outputs.items())},
    }


def measure(path: Path, size: int, tmp: Path, emits: bool) -> dict:
    import onnx

    ops = Counter(n.op_type for n in onnx.load(str(path)).graph.node)
    started = time.perf_counter()
    model, _, _, bounded = prepare_onnx(path)
    rewrite_seconds = round(time.perf_counter() - started, 1)
    reference, ours = onnxruntime_session(path), onnxruntime_session(model.SerializeToString())
    rng = np.random.default_rng(0)
    images = []
    for _ in range(IMAGES):
        image = {"images": rng.random((1, 3, size, size), dtype=np.float32)}
        want, got = reference.run(None, image)[0], ours.run(None, image)[0]
        images.append(
            {
                "detections": int((np.abs(want[0]).sum(axis=1) > 0).sum()),
                "max_abs_error": float(np.abs(want - got).max()),
                "same_classes": bool(np.array_equal(want[..., 5], got[..., 5])),
            }
        )
    result = {
        "exported_ops": {k: ops[k] for k in ("NonZero", "NonMaxSuppression", "Pad", "ScatterND") if k in ops},
        "bounded_outputs": [b.name for b in bounded],
        "bounded_nodes": len(model.graph.node),
        "rewrite_seconds": rewrite_seconds,
        "images": images,
    }
    if emits:
        for mode in MODES:
            result[mode] = emit(path, tmp / f"{size}-{mode}", mode)
    return result


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--sizes", type=int, nargs="+", default=[320, 640], help="image sizes to export at")
    parser.add_argument("--emit", action="store_true", help="emit each in runtimeless and async too")
    args = parser.parse_args()
    results = {}
    with tempfile.TemporaryDirectory(prefix="ireegen-yolo-") as tmp:
        tmp = Path(tmp)
        for size in args.sizes:
            path = tmp / f"yolov8n-{size}.onnx"
            export(path, size)
            results[str(size)] = measure(path, size, tmp, args.emit)
    (ROOT / "docs" / "yolo.json").write_text(json.dumps(results, indent=1, sort_keys=True) + "\n")
    print(json.dumps(results, indent=1, sort_keys=True))


if __name__ == "__main__":
    main()
