// RUN: kgraph-opt %s | kgraph-opt | FileCheck %s
// RUN: kgraph-opt %s --mlir-print-op-generic | kgraph-opt | FileCheck %s
// RUN: kgraph-opt %s --mlir-print-op-generic | FileCheck %s --check-prefix=GENERIC

// CHECK-LABEL: func @reshape
// GENERIC-LABEL: sym_name = "reshape"
func.func @reshape(%x: tensor<2x3xf32>, %m: tensor<4x1xi1>) -> (tensor<6xf32>, tensor<2x2xi1>) {
  // CHECK: kgraph.reshape %{{.*}} : tensor<2x3xf32> to tensor<6xf32>
  // GENERIC: "kgraph.reshape"(%{{.*}}) : (tensor<2x3xf32>) -> tensor<6xf32>
  %0 = kgraph.reshape %x : tensor<2x3xf32> to tensor<6xf32>
  // CHECK: kgraph.reshape %{{.*}} : tensor<4x1xi1> to tensor<2x2xi1>
  %1 = kgraph.reshape %m : tensor<4x1xi1> to tensor<2x2xi1>
  return %0, %1 : tensor<6xf32>, tensor<2x2xi1>
}

// CHECK-LABEL: func @transpose
// GENERIC-LABEL: sym_name = "transpose"
func.func @transpose(%x: tensor<2x3xf32>, %y: tensor<2x3x4xf16>) -> (tensor<3x2xf32>, tensor<4x2x3xf16>) {
  // CHECK: kgraph.transpose %{{.*}}, permutation = [1, 0] : tensor<2x3xf32>
  // GENERIC: "kgraph.transpose"(%{{.*}}) <{permutation = array<i64: 1, 0>}> : (tensor<2x3xf32>) -> tensor<3x2xf32>
  %0 = kgraph.transpose %x, permutation = [1, 0] : tensor<2x3xf32>
  // result dim i is input dim permutation[i]: [4, 2, 3]
  // CHECK: kgraph.transpose %{{.*}}, permutation = [2, 0, 1] : tensor<2x3x4xf16>
  // GENERIC: "kgraph.transpose"(%{{.*}}) <{permutation = array<i64: 2, 0, 1>}> : (tensor<2x3x4xf16>) -> tensor<4x2x3xf16>
  %1 = kgraph.transpose %y, permutation = [2, 0, 1] : tensor<2x3x4xf16>
  return %0, %1 : tensor<3x2xf32>, tensor<4x2x3xf16>
}

// CHECK-LABEL: func @slice
// GENERIC-LABEL: sym_name = "slice"
func.func @slice(%x: tensor<8x8xf32>) -> (tensor<4x3xf32>, tensor<1x8xf32>) {
  // Columns 2, 4, 6 of rows 0..3.
  // CHECK: kgraph.slice %{{.*}} offsets = [0, 2] sizes = [4, 3] strides = [1, 2] : tensor<8x8xf32>
  // GENERIC: "kgraph.slice"(%{{.*}}) <{offsets = array<i64: 0, 2>, sizes = array<i64: 4, 3>, strides = array<i64: 1, 2>}> : (tensor<8x8xf32>) -> tensor<4x3xf32>
  %0 = kgraph.slice %x offsets = [0, 2] sizes = [4, 3] strides = [1, 2] : tensor<8x8xf32>
  // The last row.
  // CHECK: kgraph.slice %{{.*}} offsets = [7, 0] sizes = [1, 8] strides = [1, 1] : tensor<8x8xf32>
  %1 = kgraph.slice %x offsets = [7, 0] sizes = [1, 8] strides = [1, 1] : tensor<8x8xf32>
  return %0, %1 : tensor<4x3xf32>, tensor<1x8xf32>
}

// CHECK-LABEL: func @concat
// GENERIC-LABEL: sym_name = "concat"
func.func @concat(%a: tensor<2x3xf32>, %b: tensor<2x5xf32>, %c: tensor<2x1xf32>) -> (tensor<2x9xf32>, tensor<4x3xf32>) {
  // CHECK: kgraph.concat %{{.*}}, %{{.*}}, %{{.*}} axis = 1 : tensor<2x3xf32>, tensor<2x5xf32>, tensor<2x1xf32>
  // GENERIC: "kgraph.concat"(%{{.*}}, %{{.*}}, %{{.*}}) <{axis = 1 : i64}> : (tensor<2x3xf32>, tensor<2x5xf32>, tensor<2x1xf32>) -> tensor<2x9xf32>
  %0 = kgraph.concat %a, %b, %c axis = 1 : tensor<2x3xf32>, tensor<2x5xf32>, tensor<2x1xf32>
  // CHECK: kgraph.concat %{{.*}}, %{{.*}} axis = 0 : tensor<2x3xf32>, tensor<2x3xf32>
  %1 = kgraph.concat %a, %a axis = 0 : tensor<2x3xf32>, tensor<2x3xf32>
  return %0, %1 : tensor<2x9xf32>, tensor<4x3xf32>
}

// CHECK-LABEL: func @broadcast_to
// GENERIC-LABEL: sym_name = "broadcast_to"
func.func @broadcast_to(%x: tensor<1x8xf32>, %b: tensor<8xi8>) -> (tensor<4x8xf32>, tensor<2x4x8xi8>) {
  // CHECK: kgraph.broadcast_to %{{.*}} : tensor<1x8xf32> to tensor<4x8xf32>
  // GENERIC: "kgraph.broadcast_to"(%{{.*}}) : (tensor<1x8xf32>) -> tensor<4x8xf32>
  %0 = kgraph.broadcast_to %x : tensor<1x8xf32> to tensor<4x8xf32>
  // CHECK: kgraph.broadcast_to %{{.*}} : tensor<8xi8> to tensor<2x4x8xi8>
  %1 = kgraph.broadcast_to %b : tensor<8xi8> to tensor<2x4x8xi8>
  return %0, %1 : tensor<4x8xf32>, tensor<2x4x8xi8>
}
