"""Test-model corpus: MLIR models with numpy reference outputs.

Single source of truth: every model's MLIR text, its weights (seeded numpy
RNG) and its reference outputs are produced here.  `write_models()` writes
the .mlir files next to this file; the committed files must equal what it
writes (run `python tests/models/corpus.py` after editing).

References are computed with numpy only, never by running IREE.  Integer and
bool outputs are meant to be compared exactly (see `compare`), float outputs
with the case's rtol/atol.
"""

from __future__ import annotations

import pathlib
from dataclasses import dataclass

import numpy as np

HERE = pathlib.Path(__file__).resolve().parent


@dataclass
class Call:
    function: str
    inputs: list  # numpy arrays (or numpy scalars for scalar args), seeded
    expected: list  # numpy reference outputs, computed in numpy


@dataclass
class Case:
    name: str
    path: pathlib.Path  # the .mlir
    calls: list  # of Call, at least one per exported function
    rtol: float = 1e-5
    atol: float = 1e-5


def compare(actual, expected, rtol: float, atol: float) -> None:
    """Asserts one output: exact for integer/bool, allclose for floats.
    Shapes must match; an integer/bool result is compared by value (IREE
    returns i1 tensors as int8 or bool depending on the runner)."""
    actual = np.asarray(actual)
    expected = np.asarray(expected)
    assert actual.shape == expected.shape, f"shape {actual.shape} != expected {expected.shape}"
    if expected.dtype.kind in "iub":
        np.testing.assert_array_equal(actual.astype(np.int64), expected.astype(np.int64))
    else:
        np.testing.assert_allclose(actual, expected, rtol=rtol, atol=atol)


# --------------------------------------------------------------------------
# MLIR literal formatting

def _scalar_text(v, kind: str) -> str:
    if kind == "f":
        return f"{float(v):.9e}"
    if kind == "b":
        return "true" if v else "false"
    return str(int(v))


def dense(a: np.ndarray) -> str:
    """`dense<...> : tensor<...>` for a numpy array; f32 values round-trip."""
    a = np.asarray(a)
    kind = a.dtype.kind

    def rec(x):
        if x.ndim == 0:
            return _scalar_text(x.item(), kind)
        return "[" + ", ".join(rec(y) for y in x) + "]"

    return f"dense<{rec(a)}> : {tensor_type(a.shape, a.dtype)}"


_ELT = {np.dtype(np.float32): "f32", np.dtype(np.int32): "i32", np.dtype(np.int64): "i64",
        np.dtype(np.bool_): "i1"}


def tensor_type(shape, dtype) -> str:
    dims = "".join(f"{d}x" for d in shape)
    return f"tensor<{dims}{_ELT[np.dtype(dtype)]}>"


def _f32(rng, *shape, scale=1.0):
    return (rng.standard_normal(shape) * scale).astype(np.float32)


NEG_INF = "0xFF800000"

# --------------------------------------------------------------------------
# Models.  Each builder returns (mlir_text, calls, rtol, atol).


def _elementwise():
    mlir = """\
// elementwise: arith/math ops applied directly on tensors
// (mulf, addf, subf, divf, maximumf, negf, sin, exp, sqrt, absf, tanh).
func.func @elementwise(%a: tensor<2x3x4xf32>, %b: tensor<2x3x4xf32>, %c: tensor<2x3x4xf32>) -> tensor<2x3x4xf32> {
  %one = arith.constant dense<1.0> : tensor<2x3x4xf32>
  %ab = arith.mulf %a, %b : tensor<2x3x4xf32>
  %sc = math.sin %c : tensor<2x3x4xf32>
  %t0 = arith.addf %ab, %sc : tensor<2x3x4xf32>
  %absb = math.absf %b : tensor<2x3x4xf32>
  %nb = arith.negf %absb : tensor<2x3x4xf32>
  %eb = math.exp %nb : tensor<2x3x4xf32>
  %t1 = arith.subf %t0, %eb : tensor<2x3x4xf32>
  %mx = arith.maximumf %a, %c : tensor<2x3x4xf32>
  %bb = arith.mulf %b, %b : tensor<2x3x4xf32>
  %den = arith.addf %one, %bb : tensor<2x3x4xf32>
  %q = arith.divf %mx, %den : tensor<2x3x4xf32>
  %t2 = arith.addf %t1, %q : tensor<2x3x4xf32>
  %absc = math.absf %c : tensor<2x3x4xf32>
  %sq = math.sqrt %absc : tensor<2x3x4xf32>
  %th = math.tanh %a : tensor<2x3x4xf32>
  %p = arith.mulf %sq, %th : tensor<2x3x4xf32>
  %r = arith.addf %t2, %p : tensor<2x3x4xf32>
  return %r : tensor<2x3x4xf32>
}
"""

    def ref(a, b, c):
        a, b, c = (x.astype(np.float64) for x in (a, b, c))
        r = a * b + np.sin(c) - np.exp(-np.abs(b)) + np.maximum(a, c) / (1 + b * b) + np.sqrt(np.abs(c)) * np.tanh(a)
        return r.astype(np.float32)

    rng = np.random.default_rng(1)
    calls = []
    for _ in range(2):
        a, b, c = (_f32(rng, 2, 3, 4) for _ in range(3))
        calls.append(Call("elementwise", [a, b, c], [ref(a, b, c)]))
    return mlir, calls, 1e-5, 1e-5


def _bias_act_generic(name, src, bias, shape, relu: bool, indent="  ") -> str:
    t = tensor_type(shape, np.float32)
    act = (f"{indent}      %relu0 = arith.constant 0.0 : f32\n"
           f"{indent}      %r = arith.maximumf %s, %relu0 : f32\n"
           f"{indent}      linalg.yield %r : f32\n") if relu else f"{indent}      linalg.yield %s : f32\n"
    return (
        f"{indent}%{name} = linalg.generic {{indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (j)>, affine_map<(i, j) -> (i, j)>],\n"
        f"{indent}                        iterator_types = [\"parallel\", \"parallel\"]}}\n"
        f"{indent}    ins(%{src}, %{bias} : {t}, tensor<{shape[1]}xf32>) outs(%{src} : {t}) {{\n"
        f"{indent}    ^bb0(%v: f32, %bv: f32, %o: f32):\n"
        f"{indent}      %s = arith.addf %v, %bv : f32\n"
        + act +
        f"{indent}}} -> {t}\n"
    )


def _mlp():
    rng = np.random.default_rng(2)
    w1 = _f32(rng, 16, 32, scale=0.3)
    b1 = _f32(rng, 32, scale=0.1)
    w2 = _f32(rng, 32, 8, scale=0.3)
    b2 = _f32(rng, 8, scale=0.1)
    mlir = f"""\
// mlp: 2-layer perceptron, x(4x16) -> 32 (relu) -> 8, seeded random non-splat
// weights (16x32 and 32x8 f32, large enough not to be inlined into dispatches).
func.func @mlp(%x: tensor<4x16xf32>) -> tensor<4x8xf32> {{
  %w1 = arith.constant {dense(w1)}
  %b1 = arith.constant {dense(b1)}
  %w2 = arith.constant {dense(w2)}
  %b2 = arith.constant {dense(b2)}
  %zero = arith.constant 0.0 : f32
  %e1 = tensor.empty() : tensor<4x32xf32>
  %f1 = linalg.fill ins(%zero : f32) outs(%e1 : tensor<4x32xf32>) -> tensor<4x32xf32>
  %m1 = linalg.matmul ins(%x, %w1 : tensor<4x16xf32>, tensor<16x32xf32>) outs(%f1 : tensor<4x32xf32>) -> tensor<4x32xf32>
{_bias_act_generic("h1", "m1", "b1", (4, 32), True)}\
  %e2 = tensor.empty() : tensor<4x8xf32>
  %f2 = linalg.fill ins(%zero : f32) outs(%e2 : tensor<4x8xf32>) -> tensor<4x8xf32>
  %m2 = linalg.matmul ins(%h1, %w2 : tensor<4x32xf32>, tensor<32x8xf32>) outs(%f2 : tensor<4x8xf32>) -> tensor<4x8xf32>
{_bias_act_generic("y", "m2", "b2", (4, 8), False)}\
  return %y : tensor<4x8xf32>
}}
"""

    def ref(x):
        h = np.maximum(x.astype(np.float64) @ w1 + b1, 0)
        return (h @ w2 + b2).astype(np.float32)

    calls = []
    for _ in range(2):
        x = _f32(rng, 4, 16)
        calls.append(Call("mlp", [x], [ref(x)]))
    return mlir, calls, 1e-4, 1e-5


def _conv2d_ref(x, w, stride=1):
    n, h, wd, c = x.shape
    kh, kw, _, f = w.shape
    oh, ow = (h - kh) // stride + 1, (wd - kw) // stride + 1
    out = np.zeros((n, oh, ow, f))
    for i in range(oh):
        for j in range(ow):
            patch = x[:, i * stride:i * stride + kh, j * stride:j * stride + kw, :].astype(np.float64)
            out[:, i, j, :] = np.einsum("nhwc,hwcf->nf", patch, w)
    return out


def _cnn():
    rng = np.random.default_rng(3)
    w = _f32(rng, 3, 3, 3, 4, scale=0.3)
    b = _f32(rng, 4, scale=0.1)
    mlir = f"""\
// cnn: conv2d NHWC/HWCF (2x8x8x3 * 3x3x3x4, stride 1, no padding) + bias + relu
// + 2x2/stride-2 max pooling; constant seeded non-splat filter and bias.
func.func @cnn(%x: tensor<2x8x8x3xf32>) -> tensor<2x3x3x4xf32> {{
  %w = arith.constant {dense(w)}
  %b = arith.constant {dense(b)}
  %zero = arith.constant 0.0 : f32
  %ninf = arith.constant {NEG_INF} : f32
  %e = tensor.empty() : tensor<2x6x6x4xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<2x6x6x4xf32>) -> tensor<2x6x6x4xf32>
  %conv = linalg.conv_2d_nhwc_hwcf {{dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}}
      ins(%x, %w : tensor<2x8x8x3xf32>, tensor<3x3x3x4xf32>) outs(%f : tensor<2x6x6x4xf32>) -> tensor<2x6x6x4xf32>
  %act = linalg.generic {{indexing_maps = [affine_map<(n, h, w, c) -> (n, h, w, c)>, affine_map<(n, h, w, c) -> (c)>, affine_map<(n, h, w, c) -> (n, h, w, c)>],
                          iterator_types = ["parallel", "parallel", "parallel", "parallel"]}}
      ins(%conv, %b : tensor<2x6x6x4xf32>, tensor<4xf32>) outs(%e : tensor<2x6x6x4xf32>) {{
    ^bb0(%v: f32, %bv: f32, %o: f32):
      %s = arith.addf %v, %bv : f32
      %z = arith.constant 0.0 : f32
      %r = arith.maximumf %s, %z : f32
      linalg.yield %r : f32
  }} -> tensor<2x6x6x4xf32>
  %win = tensor.empty() : tensor<2x2xf32>
  %pe = tensor.empty() : tensor<2x3x3x4xf32>
  %pf = linalg.fill ins(%ninf : f32) outs(%pe : tensor<2x3x3x4xf32>) -> tensor<2x3x3x4xf32>
  %pool = linalg.pooling_nhwc_max {{dilations = dense<1> : tensor<2xi64>, strides = dense<2> : tensor<2xi64>}}
      ins(%act, %win : tensor<2x6x6x4xf32>, tensor<2x2xf32>) outs(%pf : tensor<2x3x3x4xf32>) -> tensor<2x3x3x4xf32>
  return %pool : tensor<2x3x3x4xf32>
}}
"""

    def ref(x):
        a = np.maximum(_conv2d_ref(x, w) + b, 0)
        p = a.reshape(2, 3, 2, 3, 2, 4).max(axis=(2, 4))
        return p.astype(np.float32)

    calls = []
    for _ in range(2):
        x = _f32(rng, 2, 8, 8, 3)
        calls.append(Call("cnn", [x], [ref(x)]))
    return mlir, calls, 1e-4, 1e-5


def _depthwise_conv():
    rng = np.random.default_rng(4)
    w = _f32(rng, 3, 3, 8, scale=0.5)
    mlir = f"""\
// depthwise_conv: linalg.depthwise_conv_2d_nhwc_hwc (1x6x6x8 * 3x3x8, stride 1)
// with a constant seeded non-splat filter.
func.func @depthwise_conv(%x: tensor<1x6x6x8xf32>) -> tensor<1x4x4x8xf32> {{
  %w = arith.constant {dense(w)}
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<1x4x4x8xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<1x4x4x8xf32>) -> tensor<1x4x4x8xf32>
  %y = linalg.depthwise_conv_2d_nhwc_hwc {{dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}}
      ins(%x, %w : tensor<1x6x6x8xf32>, tensor<3x3x8xf32>) outs(%f : tensor<1x4x4x8xf32>) -> tensor<1x4x4x8xf32>
  return %y : tensor<1x4x4x8xf32>
}}
"""

    def ref(x):
        out = np.zeros((1, 4, 4, 8))
        for i in range(4):
            for j in range(4):
                out[:, i, j, :] = np.einsum("nhwc,hwc->nc", x[:, i:i + 3, j:j + 3, :].astype(np.float64), w)
        return out.astype(np.float32)

    calls = []
    for _ in range(2):
        x = _f32(rng, 1, 6, 6, 8)
        calls.append(Call("depthwise_conv", [x], [ref(x)]))
    return mlir, calls, 1e-4, 1e-5


def _reduce(name, src, init, src_t, dst_t, dims, op, elt="f32", indent="  ") -> str:
    return (
        f"{indent}%{name} = linalg.reduce ins(%{src} : {src_t}) outs(%{init} : {dst_t}) dimensions = {dims}\n"
        f"{indent}    (%in: {elt}, %acc: {elt}) {{\n"
        f"{indent}      %red = {op} %in, %acc : {elt}\n"
        f"{indent}      linalg.yield %red : {elt}\n"
        f"{indent}    }}\n"
    )


def _softmax():
    mlir = f"""\
// softmax: numerically stable softmax along the last dim of a 4x10 tensor
// (max reduce, subtract, exp, sum reduce, divide).
func.func @softmax(%x: tensor<4x10xf32>) -> tensor<4x10xf32> {{
  %ninf = arith.constant {NEG_INF} : f32
  %zero = arith.constant 0.0 : f32
  %e1 = tensor.empty() : tensor<4xf32>
  %fmax = linalg.fill ins(%ninf : f32) outs(%e1 : tensor<4xf32>) -> tensor<4xf32>
{_reduce("mx", "x", "fmax", "tensor<4x10xf32>", "tensor<4xf32>", "[1]", "arith.maximumf")}\
  %e2 = tensor.empty() : tensor<4x10xf32>
  %ex = linalg.generic {{indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i)>, affine_map<(i, j) -> (i, j)>],
                         iterator_types = ["parallel", "parallel"]}}
      ins(%x, %mx : tensor<4x10xf32>, tensor<4xf32>) outs(%e2 : tensor<4x10xf32>) {{
    ^bb0(%v: f32, %m: f32, %o: f32):
      %d = arith.subf %v, %m : f32
      %ed = math.exp %d : f32
      linalg.yield %ed : f32
  }} -> tensor<4x10xf32>
  %fsum = linalg.fill ins(%zero : f32) outs(%e1 : tensor<4xf32>) -> tensor<4xf32>
{_reduce("sm", "ex", "fsum", "tensor<4x10xf32>", "tensor<4xf32>", "[1]", "arith.addf")}\
  %y = linalg.generic {{indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i)>, affine_map<(i, j) -> (i, j)>],
                        iterator_types = ["parallel", "parallel"]}}
      ins(%ex, %sm : tensor<4x10xf32>, tensor<4xf32>) outs(%e2 : tensor<4x10xf32>) {{
    ^bb0(%v: f32, %s: f32, %o: f32):
      %q = arith.divf %v, %s : f32
      linalg.yield %q : f32
  }} -> tensor<4x10xf32>
  return %y : tensor<4x10xf32>
}}
"""

    def ref(x):
        x = x.astype(np.float64)
        e = np.exp(x - x.max(axis=-1, keepdims=True))
        return (e / e.sum(axis=-1, keepdims=True)).astype(np.float32)

    rng = np.random.default_rng(5)
    calls = []
    for scale in (1.0, 10.0):
        x = _f32(rng, 4, 10, scale=scale)
        calls.append(Call("softmax", [x], [ref(x)]))
    return mlir, calls, 1e-4, 1e-6


def _layer_norm():
    rng = np.random.default_rng(6)
    gamma = (1.0 + _f32(rng, 16, scale=0.2)).astype(np.float32)
    beta = _f32(rng, 16, scale=0.1)
    eps = 1e-5
    mlir = f"""\
// layer_norm: layer normalisation over the last dim of 4x16 (mean, biased
// variance, epsilon 1e-5, rsqrt) with constant non-splat gamma and beta.
func.func @layer_norm(%x: tensor<4x16xf32>) -> tensor<4x16xf32> {{
  %gamma = arith.constant {dense(gamma)}
  %beta = arith.constant {dense(beta)}
  %zero = arith.constant 0.0 : f32
  %e1 = tensor.empty() : tensor<4xf32>
  %e2 = tensor.empty() : tensor<4x16xf32>
  %f1 = linalg.fill ins(%zero : f32) outs(%e1 : tensor<4xf32>) -> tensor<4xf32>
{_reduce("sum", "x", "f1", "tensor<4x16xf32>", "tensor<4xf32>", "[1]", "arith.addf")}\
  %cen = linalg.generic {{indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i)>, affine_map<(i, j) -> (i, j)>],
                          iterator_types = ["parallel", "parallel"]}}
      ins(%x, %sum : tensor<4x16xf32>, tensor<4xf32>) outs(%e2 : tensor<4x16xf32>) {{
    ^bb0(%v: f32, %s: f32, %o: f32):
      %n = arith.constant 16.0 : f32
      %mean = arith.divf %s, %n : f32
      %d = arith.subf %v, %mean : f32
      linalg.yield %d : f32
  }} -> tensor<4x16xf32>
  %sq = arith.mulf %cen, %cen : tensor<4x16xf32>
  %f2 = linalg.fill ins(%zero : f32) outs(%e1 : tensor<4xf32>) -> tensor<4xf32>
{_reduce("ssq", "sq", "f2", "tensor<4x16xf32>", "tensor<4xf32>", "[1]", "arith.addf")}\
  %y = linalg.generic {{indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i)>, affine_map<(i, j) -> (j)>, affine_map<(i, j) -> (j)>, affine_map<(i, j) -> (i, j)>],
                        iterator_types = ["parallel", "parallel"]}}
      ins(%cen, %ssq, %gamma, %beta : tensor<4x16xf32>, tensor<4xf32>, tensor<16xf32>, tensor<16xf32>) outs(%e2 : tensor<4x16xf32>) {{
    ^bb0(%c: f32, %s: f32, %g: f32, %bt: f32, %o: f32):
      %n = arith.constant 16.0 : f32
      %eps = arith.constant {eps:.9e} : f32
      %var = arith.divf %s, %n : f32
      %ve = arith.addf %var, %eps : f32
      %rs = math.rsqrt %ve : f32
      %nrm = arith.mulf %c, %rs : f32
      %sc = arith.mulf %nrm, %g : f32
      %r = arith.addf %sc, %bt : f32
      linalg.yield %r : f32
  }} -> tensor<4x16xf32>
  return %y : tensor<4x16xf32>
}}
"""

    def ref(x):
        x = x.astype(np.float64)
        m = x.mean(axis=-1, keepdims=True)
        v = ((x - m) ** 2).mean(axis=-1, keepdims=True)
        return ((x - m) / np.sqrt(v + np.float32(eps)) * gamma + beta).astype(np.float32)

    calls = []
    for scale, shift in ((1.0, 0.0), (3.0, 2.0)):
        x = (_f32(rng, 4, 16, scale=scale) + shift).astype(np.float32)
        calls.append(Call("layer_norm", [x], [ref(x)]))
    return mlir, calls, 1e-4, 1e-5


def _reductions():
    mlir = f"""\
// reductions: sum over axis 2, max over axis 0, mean over axes (0, 2) of a
// 3x4x5 f32 tensor, and the total sum as a 0-d tensor; four outputs.
func.func @reductions(%x: tensor<3x4x5xf32>) -> (tensor<3x4xf32>, tensor<4x5xf32>, tensor<4xf32>, tensor<f32>) {{
  %zero = arith.constant 0.0 : f32
  %ninf = arith.constant {NEG_INF} : f32
  %e34 = tensor.empty() : tensor<3x4xf32>
  %f34 = linalg.fill ins(%zero : f32) outs(%e34 : tensor<3x4xf32>) -> tensor<3x4xf32>
{_reduce("sum2", "x", "f34", "tensor<3x4x5xf32>", "tensor<3x4xf32>", "[2]", "arith.addf")}\
  %e45 = tensor.empty() : tensor<4x5xf32>
  %f45 = linalg.fill ins(%ninf : f32) outs(%e45 : tensor<4x5xf32>) -> tensor<4x5xf32>
{_reduce("max0", "x", "f45", "tensor<3x4x5xf32>", "tensor<4x5xf32>", "[0]", "arith.maximumf")}\
  %e4 = tensor.empty() : tensor<4xf32>
  %f4 = linalg.fill ins(%zero : f32) outs(%e4 : tensor<4xf32>) -> tensor<4xf32>
{_reduce("s02", "x", "f4", "tensor<3x4x5xf32>", "tensor<4xf32>", "[0, 2]", "arith.addf")}\
  %cnt = arith.constant dense<15.0> : tensor<4xf32>
  %mean = arith.divf %s02, %cnt : tensor<4xf32>
  %e0 = tensor.empty() : tensor<f32>
  %f0 = linalg.fill ins(%zero : f32) outs(%e0 : tensor<f32>) -> tensor<f32>
{_reduce("tot", "x", "f0", "tensor<3x4x5xf32>", "tensor<f32>", "[0, 1, 2]", "arith.addf")}\
  return %sum2, %max0, %mean, %tot : tensor<3x4xf32>, tensor<4x5xf32>, tensor<4xf32>, tensor<f32>
}}
"""

    def ref(x):
        x64 = x.astype(np.float64)
        return [x64.sum(axis=2).astype(np.float32), x.max(axis=0),
                x64.mean(axis=(0, 2)).astype(np.float32), np.asarray(x64.sum(), dtype=np.float32)]

    rng = np.random.default_rng(7)
    calls = []
    for _ in range(2):
        x = _f32(rng, 3, 4, 5)
        calls.append(Call("reductions", [x], ref(x)))
    return mlir, calls, 1e-5, 1e-5


def _integer_arith():
    T = "tensor<2x8xi32>"
    mlir = f"""\
// integer_arith: i32 addi/subi/muli/shli/shrsi/andi/xori/divsi/remsi by
// constants, maxsi/minsi and a compare+select, on 2x8 tensors with values in
// [-1000, 1000] (no overflow, no division by zero); three outputs.
func.func @integer_arith(%a: {T}, %b: {T}) -> ({T}, {T}, {T}) {{
  %c3 = arith.constant dense<3> : {T}
  %c2 = arith.constant dense<2> : {T}
  %c255 = arith.constant dense<255> : {T}
  %c7 = arith.constant dense<7> : {T}
  %c5 = arith.constant dense<5> : {T}
  %c100 = arith.constant dense<100> : {T}
  %s = arith.addi %a, %b : {T}
  %s3 = arith.muli %s, %c3 : {T}
  %sh = arith.shli %a, %c3 : {T}
  %o1 = arith.subi %s3, %sh : {T}
  %p = arith.muli %a, %b : {T}
  %sr = arith.shrsi %p, %c2 : {T}
  %an = arith.andi %b, %c255 : {T}
  %d = arith.divsi %p, %c7 : {T}
  %t = arith.addi %sr, %an : {T}
  %o2 = arith.subi %t, %d : {T}
  %r = arith.remsi %a, %c5 : {T}
  %x = arith.xori %a, %b : {T}
  %mx = arith.maxsi %a, %b : {T}
  %mn = arith.minsi %a, %b : {T}
  %gt = arith.cmpi sgt, %a, %c100 : {T}
  %sel = arith.select %gt, %mx, %mn : tensor<2x8xi1>, {T}
  %u = arith.addi %r, %x : {T}
  %o3 = arith.addi %u, %sel : {T}
  return %o1, %o2, %o3 : {T}, {T}, {T}
}}
"""

    def ref(a, b):
        a64, b64 = a.astype(np.int64), b.astype(np.int64)
        o1 = (a64 + b64) * 3 - (a64 << 3)
        p = a64 * b64
        d = np.sign(p) * (np.abs(p) // 7)  # truncating division
        o2 = (p >> 2) + (b64 & 255) - d
        r = np.fmod(a64, 5)  # sign of the dividend
        sel = np.where(a64 > 100, np.maximum(a64, b64), np.minimum(a64, b64))
        o3 = r + (a64 ^ b64) + sel
        return [o.astype(np.int32) for o in (o1, o2, o3)]

    rng = np.random.default_rng(8)
    calls = []
    for _ in range(2):
        a = rng.integers(-1000, 1001, (2, 8)).astype(np.int32)
        b = rng.integers(-1000, 1001, (2, 8)).astype(np.int32)
        calls.append(Call("integer_arith", [a, b], ref(a, b)))
    return mlir, calls, 0.0, 0.0


def _multi_output():
    mlir = f"""\
// multi_output: one function, three results of different shapes and dtypes:
// f32 row sums (4), i1 mask x > 0 (4x6), i64 column sums of sign-extended y (6).
func.func @multi_output(%x: tensor<4x6xf32>, %y: tensor<4x6xi32>) -> (tensor<4xf32>, tensor<4x6xi1>, tensor<6xi64>) {{
  %zero = arith.constant 0.0 : f32
  %zi = arith.constant 0 : i64
  %e4 = tensor.empty() : tensor<4xf32>
  %f4 = linalg.fill ins(%zero : f32) outs(%e4 : tensor<4xf32>) -> tensor<4xf32>
{_reduce("rows", "x", "f4", "tensor<4x6xf32>", "tensor<4xf32>", "[1]", "arith.addf")}\
  %zt = arith.constant dense<0.0> : tensor<4x6xf32>
  %mask = arith.cmpf ogt, %x, %zt : tensor<4x6xf32>
  %y64 = arith.extsi %y : tensor<4x6xi32> to tensor<4x6xi64>
  %e6 = tensor.empty() : tensor<6xi64>
  %f6 = linalg.fill ins(%zi : i64) outs(%e6 : tensor<6xi64>) -> tensor<6xi64>
{_reduce("cols", "y64", "f6", "tensor<4x6xi64>", "tensor<6xi64>", "[0]", "arith.addi", elt="i64")}\
  return %rows, %mask, %cols : tensor<4xf32>, tensor<4x6xi1>, tensor<6xi64>
}}
"""

    def ref(x, y):
        return [x.astype(np.float64).sum(axis=1).astype(np.float32), x > 0, y.astype(np.int64).sum(axis=0)]

    rng = np.random.default_rng(9)
    calls = []
    for lo, hi in ((-2**30, 2**30), (2**29, 2**30)):  # the second's column sums overflow i32
        x = _f32(rng, 4, 6)
        y = rng.integers(lo, hi, (4, 6)).astype(np.int32)
        calls.append(Call("multi_output", [x, y], ref(x, y)))
    return mlir, calls, 1e-5, 1e-5


def _multi_function():
    mlir = """\
// multi_function: three exported functions in one module: @add (f32 tensors),
// @scale (tensor times an f32 scalar argument), @transpose (i32, linalg.transpose).
func.func @add(%a: tensor<4xf32>, %b: tensor<4xf32>) -> tensor<4xf32> {
  %r = arith.addf %a, %b : tensor<4xf32>
  return %r : tensor<4xf32>
}

func.func @scale(%x: tensor<2x3xf32>, %s: f32) -> tensor<2x3xf32> {
  %e = tensor.empty() : tensor<2x3xf32>
  %t = linalg.fill ins(%s : f32) outs(%e : tensor<2x3xf32>) -> tensor<2x3xf32>
  %r = arith.mulf %x, %t : tensor<2x3xf32>
  return %r : tensor<2x3xf32>
}

func.func @transpose(%x: tensor<3x5xi32>) -> tensor<5x3xi32> {
  %e = tensor.empty() : tensor<5x3xi32>
  %t = linalg.transpose ins(%x : tensor<3x5xi32>) outs(%e : tensor<5x3xi32>) permutation = [1, 0]
  return %t : tensor<5x3xi32>
}
"""
    rng = np.random.default_rng(10)
    a, b = _f32(rng, 4), _f32(rng, 4)
    x = _f32(rng, 2, 3)
    s = np.float32(2.5)
    t = rng.integers(-100, 100, (3, 5)).astype(np.int32)
    calls = [
        Call("add", [a, b], [a + b]),
        Call("scale", [x, s], [x * s]),
        Call("transpose", [t], [np.ascontiguousarray(t.T)]),
    ]
    return mlir, calls, 1e-6, 1e-6


def _stateful():
    rng = np.random.default_rng(11)
    init = _f32(rng, 2, 4)
    mlir = f"""\
// stateful: a util.global private mutable with a non-splat initial value;
// @accumulate loads it, adds the input, stores the sum back and returns it.
// The reference is one call from fresh state.
util.global private mutable @state = {dense(init)}

func.func @accumulate(%x: tensor<2x4xf32>) -> tensor<2x4xf32> {{
  %s = util.global.load @state : tensor<2x4xf32>
  %n = arith.addf %s, %x : tensor<2x4xf32>
  util.global.store %n, @state : tensor<2x4xf32>
  return %n : tensor<2x4xf32>
}}
"""
    x = _f32(rng, 2, 4)
    return mlir, [Call("accumulate", [x], [init + x])], 1e-6, 1e-6


def _data_dependent_loop():
    mlir = f"""\
// data_dependent_loop: scf.while loops whose trip counts depend on input values:
// @halve_until halves x until max(x) < 1.0 and returns x and the step count;
// @repeat applies x = x * 1.5 - 0.25 n times, n = clamp(tensor.extract(n), 0, 16).
func.func @halve_until(%x: tensor<8xf32>) -> (tensor<8xf32>, tensor<i32>) {{
  %thr = arith.constant 1.0 : f32
  %c0 = arith.constant 0 : i32
  %r:2 = scf.while (%v = %x, %n = %c0) : (tensor<8xf32>, i32) -> (tensor<8xf32>, i32) {{
    %ninf = arith.constant {NEG_INF} : f32
    %e = tensor.empty() : tensor<f32>
    %f = linalg.fill ins(%ninf : f32) outs(%e : tensor<f32>) -> tensor<f32>
{_reduce("m", "v", "f", "tensor<8xf32>", "tensor<f32>", "[0]", "arith.maximumf", indent="    ")}\
    %mv = tensor.extract %m[] : tensor<f32>
    %cond = arith.cmpf oge, %mv, %thr : f32
    scf.condition(%cond) %v, %n : tensor<8xf32>, i32
  }} do {{
  ^bb0(%v: tensor<8xf32>, %n: i32):
    %half = arith.constant dense<0.5> : tensor<8xf32>
    %v2 = arith.mulf %v, %half : tensor<8xf32>
    %one = arith.constant 1 : i32
    %n2 = arith.addi %n, %one : i32
    scf.yield %v2, %n2 : tensor<8xf32>, i32
  }}
  %nt = tensor.from_elements %r#1 : tensor<i32>
  return %r#0, %nt : tensor<8xf32>, tensor<i32>
}}

func.func @repeat(%n: tensor<i32>, %x: tensor<4xf32>) -> tensor<4xf32> {{
  %lo = arith.constant 0 : i32
  %hi = arith.constant 16 : i32
  %n0 = tensor.extract %n[] : tensor<i32>
  %n1 = arith.maxsi %n0, %lo : i32
  %count = arith.minsi %n1, %hi : i32
  %c0 = arith.constant 0 : i32
  %r:2 = scf.while (%v = %x, %i = %c0) : (tensor<4xf32>, i32) -> (tensor<4xf32>, i32) {{
    %cond = arith.cmpi slt, %i, %count : i32
    scf.condition(%cond) %v, %i : tensor<4xf32>, i32
  }} do {{
  ^bb0(%v: tensor<4xf32>, %i: i32):
    %k = arith.constant dense<1.5> : tensor<4xf32>
    %q = arith.constant dense<0.25> : tensor<4xf32>
    %m = arith.mulf %v, %k : tensor<4xf32>
    %v2 = arith.subf %m, %q : tensor<4xf32>
    %one = arith.constant 1 : i32
    %i2 = arith.addi %i, %one : i32
    scf.yield %v2, %i2 : tensor<4xf32>, i32
  }}
  return %r#0 : tensor<4xf32>
}}
"""

    def halve_ref(x):
        v, n = x.copy(), 0
        while v.max() >= 1.0:
            v = (v * np.float32(0.5)).astype(np.float32)
            n += 1
        return [v, np.asarray(n, dtype=np.int32)]

    def repeat_ref(n, x):
        v = x.astype(np.float64)
        for _ in range(int(np.clip(n, 0, 16))):
            v = v * 1.5 - 0.25
        return [v.astype(np.float32)]

    rng = np.random.default_rng(12)
    calls = []
    for x in (rng.uniform(0, 100, 8).astype(np.float32),
              rng.uniform(0, 0.9, 8).astype(np.float32),  # zero iterations
              np.array([3e5, 1, 2, 3, 0.5, 0, 7, 1e-3], dtype=np.float32)):
        calls.append(Call("halve_until", [x], halve_ref(x)))
    for n in (rng.integers(0, 12), 0, -3, 40):
        n = np.asarray(n, dtype=np.int32)
        x = _f32(rng, 4)
        calls.append(Call("repeat", [n, x], repeat_ref(n, x)))
    return mlir, calls, 1e-5, 1e-5


def _dynamic_batch():
    rng = np.random.default_rng(13)
    w = _f32(rng, 8, 4, scale=0.5)
    b = _f32(rng, 4, scale=0.1)
    mlir = f"""\
// dynamic_batch: tensor<?x8xf32> input with a dynamic batch dim; matmul with a
// constant 8x4 weight + bias + relu, result tensor<?x4xf32>.
func.func @dense(%x: tensor<?x8xf32>) -> tensor<?x4xf32> {{
  %w = arith.constant {dense(w)}
  %b = arith.constant {dense(b)}
  %c0 = arith.constant 0 : index
  %zero = arith.constant 0.0 : f32
  %n = tensor.dim %x, %c0 : tensor<?x8xf32>
  %e = tensor.empty(%n) : tensor<?x4xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<?x4xf32>) -> tensor<?x4xf32>
  %m = linalg.matmul ins(%x, %w : tensor<?x8xf32>, tensor<8x4xf32>) outs(%f : tensor<?x4xf32>) -> tensor<?x4xf32>
  %y = linalg.generic {{indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (j)>, affine_map<(i, j) -> (i, j)>],
                        iterator_types = ["parallel", "parallel"]}}
      ins(%m, %b : tensor<?x4xf32>, tensor<4xf32>) outs(%e : tensor<?x4xf32>) {{
    ^bb0(%v: f32, %bv: f32, %o: f32):
      %s = arith.addf %v, %bv : f32
      %z = arith.constant 0.0 : f32
      %r = arith.maximumf %s, %z : f32
      linalg.yield %r : f32
  }} -> tensor<?x4xf32>
  return %y : tensor<?x4xf32>
}}
"""

    def ref(x):
        return np.maximum(x.astype(np.float64) @ w + b, 0).astype(np.float32)

    calls = []
    for n in (1, 3, 7):
        x = _f32(rng, n, 8)
        calls.append(Call("dense", [x], [ref(x)]))
    return mlir, calls, 1e-5, 1e-5


def _argmax():
    mlir = f"""\
// argmax: a two-result linalg.generic reduction (value, i64 index via
// linalg.index) along the last dim of 4x10; returns max values and argmax.
func.func @argmax(%x: tensor<4x10xf32>) -> (tensor<4xf32>, tensor<4xi64>) {{
  %ninf = arith.constant {NEG_INF} : f32
  %z = arith.constant 0 : i64
  %ev = tensor.empty() : tensor<4xf32>
  %ei = tensor.empty() : tensor<4xi64>
  %fv = linalg.fill ins(%ninf : f32) outs(%ev : tensor<4xf32>) -> tensor<4xf32>
  %fi = linalg.fill ins(%z : i64) outs(%ei : tensor<4xi64>) -> tensor<4xi64>
  %r:2 = linalg.generic {{indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i)>, affine_map<(i, j) -> (i)>],
                          iterator_types = ["parallel", "reduction"]}}
      ins(%x : tensor<4x10xf32>) outs(%fv, %fi : tensor<4xf32>, tensor<4xi64>) {{
    ^bb0(%in: f32, %acc: f32, %idx: i64):
      %j = linalg.index 1 : index
      %ji = arith.index_cast %j : index to i64
      %gt = arith.cmpf ogt, %in, %acc : f32
      %nv = arith.select %gt, %in, %acc : f32
      %ni = arith.select %gt, %ji, %idx : i64
      linalg.yield %nv, %ni : f32, i64
  }} -> (tensor<4xf32>, tensor<4xi64>)
  return %r#0, %r#1 : tensor<4xf32>, tensor<4xi64>
}}
"""
    rng = np.random.default_rng(14)
    calls = []
    for _ in range(2):
        x = _f32(rng, 4, 10)
        calls.append(Call("argmax", [x], [x.max(axis=1), x.argmax(axis=1).astype(np.int64)]))
    return mlir, calls, 0.0, 0.0


def _tensor_ops():
    mlir = """\
// tensor_ops: data movement only: tensor.extract_slice, tensor.pad (constant),
// tensor.concat, tensor.collapse_shape/expand_shape and tensor.insert_slice.
func.func @tensor_ops(%x: tensor<4x6xf32>) -> (tensor<6x5xf32>, tensor<6x4xf32>, tensor<4x6xf32>) {
  %pv = arith.constant -1.0 : f32
  %s = tensor.extract_slice %x[1, 2] [2, 3] [1, 1] : tensor<4x6xf32> to tensor<2x3xf32>
  %p = tensor.pad %s low[1, 0] high[0, 2] {
  ^bb0(%i: index, %j: index):
    tensor.yield %pv : f32
  } : tensor<2x3xf32> to tensor<3x5xf32>
  %c = tensor.concat dim(0) %p, %p : (tensor<3x5xf32>, tensor<3x5xf32>) -> tensor<6x5xf32>
  %flat = tensor.collapse_shape %x [[0, 1]] : tensor<4x6xf32> into tensor<24xf32>
  %r = tensor.expand_shape %flat [[0, 1]] output_shape [6, 4] : tensor<24xf32> into tensor<6x4xf32>
  %zeros = arith.constant dense<0.0> : tensor<4x6xf32>
  %ins = tensor.insert_slice %s into %zeros[2, 0] [2, 3] [1, 1] : tensor<2x3xf32> into tensor<4x6xf32>
  return %c, %r, %ins : tensor<6x5xf32>, tensor<6x4xf32>, tensor<4x6xf32>
}
"""

    def ref(x):
        s = x[1:3, 2:5]
        p = np.pad(s, ((1, 0), (0, 2)), constant_values=-1.0)
        ins = np.zeros_like(x)
        ins[2:4, 0:3] = s
        return [np.concatenate([p, p]), x.reshape(6, 4), ins]

    rng = np.random.default_rng(15)
    x = _f32(rng, 4, 6)
    return mlir, [Call("tensor_ops", [x], ref(x))], 0.0, 0.0


_BUILDERS = {
    "elementwise": _elementwise,
    "mlp": _mlp,
    "cnn": _cnn,
    "depthwise_conv": _depthwise_conv,
    "softmax": _softmax,
    "layer_norm": _layer_norm,
    "reductions": _reductions,
    "integer_arith": _integer_arith,
    "multi_output": _multi_output,
    "multi_function": _multi_function,
    "stateful": _stateful,
    "data_dependent_loop": _data_dependent_loop,
    "dynamic_batch": _dynamic_batch,
    "argmax": _argmax,
    "tensor_ops": _tensor_ops,
}


def _build():
    texts, cases = {}, {}
    for name, builder in _BUILDERS.items():
        text, calls, rtol, atol = builder()
        texts[name] = text
        cases[name] = Case(name, HERE / f"{name}.mlir", calls, rtol, atol)
    return texts, cases


MLIR_TEXTS, CASES = _build()


def write_models(directory: pathlib.Path = HERE) -> list:
    """Writes every model's .mlir into `directory`; returns the paths."""
    directory = pathlib.Path(directory)
    paths = []
    for name, text in MLIR_TEXTS.items():
        path = directory / f"{name}.mlir"
        path.write_text(text)
        paths.append(path)
    return paths


if __name__ == "__main__":
    for p in write_models():
        print(p)
