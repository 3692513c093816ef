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
