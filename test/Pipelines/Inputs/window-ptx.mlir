// A ResNet-style max pool and a depthwise conv + bias + relu (window kernels).
func.func @main(%x: tensor<4x56x56x64xf16>, %y: tensor<2x28x28x128xf16>, %w: tensor<128x3x3x1xf16>, %b: tensor<128xf16>) -> (tensor<4x28x28x64xf16>, tensor<2x28x28x128xf16>) {
  %0 = kgraph.pool2d max %x kernel = [3, 3] strides = [2, 2] padding = [1, 1, 1, 1] layout = nhwc : tensor<4x56x56x64xf16>
  %1 = kgraph.conv2d %y, %w layout = nhwc padding = [1, 1, 1, 1] groups = 128 : tensor<2x28x28x128xf16>, tensor<128x3x3x1xf16> -> tensor<2x28x28x128xf16>
  %2 = kgraph.add %1, %b : tensor<2x28x28x128xf16>, tensor<128xf16>
  %3 = kgraph.relu %2 : tensor<2x28x28x128xf16>
  return %0, %3 : tensor<4x28x28x64xf16>, tensor<2x28x28x128xf16>
}
