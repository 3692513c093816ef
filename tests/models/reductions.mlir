// reductions: sum over axis 2, max over axis 0, mean over axes (0, 2) of a
// 3x4x5 f32 tensor, and the total sum as a 0-d tensor; four outputs.
func.func @reductions(%x: tensor<3x4x5xf32>) -> (tensor<3x4xf32>, tensor<4x5xf32>, tensor<4xf32>, tensor<f32>) {
  %zero = arith.constant 0.0 : f32
  %ninf = arith.constant 0xFF800000 : f32
  %e34 = tensor.empty() : tensor<3x4xf32>
  %f34 = linalg.fill ins(%zero : f32) outs(%e34 : tensor<3x4xf32>) -> tensor<3x4xf32>
  %sum2 = linalg.reduce ins(%x : tensor<3x4x5xf32>) outs(%f34 : tensor<3x4xf32>) dimensions = [2]
      (%in: f32, %acc: f32) {
        %red = arith.addf %in, %acc : f32
        linalg.yield %red : f32
      }
  %e45 = tensor.empty() : tensor<4x5xf32>
  %f45 = linalg.fill ins(%ninf : f32) outs(%e45 : tensor<4x5xf32>) -> tensor<4x5xf32>
  %max0 = linalg.reduce ins(%x : tensor<3x4x5xf32>) outs(%f45 : tensor<4x5xf32>) dimensions = [0]
      (%in: f32, %acc: f32) {
        %red = arith.maximumf %in, %acc : f32
        linalg.yield %red : f32
      }
  %e4 = tensor.empty() : tensor<4xf32>
  %f4 = linalg.fill ins(%zero : f32) outs(%e4 : tensor<4xf32>) -> tensor<4xf32>
  %s02 = linalg.reduce ins(%x : tensor<3x4x5xf32>) outs(%f4 : tensor<4xf32>) dimensions = [0, 2]
      (%in: f32, %acc: f32) {
        %red = arith.addf %in, %acc : f32
        linalg.yield %red : f32
      }
  %cnt = arith.constant dense<15.0> : tensor<4xf32>
  %mean = arith.divf %s02, %cnt : tensor<4xf32>
  %e0 = tensor.empty() : tensor<f32>
  %f0 = linalg.fill ins(%zero : f32) outs(%e0 : tensor<f32>) -> tensor<f32>
  %tot = linalg.reduce ins(%x : tensor<3x4x5xf32>) outs(%f0 : tensor<f32>) dimensions = [0, 1, 2]
      (%in: f32, %acc: f32) {
        %red = arith.addf %in, %acc : f32
        linalg.yield %red : f32
      }
  return %sum2, %max0, %mean, %tot : tensor<3x4xf32>, tensor<4x5xf32>, tensor<4xf32>, tensor<f32>
}
