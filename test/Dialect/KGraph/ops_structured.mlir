// RUN: kgraph-opt %s | kgraph-opt | FileCheck %s
// RUN: kgraph-opt %s --mlir-print-op-generic | kgraph-opt | FileCheck %s

// CHECK-LABEL: func @matmul
// CHECK-SAME: (%[[A:.*]]: tensor<4x8xf16>, %[[B:.*]]: tensor<8x16xf16>
func.func @matmul(%a: tensor<4x8xf16>, %b: tensor<8x16xf16>) -> (tensor<4x16xf32>, tensor<4x16xf16>) {
  // CHECK: kgraph.matmul %[[A]], %[[B]] : tensor<4x8xf16>, tensor<8x16xf16> -> tensor<4x16xf32>
  %0 = kgraph.matmul %a, %b : tensor<4x8xf16>, tensor<8x16xf16> -> tensor<4x16xf32>
  // CHECK: kgraph.matmul %[[A]], %[[B]] : tensor<4x8xf16>, tensor<8x16xf16> -> tensor<4x16xf16>
  %1 = kgraph.matmul %a, %b : tensor<4x8xf16>, tensor<8x16xf16> -> tensor<4x16xf16>
  return %0, %1 : tensor<4x16xf32>, tensor<4x16xf16>
}

// CHECK-LABEL: func @matmul_transposed
func.func @matmul_transposed(%a: tensor<64x32xf16>, %bt: tensor<128x32xf16>, %at: tensor<32x64xbf16>, %b: tensor<32x128xbf16>) -> (tensor<64x128xf32>, tensor<64x128xbf16>) {
  // CHECK: kgraph.matmul %{{.*}}, %{{.*}} {transpose_b} : tensor<64x32xf16>, tensor<128x32xf16> -> tensor<64x128xf32>
  %0 = kgraph.matmul %a, %bt {transpose_b} : tensor<64x32xf16>, tensor<128x32xf16> -> tensor<64x128xf32>
  // CHECK: kgraph.matmul %{{.*}}, %{{.*}} {transpose_a} : tensor<32x64xbf16>, tensor<32x128xbf16> -> tensor<64x128xbf16>
  %1 = kgraph.matmul %at, %b {transpose_a} : tensor<32x64xbf16>, tensor<32x128xbf16> -> tensor<64x128xbf16>
  return %0, %1 : tensor<64x128xf32>, tensor<64x128xbf16>
}

// CHECK-LABEL: func @matmul_both_transposed_i8
func.func @matmul_both_transposed_i8(%at: tensor<32x64xi8>, %bt: tensor<16x32xi8>) -> tensor<64x16xi32> {
  // CHECK: kgraph.matmul %{{.*}}, %{{.*}} {transpose_a, transpose_b} : tensor<32x64xi8>, tensor<16x32xi8> -> tensor<64x16xi32>
  %0 = kgraph.matmul %at, %bt {transpose_a, transpose_b} : tensor<32x64xi8>, tensor<16x32xi8> -> tensor<64x16xi32>
  return %0 : tensor<64x16xi32>
}

// CHECK-LABEL: func @matmul_batched_tf32
func.func @matmul_batched_tf32(%x: tensor<2x4x8xf32>, %y: tensor<2x8x16xf32>) -> (tensor<2x4x16xf32>, tensor<2x4x16xf32>) {
  // CHECK: kgraph.matmul %{{.*}}, %{{.*}} precision = tf32 : tensor<2x4x8xf32>, tensor<2x8x16xf32> -> tensor<2x4x16xf32>
  %0 = kgraph.matmul %x, %y precision = tf32 : tensor<2x4x8xf32>, tensor<2x8x16xf32> -> tensor<2x4x16xf32>
  // CHECK: kgraph.matmul %{{.*}}, %{{.*}} precision = ieee : tensor<2x4x8xf32>, tensor<2x8x16xf32> -> tensor<2x4x16xf32>
  %1 = kgraph.matmul %x, %y precision = ieee : tensor<2x4x8xf32>, tensor<2x8x16xf32> -> tensor<2x4x16xf32>
  return %0, %1 : tensor<2x4x16xf32>, tensor<2x4x16xf32>
}

// Default attributes are not printed.
// CHECK-LABEL: func @conv2d_defaults
func.func @conv2d_defaults(%x: tensor<1x3x8x8xf32>, %w: tensor<16x3x3x3xf32>) -> tensor<1x16x6x6xf32> {
  // CHECK: kgraph.conv2d %{{.*}}, %{{.*}} : tensor<1x3x8x8xf32>, tensor<16x3x3x3xf32> -> tensor<1x16x6x6xf32>
  %0 = kgraph.conv2d %x, %w layout = nchw strides = [1, 1] padding = [0, 0, 0, 0] dilations = [1, 1] groups = 1 : tensor<1x3x8x8xf32>, tensor<16x3x3x3xf32> -> tensor<1x16x6x6xf32>
  return %0 : tensor<1x16x6x6xf32>
}

// CHECK-LABEL: func @conv2d_nchw
func.func @conv2d_nchw(%x: tensor<1x3x224x224xf16>, %w: tensor<64x3x3x3xf16>) -> tensor<1x64x112x112xf32> {
  // CHECK: kgraph.conv2d %{{.*}}, %{{.*}} strides = [2, 2] padding = [1, 1, 1, 1] precision = ieee : tensor<1x3x224x224xf16>, tensor<64x3x3x3xf16> -> tensor<1x64x112x112xf32>
  %0 = kgraph.conv2d %x, %w strides = [2, 2] padding = [1, 1, 1, 1] precision = ieee : tensor<1x3x224x224xf16>, tensor<64x3x3x3xf16> -> tensor<1x64x112x112xf32>
  return %0 : tensor<1x64x112x112xf32>
}

// Depthwise, nhwc: the filter is [F, KH, KW, C/groups].
// CHECK-LABEL: func @conv2d_nhwc_depthwise
func.func @conv2d_nhwc_depthwise(%x: tensor<1x56x56x32xf32>, %w: tensor<32x3x3x1xf32>) -> tensor<1x54x54x32xf32> {
  // CHECK: kgraph.conv2d %{{.*}}, %{{.*}} layout = nhwc groups = 32 precision = tf32 : tensor<1x56x56x32xf32>, tensor<32x3x3x1xf32> -> tensor<1x54x54x32xf32>
  %0 = kgraph.conv2d %x, %w layout = nhwc groups = 32 precision = tf32 : tensor<1x56x56x32xf32>, tensor<32x3x3x1xf32> -> tensor<1x54x54x32xf32>
  return %0 : tensor<1x54x54x32xf32>
}

// Dilation 2 makes the 3x3 kernel span 5; asymmetric padding; grouped.
// (10 + 0 + 1 - 2*2 - 1) / 1 + 1 = 7 and (12 + 2 + 0 - 2*2 - 1) / 2 + 1 = 5.
// CHECK-LABEL: func @conv2d_dilated_grouped
func.func @conv2d_dilated_grouped(%x: tensor<2x8x10x12xi8>, %w: tensor<4x4x3x3xi8>) -> tensor<2x4x7x5xi32> {
  // CHECK: kgraph.conv2d %{{.*}}, %{{.*}} strides = [1, 2] padding = [0, 1, 2, 0] dilations = [2, 2] groups = 2 : tensor<2x8x10x12xi8>, tensor<4x4x3x3xi8> -> tensor<2x4x7x5xi32>
  %0 = kgraph.conv2d %x, %w strides = [1, 2] padding = [0, 1, 2, 0] dilations = [2, 2] groups = 2 : tensor<2x8x10x12xi8>, tensor<4x4x3x3xi8> -> tensor<2x4x7x5xi32>
  return %0 : tensor<2x4x7x5xi32>
}

// CHECK-LABEL: func @pool2d
func.func @pool2d(%x: tensor<1x16x32x32xf16>, %y: tensor<1x8x8x4xf32>, %z: tensor<1x4x7x7xi8>) -> (tensor<1x16x16x16xf16>, tensor<1x8x8x4xf32>, tensor<1x4x3x3xi8>) {
  // CHECK: kgraph.pool2d max %{{.*}} kernel = [2, 2] strides = [2, 2] : tensor<1x16x32x32xf16>
  %0 = kgraph.pool2d max %x kernel = [2, 2] strides = [2, 2] : tensor<1x16x32x32xf16>
  // CHECK: kgraph.pool2d avg %{{.*}} kernel = [3, 3] padding = [1, 1, 1, 1] layout = nhwc : tensor<1x8x8x4xf32>
  %1 = kgraph.pool2d avg %y kernel = [3, 3] padding = [1, 1, 1, 1] layout = nhwc : tensor<1x8x8x4xf32>
  // floor((7 - 3) / 2) + 1 = 3
  // CHECK: kgraph.pool2d max %{{.*}} kernel = [3, 3] strides = [2, 2] : tensor<1x4x7x7xi8>
  %2 = kgraph.pool2d max %z kernel = [3, 3] strides = [2, 2] layout = nchw : tensor<1x4x7x7xi8>
  return %0, %1, %2 : tensor<1x16x16x16xf16>, tensor<1x8x8x4xf32>, tensor<1x4x3x3xi8>
}

// CHECK-LABEL: func @reduce
func.func @reduce(%x: tensor<4x8x2xf32>, %i: tensor<4x8xi32>) -> (tensor<4x2xf32>, tensor<1x8x1xf32>, tensor<f32>, tensor<4xi32>) {
  // CHECK: kgraph.reduce sum %{{.*}} axes = [1] : tensor<4x8x2xf32>
  %0 = kgraph.reduce sum %x axes = [1] : tensor<4x8x2xf32>
  // CHECK: kgraph.reduce mean %{{.*}} axes = [2, 0] keep_dims : tensor<4x8x2xf32>
  %1 = kgraph.reduce mean %x axes = [2, 0] keep_dims : tensor<4x8x2xf32>
  // CHECK: kgraph.reduce max %{{.*}} axes = [0, 1, 2] : tensor<4x8x2xf32>
  %2 = kgraph.reduce max %x axes = [0, 1, 2] : tensor<4x8x2xf32>
  // CHECK: kgraph.reduce max %{{.*}} axes = [1] : tensor<4x8xi32>
  %3 = kgraph.reduce max %i axes = [1] : tensor<4x8xi32>
  return %0, %1, %2, %3 : tensor<4x2xf32>, tensor<1x8x1xf32>, tensor<f32>, tensor<4xi32>
}
