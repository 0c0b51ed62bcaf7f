// RUN: kgraph-opt %s --split-input-file --kgraph-fuse | FileCheck %s

// Multi-reduction groups (docs/fusion.md, "Reductions"): reductions of the
// same rows, the elementwise ops between them over the whole rows (reading
// per-row results broadcast along the rows) or one value per row, in one
// group.

// Softmax: max, x - max, exp, sum, divide.
// CHECK-LABEL: func @softmax
// CHECK-SAME: (%[[X:.*]]: tensor<6x33xf32>)
// CHECK: %[[G:.*]] = kgraph.fused reduce (%[[X]]) : (tensor<6x33xf32>) -> tensor<6x33xf32> {
// CHECK-NEXT: ^bb0(%[[A:.*]]: tensor<6x33xf32>):
// CHECK-NEXT: %[[M:.*]] = kgraph.reduce max %[[A]] axes = [1] keep_dims
// CHECK-NEXT: %[[D:.*]] = kgraph.sub %[[A]], %[[M]]
// CHECK-NEXT: %[[E:.*]] = kgraph.exp %[[D]]
// CHECK-NEXT: %[[S:.*]] = kgraph.reduce sum %[[E]] axes = [1] keep_dims
// CHECK-NEXT: %[[O:.*]] = kgraph.div %[[E]], %[[S]]
// CHECK-NEXT: kgraph.yield %[[O]]
// CHECK-NOT: kgraph.fused
// CHECK: return %[[G]]
func.func @softmax(%x: tensor<6x33xf32>) -> tensor<6x33xf32> {
  %m = kgraph.reduce max %x axes = [1] keep_dims : tensor<6x33xf32>
  %d = kgraph.sub %x, %m : tensor<6x33xf32>, tensor<6x1xf32>
  %e = kgraph.exp %d : tensor<6x33xf32>
  %s = kgraph.reduce sum %e axes = [1] keep_dims : tensor<6x33xf32>
  %o = kgraph.div %e, %s : tensor<6x33xf32>, tensor<6x1xf32>
  return %o : tensor<6x33xf32>
}

// -----

// Log-softmax: the log of the row sum is a per-row value between the sum
// and the last op.
// CHECK-LABEL: func @log_softmax
// CHECK: kgraph.fused reduce
// CHECK: kgraph.reduce max
// CHECK: kgraph.reduce sum
// CHECK-NEXT: kgraph.log %{{.*}} : tensor<6x1xf16>
// CHECK-NEXT: kgraph.sub %{{.*}}, %{{.*}} : tensor<6x33xf16>, tensor<6x1xf16>
// CHECK-NEXT: kgraph.yield
// CHECK-NOT: kgraph.fused
func.func @log_softmax(%x: tensor<6x33xf16>) -> tensor<6x33xf16> {
  %m = kgraph.reduce max %x axes = [1] keep_dims : tensor<6x33xf16>
  %d = kgraph.sub %x, %m : tensor<6x33xf16>, tensor<6x1xf16>
  %e = kgraph.exp %d : tensor<6x33xf16>
  %s = kgraph.reduce sum %e axes = [1] keep_dims : tensor<6x33xf16>
  %l = kgraph.log %s : tensor<6x1xf16>
  %o = kgraph.sub %d, %l : tensor<6x33xf16>, tensor<6x1xf16>
  return %o : tensor<6x33xf16>
}

// -----

// Layer norm as the importers write it (python/kgraph/importers/lowering.py):
// mean, x - mean, square, mean, + eps, rsqrt, scale, then gamma and beta.
// CHECK-LABEL: func @layer_norm
// CHECK-SAME: (%[[X:.*]]: tensor<8x2x64xbf16>, %[[G:.*]]: tensor<2x64xbf16>, %[[B:.*]]: tensor<2x64xbf16>)
// CHECK: kgraph.fused reduce (%[[X]], %[[G]], %[[B]])
// CHECK: kgraph.reduce mean %{{.*}} axes = [1, 2] keep_dims
// CHECK: kgraph.reduce mean %{{.*}} axes = [1, 2] keep_dims
// CHECK: kgraph.rsqrt
// CHECK: kgraph.add
// CHECK-NEXT: kgraph.yield
// CHECK-NOT: kgraph.fused
func.func @layer_norm(%x: tensor<8x2x64xbf16>, %g: tensor<2x64xbf16>, %b: tensor<2x64xbf16>) -> tensor<8x2x64xbf16> {
  %mu = kgraph.reduce mean %x axes = [1, 2] keep_dims : tensor<8x2x64xbf16>
  %d = kgraph.sub %x, %mu : tensor<8x2x64xbf16>, tensor<8x1x1xbf16>
  %sq = kgraph.mul %d, %d : tensor<8x2x64xbf16>, tensor<8x2x64xbf16>
  %v = kgraph.reduce mean %sq axes = [1, 2] keep_dims : tensor<8x2x64xbf16>
  %eps = arith.constant dense<1.0e-5> : tensor<bf16>
  %ve = kgraph.add %v, %eps : tensor<8x1x1xbf16>, tensor<bf16>
  %r = kgraph.rsqrt %ve : tensor<8x1x1xbf16>
  %y = kgraph.mul %d, %r : tensor<8x2x64xbf16>, tensor<8x1x1xbf16>
  %yg = kgraph.mul %y, %g : tensor<8x2x64xbf16>, tensor<2x64xbf16>
  %yb = kgraph.add %yg, %b : tensor<8x2x64xbf16>, tensor<2x64xbf16>
  return %yb : tensor<8x2x64xbf16>
}

// -----

// RMS norm: the square before the one reduction is a producer; the row
// scale after it reads x again over the whole rows.
// CHECK-LABEL: func @rms_norm
// CHECK: kgraph.fused reduce
// CHECK-NEXT: ^bb0
// CHECK: kgraph.mul
// CHECK-NEXT: kgraph.reduce mean
// CHECK: kgraph.rsqrt
// CHECK-NEXT: kgraph.mul
// CHECK-NEXT: kgraph.mul
// CHECK-NEXT: kgraph.yield
// CHECK-NOT: kgraph.fused
func.func @rms_norm(%x: tensor<5x4096xf16>, %g: tensor<4096xf16>) -> tensor<5x4096xf16> {
  %sq = kgraph.mul %x, %x : tensor<5x4096xf16>, tensor<5x4096xf16>
  %ms = kgraph.reduce mean %sq axes = [1] keep_dims : tensor<5x4096xf16>
  %eps = arith.constant dense<1.0e-6> : tensor<f16>
  %ve = kgraph.add %ms, %eps : tensor<5x1xf16>, tensor<f16>
  %r = kgraph.rsqrt %ve : tensor<5x1xf16>
  %y = kgraph.mul %x, %r : tensor<5x4096xf16>, tensor<5x1xf16>
  %yg = kgraph.mul %y, %g : tensor<5x4096xf16>, tensor<4096xf16>
  return %yg : tensor<5x4096xf16>
}

// -----

// Standard deviation down the columns (axis 0): one value per column; the
// second reduction reads (x - mean)^2.
// CHECK-LABEL: func @std_columns
// CHECK: kgraph.fused reduce
// CHECK: kgraph.reduce mean %{{.*}} axes = [0] keep_dims
// CHECK: kgraph.reduce mean %{{.*}} axes = [0]
// CHECK-NEXT: kgraph.sqrt
// CHECK-NEXT: kgraph.yield
// CHECK-NOT: kgraph.fused
func.func @std_columns(%x: tensor<37x9xf32>) -> tensor<9xf32> {
  %mu = kgraph.reduce mean %x axes = [0] keep_dims : tensor<37x9xf32>
  %d = kgraph.sub %x, %mu : tensor<37x9xf32>, tensor<1x9xf32>
  %sq = kgraph.mul %d, %d : tensor<37x9xf32>, tensor<37x9xf32>
  %v = kgraph.reduce mean %sq axes = [0] : tensor<37x9xf32>
  %sd = kgraph.sqrt %v : tensor<9xf32>
  return %sd : tensor<9xf32>
}

// -----

// Variance as E[x^2] - E[x]^2: the second reduction does not read the
// first, but its producer reads the group's input x (a sibling). Both
// per-row values are results.
// CHECK-LABEL: func @variance_siblings
// CHECK: %[[G:.*]]:2 = kgraph.fused reduce
// CHECK: kgraph.reduce mean
// CHECK: kgraph.mul
// CHECK: kgraph.reduce mean
// CHECK: kgraph.yield
// CHECK-NOT: kgraph.fused
// CHECK: return %[[G]]#{{[01]}}, %[[G]]#{{[01]}}
func.func @variance_siblings(%x: tensor<6x45xf32>) -> (tensor<6xf32>, tensor<6xf32>) {
  %mu = kgraph.reduce mean %x axes = [1] : tensor<6x45xf32>
  %sq = kgraph.mul %x, %x : tensor<6x45xf32>, tensor<6x45xf32>
  %m2 = kgraph.reduce mean %sq axes = [1] : tensor<6x45xf32>
  %mm = kgraph.mul %mu, %mu : tensor<6xf32>, tensor<6xf32>
  %v = kgraph.sub %m2, %mm : tensor<6xf32>, tensor<6xf32>
  return %v, %mu : tensor<6xf32>, tensor<6xf32>
}

// -----

// The row max is also a result of the function: the group yields it beside
// the softmax.
// CHECK-LABEL: func @softmax_and_max
// CHECK: %[[G:.*]]:2 = kgraph.fused reduce
// CHECK-NOT: kgraph.fused
// CHECK: return %[[G]]#1, %[[G]]#0
func.func @softmax_and_max(%x: tensor<6x33xf32>) -> (tensor<6x33xf32>, tensor<6x1xf32>) {
  %m = kgraph.reduce max %x axes = [1] keep_dims : tensor<6x33xf32>
  %d = kgraph.sub %x, %m : tensor<6x33xf32>, tensor<6x1xf32>
  %e = kgraph.exp %d : tensor<6x33xf32>
  %s = kgraph.reduce sum %e axes = [1] keep_dims : tensor<6x33xf32>
  %o = kgraph.div %e, %s : tensor<6x33xf32>, tensor<6x1xf32>
  return %o, %m : tensor<6x33xf32>, tensor<6x1xf32>
}

// -----

// Not fused: a reduction of other rows (the column max of the row sums) is a
// group of its own.
// CHECK-LABEL: func @other_rows
// CHECK: kgraph.fused reduce
// CHECK: kgraph.reduce sum %{{.*}} axes = [1] keep_dims
// CHECK-NEXT: kgraph.div
// CHECK-NEXT: kgraph.yield
// CHECK: kgraph.reduce max %{{.*}} axes = [0]
func.func @other_rows(%x: tensor<6x33xf32>) -> tensor<33xf32> {
  %s = kgraph.reduce sum %x axes = [1] keep_dims : tensor<6x33xf32>
  %n = kgraph.div %x, %s : tensor<6x33xf32>, tensor<6x1xf32>
  %m = kgraph.reduce max %n axes = [0] : tensor<6x33xf32>
  return %m : tensor<33xf32>
}

// -----

// Not fused: the row sum without keep_dims, [4], broadcasts along the last
// dim of [4, 4] (x[i, j] / s[j]), not along the rows. The reduce takes its
// producer (recomputed); the divide is an elementwise group.
// CHECK-LABEL: func @not_along_rows
// CHECK: %[[S:.*]] = kgraph.fused reduce
// CHECK: kgraph.reduce sum
// CHECK-NEXT: kgraph.yield
// CHECK: kgraph.fused elementwise (%{{.*}}, %[[S]])
func.func @not_along_rows(%x: tensor<4x4xf32>) -> tensor<4x4xf32> {
  %e = kgraph.exp %x : tensor<4x4xf32>
  %s = kgraph.reduce sum %e axes = [1] : tensor<4x4xf32>
  %d = kgraph.div %e, %s : tensor<4x4xf32>, tensor<4xf32>
  return %d : tensor<4x4xf32>
}

// -----

// Not fused: a reader of the group that also reads a matmul of a group
// value would close a cycle through the matmul; the group yields x - max,
// which the matmul and its residual epilogue read.
// CHECK-LABEL: func @cycle
// CHECK: %[[G:.*]] = kgraph.fused reduce
// CHECK: kgraph.reduce max
// CHECK-NEXT: kgraph.sub
// CHECK-NEXT: kgraph.yield
// CHECK: kgraph.fused gemm (%[[G]], %{{.*}})
// CHECK: kgraph.matmul
// CHECK-NEXT: kgraph.add
func.func @cycle(%x: tensor<16x16xf32>, %w: tensor<16x16xf32>) -> tensor<16x16xf32> {
  %m = kgraph.reduce max %x axes = [1] keep_dims : tensor<16x16xf32>
  %d = kgraph.sub %x, %m : tensor<16x16xf32>, tensor<16x1xf32>
  %p = kgraph.matmul %d, %w : tensor<16x16xf32>, tensor<16x16xf32> -> tensor<16x16xf32>
  %q = kgraph.add %d, %p : tensor<16x16xf32>, tensor<16x16xf32>
  return %q : tensor<16x16xf32>
}

// -----

// Not fused: two reductions of the same rows of unrelated inputs share no
// reads, so each stays alone.
// CHECK-LABEL: func @unrelated_siblings
// CHECK-NOT: kgraph.fused
func.func @unrelated_siblings(%x: tensor<6x33xf32>, %y: tensor<6x33xf32>) -> (tensor<6xf32>, tensor<6xf32>) {
  %a = kgraph.reduce sum %x axes = [1] : tensor<6x33xf32>
  %b = kgraph.reduce sum %y axes = [1] : tensor<6x33xf32>
  return %a, %b : tensor<6xf32>, tensor<6xf32>
}

// -----

// Not fused: 64 rows of 131072 f32 are too long for registers and too few
// to fill a GPU with a block each (isMultiReductionProfitable); with 128 such
// rows the softmax is one group.
// CHECK-LABEL: func @few_long_rows
// CHECK: kgraph.reduce max
// CHECK: kgraph.fused reduce
// CHECK: kgraph.reduce sum
// CHECK-NEXT: kgraph.yield
// CHECK: kgraph.fused elementwise
// CHECK-LABEL: func @many_long_rows
// CHECK: kgraph.fused reduce
// CHECK: kgraph.reduce max
// CHECK: kgraph.reduce sum
// CHECK-NEXT: kgraph.div
// CHECK-NOT: kgraph.fused
func.func @few_long_rows(%x: tensor<64x131072xf32>) -> tensor<64x131072xf32> {
  %m = kgraph.reduce max %x axes = [1] keep_dims : tensor<64x131072xf32>
  %d = kgraph.sub %x, %m : tensor<64x131072xf32>, tensor<64x1xf32>
  %e = kgraph.exp %d : tensor<64x131072xf32>
  %s = kgraph.reduce sum %e axes = [1] keep_dims : tensor<64x131072xf32>
  %o = kgraph.div %e, %s : tensor<64x131072xf32>, tensor<64x1xf32>
  return %o : tensor<64x131072xf32>
}
func.func @many_long_rows(%x: tensor<128x131072xf32>) -> tensor<128x131072xf32> {
  %m = kgraph.reduce max %x axes = [1] keep_dims : tensor<128x131072xf32>
  %d = kgraph.sub %x, %m : tensor<128x131072xf32>, tensor<128x1xf32>
  %e = kgraph.exp %d : tensor<128x131072xf32>
  %s = kgraph.reduce sum %e axes = [1] keep_dims : tensor<128x131072xf32>
  %o = kgraph.div %e, %s : tensor<128x131072xf32>, tensor<128x1xf32>
  return %o : tensor<128x131072xf32>
}
