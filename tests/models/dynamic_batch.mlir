// dynamic_batch: tensor<?x8xf32> input with a dynamic batch dim; matmul with a
// constant 8x4 weight + bias + relu, result tensor<?x4xf32>.
func.func @dense(%x: tensor<?x8xf32>) -> tensor<?x4xf32> {
  %w = arith.constant dense<[[9.133782983e-01, -1.539165974e+00, 4.790319800e-01, 3.481861204e-02], [6.591250300e-01, 1.928146183e-01, 9.136292934e-01, 1.587187871e-02], [-2.581147254e-01, 2.902424634e-01, 2.160534263e-01, -1.784196794e-01], [-1.236519143e-01, 3.597203493e-01, 3.521580100e-01, -2.469671220e-01], [-1.838568598e-01, -9.033951759e-01, 8.396037221e-01, -1.121454388e-01], [6.686387062e-01, 2.087327987e-01, 9.719814062e-01, 7.685549855e-01], [1.591492146e-01, 7.403817177e-01, -4.750617743e-01, 6.293090582e-01], [-7.402117848e-01, 1.716181785e-01, 5.324382186e-01, 1.118160710e-01]]> : tensor<8x4xf32>
  %b = arith.constant dense<[-3.671374917e-02, -8.055600524e-02, -3.428000212e-02, 1.051125154e-01]> : tensor<4xf32>
  %c0 = arith.constant 0 : index
  %zero = arith.constant 0.0 : f32
  %n = tensor.dim %x, %c0 : tensor<?x8xf32>
  %e = tensor.empty(%n) : tensor<?x4xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<?x4xf32>) -> tensor<?x4xf32>
  %m = linalg.matmul ins(%x, %w : tensor<?x8xf32>, tensor<8x4xf32>) outs(%f : tensor<?x4xf32>) -> tensor<?x4xf32>
  %y = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (j)>, affine_map<(i, j) -> (i, j)>],
                        iterator_types = ["parallel", "parallel"]}
      ins(%m, %b : tensor<?x4xf32>, tensor<4xf32>) outs(%e : tensor<?x4xf32>) {
    ^bb0(%v: f32, %bv: f32, %o: f32):
      %s = arith.addf %v, %bv : f32
      %z = arith.constant 0.0 : f32
      %r = arith.maximumf %s, %z : f32
      linalg.yield %r : f32
  } -> tensor<?x4xf32>
  return %y : tensor<?x4xf32>
}
