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

// -----

// A splat read as a GEMM operand (matmul, or either operand of a GEMM
// conv2d) stays a group input: GEMM kernels load their operands from
// memory. Other splats (the add's; a stencil conv2d's filter) are cloned in.
// CHECK-LABEL: func @splat_gemm_operands
// CHECK-SAME: (%[[X:[^:]*]]: tensor<4x8xf16>, %[[I:[^:]*]]: tensor<1x16x6x6xf16>,
// CHECK-DAG: %[[W:.*]] = arith.constant dense<5.000000e-01> : tensor<8x4xf16>
// CHECK-DAG: %[[F:.*]] = arith.constant dense<2.500000e-01> : tensor<3x16x1x1xf16>
// CHECK-DAG: %[[CI:.*]] = arith.constant dense<1.000000e+00> : tensor<1x16x6x6xf16>
// CHECK: kgraph.fused gemm (%[[X]], %[[W]]) : (tensor<4x8xf16>, tensor<8x4xf16>) -> tensor<4x4xf32> {
// CHECK-NEXT: ^bb0(%{{.*}}: tensor<4x8xf16>, %{{.*}}: tensor<8x4xf16>):
// CHECK-NEXT:   kgraph.matmul
// CHECK: kgraph.fused elementwise
// CHECK-NEXT: ^bb0(
// CHECK-NEXT:   arith.constant dense<-1.000000e+00> : tensor<4xf32>
// CHECK-NEXT:   kgraph.add
// CHECK: kgraph.fused gemm (%[[I]], %[[F]]) :
// CHECK-NEXT: ^bb0(
// CHECK-NEXT:   kgraph.conv2d
// CHECK: kgraph.fused gemm (%[[CI]], %[[F]]) :
// CHECK-NEXT: ^bb0(
// CHECK-NEXT:   kgraph.conv2d
// CHECK: kgraph.fused stencil (%[[S:.*]]) :
// CHECK-NEXT: ^bb0(
// CHECK-NEXT:   arith.constant dense<1.250000e-01> : tensor<2x2x3x3xf32>
// CHECK-NEXT:   kgraph.conv2d
func.func @splat_gemm_operands(%x: tensor<4x8xf16>, %i: tensor<1x16x6x6xf16>, %s: tensor<1x2x6x6xf32>) -> (tensor<4x4xf32>, tensor<1x3x6x6xf32>, tensor<1x3x6x6xf32>, tensor<1x2x6x6xf32>) {
  %w = arith.constant dense<0.5> : tensor<8x4xf16>
  %h = arith.constant dense<-1.0> : tensor<4xf32>
  %f = arith.constant dense<0.25> : tensor<3x16x1x1xf16>
  %ci = arith.constant dense<1.0> : tensor<1x16x6x6xf16>
  %sf = arith.constant dense<0.125> : tensor<2x2x3x3xf32>
  %m = kgraph.matmul %x, %w : tensor<4x8xf16>, tensor<8x4xf16> -> tensor<4x4xf32>
  %a = kgraph.add %m, %h : tensor<4x4xf32>, tensor<4xf32>
  %c0 = kgraph.conv2d %i, %f : tensor<1x16x6x6xf16>, tensor<3x16x1x1xf16> -> tensor<1x3x6x6xf32>
  %c1 = kgraph.conv2d %ci, %f : tensor<1x16x6x6xf16>, tensor<3x16x1x1xf16> -> tensor<1x3x6x6xf32>
  %c2 = kgraph.conv2d %s, %sf padding = [1, 1, 1, 1] : tensor<1x2x6x6xf32>, tensor<2x2x3x3xf32> -> tensor<1x2x6x6xf32>
  return %a, %c0, %c1, %c2 : tensor<4x4xf32>, tensor<1x3x6x6xf32>, tensor<1x3x6x6xf32>, tensor<1x2x6x6xf32>
}
