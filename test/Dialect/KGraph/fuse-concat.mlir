// RUN: kgraph-opt %s --pass-pipeline='builtin.module(func.func(kgraph-fuse))' --split-input-file | FileCheck %s

// A concat along an inner axis joins the elementwise group of its consumer,
// with the strided slices it reads: one kernel reads %x through both slices
// and the concat's segments.
// CHECK-LABEL: func @slices_concat_mul
// CHECK-SAME: (%[[X:.*]]: tensor<4x10xf32>, %[[Y:.*]]: tensor<4x10xf32>)
// CHECK: %[[G:.*]] = kgraph.fused elementwise (%[[X]], %[[Y]])
// CHECK-NEXT: ^bb0(%[[BX:.*]]: tensor<4x10xf32>, %[[BY:.*]]: tensor<4x10xf32>):
// CHECK-NEXT: %[[E:.*]] = kgraph.slice %[[BX]] offsets = [0, 0]
// CHECK-NEXT: %[[O:.*]] = kgraph.slice %[[BX]] offsets = [0, 1]
// CHECK-NEXT: %[[C:.*]] = kgraph.concat %[[O]], %[[E]] axis = 1
// CHECK-NEXT: %[[M:.*]] = kgraph.mul %[[C]], %[[BY]]
// CHECK-NEXT: kgraph.yield %[[M]]
// CHECK-NOT: kgraph.fused
// CHECK: return %[[G]]
func.func @slices_concat_mul(%x: tensor<4x10xf32>, %y: tensor<4x10xf32>) -> tensor<4x10xf32> {
  %e = kgraph.slice %x offsets = [0, 0] sizes = [4, 5] strides = [1, 2] : tensor<4x10xf32>
  %o = kgraph.slice %x offsets = [0, 1] sizes = [4, 5] strides = [1, 2] : tensor<4x10xf32>
  %c = kgraph.concat %o, %e axis = 1 : tensor<4x5xf32>, tensor<4x5xf32>
  %r = kgraph.mul %c, %y : tensor<4x10xf32>, tensor<4x10xf32>
  return %r : tensor<4x10xf32>
}

// -----

// A concat with another user (the return) is recomputed inside the group;
// the original stays for the other user (kgraph-form-kernels wraps it as its
// own kernel). Its producer, the relu, is a kernel of its own.
// CHECK-LABEL: func @shared_concat
// CHECK-SAME: (%[[X:.*]]: tensor<2x3x5xf16>, %[[Y:.*]]: tensor<2x4x5xf16>)
// CHECK: %[[A:.*]] = kgraph.relu %[[X]]
// CHECK: %[[C:.*]] = kgraph.concat %[[A]], %[[Y]] axis = 1
// CHECK: %[[G:.*]] = kgraph.fused elementwise (%[[A]], %[[Y]])
// CHECK-NEXT: ^bb0(%[[BA:.*]]: tensor<2x3x5xf16>, %[[BY:.*]]: tensor<2x4x5xf16>):
// CHECK-NEXT: %[[C2:.*]] = kgraph.concat %[[BA]], %[[BY]] axis = 1
// CHECK-NEXT: %[[S:.*]] = kgraph.sigmoid %[[C2]]
// CHECK-NEXT: kgraph.yield %[[S]]
// CHECK: return %[[G]], %[[C]]
func.func @shared_concat(%x: tensor<2x3x5xf16>, %y: tensor<2x4x5xf16>) -> (tensor<2x7x5xf16>, tensor<2x7x5xf16>) {
  %a = kgraph.relu %x : tensor<2x3x5xf16>
  %c = kgraph.concat %a, %y axis = 1 : tensor<2x3x5xf16>, tensor<2x4x5xf16>
  %r = kgraph.sigmoid %c : tensor<2x7x5xf16>
  return %r, %c : tensor<2x7x5xf16>, tensor<2x7x5xf16>
}

// -----

// A concat written in place (every dim before the axis is 1, aligned
// offsets) stays out of groups: its producers write views of its buffer and
// its consumer reads that buffer.
// CHECK-LABEL: func @in_place_concat
// CHECK: %[[C:.*]] = kgraph.concat
// CHECK-NOT: kgraph.fused
// CHECK: kgraph.sigmoid %[[C]]
func.func @in_place_concat(%x: tensor<1x8x5x7xf16>, %y: tensor<1x5x5x7xf16>) -> tensor<1x13x5x7xf16> {
  %c = kgraph.concat %x, %y axis = 1 : tensor<1x8x5x7xf16>, tensor<1x5x5x7xf16>
  %r = kgraph.sigmoid %c : tensor<1x13x5x7xf16>
  return %r : tensor<1x13x5x7xf16>
}

// -----

// A chain of concats (zeros around a tensor along three axes, as
// kgraph-space-to-depth-convs pads a filter) with no elementwise consumer:
// one copy kernel, the last concat reading the others through their
// segments; a lone concat stays alone.
// CHECK-LABEL: func @concat_chain
// CHECK: %[[G:.*]] = kgraph.fused elementwise (%arg0)
// CHECK: kgraph.concat %{{.*}}, %{{.*}} axis = 3
// CHECK: kgraph.concat %{{.*}}, %{{.*}}, %{{.*}} axis = 1
// CHECK: kgraph.concat %{{.*}}, %{{.*}} axis = 2
// CHECK-NEXT: kgraph.yield
// CHECK: %[[L:.*]] = kgraph.concat %arg1, %{{.*}} axis = 0
// CHECK-NOT: kgraph.fused
// CHECK: return %[[G]], %[[L]]
func.func @concat_chain(%w: tensor<8x7x7x3xf16>, %v: tensor<2x3xf32>) -> (tensor<8x9x8x4xf16>, tensor<3x3xf32>) {
  %z3 = arith.constant dense<0.0> : tensor<8x7x7x1xf16>
  %c3 = kgraph.concat %w, %z3 axis = 3 : tensor<8x7x7x3xf16>, tensor<8x7x7x1xf16>
  %z1a = arith.constant dense<0.0> : tensor<8x1x7x4xf16>
  %c1 = kgraph.concat %z1a, %c3, %z1a axis = 1 : tensor<8x1x7x4xf16>, tensor<8x7x7x4xf16>, tensor<8x1x7x4xf16>
  %z2 = arith.constant dense<0.0> : tensor<8x9x1x4xf16>
  %c2 = kgraph.concat %z2, %c1 axis = 2 : tensor<8x9x1x4xf16>, tensor<8x9x7x4xf16>
  %zl = arith.constant dense<0.0> : tensor<1x3xf32>
  %l = kgraph.concat %v, %zl axis = 0 : tensor<2x3xf32>, tensor<1x3xf32>
  return %c2, %l : tensor<8x9x8x4xf16>, tensor<3x3xf32>
}

// -----

// A transpose that keeps the innermost dim, fed by a concat (the input of
// kgraph-space-to-depth-convs: channels padded, then 2x2 pixel blocks
// moved into one pixel): one copy kernel. A transpose that moves the
// innermost dim keeps its own (tiled transpose) kernel, and so does its
// concat.
// CHECK-LABEL: func @pad_then_transpose
// CHECK: %[[G:.*]] = kgraph.fused elementwise (%arg0)
// CHECK: kgraph.concat %{{.*}}, %{{.*}} axis = 5
// CHECK-NEXT: kgraph.transpose %{{.*}}, permutation = [0, 1, 3, 2, 4, 5]
// CHECK-NEXT: kgraph.yield
// CHECK: %[[C:.*]] = kgraph.concat %arg1, %{{.*}} axis = 0
// CHECK: %[[T:.*]] = kgraph.transpose %[[C]], permutation = [1, 0]
// CHECK-NOT: kgraph.fused
// CHECK: return %[[G]], %[[T]]
func.func @pad_then_transpose(%x: tensor<2x4x2x4x2x3xf16>, %v: tensor<6x8xf32>) -> (tensor<2x4x4x2x2x4xf16>, tensor<8x7xf32>) {
  %z = arith.constant dense<0.0> : tensor<2x4x2x4x2x1xf16>
  %c = kgraph.concat %x, %z axis = 5 : tensor<2x4x2x4x2x3xf16>, tensor<2x4x2x4x2x1xf16>
  %t = kgraph.transpose %c, permutation = [0, 1, 3, 2, 4, 5] : tensor<2x4x2x4x2x4xf16>
  %zv = arith.constant dense<0.0> : tensor<1x8xf32>
  %cv = kgraph.concat %v, %zv axis = 0 : tensor<6x8xf32>, tensor<1x8xf32>
  %tv = kgraph.transpose %cv, permutation = [1, 0] : tensor<7x8xf32>
  return %t, %tv : tensor<2x4x4x2x2x4xf16>, tensor<8x7xf32>
}
