"""ireegen's int8 kernels (ireegen/kernels/int8/, docs/kernels-int8.md)
equal ONNX Runtime's int8 operators bit for bit.

The kernels are compiled for the host with the C compiler and called
through ctypes on random shapes, zero points, scales, weights and inputs;
the reference is ONNX Runtime's own QGemm and QLinearConv on the same int8
tensors.  Then QDQ models made by onnxruntime's quantize_static go through
emit: on a Cortex-M4 under qemu (the kernels on by default, the DSP path)
and on the host (the portable path), outputs equal to ONNX Runtime's.  The
committed match spec is what its generator writes.
"""

from __future__ import annotations

import ctypes
import json
import shutil
import struct
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import ireegen
from ireegen.compile import int8_match

KERNELS = Path(ireegen.__file__).resolve().parent / "kernels" / "int8"

ort = pytest.importorskip("onnxruntime")
onnx = pytest.importorskip("onnx")
from onnx import TensorProto, helper  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "benchmarks"))
from conftest import pack_fc_weights  # noqa: E402
from mlperf_tiny_models import quantize_qdq  # noqa: E402

CASES = 100  # random cases per operator


def test_committed_spec_is_generated():
    assert (KERNELS / "int8.match.mlir").read_text() == int8_match.spec()


@pytest.fixture(scope="module")
def lib(tmp_path_factory):
    cc = shutil.which("cc") or shutil.which("gcc")
    if cc is None:
        pytest.skip("no C compiler")
    out = tmp_path_factory.mktemp("int8") / "libireegen_int8.so"
    sources = [
        str(KERNELS / s)
        for s in (
            "fully_connected.c",
            "fully_connected_per_channel.c",
            "convolution.c",
            "convolution_per_channel.c",
            "quantize.c",
            "add.c",
            "pool.c",
            "softmax.c",
        )
    ]
    flags = ["-std=c11", "-O2", "-Wall", "-Wextra", "-Werror", "-shared", "-fPIC"]
    subprocess.run([cc, *flags, *sources, "-o", str(out), "-lm"], check=True)
    return ctypes.CDLL(str(out))


# The compact convolution and fully connected of --optimize-for size
# (kernels.size.json): the same entry points, checked on the same cases.
SMALL_SOURCES = ("fully_connected_small.c", "convolution_small.c")


@pytest.fixture(scope="module")
def small_lib(tmp_path_factory):
    cc = shutil.which("cc") or shutil.which("gcc")
    if cc is None:
        pytest.skip("no C compiler")
    out = tmp_path_factory.mktemp("int8_small") / "libireegen_int8_small.so"
    flags = ["-std=c11", "-Os", "-Wall", "-Wextra", "-Werror", "-shared", "-fPIC"]
    subprocess.run([cc, *flags, *(str(KERNELS / s) for s in SMALL_SOURCES), "-o", str(out), "-lm"], check=True)
    return ctypes.CDLL(str(out))


def _bits(scale: float) -> int:
    return struct.unpack("<I", struct.pack("<f", scale))[0]


def _ptr(a: np.ndarray):
    return a.ctypes.data_as(ctypes.c_void_p)


def _session(node, inputs: dict, output_shape, opset_domain=None):
    """An ONNX model of one quantized operator whose tensors are initializers."""
    inits = [onnx.numpy_helper.from_array(v, k) for k, v in inputs.items() if k != "x"]
    x = inputs["x"]
    graph = helper.make_graph(
        [node],
        "op",
        [helper.make_tensor_value_info("x", TensorProto.INT8, list(x.shape))],
        [helper.make_tensor_value_info("y", TensorProto.INT8, list(output_shape))],
        inits,
    )
    opsets = [helper.make_opsetid("", 17)] + ([helper.make_opsetid(opset_domain, 1)] if opset_domain else [])
    model = helper.make_model(graph, opset_imports=opsets)
    model.ir_version = 8
    so = ort.SessionOptions()
    return ort.InferenceSession(model.SerializeToString(), so, providers=["CPUExecutionProvider"])


def _qparams(rng):
    """Scales as calibration gives them, zero points anywhere in int8."""
    sx = np.float32(rng.uniform(0.002, 0.1))
    sw = np.float32(rng.uniform(0.001, 0.05))
    sy = np.float32(rng.uniform(0.01, 0.5))
    zx = np.int8(rng.integers(-128, 128))
    zy = np.int8(rng.integers(-128, 128))
    return sx, zx, sw, sy, zy


def _multipliers(sx, sw, sy) -> np.ndarray:
    """The per-channel multiplier table, x_scale * w_scale[o] / y_scale in
    float32 as ONNX Runtime computes it (the match spec's compile-time table)."""
    return np.ascontiguousarray((np.float32(sx) * sw) / np.float32(sy), dtype=np.float32)


def test_fully_connected_equals_onnxruntime(lib, small_lib):
    """Weights (N, K) as Gemm transB=1 keeps them, packed as the match spec
    packs them (a (K, N) weight is transposed first, at compile time:
    test_qdq_fully_connected_random_shapes_equal_onnxruntime).  The speed
    and the size kernel on every case."""
    rng = np.random.default_rng(22)
    layout = "nk"
    for case in range(CASES):
        # K past the column the kernel keeps on the stack (1024) now and then.
        m, n, k = int(rng.integers(1, 5)), int(rng.integers(1, 40)), int(rng.choice([rng.integers(1, 300), 1022, 1100]))
        sx, zx, sw, sy, zy = _qparams(rng)
        per_channel = case % 2 == 1  # a weight scale per output (QGemm's per-column scale)
        if per_channel:
            sw = rng.uniform(0.001, 0.05, n).astype(np.float32)
        x = rng.integers(-128, 128, (m, k), dtype=np.int8)
        w = rng.integers(-128, 128, (n, k) if layout == "nk" else (k, n), dtype=np.int8)
        b = rng.integers(-20000, 20000, n).astype(np.int32)
        node = helper.make_node(
            "QGemm",
            ["x", "sx", "zx", "w", "sw", "zw", "b", "sy", "zy"],
            ["y"],
            domain="com.microsoft",
            transB=int(layout == "nk"),
        )
        zw = np.zeros(n, np.int8) if per_channel else np.int8(0)
        params = {"sx": sx, "zx": zx, "sw": sw, "zw": zw, "sy": sy, "zy": zy}
        params = {k2: np.array(v) for k2, v in params.items()}
        s = _session(node, {"x": x, "w": w, "b": b, **params}, (m, n), "com.microsoft")
        expected = s.run(None, {"x": x})[0]
        packed = pack_fc_weights(w)
        head = (_ptr(x), ctypes.c_size_t(0), _ptr(packed), ctypes.c_size_t(0), _ptr(b), ctypes.c_size_t(0))
        for kernels in (lib, small_lib):
            y = np.zeros((m, n), np.int8)
            sizes = map(ctypes.c_size_t, (m, n, k))
            if per_channel:
                multipliers = _multipliers(sx, sw, sy)
                kernels.ireegen_i8_fully_connected_per_channel(
                    *head, _ptr(multipliers), ctypes.c_size_t(0), _ptr(y), ctypes.c_size_t(0), *sizes,
                    ctypes.c_int32(int(zx)), ctypes.c_int32(int(zy)),
                )  # fmt: skip
            else:
                kernels.ireegen_i8_fully_connected(
                    *head, _ptr(y), ctypes.c_size_t(0), *sizes,
                    ctypes.c_uint32(_bits(sx)), ctypes.c_int32(int(zx)), ctypes.c_uint32(_bits(sw)),
                    ctypes.c_uint32(_bits(sy)), ctypes.c_int32(int(zy)),
                )  # fmt: skip
            where = f"case {case} ({'size' if kernels is small_lib else 'speed'}): m={m} n={n} k={k}"
            assert np.array_equal(y, expected), f"{where} per_channel={per_channel}"


def _conv_case(rng, depthwise: bool, case: int, image=None, channels=None, filters=None, per_channel=None):
    """A random QLinearConv: (sizes, pads, x, w, b, quantization, ONNX
    Runtime's output).  Odd channel and filter counts, kernels 1x1 to 5x5
    (3x3 half the time), strides 1 to 4, any padding, batch 1-2; every
    10th case a plane past the depthwise kernel's stack plane (1,280
    int16), every 10th (of the full convolution) a column past the pair
    column (640: the kernel's plain loop), every 10th (of the depthwise) a
    7x7 kernel; every odd case per-channel weights (the weight scale `sw` an
    array of one scale per output channel), unless `per_channel` says.
    `image` (h, w), `channels` and `filters` replace what was drawn."""
    n, c = int(rng.integers(1, 3)), int(rng.integers(1, 9))
    f = c if depthwise else int(rng.integers(1, 9))
    h, wd = int(rng.integers(1, 12)), int(rng.integers(1, 12))
    if case % 10 == 0:  # past the depthwise kernel's stack plane (1,280 int16)
        h, wd = 40, 37
    if case % 10 == 5 and not depthwise:  # 73 * 3 * 3 > 640
        c, h, wd = 73, int(rng.integers(3, 6)), int(rng.integers(3, 6))
    h, wd = image or (h, wd)
    c = channels or c
    f = c if depthwise else filters or f
    # 3x3 half the time (the depthwise kernel's fast path), else 1 to 5.
    kh = 3 if h >= 3 and rng.random() < 0.5 else int(rng.integers(1, min(h, 5) + 1))
    kw = 3 if wd >= 3 and kh == 3 else int(rng.integers(1, min(wd, 5) + 1))
    if case % 10 == 5 and depthwise:  # a 7x7 stem's kernel
        h, wd, kh, kw = int(rng.integers(7, 16)), int(rng.integers(7, 16)), 7, 7
    stride = int(rng.integers(1, 5))
    pt, pl = int(rng.integers(0, kh)), int(rng.integers(0, kw))
    pb, pr = int(rng.integers(0, kh)), int(rng.integers(0, kw))
    oh, ow = (h + pt + pb - kh) // stride + 1, (wd + pl + pr - kw) // stride + 1
    sx, zx, sw, sy, zy = _qparams(rng)
    if (case % 2 == 1) if per_channel is None else per_channel:
        sw = rng.uniform(0.001, 0.05, f).astype(np.float32)
    x = rng.integers(-128, 128, (n, c, h, wd), dtype=np.int8)
    w = rng.integers(-128, 128, (f, 1 if depthwise else c, kh, kw), dtype=np.int8)
    b = rng.integers(-20000, 20000, f).astype(np.int32)
    node = helper.make_node(
        "QLinearConv",
        ["x", "sx", "zx", "w", "sw", "zw", "sy", "zy", "b"],
        ["y"],
        pads=[pt, pl, pb, pr],
        strides=[stride, stride],
        group=c if depthwise else 1,
    )
    zw = np.zeros(f, np.int8) if np.ndim(sw) else np.int8(0)
    params = {"sx": sx, "zx": zx, "sw": sw, "zw": zw, "sy": sy, "zy": zy}
    params = {k2: np.array(v) for k2, v in params.items()}
    expected = _session(node, {"x": x, "w": w, "b": b, **params}, (n, f, oh, ow)).run(None, {"x": x})[0]
    sizes = [n, c, h, wd, f, kh, kw, oh, ow, stride, pt, pl]
    return sizes, (pt, pl, pb, pr), x, w, b, (sx, zx, sw, sy, zy), expected


@pytest.mark.parametrize("depthwise", [False, True], ids=["conv", "depthwise"])
def test_convolution_equals_onnxruntime(lib, small_lib, depthwise):
    """The speed and the size kernel on every case."""
    rng = np.random.default_rng(23 + depthwise)
    name = "ireegen_i8_depthwise_conv" if depthwise else "ireegen_i8_convolution"
    for case in range(CASES):
        sizes, pads, x, w, b, (sx, zx, sw, sy, zy), expected = _conv_case(rng, depthwise, case)
        head = (_ptr(x), ctypes.c_size_t(0), _ptr(w), ctypes.c_size_t(0), _ptr(b), ctypes.c_size_t(0))
        for kernels in (lib, small_lib):
            y = np.zeros(expected.shape, np.int8)
            if np.ndim(sw):  # per channel
                multipliers = _multipliers(sx, sw, sy)
                getattr(kernels, name + "_per_channel")(
                    *head, _ptr(multipliers), ctypes.c_size_t(0), _ptr(y), ctypes.c_size_t(0),
                    *map(ctypes.c_size_t, sizes), ctypes.c_int32(int(zx)), ctypes.c_int32(int(zy)),
                )  # fmt: skip
            else:
                getattr(kernels, name)(
                    *head, _ptr(y), ctypes.c_size_t(0), *map(ctypes.c_size_t, sizes),
                    ctypes.c_uint32(_bits(sx)), ctypes.c_int32(int(zx)), ctypes.c_uint32(_bits(sw)),
                    ctypes.c_uint32(_bits(sy)), ctypes.c_int32(int(zy)),
                )  # fmt: skip
            where = f"case {case} ({'size' if kernels is small_lib else 'speed'}): {sizes} pads {pads}"
            assert np.array_equal(y, expected), f"{where} per_channel={np.ndim(sw) > 0}"


# Calls the convolution kernels on the cases of cases.bin (per case: the
# kind (1: depthwise, +2: per channel), the 12 sizes and the 5 quantization
# words as uint32, then x, w, the bias and, per channel, the F multipliers)
# and writes every output, in order, to out.bin.
CONV_HARNESS = r"""
#include <stdio.h>
#include <stdlib.h>
#include "ireegen_int8.h"
static void* take(FILE* f, size_t bytes) {
  void* p = malloc(bytes ? bytes : 1);
  if (!p || fread(p, 1, bytes, f) != bytes) exit(3);
  return p;
}
int main(void) {
  FILE* in = fopen("cases.bin", "rb");
  FILE* out = fopen("out.bin", "wb");
  if (!in || !out) return 2;
  uint32_t head[18];
  while (fread(head, sizeof head, 1, in) == 1) {
    size_t s[12];
    for (int i = 0; i < 12; ++i) s[i] = head[1 + i];
    const size_t xs = s[0] * s[1] * s[2] * s[3], ys = s[0] * s[4] * s[7] * s[8];
    const size_t ws = s[4] * ((head[0] & 1) ? 1 : s[1]) * s[5] * s[6];
    int8_t* x = take(in, xs);
    int8_t* w = take(in, ws);
    int32_t* b = take(in, 4 * s[4]);
    float* m = take(in, head[0] & 2 ? 4 * s[4] : 0);
    int8_t* y = malloc(ys);
    if (head[0] & 2)
      ((head[0] & 1) ? ireegen_i8_depthwise_conv_per_channel : ireegen_i8_convolution_per_channel)(
          x, 0, w, 0, b, 0, m, 0, y, 0, s[0], s[1], s[2], s[3], s[4], s[5], s[6], s[7], s[8], s[9], s[10], s[11],
          (int32_t)head[14], (int32_t)head[17]);
    else
      ((head[0] & 1) ? ireegen_i8_depthwise_conv : ireegen_i8_convolution)(
          x, 0, w, 0, b, 0, y, 0, s[0], s[1], s[2], s[3], s[4], s[5], s[6], s[7], s[8], s[9], s[10], s[11],
          head[13], (int32_t)head[14], head[15], head[16], (int32_t)head[17]);
    fwrite(y, 1, ys, out);
    free(x), free(w), free(b), free(m), free(y);
  }
  fclose(out);
  return 0;
}
"""


@pytest.mark.skipif(
    not (shutil.which("arm-none-eabi-gcc") and shutil.which("qemu-system-arm")), reason="no Arm bare-metal toolchain"
)
def test_convolution_on_cortex_m4_equals_onnxruntime(tmp_path):
    """The DSP path (SMLAD on the pair column, the assembler loop, the
    border gather) built by arm-none-eabi-gcc for the Cortex-M4 at -O2 and
    -Os, and the size kernels at -Os, run under qemu-system-arm: random
    convolutions and depthwise convolutions, every output equal to ONNX
    Runtime's QLinearConv."""
    from ireegen.cbuild import baremetal
    from ireegen.config.cores import CORES

    rng = np.random.default_rng(41)
    cases, expected = bytearray(), []
    for case in range(40):
        depthwise = case % 4 == 3
        sizes, _, x, w, b, (sx, zx, sw, sy, zy), y = _conv_case(rng, depthwise, case)
        per_channel = np.ndim(sw) > 0
        multipliers = _multipliers(sx, sw, sy).tobytes() if per_channel else b""
        quant = [_bits(sx), int(zx) & 0xFFFFFFFF, 0 if per_channel else _bits(sw), _bits(sy), int(zy) & 0xFFFFFFFF]
        kind = int(depthwise) + 2 * per_channel
        cases += struct.pack("<18I", kind, *sizes, *quant) + x.tobytes() + w.tobytes() + b.tobytes() + multipliers
        expected.append(y)
    (tmp_path / "cases.bin").write_bytes(bytes(cases))
    (tmp_path / "harness.c").write_text(CONV_HARNESS)
    core = CORES["cortex-m4"]
    support, link_flags = baremetal.support_files(core, tmp_path)
    speed = [str(KERNELS / s) for s in ("convolution.c", "convolution_per_channel.c", "fully_connected.c")]
    small = [str(KERNELS / s) for s in SMALL_SOURCES]
    want = np.concatenate([y.ravel() for y in expected])
    # The size kernels with kernels.size.json's flags.
    for opt, sources in (("-O2", speed), ("-Os", speed), ("-Os -fno-ivopts", small)):
        program = tmp_path / f"conv{len(opt)}{len(sources)}.elf"
        flags = [*core.gcc_flags(core.default_triple), *opt.split(), "-std=c11", "-Wall", "-Wextra", "-Werror"]
        subprocess.run(
            ["arm-none-eabi-gcc", *flags, f"-I{KERNELS}", str(tmp_path / "harness.c"), *sources,
             *map(str, support), *link_flags, "-lm", "-o", str(program)],
            check=True,
        )  # fmt: skip
        command = baremetal.semihosting_command(core, baremetal.emulator_command(core), program, [])
        subprocess.run(command, cwd=tmp_path, check=True, timeout=600, stdout=subprocess.DEVNULL)
        got = np.frombuffer((tmp_path / "out.bin").read_bytes(), np.int8)
        assert got.size == want.size and np.array_equal(got, want), (
            f"{opt} {sources}: {np.count_nonzero(got != want)} differ"
        )


@pytest.mark.parametrize("opt", ["-O2", "-Os"])
def test_per_channel_sources_define_no_function_twice(tmp_path, opt):
    """convolution_per_channel.c and fully_connected_per_channel.c compile
    their per-tensor source again: every function they define has a name of
    its own (per_channel.h), else the kernels' relocatable link merges the
    two sections of one name and a firmware keeps the per-channel copy
    whenever it calls the per-tensor one.  On the host, and for the
    Cortex-M55 when its compiler is installed (the MVE loops' functions)."""
    cc = shutil.which("cc") or shutil.which("gcc")
    nm = shutil.which("nm")
    if cc is None or nm is None:
        pytest.skip("no C compiler or nm")
    compilers = [("host", [cc], nm)]
    if shutil.which("arm-none-eabi-gcc") and shutil.which("arm-none-eabi-nm"):
        m55 = ["arm-none-eabi-gcc", "-mcpu=cortex-m55", "-mthumb", "-mfloat-abi=hard", "-mfpu=auto"]
        compilers.append(("m55", m55, "arm-none-eabi-nm"))

    def functions(source: str, target: str, compiler: list, nm: str) -> set:
        obj = tmp_path / f"{source}{opt}.{target}.o"
        subprocess.run(
            [*compiler, "-std=c11", opt, "-ffunction-sections", "-Wall", "-Wextra", "-Werror", "-c",
             str(KERNELS / source), "-o", str(obj)],
            check=True,
        )  # fmt: skip
        out = subprocess.run([nm, str(obj)], check=True, stdout=subprocess.PIPE, text=True).stdout
        return {line.split()[2] for line in out.splitlines() if len(line.split()) == 3 and line.split()[1] in "tT"}

    for target, compiler, nm in compilers:
        for base in ("convolution", "fully_connected"):
            per_tensor = functions(f"{base}.c", target, compiler, nm)
            per_channel = functions(f"{base}_per_channel.c", target, compiler, nm)
            assert per_tensor and per_channel and not per_tensor & per_channel, (target, per_tensor & per_channel)
            assert all(n.endswith("_per_channel") or n.startswith("ireegen_i8_pc_") for n in per_channel), per_channel


def test_quantize_equals_onnxruntime(lib):
    """QuantizeLinear of a float input, halves and out-of-range values included."""
    rng = np.random.default_rng(25)
    for case in range(CASES):
        count = int(rng.integers(1, 500))
        scale = np.float32(rng.uniform(0.001, 0.2))
        zero = np.int8(rng.integers(-128, 128))
        x = (rng.standard_normal(count) * rng.uniform(0.1, 40)).astype(np.float32)
        x[: count // 4] = (np.round(x[: count // 4] / scale) + 0.5) * scale  # near halves
        graph = helper.make_graph(
            [helper.make_node("QuantizeLinear", ["x", "s", "z"], ["y"])],
            "q",
            [helper.make_tensor_value_info("x", TensorProto.FLOAT, [count])],
            [helper.make_tensor_value_info("y", TensorProto.INT8, [count])],
            [onnx.numpy_helper.from_array(np.array(scale), "s"), onnx.numpy_helper.from_array(np.array(zero), "z")],
        )
        model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
        model.ir_version = 8
        s = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
        expected = s.run(None, {"x": x})[0]
        y = np.zeros(count, np.int8)
        lib.ireegen_i8_quantize(
            _ptr(x), ctypes.c_size_t(0), _ptr(y), ctypes.c_size_t(0), ctypes.c_size_t(count),
            ctypes.c_uint32(_bits(scale)), ctypes.c_int32(int(zero)),
        )  # fmt: skip
        assert np.array_equal(y, expected), f"case {case}: {np.count_nonzero(y != expected)} of {count} differ"


def _qlinear_add(a, b, sa, za, sb, zb, sy, zy):
    """ONNX Runtime's own QLinearAdd of two int8 tensors of one shape."""
    params = {"sa": sa, "za": za, "sb": sb, "zb": zb, "sy": sy, "zy": zy}
    inits = [onnx.numpy_helper.from_array(np.array(v), k) for k, v in params.items()]
    graph = helper.make_graph(
        [helper.make_node("QLinearAdd", ["a", "sa", "za", "b", "sb", "zb", "sy", "zy"], ["y"], domain="com.microsoft")],
        "add",
        [helper.make_tensor_value_info(n, TensorProto.INT8, list(a.shape)) for n in ("a", "b")],
        [helper.make_tensor_value_info("y", TensorProto.INT8, list(a.shape))],
        inits,
    )
    opsets = [helper.make_opsetid("", 17), helper.make_opsetid("com.microsoft", 1)]
    model = helper.make_model(graph, opset_imports=opsets)
    model.ir_version = 8
    s = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    return s.run(None, {"a": a, "b": b})[0]


def test_add_equals_onnxruntime(lib):
    """Random shapes, and every pair of int8 values (65,536 sums: the ones
    that land next to a rounding half are among them) now and then."""
    rng = np.random.default_rng(26)
    for case in range(CASES):
        if case % 10 == 0:
            grid = np.arange(-128, 128, dtype=np.int8)
            a, b = (v.ravel().copy() for v in np.meshgrid(grid, grid))
        else:
            shape = tuple(int(d) for d in rng.integers(1, 9, int(rng.integers(1, 5))))
            a = rng.integers(-128, 128, shape, dtype=np.int8)
            b = rng.integers(-128, 128, shape, dtype=np.int8)
        sa, sb, sy = (np.float32(rng.uniform(0.002, 0.3)) for _ in range(3))
        za, zb, zy = (np.int8(rng.integers(-128, 128)) for _ in range(3))
        expected = _qlinear_add(a, b, sa, za, sb, zb, sy, zy)
        y = np.zeros_like(a)
        lib.ireegen_i8_add(
            _ptr(a), ctypes.c_size_t(0), _ptr(b), ctypes.c_size_t(0), _ptr(y), ctypes.c_size_t(0),
            ctypes.c_size_t(a.size), ctypes.c_uint32(_bits(sa)), ctypes.c_int32(int(za)),
            ctypes.c_uint32(_bits(sb)), ctypes.c_int32(int(zb)), ctypes.c_uint32(_bits(sy)), ctypes.c_int32(int(zy)),
        )  # fmt: skip
        assert np.array_equal(y, expected), f"case {case}: {np.count_nonzero(y != expected)} of {a.size} differ"


def test_average_pool_equals_onnxruntime(lib):
    """ORT's QLinearAveragePool (no padding, strides 1 and 2, windows that
    cover the image half the time: its exact global path) and
    QLinearGlobalAveragePool."""
    rng = np.random.default_rng(27)
    for case in range(CASES):
        n, c, h, w = (
            int(v) for v in (rng.integers(1, 3), rng.integers(1, 40), rng.integers(1, 12), rng.integers(1, 12))
        )
        sx, sy = (np.float32(rng.uniform(0.002, 0.3)) for _ in range(2))
        zx, zy = (np.int8(rng.integers(-128, 128)) for _ in range(2))
        x = rng.integers(-128, 128, (n, c, h, w), dtype=np.int8)
        kind = case % 3
        if kind == 0:
            kh, kw, stride = h, w, 1
            node = helper.make_node(
                "QLinearGlobalAveragePool", ["x", "sx", "zx", "sy", "zy"], ["y"], domain="com.microsoft"
            )
        else:
            kh, kw = int(rng.integers(1, h + 1)), int(rng.integers(1, w + 1))
            kh, kw, stride = (h, w, 1) if kind == 1 else (kh, kw, int(rng.integers(1, 3)))
            node = helper.make_node(
                "QLinearAveragePool", ["x", "sx", "zx", "sy", "zy"], ["y"], domain="com.microsoft",
                kernel_shape=[kh, kw], strides=[stride, stride],
            )  # fmt: skip
        oh, ow = (h - kh) // stride + 1, (w - kw) // stride + 1
        params = {k: np.array(v) for k, v in {"sx": sx, "zx": zx, "sy": sy, "zy": zy}.items()}
        expected = _session(node, {"x": x, **params}, (n, c, oh, ow), "com.microsoft").run(None, {"x": x})[0]
        y = np.zeros((n, c, oh, ow), np.int8)
        lib.ireegen_i8_average_pool(
            _ptr(x), ctypes.c_size_t(0), _ptr(y), ctypes.c_size_t(0),
            *(ctypes.c_size_t(v) for v in (n, c, h, w, kh, kw, oh, ow, stride)),
            ctypes.c_uint32(_bits(sx)), ctypes.c_int32(int(zx)), ctypes.c_uint32(_bits(sy)), ctypes.c_int32(int(zy)),
        )  # fmt: skip
        assert np.array_equal(y, expected), f"case {case}: {(n, c, h, w, kh, kw, stride)}"


def test_softmax_equals_onnxruntime(lib):
    """ORT's QLinearSoftmax over the last axis: rows of 2 to 300 values,
    wide and narrow input ranges, the usual output quantization (1/256,
    -128) and others, probabilities that round to 1 (saturating)."""
    rng = np.random.default_rng(28)
    for case in range(CASES):
        rows, d = int(rng.integers(1, 4)), int(rng.choice([rng.integers(2, 40), 300]))
        # Every other case a scale from 2^-12 to 2^2: e from all of float's range.
        sx = np.float32(rng.uniform(0.01, 0.5) if case % 2 else 2.0 ** rng.uniform(-12, 2))
        sy, zy = np.float32(1 / 256), np.int8(-128)
        if case % 3 == 0:
            sy, zy = np.float32(rng.uniform(1 / 256, 0.01)), np.int8(rng.integers(-128, 0))
        lo = int(rng.integers(-128, 100))
        x = rng.integers(lo, 128, (rows, d), dtype=np.int8)
        node = helper.make_node(
            "QLinearSoftmax", ["x", "sx", "zx", "sy", "zy"], ["y"], domain="com.microsoft", axis=-1, opset=13
        )
        params = {
            k: np.array(v) for k, v in {"sx": sx, "zx": np.int8(rng.integers(-128, 128)), "sy": sy, "zy": zy}.items()
        }
        expected = _session(node, {"x": x, **params}, (rows, d), "com.microsoft").run(None, {"x": x})[0]
        y = np.zeros_like(x)
        lib.ireegen_i8_softmax(
            _ptr(x), ctypes.c_size_t(0), _ptr(y), ctypes.c_size_t(0), ctypes.c_size_t(rows), ctypes.c_size_t(d),
            ctypes.c_uint32(_bits(sx)), ctypes.c_uint32(_bits(sy)), ctypes.c_int32(int(zy)),
        )  # fmt: skip
        assert np.array_equal(y, expected), f"case {case}: {np.count_nonzero(y != expected)} of {x.size} differ"


SOFTMAX_EXP_HARNESS = r"""
#include <math.h>
#include <stdio.h>
#include "softmax.c"
// ORT's table entry, with the C library's double exp and log.
static float ort_exp(int k, float sx, size_t d) {
  const double log_range = log((double)(FLT_MAX / (float)d)) - 5.0;
  const double shift = (log_range > 0.0 ? log_range : 0.0) / (double)sx;
  const float e = (float)exp(((double)-k + shift) * (double)sx);
  return e < FLT_MIN ? 0.0f : e;  // softmax_exp flushes what moves no output
}
int main(void) {
  unsigned long differ = 0, far = 0, total = 0, seed = 1;
  for (int c = 0; c < 40000; ++c) {
    seed = seed * 6364136223846793005u + 1442695040888963407u;
    const float sx = (float)exp2(-20.0 + 27.0 * (double)(seed >> 11) / 9007199254740992.0);
    const size_t d = 1 + (seed >> 7) % (c % 7 ? 2000 : 5);
    const float f = FLT_MAX / (float)d;
    uint32_t sb, fb;
    memcpy(&sb, &sx, 4);
    memcpy(&fb, &f, 4);
    for (int k = 0; k < 256; ++k, ++total) {
      const float got = softmax_exp((uint32_t)k, scale_q55(sb), fb), want = ort_exp(k, sx, d);
      if (got == want) continue;
      ++differ;
      far += nextafterf(want, got) != got;
    }
  }
  printf("%lu %lu %lu\n", differ, far, total);
  return 0;
}
"""


def test_softmax_exp_equals_the_double_formula(tmp_path):
    """softmax.c's fixed-point e against ORT's double exp of its double
    argument (glibc's), on 10.24 million entries: scales from 2^-20 to 2^7
    (underflow included) and rows of 1 to 2,000.  At most one in a million
    may differ, each by one float ulp: ORT's own argument is a double near 80
    whose rounding is about 2^-45 (softmax.c says more)."""
    cc = shutil.which("cc") or shutil.which("gcc")
    if cc is None:
        pytest.skip("no C compiler")
    source = tmp_path / "harness.c"
    source.write_text(SOFTMAX_EXP_HARNESS)
    exe = tmp_path / "harness"
    flags = ["-std=c11", "-O2", "-Wall", "-Wextra", "-Werror", f"-I{KERNELS}"]
    subprocess.run([cc, *flags, str(source), "-o", str(exe), "-lm"], check=True)
    differ, far, total = map(int, subprocess.run([str(exe)], check=True, capture_output=True, text=True).stdout.split())
    assert total == 40000 * 256
    assert far == 0 and differ <= total // 1_000_000, (differ, far)


# --- end to end: QDQ models through emit, against ONNX Runtime ------------

# name -> (op, input shape, weight shape, pads, stride); pads as ONNX's
# (top, left, bottom, right).  Batches of 4 and 2: one run checks several
# inputs.
QDQ_MODELS = {
    "fc": ("Gemm", (4, 96), (24, 96), None, 1),
    "fc_kn": ("GemmKN", (3, 50), (50, 19), None, 1),
    "conv_same": ("Conv", (2, 5, 9, 7), (12, 5, 3, 3), (1, 1, 1, 1), 1),
    "conv_stride2": ("Conv", (2, 6, 9, 10), (8, 6, 3, 3), (0, 0, 1, 1), 2),
    "depthwise": ("Conv", (2, 16, 7, 9), (16, 1, 3, 3), (1, 1, 1, 1), 1),
    "pointwise": ("Conv", (2, 16, 6, 6), (20, 16, 1, 1), (0, 0, 0, 0), 1),
}


def _save_qdq(path: Path, nodes, inits, x_shape, y_shape, rng, per_channel=False) -> Path:
    """`nodes` as a float model (input x, output y, opset 17) quantized by
    onnxruntime's quantize_static (QDQ, MinMax over 4 samples from `rng`,
    weights per tensor or `per_channel`) into `path`."""
    graph = helper.make_graph(
        nodes,
        path.stem,
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, list(x_shape))],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, list(y_shape))],
        inits,
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    samples = [{"x": rng.standard_normal(x_shape).astype(np.float32)} for _ in range(4)]
    onnx.save(quantize_qdq(model, samples, per_channel=per_channel), path)
    return path


def _qdq_model(path: Path, op, x_shape, w_shape, pads, stride, per_channel=False) -> Path:
    """A one-operator float model quantized by onnxruntime's quantize_static
    (QDQ, weights per tensor or per channel, int8 activations and weights,
    seeded calibration)."""
    rng = np.random.default_rng(len(path.stem))
    w = onnx.numpy_helper.from_array((rng.standard_normal(w_shape) * 0.3).astype(np.float32), "w")
    b = onnx.numpy_helper.from_array((rng.standard_normal(w_shape[0]) * 0.2).astype(np.float32), "b")
    if op == "Gemm":
        node = helper.make_node("Gemm", ["x", "w", "b"], ["y"], transB=1)
        y_shape = [x_shape[0], w_shape[0]]
    elif op == "GemmKN":  # weights (K, N): Gemm transB=0
        b = onnx.numpy_helper.from_array((rng.standard_normal(w_shape[1]) * 0.2).astype(np.float32), "b")
        node = helper.make_node("Gemm", ["x", "w", "b"], ["y"])
        y_shape = [x_shape[0], w_shape[1]]
    else:
        group = x_shape[1] if w_shape[1] == 1 and w_shape[0] == x_shape[1] else 1
        node = helper.make_node("Conv", ["x", "w", "b"], ["y"], pads=list(pads), strides=[stride] * 2, group=group)
        oh = (x_shape[2] + pads[0] + pads[2] - w_shape[2]) // stride + 1
        ow = (x_shape[3] + pads[1] + pads[3] - w_shape[3]) // stride + 1
        y_shape = [x_shape[0], w_shape[0], oh, ow]
    return _save_qdq(path, [node], [w, b], x_shape, y_shape, rng, per_channel)


def _check_against_onnxruntime(model: Path, outdir: Path, runs: int):
    from ireegen.cbuild.native_run import build_runner

    session = ort.InferenceSession(str(model), providers=["CPUExecutionProvider"])
    x_shape = session.get_inputs()[0].shape
    runner = build_runner(outdir, outdir.parent / (outdir.name + "-build"))
    function = next(iter(runner.functions))
    rng = np.random.default_rng(7)
    for run in range(runs):
        # Scaled so that some inputs saturate the int8 range.
        x = (rng.standard_normal(x_shape) * rng.uniform(0.5, 4)).astype(np.float32)
        got, _ = runner.call(function, [x])
        expected = session.run(None, {"x": x})[0]
        assert np.array_equal(got[0], expected), (
            f"{model.name} run {run}: {np.count_nonzero(got[0] != expected)} differ"
        )


@pytest.mark.parametrize(
    "cpu,name",
    [("cortex-m4", n) for n in sorted(QDQ_MODELS)] + [("cortex-m0plus", "conv_stride2"), ("cortex-m0plus", "fc")],
)
def test_qdq_model_on_cortex_m_equals_onnxruntime(tmp_path, cpu, name):
    """On by default for a QDQ int8 model on a Cortex-M, compiled by
    arm-none-eabi-gcc and run under qemu-system-arm: the DSP path on the
    M4, the size kernels (--optimize-for size) with libgcc's soft float on
    the M0+."""
    missing = [t for t in ("arm-none-eabi-gcc", "qemu-system-arm") if shutil.which(t) is None]
    if missing:
        pytest.skip(f"{', '.join(missing)} not installed")
    from ireegen.config.modes import make_config
    from ireegen.emit import emit

    model = _qdq_model(tmp_path / f"{name}.onnx", *QDQ_MODELS[name])
    goal = "size" if cpu == "cortex-m0plus" else "speed"
    result = emit(model, tmp_path / "out", make_config("runtimeless", target_cpu=cpu, optimize_for=goal), name="m")
    calls = result.manifest["kernels"]["dispatches"]
    kernels = sorted(k for c in calls for k in c["kernels"])
    # The operator's kernel, and the input's quantization.
    assert len(kernels) == 2 and "ireegen_i8_quantize" in kernels, kernels
    _check_against_onnxruntime(model, tmp_path / "out", runs=3)
    if (cpu, name) == ("cortex-m4", "fc"):
        _check_stack_counts_only_called_kernels(tmp_path / "out")


@pytest.mark.parametrize("name,goal", [("conv_stride2", "speed"), ("depthwise", "size"), ("fc", "size")])
def test_qdq_model_on_rv32_equals_onnxruntime(tmp_path, name, goal):
    """On by default on bare-metal RV32 too (riscv32-unknown-elf, rv32imac:
    the portable C with libgcc's soft float), run under
    qemu-system-riscv32."""
    missing = [t for t in ("riscv64-unknown-elf-gcc", "qemu-system-riscv32") if shutil.which(t) is None]
    if missing:
        pytest.skip(f"{', '.join(missing)} not installed")
    from ireegen.config.modes import make_config
    from ireegen.emit import emit

    model = _qdq_model(tmp_path / f"{name}.onnx", *QDQ_MODELS[name])
    config = make_config("runtimeless", target_triple="riscv32-unknown-elf", optimize_for=goal)
    result = emit(model, tmp_path / "out", config, name="m")
    kernels = sorted(k for c in result.manifest["kernels"]["dispatches"] for k in c["kernels"])
    assert len(kernels) == 2 and "ireegen_i8_quantize" in kernels, kernels
    _check_against_onnxruntime(model, tmp_path / "out", runs=3)


def _check_stack_counts_only_called_kernels(outdir: Path) -> None:
    """`ireegen size`'s stack is the deepest chain of calls the link keeps:
    the library's convolution (the largest frame in the object) is not on a
    fully connected model's stack; its FC kernel is, under the frame of the
    dispatch that calls it."""
    from ireegen.cbuild.footprint import dispatch_frames, measure

    report = measure(outdir)
    (executables,) = outdir.glob("*_executables.o")
    in_object = dispatch_frames("arm-none-eabi-objdump", executables)
    assert in_object["ireegen_i8_convolution"] > in_object["ireegen_i8_fully_connected"]
    deepest = report["stack_detail"]["deepest_dispatch"]
    assert in_object["ireegen_i8_fully_connected"] < deepest < in_object["ireegen_i8_convolution"]


def _qdq_residual_block(path: Path, x_shape=(2, 8, 6, 5), classes=7, per_channel=False) -> Path:
    """A QDQ ResNet-style block: 3x3 convolution, residual Add, Relu,
    GlobalAveragePool, Flatten, Gemm (quantize_static, as _qdq_model;
    weights per tensor or per channel)."""
    rng = np.random.default_rng(31)
    c = x_shape[1]
    inits = [
        onnx.numpy_helper.from_array((rng.standard_normal((c, c, 3, 3)) * 0.3).astype(np.float32), "w"),
        onnx.numpy_helper.from_array((rng.standard_normal(c) * 0.2).astype(np.float32), "b"),
        onnx.numpy_helper.from_array((rng.standard_normal((classes, c)) * 0.5).astype(np.float32), "fw"),
        onnx.numpy_helper.from_array((rng.standard_normal(classes) * 0.2).astype(np.float32), "fb"),
    ]
    nodes = [
        helper.make_node("Conv", ["x", "w", "b"], ["conv"], pads=[1, 1, 1, 1]),
        helper.make_node("Add", ["conv", "x"], ["sum"]),
        helper.make_node("Relu", ["sum"], ["relu"]),
        helper.make_node("GlobalAveragePool", ["relu"], ["pool"]),
        helper.make_node("Flatten", ["pool"], ["flat"]),
        helper.make_node("Gemm", ["flat", "fw", "fb"], ["y"], transB=1),
    ]
    return _save_qdq(path, nodes, inits, x_shape, [x_shape[0], classes], rng, per_channel)


@pytest.mark.parametrize(
    "cpu,per_channel",
    [
        ("cortex-m4", False),
        ("cortex-m0plus", False),
        ("cortex-m55", False),
        ("host", False),
        ("cortex-m4", True),
        ("cortex-m55", True),
    ],
)
def test_qdq_residual_block_equals_onnxruntime(tmp_path, cpu, per_channel):
    """Convolution, residual Add, GlobalAveragePool and Gemm all in the
    kernels: on the M4 (on by default, the DSP path, under qemu), the M55
    (the MVE path) and on the host (--kernels, the portable path); every
    output equal to ORT's.  Quantized per channel (as most CNNs ship), the
    per-channel kernels."""
    from ireegen.cbuild.int8_kernels import spec_path
    from ireegen.config.modes import make_config
    from ireegen.emit import emit

    if cpu != "host":
        missing = [t for t in ("arm-none-eabi-gcc", "qemu-system-arm") if shutil.which(t) is None]
        if missing:
            pytest.skip(f"{', '.join(missing)} not installed")
    model = _qdq_residual_block(tmp_path / "block.onnx", per_channel=per_channel)
    if cpu == "host":
        result = emit(model, tmp_path / "out", make_config("runtimeless"), name="m", kernels=spec_path())
    else:
        result = emit(model, tmp_path / "out", make_config("runtimeless", target_cpu=cpu), name="m")
    kernels = {k for c in result.manifest["kernels"]["dispatches"] for k in c["kernels"]}
    suffix = "_per_channel" if per_channel else ""
    assert {"ireegen_i8_add", "ireegen_i8_global_average_pool", f"ireegen_i8_convolution{suffix}"} <= kernels, kernels
    assert f"ireegen_i8_fully_connected{suffix}" in kernels, kernels
    _check_against_onnxruntime(model, tmp_path / "out", runs=4)


def test_qdq_strided_pool_and_broadcast_add(tmp_path):
    """A 3x3 average pool of stride 2 (the kernel's float path, as ORT's
    QLinearAveragePool for a window smaller than the image) is matched; an
    Add that broadcasts a (1, C, 1, 1) constant is not, and keeps IREE's
    code. Every output equal to ORT's."""
    from ireegen.cbuild.int8_kernels import spec_path
    from ireegen.config.modes import make_config
    from ireegen.emit import emit

    rng = np.random.default_rng(33)
    x_shape = (2, 6, 9, 11)
    inits = [
        onnx.numpy_helper.from_array((rng.standard_normal((6, 6, 1, 1)) * 0.5).astype(np.float32), "w"),
        onnx.numpy_helper.from_array((rng.standard_normal(6) * 0.2).astype(np.float32), "b"),
        onnx.numpy_helper.from_array((rng.standard_normal((1, 6, 1, 1))).astype(np.float32), "shift"),
    ]
    nodes = [
        helper.make_node("Conv", ["x", "w", "b"], ["conv"]),
        helper.make_node("AveragePool", ["conv"], ["pool"], kernel_shape=[3, 3], strides=[2, 2]),
        helper.make_node("Add", ["pool", "shift"], ["y"]),
    ]
    path = _save_qdq(tmp_path / "strided.onnx", nodes, inits, x_shape, [2, 6, 4, 5], rng)
    result = emit(path, tmp_path / "out", make_config("runtimeless"), name="m", kernels=spec_path())
    calls = result.manifest["kernels"]["dispatches"]
    assert [c["dispatch"] for c in calls if "ireegen_i8_average_pool" in c["kernels"]] == ["ireegen_i8_avgpool"]
    assert not any("ireegen_i8_add" in c["kernels"] for c in calls), calls
    _check_against_onnxruntime(path, tmp_path / "out", runs=4)


@pytest.mark.parametrize("shape", [(7,), (4, 16), (3, 5, 16)])
def test_qdq_residual_add_of_rank_1_to_3(tmp_path, shape):
    """MatMul, Relu and a residual Add on a rank-1, 2 or 3 tensor (the Add's
    forms of those ranks) on the host: the Add in the kernel, every output
    equal to ORT's."""
    from ireegen.cbuild.int8_kernels import spec_path
    from ireegen.config.modes import make_config
    from ireegen.emit import emit

    rng = np.random.default_rng(len(shape))
    k = shape[-1]
    nodes = [
        helper.make_node("MatMul", ["x", "w"], ["mm"]),
        helper.make_node("Relu", ["mm"], ["relu"]),
        helper.make_node("Add", ["relu", "x"], ["y"]),
    ]
    w = onnx.numpy_helper.from_array((rng.standard_normal((k, k)) * 0.3).astype(np.float32), "w")
    path = _save_qdq(tmp_path / "residual.onnx", nodes, [w], shape, shape, rng)
    result = emit(path, tmp_path / "out", make_config("runtimeless"), name="m", kernels=spec_path())
    dispatches = [c["dispatch"] for c in result.manifest["kernels"]["dispatches"]]
    assert f"ireegen_i8_add_r{len(shape)}" in dispatches, dispatches
    _check_against_onnxruntime(path, tmp_path / "out", runs=3)


@pytest.mark.parametrize("cpu", ["cortex-m4", pytest.param("host", marks=pytest.mark.full_suite)])
def test_qdq_fully_connected_random_shapes_equal_onnxruntime(tmp_path, cpu):
    """Fully connected layers of random shapes, weights (N, K) and (K, N)
    (transposed at compile time), through emit: the M4's DSP loop under qemu
    and the host's portable C, every other case with the size kernel
    (--optimize-for size), every output equal to ONNX Runtime's.  The
    random shapes are quantized per channel (a scale per output)."""
    from ireegen.cbuild.int8_kernels import spec_path
    from ireegen.config.modes import make_config
    from ireegen.emit import emit

    if cpu != "host" and not (shutil.which("arm-none-eabi-gcc") and shutil.which("qemu-system-arm")):
        pytest.skip("no Arm bare-metal toolchain")
    rng = np.random.default_rng(31 if cpu == "host" else 32)
    # Fewer than four rows (no whole group), a multiple of four, and random.
    shapes = [(2, 3, 5), (1, 8, 12)] + [
        (int(rng.integers(1, 4)), int(rng.integers(1, 45)), int(rng.integers(1, 150))) for _ in range(2)
    ]
    for case, (m, n, k) in enumerate(shapes):
        kn = case % 2 == 0
        spec = ("GemmKN", (m, k), (k, n), None, 1) if kn else ("Gemm", (m, k), (n, k), None, 1)
        per_channel = case >= 2
        model = _qdq_model(tmp_path / f"fc{case}.onnx", *spec, per_channel=per_channel)
        out = tmp_path / f"out{case}"
        goal = ("speed", "size")[case % 2]
        if cpu == "host":
            config = make_config("runtimeless", optimize_for=goal)
            result = emit(model, out, config, name="m", kernels=spec_path(goal))
        else:
            config = make_config("runtimeless", target_cpu=cpu, optimize_for=goal)
            result = emit(model, out, config, name="m")
        kernels = {k2 for c in result.manifest["kernels"]["dispatches"] for k2 in c["kernels"]}
        kernel = "ireegen_i8_fully_connected" + ("_per_channel" if per_channel else "")
        assert kernel in kernels, (m, n, k, kn, kernels)
        _check_against_onnxruntime(model, out, runs=2)


def test_qdq_model_on_the_host_with_the_kernels_equals_onnxruntime(tmp_path):
    """The portable C path through IREE: the host, the kernels asked for by
    --kernels (they are on by default only on a Cortex-M)."""
    from ireegen.cbuild.int8_kernels import spec_path
    from ireegen.config.modes import make_config
    from ireegen.emit import emit

    for name in ("conv_stride2", "depthwise", "fc"):
        model = _qdq_model(tmp_path / f"{name}.onnx", *QDQ_MODELS[name])
        out = tmp_path / f"out-{name}"
        result = emit(model, out, make_config("runtimeless"), name="m", kernels=spec_path())
        assert result.manifest["kernels"]["dispatches"], name
        _check_against_onnxruntime(model, out, runs=4)


def test_no_builtin_kernels_and_other_targets_keep_irees_code(tmp_path):
    from ireegen.cbuild.int8_kernels import default_kernels, is_qdq_int8
    from ireegen.config.modes import make_config

    model = _qdq_model(tmp_path / "fc.onnx", *QDQ_MODELS["fc"])
    assert is_qdq_int8(model) and not is_qdq_int8(tmp_path / "fc_float.onnx")
    assert default_kernels(model, make_config("runtimeless", target_cpu="cortex-m4")) is not None
    assert default_kernels(tmp_path / "fc_float.onnx", make_config("runtimeless", target_cpu="cortex-m4")) is None
    assert default_kernels(model, make_config("runtimeless")) is None  # the host
    # The same match spec and entry points; the speed kernels at -O2, the
    # compact ones at -Os for size.
    flags = {
        goal: default_kernels(model, make_config("runtimeless", target_cpu="cortex-m4", optimize_for=goal)).spec
        for goal in ("speed", "size")
    }
    assert flags["speed"].flags_for("cortex-m") == ["-O2", "-std=c11", "-ffunction-sections"]
    assert flags["size"].flags_for("cortex-m") == ["-Os", "-fno-ivopts", "-std=c11", "-ffunction-sections"]
    assert flags["speed"].match == flags["size"].match
    assert [s.name for s in flags["size"].sources if s.name.endswith("_small.c")] == [
        "fully_connected_small.c",
        "convolution_small.c",
    ]
    # Off means off, with tuning on as well.
    if shutil.which("arm-none-eabi-gcc") and shutil.which("qemu-system-arm"):
        from ireegen.emit import emit

        config = make_config("runtimeless", target_cpu="cortex-m4")
        conv = _qdq_model(tmp_path / "conv.onnx", *QDQ_MODELS["conv_same"])
        result = emit(conv, tmp_path / "off", config, name="m", builtin_kernels=False, tune="quick")
        assert "kernels" not in result.manifest
    # A file that is no ONNX model is left to the import's one-line error.
    (tmp_path / "bad.onnx").write_bytes(b"\x08garbage")
    assert not is_qdq_int8(tmp_path / "bad.onnx")


@pytest.mark.skipif(
    not (shutil.which("arm-none-eabi-gcc") and shutil.which("qemu-system-arm")), reason="no Arm bare-metal toolchain"
)
@pytest.mark.parametrize("off", [False, True])
def test_cmake_no_builtin_kernels(tmp_path, off):
    """CMake's NO_BUILTIN_KERNELS is --no-builtin-kernels: the manifest of
    a QDQ model for a Cortex-M names ireegen's kernels only without it."""
    from conftest import build_generate_only

    model = _qdq_model(tmp_path / "fc.onnx", *QDQ_MODELS["fc"])
    line = f"ireegen_add_model(fc SRC {model} TARGET_CPU cortex-m4 EXECUTION_MODEL runtimeless GENERATE_ONLY"
    build = build_generate_only(tmp_path, tmp_path / "build", line + (" NO_BUILTIN_KERNELS)" if off else ")"))
    assert build.returncode == 0, build.stdout[-3000:]
    (manifest,) = (tmp_path / "build").rglob("manifest.json")
    assert ("kernels" in json.loads(manifest.read_text())) is not off


def _qdq_odd_convolutions(path: Path, per_channel: bool) -> Path:
    """Convolutions in forms outside the committed spec: a 7x7 stride-2
    pad-3 stem, a 5x5 stride-3 depthwise with asymmetric padding, a 3x3
    stride-3 convolution padded on two sides; then GlobalAveragePool and
    Gemm (quantize_static, per tensor or per channel)."""
    rng = np.random.default_rng(41)
    x_shape = (1, 3, 32, 29)

    def weight(name, shape):
        return onnx.numpy_helper.from_array((rng.standard_normal(shape) * 0.3).astype(np.float32), name)

    inits = [
        weight("w1", (8, 3, 7, 7)),
        weight("b1", (8,)),
        weight("w2", (8, 1, 5, 5)),
        weight("b2", (8,)),
        weight("w3", (6, 8, 3, 3)),
        weight("b3", (6,)),
        weight("fw", (5, 6)),
        weight("fb", (5,)),
    ]
    nodes = [
        helper.make_node("Conv", ["x", "w1", "b1"], ["c1"], pads=[3, 3, 3, 3], strides=[2, 2]),
        helper.make_node("Conv", ["c1", "w2", "b2"], ["c2"], pads=[2, 1, 1, 2], strides=[3, 3], group=8),
        helper.make_node("Conv", ["c2", "w3", "b3"], ["c3"], pads=[0, 2, 1, 0], strides=[3, 3]),
        helper.make_node("GlobalAveragePool", ["c3"], ["pool"]),
        helper.make_node("Flatten", ["pool"], ["flat"]),
        helper.make_node("Gemm", ["flat", "fw", "fb"], ["y"], transB=1),
    ]
    return _save_qdq(path, nodes, inits, x_shape, [1, 5], rng, per_channel)


@pytest.mark.parametrize("cpu,per_channel", [("cortex-m4", True), ("cortex-m0plus", False)])
def test_odd_padding_and_stride_per_channel_equal_onnxruntime(tmp_path, cpu, per_channel):
    """Forms outside the committed spec take the kernels: emit adds the
    model's own padding and stride forms to the spec.  Per-channel weights
    on the M4 (the DSP path), per tensor on the M0+ (the portable path):
    every convolution and the Gemm in a kernel, outputs equal to ORT's."""
    missing = [t for t in ("arm-none-eabi-gcc", "qemu-system-arm") if shutil.which(t) is None]
    if missing:
        pytest.skip(f"{', '.join(missing)} not installed")
    from ireegen.compile import int8_match
    from ireegen.config.modes import make_config
    from ireegen.emit import emit
    from ireegen.frontend.conv_geometry import conv_geometries

    model = _qdq_odd_convolutions(tmp_path / "odd.onnx", per_channel)
    geometries = conv_geometries(model)
    assert geometries == [((0, 2, 1, 0), 3), ((2, 1, 1, 2), 3), ((3, 3, 3, 3), 2)]
    assert len(int8_match.geometry_forms(geometries)) == 3 * 16
    result = emit(model, tmp_path / "out", make_config("runtimeless", target_cpu=cpu), name="m")
    (schedule,) = result.manifest["runtimeless"]["schedule"].values()
    steps = [step["dispatch"] for step in schedule]
    suffix = "_pc" if per_channel else ""
    for executable, calls in (("conv", 2), ("dwconv", 1), ("fc", 1)):
        assert steps.count(f"ireegen_i8_{executable}{suffix}") == calls, steps
    _check_against_onnxruntime(model, tmp_path / "out", runs=3)


# --- the MVE (Helium) loops: the kernels on a Cortex-M55 under qemu --------


def _fc_case(rng, per_channel=False, x_zero=None):
    """A random fully connected case: the kernel's parameters, x, the
    packed w, the bias, the per-channel multipliers (empty per tensor) and
    ORT's QGemm output; x_zero, when given, replaces the drawn zero point."""
    m, n, k = int(rng.integers(1, 4)), int(rng.integers(1, 40)), int(rng.choice([rng.integers(1, 300), 1100]))
    sx, zx, sw, sy, zy = _qparams(rng)
    zx = zx if x_zero is None else np.int8(x_zero)
    if per_channel:  # a weight scale per output row
        sw = rng.uniform(0.001, 0.05, n).astype(np.float32)
    x = rng.integers(-128, 128, (m, k), dtype=np.int8)
    w = rng.integers(-128, 128, (n, k), dtype=np.int8)
    b = rng.integers(-20000, 20000, n).astype(np.int32)
    node = helper.make_node(
        "QGemm", ["x", "sx", "zx", "w", "sw", "zw", "b", "sy", "zy"], ["y"], domain="com.microsoft", transB=1
    )
    zw = np.zeros(n, np.int8) if per_channel else np.int8(0)
    params = {k2: np.array(v) for k2, v in {"sx": sx, "zx": zx, "sw": sw, "zw": zw, "sy": sy, "zy": zy}.items()}
    expected = _session(node, {"x": x, "w": w, "b": b, **params}, (m, n), "com.microsoft").run(None, {"x": x})[0]
    multipliers = _multipliers(sx, sw, sy) if per_channel else np.zeros(0, np.float32)
    sizes = [m, n, k, _bits(sx), int(zx), 0 if per_channel else _bits(sw), _bits(sy), int(zy)]
    return sizes, x, pack_fc_weights(w), b, multipliers, expected


@pytest.mark.skipif(
    not (shutil.which("arm-none-eabi-gcc") and shutil.which("qemu-system-arm")), reason="no Arm bare-metal toolchain"
)
def test_kernels_on_cortex_m55_equal_onnxruntime(tmp_path):
    """The MVE loops (fully_connected_mve.h, convolution_mve.h,
    depthwise_mve.h, add_mve.h): the kernels built for the Cortex-M55 as emit builds
    them, run by tests/c/int8_kernels_driver.c under qemu-system-arm
    (mps3-an547) on random shapes, weights at every byte alignment (the
    fully connected kernel's gathers when they are not on a word), every
    output equal to ONNX Runtime's.  Every other case per channel (a
    multiplier per output channel: the per-channel entry points, the same
    MVE loops)."""
    from ireegen.cbuild import baremetal
    from ireegen.cbuild.toolchains import toolchain_for

    rng = np.random.default_rng(55)
    # Of the cases whose weights are on a word boundary (i % 4 == 0, below),
    # half have x_zero -128 (a ReLU's output: -x_zero is past int8,
    # fully_connected_mve.h's negated pass) and half 127 (-x_zero = -127).
    x_zeros = {0: -128, 4: 127}
    cases = [(4 * (i % 2), *_fc_case(rng, i % 2 == 1, x_zeros.get(i % 8))) for i in range(40)]
    # (depthwise, what replaces the random draw): past the 64 filters whose
    # bases the MVE convolution tables at once, columns past its 640 values
    # (convolution.c's SMLAD loops, which the M55 runs as the M4 does); the
    # depthwise kernel's band of the plane several times down a tall image,
    # and a row too wide for one (the plain loops).
    conv = [(False, {"filters": 300, "image": (6, 6), "channels": 2}), (False, {"image": (5, 6), "channels": 80})]
    conv += [(False, {"image": (5, 6), "channels": 130})] + [(False, {})] * 22
    depthwise = [(True, {})] * 21 + [(True, {"image": (150, 33), "channels": 3})] * 2
    depthwise += [(True, {"image": (3, 900), "channels": 3})] * 2
    # Per channel the even cases: the 300 filters (the chunks of 64 filters'
    # multipliers), and one of each tall and wide depthwise image.
    for i, (dw, special) in enumerate(conv + depthwise):
        pc = i % 2 == 0
        sizes, _, x, w, b, (sx, zx, sw, sy, zy), y = _conv_case(rng, dw, i, per_channel=pc, **special)
        quant = [_bits(sx), int(zx), 0 if pc else _bits(sw), _bits(sy), int(zy)]
        multipliers = _multipliers(sx, sw, sy) if pc else np.zeros(0, np.float32)
        cases.append((1 + dw + 4 * pc, [*sizes, *quant], x, w, b, multipliers, y))
    # Adds (add_mve.h): random lengths, and every pair of int8 values, once
    # with scales that are powers of two, so that many sums are halves
    # (rounded to even).
    grid = np.arange(-128, 128, dtype=np.int8)
    pairs = [v.ravel().copy() for v in np.meshgrid(grid, grid)]
    for i in range(12):
        a, b = pairs if i < 2 else rng.integers(-128, 128, (2, int(rng.integers(1, 300))), dtype=np.int8)
        sa, sb, sy = (np.float32(rng.uniform(0.002, 0.3)) for _ in range(3))
        za, zb, zy = (np.int8(rng.integers(-128, 128)) for _ in range(3))
        if i == 0:
            sa, sb, sy = np.float32(0.25), np.float32(0.125), np.float32(0.5)
        quant = [_bits(sa), int(za), _bits(sb), int(zb), _bits(sy), int(zy)]
        expected = _qlinear_add(a, b, sa, za, sb, zb, sy, zy)
        cases.append((3, [a.size, *quant], a, b, np.zeros(0, np.int32), np.zeros(0, np.float32), expected))
    with open(tmp_path / "cases.bin", "wb") as f:
        for i, (kind, sizes, x, w, b, multipliers, y) in enumerate(cases):
            counts = [x.size, w.size, b.nbytes, y.size, i % 4]  # weights at offsets 0 to 3
            f.write(np.array([kind, *sizes, *[0] * (20 - len(sizes)), *counts], np.int64).astype(np.uint32).tobytes())
            f.write(x.tobytes() + w.tobytes() + b.tobytes() + multipliers.tobytes())
    toolchain = toolchain_for("thumbv8.1m.main-none-eabihf", cpu="cortex-m55")
    sources, link_flags = baremetal.support_files(toolchain.core, tmp_path)
    kernel_sources = [KERNELS / s for s in ("fully_connected.c", "convolution.c", "add.c")]
    kernel_sources += [KERNELS / s for s in ("fully_connected_per_channel.c", "convolution_per_channel.c")]
    # The driver calls the TFLM entry points too (test_int8_tflm_kernels.py).
    kernel_sources += [KERNELS / s for s in ("fully_connected_tflm.c", "convolution_tflm.c", "add_tflm.c")]
    driver = Path(__file__).resolve().parent / "c" / "int8_kernels_driver.c"
    flags = [*toolchain.cflags, "-O2", "-std=c11", "-Wall", "-Wextra", "-Werror", f"-I{KERNELS}"]
    program = tmp_path / "driver.elf"
    subprocess.run(
        [toolchain.cc, *flags, driver, *kernel_sources, *sources, *link_flags, "-lm", "-o", program], check=True
    )
    run = subprocess.run(toolchain.run_command(program, ["cases.bin", "out.bin"]), cwd=tmp_path, timeout=120)
    assert run.returncode == 0
    got = (tmp_path / "out.bin").read_bytes()
    at = 0
    for i, (kind, sizes, *_, expected) in enumerate(cases):
        y = np.frombuffer(got[at : at + expected.size], np.int8).reshape(expected.shape)
        at += expected.size
        assert np.array_equal(y, expected), f"case {i} (kernel {kind}): {sizes}"
    assert at == len(got)
