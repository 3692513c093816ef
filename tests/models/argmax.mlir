// argmax: a two-result linalg.generic reduction (value, i64 index via
// linalg.index) along the last dim of 4x10; returns max values and argmax.
func.func @argmax(%x: tensor<4x10xf32>) -> (tensor<4xf32>, tensor<4xi64>) {
  %ninf = arith.constant 0xFF800000 : f32
  %z = arith.constant 0 : i64
  %ev = tensor.empty() : tensor<4xf32>
  %ei = tensor.empty() : tensor<4xi64>
  %fv = linalg.fill ins(%ninf : f32) outs(%ev : tensor<4xf32>) -> tensor<4xf32>
  %fi = linalg.fill ins(%z : i64) outs(%ei : tensor<4xi64>) -> tensor<4xi64>
  %r:2 = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i)>, affine_map<(i, j) -> (i)>],
                          iterator_types = ["parallel", "reduction"]}
      ins(%x : tensor<4x10xf32>) outs(%fv, %fi : tensor<4xf32>, tensor<4xi64>) {
    ^bb0(%in: f32, %acc: f32, %idx: i64):
      %j = linalg.index 1 : index
      %ji = arith.index_cast %j : index to i64
      %gt = arith.cmpf ogt, %in, %acc : f32
      %nv = arith.select %gt, %in, %acc : f32
      %ni = arith.select %gt, %ji, %idx : i64
      linalg.yield %nv, %ni : f32, i64
  } -> (tensor<4xf32>, tensor<4xi64>)
  return %r#0, %r#1 : tensor<4xf32>, tensor<4xi64>
}
