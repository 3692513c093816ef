"""Writes mlp.mlir: a 2-layer perceptron (8 -> 16 -> 4, relu) whose weights
are seeded random numbers, so they are real non-splat constants.

    python make_mlp.py            # rewrites mlp.mlir next to this file
The same function gives the tests their numpy reference.  Other sizes (and
hex-encoded weights, which MLIR parses much faster than decimal text) are for
benchmarks/weights.py, which makes an MLP with megabytes of weights.
"""

from pathlib import Path

import numpy as np

SEED = 1234
SIZES = (8, 16, 4)
BATCH = 2


def weights(sizes=SIZES):
    rng = np.random.default_rng(SEED)
    w1 = rng.standard_normal((sizes[0], sizes[1])).astype(np.float32) * 0.5
    b1 = rng.standard_normal((sizes[1],)).astype(np.float32) * 0.1
    w2 = rng.standard_normal((sizes[1], sizes[2])).astype(np.float32) * 0.5
    b2 = rng.standard_normal((sizes[2],)).astype(np.float32) * 0.1
    return w1, b1, w2, b2


def reference(x, sizes=SIZES):
    w1, b1, w2, b2 = weights(sizes)
    h = np.maximum(x @ w1 + b1, 0.0)
    return h @ w2 + b2


def _dense(a) -> str:
    if a.ndim == 1:
        return "[" + ", ".join(f"{v:.9e}" for v in a) + "]"
    return "[" + ", ".join(_dense(r) for r in a) + "]"


def _hex(a) -> str:
    return '"0x' + np.ascontiguousarray(a, "<f4").tobytes().hex().upper() + '"'


def mlir(sizes=SIZES, batch=BATCH, hex_weights=False) -> str:
    w1, b1, w2, b2 = weights(sizes)
    n, h, o, b = sizes[0], sizes[1], sizes[2], batch
    text = _hex if hex_weights else _dense
    return f"""// A 2-layer MLP with seeded random weights (samples/mlp/make_mlp.py, seed {SEED}).
func.func @predict(%x: tensor<{b}x{n}xf32>) -> tensor<{b}x{o}xf32> {{
  %w1 = arith.constant dense<{text(w1)}> : tensor<{n}x{h}xf32>
  %b1 = arith.constant dense<{text(b1)}> : tensor<{h}xf32>
  %w2 = arith.constant dense<{text(w2)}> : tensor<{h}x{o}xf32>
  %b2 = arith.constant dense<{text(b2)}> : tensor<{o}xf32>
  %zero = arith.constant 0.0 : f32
  %e1 = tensor.empty() : tensor<{b}x{h}xf32>
  %f1 = linalg.fill ins(%zero : f32) outs(%e1 : tensor<{b}x{h}xf32>) -> tensor<{b}x{h}xf32>
  %m1 = linalg.matmul ins(%x, %w1 : tensor<{b}x{n}xf32>, tensor<{n}x{h}xf32>) outs(%f1 : tensor<{b}x{h}xf32>) -> tensor<{b}x{h}xf32>
  %a1 = linalg.generic {{indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (j)>, affine_map<(i, j) -> (i, j)>],
                         iterator_types = ["parallel", "parallel"]}}
      ins(%m1, %b1 : tensor<{b}x{h}xf32>, tensor<{h}xf32>) outs(%e1 : tensor<{b}x{h}xf32>) {{
    ^bb0(%v: f32, %bias: f32, %out: f32):
      %s = arith.addf %v, %bias : f32
      %r = arith.maximumf %s, %zero : f32
      linalg.yield %r : f32
  }} -> tensor<{b}x{h}xf32>
  %e2 = tensor.empty() : tensor<{b}x{o}xf32>
  %f2 = linalg.fill ins(%zero : f32) outs(%e2 : tensor<{b}x{o}xf32>) -> tensor<{b}x{o}xf32>
  %m2 = linalg.matmul ins(%a1, %w2 : tensor<{b}x{h}xf32>, tensor<{h}x{o}xf32>) outs(%f2 : tensor<{b}x{o}xf32>) -> tensor<{b}x{o}xf32>
  %a2 = linalg.generic {{indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (j)>, affine_map<(i, j) -> (i, j)>],
                         iterator_types = ["parallel", "parallel"]}}
      ins(%m2, %b2 : tensor<{b}x{o}xf32>, tensor<{o}xf32>) outs(%e2 : tensor<{b}x{o}xf32>) {{
    ^bb0(%v: f32, %bias: f32, %out: f32):
      %s = arith.addf %v, %bias : f32
      linalg.yield %s : f32
  }} -> tensor<{b}x{o}xf32>
  return %a2 : tensor<{b}x{o}xf32>
}}
"""


if __name__ == "__main__":
    (Path(__file__).parent / "mlp.mlir").write_text(mlir())
