// RUN: kgraph-opt %s --split-input-file --kgraph-form-kernels | FileCheck %s

// Views get no group: a reshape, a contiguous slice at a 16-byte aligned
// offset, and a concat whose inputs are contiguous aligned runs of its
// result stay outside kgraph.fused (kgraph-lower-to-gpu makes them buffer
// views).
// CHECK-LABEL: func.func @views
// CHECK: kgraph.reshape
// CHECK-NEXT: kgraph.slice
// CHECK: kgraph.fused elementwise
// CHECK: kgraph.concat
// CHECK-NOT: kgraph.fused
func.func @views(%x: tensor<4x6xf32>, %y: tensor<8x6xf32>) -> tensor<6x8xf32> {
  %r = kgraph.reshape %x : tensor<4x6xf32> to tensor<3x8xf32>
  %s = kgraph.slice %y offsets = [2, 0] sizes = [2, 6] strides = [1, 1] : tensor<8x6xf32>
  %n = kgraph.reshape %s : tensor<2x6xf32> to tensor<12xf32>
  %e = kgraph.exp %r : tensor<3x8xf32>
  %c = kgraph.concat %e, %r axis = 0 : tensor<3x8xf32>, tensor<3x8xf32>
  return %c : tensor<6x8xf32>
}

