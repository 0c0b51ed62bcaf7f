// Window groups: a channels-last max pool with a relu, a depthwise conv with
// bias (ragged pixels and channels).
func.func @main(%x: tensor<2x13x21x40xf16>, %y: tensor<1x9x11x24xf32>, %w: tensor<24x3x3x1xf32>,
                %b: tensor<24xf32>) -> (tensor<2x7x11x40xf16>, tensor<1x9x11x24xf32>) {
  %0 = kgraph.pool2d max %x kernel = [3, 3] strides = [2, 2] padding = [1, 1, 1, 1] layout = nhwc : tensor<2x13x21x40xf16>
  %1 = kgraph.relu %0 : tensor<2x7x11x40xf16>
  %2 = kgraph.conv2d %y, %w layout = nhwc padding = [1, 1, 1, 1] groups = 24 : tensor<1x9x11x24xf32>, tensor<24x3x3x1xf32> -> tensor<1x9x11x24xf32>
  %3 = kgraph.add %2, %b : tensor<1x9x11x24xf32>, tensor<24xf32>
  return %1, %3 : tensor<2x7x11x40xf16>, tensor<1x9x11x24xf32>
}
