"""docs/detectors.md's figures: the scene detector (tests/detector_models.py)
emitted in runtimeless and async, timed and verified; the runtimeless C run
on the synthetic scene, its selection compared with ONNX Runtime's full
graph, and the boxes drawn (docs/detectors.png).

    python benchmarks/detectors.py            # writes docs/detectors.json and docs/detectors.png
"""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))

import detector_models  # noqa: E402

from ireegen.cbuild.native_run import build_runner  # noqa: E402

MODES = ("runtimeless", "async")
COLOURS = ((230, 60, 60), (60, 200, 60), (80, 120, 255))
ZOOM = 6


def emit(model: Path, out: Path, mode: str) -> dict:
    started = time.perf_counter()
    proc = subprocess.run(
        [sys.executable, "-m", "ireegen", "emit", model, "-o", out, "--execution-model", mode, "--tune", "off"],
        capture_output=True,
        text=True,
    )
    seconds = time.perf_counter() - started
    if proc.returncode != 0:
        raise SystemExit(proc.stderr)
    verification = json.loads((out / "manifest.json").read_text())["verification"]
    outputs = verification["functions"]["detector"]["outputs"]
    return {
        "emit_seconds": round(seconds, 1),
        "verified": verification["verified"],
        "vs_onnxruntime": {name: o["onnxruntime"]["max_abs_error"] for name, o in sorted(outputs.items())},
    }


def draw(image, boxes, selected, count, path: Path) -> None:
    from PIL import Image, ImageDraw

    pixels = (np.clip(image[0].transpose(1, 2, 0), 0, 1) * 255).astype(np.uint8)
    picture = Image.fromarray(pixels).resize((pixels.shape[1] * ZOOM, pixels.shape[0] * ZOOM), Image.NEAREST)
    pen = ImageDraw.Draw(picture)
    for batch, klass, box in selected[:count]:
        x, y, w, h = boxes[batch, box] * ZOOM
        pen.rectangle([x - w / 2, y - h / 2, x + w / 2, y + h / 2], outline=(255, 255, 255), width=3)
        pen.rectangle([x - w / 2 + 3, y - h / 2 + 3, x + w / 2 - 3, y + h / 2 - 3], outline=COLOURS[klass], width=2)
    picture.save(path, optimize=True)


def main() -> None:
    import onnxruntime as ort

    results = {}
    with tempfile.TemporaryDirectory(prefix="ireegen-detectors-") as tmp:
        tmp = Path(tmp)
        model = tmp / "scene.onnx"
        detector_models.scene_detector(model)
        for mode in MODES:
            results[mode] = emit(model, tmp / mode, mode)
        image = detector_models.scene()
        runner = build_runner(tmp / "runtimeless", tmp / "build")
        selected, count, boxes, _scores = runner.call("detector", [image])[0]
        want = ort.InferenceSession(str(model), providers=["CPUExecutionProvider"]).run(None, {"image": image})[0]
        count = int(np.asarray(count).reshape(-1)[0])
        results["scene"] = {
            "rows": int(np.asarray(selected).shape[0]),
            "count": count,
            "onnxruntime_count": len(want),
            "same_selection_as_onnxruntime": bool(np.array_equal(np.asarray(selected)[:count], want)),
        }
        draw(image, np.asarray(boxes), np.asarray(selected), count, ROOT / "docs" / "detectors.png")
    (ROOT / "docs" / "detectors.json").write_text(json.dumps(results, indent=1, sort_keys=True) + "\n")
    print(json.dumps(results, indent=1, sort_keys=True))


if __name__ == "__main__":
    main()
