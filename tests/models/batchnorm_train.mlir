// batchnorm_train: ONNX BatchNormalization in training mode on NCHW 4x16x8x8, lowered
// by iree-import-onnx: outputs y (batch statistics), running mean and running variance.
func.func @batchnorm_train(%arg0: tensor<4x16x8x8xf32>, %arg1: tensor<16xf32>, %arg2: tensor<16xf32>, %arg3: tensor<16xf32>, %arg4: tensor<16xf32>) -> (tensor<4x16x8x8xf32>, tensor<16xf32>, tensor<16xf32>) {
  %cst = arith.constant 0.000000e+00 : f32
  %cst_0 = arith.constant 0.000000e+00 : f32
  %cst_1 = arith.constant 2.560000e+02 : f32
  %cst_2 = arith.constant 2.560000e+02 : f32
  %cst_3 = arith.constant 0.899999976 : f32
  %cst_4 = arith.constant 9.99999974E-6 : f32
  %0 = tensor.empty() : tensor<16xf32>
  %1 = linalg.fill ins(%cst : f32) outs(%0 : tensor<16xf32>) -> tensor<16xf32>
  %2 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d1)>], iterator_types = ["reduction", "parallel", "reduction", "reduction"]} ins(%arg0 : tensor<4x16x8x8xf32>) outs(%1 : tensor<16xf32>) {
  ^bb0(%in: f32, %out: f32):
    %33 = arith.addf %in, %out : f32
    linalg.yield %33 : f32
  } -> tensor<16xf32>
  %3 = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]} ins(%2 : tensor<16xf32>) outs(%0 : tensor<16xf32>) {
  ^bb0(%in: f32, %out: f32):
    %33 = arith.divf %in, %cst_1 : f32
    linalg.yield %33 : f32
  } -> tensor<16xf32>
  %4 = tensor.empty() : tensor<4x16x8x8xf32>
  %5 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%arg0 : tensor<4x16x8x8xf32>) outs(%4 : tensor<4x16x8x8xf32>) {
  ^bb0(%in: f32, %out: f32):
    linalg.yield %in : f32
  } -> tensor<4x16x8x8xf32>
  %6 = tensor.empty() : tensor<1x16x1x1xf32>
  %7 = linalg.fill ins(%cst_0 : f32) outs(%6 : tensor<1x16x1x1xf32>) -> tensor<1x16x1x1xf32>
  %8 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (0, d1, 0, 0)>], iterator_types = ["reduction", "parallel", "reduction", "reduction"]} ins(%5 : tensor<4x16x8x8xf32>) outs(%7 : tensor<1x16x1x1xf32>) {
  ^bb0(%in: f32, %out: f32):
    %33 = arith.addf %in, %out : f32
    linalg.yield %33 : f32
  } -> tensor<1x16x1x1xf32>
  %9 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%8 : tensor<1x16x1x1xf32>) outs(%6 : tensor<1x16x1x1xf32>) {
  ^bb0(%in: f32, %out: f32):
    %33 = arith.divf %in, %cst_2 : f32
    linalg.yield %33 : f32
  } -> tensor<1x16x1x1xf32>
  %10 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (0, d1, 0, 0)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%5, %9 : tensor<4x16x8x8xf32>, tensor<1x16x1x1xf32>) outs(%4 : tensor<4x16x8x8xf32>) {
  ^bb0(%in: f32, %in_8: f32, %out: f32):
    %33 = arith.subf %in, %in_8 : f32
    linalg.yield %33 : f32
  } -> tensor<4x16x8x8xf32>
  %11 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%10, %10 : tensor<4x16x8x8xf32>, tensor<4x16x8x8xf32>) outs(%4 : tensor<4x16x8x8xf32>) {
  ^bb0(%in: f32, %in_8: f32, %out: f32):
    %33 = arith.mulf %in, %in_8 : f32
    linalg.yield %33 : f32
  } -> tensor<4x16x8x8xf32>
  %12 = tensor.empty() : tensor<16xf32>
  %13 = linalg.fill ins(%cst_0 : f32) outs(%12 : tensor<16xf32>) -> tensor<16xf32>
  %14 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d1)>], iterator_types = ["reduction", "parallel", "reduction", "reduction"]} ins(%11 : tensor<4x16x8x8xf32>) outs(%13 : tensor<16xf32>) {
  ^bb0(%in: f32, %out: f32):
    %33 = arith.addf %in, %out : f32
    linalg.yield %33 : f32
  } -> tensor<16xf32>
  %15 = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]} ins(%14 : tensor<16xf32>) outs(%12 : tensor<16xf32>) {
  ^bb0(%in: f32, %out: f32):
    %33 = arith.divf %in, %cst_2 : f32
    linalg.yield %33 : f32
  } -> tensor<16xf32>
  %16 = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]} ins(%15 : tensor<16xf32>) outs(%0 : tensor<16xf32>) {
  ^bb0(%in: f32, %out: f32):
    linalg.yield %in : f32
  } -> tensor<16xf32>
  %17 = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]} ins(%arg3 : tensor<16xf32>) outs(%0 : tensor<16xf32>) {
  ^bb0(%in: f32, %out: f32):
    %33 = arith.mulf %in, %cst_3 : f32
    linalg.yield %33 : f32
  } -> tensor<16xf32>
  %18 = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]} ins(%3 : tensor<16xf32>) outs(%0 : tensor<16xf32>) {
  ^bb0(%in: f32, %out: f32):
    %33 = arith.mulf %in, %cst_3 : f32
    linalg.yield %33 : f32
  } -> tensor<16xf32>
  %19 = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]} ins(%17, %18 : tensor<16xf32>, tensor<16xf32>) outs(%0 : tensor<16xf32>) {
  ^bb0(%in: f32, %in_8: f32, %out: f32):
    %33 = arith.subf %in, %in_8 : f32
    linalg.yield %33 : f32
  } -> tensor<16xf32>
  %20 = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]} ins(%19, %3 : tensor<16xf32>, tensor<16xf32>) outs(%0 : tensor<16xf32>) {
  ^bb0(%in: f32, %in_8: f32, %out: f32):
    %33 = arith.addf %in, %in_8 : f32
    linalg.yield %33 : f32
  } -> tensor<16xf32>
  %21 = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]} ins(%arg4 : tensor<16xf32>) outs(%0 : tensor<16xf32>) {
  ^bb0(%in: f32, %out: f32):
    %33 = arith.mulf %in, %cst_3 : f32
    linalg.yield %33 : f32
  } -> tensor<16xf32>
  %22 = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]} ins(%16 : tensor<16xf32>) outs(%0 : tensor<16xf32>) {
  ^bb0(%in: f32, %out: f32):
    %33 = arith.mulf %in, %cst_3 : f32
    linalg.yield %33 : f32
  } -> tensor<16xf32>
  %23 = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]} ins(%21, %22 : tensor<16xf32>, tensor<16xf32>) outs(%0 : tensor<16xf32>) {
  ^bb0(%in: f32, %in_8: f32, %out: f32):
    %33 = arith.subf %in, %in_8 : f32
    linalg.yield %33 : f32
  } -> tensor<16xf32>
  %24 = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]} ins(%23, %16 : tensor<16xf32>, tensor<16xf32>) outs(%0 : tensor<16xf32>) {
  ^bb0(%in: f32, %in_8: f32, %out: f32):
    %33 = arith.addf %in, %in_8 : f32
    linalg.yield %33 : f32
  } -> tensor<16xf32>
  %expanded = tensor.expand_shape %3 [[0, 1, 2, 3]] output_shape [1, 16, 1, 1] : tensor<16xf32> into tensor<1x16x1x1xf32>
  %expanded_5 = tensor.expand_shape %16 [[0, 1, 2, 3]] output_shape [1, 16, 1, 1] : tensor<16xf32> into tensor<1x16x1x1xf32>
  %25 = tensor.empty() : tensor<1x16x1x1xf32>
  %26 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%expanded_5 : tensor<1x16x1x1xf32>) outs(%25 : tensor<1x16x1x1xf32>) {
  ^bb0(%in: f32, %out: f32):
    %33 = arith.addf %in, %cst_4 : f32
    linalg.yield %33 : f32
  } -> tensor<1x16x1x1xf32>
  %27 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%26 : tensor<1x16x1x1xf32>) outs(%25 : tensor<1x16x1x1xf32>) {
  ^bb0(%in: f32, %out: f32):
    %33 = math.rsqrt %in : f32
    linalg.yield %33 : f32
  } -> tensor<1x16x1x1xf32>
  %28 = tensor.empty() : tensor<4x16x8x8xf32>
  %29 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (0, d1, 0, 0)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%arg0, %expanded : tensor<4x16x8x8xf32>, tensor<1x16x1x1xf32>) outs(%28 : tensor<4x16x8x8xf32>) {
  ^bb0(%in: f32, %in_8: f32, %out: f32):
    %33 = arith.subf %in, %in_8 : f32
    linalg.yield %33 : f32
  } -> tensor<4x16x8x8xf32>
  %30 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (0, d1, 0, 0)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%29, %27 : tensor<4x16x8x8xf32>, tensor<1x16x1x1xf32>) outs(%28 : tensor<4x16x8x8xf32>) {
  ^bb0(%in: f32, %in_8: f32, %out: f32):
    %33 = arith.mulf %in, %in_8 : f32
    linalg.yield %33 : f32
  } -> tensor<4x16x8x8xf32>
  %expanded_6 = tensor.expand_shape %arg1 [[0, 1, 2, 3]] output_shape [1, 16, 1, 1] : tensor<16xf32> into tensor<1x16x1x1xf32>
  %31 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (0, d1, 0, 0)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%30, %expanded_6 : tensor<4x16x8x8xf32>, tensor<1x16x1x1xf32>) outs(%28 : tensor<4x16x8x8xf32>) {
  ^bb0(%in: f32, %in_8: f32, %out: f32):
    %33 = arith.mulf %in, %in_8 : f32
    linalg.yield %33 : f32
  } -> tensor<4x16x8x8xf32>
  %expanded_7 = tensor.expand_shape %arg2 [[0, 1, 2, 3]] output_shape [1, 16, 1, 1] : tensor<16xf32> into tensor<1x16x1x1xf32>
  %32 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (0, d1, 0, 0)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%31, %expanded_7 : tensor<4x16x8x8xf32>, tensor<1x16x1x1xf32>) outs(%28 : tensor<4x16x8x8xf32>) {
  ^bb0(%in: f32, %in_8: f32, %out: f32):
    %33 = arith.addf %in, %in_8 : f32
    linalg.yield %33 : f32
  } -> tensor<4x16x8x8xf32>
  return %32, %20, %24 : tensor<4x16x8x8xf32>, tensor<16xf32>, tensor<16xf32>
}
