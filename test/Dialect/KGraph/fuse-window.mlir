// RUN: kgraph-opt %s --pass-pipeline='builtin.module(func.func(kgraph-fuse))' --split-input-file | FileCheck %s

// Window groups (docs/fusion.md, kind 5): a channels-last pool2d or a
// depthwise/grouped conv2d with its elementwise producers and consumers.

// A depthwise conv2d (groups = C) + bias + relu: one window group.
// CHECK-LABEL: func @depthwise_bias_relu
// CHECK: %[[G:.*]] = kgraph.fused window (%{{.*}}, %{{.*}}, %{{.*}}) : (tensor<2x16x16x32xf16>, tensor<32x3x3x1xf16>, tensor<32xf16>) -> tensor<2x16x16x32xf16> {
// CHECK-NEXT: ^bb0
// CHECK-NEXT: kgraph.conv2d
// CHECK-NEXT: kgraph.add
// CHECK-NEXT: kgraph.relu
// CHECK-NEXT: kgraph.yield
// CHECK: return %[[G]]
func.func @depthwise_bias_relu(%x: tensor<2x16x16x32xf16>, %w: tensor<32x3x3x1xf16>, %b: tensor<32xf16>) -> tensor<2x16x16x32xf16> {
  %0 = kgraph.conv2d %x, %w layout = nhwc padding = [1, 1, 1, 1] groups = 32 : tensor<2x16x16x32xf16>, tensor<32x3x3x1xf16> -> tensor<2x16x16x32xf16>
  %1 = kgraph.add %0, %b : tensor<2x16x16x32xf16>, tensor<32xf16>
  %2 = kgraph.relu %1 : tensor<2x16x16x32xf16>
  return %2 : tensor<2x16x16x32xf16>
}

// -----

// conv2d + bias + relu, then a strided max pool: the GEMM keeps its
// epilogue (the GEMM phase runs first), the pool is a window op of its own
// (left to kgraph-form-kernels) and the sigmoid after it joins it.
// CHECK-LABEL: func @conv_relu_pool
// CHECK: %[[C:.*]] = kgraph.fused gemm
// CHECK: kgraph.conv2d
// CHECK-NEXT: kgraph.add
// CHECK-NEXT: kgraph.relu
// CHECK-NEXT: kgraph.yield
// CHECK: %[[P:.*]] = kgraph.fused window (%[[C]]) : (tensor<1x16x16x64xf16>) -> tensor<1x8x8x64xf16> {
// CHECK: kgraph.pool2d max
// CHECK-NEXT: kgraph.sigmoid
// CHECK-NEXT: kgraph.yield
// CHECK: return %[[P]]
func.func @conv_relu_pool(%x: tensor<1x16x16x64xf16>, %w: tensor<64x3x3x64xf16>, %b: tensor<64xf16>) -> tensor<1x8x8x64xf16> {
  %0 = kgraph.conv2d %x, %w layout = nhwc padding = [1, 1, 1, 1] : tensor<1x16x16x64xf16>, tensor<64x3x3x64xf16> -> tensor<1x16x16x64xf16>
  %1 = kgraph.add %0, %b : tensor<1x16x16x64xf16>, tensor<64xf16>
  %2 = kgraph.relu %1 : tensor<1x16x16x64xf16>
  %3 = kgraph.pool2d max %2 kernel = [3, 3] strides = [2, 2] padding = [1, 1, 1, 1] layout = nhwc : tensor<1x16x16x64xf16>
  %4 = kgraph.sigmoid %3 : tensor<1x8x8x64xf16>
  return %4 : tensor<1x8x8x64xf16>
}

// -----

// Producers of the pool's input join (evaluated per tap); one with another
// user is recomputed in the group and stays for that user.
// CHECK-LABEL: func @producers
// CHECK: %[[W:.*]] = kgraph.fused window (%{{.*}}) : (tensor<1x9x9x16xf32>) -> tensor<1x4x4x16xf32> {
// CHECK: kgraph.mul
// CHECK-NEXT: kgraph.abs
// CHECK-NEXT: kgraph.pool2d avg
// CHECK-NEXT: kgraph.yield
// CHECK: %[[E:.*]] = kgraph.fused elementwise (%{{.*}}) : (tensor<1x9x9x16xf32>) -> tensor<1x9x9x16xf32> {
// CHECK: kgraph.mul
// CHECK-NEXT: kgraph.exp
// CHECK-NEXT: kgraph.yield
// CHECK: return %[[W]], %[[E]]
func.func @producers(%x: tensor<1x9x9x16xf32>) -> (tensor<1x4x4x16xf32>, tensor<1x9x9x16xf32>) {
  %s = arith.constant dense<3.0> : tensor<f32>
  %0 = kgraph.mul %x, %s : tensor<1x9x9x16xf32>, tensor<f32>
  %1 = kgraph.abs %0 : tensor<1x9x9x16xf32>
  %2 = kgraph.pool2d avg %1 kernel = [3, 3] strides = [2, 2] layout = nhwc : tensor<1x9x9x16xf32>
  %3 = kgraph.exp %0 : tensor<1x9x9x16xf32>
  return %2, %3 : tensor<1x4x4x16xf32>, tensor<1x9x9x16xf32>
}

// -----

// Not window ops: a strided channels-first pool (left alone for
// kgraph-form-kernels, a stencil kernel), a grouped conv with 16 input
// channels per group (a GEMM), and a channels-last pool of stencil shape
// (stride 1, same size, <= 4 channels: a stencil group with its
// neighbours).
// CHECK-LABEL: func @not_window
// CHECK: kgraph.pool2d max %arg0
// CHECK-NEXT: kgraph.relu
// CHECK-NEXT: kgraph.fused stencil
// CHECK: kgraph.pool2d avg
// CHECK-NEXT: kgraph.neg
// CHECK: kgraph.fused gemm
// CHECK: kgraph.conv2d {{.*}} groups = 2
// CHECK-NEXT: kgraph.relu
// CHECK-NOT: window
func.func @not_window(%a: tensor<1x8x10x10xf32>, %b: tensor<1x10x10x4xf32>, %c: tensor<1x6x6x32xf32>, %w: tensor<8x3x3x16xf32>) -> (tensor<1x8x5x5xf32>, tensor<1x10x10x4xf32>, tensor<1x4x4x8xf32>) {
  %0 = kgraph.pool2d max %a kernel = [2, 2] strides = [2, 2] : tensor<1x8x10x10xf32>
  %1 = kgraph.relu %0 : tensor<1x8x5x5xf32>
  %2 = kgraph.pool2d avg %b kernel = [3, 3] padding = [1, 1, 1, 1] layout = nhwc : tensor<1x10x10x4xf32>
  %3 = kgraph.neg %2 : tensor<1x10x10x4xf32>
  %4 = kgraph.conv2d %c, %w layout = nhwc groups = 2 : tensor<1x6x6x32xf32>, tensor<8x3x3x16xf32> -> tensor<1x4x4x8xf32>
  %5 = kgraph.relu %4 : tensor<1x4x4x8xf32>
  return %1, %3, %5 : tensor<1x8x5x5xf32>, tensor<1x10x10x4xf32>, tensor<1x4x4x8xf32>
}

// -----

// The pool's result is also returned: its consumers stay out (a window
// group yields one value), and the lone pool is left to
// kgraph-form-kernels.
// CHECK-LABEL: func @result_used_twice
// CHECK-NOT: kgraph.fused window
// CHECK: kgraph.pool2d max
// CHECK: kgraph.fused
// CHECK: kgraph.relu
func.func @result_used_twice(%x: tensor<1x8x8x16xf16>) -> (tensor<1x4x4x16xf16>, tensor<1x4x4x16xf16>) {
  %0 = kgraph.pool2d max %x kernel = [2, 2] strides = [2, 2] layout = nhwc : tensor<1x8x8x16xf16>
  %1 = kgraph.relu %0 : tensor<1x4x4x16xf16>
  %2 = kgraph.neg %1 : tensor<1x4x4x16xf16>
  return %0, %2 : tensor<1x4x4x16xf16>, tensor<1x4x4x16xf16>
}
