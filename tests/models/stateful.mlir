// stateful: a util.global private mutable with a non-splat initial value;
// @accumulate loads it, adds the input, stores the sum back and returns it.
// The reference is one call from fresh state.
util.global private mutable @state = dense<[[3.419276699e-02, 1.359747529e+00, 1.224721074e+00, -5.103070736e-01], [-2.979695201e-01, -5.273842216e-01, 5.697263479e-01, -5.606443807e-02]]> : tensor<2x4xf32>

func.func @accumulate(%x: tensor<2x4xf32>) -> tensor<2x4xf32> {
  %s = util.global.load @state : tensor<2x4xf32>
  %n = arith.addf %s, %x : tensor<2x4xf32>
  util.global.store %n, @state : tensor<2x4xf32>
  return %n : tensor<2x4xf32>
}
