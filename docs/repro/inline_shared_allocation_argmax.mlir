// IREE inline allocation bug: ONNX ArgMax(axis=1, keepdims=1) on 2x3x4 as iree-import-onnx
// lowers it.  The i32 indices (32 bytes, allocated as 64) and the i64 result (64 bytes)
// share one buffer.  See docs/known-iree-issues.md.
func.func @main(%arg0: tensor<2x3x4xf32>) -> tensor<2x1x4xi64> {
  %cst = arith.constant 0xFF800000 : f32
  %c0_i32 = arith.constant 0 : i32
  %0 = tensor.empty() : tensor<2x4xf32>
  %1 = tensor.empty() : tensor<2x4xi32>
  %2 = linalg.fill ins(%cst : f32) outs(%0 : tensor<2x4xf32>) -> tensor<2x4xf32>
  %3 = linalg.fill ins(%c0_i32 : i32) outs(%1 : tensor<2x4xi32>) -> tensor<2x4xi32>
  %4:2 = iree_linalg_ext.arg_compare dimension(1) ins(%arg0 : tensor<2x3x4xf32>) outs(%2, %3 : tensor<2x4xf32>, tensor<2x4xi32>) {
  ^bb0(%arg1: f32, %arg2: f32):
    %7 = arith.cmpf ogt, %arg1, %arg2 : f32
    iree_linalg_ext.yield %7 : i1
  } -> tensor<2x4xf32>, tensor<2x4xi32>
  %5 = tensor.empty() : tensor<2x4xi64>
  %6 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%4#1 : tensor<2x4xi32>) outs(%5 : tensor<2x4xi64>) {
  ^bb0(%in: i32, %out: i64):
    %7 = arith.extsi %in : i32 to i64
    linalg.yield %7 : i64
  } -> tensor<2x4xi64>
  %expanded = tensor.expand_shape %6 [[0], [1, 2]] output_shape [2, 1, 4] : tensor<2x4xi64> into tensor<2x1x4xi64>
  return %expanded : tensor<2x1x4xi64>
}
