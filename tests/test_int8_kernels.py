"""ireegen's int8 kernels (ireegen/kernels/int8/, docs/kernels-int8.md)
equal ONNX Runtime's int8 operators bit for bit.

The kernels are compiled for the host with the C compiler and called
through ctypes on random shapes, zero points, scales, weights and inputs;
the reference is ONNX Runtime's own QGemm and QLinearConv on the same int8
tensors.  The committed match spec is what its generator writes.
"""

from __future__ import annotations

import ctypes
import shutil
import struct
import subprocess
from pathlib import Path

import numpy as np
import pytest

import ireegen
from ireegen.compile import int8_match

KERNELS = Path(ireegen.__file__).resolve().parent / "kernels" / "int8"

ort = pytest.importorskip("onnxruntime")
onnx = pytest.importorskip("onnx")
from onnx import TensorProto, helper  # noqa: E402

CASES = 100  # random cases per operator


def test_committed_spec_is_generated():
    assert (KERNELS / "int8.match.mlir").read_text() == int8_match.spec()


@pytest.fixture(scope="module")
def lib(tmp_path_factory):
    cc = shutil.which("cc") or shutil.which("gcc")
    if cc is None:
        pytest.skip("no C compiler")
    out = tmp_path_factory.mktemp("int8") / "libireegen_int8.so"
    sources = [str(KERNELS / s) for s in ("fully_connected.c", "convolution.c")]
    flags = ["-std=c11", "-O2", "-Wall", "-Wextra", "-Werror", "-shared", "-fPIC"]
    subprocess.run([cc, *flags, *sources, "-o", str(out)], check=True)
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


@pytest.mark.parametrize("layout", ["nk", "kn"])
def test_fully_connected_equals_onnxruntime(lib, layout):
    """Weights (N, K) as Gemm transB=1 keeps them, and (K, N)."""
    rng = np.random.default_rng(22 if layout == "nk" else 21)
    kernel = lib.ireegen_i8_fully_connected if layout == "nk" else lib.ireegen_i8_fully_connected_kn
    for case in range(CASES):
        # K past the column the kernel keeps on the stack (1024) now and then.
        m, n, k = int(rng.integers(1, 5)), int(rng.integers(1, 40)), int(rng.choice([rng.integers(1, 300), 1100]))
        sx, zx, sw, sy, zy = _qparams(rng)
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
        params = {"sx": sx, "zx": zx, "sw": sw, "zw": np.int8(0), "sy": sy, "zy": zy}
        params = {k2: np.array(v) for k2, v in params.items()}
        s = _session(node, {"x": x, "w": w, "b": b, **params}, (m, n), "com.microsoft")
        expected = s.run(None, {"x": x})[0]
        y = np.zeros((m, n), np.int8)
        kernel(
            _ptr(x), ctypes.c_size_t(0), _ptr(w), ctypes.c_size_t(0), _ptr(b), ctypes.c_size_t(0), _ptr(y),
            ctypes.c_size_t(0), ctypes.c_size_t(m), ctypes.c_size_t(n), ctypes.c_size_t(k),
            ctypes.c_uint32(_bits(sx)), ctypes.c_int32(int(zx)), ctypes.c_uint32(_bits(sw)),
            ctypes.c_uint32(_bits(sy)), ctypes.c_int32(int(zy)),
        )  # fmt: skip
        assert np.array_equal(y, expected), f"case {case}: m={m} n={n} k={k}"


@pytest.mark.parametrize("depthwise", [False, True], ids=["conv", "depthwise"])
def test_convolution_equals_onnxruntime(lib, depthwise):
    rng = np.random.default_rng(23 + depthwise)
    for case in range(CASES):
        n, c = int(rng.integers(1, 3)), int(rng.integers(1, 9))
        f = c if depthwise else int(rng.integers(1, 9))
        h, wd = int(rng.integers(1, 12)), int(rng.integers(1, 12))
        # 3x3 half the time (the depthwise kernel's fast path), else 1 to 5.
        kh = 3 if h >= 3 and rng.random() < 0.5 else int(rng.integers(1, min(h, 5) + 1))
        kw = 3 if wd >= 3 and kh == 3 else int(rng.integers(1, min(wd, 5) + 1))
        stride = int(rng.integers(1, 3))
        pt, pl = int(rng.integers(0, kh)), int(rng.integers(0, kw))
        pb, pr = int(rng.integers(0, kh)), int(rng.integers(0, kw))
        oh, ow = (h + pt + pb - kh) // stride + 1, (wd + pl + pr - kw) // stride + 1
        sx, zx, sw, sy, zy = _qparams(rng)
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
        params = {"sx": sx, "zx": zx, "sw": sw, "zw": np.int8(0), "sy": sy, "zy": zy}
        params = {k2: np.array(v) for k2, v in params.items()}
        s = _session(node, {"x": x, "w": w, "b": b, **params}, (n, f, oh, ow))
        expected = s.run(None, {"x": x})[0]
        y = np.zeros((n, f, oh, ow), np.int8)
        kernel = lib.ireegen_i8_depthwise_conv if depthwise else lib.ireegen_i8_convolution
        sizes = [n, c, h, wd, f, kh, kw, oh, ow, stride, pt, pl]
        kernel(
            _ptr(x), ctypes.c_size_t(0), _ptr(w), ctypes.c_size_t(0), _ptr(b), ctypes.c_size_t(0), _ptr(y),
            ctypes.c_size_t(0), *map(ctypes.c_size_t, sizes),
            ctypes.c_uint32(_bits(sx)), ctypes.c_int32(int(zx)), ctypes.c_uint32(_bits(sw)),
            ctypes.c_uint32(_bits(sy)), ctypes.c_int32(int(zy)),
        )  # fmt: skip
        assert np.array_equal(y, expected), f"case {case}: {sizes} pads {pt, pl, pb, pr}"
