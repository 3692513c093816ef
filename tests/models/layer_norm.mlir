// layer_norm: layer normalisation over the last dim of 4x16 (mean, biased
// variance, epsilon 1e-5, rsqrt) with constant non-splat gamma and beta.
func.func @layer_norm(%x: tensor<4x16xf32>) -> tensor<4x16xf32> {
  %gamma = arith.constant dense<[1.210623145e+00, 1.355298281e+00, 4.893416166e-01, 9.724069834e-01, 1.202743888e+00, 1.270428419e+00, 1.130757689e+00, 1.299423575e+00, 1.057991505e+00, 1.110253453e+00, 1.035747528e+00, 7.852282524e-01, 8.306741714e-01, 1.075916886e+00, 8.839609623e-01, 1.254310250e+00]> : tensor<16xf32>
  %beta = arith.constant dense<[1.292386651e-01, 1.798786372e-01, -2.607383765e-03, 1.383709759e-01, -9.058431536e-02, -8.163147420e-02, 8.130305447e-03, 2.814308368e-02, -1.598988324e-01, -1.730724126e-01, 3.550783917e-02, -8.621880412e-02, 1.208357066e-01, 3.945462033e-02, 3.071846068e-02, 2.084426209e-02]> : tensor<16xf32>
  %zero = arith.constant 0.0 : f32
  %e1 = tensor.empty() : tensor<4xf32>
  %e2 = tensor.empty() : tensor<4x16xf32>
  %f1 = linalg.fill ins(%zero : f32) outs(%e1 : tensor<4xf32>) -> tensor<4xf32>
  %sum = linalg.reduce ins(%x : tensor<4x16xf32>) outs(%f1 : tensor<4xf32>) dimensions = [1]
      (%in: f32, %acc: f32) {
        %red = arith.addf %in, %acc : f32
        linalg.yield %red : f32
      }
  %cen = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i)>, affine_map<(i, j) -> (i, j)>],
                          iterator_types = ["parallel", "parallel"]}
      ins(%x, %sum : tensor<4x16xf32>, tensor<4xf32>) outs(%e2 : tensor<4x16xf32>) {
    ^bb0(%v: f32, %s: f32, %o: f32):
      %n = arith.constant 16.0 : f32
      %mean = arith.divf %s, %n : f32
      %d = arith.subf %v, %mean : f32
      linalg.yield %d : f32
  } -> tensor<4x16xf32>
  %sq = arith.mulf %cen, %cen : tensor<4x16xf32>
  %f2 = linalg.fill ins(%zero : f32) outs(%e1 : tensor<4xf32>) -> tensor<4xf32>
  %ssq = linalg.reduce ins(%sq : tensor<4x16xf32>) outs(%f2 : tensor<4xf32>) dimensions = [1]
      (%in: f32, %acc: f32) {
        %red = arith.addf %in, %acc : f32
        linalg.yield %red : f32
      }
  %y = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i)>, affine_map<(i, j) -> (j)>, affine_map<(i, j) -> (j)>, affine_map<(i, j) -> (i, j)>],
                        iterator_types = ["parallel", "parallel"]}
      ins(%cen, %ssq, %gamma, %beta : tensor<4x16xf32>, tensor<4xf32>, tensor<16xf32>, tensor<16xf32>) outs(%e2 : tensor<4x16xf32>) {
    ^bb0(%c: f32, %s: f32, %g: f32, %bt: f32, %o: f32):
      %n = arith.constant 16.0 : f32
      %eps = arith.constant 1.000000000e-05 : f32
      %var = arith.divf %s, %n : f32
      %ve = arith.addf %var, %eps : f32
      %rs = math.rsqrt %ve : f32
      %nrm = arith.mulf %c, %rs : f32
      %sc = arith.mulf %nrm, %g : f32
      %r = arith.addf %sc, %bt : f32
      linalg.yield %r : f32
  } -> tensor<4x16xf32>
  return %y : tensor<4x16xf32>
}
