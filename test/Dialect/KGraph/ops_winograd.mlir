// RUN: kgraph-opt %s | kgraph-opt | FileCheck %s
// RUN: kgraph-opt %s --mlir-print-op-generic | kgraph-opt | FileCheck %s

// The three Winograd transforms round-trip; defaults (nchw, no padding,
// output_tile 4) are elided.
// CHECK-LABEL: func @nchw
// CHECK: kgraph.winograd_filter %{{.*}} : tensor<8x4x3x3xf32> -> tensor<36x8x4xf32>
// CHECK: kgraph.winograd_input %{{.*}} padding = [1, 1, 1, 1] : tensor<2x4x10x10xf32> -> tensor<36x4x18xf32>
// CHECK: kgraph.winograd_output %{{.*}} : tensor<36x8x18xf32> -> tensor<2x8x10x10xf32>
func.func @nchw(%x: tensor<2x4x10x10xf32>, %w: tensor<8x4x3x3xf32>, %m: tensor<36x8x18xf32>)
    -> (tensor<36x8x4xf32>, tensor<36x4x18xf32>, tensor<2x8x10x10xf32>) {
  %u = kgraph.winograd_filter %w : tensor<8x4x3x3xf32> -> tensor<36x8x4xf32>
  %v = kgraph.winograd_input %x padding = [1, 1, 1, 1] : tensor<2x4x10x10xf32> -> tensor<36x4x18xf32>
  %y = kgraph.winograd_output %m : tensor<36x8x18xf32> -> tensor<2x8x10x10xf32>
  return %u, %v, %y : tensor<36x8x4xf32>, tensor<36x4x18xf32>, tensor<2x8x10x10xf32>
}

// F(2x2, 3x3) in nhwc: 16 points, 2x2 output tiles (an 8x7 output is 4x4
// tiles per image).
// CHECK-LABEL: func @nhwc_f2
// CHECK: kgraph.winograd_filter %{{.*}} layout = nhwc output_tile = 2 : tensor<8x3x3x4xf16> -> tensor<16x8x4xf16>
// CHECK: kgraph.winograd_input %{{.*}} layout = nhwc padding = [0, 0, 1, 0] output_tile = 2 : tensor<1x10x8x4xf16> -> tensor<16x16x4xf16>
// CHECK: kgraph.winograd_output %{{.*}} layout = nhwc output_tile = 2 : tensor<16x16x8xf16> -> tensor<1x8x7x8xf16>
func.func @nhwc_f2(%x: tensor<1x10x8x4xf16>, %w: tensor<8x3x3x4xf16>, %m: tensor<16x16x8xf16>)
    -> (tensor<16x8x4xf16>, tensor<16x16x4xf16>, tensor<1x8x7x8xf16>) {
  %u = kgraph.winograd_filter %w layout = nhwc output_tile = 2 : tensor<8x3x3x4xf16> -> tensor<16x8x4xf16>
  %v = kgraph.winograd_input %x layout = nhwc padding = [0, 0, 1, 0] output_tile = 2 : tensor<1x10x8x4xf16> -> tensor<16x16x4xf16>
  %y = kgraph.winograd_output %m layout = nhwc output_tile = 2 : tensor<16x16x8xf16> -> tensor<1x8x7x8xf16>
  return %u, %v, %y : tensor<16x8x4xf16>, tensor<16x16x4xf16>, tensor<1x8x7x8xf16>
}
