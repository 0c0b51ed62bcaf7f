// RUN: kgraph-opt %s --split-input-file --pass-pipeline='builtin.module(func.func(kgraph-space-to-depth-convs))' | FileCheck %s

// The ResNet stem, f16: 3 channels padded to 4 first (2 x 2 x 4 = 16
// channels, 32 bytes, whole vectors through the transpose), on the split
// view right before the transpose (so --fuse makes them one copy kernel);
// the padding of 3 becomes a filter shifted by one zero tap (8 x 8 taps,
// 4 x 4 blocks) and padding 2 before, 1 after; x is never copied with zero
// rows.
// CHECK-LABEL: func @stem_f16
// CHECK-SAME: (%[[X:.*]]: tensor<2x224x224x3xf16>, %[[W:.*]]: tensor<64x7x7x3xf16>)
// CHECK: %[[XS:.*]] = kgraph.reshape %[[X]] : tensor<2x224x224x3xf16> to tensor<2x112x2x112x2x3xf16>
// CHECK: %[[XC:.*]] = kgraph.concat %[[XS]], %{{.*}} axis = 5 : tensor<2x112x2x112x2x3xf16>, tensor<2x112x2x112x2x1xf16>
// CHECK: %[[XT:.*]] = kgraph.transpose %[[XC]], permutation = [0, 1, 3, 2, 4, 5] : tensor<2x112x2x112x2x4xf16>
// CHECK: %[[XR:.*]] = kgraph.reshape %[[XT]] : tensor<2x112x112x2x2x4xf16> to tensor<2x112x112x16xf16>
// CHECK: %[[WH:.*]] = kgraph.concat %{{.*}}, %[[W]] axis = 1 : tensor<64x1x7x3xf16>, tensor<64x7x7x3xf16>
// CHECK: %[[WW:.*]] = kgraph.concat %{{.*}}, %[[WH]] axis = 2 : tensor<64x8x1x3xf16>, tensor<64x8x7x3xf16>
// CHECK: %[[WS:.*]] = kgraph.reshape %[[WW]] : tensor<64x8x8x3xf16> to tensor<64x4x2x4x2x3xf16>
// CHECK: %[[WC:.*]] = kgraph.concat %[[WS]], %{{.*}} axis = 5 : tensor<64x4x2x4x2x3xf16>, tensor<64x4x2x4x2x1xf16>
// CHECK: %[[WT:.*]] = kgraph.transpose %[[WC]], permutation = [0, 1, 3, 2, 4, 5]
// CHECK: %[[WR:.*]] = kgraph.reshape %[[WT]] : tensor<64x4x4x2x2x4xf16> to tensor<64x4x4x16xf16>
// CHECK: %[[Y:.*]] = kgraph.conv2d %[[XR]], %[[WR]] layout = nhwc padding = [2, 1, 2, 1] : tensor<2x112x112x16xf16>, tensor<64x4x4x16xf16> -> tensor<2x112x112x64xf16>
// CHECK-NOT: kgraph.conv2d
// CHECK: return %[[Y]]
func.func @stem_f16(%x: tensor<2x224x224x3xf16>, %w: tensor<64x7x7x3xf16>) -> tensor<2x112x112x64xf16> {
  %0 = kgraph.conv2d %x, %w layout = nhwc strides = [2, 2] padding = [3, 3, 3, 3] : tensor<2x224x224x3xf16>, tensor<64x7x7x3xf16> -> tensor<2x112x112x64xf16>
  return %0 : tensor<2x112x112x64xf16>
}

// -----

// f32: 2 x 2 x 3 = 12 channels are 48 bytes, no channel padding; odd sizes
// get a zero row and column to whole blocks; the precision stays.
// CHECK-LABEL: func @odd_f32
// CHECK: kgraph.concat %arg0, %{{.*}} axis = 1 : tensor<1x13x11x3xf32>, tensor<1x1x11x3xf32>
// CHECK: kgraph.concat %{{.*}}, %{{.*}} axis = 2 : tensor<1x14x11x3xf32>, tensor<1x14x1x3xf32>
// CHECK: kgraph.reshape %{{.*}} : tensor<1x7x6x2x2x3xf32> to tensor<1x7x6x12xf32>
// CHECK: kgraph.conv2d %{{.*}} layout = nhwc padding = [2, 1, 2, 1] precision = ieee : tensor<1x7x6x12xf32>, tensor<16x4x4x12xf32> -> tensor<1x7x6x16xf32>
func.func @odd_f32(%x: tensor<1x13x11x3xf32>, %w: tensor<16x7x7x3xf32>) -> tensor<1x7x6x16xf32> {
  %0 = kgraph.conv2d %x, %w layout = nhwc strides = [2, 2] padding = [3, 3, 3, 3] precision = ieee : tensor<1x13x11x3xf32>, tensor<16x7x7x3xf32> -> tensor<1x7x6x16xf32>
  return %0 : tensor<1x7x6x16xf32>
}

// -----

// A 2x2/2 conv never reads x's last row and column: they are sliced off.
// CHECK-LABEL: func @unread_rows
// CHECK: kgraph.slice %arg0 offsets = [0, 0, 0, 0] sizes = [1, 16, 8, 3] strides = [1, 1, 1, 1]
// CHECK: kgraph.conv2d %{{.*}} layout = nhwc : tensor<1x8x4x16xf16>, tensor<8x1x1x16xf16> -> tensor<1x8x4x8xf16>
func.func @unread_rows(%x: tensor<1x17x9x3xf16>, %w: tensor<8x2x2x3xf16>) -> tensor<1x8x4x8xf16> {
  %0 = kgraph.conv2d %x, %w layout = nhwc strides = [2, 2] : tensor<1x17x9x3xf16>, tensor<8x2x2x3xf16> -> tensor<1x8x4x8xf16>
  return %0 : tensor<1x8x4x8xf16>
}

// -----

// Stride 3: 27 channels padded after the rearrangement (to 32; padding
// first would give 9 x 8 = 72); the filter shifted by 2 zero taps (padding
// 1 becomes 1 block) and 2 after, 9 x 9 taps in 3 x 3 blocks.
// CHECK-LABEL: func @stride3
// CHECK: kgraph.reshape %arg0 : tensor<1x12x12x3xf16> to tensor<1x4x3x4x3x3xf16>
// CHECK: kgraph.concat %{{.*}}, %{{.*}} axis = 3 : tensor<1x4x4x27xf16>, tensor<1x4x4x5xf16>
// CHECK: kgraph.concat %{{.*}}, %arg1, %{{.*}} axis = 1 : tensor<8x2x5x3xf16>, tensor<8x5x5x3xf16>, tensor<8x2x5x3xf16>
// CHECK: kgraph.conv2d %{{.*}} layout = nhwc padding = [1, 1, 1, 1] : tensor<1x4x4x32xf16>, tensor<8x3x3x32xf16> -> tensor<1x4x4x8xf16>
func.func @stride3(%x: tensor<1x12x12x3xf16>, %w: tensor<8x5x5x3xf16>) -> tensor<1x4x4x8xf16> {
  %0 = kgraph.conv2d %x, %w layout = nhwc strides = [3, 3] padding = [1, 1, 1, 1] : tensor<1x12x12x3xf16>, tensor<8x5x5x3xf16> -> tensor<1x4x4x8xf16>
  return %0 : tensor<1x4x4x8xf16>
}

// -----

// Left alone: stride 1, dilation 2, channels that fill a vector, nchw, a
// depthwise conv (a window op), a 1x1 strided conv (16 channels for 3: more
// than 4 times the work) and a conv already in a group.
// CHECK-LABEL: func @left_alone
// CHECK-NOT: kgraph.transpose
// CHECK-NOT: kgraph.concat
// CHECK: return
func.func @left_alone(%a: tensor<1x9x9x3xf16>, %wa: tensor<8x3x3x3xf16>, %b: tensor<1x9x9x8xf16>, %wb: tensor<8x3x3x8xf16>,
                      %c: tensor<1x3x9x9xf16>, %wc: tensor<8x3x3x3xf16>, %wd: tensor<3x3x3x1xf16>, %we: tensor<8x1x1x3xf16>)
    -> (tensor<1x7x7x8xf16>, tensor<1x3x3x8xf16>, tensor<1x4x4x8xf16>, tensor<1x8x4x4xf16>, tensor<1x4x4x3xf16>, tensor<1x5x5x8xf16>, tensor<1x4x4x8xf16>) {
  %0 = kgraph.conv2d %a, %wa layout = nhwc : tensor<1x9x9x3xf16>, tensor<8x3x3x3xf16> -> tensor<1x7x7x8xf16>
  %1 = kgraph.conv2d %a, %wa layout = nhwc strides = [2, 2] dilations = [2, 2] : tensor<1x9x9x3xf16>, tensor<8x3x3x3xf16> -> tensor<1x3x3x8xf16>
  %2 = kgraph.conv2d %b, %wb layout = nhwc strides = [2, 2] : tensor<1x9x9x8xf16>, tensor<8x3x3x8xf16> -> tensor<1x4x4x8xf16>
  %3 = kgraph.conv2d %c, %wc strides = [2, 2] : tensor<1x3x9x9xf16>, tensor<8x3x3x3xf16> -> tensor<1x8x4x4xf16>
  %4 = kgraph.conv2d %a, %wd layout = nhwc strides = [2, 2] groups = 3 : tensor<1x9x9x3xf16>, tensor<3x3x3x1xf16> -> tensor<1x4x4x3xf16>
  %5 = kgraph.conv2d %a, %we layout = nhwc strides = [2, 2] : tensor<1x9x9x3xf16>, tensor<8x1x1x3xf16> -> tensor<1x5x5x8xf16>
  %6 = kgraph.fused (%a, %wa) : (tensor<1x9x9x3xf16>, tensor<8x3x3x3xf16>) -> tensor<1x4x4x8xf16> {
  ^bb0(%x: tensor<1x9x9x3xf16>, %w: tensor<8x3x3x3xf16>):
    %7 = kgraph.conv2d %x, %w layout = nhwc strides = [2, 2] : tensor<1x9x9x3xf16>, tensor<8x3x3x3xf16> -> tensor<1x4x4x8xf16>
    kgraph.yield %7 : tensor<1x4x4x8xf16>
  }
  return %0, %1, %2, %3, %4, %5, %6 : tensor<1x7x7x8xf16>, tensor<1x3x3x8xf16>, tensor<1x4x4x8xf16>, tensor<1x8x4x4xf16>, tensor<1x4x4x3xf16>, tensor<1x5x5x8xf16>, tensor<1x4x4x8xf16>
}
