// IREE inline allocation bug in a loop: the loop-carried 0-d tensors (an f32
// and an i32, 4 bytes each) end up in one buffer, so the i32 step count comes
// back as the bits of the f32.  See docs/known-iree-issues.md.
func.func @main(%start: tensor<f32>, %limit: tensor<f32>) -> (tensor<i32>, tensor<f32>) {
  %zero = arith.constant dense<0> : tensor<i32>
  %one = arith.constant dense<1> : tensor<i32>
  %two = arith.constant dense<2.0> : tensor<f32>
  cf.br ^loop(%start, %zero : tensor<f32>, tensor<i32>)
^loop(%v: tensor<f32>, %n: tensor<i32>):
  %lt = arith.cmpf olt, %v, %limit : tensor<f32>
  %go = tensor.extract %lt[] : tensor<i1>
  cf.cond_br %go, ^body, ^exit
^body:
  %v2 = arith.mulf %v, %two : tensor<f32>
  %n2 = arith.addi %n, %one : tensor<i32>
  cf.br ^loop(%v2, %n2 : tensor<f32>, tensor<i32>)
^exit:
  return %n, %v : tensor<i32>, tensor<f32>
}
