// The 3x3 depthwise conv of window-ptx's second kernel at MobileNet size,
// pinned to strips of 8 pixels (the longest the model tries): the
// thread's 8 channels' 9 filter taps are 9 16-byte loads, then per strip
// each of the 3 window rows loads its 8 + 2 columns once.
func.func @main(%x: tensor<32x56x56x128xf16>, %w: tensor<128x3x3x1xf16>) -> tensor<32x56x56x128xf16> {
  %0 = kgraph.fused (%x, %w) {kgraph.config = #kgraph.window_config<vector_width = 8, block_x = 16, block_y = 16, grid_size = 784, strip = 8>} : (tensor<32x56x56x128xf16>, tensor<128x3x3x1xf16>) -> tensor<32x56x56x128xf16> {
  ^bb0(%a: tensor<32x56x56x128xf16>, %b: tensor<128x3x3x1xf16>):
    %y = kgraph.conv2d %a, %b layout = nhwc padding = [1, 1, 1, 1] groups = 128 : tensor<32x56x56x128xf16>, tensor<128x3x3x1xf16> -> tensor<32x56x56x128xf16>
    kgraph.yield %y : tensor<32x56x56x128xf16>
  }
  return %0 : tensor<32x56x56x128xf16>
}
