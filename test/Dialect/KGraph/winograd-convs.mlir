// RUN: kgraph-opt %s --split-input-file --pass-pipeline='builtin.module(func.func(kgraph-winograd-convs{min-channels=16 min-macs=0}))' | FileCheck %s
// RUN: kgraph-opt %s --split-input-file --pass-pipeline='builtin.module(func.func(kgraph-winograd-convs{min-channels=16 min-macs=0},kgraph-fuse))' | FileCheck %s --check-prefix=FUSE
// RUN: kgraph-opt %s --split-input-file --pass-pipeline='builtin.module(func.func(kgraph-winograd-convs))' | FileCheck %s --check-prefix=DEFAULT

// An f32 nchw 3x3 conv: filter and input transforms, [F, C] x [C, T] per
// point (a 10x10 output is 3x3 tiles of 4x4 per image, 18 tiles), the
// output transform; with --fuse the bias and relu join the output
// transform's kernel.
// CHECK-LABEL: func @nchw
// CHECK-SAME: (%[[X:.*]]: tensor<2x16x10x10xf32>, %[[W:.*]]: tensor<32x16x3x3xf32>
// CHECK: %[[U:.*]] = kgraph.winograd_filter %[[W]] : tensor<32x16x3x3xf32> -> tensor<36x32x16xf32>
// CHECK: %[[V:.*]] = kgraph.winograd_input %[[X]] padding = [1, 1, 1, 1] : tensor<2x16x10x10xf32> -> tensor<36x16x18xf32>
// CHECK: %[[M:.*]] = kgraph.matmul %[[U]], %[[V]] : tensor<36x32x16xf32>, tensor<36x16x18xf32> -> tensor<36x32x18xf32>
// CHECK: %[[Y:.*]] = kgraph.winograd_output %[[M]] : tensor<36x32x18xf32> -> tensor<2x32x10x10xf32>
// CHECK-NOT: kgraph.conv2d
// CHECK: kgraph.add %[[Y]]
// FUSE-LABEL: func @nchw
// FUSE: kgraph.fused elementwise
// FUSE-NEXT: ^bb0
// FUSE-NEXT: kgraph.winograd_output
// FUSE-NEXT: kgraph.add
// FUSE-NEXT: kgraph.relu
// FUSE-NEXT: kgraph.yield
func.func @nchw(%x: tensor<2x16x10x10xf32>, %w: tensor<32x16x3x3xf32>, %b: tensor<32x1x1xf32>) -> tensor<2x32x10x10xf32> {
  %0 = kgraph.conv2d %x, %w padding = [1, 1, 1, 1] : tensor<2x16x10x10xf32>, tensor<32x16x3x3xf32> -> tensor<2x32x10x10xf32>
  %1 = kgraph.add %0, %b : tensor<2x32x10x10xf32>, tensor<32x1x1xf32>
  %2 = kgraph.relu %1 : tensor<2x32x10x10xf32>
  return %2 : tensor<2x32x10x10xf32>
}

// -----

// nhwc: [T, C] x [C, F] per point, the filter's transform read transposed;
// no padding (a 7x5 output is 2x2 tiles).
// CHECK-LABEL: func @nhwc
// CHECK: %[[U:.*]] = kgraph.winograd_filter %{{.*}} layout = nhwc : tensor<24x3x3x16xf32> -> tensor<36x24x16xf32>
// CHECK: %[[V:.*]] = kgraph.winograd_input %{{.*}} layout = nhwc : tensor<1x9x7x16xf32> -> tensor<36x4x16xf32>
// CHECK: %[[M:.*]] = kgraph.matmul %[[V]], %[[U]] {transpose_b} : tensor<36x4x16xf32>, tensor<36x24x16xf32> -> tensor<36x4x24xf32>
// CHECK: kgraph.winograd_output %[[M]] layout = nhwc : tensor<36x4x24xf32> -> tensor<1x7x5x24xf32>
func.func @nhwc(%x: tensor<1x9x7x16xf32>, %w: tensor<24x3x3x16xf32>) -> tensor<1x7x5x24xf32> {
  %0 = kgraph.conv2d %x, %w layout = nhwc : tensor<1x9x7x16xf32>, tensor<24x3x3x16xf32> -> tensor<1x7x5x24xf32>
  return %0 : tensor<1x7x5x24xf32>
}

// -----

// Left alone: tensor-core types (f16; f32 under tf32), strides, dilations,
// groups, other filter sizes, fewer than 16 channels or filters.
// CHECK-LABEL: func @kept
// CHECK-NOT: kgraph.winograd
// CHECK-COUNT-7: kgraph.conv2d
// CHECK-NOT: kgraph.winograd
func.func @kept(%x: tensor<1x16x8x8xf32>, %h: tensor<1x16x8x8xf16>, %w: tensor<16x16x3x3xf32>,
                %wh: tensor<16x16x3x3xf16>, %wg: tensor<16x8x3x3xf32>, %w5: tensor<16x16x5x5xf32>,
                %x8: tensor<1x8x8x8xf32>, %w8: tensor<16x8x3x3xf32>) {
  %0 = kgraph.conv2d %h, %wh : tensor<1x16x8x8xf16>, tensor<16x16x3x3xf16> -> tensor<1x16x6x6xf32>
  %1 = kgraph.conv2d %x, %w precision = tf32 : tensor<1x16x8x8xf32>, tensor<16x16x3x3xf32> -> tensor<1x16x6x6xf32>
  %2 = kgraph.conv2d %x, %w strides = [2, 2] : tensor<1x16x8x8xf32>, tensor<16x16x3x3xf32> -> tensor<1x16x3x3xf32>
  %3 = kgraph.conv2d %x, %w dilations = [2, 2] : tensor<1x16x8x8xf32>, tensor<16x16x3x3xf32> -> tensor<1x16x4x4xf32>
  %4 = kgraph.conv2d %x, %wg groups = 2 : tensor<1x16x8x8xf32>, tensor<16x8x3x3xf32> -> tensor<1x16x6x6xf32>
  %5 = kgraph.conv2d %x, %w5 : tensor<1x16x8x8xf32>, tensor<16x16x5x5xf32> -> tensor<1x16x4x4xf32>
  %6 = kgraph.conv2d %x8, %w8 : tensor<1x8x8x8xf32>, tensor<16x8x3x3xf32> -> tensor<1x16x6x6xf32>
  return
}

// -----

// The defaults: at least 64 channels and filters and 2^29 multiply-adds.
// A ResNet-50 layer at batch 8 (64 channels at 56x56: 8 * 56 * 56 * 64 *
// 64 * 9 = 924844032) is rewritten; at batch 1 (115605504) it is not, nor
// is a 32-channel conv however large.
// With the floors lowered, all three are.
// CHECK-LABEL: func @defaults
// CHECK-COUNT-3: kgraph.winograd_output
// CHECK-NOT: kgraph.conv2d
// DEFAULT-LABEL: func @defaults
// DEFAULT: kgraph.winograd_filter
// DEFAULT: kgraph.winograd_input %{{.*}} : tensor<8x64x56x56xf32>
// DEFAULT: kgraph.winograd_output
// DEFAULT-NOT: kgraph.winograd
// DEFAULT-COUNT-2: kgraph.conv2d
// DEFAULT-NOT: kgraph.winograd
func.func @defaults(%x8: tensor<8x64x56x56xf32>, %x1: tensor<1x64x56x56xf32>, %w: tensor<64x64x3x3xf32>,
                    %x32: tensor<64x32x56x56xf32>, %w32: tensor<32x32x3x3xf32>) {
  %0 = kgraph.conv2d %x8, %w padding = [1, 1, 1, 1] : tensor<8x64x56x56xf32>, tensor<64x64x3x3xf32> -> tensor<8x64x56x56xf32>
  %1 = kgraph.conv2d %x1, %w padding = [1, 1, 1, 1] : tensor<1x64x56x56xf32>, tensor<64x64x3x3xf32> -> tensor<1x64x56x56xf32>
  %2 = kgraph.conv2d %x32, %w32 padding = [1, 1, 1, 1] : tensor<64x32x56x56xf32>, tensor<32x32x3x3xf32> -> tensor<64x32x56x56xf32>
  return
}
