"""ireegen's int8 kernels with TFLite Micro's requantization (the _tflm
entry points: requantize_tflm.h, tflm.h; docs/tflite.md "The int8 kernels")
equal TFLite Micro bit for bit.

The requantization alone against gemmlowp's definitions written here in
Python integers, on edge cases and random values; then the kernels, compiled
for the host (the speed and the size sources) and called through ctypes on
random one-operator .tflite models (shapes, strides, SAME and VALID padding,
zero points, per-channel scales), against TFLM's own interpreter on the same
model and input; the TFLM sources define no function another compile of the
same source defines; and emit of a .tflite int8 model for the Cortex-M4
links them and verifies against TFLM.
"""

from __future__ import annotations

import ctypes
import json
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from conftest import pack_fc_weights

import ireegen
from ireegen.frontend.tflite_arith import quantize_multiplier
from ireegen.frontend.tflite_import import tflite_to_onnx
from ireegen.frontend.tflite_kernel_form import kernel_ops

KERNELS = Path(ireegen.__file__).resolve().parent / "kernels" / "int8"
runtime = pytest.importorskip("tflite_micro.python.tflite_micro.runtime")
pytest.importorskip("tflite")
sys.path.insert(0, str(Path(__file__).parent))
from conftest import run_cli  # noqa: E402
from tflite_builder import TFLiteBuilder  # noqa: E402

CASES = 40  # random one-operator models per kind


def _cc():
    cc = shutil.which("cc") or shutil.which("gcc")
    if cc is None:
        pytest.skip("no C compiler")
    return cc


# --- the requantization alone -----------------------------------------------------------------------


def _doubling_high_mul(a: int, b: int) -> int:
    """gemmlowp's SaturatingRoundingDoublingHighMul: (a*b + nudge) / 2^31
    truncated, nudge 2^30 or 1 - 2^30 for a negative product."""
    if a == b == -(2**31):
        return 2**31 - 1
    ab = a * b
    nudge = (1 << 30) if ab >= 0 else 1 - (1 << 30)
    q = abs(ab + nudge) // (1 << 31)
    return q if ab + nudge >= 0 else -q


def _rounding_divide_by_pot(x: int, r: int) -> int:
    """gemmlowp's RoundingDivideByPOT: x / 2^r, ties away from zero."""
    mask = (1 << r) - 1
    remainder = x & mask
    threshold = (mask >> 1) + (1 if x < 0 else 0)
    return (x >> r) + (1 if remainder > threshold else 0)


def _wrap32(v: int) -> int:
    return (v + 2**31) % 2**32 - 2**31


def _requantized(acc: int, multiplier: int, shift: int, zero: int) -> int:
    left, right = max(shift, 0), max(-shift, 0)
    v = _rounding_divide_by_pot(_doubling_high_mul(_wrap32(acc << left), multiplier), right) + zero
    return min(max(v, -128), 127)


REQUANTIZE_HARNESS = r"""
#include <stdio.h>
#include "requantize.h"
int main(void) {
  long acc, multiplier, shift, zero;
  while (scanf("%ld %ld %ld %ld", &acc, &multiplier, &shift, &zero) == 4) {
    ireegen_i8_scale_t s = {(int32_t)multiplier, (int32_t)shift};
    printf("%d %d %d\n", ireegen_i8_requantize((int32_t)acc, s, (int32_t)zero),
           ireegen_i8_requantize_fast((int32_t)acc, s, (int32_t)zero, 2),
           ireegen_i8_requantize_fast((int32_t)acc, s, (int32_t)zero, 1));
  }
  return 0;
}
"""


def test_requantization_is_gemmlowps(tmp_path):
    """requantize_tflm.h on ties of both steps (x.5 of the high multiply,
    x.5 of the power-of-two division, for positive and negative values),
    shifts from -31 to 30, and random accumulators and factors."""
    rng = np.random.default_rng(5)
    cases = []
    for shift in (-31, -20, -9, -1, 0, 1, 4, 30):
        for m in (0, 1 << 30, (1 << 31) - 1, 1518500250, 1 << 30 | 1):
            for acc in (
                0,
                1,
                -1,
                2**30,
                -(2**30),
                2**30 - 1,
                1 - 2**30,
                -(2**30) - 1,
                2**31 - 1,
                -(2**31),
                1 << 8,
                -(1 << 8) - 1,
                3 << 20,
                -(3 << 20),
            ):
                cases.append((acc, m, shift, 0))
    # Exact ties: acc * m = (2k + 1) * 2^30 (the high multiply), and a
    # high product whose low `right` bits are exactly half.
    for k in range(-8, 8):
        cases.append(((2 * k + 1), 1 << 30, 0, 0))
        cases.append(((2 * k + 1) << 5, 1 << 30, -6, 3))
    for _ in range(3000):
        acc = int(rng.integers(-(2**31), 2**31))
        if rng.random() < 0.7:
            acc >>= int(rng.integers(0, 24))
        m = int(rng.integers(1 << 30, 1 << 31))
        shift = int(rng.integers(-31, 8))
        cases.append((acc, m, shift, int(rng.integers(-128, 128))))
    src = tmp_path / "requantize.c"
    src.write_text(REQUANTIZE_HARNESS)
    exe = tmp_path / "requantize"
    flags = ["-std=c11", "-O2", "-Wall", "-Wextra", "-Werror", "-DIREEGEN_I8_TFLM=1"]
    subprocess.run([_cc(), *flags, f"-I{KERNELS}", str(src), "-o", str(exe)], check=True)
    given = "".join(f"{a} {m} {s} {z}\n" for a, m, s, z in cases)
    got = subprocess.run([str(exe)], input=given, capture_output=True, text=True, check=True).stdout.splitlines()
    checked = [0, 0]
    for (a, m, s, z), line in zip(cases, got, strict=True):
        general, smmlar, smlal = (int(v) for v in line.split())
        want = _requantized(a, m, s, z)
        assert general == want, (a, m, s, z)
        # The one-step forms where a checked layer uses them (ireegen_i8_fast_layer).
        if m == 0 or (-31 <= s <= -1 and -(2**30) < a < 2**30):
            checked[0] += 1
            assert smmlar == want, ("SMMLAR", a, m, s, z)
        if m == 0 or -31 <= s <= -2:
            checked[1] += 1
            assert smlal == want, ("SMLAL", a, m, s, z)
    assert min(checked) > 1000


# --- the kernels against TFLM's interpreter ----------------------------------------------------------

SPEED_SOURCES = ("convolution_tflm.c", "fully_connected_tflm.c", "add_tflm.c")
SIZE_SOURCES = ("convolution_small_tflm.c", "fully_connected_small_tflm.c", "add_tflm.c")


@pytest.fixture(scope="module")
def libs(tmp_path_factory):
    """{"speed": ..., "size": ...}: the TFLM kernels of kernels.json and
    kernels.size.json, built for the host with their flags."""
    root = tmp_path_factory.mktemp("tflm_kernels")
    out = {}
    for goal, sources, opt in (("speed", SPEED_SOURCES, "-O2"), ("size", SIZE_SOURCES, "-Os")):
        lib = root / f"libtflm_{goal}.so"
        flags = ["-std=c11", opt, "-Wall", "-Wextra", "-Werror", "-shared", "-fPIC"]
        subprocess.run([_cc(), *flags, *(str(KERNELS / s) for s in sources), "-o", str(lib)], check=True)
        out[goal] = ctypes.CDLL(str(lib))
    return out


def _ptr(a: np.ndarray):
    return a.ctypes.data_as(ctypes.c_void_p)


def _table(sx, sw, sy) -> np.ndarray:
    """TFLM's (multiplier, shift) per channel, from the float scales in
    double as TFLM computes them (the match spec computes the same table)."""
    pairs = [quantize_multiplier(float(np.float64(sx) * np.float64(s) / np.float64(sy))) for s in sw]
    return np.ascontiguousarray(np.array(pairs, np.int32).ravel())


def _tflm(model: bytes, x: np.ndarray, tmp_path: Path) -> np.ndarray:
    path = tmp_path / "case.tflite"
    path.write_bytes(model)
    interpreter = runtime.Interpreter.from_file(str(path))
    interpreter.set_input(x, 0)
    interpreter.invoke()
    return np.array(interpreter.get_output(0))


def _scales(rng, count):
    sx = np.float32(rng.uniform(0.002, 0.1))
    sw = rng.uniform(0.001, 0.05, count).astype(np.float32)
    # Mostly factors below 1, some above (a left shift in TFLM's arithmetic).
    sy = np.float32(rng.uniform(0.01, 0.5) if rng.random() < 0.85 else rng.uniform(1e-5, 1e-4))
    return sx, sw, sy, int(rng.integers(-128, 128)), int(rng.integers(-128, 128))


def _out_size(size, kernel, stride, same):
    return -(-size // stride) if same else (size - kernel) // stride + 1


def _pad_before(size, kernel, stride, out):
    return max((out - 1) * stride + kernel - size, 0) // 2


def _conv_case(rng, depthwise: bool):
    c = int(rng.integers(1, 9))
    f = c if depthwise else int(rng.integers(1, 11))
    kh, kw = (int(v) for v in rng.choice([1, 3, 5], 2)) if rng.random() < 0.8 else (10, 4)
    stride = int(rng.integers(1, 3))
    h, w = int(rng.integers(max(kh, 3), 13)), int(rng.integers(max(kw, 3), 13))
    same = bool(rng.random() < 0.5)
    return c, f, kh, kw, stride, h, w, same


def _conv_model(rng, depthwise, c, f, kh, kw, stride, h, w, same, q, bias=None):
    sx, sw, sy, zx, zy = q
    oh, ow = _out_size(h, kh, stride, same), _out_size(w, kw, stride, same)
    weights = rng.integers(-127, 128, (1, kh, kw, c) if depthwise else (f, kh, kw, c)).astype(np.int8)
    if bias is None:
        bias = rng.integers(-5000, 5000, f).astype(np.int32)
    b = TFLiteBuilder()
    x = b.tensor("x", [1, h, w, c], "int8", scale=sx, zero_point=zx)
    wt = b.tensor("w", list(weights.shape), "int8", data=weights, scale=sw, axis=3 if depthwise else 0)
    bt = b.tensor("b", [f], "int32", data=bias, scale=sx * sw, axis=0)
    y = b.tensor("y", [1, oh, ow, f], "int8", scale=sy, zero_point=zy)
    fields = dict(Padding=0 if same else 1, StrideW=stride, StrideH=stride, FusedActivationFunction=0)
    fields.update(DilationWFactor=1, DilationHFactor=1)
    if depthwise:
        b.op("DEPTHWISE_CONV_2D", [x, wt, bt], [y], "DepthwiseConv2DOptions", DepthMultiplier=1, **fields)
    else:
        b.op("CONV_2D", [x, wt, bt], [y], "Conv2DOptions", **fields)
    return b.build([x], [y]), weights, bias, oh, ow


@pytest.mark.parametrize("depthwise", [False, True], ids=["conv", "depthwise"])
def test_convolution_equals_tflm(libs, tmp_path, depthwise):
    """CONV_2D and DEPTHWISE_CONV_2D (multiplier 1) on random shapes: the
    speed and the size kernel equal TFLM's interpreter."""
    rng = np.random.default_rng(41 + depthwise)
    name = "ireegen_i8_depthwise_conv_tflm" if depthwise else "ireegen_i8_convolution_tflm"
    for case in range(CASES):
        c, f, kh, kw, stride, h, w, same = _conv_case(rng, depthwise)
        q = _scales(rng, f)
        model, weights, bias, oh, ow = _conv_model(rng, depthwise, c, f, kh, kw, stride, h, w, same, q)
        x = rng.integers(-128, 128, (1, h, w, c)).astype(np.int8)
        want = _tflm(model, x, tmp_path).transpose(0, 3, 1, 2)
        sx, sw, sy, zx, zy = q
        xn = np.ascontiguousarray(x.transpose(0, 3, 1, 2))
        wn = np.ascontiguousarray(weights.transpose(3, 0, 1, 2) if depthwise else weights.transpose(0, 3, 1, 2))
        table = _table(sx, sw, sy)
        pt = _pad_before(h, kh, stride, oh) if same else 0
        pl = _pad_before(w, kw, stride, ow) if same else 0
        sizes = (1, c, h, w, f, kh, kw, oh, ow, stride, pt, pl)
        for goal, lib in libs.items():
            y = np.zeros((1, f, oh, ow), np.int8)
            getattr(lib, name)(
                _ptr(xn), ctypes.c_size_t(0), _ptr(wn), ctypes.c_size_t(0), _ptr(bias), ctypes.c_size_t(0),
                _ptr(table), ctypes.c_size_t(0), _ptr(y), ctypes.c_size_t(0), *map(ctypes.c_size_t, sizes),
                ctypes.c_int32(zx), ctypes.c_int32(zy),
            )  # fmt: skip
            assert np.array_equal(y, want), f"case {case} ({goal}): {sizes} same={same}"


def _fc_case(rng, m: int, n: int, k: int, tmp_path: Path) -> tuple:
    """A random per-tensor FULLY_CONNECTED [m, k] x [n, k]: (x, weights,
    bias, the kernels' factor table, x's and y's zero points, TFLM's output)."""
    sx, sw, sy, zx, zy = _scales(rng, 1)
    weights = rng.integers(-127, 128, (n, k)).astype(np.int8)
    bias = rng.integers(-5000, 5000, n).astype(np.int32)
    b = TFLiteBuilder()
    xt = b.tensor("x", [m, k], "int8", scale=sx, zero_point=zx)
    wt = b.tensor("w", [n, k], "int8", data=weights, scale=sw[0])
    bt = b.tensor("b", [n], "int32", data=bias, scale=sx * sw[0])
    yt = b.tensor("y", [m, n], "int8", scale=sy, zero_point=zy)
    b.op("FULLY_CONNECTED", [xt, wt, bt], [yt], "FullyConnectedOptions", FusedActivationFunction=0)
    x = rng.integers(-128, 128, (m, k)).astype(np.int8)
    want = _tflm(b.build([xt], [yt]), x, tmp_path)
    return x, weights, bias, _table(sx, np.repeat(sw, n), sy), zx, zy, want


def test_fully_connected_equals_tflm(libs, tmp_path):
    """FULLY_CONNECTED on random (M, K, N), K past the stack column too,
    per-tensor weights (TFLite's converter writes them so): the speed and
    the size kernel equal TFLM's interpreter."""
    rng = np.random.default_rng(43)
    for case in range(CASES):
        m, n = int(rng.integers(1, 4)), int(rng.integers(1, 23))
        k = int(rng.integers(1, 70)) if case % 8 else 1100
        x, weights, bias, table, zx, zy, want = _fc_case(rng, m, n, k, tmp_path)
        packed = pack_fc_weights(weights)
        for goal, lib in libs.items():
            y = np.zeros((m, n), np.int8)
            lib.ireegen_i8_fully_connected_tflm(
                _ptr(x), ctypes.c_size_t(0), _ptr(packed), ctypes.c_size_t(0), _ptr(bias), ctypes.c_size_t(0),
                _ptr(table), ctypes.c_size_t(0), _ptr(y), ctypes.c_size_t(0), *map(ctypes.c_size_t, (m, n, k)),
                ctypes.c_int32(zx), ctypes.c_int32(zy),
            )  # fmt: skip
            assert np.array_equal(y, want), f"case {case} ({goal}): m={m} n={n} k={k}"


@pytest.mark.skipif(
    not (shutil.which("arm-none-eabi-gcc") and shutil.which("qemu-system-arm")), reason="no Arm bare-metal toolchain"
)
def test_tflm_kernels_on_cortex_m4_equal_tflm(tmp_path):
    """The DSP path of the TFLM kernels (SMMLAR's one-step requantization
    of a checked layer, the two-output depthwise rows at stride 1 and 2,
    the assembler fully connected loop and its unaligned fallback, the pair
    column), built by arm-none-eabi-gcc for the Cortex-M4 at -O2 and run
    under qemu-system-arm, on random one-operator models: every output
    equals TFLM's interpreter.  Some channels have a factor below 2^-32
    (TFLM's multiplier 0) or of about 2^-32 beside a bias of 2^30, as
    trained models have."""
    rng = np.random.default_rng(47)
    cases, offsets, expected = [], [], []
    for case in range(36):
        if case % 3 == 2:
            m, n = int(rng.integers(1, 3)), int(rng.integers(1, 23))
            k = int(rng.integers(1, 90))
            x, weights, bias, table, zx, zy, want = _fc_case(rng, m, n, k, tmp_path)
            cases.append((7, [m, n, k, 0, zx, 0, 0, zy], x, pack_fc_weights(weights), bias, table, (m, n)))
            offsets.append(case // 3 % 2)  # every other one unaligned
        else:
            depthwise = case % 3 == 1
            c, f, kh, kw, stride, h, w, same = _conv_case(rng, depthwise)
            if depthwise and case % 2:
                kh = kw = 3  # the two-output rows
            sx, sw, sy, zx, zy = _scales(rng, f)
            bias = None
            if case % 2:  # beside a bias of +-2^30, one channel's factor flushes to 0 in TFLM, or is about 2^-32
                sw[0] = np.float32(1e-12) if case % 4 == 1 else np.float32(sy / sx * 1.3 * 2.0**-32)
                bias = rng.integers(-5000, 5000, f).astype(np.int32)
                bias[0] = 2**30 if case % 8 < 4 else -(2**30)
            q = (sx, sw, sy, zx, zy)
            model, weights, bias, oh, ow = _conv_model(rng, depthwise, c, f, kh, kw, stride, h, w, same, q, bias)
            x = rng.integers(-128, 128, (1, h, w, c)).astype(np.int8)
            want = _tflm(model, x, tmp_path).transpose(0, 3, 1, 2)
            x = np.ascontiguousarray(x.transpose(0, 3, 1, 2))
            wbytes = np.ascontiguousarray(weights.transpose(3, 0, 1, 2) if depthwise else weights.transpose(0, 3, 1, 2))
            pt = _pad_before(h, kh, stride, oh) if same else 0
            pl = _pad_before(w, kw, stride, ow) if same else 0
            sizes = [1, c, h, w, f, kh, kw, oh, ow, stride, pt, pl, 0, zx, 0, 0, zy]
            cases.append((8 + depthwise, sizes, x, wbytes, bias, _table(sx, sw, sy), want.shape))
            offsets.append(0)
        expected.append(want)
    got = _driver_outputs(tmp_path, "cortex-m4", cases, offsets)
    for case, (y, want) in enumerate(zip(got, expected, strict=True)):
        assert np.array_equal(y, want.reshape(y.shape)), f"case {case}"


def test_add_equals_tflm(libs, tmp_path):
    """ADD of two int8 tensors of one shape (random shapes, scales and zero
    points, the larger scale on either input) equals TFLM's interpreter."""
    rng = np.random.default_rng(47)
    for case in range(CASES):
        shape = [int(v) for v in rng.integers(1, 9, int(rng.integers(1, 5)))]
        sa, sb = (np.float32(rng.uniform(0.005, 0.2)) for _ in range(2))
        so = np.float32(rng.uniform(0.01, 0.4))
        za, zb, zo = (int(rng.integers(-128, 128)) for _ in range(3))
        b = TFLiteBuilder()
        other = rng.integers(-128, 128, shape).astype(np.int8)
        at = b.tensor("a", shape, "int8", scale=sa, zero_point=za)
        bt = b.tensor("b", shape, "int8", data=other, scale=sb, zero_point=zb)
        yt = b.tensor("y", shape, "int8", scale=so, zero_point=zo)
        b.op("ADD", [at, bt], [yt], "AddOptions", FusedActivationFunction=0)
        x = rng.integers(-128, 128, shape).astype(np.int8)
        want = _tflm(b.build([at], [yt]), x, tmp_path)
        bits = [int(np.array(v, np.float32).view(np.uint32)) for v in (sa, sb, so)]
        for goal, lib in libs.items():
            y = np.zeros(shape, np.int8)
            lib.ireegen_i8_add_tflm(
                _ptr(x), ctypes.c_size_t(0), _ptr(other), ctypes.c_size_t(0), _ptr(y), ctypes.c_size_t(0),
                ctypes.c_size_t(x.size), ctypes.c_uint32(bits[0]), ctypes.c_int32(za), ctypes.c_uint32(bits[1]),
                ctypes.c_int32(zb), ctypes.c_uint32(bits[2]), ctypes.c_int32(zo),
            )  # fmt: skip
            assert np.array_equal(y, want), f"case {case} ({goal}): {shape}"


# --- the sources ---------------------------------------------------------------------------------------


@pytest.mark.parametrize("goal", ["speed", "size"])
def test_tflm_sources_define_no_function_another_compile_defines(tmp_path, goal):
    """convolution_tflm.c and fully_connected_tflm.c (and the compact
    twins) compile a source the per-tensor and per-channel kernels compile
    too: every function they define is an entry point ending in _tflm or a
    static named ireegen_i8_tflm_* (tflm.h), names no other compile has, so
    a firmware's --gc-sections keeps only what it calls.  On the host, and
    the Cortex-M4F and M55 (the MVE loops' functions) when the compiler is
    installed."""
    cc, nm = _cc(), shutil.which("nm")
    if nm is None:
        pytest.skip("no nm")
    compilers = [("host", [cc], nm)]
    if shutil.which("arm-none-eabi-gcc") and shutil.which("arm-none-eabi-nm"):
        m4 = ["arm-none-eabi-gcc", "-mthumb", "-mfloat-abi=hard", "-mcpu=cortex-m4", "-mfpu=fpv4-sp-d16"]
        m55 = ["arm-none-eabi-gcc", "-mthumb", "-mfloat-abi=hard", "-mcpu=cortex-m55", "-mfpu=auto"]
        compilers += [("m4", m4, "arm-none-eabi-nm"), ("m55", m55, "arm-none-eabi-nm")]
    opt, sources = ("-O2", SPEED_SOURCES) if goal == "speed" else ("-Os", SIZE_SOURCES)
    for target, compiler, nm in compilers:
        for source in sources:
            obj = tmp_path / f"{source}.{target}.o"
            flags = ["-std=c11", opt, "-ffunction-sections", "-Wall", "-Wextra", "-Werror", "-c"]
            subprocess.run([*compiler, *flags, str(KERNELS / source), "-o", str(obj)], check=True)
            out = subprocess.run([nm, str(obj)], check=True, stdout=subprocess.PIPE, text=True).stdout
            names = {line.split()[2] for line in out.splitlines() if len(line.split()) == 3 and line.split()[1] in "tT"}
            assert any(n.endswith("_tflm") for n in names), (target, source, names)
            assert all(n.endswith("_tflm") or n.startswith("ireegen_i8_tflm_") for n in names), (target, names)


def test_tflm_kernels_are_in_both_specs():
    """kernels.json and kernels.size.json build the TFLM entry points (the
    speed and the compact sources) with the headers they include."""
    for spec, sources in (("kernels.json", SPEED_SOURCES), ("kernels.size.json", SIZE_SOURCES)):
        data = json.loads((KERNELS / spec).read_text())
        assert set(sources) <= set(data["sources"]), spec
        assert {"requantize_tflm.h", "tflm.h"} <= set(data["headers"]), spec


# --- emit ----------------------------------------------------------------------------------------------


def _chain_model() -> bytes:
    """CONV_2D 3x3 SAME stride 2 (RELU6) -> CONV_2D 1x1 (RELU) ->
    DEPTHWISE_CONV_2D 3x3 SAME (no bias), ADD of the last two -> RESHAPE ->
    FULLY_CONNECTED: convolutions that pass their values on to each other,
    as MobileNet's, and a residual ADD, as ResNet's."""
    rng = np.random.default_rng(3)
    b = TFLiteBuilder()

    def act(name, shape, scale, zero):
        return b.tensor(name, shape, "int8", scale=scale, zero_point=zero)

    def conv(x, name, op, shape, out_shape, scale, zero, bias=True, **fields):
        ws = rng.uniform(0.002, 0.01, shape[-1] if op == "DEPTHWISE_CONV_2D" else shape[0]).astype(np.float32)
        w = b.tensor(f"{name}/w", shape, "int8", data=rng.integers(-127, 128, shape), scale=ws,
                     axis=3 if op == "DEPTHWISE_CONV_2D" else 0)  # fmt: skip
        inputs = [x, w]
        if bias:
            inputs.append(b.tensor(f"{name}/b", [ws.size], "int32", data=rng.integers(-2000, 2000, ws.size), scale=ws))
        y = act(name, out_shape, scale, zero)
        options = "DepthwiseConv2DOptions" if op == "DEPTHWISE_CONV_2D" else "Conv2DOptions"
        b.op(op, inputs, [y], options, DilationWFactor=1, DilationHFactor=1, **fields)
        return y

    x = act("image", [1, 12, 12, 3], 0.02, -7)
    c1 = conv(x, "c1", "CONV_2D", [8, 3, 3, 3], [1, 6, 6, 8], 6 / 255, -128,
              Padding=0, StrideW=2, StrideH=2, FusedActivationFunction=3)  # fmt: skip
    c2 = conv(c1, "c2", "CONV_2D", [8, 1, 1, 8], [1, 6, 6, 8], 0.05, -128,
              Padding=1, StrideW=1, StrideH=1, FusedActivationFunction=1)  # fmt: skip
    c3 = conv(c2, "c3", "DEPTHWISE_CONV_2D", [1, 3, 3, 8], [1, 6, 6, 8], 0.04, 5, bias=False,
              Padding=0, StrideW=1, StrideH=1, DepthMultiplier=1, FusedActivationFunction=0)  # fmt: skip
    total = act("add", [1, 6, 6, 8], 0.06, -3)
    b.op("ADD", [c2, c3], [total], "AddOptions", FusedActivationFunction=0)
    flat = act("flat", [1, 288], 0.06, -3)
    b.op("RESHAPE", [total, b.tensor("flat/shape", [2], "int32", data=[1, 288])], [flat], "ReshapeOptions")
    fw = b.tensor("fc/w", [4, 288], "int8", data=rng.integers(-127, 128, (4, 288)), scale=0.003)
    fb = b.tensor("fc/b", [4], "int32", data=rng.integers(-500, 500, 4), scale=0.06 * 0.003)
    y = act("logits", [1, 4], 0.1, -2)
    b.op("FULLY_CONNECTED", [flat, fw, fb], [y], "FullyConnectedOptions", FusedActivationFunction=0)
    return b.build([x], [y])


def test_chained_convolutions_are_all_in_the_kernels_form(tmp_path):
    """The translation of the chain for the kernels writes its
    convolutions, ADD and fully connected op in the form the spec matches,
    and passes NCHW values from one convolution to the next."""
    path = tmp_path / "chain.tflite"
    path.write_bytes(_chain_model())
    model = tflite_to_onnx(path, tflm_kernels=True)
    assert kernel_ops(model) == 5
    kinds = [n.op_type for n in model.graph.node if n.op_type in ("Conv", "Gemm", "Transpose")]
    # One transpose in, each convolution's and the ADD's NHWC copy (unused
    # but by the reshape after the ADD), none back into NCHW between them.
    assert kinds.count("Transpose") == 5, kinds


@pytest.mark.full_suite
@pytest.mark.parametrize("cpu", ["cortex-m4", "cortex-m55"])
def test_emit_tflite_for_cortex_m_calls_the_tflm_kernels(tmp_path, cpu):
    """emit of an int8 .tflite model for the Cortex-M4 (the SMLAD loops) and
    the M55 (the MVE loops with TFLM's rounding, the depthwise's narrow
    plane among them) links the TFLM kernels for its convolutions,
    depthwise, ADD and fully connected ops and verifies against TFLM (bit
    for bit, three draws over the int8 range)."""
    model = tmp_path / "chain.tflite"
    model.write_bytes(_chain_model())
    out = tmp_path / "out"
    proc = run_cli("emit", model, "-o", out, "--execution-model", "runtimeless", "--target-cpu", cpu)
    assert proc.returncode == 0, proc.stderr
    manifest = json.loads((out / "manifest.json").read_text())
    called = sorted({k for d in manifest["kernels"]["dispatches"] for k in d["kernels"]})
    assert called == [
        "ireegen_i8_add_tflm",
        "ireegen_i8_convolution_tflm",
        "ireegen_i8_depthwise_conv_tflm",
        "ireegen_i8_fully_connected_tflm",
    ]
    record = manifest["verification"]["tflite_micro"]["main"]
    assert record["outputs"] == {"logits": {"max_abs_error": 0.0}}


# --- the MVE loops: the TFLM kernels on a Cortex-M55 under qemu ------------------------------------


DRIVER = Path(__file__).resolve().parent / "c" / "int8_kernels_driver.c"
DRIVER_SOURCES = (
    "fully_connected.c", "convolution.c", "add.c", "fully_connected_per_channel.c", "convolution_per_channel.c",
    *SPEED_SOURCES,
)  # fmt: skip


def _driver_outputs(tmp_path: Path, cpu: str, cases: list, offsets: list) -> list:
    """tests/c/int8_kernels_driver.c built with the int8 kernels for the
    bare-metal `cpu` at -O2 and run under its emulator on `cases` ((driver
    kind, parameters, x, w, bias, table, output shape), the weights at the
    element offset of `offsets`): each case's int8 output, in its shape."""
    from ireegen.cbuild import baremetal
    from ireegen.cbuild.toolchains import toolchain_for
    from ireegen.config.cores import CORES

    with open(tmp_path / "cases.bin", "wb") as f:
        for (kind, sizes, x, w, bias, table, shape), offset in zip(cases, offsets, strict=True):
            counts = [x.size, w.size, bias.nbytes, int(np.prod(shape)), offset]
            f.write(np.array([kind, *sizes, *[0] * (20 - len(sizes)), *counts], np.int64).astype(np.uint32).tobytes())
            f.write(x.tobytes() + w.tobytes() + bias.tobytes() + table.tobytes())
    toolchain = toolchain_for(CORES[cpu].default_triple, cpu=cpu)
    sources, link_flags = baremetal.support_files(toolchain.core, tmp_path)
    flags = [*toolchain.cflags, "-O2", "-std=c11", "-Wall", "-Wextra", "-Werror", f"-I{KERNELS}"]
    program = tmp_path / "driver.elf"
    subprocess.run(
        [toolchain.cc, *flags, DRIVER, *(KERNELS / s for s in DRIVER_SOURCES), *sources, *link_flags, "-lm", "-o",
         program],
        check=True,
    )  # fmt: skip
    run = subprocess.run(toolchain.run_command(program, ["cases.bin", "out.bin"]), cwd=tmp_path, timeout=600)
    assert run.returncode == 0
    got = (tmp_path / "out.bin").read_bytes()
    outputs, at = [], 0
    for *_, shape in cases:
        size = int(np.prod(shape))
        outputs.append(np.frombuffer(got[at : at + size], np.int8).reshape(shape))
        at += size
    assert at == len(got)
    return outputs


def _m55_conv_case(rng, depthwise: bool, i: int):
    """A random NCHW convolution for the MVE loops: (driver kind, the 20
    parameters, x, w, bias, table, output shape).  Every few cases one of
    the shapes the loops split on: past the 64 filters whose factors are
    tabled at once, a column past 640 values (the SMLAD loops), an odd last
    pixel and filter, a depthwise band several times down a tall image, a
    row too wide for one, 3x3 at strides 1 and 2."""
    n, c = int(rng.integers(1, 3)), int(rng.integers(1, 9))
    h, wd = int(rng.integers(3, 12)), int(rng.integers(3, 12))
    kh, kw = (3, 3) if rng.random() < 0.5 else (int(rng.integers(1, 4)), int(rng.integers(1, 4)))
    stride = int(rng.integers(1, 3)) if kh == 3 else int(rng.integers(1, 5))
    f = int(rng.integers(1, 12))
    special = i % 6
    if special == 1 and not depthwise:
        f, c, h, wd = 130, 2, 5, 6
    if special == 2 and not depthwise:
        c, h, wd = 80, 4, 5
    if special == 1 and depthwise:
        h, wd = 150, 9
    if special == 2 and depthwise:
        h, wd, kh, kw, stride = 3, 900, 3, 3, 1
    f = c if depthwise else f
    pt, pl = int(rng.integers(0, kh)), int(rng.integers(0, kw))
    pb, pr = int(rng.integers(0, kh)), int(rng.integers(0, kw))
    oh, ow = (h + pt + pb - kh) // stride + 1, (wd + pl + pr - kw) // stride + 1
    sx, sw, sy, zx, zy = _scales(rng, f)
    x = rng.integers(-128, 128, (n, c, h, wd), dtype=np.int8)
    w = rng.integers(-127, 128, (f, 1 if depthwise else c, kh, kw), dtype=np.int8)
    bias = rng.integers(-20000, 20000, f).astype(np.int32)
    sizes = [n, c, h, wd, f, kh, kw, oh, ow, stride, pt, pl, 0, zx, 0, 0, zy]
    return 8 + depthwise, sizes, x, w, bias, _table(sx, sw, sy), (n, f, oh, ow)


@pytest.mark.skipif(
    not (shutil.which("arm-none-eabi-gcc") and shutil.which("qemu-system-arm")), reason="no Arm bare-metal toolchain"
)
def test_kernels_on_cortex_m55_equal_the_tflm_kernels_on_the_host(libs, tmp_path):
    """The MVE loops with TFLM's rounding (requantize_mve.h: VQRDMULH and the
    division by a power of two rounded half away from zero): the _tflm
    kernels (ADD too: add_mve.h) built for the Cortex-M55, run by tests/c/int8_kernels_driver.c
    under qemu-system-arm on random shapes (x_zero -128 and 127 among them,
    factors above 1: TFLM's left shift), weights at every byte alignment,
    every output equal to the same kernels' portable C on the host, which
    the tests above hold to TFLM's interpreter."""

    rng = np.random.default_rng(56)
    host = libs["speed"]
    cases = []
    for i in range(30):
        m, n = int(rng.integers(1, 4)), int(rng.integers(1, 40))
        k = int(rng.choice([rng.integers(1, 300), 1100]))
        sx, sw, sy, zx, zy = _scales(rng, 1)
        zx = {0: -128, 1: 127}.get(i % 4, zx)
        x = rng.integers(-128, 128, (m, k), dtype=np.int8)
        w = rng.integers(-127, 128, (n, k), dtype=np.int8)
        bias = rng.integers(-20000, 20000, n).astype(np.int32)
        cases.append(
            (7, [m, n, k, 0, zx, 0, 0, zy], x, pack_fc_weights(w), bias, _table(sx, np.repeat(sw, n), sy), (m, n))
        )
    cases += [_m55_conv_case(rng, i % 2 == 1, i // 2) for i in range(48)]
    for i in range(12):  # ADD: the last four long enough for the tabled terms (add_mve.h)
        count = int(rng.integers(1, 300)) if i < 8 else int(rng.integers(512, 1100))
        a, b = rng.integers(-128, 128, (2, count), dtype=np.int8)
        scales = [int(np.float32(rng.uniform(0.005, 0.3)).view(np.uint32)) for _ in range(3)]
        if i % 4 in (1, 3):  # equal input scales: both factors 1/2, no right shift
            scales[1] = scales[0]
        if i % 4 == 2:  # an output scale so small that its factor shifts left
            scales[2] = int(np.float32(rng.uniform(1e-8, 1e-7)).view(np.uint32))
        if i % 4 == 3:  # output scale twice the inputs': an odd sum of the two is a tie, half of them negative
            scales[2] = int((np.uint32(scales[0]).view(np.float32) * np.float32(2)).view(np.uint32))
        za, zb, zy = (int(v) for v in rng.integers(-128, 128, 3))
        empty = np.zeros(0, np.int32)
        cases.append((10, [count, scales[0], za, scales[1], zb, scales[2], zy], a, b, empty, empty, (count,)))
    expected = []
    for kind, sizes, x, w, bias, table, shape in cases:
        y = np.zeros(shape, np.int8)
        head = (_ptr(x), ctypes.c_size_t(0), _ptr(w), ctypes.c_size_t(0), _ptr(bias), ctypes.c_size_t(0))
        head += (_ptr(table), ctypes.c_size_t(0), _ptr(y), ctypes.c_size_t(0))
        if kind == 10:
            host.ireegen_i8_add_tflm(
                _ptr(x), ctypes.c_size_t(0), _ptr(w), ctypes.c_size_t(0), _ptr(y), ctypes.c_size_t(0),
                ctypes.c_size_t(sizes[0]), *(t(v) for t, v in zip([ctypes.c_uint32, ctypes.c_int32] * 3, sizes[1:])),
            )  # fmt: skip
        elif kind == 7:
            host.ireegen_i8_fully_connected_tflm(*head, *map(ctypes.c_size_t, sizes[:3]), ctypes.c_int32(sizes[4]),
                                                 ctypes.c_int32(sizes[7]))  # fmt: skip
        else:
            entry = host.ireegen_i8_convolution_tflm if kind == 8 else host.ireegen_i8_depthwise_conv_tflm
            entry(*head, *map(ctypes.c_size_t, sizes[:12]), ctypes.c_int32(sizes[13]), ctypes.c_int32(sizes[16]))
        expected.append(y)
    got = _driver_outputs(
        tmp_path, "cortex-m55", cases, [i % 4 for i in range(len(cases))]
    )  # weights at offsets 0 to 3
    for i, ((kind, sizes, *_), y, want) in enumerate(zip(cases, got, expected, strict=True)):
        assert np.array_equal(y, want), f"case {i} (kernel {kind}): {sizes}, {np.count_nonzero(y != want)} differ"
