// mlp_512: 128 -> 512 -> 512 dense+bias+relu layers, batch 4, weights as inputs.
// A square layer after another layer: the inline allocation bug's trigger.
func.func @mlp_512(%x: tensor<4x128xf32>, %w0: tensor<128x512xf32>, %b0: tensor<512xf32>, %w1: tensor<512x512xf32>, %b1: tensor<512xf32>) -> tensor<4x512xf32> {
  %zero = arith.constant 0.0 : f32
  %e0 = tensor.empty() : tensor<4x512xf32>
  %f0 = linalg.fill ins(%zero : f32) outs(%e0 : tensor<4x512xf32>) -> tensor<4x512xf32>
  %m0 = linalg.matmul ins(%x, %w0 : tensor<4x128xf32>, tensor<128x512xf32>) outs(%f0 : tensor<4x512xf32>) -> tensor<4x512xf32>
  %h0 = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (j)>, affine_map<(i, j) -> (i, j)>],
                          iterator_types = ["parallel", "parallel"]}
      ins(%m0, %b0 : tensor<4x512xf32>, tensor<512xf32>) outs(%m0 : tensor<4x512xf32>) {
      ^bb0(%v: f32, %bv: f32, %o: f32):
        %s = arith.addf %v, %bv : f32
        %relu0 = arith.constant 0.0 : f32
        %r = arith.maximumf %s, %relu0 : f32
        linalg.yield %r : f32
  } -> tensor<4x512xf32>
  %e1 = tensor.empty() : tensor<4x512xf32>
  %f1 = linalg.fill ins(%zero : f32) outs(%e1 : tensor<4x512xf32>) -> tensor<4x512xf32>
  %m1 = linalg.matmul ins(%h0, %w1 : tensor<4x512xf32>, tensor<512x512xf32>) outs(%f1 : tensor<4x512xf32>) -> tensor<4x512xf32>
  %h1 = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (j)>, affine_map<(i, j) -> (i, j)>],
                          iterator_types = ["parallel", "parallel"]}
      ins(%m1, %b1 : tensor<4x512xf32>, tensor<512xf32>) outs(%m1 : tensor<4x512xf32>) {
      ^bb0(%v: f32, %bv: f32, %o: f32):
        %s = arith.addf %v, %bv : f32
        linalg.yield %s : f32
  } -> tensor<4x512xf32>
  return %h1 : tensor<4x512xf32>
}
