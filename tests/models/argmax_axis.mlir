// argmax_axis: ONNX ArgMax(axis=1, keepdims=1) on a 2x1000x4 tensor, as
// iree-import-onnx + iree-compile --compile-to=input lower it
// (iree_linalg_ext.arg_compare, then extsi to i64 and expand_shape).
func.func @argmax_axis(%x: tensor<2x1000x4xf32>) -> tensor<2x1x4xi64> {
  %ninf = arith.constant 0xFF800000 : f32
  %c0_i32 = arith.constant 0 : i32
  %0 = tensor.empty() : tensor<2x4xf32>
  %1 = tensor.empty() : tensor<2x4xi32>
  %2 = linalg.fill ins(%ninf : f32) outs(%0 : tensor<2x4xf32>) -> tensor<2x4xf32>
  %3 = linalg.fill ins(%c0_i32 : i32) outs(%1 : tensor<2x4xi32>) -> tensor<2x4xi32>
  %4:2 = iree_linalg_ext.arg_compare dimension(1) ins(%x : tensor<2x1000x4xf32>) outs(%2, %3 : tensor<2x4xf32>, tensor<2x4xi32>) {
  ^bb0(%a: f32, %b: f32):
    %gt = arith.cmpf ogt, %a, %b : f32
    iree_linalg_ext.yield %gt : i1
  } -> tensor<2x4xf32>, tensor<2x4xi32>
  %5 = tensor.empty() : tensor<2x4xi64>
  %6 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]}
      ins(%4#1 : tensor<2x4xi32>) outs(%5 : tensor<2x4xi64>) {
  ^bb0(%in: i32, %out: i64):
    %e = arith.extsi %in : i32 to i64
    linalg.yield %e : i64
  } -> tensor<2x4xi64>
  %r = tensor.expand_shape %6 [[0], [1, 2]] output_shape [2, 1, 4] : tensor<2x4xi64> into tensor<2x1x4xi64>
  return %r : tensor<2x1x4xi64>
}
