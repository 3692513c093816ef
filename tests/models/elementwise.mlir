// elementwise: arith/math ops applied directly on tensors
// (mulf, addf, subf, divf, maximumf, negf, sin, exp, sqrt, absf, tanh).
func.func @elementwise(%a: tensor<2x3x4xf32>, %b: tensor<2x3x4xf32>, %c: tensor<2x3x4xf32>) -> tensor<2x3x4xf32> {
  %one = arith.constant dense<1.0> : tensor<2x3x4xf32>
  %ab = arith.mulf %a, %b : tensor<2x3x4xf32>
  %sc = math.sin %c : tensor<2x3x4xf32>
  %t0 = arith.addf %ab, %sc : tensor<2x3x4xf32>
  %absb = math.absf %b : tensor<2x3x4xf32>
  %nb = arith.negf %absb : tensor<2x3x4xf32>
  %eb = math.exp %nb : tensor<2x3x4xf32>
  %t1 = arith.subf %t0, %eb : tensor<2x3x4xf32>
  %mx = arith.maximumf %a, %c : tensor<2x3x4xf32>
  %bb = arith.mulf %b, %b : tensor<2x3x4xf32>
  %den = arith.addf %one, %bb : tensor<2x3x4xf32>
  %q = arith.divf %mx, %den : tensor<2x3x4xf32>
  %t2 = arith.addf %t1, %q : tensor<2x3x4xf32>
  %absc = math.absf %c : tensor<2x3x4xf32>
  %sq = math.sqrt %absc : tensor<2x3x4xf32>
  %th = math.tanh %a : tensor<2x3x4xf32>
  %p = arith.mulf %sq, %th : tensor<2x3x4xf32>
  %r = arith.addf %t2, %p : tensor<2x3x4xf32>
  return %r : tensor<2x3x4xf32>
}
