// y = x * w + x: the multiply is matched by scale.match.mlir and replaced
// with a call to the C kernel in scale_kernel.c; the add stays IREE's.
func.func @predict(%x: tensor<64xf32>, %w: tensor<64xf32>) -> tensor<64xf32> {
  %e = tensor.empty() : tensor<64xf32>
  %m = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>],
                       iterator_types = ["parallel"]}
       ins(%x, %w : tensor<64xf32>, tensor<64xf32>) outs(%e : tensor<64xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %r = arith.mulf %a, %b : f32
    linalg.yield %r : f32
  } -> tensor<64xf32>
  %y = arith.addf %m, %x : tensor<64xf32>
  return %y : tensor<64xf32>
}
