// cnn: conv2d NHWC/HWCF (2x8x8x3 * 3x3x3x4, stride 1, no padding) + bias + relu
// + 2x2/stride-2 max pooling; constant seeded non-splat filter and bias.
func.func @cnn(%x: tensor<2x8x8x3xf32>) -> tensor<2x3x3x4xf32> {
  %w = arith.constant dense<[[[[6.122757196e-01, -7.666994929e-01, 1.254296601e-01, -1.703308821e-01], [-1.357947886e-01, -6.467914581e-02, -6.059958339e-01, -6.957971305e-02], [-2.595639229e-01, 9.968998432e-01, 6.773598492e-02, -1.057892367e-01]], [[-8.438622206e-02, -2.004138976e-01, -3.165451586e-01, -1.172402948e-01], [1.445836127e-01, -7.156608254e-02, 2.873276174e-01, -5.994063988e-02], [7.277869619e-03, 4.637462497e-01, 1.635316610e-01, -1.515686214e-01]], [[-5.485169217e-02, 1.621575356e-01, 5.805264115e-01, -8.088609576e-02], [-7.306760550e-02, 3.006940782e-01, -2.659379840e-01, -8.751606941e-02], [2.647616863e-01, 1.741050035e-01, 2.745501138e-02, 2.010313123e-01]]], [[[-8.484486938e-01, 3.063920438e-01, -2.878934145e-01, -5.005859733e-01], [8.293373138e-02, 2.101634592e-01, -1.334302425e-01, -3.229217529e-01], [7.837450132e-03, -1.582419313e-02, 4.216794372e-01, 2.242223918e-01]], [[5.814469233e-02, 3.334899545e-01, -6.165691465e-02, -2.777698636e-01], [1.752174944e-01, 1.747615188e-01, -6.444867700e-02, -2.348425686e-01], [6.874617189e-02, -7.481682897e-01, 2.070374340e-01, 1.474104822e-01]], [[-4.916571379e-01, 1.840605214e-02, -2.892298996e-01, 2.271663100e-01], [-6.102501750e-01, -2.743483484e-01, 2.128739953e-01, 3.469203115e-01], [-6.474016309e-01, -1.494119465e-01, 9.840602428e-02, -1.827648431e-01]]], [[[4.771920741e-01, -3.573679924e-01, 1.063595861e-01, -3.145216703e-01], [4.217888713e-01, -6.495368667e-03, -1.116751656e-01, -5.154554844e-01], [5.045476556e-01, 2.258335799e-01, 2.260691524e-01, 3.413643837e-01]], [[1.047679707e-01, -1.917739809e-01, -2.400723696e-01, -2.400599867e-01], [4.110217094e-01, -4.381143749e-01, -1.789108515e-01, -9.637317806e-02], [6.738571078e-02, 1.726048142e-01, -3.747290969e-01, -5.190040469e-01]], [[-1.324269804e-03, 3.640691340e-01, 2.271174192e-01, 6.469523162e-02], [-9.514669329e-02, 8.797010779e-02, -7.300052792e-02, 2.451619804e-01], [-2.383342087e-01, 4.027198255e-02, -3.323404118e-02, 1.630078107e-01]]]]> : tensor<3x3x3x4xf32>
  %b = arith.constant dense<[2.246385254e-02, 2.550034523e-01, 1.498654783e-01, 1.496737152e-01]> : tensor<4xf32>
  %zero = arith.constant 0.0 : f32
  %ninf = arith.constant 0xFF800000 : f32
  %e = tensor.empty() : tensor<2x6x6x4xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<2x6x6x4xf32>) -> tensor<2x6x6x4xf32>
  %conv = linalg.conv_2d_nhwc_hwcf {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
      ins(%x, %w : tensor<2x8x8x3xf32>, tensor<3x3x3x4xf32>) outs(%f : tensor<2x6x6x4xf32>) -> tensor<2x6x6x4xf32>
  %act = linalg.generic {indexing_maps = [affine_map<(n, h, w, c) -> (n, h, w, c)>, affine_map<(n, h, w, c) -> (c)>, affine_map<(n, h, w, c) -> (n, h, w, c)>],
                          iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%conv, %b : tensor<2x6x6x4xf32>, tensor<4xf32>) outs(%e : tensor<2x6x6x4xf32>) {
    ^bb0(%v: f32, %bv: f32, %o: f32):
      %s = arith.addf %v, %bv : f32
      %z = arith.constant 0.0 : f32
      %r = arith.maximumf %s, %z : f32
      linalg.yield %r : f32
  } -> tensor<2x6x6x4xf32>
  %win = tensor.empty() : tensor<2x2xf32>
  %pe = tensor.empty() : tensor<2x3x3x4xf32>
  %pf = linalg.fill ins(%ninf : f32) outs(%pe : tensor<2x3x3x4xf32>) -> tensor<2x3x3x4xf32>
  %pool = linalg.pooling_nhwc_max {dilations = dense<1> : tensor<2xi64>, strides = dense<2> : tensor<2xi64>}
      ins(%act, %win : tensor<2x6x6x4xf32>, tensor<2x2xf32>) outs(%pf : tensor<2x3x3x4xf32>) -> tensor<2x3x3x4xf32>
  return %pool : tensor<2x3x3x4xf32>
}
