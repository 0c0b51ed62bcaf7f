// RUN: kgraph-opt %s --split-input-file --pass-pipeline='builtin.module(func.func(kgraph-pad-conv-channels{bytes=16}))' | FileCheck %s
// RUN: kgraph-opt %s --split-input-file --pass-pipeline='builtin.module(func.func(kgraph-pad-conv-channels{bytes=8}))' | FileCheck %s --check-prefix=B8
// RUN: kgraph-opt %s --split-input-file --pass-pipeline='builtin.module(func.func(kgraph-pad-conv-channels{bytes=0}))' | FileCheck %s --check-prefix=OFF

// An RGB stem, f16: 3 channels (6 bytes) padded to 8 (16 bytes), input and
// filter alike; 4 channels at 8 bytes.
// CHECK-LABEL: func @stem_f16
// CHECK-DAG: %[[ZX:.*]] = arith.constant dense<0.000000e+00> : tensor<2x17x19x5xf16>
// CHECK-DAG: %[[ZW:.*]] = arith.constant dense<0.000000e+00> : tensor<16x7x7x5xf16>
// CHECK-DAG: %[[XP:.*]] = kgraph.concat %arg0, %[[ZX]] axis = 3 : tensor<2x17x19x3xf16>, tensor<2x17x19x5xf16>
// CHECK-DAG: %[[WP:.*]] = kgraph.concat %arg1, %[[ZW]] axis = 3 : tensor<16x7x7x3xf16>, tensor<16x7x7x5xf16>
// CHECK: kgraph.conv2d %[[XP]], %[[WP]] layout = nhwc strides = [2, 2] padding = [3, 3, 3, 3] : tensor<2x17x19x8xf16>, tensor<16x7x7x8xf16> -> tensor<2x9x10x16xf16>
// B8-LABEL: func @stem_f16
// B8: kgraph.conv2d {{.*}} : tensor<2x17x19x4xf16>, tensor<16x7x7x4xf16> -> tensor<2x9x10x16xf16>
// OFF-LABEL: func @stem_f16
// OFF-NOT: kgraph.concat
// OFF: kgraph.conv2d %arg0, %arg1
func.func @stem_f16(%x: tensor<2x17x19x3xf16>, %w: tensor<16x7x7x3xf16>) -> tensor<2x9x10x16xf16> {
  %0 = kgraph.conv2d %x, %w layout = nhwc strides = [2, 2] padding = [3, 3, 3, 3] : tensor<2x17x19x3xf16>, tensor<16x7x7x3xf16> -> tensor<2x9x10x16xf16>
  return %0 : tensor<2x9x10x16xf16>
}

// -----

// f32: 3 channels to 4 (16 bytes; at 8 bytes its 12 already fill a vector);
// i8: 3 to 16 (8 bytes: to 8).
// CHECK-LABEL: func @f32_and_i8
// CHECK: kgraph.conv2d {{.*}} : tensor<1x9x9x4xf32>, tensor<8x3x3x4xf32> -> tensor<1x4x4x8xf32>
// CHECK: kgraph.conv2d {{.*}} : tensor<1x9x9x16xi8>, tensor<8x3x3x16xi8> -> tensor<1x4x4x8xi32>
// B8-LABEL: func @f32_and_i8
// B8: kgraph.conv2d %arg0, %arg1 {{.*}} : tensor<1x9x9x3xf32>, tensor<8x3x3x3xf32> -> tensor<1x4x4x8xf32>
// B8: kgraph.conv2d {{.*}} : tensor<1x9x9x8xi8>, tensor<8x3x3x8xi8> -> tensor<1x4x4x8xi32>
func.func @f32_and_i8(%x: tensor<1x9x9x3xf32>, %w: tensor<8x3x3x3xf32>, %y: tensor<1x9x9x3xi8>, %v: tensor<8x3x3x3xi8>) -> (tensor<1x4x4x8xf32>, tensor<1x4x4x8xi32>) {
  %0 = kgraph.conv2d %x, %w layout = nhwc strides = [2, 2] : tensor<1x9x9x3xf32>, tensor<8x3x3x3xf32> -> tensor<1x4x4x8xf32>
  %1 = kgraph.conv2d %y, %v layout = nhwc strides = [2, 2] : tensor<1x9x9x3xi8>, tensor<8x3x3x3xi8> -> tensor<1x4x4x8xi32>
  return %0, %1 : tensor<1x4x4x8xf32>, tensor<1x4x4x8xi32>
}

// -----

// Left alone: channels that already fill a vector, a channels-first conv, a
// depthwise conv (a window op), a stencil conv (stride 1, same size, <= 4
// channels) and a conv already in a group.
// CHECK-LABEL: func @left_alone
// CHECK-NOT: kgraph.concat
// B8-LABEL: func @left_alone
// B8-NOT: kgraph.concat
func.func @left_alone(%a: tensor<1x9x9x8xf16>, %wa: tensor<8x3x3x8xf16>, %b: tensor<1x3x9x9xf16>, %wb: tensor<8x3x3x3xf16>,
                      %c: tensor<1x9x9x3xf16>, %wc: tensor<3x3x3x1xf16>, %d: tensor<1x9x9x3xf32>, %wd: tensor<3x3x3x3xf32>) -> (tensor<1x7x7x8xf16>, tensor<1x8x7x7xf16>, tensor<1x7x7x3xf16>, tensor<1x9x9x3xf32>, tensor<1x7x7x8xf16>) {
  %0 = kgraph.conv2d %a, %wa layout = nhwc : tensor<1x9x9x8xf16>, tensor<8x3x3x8xf16> -> tensor<1x7x7x8xf16>
  %1 = kgraph.conv2d %b, %wb : tensor<1x3x9x9xf16>, tensor<8x3x3x3xf16> -> tensor<1x8x7x7xf16>
  %2 = kgraph.conv2d %c, %wc layout = nhwc groups = 3 : tensor<1x9x9x3xf16>, tensor<3x3x3x1xf16> -> tensor<1x7x7x3xf16>
  %3 = kgraph.conv2d %d, %wd layout = nhwc padding = [1, 1, 1, 1] : tensor<1x9x9x3xf32>, tensor<3x3x3x3xf32> -> tensor<1x9x9x3xf32>
  %4 = kgraph.fused (%c, %wb) : (tensor<1x9x9x3xf16>, tensor<8x3x3x3xf16>) -> tensor<1x7x7x8xf16> {
  ^bb0(%x: tensor<1x9x9x3xf16>, %w: tensor<8x3x3x3xf16>):
    %5 = kgraph.conv2d %x, %w layout = nhwc : tensor<1x9x9x3xf16>, tensor<8x3x3x3xf16> -> tensor<1x7x7x8xf16>
    kgraph.yield %5 : tensor<1x7x7x8xf16>
  }
  return %0, %1, %2, %3, %4 : tensor<1x7x7x8xf16>, tensor<1x8x7x7xf16>, tensor<1x7x7x3xf16>, tensor<1x9x9x3xf32>, tensor<1x7x7x8xf16>
}
