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
