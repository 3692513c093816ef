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


_ELT = {np.dtype(np.float32): "f32", np.dtype(np.int32): "i32", np.dtype(np.int64): "i64", np.dtype(np.bool_): "i1"}


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
    act = (
        (
            f"{indent}      %relu0 = arith.constant 0.0 : f32\n"
            f"{indent}      %r = arith.maximumf %s, %relu0 : f32\n"
            f"{indent}      linalg.yield %r : f32\n"
        )
        if relu
        else f"{indent}      linalg.yield %s : f32\n"
    )
    return (
        f"{indent}%{name} = linalg.generic {{indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (j)>, affine_map<(i, j) -> (i, j)>],\n"
        f'{indent}                        iterator_types = ["parallel", "parallel"]}}\n'
        f"{indent}    ins(%{src}, %{bias} : {t}, tensor<{shape[1]}xf32>) outs(%{src} : {t}) {{\n"
        f"{indent}    ^bb0(%v: f32, %bv: f32, %o: f32):\n"
        f"{indent}      %s = arith.addf %v, %bv : f32\n" + act + f"{indent}}} -> {t}\n"
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
            patch = x[:, i * stride : i * stride + kh, j * stride : j * stride + kw, :].astype(np.float64)
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
                out[:, i, j, :] = np.einsum("nhwc,hwc->nc", x[:, i : i + 3, j : j + 3, :].astype(np.float64), w)
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
        return [
            x64.sum(axis=2).astype(np.float32),
            x.max(axis=0),
            x64.mean(axis=(0, 2)).astype(np.float32),
            np.asarray(x64.sum(), dtype=np.float32),
        ]

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
    for lo, hi in ((-(2**30), 2**30), (2**29, 2**30)):  # the second's column sums overflow i32
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
    for x in (
        rng.uniform(0, 100, 8).astype(np.float32),
        rng.uniform(0, 0.9, 8).astype(np.float32),  # zero iterations
        np.array([3e5, 1, 2, 3, 0.5, 0, 7, 1e-3], dtype=np.float32),
    ):
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


# --------------------------------------------------------------------------
# Models for the IREE inline bugs of docs/known-iree-issues.md (issue #9):
# each computes wrong numbers with the raw 3.10-3.13 compilers in the inline
# execution models, because two equal-size buffers end up as one.


def _dense_layer(i, src, n, h, batch, relu) -> str:
    return (
        f"  %e{i} = tensor.empty() : tensor<{batch}x{h}xf32>\n"
        f"  %f{i} = linalg.fill ins(%zero : f32) outs(%e{i} : tensor<{batch}x{h}xf32>) -> tensor<{batch}x{h}xf32>\n"
        f"  %m{i} = linalg.matmul ins(%{src}, %w{i} : tensor<{batch}x{n}xf32>, tensor<{n}x{h}xf32>)"
        f" outs(%f{i} : tensor<{batch}x{h}xf32>) -> tensor<{batch}x{h}xf32>\n"
        + _bias_act_generic(f"h{i}", f"m{i}", f"b{i}", (batch, h), relu)
    )


def _wide_mlp(sizes, batch, seed, weights_as_inputs):
    """dense+bias+relu layers `sizes[0] -> ... -> sizes[-1]` (no relu on the
    last); the weights are constants, or inputs when they would make the
    .mlir file megabytes long."""
    rng = np.random.default_rng(seed)
    params = []
    for n, h in zip(sizes, sizes[1:]):
        params += [_f32(rng, n, h, scale=1.0 / np.sqrt(n)), _f32(rng, h, scale=0.1)]
    name = f"mlp_{max(sizes)}"
    layers = len(sizes) - 1
    args = [f"%x: tensor<{batch}x{sizes[0]}xf32>"]
    consts = ""
    for i in range(layers):
        w, b = params[2 * i], params[2 * i + 1]
        if weights_as_inputs:
            args += [f"%w{i}: {tensor_type(w.shape, np.float32)}", f"%b{i}: {tensor_type(b.shape, np.float32)}"]
        else:
            consts += f"  %w{i} = arith.constant {dense(w)}\n  %b{i} = arith.constant {dense(b)}\n"
    body = "".join(
        _dense_layer(i, "x" if i == 0 else f"h{i - 1}", sizes[i], sizes[i + 1], batch, i < layers - 1)
        for i in range(layers)
    )
    out = f"tensor<{batch}x{sizes[-1]}xf32>"
    where = "inputs" if weights_as_inputs else "seeded non-splat constants"
    mlir = (
        f"// {name}: {' -> '.join(map(str, sizes))} dense+bias+relu layers, batch {batch}, weights as {where}.\n"
        f"// A square layer after another layer: the inline allocation bug's trigger.\n"
        f"func.func @{name}({', '.join(args)}) -> {out} {{\n{consts}  %zero = arith.constant 0.0 : f32\n{body}"
        f"  return %h{layers - 1} : {out}\n}}\n"
    )

    def ref(x):
        h = x.astype(np.float64)
        for i in range(layers):
            h = h @ params[2 * i] + params[2 * i + 1]
            if i < layers - 1:
                h = np.maximum(h, 0)
        return h.astype(np.float32)

    calls = []
    for _ in range(2):
        x = _f32(rng, batch, sizes[0])
        calls.append(Call(name, [x] + (params if weights_as_inputs else []), [ref(x)]))
    return mlir, calls, 1e-4, 1e-4


def _mlp_128():
    return _wide_mlp((64, 128, 128), 4, 20, weights_as_inputs=False)


def _mlp_512():
    return _wide_mlp((128, 512, 512), 4, 21, weights_as_inputs=True)


def _argmax_axis(n=2, c=1000, w=4):
    mlir = f"""\
// argmax_axis: ONNX ArgMax(axis=1, keepdims=1) on a {n}x{c}x{w} tensor, as
// iree-import-onnx + iree-compile --compile-to=input lower it
// (iree_linalg_ext.arg_compare, then extsi to i64 and expand_shape).
func.func @argmax_axis(%x: tensor<{n}x{c}x{w}xf32>) -> tensor<{n}x1x{w}xi64> {{
  %ninf = arith.constant {NEG_INF} : f32
  %c0_i32 = arith.constant 0 : i32
  %0 = tensor.empty() : tensor<{n}x{w}xf32>
  %1 = tensor.empty() : tensor<{n}x{w}xi32>
  %2 = linalg.fill ins(%ninf : f32) outs(%0 : tensor<{n}x{w}xf32>) -> tensor<{n}x{w}xf32>
  %3 = linalg.fill ins(%c0_i32 : i32) outs(%1 : tensor<{n}x{w}xi32>) -> tensor<{n}x{w}xi32>
  %4:2 = iree_linalg_ext.arg_compare dimension(1) ins(%x : tensor<{n}x{c}x{w}xf32>) outs(%2, %3 : tensor<{n}x{w}xf32>, tensor<{n}x{w}xi32>) {{
  ^bb0(%a: f32, %b: f32):
    %gt = arith.cmpf ogt, %a, %b : f32
    iree_linalg_ext.yield %gt : i1
  }} -> tensor<{n}x{w}xf32>, tensor<{n}x{w}xi32>
  %5 = tensor.empty() : tensor<{n}x{w}xi64>
  %6 = linalg.generic {{indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]}}
      ins(%4#1 : tensor<{n}x{w}xi32>) outs(%5 : tensor<{n}x{w}xi64>) {{
  ^bb0(%in: i32, %out: i64):
    %e = arith.extsi %in : i32 to i64
    linalg.yield %e : i64
  }} -> tensor<{n}x{w}xi64>
  %r = tensor.expand_shape %6 [[0], [1, 2]] output_shape [{n}, 1, {w}] : tensor<{n}x{w}xi64> into tensor<{n}x1x{w}xi64>
  return %r : tensor<{n}x1x{w}xi64>
}}
"""
    rng = np.random.default_rng(22)
    calls = []
    for _ in range(2):
        x = _f32(rng, n, c, w)
        calls.append(Call("argmax_axis", [x], [x.argmax(axis=1)[:, None, :].astype(np.int64)]))
    return mlir, calls, 0.0, 0.0


# ONNX BatchNormalization(epsilon=1e-5, momentum=0.9, training_mode=1) as
# iree-import-onnx + `iree-compile --compile-to=input` (IREE 3.13) lower it
# for a 2x3x4x5 input, with the shapes made parameters.
_BATCHNORM_TRAIN = """\
func.func @batchnorm_train(%arg0: tensor<{x4}xf32>, %arg1: tensor<{c}xf32>, %arg2: tensor<{c}xf32>, %arg3: tensor<{c}xf32>, %arg4: tensor<{c}xf32>) -> (tensor<{x4}xf32>, tensor<{c}xf32>, tensor<{c}xf32>) {{
  %cst = arith.constant 0.000000e+00 : f32
  %cst_0 = arith.constant 0.000000e+00 : f32
  %cst_1 = arith.constant {count:.6e} : f32
  %cst_2 = arith.constant {count:.6e} : f32
  %cst_3 = arith.constant 0.899999976 : f32
  %cst_4 = arith.constant 9.99999974E-6 : f32
  %0 = tensor.empty() : tensor<{c}xf32>
  %1 = linalg.fill ins(%cst : f32) outs(%0 : tensor<{c}xf32>) -> tensor<{c}xf32>
  %2 = linalg.generic {{indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d1)>], iterator_types = ["reduction", "parallel", "reduction", "reduction"]}} ins(%arg0 : tensor<{x4}xf32>) outs(%1 : tensor<{c}xf32>) {{
  ^bb0(%in: f32, %out: f32):
    %33 = arith.addf %in, %out : f32
    linalg.yield %33 : f32
  }} -> tensor<{c}xf32>
  %3 = linalg.generic {{indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]}} ins(%2 : tensor<{c}xf32>) outs(%0 : tensor<{c}xf32>) {{
  ^bb0(%in: f32, %out: f32):
    %33 = arith.divf %in, %cst_1 : f32
    linalg.yield %33 : f32
  }} -> tensor<{c}xf32>
  %4 = tensor.empty() : tensor<{x4}xf32>
  %5 = linalg.generic {{indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}} ins(%arg0 : tensor<{x4}xf32>) outs(%4 : tensor<{x4}xf32>) {{
  ^bb0(%in: f32, %out: f32):
    linalg.yield %in : f32
  }} -> tensor<{x4}xf32>
  %6 = tensor.empty() : tensor<1x{c}x1x1xf32>
  %7 = linalg.fill ins(%cst_0 : f32) outs(%6 : tensor<1x{c}x1x1xf32>) -> tensor<1x{c}x1x1xf32>
  %8 = linalg.generic {{indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (0, d1, 0, 0)>], iterator_types = ["reduction", "parallel", "reduction", "reduction"]}} ins(%5 : tensor<{x4}xf32>) outs(%7 : tensor<1x{c}x1x1xf32>) {{
  ^bb0(%in: f32, %out: f32):
    %33 = arith.addf %in, %out : f32
    linalg.yield %33 : f32
  }} -> tensor<1x{c}x1x1xf32>
  %9 = linalg.generic {{indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}} ins(%8 : tensor<1x{c}x1x1xf32>) outs(%6 : tensor<1x{c}x1x1xf32>) {{
  ^bb0(%in: f32, %out: f32):
    %33 = arith.divf %in, %cst_2 : f32
    linalg.yield %33 : f32
  }} -> tensor<1x{c}x1x1xf32>
  %10 = linalg.generic {{indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (0, d1, 0, 0)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}} ins(%5, %9 : tensor<{x4}xf32>, tensor<1x{c}x1x1xf32>) outs(%4 : tensor<{x4}xf32>) {{
  ^bb0(%in: f32, %in_8: f32, %out: f32):
    %33 = arith.subf %in, %in_8 : f32
    linalg.yield %33 : f32
  }} -> tensor<{x4}xf32>
  %11 = linalg.generic {{indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}} ins(%10, %10 : tensor<{x4}xf32>, tensor<{x4}xf32>) outs(%4 : tensor<{x4}xf32>) {{
  ^bb0(%in: f32, %in_8: f32, %out: f32):
    %33 = arith.mulf %in, %in_8 : f32
    linalg.yield %33 : f32
  }} -> tensor<{x4}xf32>
  %12 = tensor.empty() : tensor<{c}xf32>
  %13 = linalg.fill ins(%cst_0 : f32) outs(%12 : tensor<{c}xf32>) -> tensor<{c}xf32>
  %14 = linalg.generic {{indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d1)>], iterator_types = ["reduction", "parallel", "reduction", "reduction"]}} ins(%11 : tensor<{x4}xf32>) outs(%13 : tensor<{c}xf32>) {{
  ^bb0(%in: f32, %out: f32):
    %33 = arith.addf %in, %out : f32
    linalg.yield %33 : f32
  }} -> tensor<{c}xf32>
  %15 = linalg.generic {{indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]}} ins(%14 : tensor<{c}xf32>) outs(%12 : tensor<{c}xf32>) {{
  ^bb0(%in: f32, %out: f32):
    %33 = arith.divf %in, %cst_2 : f32
    linalg.yield %33 : f32
  }} -> tensor<{c}xf32>
  %16 = linalg.generic {{indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]}} ins(%15 : tensor<{c}xf32>) outs(%0 : tensor<{c}xf32>) {{
  ^bb0(%in: f32, %out: f32):
    linalg.yield %in : f32
  }} -> tensor<{c}xf32>
  %17 = linalg.generic {{indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]}} ins(%arg3 : tensor<{c}xf32>) outs(%0 : tensor<{c}xf32>) {{
  ^bb0(%in: f32, %out: f32):
    %33 = arith.mulf %in, %cst_3 : f32
    linalg.yield %33 : f32
  }} -> tensor<{c}xf32>
  %18 = linalg.generic {{indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]}} ins(%3 : tensor<{c}xf32>) outs(%0 : tensor<{c}xf32>) {{
  ^bb0(%in: f32, %out: f32):
    %33 = arith.mulf %in, %cst_3 : f32
    linalg.yield %33 : f32
  }} -> tensor<{c}xf32>
  %19 = linalg.generic {{indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]}} ins(%17, %18 : tensor<{c}xf32>, tensor<{c}xf32>) outs(%0 : tensor<{c}xf32>) {{
  ^bb0(%in: f32, %in_8: f32, %out: f32):
    %33 = arith.subf %in, %in_8 : f32
    linalg.yield %33 : f32
  }} -> tensor<{c}xf32>
  %20 = linalg.generic {{indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]}} ins(%19, %3 : tensor<{c}xf32>, tensor<{c}xf32>) outs(%0 : tensor<{c}xf32>) {{
  ^bb0(%in: f32, %in_8: f32, %out: f32):
    %33 = arith.addf %in, %in_8 : f32
    linalg.yield %33 : f32
  }} -> tensor<{c}xf32>
  %21 = linalg.generic {{indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]}} ins(%arg4 : tensor<{c}xf32>) outs(%0 : tensor<{c}xf32>) {{
  ^bb0(%in: f32, %out: f32):
    %33 = arith.mulf %in, %cst_3 : f32
    linalg.yield %33 : f32
  }} -> tensor<{c}xf32>
  %22 = linalg.generic {{indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]}} ins(%16 : tensor<{c}xf32>) outs(%0 : tensor<{c}xf32>) {{
  ^bb0(%in: f32, %out: f32):
    %33 = arith.mulf %in, %cst_3 : f32
    linalg.yield %33 : f32
  }} -> tensor<{c}xf32>
  %23 = linalg.generic {{indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]}} ins(%21, %22 : tensor<{c}xf32>, tensor<{c}xf32>) outs(%0 : tensor<{c}xf32>) {{
  ^bb0(%in: f32, %in_8: f32, %out: f32):
    %33 = arith.subf %in, %in_8 : f32
    linalg.yield %33 : f32
  }} -> tensor<{c}xf32>
  %24 = linalg.generic {{indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]}} ins(%23, %16 : tensor<{c}xf32>, tensor<{c}xf32>) outs(%0 : tensor<{c}xf32>) {{
  ^bb0(%in: f32, %in_8: f32, %out: f32):
    %33 = arith.addf %in, %in_8 : f32
    linalg.yield %33 : f32
  }} -> tensor<{c}xf32>
  %expanded = tensor.expand_shape %3 [[0, 1, 2, 3]] output_shape [1, {c}, 1, 1] : tensor<{c}xf32> into tensor<1x{c}x1x1xf32>
  %expanded_5 = tensor.expand_shape %16 [[0, 1, 2, 3]] output_shape [1, {c}, 1, 1] : tensor<{c}xf32> into tensor<1x{c}x1x1xf32>
  %25 = tensor.empty() : tensor<1x{c}x1x1xf32>
  %26 = linalg.generic {{indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}} ins(%expanded_5 : tensor<1x{c}x1x1xf32>) outs(%25 : tensor<1x{c}x1x1xf32>) {{
  ^bb0(%in: f32, %out: f32):
    %33 = arith.addf %in, %cst_4 : f32
    linalg.yield %33 : f32
  }} -> tensor<1x{c}x1x1xf32>
  %27 = linalg.generic {{indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}} ins(%26 : tensor<1x{c}x1x1xf32>) outs(%25 : tensor<1x{c}x1x1xf32>) {{
  ^bb0(%in: f32, %out: f32):
    %33 = math.rsqrt %in : f32
    linalg.yield %33 : f32
  }} -> tensor<1x{c}x1x1xf32>
  %28 = tensor.empty() : tensor<{x4}xf32>
  %29 = linalg.generic {{indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (0, d1, 0, 0)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}} ins(%arg0, %expanded : tensor<{x4}xf32>, tensor<1x{c}x1x1xf32>) outs(%28 : tensor<{x4}xf32>) {{
  ^bb0(%in: f32, %in_8: f32, %out: f32):
    %33 = arith.subf %in, %in_8 : f32
    linalg.yield %33 : f32
  }} -> tensor<{x4}xf32>
  %30 = linalg.generic {{indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (0, d1, 0, 0)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}} ins(%29, %27 : tensor<{x4}xf32>, tensor<1x{c}x1x1xf32>) outs(%28 : tensor<{x4}xf32>) {{
  ^bb0(%in: f32, %in_8: f32, %out: f32):
    %33 = arith.mulf %in, %in_8 : f32
    linalg.yield %33 : f32
  }} -> tensor<{x4}xf32>
  %expanded_6 = tensor.expand_shape %arg1 [[0, 1, 2, 3]] output_shape [1, {c}, 1, 1] : tensor<{c}xf32> into tensor<1x{c}x1x1xf32>
  %31 = linalg.generic {{indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (0, d1, 0, 0)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}} ins(%30, %expanded_6 : tensor<{x4}xf32>, tensor<1x{c}x1x1xf32>) outs(%28 : tensor<{x4}xf32>) {{
  ^bb0(%in: f32, %in_8: f32, %out: f32):
    %33 = arith.mulf %in, %in_8 : f32
    linalg.yield %33 : f32
  }} -> tensor<{x4}xf32>
  %expanded_7 = tensor.expand_shape %arg2 [[0, 1, 2, 3]] output_shape [1, {c}, 1, 1] : tensor<{c}xf32> into tensor<1x{c}x1x1xf32>
  %32 = linalg.generic {{indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (0, d1, 0, 0)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}} ins(%31, %expanded_7 : tensor<{x4}xf32>, tensor<1x{c}x1x1xf32>) outs(%28 : tensor<{x4}xf32>) {{
  ^bb0(%in: f32, %in_8: f32, %out: f32):
    %33 = arith.addf %in, %in_8 : f32
    linalg.yield %33 : f32
  }} -> tensor<{x4}xf32>
  return %32, %20, %24 : tensor<{x4}xf32>, tensor<{c}xf32>, tensor<{c}xf32>
}}
"""


def _batchnorm_train(n=4, c=16, h=8, w=8):
    eps, momentum = np.float32(1e-5), np.float32(0.9)
    count = float(n * h * w)
    mlir = (
        f"// batchnorm_train: ONNX BatchNormalization in training mode on NCHW {n}x{c}x{h}x{w}, lowered\n"
        f"// by iree-import-onnx: outputs y (batch statistics), running mean and running variance.\n"
        + _BATCHNORM_TRAIN.format(x4=f"{n}x{c}x{h}x{w}", c=c, count=count)
    )

    def ref(x, scale, bias, mean_in, var_in):
        x64 = x.astype(np.float64)
        mean = x64.mean(axis=(0, 2, 3))
        var = x64.var(axis=(0, 2, 3))
        bc = (None, slice(None), None, None)
        y = (x64 - mean[bc]) / np.sqrt(var[bc] + eps) * scale[bc] + bias[bc]
        rm = mean_in * momentum + mean * (1 - momentum)
        rv = var_in * momentum + var * (1 - momentum)
        return [y.astype(np.float32), rm.astype(np.float32), rv.astype(np.float32)]

    rng = np.random.default_rng(23)
    calls = []
    for _ in range(2):
        x = (_f32(rng, n, c, h, w) * 2 + 0.5).astype(np.float32)
        args = [
            x,
            _f32(rng, c),
            _f32(rng, c, scale=0.2),
            _f32(rng, c, scale=0.5),
            np.abs(_f32(rng, c)).astype(np.float32),
        ]
        calls.append(Call("batchnorm_train", args, ref(*args)))
    return mlir, calls, 1e-4, 1e-4


def _recurrent_loop():
    b, i, h, t = 4, 16, 32, 16
    g = 4 * h
    rng = np.random.default_rng(24)
    wx = _f32(rng, i, g, scale=1.0 / np.sqrt(i))
    wh = _f32(rng, h, g, scale=1.0 / np.sqrt(h))
    bias = _f32(rng, g, scale=0.1)
    hh = f"tensor<{b}x{h}xf32>"
    hv = f"tensor<{h}xf32>"
    gg = f"tensor<{b}x{g}xf32>"

    def gate(name, k):
        return (
            f"    %s_{name} = tensor.extract_slice %gs[0, {k * h}] [{b}, {h}] [1, 1] : {gg} to {hh}\n"
            f"    %b_{name} = tensor.extract_slice %bias[{k * h}] [{h}] [1] : tensor<{g}xf32> to {hv}\n"
        )

    def sigmoid(out, x):
        return (
            f"      %{out}_n = arith.negf %{x} : f32\n      %{out}_e = math.exp %{out}_n : f32\n"
            f"      %{out}_d = arith.addf %one, %{out}_e : f32\n      %{out} = arith.divf %one, %{out}_d : f32\n"
        )

    mlir = f"""\
// recurrent_loop: an LSTM cell (input {i}, hidden {h}, batch {b}) run over the
// time steps of a {t}-step sequence; the trip count is the sum of a 0/1 mask,
// computed on the device and read back each iteration (scf.while over a 0-d
// tensor counter).  Returns the final h and c.
func.func @recurrent_loop(%xs: tensor<{t}x{b}x{i}xf32>, %mask: tensor<{t}xi32>) -> ({hh}, {hh}) {{
  %wx = arith.constant {dense(wx)}
  %wh = arith.constant {dense(wh)}
  %bias = arith.constant {dense(bias)}
  %zero = arith.constant 0.0 : f32
  %one = arith.constant 1.0 : f32
  %t0 = arith.constant dense<0> : tensor<i32>
  %inc = arith.constant dense<1> : tensor<i32>
  %steps = linalg.reduce ins(%mask : tensor<{t}xi32>) outs(%t0 : tensor<i32>) dimensions = [0]
    (%in: i32, %acc: i32) {{
      %s = arith.addi %in, %acc : i32
      linalg.yield %s : i32
    }}
  %eh = tensor.empty() : {hh}
  %h0 = linalg.fill ins(%zero : f32) outs(%eh : {hh}) -> {hh}
  %eg = tensor.empty() : {gg}
  %g0 = linalg.fill ins(%zero : f32) outs(%eg : {gg}) -> {gg}
  %r:3 = scf.while (%tt = %t0, %h = %h0, %c = %h0) : (tensor<i32>, {hh}, {hh}) -> (tensor<i32>, {hh}, {hh}) {{
    %lt = arith.cmpi slt, %tt, %steps : tensor<i32>
    %go = tensor.extract %lt[] : tensor<i1>
    scf.condition(%go) %tt, %h, %c : tensor<i32>, {hh}, {hh}
  }} do {{
  ^bb0(%tt: tensor<i32>, %h: {hh}, %c: {hh}):
    %t32 = tensor.extract %tt[] : tensor<i32>
    %ti = arith.index_cast %t32 : i32 to index
    %x3 = tensor.extract_slice %xs[%ti, 0, 0] [1, {b}, {i}] [1, 1, 1] : tensor<{t}x{b}x{i}xf32> to tensor<1x{b}x{i}xf32>
    %x = tensor.collapse_shape %x3 [[0, 1], [2]] : tensor<1x{b}x{i}xf32> into tensor<{b}x{i}xf32>
    %gx = linalg.matmul ins(%x, %wx : tensor<{b}x{i}xf32>, tensor<{i}x{g}xf32>) outs(%g0 : {gg}) -> {gg}
    %gs = linalg.matmul ins(%h, %wh : {hh}, tensor<{h}x{g}xf32>) outs(%gx : {gg}) -> {gg}
{gate("i", 0)}{gate("f", 1)}{gate("g", 2)}{gate("o", 3)}\
    %hc:2 = linalg.generic {{indexing_maps = [{", ".join(["affine_map<(i, j) -> (i, j)>"] * 4 + ["affine_map<(i, j) -> (j)>"] * 4 + ["affine_map<(i, j) -> (i, j)>"] * 3)}],
                            iterator_types = ["parallel", "parallel"]}}
        ins(%s_i, %s_f, %s_g, %s_o, %b_i, %b_f, %b_g, %b_o, %c : {hh}, {hh}, {hh}, {hh}, {hv}, {hv}, {hv}, {hv}, {hh})
        outs(%eh, %eh : {hh}, {hh}) {{
    ^bb0(%gi: f32, %gf: f32, %gc: f32, %go2: f32, %bi: f32, %bf: f32, %bc: f32, %bo: f32, %cp: f32, %o0: f32, %o1: f32):
      %ai = arith.addf %gi, %bi : f32
      %af = arith.addf %gf, %bf : f32
      %ac = arith.addf %gc, %bc : f32
      %ao = arith.addf %go2, %bo : f32
{sigmoid("si", "ai")}{sigmoid("sf", "af")}{sigmoid("so", "ao")}\
      %tg = math.tanh %ac : f32
      %fc = arith.mulf %sf, %cp : f32
      %ig = arith.mulf %si, %tg : f32
      %cn = arith.addf %fc, %ig : f32
      %tc = math.tanh %cn : f32
      %hn = arith.mulf %so, %tc : f32
      linalg.yield %hn, %cn : f32, f32
    }} -> ({hh}, {hh})
    %tn = arith.addi %tt, %inc : tensor<i32>
    scf.yield %tn, %hc#0, %hc#1 : tensor<i32>, {hh}, {hh}
  }}
  return %r#1, %r#2 : {hh}, {hh}
}}
"""

    def ref(xs, mask):
        def sig(v):
            return 1 / (1 + np.exp(-v))

        hs, cs = np.zeros((b, h)), np.zeros((b, h))
        for step in range(int(mask.sum())):
            gates = xs[step].astype(np.float64) @ wx + hs @ wh + bias
            gi, gf, gc, go = (gates[:, k * h : (k + 1) * h] for k in range(4))
            cs = sig(gf) * cs + sig(gi) * np.tanh(gc)
            hs = sig(go) * np.tanh(cs)
        return [hs.astype(np.float32), cs.astype(np.float32)]

    calls = []
    for steps in (11, t, 0):
        xs = _f32(rng, t, b, i)
        mask = (np.arange(t) < steps).astype(np.int32)
        calls.append(Call("recurrent_loop", [xs, mask], ref(xs, mask)))
    return mlir, calls, 1e-4, 1e-4


def _unstructured_loop():
    mlir = """\
// unstructured_loop: a cf.br/cf.cond_br loop (no scf) over 0-d tensors, with
// the branch condition computed on the device and read back each iteration:
// doubles v until v >= limit; returns the number of doublings (i32) and v.
func.func @unstructured_loop(%start: tensor<f32>, %limit: tensor<f32>) -> (tensor<i32>, tensor<f32>) {
  %zero = arith.constant dense<0> : tensor<i32>
  %one = arith.constant dense<1> : tensor<i32>
  %two = arith.constant dense<2.0> : tensor<f32>
  cf.br ^loop(%start, %zero : tensor<f32>, tensor<i32>)
^loop(%v: tensor<f32>, %n: tensor<i32>):
  %lt = arith.cmpf olt, %v, %limit : tensor<f32>
  %go = tensor.extract %lt[] : tensor<i1>
  cf.cond_br %go, ^body, ^exit
^body:
  %v2 = arith.mulf %v, %two : tensor<f32>
  %n2 = arith.addi %n, %one : tensor<i32>
  cf.br ^loop(%v2, %n2 : tensor<f32>, tensor<i32>)
^exit:
  return %n, %v : tensor<i32>, tensor<f32>
}
"""

    def ref(start, limit):
        v, n = np.float32(start), 0
        while v < limit:
            v = np.float32(v * np.float32(2))
            n += 1
        return [np.asarray(n, dtype=np.int32), np.asarray(v, dtype=np.float32)]

    calls = []
    for start, limit in ((3e-7, 700.0), (1.5, 1.0), (0.75, 3e4)):
        s, lim = np.asarray(start, dtype=np.float32), np.asarray(limit, dtype=np.float32)
        calls.append(Call("unstructured_loop", [s, lim], ref(s, lim)))
    return mlir, calls, 0.0, 0.0


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
    "mlp_128": _mlp_128,
    "mlp_512": _mlp_512,
    "argmax_axis": _argmax_axis,
    "batchnorm_train": _batchnorm_train,
    "recurrent_loop": _recurrent_loop,
    "unstructured_loop": _unstructured_loop,
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
