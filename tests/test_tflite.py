""".tflite input: the translation of every op of the table against TFLite
Micro's own interpreter, emit's verification against it, and the refusals
of malformed files and unsupported ops.  The models are built by the tests
(tflite_models.py); TFLM is the reference."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np
import pytest
from conftest import refused_in_one_line, run_cli

pytest.importorskip("tflite")
runtime = pytest.importorskip("tflite_micro.python.tflite_micro.runtime")
ort = pytest.importorskip("onnxruntime")

sys.path.insert(0, str(Path(__file__).parent))
import tflite_models  # noqa: E402

# (model builder, dtype): the models whose ops the translation computes as TFLM does.
EXACT = [
    ("conv_model", "float32"),
    ("conv_model", "int8"),
    ("conv_model", "int8 per tensor"),
    ("elementwise_model", "float32"),
    ("elementwise_model", "int8"),
    ("activations_model", "float32"),
    ("activations_model", "int8"),
]


@pytest.fixture(scope="session")
def models(tmp_path_factory) -> dict:
    root = tmp_path_factory.mktemp("tflite")
    paths = {}
    for name, dtype in EXACT:
        if dtype == "int8 per tensor":
            continue
        path = root / f"{name.removesuffix('_model')}_{dtype}.tflite"
        path.write_bytes(getattr(tflite_models, name)(dtype))
        paths[name, dtype] = path
    path = root / "conv_int8_per_tensor.tflite"
    path.write_bytes(tflite_models.conv_model("int8", per_channel=False))
    paths["conv_model", "int8 per tensor"] = path
    path = root / "fused_tanh_int8.tflite"
    path.write_bytes(tflite_models.fused_tanh_model())
    paths["fused tanh"] = path
    path = root / "floor.tflite"
    path.write_bytes(tflite_models.unsupported_model())
    paths["unsupported"] = path
    return paths


def _inputs(interpreter, count: int, rng) -> list:
    out = []
    for i in range(count):
        d = interpreter.get_input_details(i)
        dtype = np.dtype(d["dtype"])
        if dtype.kind in "iu":
            info = np.iinfo(dtype)
            out.append(rng.integers(info.min, int(info.max) + 1, d["shape"]).astype(dtype))
        else:
            out.append((2 * rng.standard_normal(d["shape"])).astype(dtype))
    return out


@pytest.mark.parametrize("name,dtype", EXACT)
def test_translation_computes_what_tflm_computes(models, name, dtype):
    """The ONNX graph a .tflite model becomes (run by ONNX Runtime) equals
    TFLM bit for bit on int8 outputs, within 1e-5 relative on float ones,
    on random inputs over the whole integer range."""
    from ireegen.frontend.tflite_import import tflite_to_onnx

    path = models[name, dtype]
    session = ort.InferenceSession(tflite_to_onnx(path).SerializeToString(), providers=["CPUExecutionProvider"])
    rng = np.random.default_rng(7)
    for _ in range(5):
        interpreter = runtime.Interpreter.from_file(str(path))
        inputs = _inputs(interpreter, len(session.get_inputs()), rng)
        for i, x in enumerate(inputs):
            interpreter.set_input(x, i)
        interpreter.invoke()
        got = session.run(None, {v.name: x for v, x in zip(session.get_inputs(), inputs)})
        for i, g in enumerate(got):
            want = interpreter.get_output(i)
            assert g.dtype == want.dtype and g.shape == want.shape, session.get_outputs()[i].name
            if want.dtype.kind == "f":
                np.testing.assert_allclose(g, want, rtol=1e-5, atol=1e-6 * max(1.0, float(np.abs(want).max())))
            else:
                assert np.array_equal(g, want), (session.get_outputs()[i].name, np.abs(g - want.astype(int)).max())


def test_emit_int8_equals_tflm(models, tmp_path):
    """emit of an int8 model with per-channel filters: verified against TFLM
    (recorded in the manifest), with the model's int8 interface and names."""
    proc = run_cli("emit", models["conv_model", "int8"], "-o", tmp_path / "out", "--name", "conv")
    assert proc.returncode == 0, proc.stderr
    manifest = json.loads((tmp_path / "out" / "manifest.json").read_text())
    record = manifest["verification"]["tflite_micro"]["main"]
    assert record["reference"].startswith("tflite-micro ")
    assert record["outputs"] == {"logits": {"max_abs_error": 0.0}}
    header = (tmp_path / "out" / "conv.h").read_text()
    assert "CONV_MAIN_IMAGE_ZERO_POINT (-5)" in header and "tensor<1x8x8x3xi8>" in header


def test_emit_float_with_several_inputs_and_outputs(models, tmp_path):
    proc = run_cli("emit", models["elementwise_model", "float32"], "-o", tmp_path / "out", "--name", "ew")
    assert proc.returncode == 0, proc.stderr
    manifest = json.loads((tmp_path / "out" / "manifest.json").read_text())
    assert set(manifest["verification"]["tflite_micro"]["main"]["outputs"]) == {"slice", "reshape", "squeeze", "relu6"}


def test_an_output_that_differs_from_tflm_is_refused_in_one_line(models, tmp_path):
    """An int8 ADD with a fused TANH, which TFLM's kernel ignores (its
    activation range of TANH is the whole int8 range) and the QDQ form
    applies: refused, nothing written."""
    proc = run_cli("emit", models["fused tanh"], "-o", tmp_path / "out")
    assert proc.returncode == 1, proc.stderr
    lines = [line for line in proc.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and "differs from TFLite Micro's (bit for bit)" in lines[0], proc.stderr
    assert "fused_tanh_int8.tflite: output '" in lines[0] and "elements, by up to" in lines[0]
    assert not (tmp_path / "out").exists()


def test_unsupported_op_is_refused_naming_it_and_its_tensor(models):
    refused_in_one_line(run_cli("info", models["unsupported"]), "floor.tflite", "FLOOR", "'rounded'")


def _corrupt(data: bytes, how: str) -> bytes:
    if how == "identifier":
        return data[:4] + b"XXXX" + data[8:]
    if how == "truncated":
        return data[: len(data) // 3]
    if how == "garbage":
        return data[:8] + bytes((b * 7 + 13) % 256 for b in data[8:])
    raise ValueError(how)


@pytest.mark.parametrize("how", ["identifier", "truncated", "garbage"])
def test_malformed_file_is_refused_in_one_line(models, tmp_path, how):
    path = tmp_path / "bad.tflite"
    path.write_bytes(_corrupt(models["conv_model", "int8"].read_bytes(), how))
    refused_in_one_line(run_cli("info", path), "bad.tflite")


def test_a_buffer_of_the_wrong_size_is_refused_in_one_line(tmp_path):
    from tflite_builder import TFLiteBuilder

    b = TFLiteBuilder()
    x = b.tensor("x", [1, 4], "float32")
    w = b.tensor("w", [2, 4], "float32", data=np.zeros(8, np.float32))
    y = b.tensor("y", [1, 2], "float32")
    b.op("FULLY_CONNECTED", [x, w, -1], [y], "FullyConnectedOptions")
    b.tensors[w] = ("w", [3, 4], "float32", *b.tensors[w][3:])  # 12 elements declared, 8 stored
    path = tmp_path / "short.tflite"
    path.write_bytes(b.build([x], [y]))
    refused_in_one_line(run_cli("info", path), "short.tflite", "'w'", "holds 32 bytes", "need 48")


def test_onnx_only_flags_are_refused_in_one_line(models, tmp_path):
    refused_in_one_line(
        run_cli("emit", models["conv_model", "int8"], "-o", tmp_path / "out", "--quantized-io"),
        "--quantized-io",
        "TFLite",
    )


@pytest.mark.slow
def test_a_crash_of_tflm_is_a_refusal(tmp_path):
    """TFLM trusts the model; it runs in a child process, so its crash is
    one line of emit's, nothing written."""
    path = tmp_path / "dw.tflite"
    path.write_bytes(tflite_models.depthwise_without_bias_model())
    proc = run_cli("emit", path, "-o", tmp_path / "out")
    assert proc.returncode == 1, proc.stderr
    lines = [line for line in proc.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and "dw.tflite: TFLite Micro's interpreter failed" in lines[0], proc.stderr
    assert not (tmp_path / "out").exists()


@pytest.mark.slow
def test_firmware_sample_runs_an_int8_tflite_model_as_tflm_does(models, tmp_path):
    """samples/firmware -DMODEL=x.tflite on the emulated Cortex-M4F: the
    int8 input i % 256 - 128, the int8 output TFLM's bit for bit."""
    from test_firmware import _build_and_run_firmware_sample, _configure_firmware_sample, _require_cmake

    _require_cmake()
    path = models["conv_model", "int8"]
    build = tmp_path / "build"
    _configure_firmware_sample(build, "cortex-m4", f"-DMODEL={path}")
    _, numbers = _build_and_run_firmware_sample(build, "cortex-m4")
    interpreter = runtime.Interpreter.from_file(str(path))
    shape = interpreter.get_input_details(0)["shape"]
    interpreter.set_input((np.arange(np.prod(shape)) % 256 - 128).astype(np.int8).reshape(shape), 0)
    interpreter.invoke()
    np.testing.assert_array_equal(numbers, interpreter.get_output(0).ravel().astype(np.float32))
