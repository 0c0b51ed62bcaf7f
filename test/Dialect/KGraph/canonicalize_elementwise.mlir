// RUN: kgraph-opt %s --canonicalize --split-input-file | FileCheck %s

// Folds of the elementwise ops. None may change a result type: an identity
// operand is only forwarded when it already has the (broadcast) result type.

// CHECK-LABEL: func @cast_same_type
// CHECK-SAME: (%[[X:.*]]: tensor<8xf32>)
// CHECK-NOT: kgraph.cast
// CHECK: return %[[X]]
func.func @cast_same_type(%x: tensor<8xf32>) -> tensor<8xf32> {
  %0 = kgraph.cast %x : tensor<8xf32> to tensor<8xf32>
  return %0 : tensor<8xf32>
}

// -----

// A real conversion stays.
// CHECK-LABEL: func @cast_other_type
// CHECK: %[[C:.*]] = kgraph.cast %{{.*}} : tensor<8xf32> to tensor<8xf16>
// CHECK: return %[[C]]
func.func @cast_other_type(%x: tensor<8xf32>) -> tensor<8xf16> {
  %0 = kgraph.cast %x : tensor<8xf32> to tensor<8xf16>
  return %0 : tensor<8xf16>
}

// -----

// CHECK-LABEL: func @relu_relu
// CHECK-SAME: (%[[X:.*]]: tensor<8xi8>)
// CHECK: %[[R:.*]] = kgraph.relu %[[X]] : tensor<8xi8>
// CHECK-NOT: kgraph.relu
// CHECK: return %[[R]]
func.func @relu_relu(%x: tensor<8xi8>) -> tensor<8xi8> {
  %0 = kgraph.relu %x : tensor<8xi8>
  %1 = kgraph.relu %0 : tensor<8xi8>
  return %1 : tensor<8xi8>
}

// -----

// CHECK-LABEL: func @abs_abs
// CHECK-SAME: (%[[X:.*]]: tensor<4x8xf16>)
// CHECK: %[[A:.*]] = kgraph.abs %[[X]] : tensor<4x8xf16>
// CHECK-NOT: kgraph.abs
// CHECK: return %[[A]]
func.func @abs_abs(%x: tensor<4x8xf16>) -> tensor<4x8xf16> {
  %0 = kgraph.abs %x : tensor<4x8xf16>
  %1 = kgraph.abs %0 : tensor<4x8xf16>
  return %1 : tensor<4x8xf16>
}

// -----

// CHECK-LABEL: func @neg_neg
// CHECK-SAME: (%[[X:.*]]: tensor<8xi32>)
// CHECK-NOT: kgraph.neg
// CHECK: return %[[X]]
func.func @neg_neg(%x: tensor<8xi32>) -> tensor<8xi32> {
  %0 = kgraph.neg %x : tensor<8xi32>
  %1 = kgraph.neg %0 : tensor<8xi32>
  return %1 : tensor<8xi32>
}

// -----

// An odd number of negations keeps one.
// CHECK-LABEL: func @neg_neg_neg
// CHECK-SAME: (%[[X:.*]]: tensor<8xf32>)
// CHECK: %[[N:.*]] = kgraph.neg %[[X]] : tensor<8xf32>
// CHECK-NOT: kgraph.neg
// CHECK: return %[[N]]
func.func @neg_neg_neg(%x: tensor<8xf32>) -> tensor<8xf32> {
  %0 = kgraph.neg %x : tensor<8xf32>
  %1 = kgraph.neg %0 : tensor<8xf32>
  %2 = kgraph.neg %1 : tensor<8xf32>
  return %2 : tensor<8xf32>
}

// -----

// relu(abs(x)) is not one of the patterns: both ops stay.
// CHECK-LABEL: func @relu_abs_kept
// CHECK: kgraph.abs
// CHECK: kgraph.relu
func.func @relu_abs_kept(%x: tensor<8xf32>) -> tensor<8xf32> {
  %0 = kgraph.abs %x : tensor<8xf32>
  %1 = kgraph.relu %0 : tensor<8xf32>
  return %1 : tensor<8xf32>
}

// -----

// CHECK-LABEL: func @add_zero_rhs
// CHECK-SAME: (%[[X:.*]]: tensor<4x8xf32>)
// CHECK-NOT: kgraph.add
// CHECK: return %[[X]]
func.func @add_zero_rhs(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %zero = arith.constant dense<0.0> : tensor<4x8xf32>
  %0 = kgraph.add %x, %zero : tensor<4x8xf32>, tensor<4x8xf32>
  return %0 : tensor<4x8xf32>
}

// -----

// Zero on the left, broadcast from a smaller shape: the result type is still
// the type of %x.
// CHECK-LABEL: func @add_zero_lhs_broadcast
// CHECK-SAME: (%[[X:.*]]: tensor<4x8xf32>)
// CHECK-NOT: kgraph.add
// CHECK: return %[[X]]
func.func @add_zero_lhs_broadcast(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %zero = arith.constant dense<0.0> : tensor<8xf32>
  %0 = kgraph.add %zero, %x : tensor<8xf32>, tensor<4x8xf32>
  return %0 : tensor<4x8xf32>
}

// -----

// -0.0 and integer zeros are zeros too.
// CHECK-LABEL: func @add_zero_kinds
// CHECK-SAME: (%[[X:.*]]: tensor<8xf16>, %[[I:.*]]: tensor<2x3xi32>)
// CHECK-NOT: kgraph.add
// CHECK: return %[[X]], %[[I]]
func.func @add_zero_kinds(%x: tensor<8xf16>, %i: tensor<2x3xi32>)
    -> (tensor<8xf16>, tensor<2x3xi32>) {
  %nzero = arith.constant dense<-0.0> : tensor<f16>
  %izero = arith.constant dense<0> : tensor<2x3xi32>
  %0 = kgraph.add %x, %nzero : tensor<8xf16>, tensor<f16>
  %1 = kgraph.add %izero, %i : tensor<2x3xi32>, tensor<2x3xi32>
  return %0, %1 : tensor<8xf16>, tensor<2x3xi32>
}

// -----

// Adding zero would broadcast %x to a larger shape: no fold.
// CHECK-LABEL: func @add_zero_changes_shape
// CHECK: %[[R:.*]] = kgraph.add %{{.*}}, %{{.*}} : tensor<8xf32>, tensor<4x8xf32>
// CHECK: return %[[R]]
func.func @add_zero_changes_shape(%x: tensor<8xf32>) -> tensor<4x8xf32> {
  %zero = arith.constant dense<0.0> : tensor<4x8xf32>
  %0 = kgraph.add %x, %zero : tensor<8xf32>, tensor<4x8xf32>
  return %0 : tensor<4x8xf32>
}

// -----

// A non-zero splat, or a non-splat constant, does not fold.
// CHECK-LABEL: func @add_nonzero
// CHECK-COUNT-2: kgraph.add
func.func @add_nonzero(%x: tensor<2xf32>) -> (tensor<2xf32>, tensor<2xf32>) {
  %one = arith.constant dense<1.0> : tensor<2xf32>
  %mixed = arith.constant dense<[0.0, 1.0]> : tensor<2xf32>
  %0 = kgraph.add %x, %one : tensor<2xf32>, tensor<2xf32>
  %1 = kgraph.add %x, %mixed : tensor<2xf32>, tensor<2xf32>
  return %0, %1 : tensor<2xf32>, tensor<2xf32>
}

// -----

// CHECK-LABEL: func @mul_one
// CHECK-SAME: (%[[X:.*]]: tensor<4x8xbf16>, %[[Q:.*]]: tensor<8xi8>)
// CHECK-NOT: kgraph.mul
// CHECK: return %[[X]], %[[Q]]
func.func @mul_one(%x: tensor<4x8xbf16>, %q: tensor<8xi8>)
    -> (tensor<4x8xbf16>, tensor<8xi8>) {
  %one = arith.constant dense<1.0> : tensor<1x8xbf16>
  %ione = arith.constant dense<1> : tensor<8xi8>
  %0 = kgraph.mul %one, %x : tensor<1x8xbf16>, tensor<4x8xbf16>
  %1 = kgraph.mul %q, %ione : tensor<8xi8>, tensor<8xi8>
  return %0, %1 : tensor<4x8xbf16>, tensor<8xi8>
}

// -----

// Multiplying by one would broadcast %x: no fold. Multiplying by zero is not
// folded either (NaN * 0 is NaN).
// CHECK-LABEL: func @mul_no_fold
// CHECK-COUNT-2: kgraph.mul
func.func @mul_no_fold(%x: tensor<8xf32>) -> (tensor<2x8xf32>, tensor<8xf32>) {
  %one = arith.constant dense<1.0> : tensor<2x8xf32>
  %zero = arith.constant dense<0.0> : tensor<8xf32>
  %0 = kgraph.mul %x, %one : tensor<8xf32>, tensor<2x8xf32>
  %1 = kgraph.mul %x, %zero : tensor<8xf32>, tensor<8xf32>
  return %0, %1 : tensor<2x8xf32>, tensor<8xf32>
}

// -----

// x - 0 and x / 1 fold; 0 - x and 1 / x do not.
// CHECK-LABEL: func @sub_div_identity
// CHECK-SAME: (%[[X:.*]]: tensor<8xf32>, %[[I:.*]]: tensor<8xi32>)
// CHECK-DAG: %[[ZERO:.*]] = arith.constant dense<0.000000e+00> : tensor<8xf32>
// CHECK-DAG: %[[ONE:.*]] = arith.constant dense<1> : tensor<8xi32>
// CHECK: %[[S:.*]] = kgraph.sub %[[ZERO]], %[[X]]
// CHECK: %[[D:.*]] = kgraph.div %[[ONE]], %[[I]]
// CHECK: return %[[X]], %[[I]], %[[S]], %[[D]]
func.func @sub_div_identity(%x: tensor<8xf32>, %i: tensor<8xi32>)
    -> (tensor<8xf32>, tensor<8xi32>, tensor<8xf32>, tensor<8xi32>) {
  %zero = arith.constant dense<0.0> : tensor<8xf32>
  %one = arith.constant dense<1> : tensor<8xi32>
  %0 = kgraph.sub %x, %zero : tensor<8xf32>, tensor<8xf32>
  %1 = kgraph.div %i, %one : tensor<8xi32>, tensor<8xi32>
  %2 = kgraph.sub %zero, %x : tensor<8xf32>, tensor<8xf32>
  %3 = kgraph.div %one, %i : tensor<8xi32>, tensor<8xi32>
  return %0, %1, %2, %3 : tensor<8xf32>, tensor<8xi32>, tensor<8xf32>, tensor<8xi32>
}

// -----

// Dead pure ops disappear under --canonicalize.
// CHECK-LABEL: func @dead_ops
// CHECK-NOT: kgraph.
// CHECK: return
func.func @dead_ops(%x: tensor<8xf32>, %c: tensor<8xi1>) {
  %0 = kgraph.exp %x : tensor<8xf32>
  %1 = kgraph.select %c, %0, %x : tensor<8xi1>, tensor<8xf32>, tensor<8xf32>
  %2 = kgraph.compare lt, %1, %x : tensor<8xf32>, tensor<8xf32>
  return
}
