// RUN: kgraph-opt %s --pass-pipeline='builtin.module(func.func(kgraph-fuse))' --split-input-file | FileCheck %s

// conv2d (64 channels: not a stencil op) + bias + relu: one GEMM group.
// CHECK-LABEL: func @conv_bias_relu
// CHECK: %[[G:.*]] = kgraph.fused gemm (%{{.*}}, %{{.*}}, %{{.*}}) : (tensor<2x16x16x64xf16>, tensor<64x3x3x64xf16>, tensor<64xf16>) -> tensor<2x16x16x64xf16> {
// CHECK: kgraph.conv2d
// CHECK-NEXT: kgraph.add
// CHECK-NEXT: kgraph.relu
// CHECK-NEXT: kgraph.yield
// CHECK-NOT: kgraph.fused
// CHECK: return %[[G]]
func.func @conv_bias_relu(%x: tensor<2x16x16x64xf16>, %w: tensor<64x3x3x64xf16>, %b: tensor<64xf16>) -> tensor<2x16x16x64xf16> {
  %0 = kgraph.conv2d %x, %w layout = nhwc padding = [1, 1, 1, 1] : tensor<2x16x16x64xf16>, tensor<64x3x3x64xf16> -> tensor<2x16x16x64xf16>
  %1 = kgraph.add %0, %b : tensor<2x16x16x64xf16>, tensor<64xf16>
  %2 = kgraph.relu %1 : tensor<2x16x16x64xf16>
  return %2 : tensor<2x16x16x64xf16>
}

// -----

// ResNet-50 bottleneck block (nhwc f16, 256 -> 64 -> 64 -> 256 channels):
// exactly three groups, one per conv; the last one adds the bias and the
// block input (residual) and applies the relu.
// CHECK-LABEL: func @bottleneck
// CHECK-SAME: (%[[X:[^:]*]]: tensor<2x56x56x256xf16>
// CHECK: %[[G1:.*]] = kgraph.fused gemm (%[[X]], %{{.*}}, %{{.*}}) :
// CHECK-SAME: -> tensor<2x56x56x64xf16>
// CHECK: kgraph.conv2d
// CHECK-NEXT: kgraph.add
// CHECK-NEXT: kgraph.relu
// CHECK-NEXT: kgraph.yield
// CHECK: %[[G2:.*]] = kgraph.fused gemm (%[[G1]], %{{.*}}, %{{.*}}) :
// CHECK-SAME: -> tensor<2x56x56x64xf16>
// CHECK: kgraph.conv2d
// CHECK-NEXT: kgraph.add
// CHECK-NEXT: kgraph.relu
// CHECK-NEXT: kgraph.yield
// CHECK: %[[G3:.*]] = kgraph.fused gemm (%[[G2]], %{{.*}}, %{{.*}}, %[[X]]) :
// CHECK-SAME: -> tensor<2x56x56x256xf16>
// CHECK: kgraph.conv2d
// CHECK-NEXT: kgraph.add
// CHECK-NEXT: kgraph.add
// CHECK-NEXT: kgraph.relu
// CHECK-NEXT: kgraph.yield
// CHECK-NOT: kgraph.fused
// CHECK: return %[[G3]]
func.func @bottleneck(%x: tensor<2x56x56x256xf16>, %w1: tensor<64x1x1x256xf16>, %b1: tensor<64xf16>,
                      %w2: tensor<64x3x3x64xf16>, %b2: tensor<64xf16>,
                      %w3: tensor<256x1x1x64xf16>, %b3: tensor<256xf16>) -> tensor<2x56x56x256xf16> {
  %0 = kgraph.conv2d %x, %w1 layout = nhwc : tensor<2x56x56x256xf16>, tensor<64x1x1x256xf16> -> tensor<2x56x56x64xf16>
  %1 = kgraph.add %0, %b1 : tensor<2x56x56x64xf16>, tensor<64xf16>
  %2 = kgraph.relu %1 : tensor<2x56x56x64xf16>
  %3 = kgraph.conv2d %2, %w2 layout = nhwc padding = [1, 1, 1, 1] : tensor<2x56x56x64xf16>, tensor<64x3x3x64xf16> -> tensor<2x56x56x64xf16>
  %4 = kgraph.add %3, %b2 : tensor<2x56x56x64xf16>, tensor<64xf16>
  %5 = kgraph.relu %4 : tensor<2x56x56x64xf16>
  %6 = kgraph.conv2d %5, %w3 layout = nhwc : tensor<2x56x56x64xf16>, tensor<256x1x1x64xf16> -> tensor<2x56x56x256xf16>
  %7 = kgraph.add %6, %b3 : tensor<2x56x56x256xf16>, tensor<256xf16>
  %8 = kgraph.add %7, %x : tensor<2x56x56x256xf16>, tensor<2x56x56x256xf16>
  %9 = kgraph.relu %8 : tensor<2x56x56x256xf16>
  return %9 : tensor<2x56x56x256xf16>
}

// -----

// The image chain (nchw f32, one channel): 5x5 Gaussian blur, Sobel x and
// y, gradient magnitude, non-maximum suppression against a 3x3 max pool and
// a threshold. There is no logical and on i1: two nested selects. All of it
// is one stencil group.
// CHECK-LABEL: func @edges
// CHECK: %[[G:.*]] = kgraph.fused stencil (%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}) : (tensor<8x1x32x32xf32>, tensor<1x1x5x5xf32>, tensor<1x1x3x3xf32>, tensor<1x1x3x3xf32>) -> tensor<8x1x32x32xf32> {
// CHECK-COUNT-3: kgraph.conv2d
// CHECK: kgraph.sqrt
// CHECK-NEXT: kgraph.pool2d max
// CHECK-NEXT: kgraph.compare eq
// CHECK-NEXT: kgraph.compare gt
// CHECK-NEXT: kgraph.select
// CHECK-NEXT: %[[R:.*]] = kgraph.select
// CHECK-NEXT: kgraph.yield %[[R]]
// CHECK-NOT: kgraph.fused
// CHECK: return %[[G]]
func.func @edges(%img: tensor<8x1x32x32xf32>, %gauss: tensor<1x1x5x5xf32>, %sx: tensor<1x1x3x3xf32>, %sy: tensor<1x1x3x3xf32>) -> tensor<8x1x32x32xf32> {
  %zero = arith.constant dense<0.0> : tensor<f32>
  %thr = arith.constant dense<0.1> : tensor<f32>
  %b = kgraph.conv2d %img, %gauss padding = [2, 2, 2, 2] : tensor<8x1x32x32xf32>, tensor<1x1x5x5xf32> -> tensor<8x1x32x32xf32>
  %gx = kgraph.conv2d %b, %sx padding = [1, 1, 1, 1] : tensor<8x1x32x32xf32>, tensor<1x1x3x3xf32> -> tensor<8x1x32x32xf32>
  %gy = kgraph.conv2d %b, %sy padding = [1, 1, 1, 1] : tensor<8x1x32x32xf32>, tensor<1x1x3x3xf32> -> tensor<8x1x32x32xf32>
  %gx2 = kgraph.mul %gx, %gx : tensor<8x1x32x32xf32>, tensor<8x1x32x32xf32>
  %gy2 = kgraph.mul %gy, %gy : tensor<8x1x32x32xf32>, tensor<8x1x32x32xf32>
  %s = kgraph.add %gx2, %gy2 : tensor<8x1x32x32xf32>, tensor<8x1x32x32xf32>
  %mag = kgraph.sqrt %s : tensor<8x1x32x32xf32>
  %mx = kgraph.pool2d max %mag kernel = [3, 3] padding = [1, 1, 1, 1] : tensor<8x1x32x32xf32>
  %ismax = kgraph.compare eq, %mag, %mx : tensor<8x1x32x32xf32>, tensor<8x1x32x32xf32>
  %strong = kgraph.compare gt, %mag, %thr : tensor<8x1x32x32xf32>, tensor<f32>
  %keep = kgraph.select %strong, %mag, %zero : tensor<8x1x32x32xi1>, tensor<8x1x32x32xf32>, tensor<f32>
  %nms = kgraph.select %ismax, %keep, %zero : tensor<8x1x32x32xi1>, tensor<8x1x32x32xf32>, tensor<f32>
  return %nms : tensor<8x1x32x32xf32>
}

// -----

// A stencil group with an elementwise producer on the grid (used only by
// the group) and two results.
// CHECK-LABEL: func @stencil_producer_two_results
// CHECK: %[[G:.*]]:2 = kgraph.fused stencil (%{{.*}}, %{{.*}}) : (tensor<1x8x8x2xf32>, tensor<2x3x3x2xf32>) -> (tensor<1x8x8x2xf32>, tensor<1x8x8x2xf32>) {
// CHECK: kgraph.mul
// CHECK-NEXT: kgraph.conv2d
// CHECK-NEXT: kgraph.pool2d avg
// CHECK-NEXT: kgraph.yield
// CHECK-NOT: kgraph.fused
func.func @stencil_producer_two_results(%x: tensor<1x8x8x2xf32>, %w: tensor<2x3x3x2xf32>) -> (tensor<1x8x8x2xf32>, tensor<1x8x8x2xf32>) {
  %s = arith.constant dense<2.0> : tensor<f32>
  %0 = kgraph.mul %x, %s : tensor<1x8x8x2xf32>, tensor<f32>
  %1 = kgraph.conv2d %0, %w layout = nhwc padding = [1, 1, 1, 1] : tensor<1x8x8x2xf32>, tensor<2x3x3x2xf32> -> tensor<1x8x8x2xf32>
  %2 = kgraph.pool2d avg %1 kernel = [3, 3] padding = [1, 1, 1, 1] layout = nhwc : tensor<1x8x8x2xf32>
  return %1, %2 : tensor<1x8x8x2xf32>, tensor<1x8x8x2xf32>
}

// -----

// A stencil chain (4 channels) feeding a 64-channel conv: the stencil group
// stops at the big conv, which anchors its own GEMM group with its epilogue.
// CHECK-LABEL: func @stencil_then_gemm
// CHECK: %[[S:.*]] = kgraph.fused stencil (%{{.*}}, %{{.*}}) : (tensor<1x4x16x16xf32>, tensor<4x4x3x3xf32>) -> tensor<1x4x16x16xf32> {
// CHECK: kgraph.conv2d
// CHECK-NEXT: kgraph.relu
// CHECK-NEXT: kgraph.yield
// CHECK: %[[G:.*]] = kgraph.fused gemm (%[[S]], %{{.*}}, %{{.*}}) : (tensor<1x4x16x16xf32>, tensor<64x4x3x3xf32>, tensor<1x64x1x1xf32>) -> tensor<1x64x16x16xf32> {
// CHECK: kgraph.conv2d
// CHECK-NEXT: kgraph.add
// CHECK-NEXT: kgraph.sigmoid
// CHECK-NEXT: kgraph.yield
// CHECK: return %[[G]]
func.func @stencil_then_gemm(%x: tensor<1x4x16x16xf32>, %w0: tensor<4x4x3x3xf32>, %w1: tensor<64x4x3x3xf32>, %b1: tensor<1x64x1x1xf32>) -> tensor<1x64x16x16xf32> {
  %0 = kgraph.conv2d %x, %w0 padding = [1, 1, 1, 1] : tensor<1x4x16x16xf32>, tensor<4x4x3x3xf32> -> tensor<1x4x16x16xf32>
  %1 = kgraph.relu %0 : tensor<1x4x16x16xf32>
  %2 = kgraph.conv2d %1, %w1 padding = [1, 1, 1, 1] : tensor<1x4x16x16xf32>, tensor<64x4x3x3xf32> -> tensor<1x64x16x16xf32>
  %3 = kgraph.add %2, %b1 : tensor<1x64x16x16xf32>, tensor<1x64x1x1xf32>
  %4 = kgraph.sigmoid %3 : tensor<1x64x16x16xf32>
  return %4 : tensor<1x64x16x16xf32>
}

// -----

// Stencil ops on different grids do not share a group: the second pool
// reads a 2x-downsampled grid (after a strided pool, which is no stencil op).
// CHECK-LABEL: func @two_grids
// CHECK: kgraph.fused
// CHECK: kgraph.pool2d max %{{.*}} kernel = [3, 3] padding
// CHECK-NEXT: kgraph.neg
// CHECK-NEXT: kgraph.yield
// CHECK: kgraph.pool2d max %{{.*}} kernel = [2, 2] strides = [2, 2]
// CHECK: kgraph.fused
// CHECK: kgraph.pool2d avg
// CHECK-NEXT: kgraph.exp
// CHECK-NEXT: kgraph.yield
func.func @two_grids(%x: tensor<1x16x16x1xf32>) -> tensor<1x8x8x1xf32> {
  %0 = kgraph.pool2d max %x kernel = [3, 3] padding = [1, 1, 1, 1] layout = nhwc : tensor<1x16x16x1xf32>
  %1 = kgraph.neg %0 : tensor<1x16x16x1xf32>
  %2 = kgraph.pool2d max %1 kernel = [2, 2] strides = [2, 2] layout = nhwc : tensor<1x16x16x1xf32>
  %3 = kgraph.pool2d avg %2 kernel = [5, 5] padding = [2, 2, 2, 2] layout = nhwc : tensor<1x8x8x1xf32>
  %4 = kgraph.exp %3 : tensor<1x8x8x1xf32>
  return %4 : tensor<1x8x8x1xf32>
}

// -----

// A conv2d whose filter is computed from a value on the grid does not join
// the stencil group through its filter.
// CHECK-LABEL: func @filter_from_grid
// CHECK: %[[S:.*]] = kgraph.fused
// CHECK: kgraph.pool2d
// CHECK-NEXT: kgraph.neg
// CHECK-NEXT: kgraph.yield
// CHECK: kgraph.conv2d %{{.*}}, %[[S]]
func.func @filter_from_grid(%x: tensor<1x1x3x3xf32>, %y: tensor<1x1x8x8xf32>) -> tensor<1x1x8x8xf32> {
  %0 = kgraph.pool2d max %x kernel = [3, 3] padding = [1, 1, 1, 1] : tensor<1x1x3x3xf32>
  %1 = kgraph.neg %0 : tensor<1x1x3x3xf32>
  %2 = kgraph.conv2d %y, %1 padding = [1, 1, 1, 1] : tensor<1x1x8x8xf32>, tensor<1x1x3x3xf32> -> tensor<1x1x8x8xf32>
  return %2 : tensor<1x1x8x8xf32>
}

// -----

// One value read by an avg pool (zero padding) and a max pool (-inf
// padding): a stencil group stores each value once, padded for its readers,
// so the max pool stays out of the group of the avg pools (found by the
// random-graph fuzzer: kgraph-tile rejected the group formed here).
// CHECK-LABEL: func @mixed_padding_readers
// CHECK: %[[G:[0-9]+]]:2 = kgraph.fused stencil (%{{.*}}) :
// CHECK: kgraph.pool2d avg
// CHECK-NEXT: kgraph.pool2d avg
// CHECK-NEXT: kgraph.yield
// CHECK-NOT: kgraph.fused
// CHECK: kgraph.pool2d max %[[G]]#0
func.func @mixed_padding_readers(%x: tensor<2x3x8x8xf32>) -> (tensor<2x3x8x8xf32>, tensor<2x3x8x8xf32>) {
  %0 = kgraph.pool2d avg %x kernel = [3, 3] padding = [1, 1, 1, 1] : tensor<2x3x8x8xf32>
  %1 = kgraph.pool2d avg %0 kernel = [3, 3] padding = [1, 1, 1, 1] : tensor<2x3x8x8xf32>
  %2 = kgraph.pool2d max %0 kernel = [3, 3] padding = [1, 1, 1, 1] : tensor<2x3x8x8xf32>
  return %1, %2 : tensor<2x3x8x8xf32>, tensor<2x3x8x8xf32>
}
