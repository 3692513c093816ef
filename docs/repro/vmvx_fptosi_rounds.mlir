// VMVX (inline-static default) rounds arith.fptosi to nearest instead of truncating toward zero:
// `ireegen parity` with input [7.75, 0.578, 2.82, 0.374, -1.6, -2.5] gives [8, 1, 3, 0, -2, -3] (round half away
// from zero) in inline-static, [7, 0, 2, 0, -1, -2] in async and inline-dynamic (IREE 3.13.0), for i8 and i32.
// ONNX Cast float->int hits it.
func.func @cast(%x: tensor<6xf32>) -> (tensor<6xi8>, tensor<6xi32>) {
  %e8 = tensor.empty() : tensor<6xi8>
  %e32 = tensor.empty() : tensor<6xi32>
  %a = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]} ins(%x : tensor<6xf32>) outs(%e8 : tensor<6xi8>) {
  ^bb0(%in: f32, %out: i8):
    %c = arith.fptosi %in : f32 to i8
    linalg.yield %c : i8
  } -> tensor<6xi8>
  %b = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]} ins(%x : tensor<6xf32>) outs(%e32 : tensor<6xi32>) {
  ^bb0(%in: f32, %out: i32):
    %c = arith.fptosi %in : f32 to i32
    linalg.yield %c : i32
  } -> tensor<6xi32>
  return %a, %b : tensor<6xi8>, tensor<6xi32>
}
