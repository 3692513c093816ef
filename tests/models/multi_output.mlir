// multi_output: one function, three results of different shapes and dtypes:
// f32 row sums (4), i1 mask x > 0 (4x6), i64 column sums of sign-extended y (6).
func.func @multi_output(%x: tensor<4x6xf32>, %y: tensor<4x6xi32>) -> (tensor<4xf32>, tensor<4x6xi1>, tensor<6xi64>) {
  %zero = arith.constant 0.0 : f32
  %zi = arith.constant 0 : i64
  %e4 = tensor.empty() : tensor<4xf32>
  %f4 = linalg.fill ins(%zero : f32) outs(%e4 : tensor<4xf32>) -> tensor<4xf32>
  %rows = linalg.reduce ins(%x : tensor<4x6xf32>) outs(%f4 : tensor<4xf32>) dimensions = [1]
      (%in: f32, %acc: f32) {
        %red = arith.addf %in, %acc : f32
        linalg.yield %red : f32
      }
  %zt = arith.constant dense<0.0> : tensor<4x6xf32>
  %mask = arith.cmpf ogt, %x, %zt : tensor<4x6xf32>
  %y64 = arith.extsi %y : tensor<4x6xi32> to tensor<4x6xi64>
  %e6 = tensor.empty() : tensor<6xi64>
  %f6 = linalg.fill ins(%zi : i64) outs(%e6 : tensor<6xi64>) -> tensor<6xi64>
  %cols = linalg.reduce ins(%y64 : tensor<4x6xi64>) outs(%f6 : tensor<6xi64>) dimensions = [0]
      (%in: i64, %acc: i64) {
        %red = arith.addi %in, %acc : i64
        linalg.yield %red : i64
      }
  return %rows, %mask, %cols : tensor<4xf32>, tensor<4x6xi1>, tensor<6xi64>
}
