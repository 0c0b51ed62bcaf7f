// RUN: kgraph-opt %s --pass-pipeline='builtin.module(func.func(kgraph-fuse{max-recompute=0 report=true}))' --verify-diagnostics | FileCheck %s

// The diamond with recomputation off: grouping %a with %c would make the
// group feed the matmul and consume its result, a cycle. Nothing is fused.
// CHECK-LABEL: func @diamond
// CHECK-NOT: kgraph.fused
func.func @diamond(%x: tensor<64x64xf32>, %w: tensor<64x64xf32>) -> (tensor<64x64xf32>, tensor<64x64xf32>) {
  // expected-remark @below {{not fused: no producer or consumer it can be fused with}}
  %a = kgraph.neg %x : tensor<64x64xf32>
  // expected-remark @below {{not fused: no epilogue fused: its result has 2 users}}
  %m = kgraph.matmul %a, %w : tensor<64x64xf32>, tensor<64x64xf32> -> tensor<64x64xf32>
  // expected-remark @below {{not fused: not fused into the kgraph.matmul epilogue: its operand has 2 users; not fused with the elementwise group of its operand #0: it would create a cycle}}
  %c = kgraph.add %a, %m : tensor<64x64xf32>, tensor<64x64xf32>
  return %c, %m : tensor<64x64xf32>, tensor<64x64xf32>
}

// A cycle through a reduce: %e feeds the reduce, and %d consumes both %e and
// the reduce result. The sum's result [4] broadcasts along the last dim of
// [4, 4], not along the reduced rows, so %d cannot join a multi-reduction
// group with the reduce. With recomputation off the reduce cannot take %e
// (it has another user), and %d cannot join %e's group.
// CHECK-LABEL: func @through_reduce
// CHECK-NOT: kgraph.fused
func.func @through_reduce(%x: tensor<4x4xf32>) -> tensor<4x4xf32> {
  // expected-remark @below {{not fused: not fused into the reduce as a producer: its result has other users and the recomputation budget is spent}}
  %e = kgraph.exp %x : tensor<4x4xf32>
  // expected-remark @below {{not fused: reduce with no elementwise producer or consumer to fuse}}
  %s = kgraph.reduce sum %e axes = [1] : tensor<4x4xf32>
  // expected-remark @below {{not fused: not fused with the elementwise group of its operand #0: it would create a cycle}}
  %d = kgraph.div %e, %s : tensor<4x4xf32>, tensor<4xf32>
  return %d : tensor<4x4xf32>
}

// The softmax numerator with the row sum kept as [4, 1]: one multi-reduction
// group, which needs no recomputation (%e's users are both in it).
// CHECK-LABEL: func @softmax_numerator
// CHECK: kgraph.fused reduce
// CHECK: kgraph.exp
// CHECK-NEXT: kgraph.reduce sum
// CHECK-NEXT: kgraph.div
// CHECK-NOT: kgraph.fused
func.func @softmax_numerator(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  // expected-remark @below {{fused 3 ops into a reduction group with 1 result: kgraph.exp at}}
  %e = kgraph.exp %x : tensor<4x8xf32>
  %s = kgraph.reduce sum %e axes = [1] keep_dims : tensor<4x8xf32>
  %d = kgraph.div %e, %s : tensor<4x8xf32>, tensor<4x1xf32>
  return %d : tensor<4x8xf32>
}

// A cycle through an op with a region: %a is used inside the scf.if, whose
// result %c also consumes. Ops inside regions are never grouped.
// CHECK-LABEL: func @through_region
// CHECK-NOT: kgraph.fused
func.func @through_region(%x: tensor<8xf32>, %p: i1) -> tensor<8xf32> {
  // expected-remark @below {{not fused: no producer or consumer it can be fused with}}
  %a = kgraph.exp %x : tensor<8xf32>
  %r = scf.if %p -> tensor<8xf32> {
    %n = kgraph.neg %a : tensor<8xf32>
    scf.yield %n : tensor<8xf32>
  } else {
    scf.yield %x : tensor<8xf32>
  }
  // expected-remark @below {{not fused: not fused with the elementwise group of its operand #0: it would create a cycle}}
  %c = kgraph.add %a, %r : tensor<8xf32>, tensor<8xf32>
  return %c : tensor<8xf32>
}

// Declarations and ops outside the entry block are left alone.
// CHECK-LABEL: func private @decl
func.func private @decl(tensor<4xf32>) -> tensor<4xf32>

// CHECK-LABEL: func @two_blocks
// CHECK: kgraph.fused
// CHECK: ^bb1
// CHECK-NOT: kgraph.fused
func.func @two_blocks(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-remark @below {{fused 2 ops into an elementwise group with 1 result}}
  %a = kgraph.exp %x : tensor<4xf32>
  %b = kgraph.neg %a : tensor<4xf32>
  cf.br ^bb1(%b : tensor<4xf32>)
^bb1(%y: tensor<4xf32>):
  %c = kgraph.exp %y : tensor<4xf32>
  %d = kgraph.neg %c : tensor<4xf32>
  return %d : tensor<4xf32>
}
