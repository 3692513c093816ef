// softmax: numerically stable softmax along the last dim of a 4x10 tensor
// (max reduce, subtract, exp, sum reduce, divide).
func.func @softmax(%x: tensor<4x10xf32>) -> tensor<4x10xf32> {
  %ninf = arith.constant 0xFF800000 : f32
  %zero = arith.constant 0.0 : f32
  %e1 = tensor.empty() : tensor<4xf32>
  %fmax = linalg.fill ins(%ninf : f32) outs(%e1 : tensor<4xf32>) -> tensor<4xf32>
  %mx = linalg.reduce ins(%x : tensor<4x10xf32>) outs(%fmax : tensor<4xf32>) dimensions = [1]
      (%in: f32, %acc: f32) {
        %red = arith.maximumf %in, %acc : f32
        linalg.yield %red : f32
      }
  %e2 = tensor.empty() : tensor<4x10xf32>
  %ex = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i)>, affine_map<(i, j) -> (i, j)>],
                         iterator_types = ["parallel", "parallel"]}
      ins(%x, %mx : tensor<4x10xf32>, tensor<4xf32>) outs(%e2 : tensor<4x10xf32>) {
    ^bb0(%v: f32, %m: f32, %o: f32):
      %d = arith.subf %v, %m : f32
      %ed = math.exp %d : f32
      linalg.yield %ed : f32
  } -> tensor<4x10xf32>
  %fsum = linalg.fill ins(%zero : f32) outs(%e1 : tensor<4xf32>) -> tensor<4xf32>
  %sm = linalg.reduce ins(%ex : tensor<4x10xf32>) outs(%fsum : tensor<4xf32>) dimensions = [1]
      (%in: f32, %acc: f32) {
        %red = arith.addf %in, %acc : f32
        linalg.yield %red : f32
      }
  %y = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i)>, affine_map<(i, j) -> (i, j)>],
                        iterator_types = ["parallel", "parallel"]}
      ins(%ex, %sm : tensor<4x10xf32>, tensor<4xf32>) outs(%e2 : tensor<4x10xf32>) {
    ^bb0(%v: f32, %s: f32, %o: f32):
      %q = arith.divf %v, %s : f32
      linalg.yield %q : f32
  } -> tensor<4x10xf32>
  return %y : tensor<4x10xf32>
}
