// RUN: kgraph-opt %s | FileCheck %s
// RUN: kgraph-opt %s --mlir-print-op-generic | FileCheck %s --check-prefix=GENERIC

// Structured ops written in generic form: attributes with defaults may be
// omitted, and the custom form is printed back.

// A plain matmul has no attributes at all.
// CHECK-LABEL: func @matmul_no_attrs
// CHECK: kgraph.matmul %{{.*}}, %{{.*}} : tensor<4x8xf16>, tensor<8x16xf16> -> tensor<4x16xf32>
// GENERIC-LABEL: sym_name = "matmul_no_attrs"
// GENERIC: "kgraph.matmul"(%{{.*}}, %{{.*}}) : (tensor<4x8xf16>, tensor<8x16xf16>) -> tensor<4x16xf32>
func.func @matmul_no_attrs(%a: tensor<4x8xf16>, %b: tensor<8x16xf16>) -> tensor<4x16xf32> {
  %0 = "kgraph.matmul"(%a, %b) : (tensor<4x8xf16>, tensor<8x16xf16>) -> tensor<4x16xf32>
  return %0 : tensor<4x16xf32>
}

// CHECK-LABEL: func @matmul_attrs
// CHECK: kgraph.matmul %{{.*}}, %{{.*}} precision = tf32 {transpose_b} : tensor<64x32xf32>, tensor<128x32xf32> -> tensor<64x128xf32>
// GENERIC-LABEL: sym_name = "matmul_attrs"
// GENERIC: "kgraph.matmul"(%{{.*}}, %{{.*}}) <{precision = #kgraph<precision tf32>, transpose_b}>
func.func @matmul_attrs(%a: tensor<64x32xf32>, %b: tensor<128x32xf32>) -> tensor<64x128xf32> {
  %0 = "kgraph.matmul"(%a, %b) <{transpose_b, precision = #kgraph<precision tf32>}> : (tensor<64x32xf32>, tensor<128x32xf32>) -> tensor<64x128xf32>
  return %0 : tensor<64x128xf32>
}

// CHECK-LABEL: func @conv2d_no_attrs
// CHECK: kgraph.conv2d %{{.*}}, %{{.*}} : tensor<1x3x8x8xf32>, tensor<16x3x3x3xf32> -> tensor<1x16x6x6xf32>
func.func @conv2d_no_attrs(%x: tensor<1x3x8x8xf32>, %w: tensor<16x3x3x3xf32>) -> tensor<1x16x6x6xf32> {
  %0 = "kgraph.conv2d"(%x, %w) : (tensor<1x3x8x8xf32>, tensor<16x3x3x3xf32>) -> tensor<1x16x6x6xf32>
  return %0 : tensor<1x16x6x6xf32>
}

// CHECK-LABEL: func @conv2d_attrs
// CHECK: kgraph.conv2d %{{.*}}, %{{.*}} layout = nhwc strides = [2, 2] padding = [1, 1, 1, 1] : tensor<1x8x8x4xf16>, tensor<8x3x3x4xf16> -> tensor<1x4x4x8xf16>
// GENERIC-LABEL: sym_name = "conv2d_attrs"
// GENERIC: "kgraph.conv2d"(%{{.*}}, %{{.*}}) <{{{.*}}layout = #kgraph<layout nhwc>, padding = array<i64: 1, 1, 1, 1>, strides = array<i64: 2, 2>}>
func.func @conv2d_attrs(%x: tensor<1x8x8x4xf16>, %w: tensor<8x3x3x4xf16>) -> tensor<1x4x4x8xf16> {
  %0 = "kgraph.conv2d"(%x, %w) <{layout = #kgraph<layout nhwc>, strides = array<i64: 2, 2>, padding = array<i64: 1, 1, 1, 1>}> : (tensor<1x8x8x4xf16>, tensor<8x3x3x4xf16>) -> tensor<1x4x4x8xf16>
  return %0 : tensor<1x4x4x8xf16>
}

// CHECK-LABEL: func @pool2d
// CHECK: kgraph.pool2d avg %{{.*}} kernel = [2, 2] strides = [2, 2] : tensor<1x3x8x8xbf16>
// GENERIC-LABEL: sym_name = "pool2d"
// GENERIC: "kgraph.pool2d"(%{{.*}}) <{{{.*}}kernel = array<i64: 2, 2>, kind = #kgraph<pool_kind avg>{{.*}}}> : (tensor<1x3x8x8xbf16>) -> tensor<1x3x4x4xbf16>
func.func @pool2d(%x: tensor<1x3x8x8xbf16>) -> tensor<1x3x4x4xbf16> {
  %0 = "kgraph.pool2d"(%x) <{kind = #kgraph<pool_kind avg>, kernel = array<i64: 2, 2>, strides = array<i64: 2, 2>}> : (tensor<1x3x8x8xbf16>) -> tensor<1x3x4x4xbf16>
  return %0 : tensor<1x3x4x4xbf16>
}

// CHECK-LABEL: func @reduce
// CHECK: kgraph.reduce sum %{{.*}} axes = [0] keep_dims : tensor<4x8xf32>
// GENERIC-LABEL: sym_name = "reduce"
// GENERIC: "kgraph.reduce"(%{{.*}}) <{axes = array<i64: 0>, keep_dims, kind = #kgraph<reduce_kind sum>}> : (tensor<4x8xf32>) -> tensor<1x8xf32>
func.func @reduce(%x: tensor<4x8xf32>) -> tensor<1x8xf32> {
  %0 = "kgraph.reduce"(%x) <{kind = #kgraph<reduce_kind sum>, axes = array<i64: 0>, keep_dims}> : (tensor<4x8xf32>) -> tensor<1x8xf32>
  return %0 : tensor<1x8xf32>
}
