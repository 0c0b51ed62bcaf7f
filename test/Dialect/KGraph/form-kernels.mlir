// RUN: kgraph-opt %s --pass-pipeline='builtin.module(func.func(kgraph-form-kernels))' --split-input-file | FileCheck %s

// Each compute op becomes its own group; constants are cloned into the group
// instead of becoming inputs.
// CHECK-LABEL: func @chain
// CHECK-SAME: (%[[A:.*]]: tensor<8xf32>, %[[B:.*]]: tensor<8xf32>)
// CHECK: %[[ADD:.*]] = kgraph.fused elementwise (%[[A]], %[[B]]) : (tensor<8xf32>, tensor<8xf32>) -> tensor<8xf32> {
// CHECK-NEXT: ^bb0(%[[X:.*]]: tensor<8xf32>, %[[Y:.*]]: tensor<8xf32>):
// CHECK-NEXT:   %[[S:.*]] = kgraph.add %[[X]], %[[Y]]
// CHECK-NEXT:   kgraph.yield %[[S]] : tensor<8xf32>
// CHECK: %[[MUL:.*]] = kgraph.fused elementwise (%[[ADD]]) : (tensor<8xf32>) -> tensor<8xf32> {
// CHECK-NEXT: ^bb0(%[[Z:.*]]: tensor<8xf32>):
// CHECK-NEXT:   %[[C:.*]] = arith.constant dense<2.000000e+00> : tensor<8xf32>
// CHECK-NEXT:   %[[M:.*]] = kgraph.mul %[[Z]], %[[C]]
// CHECK-NEXT:   kgraph.yield %[[M]]
// CHECK: return %[[MUL]]
func.func @chain(%a: tensor<8xf32>, %b: tensor<8xf32>) -> tensor<8xf32> {
  %c = arith.constant dense<2.0> : tensor<8xf32>
  %0 = kgraph.add %a, %b : tensor<8xf32>, tensor<8xf32>
  %1 = kgraph.mul %0, %c : tensor<8xf32>, tensor<8xf32>
  return %1 : tensor<8xf32>
}

// -----

// Groups that already exist are left alone; a value used twice enters once.
// CHECK-LABEL: func @existing_group
// CHECK: %[[G:.*]] = kgraph.fused (%{{.*}}) : (tensor<4xf32>) -> tensor<4xf32> {
// CHECK: kgraph.relu
// CHECK: kgraph.fused elementwise (%[[G]]) : (tensor<4xf32>) -> tensor<4xf32> {
// CHECK-NEXT: ^bb0(%[[X:.*]]: tensor<4xf32>):
// CHECK-NEXT: kgraph.mul %[[X]], %[[X]]
// CHECK-NOT: kgraph.fused
func.func @existing_group(%a: tensor<4xf32>) -> tensor<4xf32> {
  %0 = kgraph.fused (%a) : (tensor<4xf32>) -> tensor<4xf32> {
  ^bb0(%x: tensor<4xf32>):
    %r = kgraph.relu %x : tensor<4xf32>
    kgraph.yield %r : tensor<4xf32>
  }
  %1 = kgraph.mul %0, %0 : tensor<4xf32>, tensor<4xf32>
  return %1 : tensor<4xf32>
}

// -----

// Non-elementwise ops are wrapped too (lowering them is a later stage).
// CHECK-LABEL: func @matmul
// CHECK: kgraph.fused
// CHECK: kgraph.matmul
func.func @matmul(%a: tensor<4x8xf16>, %b: tensor<8x16xf16>) -> tensor<4x16xf32> {
  %0 = kgraph.matmul %a, %b : tensor<4x8xf16>, tensor<8x16xf16> -> tensor<4x16xf32>
  return %0 : tensor<4x16xf32>
}
