// data_dependent_loop: scf.while loops whose trip counts depend on input values:
// @halve_until halves x until max(x) < 1.0 and returns x and the step count;
// @repeat applies x = x * 1.5 - 0.25 n times, n = clamp(tensor.extract(n), 0, 16).
func.func @halve_until(%x: tensor<8xf32>) -> (tensor<8xf32>, tensor<i32>) {
  %thr = arith.constant 1.0 : f32
  %c0 = arith.constant 0 : i32
  %r:2 = scf.while (%v = %x, %n = %c0) : (tensor<8xf32>, i32) -> (tensor<8xf32>, i32) {
    %ninf = arith.constant 0xFF800000 : f32
    %e = tensor.empty() : tensor<f32>
    %f = linalg.fill ins(%ninf : f32) outs(%e : tensor<f32>) -> tensor<f32>
    %m = linalg.reduce ins(%v : tensor<8xf32>) outs(%f : tensor<f32>) dimensions = [0]
        (%in: f32, %acc: f32) {
          %red = arith.maximumf %in, %acc : f32
          linalg.yield %red : f32
        }
    %mv = tensor.extract %m[] : tensor<f32>
    %cond = arith.cmpf oge, %mv, %thr : f32
    scf.condition(%cond) %v, %n : tensor<8xf32>, i32
  } do {
  ^bb0(%v: tensor<8xf32>, %n: i32):
    %half = arith.constant dense<0.5> : tensor<8xf32>
    %v2 = arith.mulf %v, %half : tensor<8xf32>
    %one = arith.constant 1 : i32
    %n2 = arith.addi %n, %one : i32
    scf.yield %v2, %n2 : tensor<8xf32>, i32
  }
  %nt = tensor.from_elements %r#1 : tensor<i32>
  return %r#0, %nt : tensor<8xf32>, tensor<i32>
}

func.func @repeat(%n: tensor<i32>, %x: tensor<4xf32>) -> tensor<4xf32> {
  %lo = arith.constant 0 : i32
  %hi = arith.constant 16 : i32
  %n0 = tensor.extract %n[] : tensor<i32>
  %n1 = arith.maxsi %n0, %lo : i32
  %count = arith.minsi %n1, %hi : i32
  %c0 = arith.constant 0 : i32
  %r:2 = scf.while (%v = %x, %i = %c0) : (tensor<4xf32>, i32) -> (tensor<4xf32>, i32) {
    %cond = arith.cmpi slt, %i, %count : i32
    scf.condition(%cond) %v, %i : tensor<4xf32>, i32
  } do {
  ^bb0(%v: tensor<4xf32>, %i: i32):
    %k = arith.constant dense<1.5> : tensor<4xf32>
    %q = arith.constant dense<0.25> : tensor<4xf32>
    %m = arith.mulf %v, %k : tensor<4xf32>
    %v2 = arith.subf %m, %q : tensor<4xf32>
    %one = arith.constant 1 : i32
    %i2 = arith.addi %i, %one : i32
    scf.yield %v2, %i2 : tensor<4xf32>, i32
  }
  return %r#0 : tensor<4xf32>
}
