// RUN: kgraph-opt %s | kgraph-opt | FileCheck %s
// RUN: kgraph-opt %s --mlir-print-op-generic | kgraph-opt | FileCheck %s

// CHECK-LABEL: func @group
// CHECK: %[[R:.*]]:2 = kgraph.fused (%{{.*}}, %{{.*}}) {kgraph.config = #kgraph.elementwise_config<block_size = 128, vector_width = 8, unroll = 2, grid_size = 10>} : (tensor<8xf16>, tensor<8xf16>) -> (tensor<8xf16>, tensor<8xi1>) {
// CHECK-NEXT: ^bb0(%[[X:.*]]: tensor<8xf16>, %[[Y:.*]]: tensor<8xf16>):
// CHECK: %[[S:.*]] = kgraph.add %[[X]], %[[Y]]
// CHECK: %[[C:.*]] = kgraph.compare gt, %[[S]], %[[Y]]
// CHECK: kgraph.yield %[[S]], %[[C]] : tensor<8xf16>, tensor<8xi1>
func.func @group(%a: tensor<8xf16>, %b: tensor<8xf16>) -> (tensor<8xf16>, tensor<8xi1>) {
  %0:2 = kgraph.fused (%a, %b) {kgraph.config = #kgraph.elementwise_config<block_size = 128, vector_width = 8, unroll = 2, grid_size = 10>} : (tensor<8xf16>, tensor<8xf16>) -> (tensor<8xf16>, tensor<8xi1>) {
  ^bb0(%x: tensor<8xf16>, %y: tensor<8xf16>):
    %s = kgraph.add %x, %y : tensor<8xf16>, tensor<8xf16>
    %c = kgraph.compare gt, %s, %y : tensor<8xf16>, tensor<8xf16>
    kgraph.yield %s, %c : tensor<8xf16>, tensor<8xi1>
  }
  return %0#0, %0#1 : tensor<8xf16>, tensor<8xi1>
}

// CHECK-LABEL: func @with_constant
// CHECK: arith.constant dense<1.000000e+00> : tensor<4xf32>
func.func @with_constant(%a: tensor<4xf32>) -> tensor<4xf32> {
  %0 = kgraph.fused (%a) : (tensor<4xf32>) -> tensor<4xf32> {
  ^bb0(%x: tensor<4xf32>):
    %one = arith.constant dense<1.0> : tensor<4xf32>
    %s = kgraph.sub %x, %one : tensor<4xf32>, tensor<4xf32>
    kgraph.yield %s : tensor<4xf32>
  }
  return %0 : tensor<4xf32>
}

// CHECK-LABEL: func @reduce_group
// CHECK: kgraph.fused (%{{.*}}) {kgraph.config = #kgraph.reduce_config<threads_per_row = 32, rows_per_block = 8, vector_width = 4, grid_size = 2>} : (tensor<16x64xf32>) -> tensor<16xf32>
// CHECK: kgraph.reduce sum
func.func @reduce_group(%a: tensor<16x64xf32>) -> tensor<16xf32> {
  %0 = kgraph.fused (%a) {kgraph.config = #kgraph.reduce_config<threads_per_row = 32, rows_per_block = 8, vector_width = 4, grid_size = 2>} : (tensor<16x64xf32>) -> tensor<16xf32> {
  ^bb0(%x: tensor<16x64xf32>):
    %e = kgraph.exp %x : tensor<16x64xf32>
    %s = kgraph.reduce sum %e axes = [1] : tensor<16x64xf32>
    kgraph.yield %s : tensor<16xf32>
  }
  return %0 : tensor<16xf32>
}

// Every group kind round-trips as the keyword after the op name.
// CHECK-LABEL: func @kinds
// CHECK: kgraph.fused elementwise (%{{.*}}) : (tensor<4xf32>) -> tensor<4xf32>
// CHECK: kgraph.fused reduce (%{{.*}}) : (tensor<4xf32>) -> tensor<f32>
// CHECK: kgraph.fused gemm (%{{.*}}, %{{.*}}) : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32>
// CHECK: kgraph.fused stencil (%{{.*}}) : (tensor<1x1x4x4xf32>) -> tensor<1x1x4x4xf32>
// CHECK: kgraph.fused copy (%{{.*}}) : (tensor<4x4xf32>) -> tensor<4x4xf32>
func.func @kinds(%a: tensor<4xf32>, %m: tensor<4x4xf32>, %img: tensor<1x1x4x4xf32>) {
  %0 = kgraph.fused elementwise (%a) : (tensor<4xf32>) -> tensor<4xf32> {
  ^bb0(%x: tensor<4xf32>):
    %r = kgraph.relu %x : tensor<4xf32>
    kgraph.yield %r : tensor<4xf32>
  }
  %1 = kgraph.fused reduce (%a) : (tensor<4xf32>) -> tensor<f32> {
  ^bb0(%x: tensor<4xf32>):
    %r = kgraph.reduce sum %x axes = [0] : tensor<4xf32>
    kgraph.yield %r : tensor<f32>
  }
  %2 = kgraph.fused gemm (%m, %m) : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32> {
  ^bb0(%x: tensor<4x4xf32>, %y: tensor<4x4xf32>):
    %r = kgraph.matmul %x, %y : tensor<4x4xf32>, tensor<4x4xf32> -> tensor<4x4xf32>
    kgraph.yield %r : tensor<4x4xf32>
  }
  %3 = kgraph.fused stencil (%img) : (tensor<1x1x4x4xf32>) -> tensor<1x1x4x4xf32> {
  ^bb0(%x: tensor<1x1x4x4xf32>):
    %r = kgraph.pool2d max %x kernel = [3, 3] padding = [1, 1, 1, 1] : tensor<1x1x4x4xf32>
    kgraph.yield %r : tensor<1x1x4x4xf32>
  }
  %4 = kgraph.fused copy (%m) : (tensor<4x4xf32>) -> tensor<4x4xf32> {
  ^bb0(%x: tensor<4x4xf32>):
    %r = kgraph.transpose %x, permutation = [1, 0] : tensor<4x4xf32>
    kgraph.yield %r : tensor<4x4xf32>
  }
  return
}
