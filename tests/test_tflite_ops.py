"""TFLM's int8 LOGISTIC, TANH, HARD_SWISH, SOFTMAX, MEAN and QUANTIZE as the
translation writes them, against TFLite Micro's own interpreter bit for bit:
every int8 value of the elementwise ops, random shapes and scales of the
others, each on a one-op model the test builds and runs through ONNX
Runtime (no compile: seconds in all).  Then the one-line refusals of what
TFLM does not run: uint8 outside QUANTIZE/DEQUANTIZE/RESHAPE/SQUEEZE, int16,
ops outside the set in further subgraphs and custom ops."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest
from conftest import refused_in_one_line, run_cli, tflite_refused_in_one_line

pytest.importorskip("tflite")
runtime = pytest.importorskip("tflite_micro.python.tflite_micro.runtime")
ort = pytest.importorskip("onnxruntime")

sys.path.insert(0, str(Path(__file__).parent))
from tflite_builder import TFLiteBuilder  # noqa: E402

ARENA = 1 << 20
ALL_INT8 = np.arange(-128, 128, dtype=np.int8).reshape(1, 16, 16)


def _compare(tmp_path, data: bytes, inputs: list) -> None:
    """The translation (run by ONNX Runtime) equals TFLM on `inputs`, bit for bit."""
    from ireegen.frontend.tflite_import import tflite_to_onnx

    path = tmp_path / "op.tflite"
    path.write_bytes(data)
    interpreter = runtime.Interpreter.from_file(str(path), arena_size=ARENA)
    for i, x in enumerate(inputs):
        interpreter.set_input(x, i)
    interpreter.invoke()
    want = interpreter.get_output(0)
    session = ort.InferenceSession(tflite_to_onnx(path).SerializeToString(), providers=["CPUExecutionProvider"])
    got = session.run(None, {v.name: x for v, x in zip(session.get_inputs(), inputs)})[0]
    assert got.dtype == want.dtype and got.shape == want.shape
    differ = got != want
    assert not differ.any(), f"{int(differ.sum())} of {differ.size} differ, e.g. input {inputs[0][differ][:4]}"


def _scales(seed: int, count: int) -> list:
    """(scale, zero point) pairs: scales log-uniform over 0.002 .. 1."""
    rng = np.random.default_rng(seed)
    return [(float(np.exp(rng.uniform(np.log(0.002), 0.0))), int(rng.integers(-128, 128))) for _ in range(count)]


# op -> its int8 output's (scale, zero point), None: drawn (HARD_SWISH reads it).
ELEMENTWISE = {"LOGISTIC": (1 / 256, -128), "TANH": (1 / 128, 0), "HARD_SWISH": None, "RELU": None}


@pytest.mark.parametrize("op", sorted(ELEMENTWISE))
@pytest.mark.parametrize("scale,zero_point", _scales(3, 3))
def test_elementwise_op_equals_tflm_on_every_int8_value(tmp_path, op, scale, zero_point):
    out = ELEMENTWISE[op] or (scale * 0.7 + 0.004, zero_point // 2 - 20)
    b = TFLiteBuilder()
    x = b.tensor("x", [1, 16, 16], "int8", scale=scale, zero_point=zero_point)
    y = b.tensor("y", [1, 16, 16], "int8", scale=out[0], zero_point=out[1])
    b.op(op, [x], [y])
    _compare(tmp_path, b.build([x], [y]), [ALL_INT8])


def _tflm(data: bytes, x: np.ndarray) -> np.ndarray:
    interpreter = runtime.Interpreter.from_bytes(data, arena_size=ARENA)
    interpreter.set_input(x, 0)
    interpreter.invoke()
    return interpreter.get_output(0)


# Scales where the fixed-point steps meet their edges: powers of two, the
# 1/256 and 1/128 grids, the ends of the range, and log-uniform draws.
EDGE_SCALES = [2.0**-8, 2.0**-4, 0.5, 1.0, 4.0, 7.9, 3 / 256, 1 / 128, 0.0011, 0.99] + [s for s, _ in _scales(9, 40)]
# Input scales of 8 and more, where TFLM's LOGISTIC and TANH radius is 0:
# every input saturates (the fixed-point path, whose shift would overflow, never runs).
SATURATED_SCALES = [8.0, 8.6, 16.0, 100.0]


@pytest.mark.parametrize("op", sorted(ELEMENTWISE))
def test_tables_equal_tflm_at_many_scales(op):
    """The 256-entry tables themselves against TFLM, at 50 input scales and
    zero points (for HARD_SWISH, output scales too): no ONNX, milliseconds each."""
    from ireegen.frontend import tflite_fixedpoint as fx

    rng = np.random.default_rng(11)
    for scale in EDGE_SCALES + SATURATED_SCALES:
        zero_point = int(rng.integers(-128, 128))
        out = ELEMENTWISE[op] or (float(scale * rng.uniform(0.02, 1.5)), int(rng.integers(-128, 128)))
        b = TFLiteBuilder()
        x = b.tensor("x", [1, 256], "int8", scale=scale, zero_point=zero_point)
        y = b.tensor("y", [1, 256], "int8", scale=out[0], zero_point=out[1])
        b.op(op, [x], [y])
        args = (scale, zero_point) if ELEMENTWISE[op] else (scale, zero_point, *out)
        tables = {"LOGISTIC": fx.logistic_table, "TANH": fx.tanh_table, "HARD_SWISH": fx.hard_swish_table}
        table = {**tables, "RELU": fx.relu_table}[op](*args)
        want = _tflm(b.build([x], [y]), ALL_INT8.reshape(1, 256)).ravel()
        assert np.array_equal(table, want), (scale, zero_point, out, int(np.sum(table != want)))


def test_softmax_model_equals_tflm_at_many_scales():
    """tflite_fixedpoint.softmax_reference, the model the ONNX form follows,
    against TFLM on 50 input scales and betas, on random and on flat rows."""
    from ireegen.frontend import tflite_fixedpoint as fx

    rng = np.random.default_rng(12)
    for scale in EDGE_SCALES[:-10]:
        beta = float(np.float32(rng.choice([1.0, rng.uniform(0.05, 4.0)])))
        depth = int(rng.choice([3, 10, 64, 500]))
        b = TFLiteBuilder()
        x = b.tensor("x", [2, depth], "int8", scale=scale, zero_point=int(rng.integers(-128, 128)))
        y = b.tensor("y", [2, depth], "int8", scale=1 / 256, zero_point=-128)
        b.op("SOFTMAX", [x], [y], "SoftmaxOptions", Beta=beta)
        rows = rng.integers(-128, 128, (2, depth)).astype(np.int8)
        rows[1] = rows[1, 0]
        want = _tflm(b.build([x], [y]), rows)
        got = np.stack([fx.softmax_reference(r, beta, scale) for r in rows])
        assert np.array_equal(got, want), (scale, beta, depth, int(np.sum(got != want)))


@pytest.mark.parametrize("seed", range(4))
def test_softmax_equals_tflm(tmp_path, seed):
    """Random rank, row length, beta and input scale; one draw repeats a
    value along each row (the sum's largest case), the others are random."""
    rng = np.random.default_rng(100 + seed)
    shape = [int(v) for v in rng.integers(1, 4, int(rng.integers(1, 4)))] + [int(rng.choice([1, 2, 10, 37, 300]))]
    (scale, zero_point), beta = _scales(seed, 1)[0], float(rng.choice([1.0, 0.5, rng.uniform(0.05, 4.0)]))
    b = TFLiteBuilder()
    x = b.tensor("x", shape, "int8", scale=scale, zero_point=zero_point)
    y = b.tensor("y", shape, "int8", scale=1 / 256, zero_point=-128)
    b.op("SOFTMAX", [x], [y], "SoftmaxOptions", Beta=beta)
    data = b.build([x], [y])
    values = rng.integers(-128, 128, shape).astype(np.int8)
    _compare(tmp_path, data, [values])
    _compare(tmp_path, data, [np.repeat(values[..., :1], shape[-1], axis=-1)])


@pytest.mark.parametrize("seed", range(5))
def test_mean_equals_tflm(tmp_path, seed):
    """Spatial mean of NHWC (axes 1, 2, kept, as real models write it) and
    random axes, with and without keep_dims, input and output scales apart."""
    rng = np.random.default_rng(200 + seed)
    shape = [1, *(int(v) for v in rng.integers(1, 9, 2)), int(rng.integers(1, 6))]
    axes = [1, 2] if seed < 3 else sorted(int(a) for a in rng.choice(4, int(rng.integers(1, 4)), replace=False))
    keep = seed % 2 == 0
    out_shape = (
        [1 if i in axes else d for i, d in enumerate(shape)]
        if keep
        else [d for i, d in enumerate(shape) if i not in axes]
    )
    (scale, zero_point), (out_scale, out_zero) = _scales(300 + seed, 2)
    b = TFLiteBuilder()
    x = b.tensor("x", shape, "int8", scale=scale, zero_point=zero_point)
    a = b.tensor("axes", [len(axes)], "int32", data=axes)
    y = b.tensor("y", out_shape, "int8", scale=out_scale if seed % 3 else scale, zero_point=out_zero)
    b.op("MEAN", [x, a], [y], "ReducerOptions", KeepDims=keep)
    _compare(tmp_path, b.build([x], [y]), [rng.integers(-128, 128, shape).astype(np.int8)])


@pytest.mark.parametrize("scale,zero_point", _scales(4, 3))
def test_uint8_interface_requantizes_as_tflm(tmp_path, scale, zero_point):
    """uint8 in, QUANTIZE to int8 (other scale), LOGISTIC, QUANTIZE to uint8
    out: the interface of the older converters, every uint8 value."""
    b = TFLiteBuilder()
    x = b.tensor("x", [1, 16, 16], "uint8", scale=scale, zero_point=zero_point + 128)
    q = b.tensor("q", [1, 16, 16], "int8", scale=scale * 1.37, zero_point=zero_point // 3)
    s = b.tensor("s", [1, 16, 16], "int8", scale=1 / 256, zero_point=-128)
    y = b.tensor("y", [1, 16, 16], "uint8", scale=1 / 200, zero_point=3)
    b.op("QUANTIZE", [x], [q])
    b.op("LOGISTIC", [q], [s])
    b.op("QUANTIZE", [s], [y])
    _compare(tmp_path, b.build([x], [y]), [(ALL_INT8.astype(np.int16) + 128).astype(np.uint8)])


def test_float_quantize_rounds_half_away_from_zero_as_tflm(tmp_path):
    """QUANTIZE float -> int8 on exact halves of the scale (where a
    half-to-even QuantizeLinear differs) and on random values."""
    b = TFLiteBuilder()
    x = b.tensor("x", [1, 64], "float32")
    y = b.tensor("y", [1, 64], "int8", scale=0.25, zero_point=-3)
    b.op("QUANTIZE", [x], [y])
    halves = (np.arange(-16, 16, dtype=np.float32) + 0.5) * np.float32(0.25)
    noise = np.random.default_rng(5).standard_normal(32).astype(np.float32) * 40
    _compare(tmp_path, b.build([x], [y]), [np.concatenate([halves, noise]).reshape(1, 64)])


def _uint8_conv(b):
    x = b.tensor("image", [1, 4, 4, 1], "uint8", scale=0.1, zero_point=128)
    w = b.tensor("w", [1, 1, 1, 1], "uint8", data=[200], scale=0.01, zero_point=128)
    y = b.tensor("conv", [1, 4, 4, 1], "uint8", scale=0.1, zero_point=128)
    b.op("CONV_2D", [x, w, -1], [y], "Conv2DOptions", Padding=1, StrideW=1, StrideH=1)
    return [x], [y]


def _int16_logistic(b):
    x = b.tensor("x", [1, 4], "int16", scale=1 / 4096, zero_point=0)
    y = b.tensor("sig", [1, 4], "int16", scale=1 / 32768, zero_point=0)
    b.op("LOGISTIC", [x], [y])
    return [x], [y]


def _float_to_uint8(b):
    x = b.tensor("x", [1, 4], "float32")
    y = b.tensor("xq", [1, 4], "uint8", scale=0.1, zero_point=128)
    b.op("QUANTIZE", [x], [y])
    return [x], [y]


def _while_body(b):
    """WHILE in subgraph 0 (its cond and body subgraphs 1 and 2)."""
    x = b.tensor("x", [1], "int32")
    y = b.tensor("loop", [1], "int32")
    b.op("WHILE", [x], [y])
    for k in (1, 2):
        b.tensor("v", [1], "int32", subgraph=k)
    return [x], [y]


def _floor_in_subgraph(b):
    """Supported ops in subgraph 0; FLOOR, outside the set, in subgraph 1."""
    x = b.tensor("x", [1, 4], "float32")
    y = b.tensor("y", [1, 4], "float32")
    b.op("RELU", [x], [y])
    u = b.tensor("u", [1, 4], "float32", subgraph=1)
    v = b.tensor("floored", [1, 4], "float32", subgraph=1)
    b.op("FLOOR", [u], [v], subgraph=1)
    return [x], [y]


def _custom(b):
    x = b.tensor("x", [1, 4], "float32")
    y = b.tensor("custom_out", [1, 4], "float32")
    b.op("CUSTOM", [x], [y])
    return [x], [y]


def _logistic_zero_point(b):
    x = b.tensor("x", [1, 4], "int8", scale=0.05, zero_point=0)
    y = b.tensor("sig", [1, 4], "int8", scale=1 / 256, zero_point=0)
    b.op("LOGISTIC", [x], [y])
    return [x], [y]


def _softmax_scale(b):
    x = b.tensor("x", [1, 4], "int8", scale=0.05, zero_point=0)
    y = b.tensor("probs", [1, 4], "int8", scale=1 / 255, zero_point=-128)
    b.op("SOFTMAX", [x], [y], "SoftmaxOptions", Beta=1.0)
    return [x], [y]


def _softmax_too_long(b):
    x = b.tensor("x", [1, 5000], "int8", scale=0.05, zero_point=0)
    y = b.tensor("probs", [1, 5000], "int8", scale=1 / 256, zero_point=-128)
    b.op("SOFTMAX", [x], [y], "SoftmaxOptions", Beta=1.0)
    return [x], [y]


def _logistic_tiny_scale(b):
    """An input scale below 2^-28: TFLM's radius would shift by a negative
    amount (undefined in C++); an input scale of 8 and more saturates
    every input and is computed (SATURATED_SCALES)."""
    x = b.tensor("x", [1, 4], "int8", scale=1e-9, zero_point=0)
    y = b.tensor("sig", [1, 4], "int8", scale=1 / 256, zero_point=-128)
    b.op("LOGISTIC", [x], [y])
    return [x], [y]


# model builder -> what its one-line refusal names.
REFUSALS = {
    _uint8_conv: ("CONV_2D", "'conv'", "'image' is uint8", "QUANTIZE"),
    _int16_logistic: ("LOGISTIC", "'sig'", "'x' is INT16"),
    _float_to_uint8: ("QUANTIZE", "'xq'", "uint8"),
    _while_body: ("WHILE", "'loop'", "does not support"),
    _floor_in_subgraph: ("subgraph 1", "FLOOR", "'floored'"),
    _custom: ("CUSTOM", "'custom_out'"),
    _logistic_zero_point: ("LOGISTIC", "'sig'", "-128"),
    _softmax_scale: ("SOFTMAX", "'probs'", "1/256"),
    _softmax_too_long: ("SOFTMAX", "'probs'", "5000", "int32"),
    _logistic_tiny_scale: ("LOGISTIC", "'sig'", "input scale 9.99", "outside what TFLM's kernel computes"),
}


@pytest.mark.parametrize("build", REFUSALS, ids=lambda f: f.__name__.lstrip("_"))
def test_what_tflm_does_not_run_is_refused_in_one_line(tmp_path, build):
    """The translation's refusal (a UsageError: the CLI's exit status 2),
    one line naming the op and the tensor."""
    tflite_refused_in_one_line(_model(tmp_path, build), *REFUSALS[build])


def test_the_cli_refuses_a_uint8_model_in_one_line(tmp_path):
    refused_in_one_line(run_cli("info", _model(tmp_path, _uint8_conv)), "model.tflite", *REFUSALS[_uint8_conv])


def _model(tmp_path, build) -> Path:
    b = TFLiteBuilder()
    inputs, outputs = build(b)
    path = tmp_path / "model.tflite"
    path.write_bytes(b.build(inputs, outputs, {k: ([0], [0]) for k in b.more}))
    return path


@pytest.mark.full_suite
def test_emit_of_int8_activations_behind_a_uint8_interface_equals_tflm(tmp_path):
    """Compiled by IREE (host), verified by emit against TFLM: every output
    bit-exact, the C API takes and returns uint8 where the model does."""
    import json

    import tflite_models

    path = tmp_path / "acts.tflite"
    path.write_bytes(tflite_models.activations_uint8_io_model())
    proc = run_cli("emit", path, "-o", tmp_path / "out", "--name", "acts")
    assert proc.returncode == 0, proc.stderr
    record = json.loads((tmp_path / "out" / "manifest.json").read_text())["verification"]["tflite_micro"]["main"]
    assert record["outputs"] == {
        name: {"max_abs_error": 0.0} for name in ("sigmoid", "tanh", "hardswish", "softmax", "mean")
    }
    header = (tmp_path / "out" / "acts.h").read_text()
    assert "const uint8_t* pixels" in header and "uint8_t* softmax" in header


@pytest.mark.full_suite
@pytest.mark.parametrize("cpu", ["cortex-m4", "cortex-m55"])
def test_firmware_runs_the_fixed_point_ops_as_tflm_does(tmp_path, cpu):
    """samples/firmware -DMODEL=x.tflite (runtimeless) on the emulated core:
    TANH, HARD_SWISH, MEAN and SOFTMAX on the input i % 256 - 128, the int8
    output TFLM's bit for bit."""
    import tflite_models
    from test_firmware import _build_and_run_firmware_sample, _configure_firmware_sample, _require_cmake

    _require_cmake()
    path = tmp_path / "chain.tflite"
    path.write_bytes(tflite_models.activations_chain_model())
    build = tmp_path / "build"
    _configure_firmware_sample(build, cpu, f"-DMODEL={path}")
    _, numbers = _build_and_run_firmware_sample(build, cpu)
    x = (np.arange(128) % 256 - 128).astype(np.int8).reshape(1, 4, 4, 8)
    np.testing.assert_array_equal(numbers, _tflm(path.read_bytes(), x).ravel().astype(np.float32))
