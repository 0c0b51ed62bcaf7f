// RUN: kgraph-opt %s --pass-pipeline='builtin.module(func.func(kgraph-fuse))' --split-input-file | FileCheck %s

// The issue's 5-op chain with a broadcast row operand: one group, the splat
// constants cloned in, one result.
// CHECK-LABEL: func @chain5
// CHECK-SAME: (%[[X:.*]]: tensor<64x128xf32>, %[[Y:.*]]: tensor<64x128xf32>, %[[Z:.*]]: tensor<128xf32>)
// CHECK: %[[G:.*]] = kgraph.fused elementwise (%[[X]], %[[Y]], %[[Z]]) : (tensor<64x128xf32>, tensor<64x128xf32>, tensor<128xf32>) -> tensor<64x128xf32> {
// CHECK: kgraph.mul
// CHECK-NEXT: kgraph.add
// CHECK-NEXT: kgraph.gelu
// CHECK-NEXT: kgraph.mul
// CHECK-NEXT: %[[R:.*]] = kgraph.add %{{.*}}, %{{.*}} : tensor<64x128xf32>, tensor<128xf32>
// CHECK-NEXT: kgraph.yield %[[R]] : tensor<64x128xf32>
// CHECK-NOT: kgraph.fused
// CHECK: return %[[G]]
func.func @chain5(%x: tensor<64x128xf32>, %y: tensor<64x128xf32>, %z: tensor<128xf32>) -> tensor<64x128xf32> {
  %c0 = arith.constant dense<1.5> : tensor<f32>
  %c1 = arith.constant dense<0.25> : tensor<f32>
  %0 = kgraph.mul %x, %c0 : tensor<64x128xf32>, tensor<f32>
  %1 = kgraph.add %0, %c1 : tensor<64x128xf32>, tensor<f32>
  %2 = kgraph.gelu %1 : tensor<64x128xf32>
  %3 = kgraph.mul %2, %y : tensor<64x128xf32>, tensor<64x128xf32>
  %4 = kgraph.add %3, %z : tensor<64x128xf32>, tensor<128xf32>
  return %4 : tensor<64x128xf32>
}

// -----

// A DAG whose shared value %a is also a function result: one group that
// yields %a as an extra result.
// CHECK-LABEL: func @dag_extra_result
// CHECK: %[[G:.*]]:2 = kgraph.fused elementwise (%{{.*}}, %{{.*}}) : (tensor<1000xf32>, tensor<1000xf32>) -> (tensor<1000xf32>, tensor<1000xf32>) {
// CHECK: %[[A:.*]] = kgraph.exp
// CHECK: %[[B:.*]] = kgraph.add %[[A]]
// CHECK: %[[C:.*]] = kgraph.mul %[[A]], %[[B]]
// CHECK: kgraph.yield %[[A]], %[[C]]
// CHECK-NOT: kgraph.fused
// CHECK: return %[[G]]#1, %[[G]]#0
func.func @dag_extra_result(%x: tensor<1000xf32>, %y: tensor<1000xf32>) -> (tensor<1000xf32>, tensor<1000xf32>) {
  %a = kgraph.exp %x : tensor<1000xf32>
  %b = kgraph.add %a, %y : tensor<1000xf32>, tensor<1000xf32>
  %c = kgraph.mul %a, %b : tensor<1000xf32>, tensor<1000xf32>
  return %c, %a : tensor<1000xf32>, tensor<1000xf32>
}

// -----

// %t feeds a reduce and an elementwise op: the reduction group recomputes it
// (one cheap op) instead of reading it back, and the elementwise group
// computes it again for %u. Nothing is materialized twice.
// CHECK-LABEL: func @recompute_into_reduce
// CHECK: %[[S:.*]] = kgraph.fused reduce (%[[X:.*]]) : (tensor<32x64xf32>) -> tensor<32xf32> {
// CHECK-NEXT: ^bb0(%[[A:.*]]: tensor<32x64xf32>):
// CHECK-NEXT: %[[T:.*]] = kgraph.mul %[[A]], %[[A]]
// CHECK-NEXT: %[[R:.*]] = kgraph.reduce sum %[[T]]
// CHECK-NEXT: kgraph.yield %[[R]]
// CHECK: %[[U:.*]] = kgraph.fused elementwise (%[[X]], %{{.*}}) : (tensor<32x64xf32>, tensor<32x64xf32>) -> tensor<32x64xf32> {
// CHECK: kgraph.mul
// CHECK-NEXT: kgraph.add
// CHECK: return %[[S]], %[[U]]
func.func @recompute_into_reduce(%x: tensor<32x64xf32>, %y: tensor<32x64xf32>) -> (tensor<32xf32>, tensor<32x64xf32>) {
  %t = kgraph.mul %x, %x : tensor<32x64xf32>, tensor<32x64xf32>
  %s = kgraph.reduce sum %t axes = [1] : tensor<32x64xf32>
  %u = kgraph.add %t, %y : tensor<32x64xf32>, tensor<32x64xf32>
  return %s, %u : tensor<32xf32>, tensor<32x64xf32>
}

// -----

// The diamond: %a feeds the matmul and, with the matmul result, %c. Grouping
// %a with %c would make the group both feed and consume the matmul; %c's
// group recomputes %a instead (the original still feeds the matmul).
// CHECK-LABEL: func @diamond_recompute
// CHECK-SAME: (%[[X:.*]]: tensor<64x64xf32>, %[[W:.*]]: tensor<64x64xf32>)
// CHECK: %[[A:.*]] = kgraph.neg %[[X]]
// CHECK: %[[M:.*]] = kgraph.matmul %[[A]], %[[W]]
// CHECK: %[[C:.*]] = kgraph.fused elementwise (%[[X]], %[[M]])
// CHECK-NEXT: ^bb0(%[[XA:.*]]: tensor<64x64xf32>, %[[MA:.*]]: tensor<64x64xf32>):
// CHECK-NEXT: %[[A2:.*]] = kgraph.neg %[[XA]]
// CHECK-NEXT: %[[S:.*]] = kgraph.add %[[A2]], %[[MA]]
// CHECK-NEXT: kgraph.yield %[[S]]
// CHECK: return %[[C]], %[[M]]
func.func @diamond_recompute(%x: tensor<64x64xf32>, %w: tensor<64x64xf32>) -> (tensor<64x64xf32>, tensor<64x64xf32>) {
  %a = kgraph.neg %x : tensor<64x64xf32>
  %m = kgraph.matmul %a, %w : tensor<64x64xf32>, tensor<64x64xf32> -> tensor<64x64xf32>
  %c = kgraph.add %a, %m : tensor<64x64xf32>, tensor<64x64xf32>
  return %c, %m : tensor<64x64xf32>, tensor<64x64xf32>
}

// -----

// matmul + bias + relu: one GEMM group yielding the relu.
// CHECK-LABEL: func @matmul_bias_relu
// CHECK-SAME: (%[[A:.*]]: tensor<64x32xf16>, %[[B:.*]]: tensor<32x128xf16>, %[[BIAS:.*]]: tensor<128xf32>)
// CHECK: %[[G:.*]] = kgraph.fused gemm (%[[A]], %[[B]], %[[BIAS]]) : (tensor<64x32xf16>, tensor<32x128xf16>, tensor<128xf32>) -> tensor<64x128xf32> {
// CHECK-NEXT: ^bb0(%[[X:.*]]: tensor<64x32xf16>, %[[Y:.*]]: tensor<32x128xf16>, %[[Z:.*]]: tensor<128xf32>):
// CHECK-NEXT: %[[M:.*]] = kgraph.matmul %[[X]], %[[Y]]
// CHECK-NEXT: %[[S:.*]] = kgraph.add %[[M]], %[[Z]]
// CHECK-NEXT: %[[R:.*]] = kgraph.relu %[[S]]
// CHECK-NEXT: kgraph.yield %[[R]] : tensor<64x128xf32>
// CHECK-NOT: kgraph.fused
func.func @matmul_bias_relu(%a: tensor<64x32xf16>, %b: tensor<32x128xf16>, %bias: tensor<128xf32>) -> tensor<64x128xf32> {
  %0 = kgraph.matmul %a, %b : tensor<64x32xf16>, tensor<32x128xf16> -> tensor<64x128xf32>
  %1 = kgraph.add %0, %bias : tensor<64x128xf32>, tensor<128xf32>
  %2 = kgraph.relu %1 : tensor<64x128xf32>
  return %2 : tensor<64x128xf32>
}

// -----

// A cast prologue on lhs and a scale prologue (splat constant) on rhs, and a
// cast epilogue: one group.
// CHECK-LABEL: func @matmul_prologue
// CHECK: %[[G:.*]] = kgraph.fused gemm (%{{.*}}, %{{.*}}) : (tensor<64x32xf32>, tensor<32x128xf16>) -> tensor<64x128xf16> {
// CHECK: arith.constant dense<5.000000e-01> : tensor<f16>
// CHECK: kgraph.cast %{{.*}} : tensor<64x32xf32> to tensor<64x32xf16>
// CHECK: kgraph.mul
// CHECK: kgraph.matmul
// CHECK: kgraph.cast %{{.*}} : tensor<64x128xf32> to tensor<64x128xf16>
// CHECK-NEXT: kgraph.yield
// CHECK-NOT: kgraph.fused
func.func @matmul_prologue(%a: tensor<64x32xf32>, %b: tensor<32x128xf16>) -> tensor<64x128xf16> {
  %half = arith.constant dense<0.5> : tensor<f16>
  %a16 = kgraph.cast %a : tensor<64x32xf32> to tensor<64x32xf16>
  %bs = kgraph.mul %b, %half : tensor<32x128xf16>, tensor<f16>
  %0 = kgraph.matmul %a16, %bs : tensor<64x32xf16>, tensor<32x128xf16> -> tensor<64x128xf32>
  %1 = kgraph.cast %0 : tensor<64x128xf32> to tensor<64x128xf16>
  return %1 : tensor<64x128xf16>
}

// -----

// A shared cast prologue is recomputed in the matmul group; the original
// stays for its other user.
// CHECK-LABEL: func @shared_prologue
// CHECK: %[[A16:.*]] = kgraph.cast %{{.*}} : tensor<64x32xf32> to tensor<64x32xf16>
// CHECK: %[[G:.*]] = kgraph.fused gemm (%{{.*}}, %{{.*}}) : (tensor<64x32xf32>, tensor<32x128xf16>) -> tensor<64x128xf32> {
// CHECK: kgraph.cast
// CHECK-NEXT: kgraph.matmul
// CHECK: return %[[G]], %[[A16]]
func.func @shared_prologue(%a: tensor<64x32xf32>, %b: tensor<32x128xf16>) -> (tensor<64x128xf32>, tensor<64x32xf16>) {
  %a16 = kgraph.cast %a : tensor<64x32xf32> to tensor<64x32xf16>
  %0 = kgraph.matmul %a16, %b : tensor<64x32xf16>, tensor<32x128xf16> -> tensor<64x128xf32>
  return %0, %a16 : tensor<64x128xf32>, tensor<64x32xf16>
}

// -----

// reduce with elementwise producers and a consumer: one reduction group.
// CHECK-LABEL: func @reduce_producers
// CHECK: %[[G:.*]] = kgraph.fused reduce (%{{.*}}, %{{.*}}) : (tensor<16x256xf32>, tensor<256xf32>) -> tensor<16xf32> {
// CHECK: kgraph.sub
// CHECK-NEXT: kgraph.mul
// CHECK-NEXT: kgraph.reduce mean
// CHECK-NEXT: kgraph.add
// CHECK-NEXT: kgraph.rsqrt
// CHECK-NEXT: kgraph.yield
// CHECK-NOT: kgraph.fused
func.func @reduce_producers(%x: tensor<16x256xf32>, %mu: tensor<256xf32>) -> tensor<16xf32> {
  %eps = arith.constant dense<1.0e-5> : tensor<f32>
  %d = kgraph.sub %x, %mu : tensor<16x256xf32>, tensor<256xf32>
  %d2 = kgraph.mul %d, %d : tensor<16x256xf32>, tensor<16x256xf32>
  %v = kgraph.reduce mean %d2 axes = [1] : tensor<16x256xf32>
  %ve = kgraph.add %v, %eps : tensor<16xf32>, tensor<f32>
  %r = kgraph.rsqrt %ve : tensor<16xf32>
  return %r : tensor<16xf32>
}

// -----

// The epilogue stops where the group would need a second result: %1 is used
// by the return as well, so %2 is left to its own group.
// CHECK-LABEL: func @epilogue_one_result
// CHECK: %[[G:.*]] = kgraph.fused gemm (%{{.*}}, %{{.*}}, %{{.*}}) : (tensor<64x32xf32>, tensor<32x128xf32>, tensor<128xf32>) -> tensor<64x128xf32> {
// CHECK: kgraph.matmul
// CHECK-NEXT: kgraph.add
// CHECK-NEXT: kgraph.yield
// CHECK: kgraph.relu %[[G]]
// CHECK-NOT: kgraph.fused
func.func @epilogue_one_result(%a: tensor<64x32xf32>, %b: tensor<32x128xf32>, %bias: tensor<128xf32>) -> (tensor<64x128xf32>, tensor<64x128xf32>) {
  %0 = kgraph.matmul %a, %b : tensor<64x32xf32>, tensor<32x128xf32> -> tensor<64x128xf32>
  %1 = kgraph.add %0, %bias : tensor<64x128xf32>, tensor<128xf32>
  %2 = kgraph.relu %1 : tensor<64x128xf32>
  return %1, %2 : tensor<64x128xf32>, tensor<64x128xf32>
}

// -----

// Ops already grouped are left alone; the elementwise op after them forms
// no group of its own (one-op groups are kgraph-form-kernels' job).
// CHECK-LABEL: func @existing_group
// CHECK: %[[G:.*]] = kgraph.fused
// CHECK: kgraph.relu
// CHECK: kgraph.mul %[[G]], %[[G]]
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

// Softmax numerator and sum: one multi-reduction group (the exp feeds the
// reduce and the div, both in the group; the row sum broadcasts back along
// its rows).
// CHECK-LABEL: func @softmax
// CHECK-SAME: (%[[X:.*]]: tensor<4x8xf32>)
// CHECK: %[[D:.*]] = kgraph.fused reduce (%[[X]]) : (tensor<4x8xf32>) -> tensor<4x8xf32> {
// CHECK: kgraph.exp
// CHECK-NEXT: kgraph.reduce sum
// CHECK-NEXT: kgraph.div
// CHECK-NEXT: kgraph.yield
// CHECK-NOT: kgraph.fused
// CHECK: return %[[D]]
func.func @softmax(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %e = kgraph.exp %x : tensor<4x8xf32>
  %s = kgraph.reduce sum %e axes = [1] keep_dims : tensor<4x8xf32>
  %d = kgraph.div %e, %s : tensor<4x8xf32>, tensor<4x1xf32>
  return %d : tensor<4x8xf32>
}

// -----

// An elementwise op whose result is larger than the matmul result (it
// broadcasts the matmul up) is no epilogue; dead ops form no group.
// CHECK-LABEL: func @not_epilogue
// CHECK: %[[M:.*]] = kgraph.matmul
// CHECK: kgraph.add %[[M]], %{{.*}} : tensor<64x128xf32>, tensor<4x64x128xf32>
// CHECK: kgraph.exp
// CHECK-NEXT: kgraph.neg
// CHECK-NOT: kgraph.fused
func.func @not_epilogue(%a: tensor<64x32xf32>, %b: tensor<32x128xf32>, %x: tensor<4x64x128xf32>) -> tensor<4x64x128xf32> {
  %0 = kgraph.matmul %a, %b : tensor<64x32xf32>, tensor<32x128xf32> -> tensor<64x128xf32>
  %1 = kgraph.add %0, %x : tensor<64x128xf32>, tensor<4x64x128xf32>
  %2 = kgraph.exp %x : tensor<4x64x128xf32>
  %3 = kgraph.neg %2 : tensor<4x64x128xf32>
  return %1 : tensor<4x64x128xf32>
}

// -----

// %b is computed in %a's group only for %c, which cannot join that group (a
// cycle through the matmul) and recomputes %a and %b instead: the original
// %b is then dead and erased, and %a is left alone (one op, no group).
// CHECK-LABEL: func @recompute_leaves_dead_original
// CHECK-SAME: (%[[X:.*]]: tensor<64x64xf32>, %[[W:.*]]: tensor<64x64xf32>)
// CHECK: %[[A:.*]] = kgraph.neg %[[X]]
// CHECK-NOT: kgraph.exp
// CHECK: %[[M:.*]] = kgraph.matmul %[[A]], %[[W]]
// CHECK: %[[C:.*]] = kgraph.fused elementwise (%[[X]], %[[M]])
// CHECK: kgraph.neg
// CHECK-NEXT: kgraph.exp
// CHECK-NEXT: kgraph.add
// CHECK-NEXT: kgraph.yield
// CHECK-NOT: kgraph.fused
func.func @recompute_leaves_dead_original(%x: tensor<64x64xf32>, %w: tensor<64x64xf32>) -> (tensor<64x64xf32>, tensor<64x64xf32>) {
  %a = kgraph.neg %x : tensor<64x64xf32>
  %b = kgraph.exp %a : tensor<64x64xf32>
  %m = kgraph.matmul %a, %w : tensor<64x64xf32>, tensor<64x64xf32> -> tensor<64x64xf32>
  %c = kgraph.add %b, %m : tensor<64x64xf32>, tensor<64x64xf32>
  return %c, %m : tensor<64x64xf32>, tensor<64x64xf32>
}

// -----

// The same cycle through a region with recomputation on: %c's group computes
// its own exp.
// CHECK-LABEL: func @through_region
// CHECK: %[[A:.*]] = kgraph.exp
// CHECK: %[[R:.*]] = scf.if
// CHECK: kgraph.fused elementwise (%{{.*}}, %[[R]])
// CHECK: kgraph.exp
// CHECK-NEXT: kgraph.add
func.func @through_region(%x: tensor<8xf32>, %p: i1) -> tensor<8xf32> {
  %a = kgraph.exp %x : tensor<8xf32>
  %r = scf.if %p -> tensor<8xf32> {
    %n = kgraph.neg %a : tensor<8xf32>
    scf.yield %n : tensor<8xf32>
  } else {
    scf.yield %x : tensor<8xf32>
  }
  %c = kgraph.add %a, %r : tensor<8xf32>, tensor<8xf32>
  return %c : tensor<8xf32>
}
