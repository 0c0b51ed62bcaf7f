// RUN: kgraph-opt %s --verify-diagnostics --pass-pipeline='builtin.module(func.func(kgraph-pad-conv-channels{bytes=6}))'

// expected-error @+1 {{kgraph-pad-conv-channels: bytes must be 0, 4, 8 or 16, got 6}}
func.func @bad_bytes(%x: tensor<1x9x9x3xf16>, %w: tensor<8x3x3x3xf16>) -> tensor<1x7x7x8xf16> {
  %0 = kgraph.conv2d %x, %w layout = nhwc : tensor<1x9x9x3xf16>, tensor<8x3x3x3xf16> -> tensor<1x7x7x8xf16>
  return %0 : tensor<1x7x7x8xf16>
}
