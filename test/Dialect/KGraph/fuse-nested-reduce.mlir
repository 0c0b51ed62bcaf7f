// RUN: kgraph-opt %s --split-input-file --kgraph-fuse | FileCheck %s
// RUN: kgraph-opt %s --split-input-file \
// RUN:   --pass-pipeline='builtin.module(func.func(kgraph-fuse,kgraph-form-kernels),kgraph-tile{target=sm_90a},kgraph-lower-to-gpu)' \
// RUN:   | FileCheck %s --check-prefix=GPU
// RUN: kgraph-opt %s --split-input-file \
// RUN:   --pass-pipeline='builtin.module(func.func(kgraph-fuse,kgraph-form-kernels),kgraph-tile{target=sm_90a})' \
// RUN:   | FileCheck %s --check-prefix=TILE

// Nested reductions (docs/fusion.md, "Reductions"): a small reduction (at
// most kMaxInlineReduceElements = 8 input elements per result element)
// feeding a reduction of other rows joins that reduction's group and is
// evaluated inline, with the producers of both; the N x N intermediate is
// never written.

// All-pairs N-body accelerations: the sum over x, y, z (3 elements) inside
// the sum over bodies. The per-pair values [N, N, 1] are evaluated for each
// of the 3 components that read them, the squared components once per pair
// value: 3 evaluations per element, within kMaxInlineEvaluations.
// Producers are adopted latest first, so inv (read by inv2 twice and by
// inv3) joins once, after all its readers, and is not recomputed: one
// inner reduction in the group.
// CHECK-LABEL: func @nbody
// CHECK-SAME: (%[[P:.*]]: tensor<37x3xf32>, %[[M:.*]]: tensor<37xf32>)
// CHECK-NOT: kgraph.fused
// CHECK: %[[G:.*]] = kgraph.fused reduce
// CHECK: kgraph.sub
// CHECK: kgraph.mul
// CHECK: kgraph.reduce sum %{{.*}} axes = [2] keep_dims : tensor<37x37x3xf32>
// CHECK-NOT: kgraph.reduce
// CHECK: kgraph.rsqrt
// CHECK-NOT: kgraph.reduce
// CHECK: kgraph.reduce sum %{{.*}} axes = [1] : tensor<37x37x3xf32>
// CHECK-NEXT: kgraph.yield
// CHECK-NOT: kgraph.fused
// CHECK: return %[[G]]
// The kernel's only buffers are the inputs and the result (no 37 x 37 one):
// the inner sum is three loads of each position pair combined in registers.
// GPU-LABEL: gpu.func @nbody_k0(
// GPU-SAME: memref<1x37x3xf32>, %{{.*}}: memref<37x1x3xf32>, %{{.*}}: memref<1x37x1xf32>, %{{.*}}: memref<37x3xf32>)
// GPU-NOT: memref<37x37
// GPU: gpu.return
func.func @nbody(%p: tensor<37x3xf32>, %m: tensor<37xf32>) -> tensor<37x3xf32> {
  %pi = kgraph.reshape %p : tensor<37x3xf32> to tensor<37x1x3xf32>
  %pj = kgraph.reshape %p : tensor<37x3xf32> to tensor<1x37x3xf32>
  %d = kgraph.sub %pj, %pi : tensor<1x37x3xf32>, tensor<37x1x3xf32>
  %sq = kgraph.mul %d, %d : tensor<37x37x3xf32>, tensor<37x37x3xf32>
  %r2 = kgraph.reduce sum %sq axes = [2] keep_dims : tensor<37x37x3xf32>
  %eps = arith.constant dense<0.01> : tensor<f32>
  %r2e = kgraph.add %r2, %eps : tensor<37x37x1xf32>, tensor<f32>
  %inv = kgraph.rsqrt %r2e : tensor<37x37x1xf32>
  %inv2 = kgraph.mul %inv, %inv : tensor<37x37x1xf32>, tensor<37x37x1xf32>
  %inv3 = kgraph.mul %inv2, %inv : tensor<37x37x1xf32>, tensor<37x37x1xf32>
  %mj = kgraph.reshape %m : tensor<37xf32> to tensor<1x37x1xf32>
  %s = kgraph.mul %inv3, %mj : tensor<37x37x1xf32>, tensor<1x37x1xf32>
  %f = kgraph.mul %d, %s : tensor<37x37x3xf32>, tensor<37x37x1xf32>
  %a = kgraph.reduce sum %f axes = [1] : tensor<37x37x3xf32>
  return %a : tensor<37x3xf32>
}

// -----

// The inner reduction drops its axis and the outer one reduces its whole
// result; the producers of the inner one (over 37 x 37 x 3) are larger
// than the outer reduction's rows and are evaluated at the inner one's
// input coordinates.
// CHECK-LABEL: func @potential
// CHECK: kgraph.fused reduce
// CHECK: kgraph.sub
// CHECK: kgraph.reduce sum %{{.*}} axes = [2] : tensor<37x37x3xf32>
// CHECK: kgraph.reduce sum %{{.*}} axes = [1] : tensor<37x37xf32>
// CHECK-NEXT: kgraph.yield
// CHECK-NOT: kgraph.fused
func.func @potential(%p: tensor<37x3xf32>, %m: tensor<37xf32>) -> tensor<37xf32> {
  %pi = kgraph.reshape %p : tensor<37x3xf32> to tensor<37x1x3xf32>
  %pj = kgraph.reshape %p : tensor<37x3xf32> to tensor<1x37x3xf32>
  %d = kgraph.sub %pj, %pi : tensor<1x37x3xf32>, tensor<37x1x3xf32>
  %sq = kgraph.mul %d, %d : tensor<37x37x3xf32>, tensor<37x37x3xf32>
  %r2 = kgraph.reduce sum %sq axes = [2] : tensor<37x37x3xf32>
  %inv = kgraph.rsqrt %r2 : tensor<37x37xf32>
  %e = kgraph.mul %inv, %m : tensor<37x37xf32>, tensor<37xf32>
  %u = kgraph.reduce sum %e axes = [1] : tensor<37x37xf32>
  return %u : tensor<37xf32>
}

// -----

// A reduction of 16 elements per result is not evaluated inline: two
// kernels (the max alone after the group that takes the neg), the 64 x 64
// values written between them.
// CHECK-LABEL: func @too_long
// GPU-LABEL: gpu.func @too_long_k0(
// GPU-SAME: memref<64x64x16xf32>, %{{.*}}: memref<64x64xf32>)
// GPU-LABEL: gpu.func @too_long_k1(
// GPU-SAME: memref<64x64xf32>, %{{.*}}: memref<64xf32>)
// CHECK: kgraph.fused reduce
// CHECK: kgraph.reduce sum %{{.*}} axes = [2] : tensor<64x64x16xf32>
// CHECK: kgraph.neg
// CHECK: kgraph.yield
// CHECK: kgraph.reduce max %{{.*}} axes = [1] : tensor<64x64xf32>
func.func @too_long(%x: tensor<64x64x16xf32>) -> tensor<64xf32> {
  %e = kgraph.exp %x : tensor<64x64x16xf32>
  %s = kgraph.reduce sum %e axes = [2] : tensor<64x64x16xf32>
  %n = kgraph.neg %s : tensor<64x64xf32>
  %m = kgraph.reduce max %n axes = [1] : tensor<64x64xf32>
  return %m : tensor<64xf32>
}

// -----

// Reductions of the same rows stay a multi-reduction group (softmax over
// rows of 8): the max is one of the group's reductions, not inlined.
// CHECK-LABEL: func @short_softmax
// CHECK: kgraph.fused reduce
// CHECK-NEXT: ^bb0
// CHECK-NEXT: kgraph.reduce max
// CHECK-NEXT: kgraph.sub
// CHECK-NEXT: kgraph.exp
// CHECK-NEXT: kgraph.reduce sum
// CHECK-NEXT: kgraph.div
// CHECK-NEXT: kgraph.yield
// CHECK-NOT: kgraph.fused
func.func @short_softmax(%x: tensor<300x8xf32>) -> tensor<300x8xf32> {
  %m = kgraph.reduce max %x axes = [1] keep_dims : tensor<300x8xf32>
  %d = kgraph.sub %x, %m : tensor<300x8xf32>, tensor<300x1xf32>
  %e = kgraph.exp %d : tensor<300x8xf32>
  %s = kgraph.reduce sum %e axes = [1] keep_dims : tensor<300x8xf32>
  %o = kgraph.div %e, %s : tensor<300x8xf32>, tensor<300x1xf32>
  return %o : tensor<300x8xf32>
}

// -----

// The N-body at 8192 bodies: 24576 outputs (a body's x, y or z) of 8192
// terms, each term about 12 ops and an inline sum of 3 (opsPerElement >=
// 8): limited by arithmetic, so not a thread per output (24576 threads
// would fill a sixth of the H200's), but 32 threads per output as for a
// long row, 786432 threads in all.
// CHECK-LABEL: func @nbody_8192
// CHECK-COUNT-1: kgraph.fused reduce
// CHECK-NOT: kgraph.fused
// TILE-LABEL: func @nbody_8192
// TILE: #kgraph.reduce_config<threads_per_row = 32, rows_per_block = 8, vector_width = 1, grid_size = 3072>
func.func @nbody_8192(%p: tensor<8192x3xf32>, %m: tensor<8192xf32>) -> tensor<8192x3xf32> {
  %pi = kgraph.reshape %p : tensor<8192x3xf32> to tensor<8192x1x3xf32>
  %pj = kgraph.reshape %p : tensor<8192x3xf32> to tensor<1x8192x3xf32>
  %d = kgraph.sub %pj, %pi : tensor<1x8192x3xf32>, tensor<8192x1x3xf32>
  %sq = kgraph.mul %d, %d : tensor<8192x8192x3xf32>, tensor<8192x8192x3xf32>
  %r2 = kgraph.reduce sum %sq axes = [2] keep_dims : tensor<8192x8192x3xf32>
  %eps = arith.constant dense<0.01> : tensor<f32>
  %r2e = kgraph.add %r2, %eps : tensor<8192x8192x1xf32>, tensor<f32>
  %inv = kgraph.rsqrt %r2e : tensor<8192x8192x1xf32>
  %inv2 = kgraph.mul %inv, %inv : tensor<8192x8192x1xf32>, tensor<8192x8192x1xf32>
  %inv3 = kgraph.mul %inv2, %inv : tensor<8192x8192x1xf32>, tensor<8192x8192x1xf32>
  %mj = kgraph.reshape %m : tensor<8192xf32> to tensor<1x8192x1xf32>
  %s = kgraph.mul %inv3, %mj : tensor<8192x8192x1xf32>, tensor<1x8192x1xf32>
  %f = kgraph.mul %d, %s : tensor<8192x8192x3xf32>, tensor<8192x8192x1xf32>
  %a = kgraph.reduce sum %f axes = [1] : tensor<8192x8192x3xf32>
  return %a : tensor<8192x3xf32>
}
