// RUN: kgraph-opt %s --canonicalize --split-input-file | FileCheck %s

// CHECK-LABEL: func @reshape_same_shape
// CHECK-SAME: (%[[X:.*]]: tensor<2x3xf32>)
// CHECK-NEXT: return %[[X]]
func.func @reshape_same_shape(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %0 = kgraph.reshape %x : tensor<2x3xf32> to tensor<2x3xf32>
  return %0 : tensor<2x3xf32>
}

// -----

// CHECK-LABEL: func @reshape_of_reshape
// CHECK-SAME: (%[[X:.*]]: tensor<2x3x4xf32>)
// CHECK-NEXT: %[[R:.*]] = kgraph.reshape %[[X]] : tensor<2x3x4xf32> to tensor<4x6xf32>
// CHECK-NEXT: return %[[R]]
func.func @reshape_of_reshape(%x: tensor<2x3x4xf32>) -> tensor<4x6xf32> {
  %0 = kgraph.reshape %x : tensor<2x3x4xf32> to tensor<24xf32>
  %1 = kgraph.reshape %0 : tensor<24xf32> to tensor<4x6xf32>
  return %1 : tensor<4x6xf32>
}

// -----

// A reshape chain back to the original shape disappears.
// CHECK-LABEL: func @reshape_round_trip
// CHECK-SAME: (%[[X:.*]]: tensor<2x3xf32>)
// CHECK-NEXT: return %[[X]]
func.func @reshape_round_trip(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %0 = kgraph.reshape %x : tensor<2x3xf32> to tensor<6xf32>
  %1 = kgraph.reshape %0 : tensor<6xf32> to tensor<3x2xf32>
  %2 = kgraph.reshape %1 : tensor<3x2xf32> to tensor<2x3xf32>
  return %2 : tensor<2x3xf32>
}

// -----

// The inner reshape still has another user, so it stays.
// CHECK-LABEL: func @reshape_of_reshape_shared
// CHECK-SAME: (%[[X:.*]]: tensor<2x3xf32>)
// CHECK-DAG: %[[A:.*]] = kgraph.reshape %[[X]] : tensor<2x3xf32> to tensor<6xf32>
// CHECK-DAG: %[[B:.*]] = kgraph.reshape %[[X]] : tensor<2x3xf32> to tensor<3x2xf32>
// CHECK: return %[[A]], %[[B]]
func.func @reshape_of_reshape_shared(%x: tensor<2x3xf32>) -> (tensor<6xf32>, tensor<3x2xf32>) {
  %0 = kgraph.reshape %x : tensor<2x3xf32> to tensor<6xf32>
  %1 = kgraph.reshape %0 : tensor<6xf32> to tensor<3x2xf32>
  return %0, %1 : tensor<6xf32>, tensor<3x2xf32>
}

// -----

// CHECK-LABEL: func @reshape_splat
// CHECK-NEXT: %[[C:.*]] = arith.constant dense<1.500000e+00> : tensor<6xf32>
// CHECK-NEXT: return %[[C]]
func.func @reshape_splat() -> tensor<6xf32> {
  %c = arith.constant dense<1.5> : tensor<2x3xf32>
  %0 = kgraph.reshape %c : tensor<2x3xf32> to tensor<6xf32>
  return %0 : tensor<6xf32>
}

// -----

// CHECK-LABEL: func @transpose_identity
// CHECK-SAME: (%[[X:.*]]: tensor<2x3x4xf32>)
// CHECK-NEXT: return %[[X]]
func.func @transpose_identity(%x: tensor<2x3x4xf32>) -> tensor<2x3x4xf32> {
  %0 = kgraph.transpose %x, permutation = [0, 1, 2] : tensor<2x3x4xf32>
  return %0 : tensor<2x3x4xf32>
}

// -----

// CHECK-LABEL: func @transpose_of_transpose_identity
// CHECK-SAME: (%[[X:.*]]: tensor<2x3xf32>)
// CHECK-NEXT: return %[[X]]
func.func @transpose_of_transpose_identity(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %0 = kgraph.transpose %x, permutation = [1, 0] : tensor<2x3xf32>
  %1 = kgraph.transpose %0, permutation = [1, 0] : tensor<3x2xf32>
  return %1 : tensor<2x3xf32>
}

// -----

// [2x3x4] -[1, 2, 0]-> [3x4x2] -[1, 2, 0]-> [4x2x3], which is [2, 0, 1] of x.
// CHECK-LABEL: func @transpose_of_transpose
// CHECK-SAME: (%[[X:.*]]: tensor<2x3x4xf32>)
// CHECK-NEXT: %[[T:.*]] = kgraph.transpose %[[X]], permutation = [2, 0, 1] : tensor<2x3x4xf32>
// CHECK-NEXT: return %[[T]] : tensor<4x2x3xf32>
func.func @transpose_of_transpose(%x: tensor<2x3x4xf32>) -> tensor<4x2x3xf32> {
  %0 = kgraph.transpose %x, permutation = [1, 2, 0] : tensor<2x3x4xf32>
  %1 = kgraph.transpose %0, permutation = [1, 2, 0] : tensor<3x4x2xf32>
  return %1 : tensor<4x2x3xf32>
}

// -----

// Three transposes whose composition is the identity.
// CHECK-LABEL: func @transpose_chain_identity
// CHECK-SAME: (%[[X:.*]]: tensor<2x3x4xf32>)
// CHECK-NEXT: return %[[X]]
func.func @transpose_chain_identity(%x: tensor<2x3x4xf32>) -> tensor<2x3x4xf32> {
  %0 = kgraph.transpose %x, permutation = [1, 2, 0] : tensor<2x3x4xf32>
  %1 = kgraph.transpose %0, permutation = [1, 2, 0] : tensor<3x4x2xf32>
  %2 = kgraph.transpose %1, permutation = [1, 2, 0] : tensor<4x2x3xf32>
  return %2 : tensor<2x3x4xf32>
}

// -----

// CHECK-LABEL: func @transpose_splat
// CHECK-NEXT: %[[C:.*]] = arith.constant dense<true> : tensor<3x2xi1>
// CHECK-NEXT: return %[[C]]
func.func @transpose_splat() -> tensor<3x2xi1> {
  %c = arith.constant dense<true> : tensor<2x3xi1>
  %0 = kgraph.transpose %c, permutation = [1, 0] : tensor<2x3xi1>
  return %0 : tensor<3x2xi1>
}

// -----

// CHECK-LABEL: func @broadcast_same_shape
// CHECK-SAME: (%[[X:.*]]: tensor<4x8xf32>)
// CHECK-NEXT: return %[[X]]
func.func @broadcast_same_shape(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %0 = kgraph.broadcast_to %x : tensor<4x8xf32> to tensor<4x8xf32>
  return %0 : tensor<4x8xf32>
}

// -----

// CHECK-LABEL: func @broadcast_of_broadcast
// CHECK-SAME: (%[[X:.*]]: tensor<8xf32>)
// CHECK-NEXT: %[[B:.*]] = kgraph.broadcast_to %[[X]] : tensor<8xf32> to tensor<2x4x8xf32>
// CHECK-NEXT: return %[[B]]
func.func @broadcast_of_broadcast(%x: tensor<8xf32>) -> tensor<2x4x8xf32> {
  %0 = kgraph.broadcast_to %x : tensor<8xf32> to tensor<1x8xf32>
  %1 = kgraph.broadcast_to %0 : tensor<1x8xf32> to tensor<4x8xf32>
  %2 = kgraph.broadcast_to %1 : tensor<4x8xf32> to tensor<2x4x8xf32>
  return %2 : tensor<2x4x8xf32>
}

// -----

// CHECK-LABEL: func @broadcast_splat
// CHECK-NEXT: %[[C:.*]] = arith.constant dense<3> : tensor<4x8xi32>
// CHECK-NEXT: return %[[C]]
func.func @broadcast_splat() -> tensor<4x8xi32> {
  %c = arith.constant dense<3> : tensor<1x8xi32>
  %0 = kgraph.broadcast_to %c : tensor<1x8xi32> to tensor<4x8xi32>
  return %0 : tensor<4x8xi32>
}

// -----

// CHECK-LABEL: func @slice_full
// CHECK-SAME: (%[[X:.*]]: tensor<4x8xf32>)
// CHECK-NEXT: return %[[X]]
func.func @slice_full(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %0 = kgraph.slice %x offsets = [0, 0] sizes = [4, 8] strides = [1, 1] : tensor<4x8xf32>
  return %0 : tensor<4x8xf32>
}

// -----

// A size-1 dim is covered whatever its stride.
// CHECK-LABEL: func @slice_full_unit_dim
// CHECK-SAME: (%[[X:.*]]: tensor<1x8xf32>)
// CHECK-NEXT: return %[[X]]
func.func @slice_full_unit_dim(%x: tensor<1x8xf32>) -> tensor<1x8xf32> {
  %0 = kgraph.slice %x offsets = [0, 0] sizes = [1, 8] strides = [5, 1] : tensor<1x8xf32>
  return %0 : tensor<1x8xf32>
}

// -----

// Not the whole tensor: a non-zero offset, or a stride other than 1.
// CHECK-LABEL: func @slice_partial
// CHECK-COUNT-2: kgraph.slice
// CHECK-NOT: kgraph.slice
func.func @slice_partial(%x: tensor<4x8xf32>) -> (tensor<2x8xf32>, tensor<2x8xf32>) {
  %0 = kgraph.slice %x offsets = [2, 0] sizes = [2, 8] strides = [1, 1] : tensor<4x8xf32>
  %1 = kgraph.slice %x offsets = [0, 0] sizes = [2, 8] strides = [2, 1] : tensor<4x8xf32>
  return %0, %1 : tensor<2x8xf32>, tensor<2x8xf32>
}

// -----

// CHECK-LABEL: func @slice_splat
// CHECK-NEXT: %[[C:.*]] = arith.constant dense<2.000000e+00> : tensor<2x3xf16>
// CHECK-NEXT: return %[[C]]
func.func @slice_splat() -> tensor<2x3xf16> {
  %c = arith.constant dense<2.0> : tensor<4x8xf16>
  %0 = kgraph.slice %c offsets = [1, 2] sizes = [2, 3] strides = [1, 2] : tensor<4x8xf16>
  return %0 : tensor<2x3xf16>
}

// -----

// CHECK-LABEL: func @concat_single
// CHECK-SAME: (%[[X:.*]]: tensor<4x8xf32>)
// CHECK-NEXT: return %[[X]]
func.func @concat_single(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %0 = kgraph.concat %x axis = 1 : tensor<4x8xf32>
  return %0 : tensor<4x8xf32>
}

// -----

// CHECK-LABEL: func @reduce_no_axes
// CHECK-SAME: (%[[X:.*]]: tensor<4x8xf32>)
// CHECK-NEXT: return %[[X]]
func.func @reduce_no_axes(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %0 = kgraph.reduce sum %x axes = [] : tensor<4x8xf32>
  return %0 : tensor<4x8xf32>
}

// -----

// Ops that change something are kept.
// CHECK-LABEL: func @kept
// CHECK: kgraph.reshape
// CHECK: kgraph.transpose
// CHECK: kgraph.broadcast_to
// CHECK: kgraph.concat
// CHECK: kgraph.reduce
func.func @kept(%x: tensor<2x3xf32>, %b: tensor<1x3xf32>) -> (tensor<6xf32>, tensor<3x2xf32>, tensor<2x3xf32>, tensor<3x3xf32>, tensor<2xf32>) {
  %0 = kgraph.reshape %x : tensor<2x3xf32> to tensor<6xf32>
  %1 = kgraph.transpose %x, permutation = [1, 0] : tensor<2x3xf32>
  %2 = kgraph.broadcast_to %b : tensor<1x3xf32> to tensor<2x3xf32>
  %3 = kgraph.concat %x, %b axis = 0 : tensor<2x3xf32>, tensor<1x3xf32>
  %4 = kgraph.reduce sum %x axes = [1] : tensor<2x3xf32>
  return %0, %1, %2, %3, %4 : tensor<6xf32>, tensor<3x2xf32>, tensor<2x3xf32>, tensor<3x3xf32>, tensor<2xf32>
}
