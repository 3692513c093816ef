// y = x * w + x, w = 0.5 + i / 64: the multiply is matched by
// scale.match.mlir and replaced with a call to the C kernel in
// scale_kernel.c (the weights become a constant buffer it reads); the add
// stays IREE's code.
func.func @predict(%x: tensor<64xf32>) -> tensor<64xf32> {
  %w = arith.constant dense<[
    0.5, 0.515625, 0.53125, 0.546875, 0.5625, 0.578125, 0.59375, 0.609375,
    0.625, 0.640625, 0.65625, 0.671875, 0.6875, 0.703125, 0.71875, 0.734375,
    0.75, 0.765625, 0.78125, 0.796875, 0.8125, 0.828125, 0.84375, 0.859375,
    0.875, 0.890625, 0.90625, 0.921875, 0.9375, 0.953125, 0.96875, 0.984375,
    1.0, 1.015625, 1.03125, 1.046875, 1.0625, 1.078125, 1.09375, 1.109375,
    1.125, 1.140625, 1.15625, 1.171875, 1.1875, 1.203125, 1.21875, 1.234375,
    1.25, 1.265625, 1.28125, 1.296875, 1.3125, 1.328125, 1.34375, 1.359375,
    1.375, 1.390625, 1.40625, 1.421875, 1.4375, 1.453125, 1.46875, 1.484375]> : tensor<64xf32>
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
