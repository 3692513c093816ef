// Minimal reproducer: IREE 3.11-3.13 inline execution models lose a non-splat
// constant (512 bytes, so it is not inlined into the dispatch). See docs/known-iree-issues.md.
func.func @main(%x: tensor<2x8xf32>) -> tensor<2x16xf32> {
  %w = arith.constant dense<[[-3.0, -2.0, -1.0, 0.0, 1.0, 2.0, 3.0, -3.0, -2.0, -1.0, 0.0, 1.0, 2.0, 3.0, -3.0, -2.0], [-1.0, 0.0, 1.0, 2.0, 3.0, -3.0, -2.0, -1.0, 0.0, 1.0, 2.0, 3.0, -3.0, -2.0, -1.0, 0.0], [1.0, 2.0, 3.0, -3.0, -2.0, -1.0, 0.0, 1.0, 2.0, 3.0, -3.0, -2.0, -1.0, 0.0, 1.0, 2.0], [3.0, -3.0, -2.0, -1.0, 0.0, 1.0, 2.0, 3.0, -3.0, -2.0, -1.0, 0.0, 1.0, 2.0, 3.0, -3.0], [-2.0, -1.0, 0.0, 1.0, 2.0, 3.0, -3.0, -2.0, -1.0, 0.0, 1.0, 2.0, 3.0, -3.0, -2.0, -1.0], [0.0, 1.0, 2.0, 3.0, -3.0, -2.0, -1.0, 0.0, 1.0, 2.0, 3.0, -3.0, -2.0, -1.0, 0.0, 1.0], [2.0, 3.0, -3.0, -2.0, -1.0, 0.0, 1.0, 2.0, 3.0, -3.0, -2.0, -1.0, 0.0, 1.0, 2.0, 3.0], [-3.0, -2.0, -1.0, 0.0, 1.0, 2.0, 3.0, -3.0, -2.0, -1.0, 0.0, 1.0, 2.0, 3.0, -3.0, -2.0]]> : tensor<8x16xf32>
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<2x16xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<2x16xf32>) -> tensor<2x16xf32>
  %r = linalg.matmul ins(%x, %w : tensor<2x8xf32>, tensor<8x16xf32>) outs(%f : tensor<2x16xf32>) -> tensor<2x16xf32>
  return %r : tensor<2x16xf32>
}
