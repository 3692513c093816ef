"""docs/detectors.md's picture: a trained detector, ddddocr's character
detector (`ddddocr/common_det.onnx`, a YOLOX model shipped inside the
ddddocr 1.6.1 wheel, MIT licence), with its post-processing appended to the
graph as YOLOX's ONNX demo writes it in numpy (grid decode, score =
objectness x class, class-agnostic NonMaxSuppression, IoU 0.45, score 0.1),
emitted in runtimeless C with default options; the C is run on a synthetic
captcha, its selection compared with ONNX Runtime's full graph, and the
boxes it selected drawn (docs/detector-captcha.png).

    pip download --no-deps ddddocr==1.6.1 -d /tmp/dddd && unzip -o /tmp/dddd/*.whl 'ddddocr/common_det.onnx' -d /tmp/dddd
    python benchmarks/captcha_detector.py /tmp/dddd/ddddocr/common_det.onnx   # writes docs/captcha_detector.json and the PNG
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent

from ireegen.cbuild.native_run import build_runner  # noqa: E402

SIZE = 416  # the model's input, letterboxed with grey 114 as ddddocr does
STRIDES = (8, 16, 32)
PER_CLASS = 16  # characters a captcha holds, at most
IOU, SCORE = 0.45, 0.1  # ddddocr's own thresholds
TEXT, SCENE = "ireegen", (416, 208)


def with_postprocessing(source: Path, path: Path) -> None:
    """The detector's raw [1, 3549, 6] output (x, y, log w, log h, objectness,
    class) decoded into boxes [1, 3549, 4] (center, size, in pixels) and
    scores [1, 1, 3549], then NonMaxSuppression."""
    import onnx
    from onnx import helper, numpy_helper, version_converter

    model = version_converter.convert_version(onnx.load(str(source)), 17)
    graph = model.graph
    raw = graph.output[0].name
    grids, strides = [], []
    for stride in STRIDES:
        cells = SIZE // stride
        xv, yv = np.meshgrid(np.arange(cells), np.arange(cells))
        grids.append(np.stack((xv, yv), 2).reshape(-1, 2))
        strides.append(np.full((cells * cells, 1), stride))
    consts = {
        "pp_grid": np.concatenate(grids)[None].astype(np.float32),
        "pp_stride": np.concatenate(strides)[None].astype(np.float32),
        "pp_0": np.array([0], np.int64),
        "pp_2": np.array([2], np.int64),
        "pp_4": np.array([4], np.int64),
        "pp_5": np.array([5], np.int64),
        "pp_6": np.array([6], np.int64),
        "pp_axis": np.array([2], np.int64),
        "pp_max": np.array([PER_CLASS], np.int64),
        "pp_iou": np.array([IOU], np.float32),
        "pp_score": np.array([SCORE], np.float32),
    }
    graph.initializer.extend(numpy_helper.from_array(v, k) for k, v in consts.items())

    def node(op, inputs, output, **attrs):
        graph.node.append(helper.make_node(op, inputs, [output], name=output, **attrs))
        return output

    xy = node("Slice", [raw, "pp_0", "pp_2", "pp_axis"], "pp_xy")
    wh = node("Slice", [raw, "pp_2", "pp_4", "pp_axis"], "pp_wh")
    obj = node("Slice", [raw, "pp_4", "pp_5", "pp_axis"], "pp_obj")
    cls = node("Slice", [raw, "pp_5", "pp_6", "pp_axis"], "pp_cls")
    xy = node("Mul", [node("Add", [xy, "pp_grid"], "pp_cells"), "pp_stride"], "pp_center")
    wh = node("Mul", [node("Exp", [wh], "pp_size_cells"), "pp_stride"], "pp_size")
    node("Concat", [xy, wh], "boxes", axis=2)
    node("Transpose", [node("Mul", [obj, cls], "pp_scores")], "scores", perm=[0, 2, 1])
    graph.node.append(
        helper.make_node(
            "NonMaxSuppression",
            ["boxes", "scores", "pp_max", "pp_iou", "pp_score"],
            ["selected"],
            center_point_box=1,
            name="nms",
        )
    )
    del graph.output[:]
    graph.output.append(helper.make_tensor_value_info("selected", onnx.TensorProto.INT64, ["n", 3]))
    onnx.checker.check_model(model)
    onnx.save(model, str(path))


def scene() -> tuple:
    """A synthetic captcha (seed 0): letters of Pillow's default font, turned
    and coloured on blots of colour; the picture, and the model's input (BGR,
    0..255, letterboxed)."""
    from PIL import Image, ImageDraw, ImageFont

    rng = np.random.default_rng(0)
    width, height = SCENE
    blots = rng.normal(225, 16, (height // 16, width // 16, 3)).clip(0, 255).astype(np.uint8)
    picture = Image.fromarray(blots).resize((width, height), Image.BICUBIC)
    font = ImageFont.load_default(size=56)
    for k, letter in enumerate(TEXT):
        glyph = Image.new("L", (90, 90), 0)
        ImageDraw.Draw(glyph).text((12, 2), letter, fill=255, font=font)
        glyph = glyph.rotate(float(rng.uniform(-25, 25)), resample=Image.BICUBIC)
        colour = tuple(int(v) for v in rng.integers(0, 140, 3))
        picture.paste(Image.new("RGB", (90, 90), colour), (12 + k * 56, int(rng.integers(10, 100))), glyph)
    letterboxed = np.full((SIZE, SIZE, 3), 114, np.uint8)
    letterboxed[:height, :width] = np.asarray(picture)[:, :, ::-1]
    return picture, np.ascontiguousarray(letterboxed.transpose(2, 0, 1)[None], dtype=np.float32)


def draw(picture, boxes, selected, count, path: Path) -> None:
    from PIL import Image, ImageDraw

    pen = ImageDraw.Draw(picture)
    for _, _, box in selected[:count]:
        x, y, w, h = boxes[0, box]
        pen.rectangle([x - w / 2, y - h / 2, x + w / 2, y + h / 2], outline=(230, 30, 30), width=2)
    picture.quantize(colors=96, dither=Image.Dither.NONE).save(path, optimize=True)  # a small PNG


def main() -> None:
    import onnxruntime as ort

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("detector", type=Path, help="ddddocr/common_det.onnx from the ddddocr 1.6.1 wheel")
    args = parser.parse_args()
    results = {}
    with tempfile.TemporaryDirectory(prefix="ireegen-captcha-") as tmp:
        tmp = Path(tmp)
        model = tmp / "captcha_detector.onnx"
        with_postprocessing(args.detector, model)
        out = tmp / "runtimeless"
        picture, image = scene()
        # Random images select nothing ("not exercised"): verification runs on the scene.
        np.savez(tmp / "scene.npz", images=image)
        started = time.perf_counter()
        proc = subprocess.run(
            [sys.executable, "-m", "ireegen", "emit", model, "-o", out, "--execution-model", "runtimeless"]
            + ["--verify-inputs", tmp / "scene.npz"],
            capture_output=True,
            text=True,
        )
        results["emit_seconds"] = round(time.perf_counter() - started, 1)
        if proc.returncode != 0:
            raise SystemExit(proc.stderr)
        verification = json.loads((out / "manifest.json").read_text())["verification"]
        results["verified"] = verification["verified"]
        results["exercised"] = "not_exercised" not in verification
        outputs = next(iter(verification["functions"].values()))["outputs"]
        results["vs_onnxruntime"] = {
            name: o.get("onnxruntime", {}).get("max_abs_error") for name, o in sorted(outputs.items())
        }
        runner = build_runner(out, tmp / "build")
        function = next(iter(verification["functions"]))
        selected, count, boxes, scores = (np.asarray(v) for v in runner.call(function, [image])[0])
        count = int(count.reshape(-1)[0])
        session = ort.InferenceSession(str(model), providers=["CPUExecutionProvider"])
        want = session.run(None, {session.get_inputs()[0].name: image})[0]
        results["scene"] = {
            "letters": len(TEXT),
            "rows": int(selected.shape[0]),
            "count": count,
            "onnxruntime_count": len(want),
            "same_selection_as_onnxruntime": bool(np.array_equal(selected[:count], want)),
        }
        draw(picture, boxes, selected, count, ROOT / "docs" / "detector-captcha.png")
    (ROOT / "docs" / "captcha_detector.json").write_text(json.dumps(results, indent=1, sort_keys=True) + "\n")
    print(json.dumps(results, indent=1, sort_keys=True))


if __name__ == "__main__":
    main()
