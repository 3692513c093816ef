"""Random .tflite models of every op class (tests/tflite_random.py) against
TFLite Micro's own interpreter, as benchmarks/tflite_sweep.py draws them:
a fixed-seed subset of the translation (run by ONNX Runtime, no compile),
then emit's own verification of a few (full suite), and the op configs
the sweep found, each against TFLM or refused in one line as TFLM refuses
them."""

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
sys.path.insert(0, str(Path(__file__).parent.parent / "benchmarks"))
from tflite_builder import TFLiteBuilder  # noqa: E402
from tflite_random import CLASSES, random_model  # noqa: E402

# Per op class, the seeds of the CI subset (two draws each; the benchmark draws thousands).
SUBSET_SEEDS = (0, 1)


@pytest.mark.parametrize("op_class", CLASSES)
def test_random_models_of_each_op_class_equal_tflm(tmp_path, op_class):
    """Each draw's translation equals TFLM (int8 bit for bit), or is
    refused in one line where TFLM refuses the model too."""
    from tflite_sweep import translate_level

    for seed in SUBSET_SEEDS:
        drawn = random_model(1000 * CLASSES.index(op_class) + seed, op_class)
        path = tmp_path / f"{seed}.tflite"
        path.write_bytes(drawn.data)
        outcome, detail = translate_level(path, seed)
        assert outcome in ("exact", "refused"), (drawn.description, outcome, detail)
        if outcome == "refused":
            assert _tflm_refuses(drawn.data), (drawn.description, detail)


def _tflm_refuses(data: bytes) -> bool:
    try:
        runtime.Interpreter.from_bytes(data, arena_size=1 << 20)
    except RuntimeError:
        return True
    return False


def _tflm(data: bytes, inputs: list) -> list:
    interpreter = runtime.Interpreter.from_bytes(data, arena_size=1 << 20)
    for i, x in enumerate(inputs):
        interpreter.set_input(x, i)
    interpreter.invoke()
    return [interpreter.get_output(0)]


def _translated(tmp_path, data: bytes, inputs: list) -> list:
    from ireegen.frontend.tflite_import import tflite_to_onnx

    path = tmp_path / "m.tflite"
    path.write_bytes(data)
    session = ort.InferenceSession(tflite_to_onnx(path).SerializeToString(), providers=["CPUExecutionProvider"])
    return session.run(None, {v.name: x for v, x in zip(session.get_inputs(), inputs)})


def _padv2(dtype: str, value, value_q=None) -> bytes:
    b = TFLiteBuilder()
    q = {} if dtype == "float32" else {"scale": 0.05, "zero_point": -7}
    x = b.tensor("x", [1, 3, 4, 2], dtype, **q)
    pads = b.tensor("paddings", [4, 2], "int32", data=[[0, 0], [2, 1], [0, 3], [1, 0]])
    vq = q if value_q is None else value_q
    v = b.tensor("pad_value", [1], dtype, data=[value], **vq)
    y = b.tensor("padded", [1, 6, 7, 3], dtype, **q)
    b.op("PADV2", [x, pads, v], [y])
    return b.build([x], [y])


@pytest.mark.parametrize("dtype,value", [("int8", 93), ("int8", -128), ("float32", -2.5)])
def test_padv2_pads_with_its_value_as_tflm(tmp_path, dtype, value):
    rng = np.random.default_rng(3)
    x = rng.integers(-128, 128, (1, 3, 4, 2)).astype(np.int8) if dtype == "int8" else rng.standard_normal((1, 3, 4, 2))
    x = x.astype(dtype)
    data = _padv2(dtype, value)
    want = _tflm(data, [x])[0]
    got = _translated(tmp_path, data, [x])[0]
    assert got.dtype == want.dtype and np.array_equal(got, want)


def _concat_of_two_scales(b):
    x = b.tensor("x", [1, 4], "int8", scale=0.05, zero_point=3)
    k = b.tensor("k", [1, 2], "int8", data=[[5, -9]], scale=0.07, zero_point=3)
    y = b.tensor("joined", [1, 6], "int8", scale=0.05, zero_point=3)
    b.op("CONCATENATION", [x, k], [y], "ConcatenationOptions", Axis=1)
    return [x], [y]


def _concat_with_relu(b):
    x = b.tensor("x", [1, 4], "float32")
    y = b.tensor("joined", [1, 8], "float32")
    b.op("CONCATENATION", [x, x], [y], "ConcatenationOptions", Axis=1, FusedActivationFunction=1)
    return [x], [y]


def _max_pool_rescaled(b):
    x = b.tensor("x", [1, 4, 4, 2], "int8", scale=0.05, zero_point=3)
    y = b.tensor("pooled", [1, 2, 2, 2], "int8", scale=0.1, zero_point=3)
    b.op("MAX_POOL_2D", [x], [y], "Pool2DOptions", Padding=1, StrideH=2, StrideW=2, FilterHeight=2, FilterWidth=2)
    return [x], [y]


def _padv2_value_of_other_scale(b):
    x = b.tensor("x", [1, 4], "int8", scale=0.05, zero_point=3)
    pads = b.tensor("paddings", [2, 2], "int32", data=[[0, 0], [1, 1]])
    v = b.tensor("pad_value", [1], "int8", data=[7], scale=0.5, zero_point=0)
    y = b.tensor("padded", [1, 6], "int8", scale=0.05, zero_point=3)
    b.op("PADV2", [x, pads, v], [y])
    return [x], [y]


def _add_of_an_int16_constant(b):
    x = b.tensor("x", [1, 4], "int8", scale=0.05, zero_point=3)
    k = b.tensor("bias16", [1, 4], "int16", data=[[1, 2, 3, 4]], scale=0.05, zero_point=0)
    y = b.tensor("sum", [1, 4], "int8", scale=0.05, zero_point=3)
    b.op("ADD", [x, k], [y], "AddOptions")
    return [x], [y]


def _custom_of_an_int16_constant(b):
    x = b.tensor("x", [1, 4], "float32")
    k = b.tensor("window16", [4], "int16", data=[1, 2, 3, 4])
    y = b.tensor("windowed", [1, 4], "float32")
    b.op("CUSTOM", [x, k], [y])
    return [x], [y]


# model builder -> what its one-line refusal names.
REFUSALS = {
    _concat_of_two_scales: ("CONCATENATION", "'joined'", "'k'", "requires them equal"),
    _concat_with_relu: ("CONCATENATION", "'joined'", "no fused activation"),
    _max_pool_rescaled: ("MAX_POOL_2D", "'pooled'", "'x'", "requires them equal"),
    _padv2_value_of_other_scale: ("PADV2", "'padded'", "'pad_value'", "not quantized as its output"),
    _add_of_an_int16_constant: ("ADD", "'sum'", "'bias16' is INT16"),
    _custom_of_an_int16_constant: ("CUSTOM", "'windowed'", "does not support"),
}
# The models TFLM refuses to prepare too (the others: an op or a type outside the set).
TFLM_REFUSES = (_concat_of_two_scales, _concat_with_relu, _max_pool_rescaled, _padv2_value_of_other_scale)


@pytest.mark.parametrize("build", REFUSALS, ids=lambda f: f.__name__.lstrip("_"))
def test_what_tflm_refuses_is_refused_in_one_line(tmp_path, build):
    """Refused by the translation (a UsageError: the CLI's exit status 2),
    before anything is compiled."""
    b = TFLiteBuilder()
    inputs, outputs = build(b)
    data = b.build(inputs, outputs)
    path = tmp_path / "model.tflite"
    path.write_bytes(data)
    if build in TFLM_REFUSES:
        assert _tflm_refuses(data)
    tflite_refused_in_one_line(path, *REFUSALS[build])


def test_the_cli_refuses_a_rescaling_concatenation_in_one_line(tmp_path):
    b = TFLiteBuilder()
    path = tmp_path / "model.tflite"
    path.write_bytes(b.build(*_concat_of_two_scales(b)))
    refused_in_one_line(run_cli("info", path), "model.tflite", *REFUSALS[_concat_of_two_scales])


def test_float_outputs_are_compared_relative_to_their_largest_magnitude():
    """An element near zero may differ by the rounding of the larger terms
    it sums (1e-5 of the output's largest magnitude), not by more."""
    from ireegen.check.tflm import _difference

    want = np.array([2.0, -1.5, 1e-3, 0.0], np.float32)
    noise = want + np.array([0, 1e-5, 1.5e-5, -1.9e-5], np.float32)
    assert _difference(noise, want)[0] == 0
    assert _difference(want + np.array([0, 0, 2.5e-5, 0], np.float32), want)[0] == 1
    assert _difference(np.zeros(4, np.float32), np.zeros(4, np.float32))[0] == 0


# Draws of the emit level: a float chain (SUB, HARD_SWISH, ADD, broadcast),
# an int8 convolution (per tensor, RELU), an int8 depthwise convolution
# (multiplier 2, per channel, RELU6), and a float convolution whose
# near-zero elements differ from TFLM's in the order of the sum (refused by
# the elementwise rule before), and an int8 depthwise convolution behind a
# float interface (refused on the Cortex-M4 before: the async reference was
# the kernels' QDQ form compiled by IREE, which rounds as ONNX does).
EMIT_DRAWS = [(3, "CHAIN"), (5, "CONV_2D"), (2, "DEPTHWISE_CONV_2D"), (5004, "CONV_2D"), (5023, "DEPTHWISE_CONV_2D")]


@pytest.mark.full_suite
@pytest.mark.parametrize("seed,op_class", EMIT_DRAWS)
@pytest.mark.parametrize("mode", ["runtimeless", "inline-static", "runtimeless@cortex-m4"])
def test_emit_of_random_models_is_verified_against_tflm(tmp_path, seed, op_class, mode):
    """emit --tune off (its verification compares the compiled code with
    TFLM): exit 0, or a one-line refusal; never a traceback."""
    from tflite_sweep import emit_level

    path = tmp_path / "m.tflite"
    path.write_bytes(random_model(seed, op_class).data)
    outcome, detail = emit_level(path, mode, tmp_path)
    assert outcome == "exact", detail
