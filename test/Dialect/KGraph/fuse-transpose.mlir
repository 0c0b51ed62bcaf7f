// RUN: kgraph-opt %s --pass-pipeline='builtin.module(func.func(kgraph-fuse))' --split-input-file | FileCheck %s

// x -> transpose -> add(bias) -> relu: the transpose joins the elementwise
// group (its kernel reads x through the access map).
// CHECK-LABEL: func @transpose_add_relu
// CHECK-SAME: (%[[X:.*]]: tensor<64x96xf32>, %[[B:.*]]: tensor<64xf32>)
// CHECK: %[[G:.*]] = kgraph.fused elementwise (%[[X]], %[[B]])
// CHECK-NEXT: ^bb0(%[[BX:.*]]: tensor<64x96xf32>, %[[BB:.*]]: tensor<64xf32>):
// CHECK-NEXT: %[[T:.*]] = kgraph.transpose %[[BX]], permutation = [1, 0]
// CHECK-NEXT: %[[A:.*]] = kgraph.add %[[T]], %[[BB]]
// CHECK-NEXT: %[[R:.*]] = kgraph.relu %[[A]]
// CHECK-NEXT: kgraph.yield %[[R]]
// CHECK-NOT: kgraph.fused
// CHECK: return %[[G]]
func.func @transpose_add_relu(%x: tensor<64x96xf32>, %b: tensor<64xf32>) -> tensor<96x64xf32> {
  %0 = kgraph.transpose %x, permutation = [1, 0] : tensor<64x96xf32>
  %1 = kgraph.add %0, %b : tensor<96x64xf32>, tensor<64xf32>
  %2 = kgraph.relu %1 : tensor<96x64xf32>
  return %2 : tensor<96x64xf32>
}

// -----

// A transpose with another user is recomputed inside the group (a free
// view); the original stays for the other user (kgraph-form-kernels wraps
// it as its own transpose kernel).
// CHECK-LABEL: func @shared_transpose
// CHECK: %[[T:.*]] = kgraph.transpose
// CHECK: kgraph.fused elementwise
// CHECK: kgraph.transpose
// CHECK: kgraph.exp
// CHECK: kgraph.yield
// CHECK: return %{{.*}}, %[[T]]
func.func @shared_transpose(%x: tensor<64x96xf32>) -> (tensor<96x64xf32>, tensor<96x64xf32>) {
  %0 = kgraph.transpose %x, permutation = [1, 0] : tensor<64x96xf32>
  %1 = kgraph.exp %0 : tensor<96x64xf32>
  return %1, %0 : tensor<96x64xf32>, tensor<96x64xf32>
}

// -----

// Chains of slices, broadcasts and transposes feeding elementwise ops.
// CHECK-LABEL: func @slice_broadcast_chain
// CHECK: kgraph.fused elementwise
// CHECK-DAG: kgraph.slice
// CHECK-DAG: kgraph.broadcast_to
// CHECK-DAG: kgraph.transpose
// CHECK: kgraph.mul
// CHECK: kgraph.add
// CHECK: kgraph.yield
// CHECK-NOT: kgraph.fused
// CHECK-NOT: kgraph.slice
// CHECK: return
func.func @slice_broadcast_chain(%x: tensor<8x6xf16>, %y: tensor<12x20xf16>, %s: tensor<1x8xf16>) -> tensor<6x8xf16> {
  %0 = kgraph.transpose %x, permutation = [1, 0] : tensor<8x6xf16>
  %1 = kgraph.slice %y offsets = [1, 0] sizes = [6, 8] strides = [2, 2] : tensor<12x20xf16>
  %2 = kgraph.broadcast_to %s : tensor<1x8xf16> to tensor<6x8xf16>
  %3 = kgraph.mul %0, %2 : tensor<6x8xf16>, tensor<6x8xf16>
  %4 = kgraph.add %3, %1 : tensor<6x8xf16>, tensor<6x8xf16>
  return %4 : tensor<6x8xf16>
}

// -----

// matmul(a, transpose(b)) reads b with transpose_b: no transpose is left.
// CHECK-LABEL: func @matmul_transposed_b
// CHECK-SAME: (%[[A:.*]]: tensor<64x32xf16>, %[[B:.*]]: tensor<128x32xf16>)
// CHECK-NOT: kgraph.transpose
// CHECK: kgraph.matmul %[[A]], %[[B]] {transpose_b} : tensor<64x32xf16>, tensor<128x32xf16> -> tensor<64x128xf32>
func.func @matmul_transposed_b(%a: tensor<64x32xf16>, %b: tensor<128x32xf16>) -> tensor<64x128xf32> {
  %0 = kgraph.transpose %b, permutation = [1, 0] : tensor<128x32xf16>
  %1 = kgraph.matmul %a, %0 : tensor<64x32xf16>, tensor<32x128xf16> -> tensor<64x128xf32>
  return %1 : tensor<64x128xf32>
}

// -----

// A batched transpose of the matrix dims toggles the flag (here off again);
// a permutation that moves the batch dim does not fold.
// CHECK-LABEL: func @matmul_batched
// CHECK-SAME: (%[[A:.*]]: tensor<2x64x32xf32>, %[[B:.*]]: tensor<2x32x48xf32>, %[[C:.*]]: tensor<32x2x48xf32>)
// CHECK: kgraph.matmul %[[A]], %[[B]] : tensor<2x64x32xf32>, tensor<2x32x48xf32> -> tensor<2x64x48xf32>
// CHECK: %[[T:.*]] = kgraph.transpose %[[C]], permutation = [1, 0, 2]
// CHECK: kgraph.matmul %[[A]], %[[T]] : tensor<2x64x32xf32>, tensor<2x32x48xf32> -> tensor<2x64x48xf32>
func.func @matmul_batched(%a: tensor<2x64x32xf32>, %b: tensor<2x32x48xf32>, %c: tensor<32x2x48xf32>) -> (tensor<2x64x48xf32>, tensor<2x64x48xf32>) {
  %0 = kgraph.transpose %a, permutation = [0, 2, 1] : tensor<2x64x32xf32>
  %1 = kgraph.matmul %0, %b {transpose_a} : tensor<2x32x64xf32>, tensor<2x32x48xf32> -> tensor<2x64x48xf32>
  %2 = kgraph.transpose %c, permutation = [1, 0, 2] : tensor<32x2x48xf32>
  %3 = kgraph.matmul %a, %2 : tensor<2x64x32xf32>, tensor<2x32x48xf32> -> tensor<2x64x48xf32>
  return %1, %3 : tensor<2x64x48xf32>, tensor<2x64x48xf32>
}

// -----

// A transposed residual joins the GEMM epilogue: the epilogue reads it
// through the transpose's access map.
// CHECK-LABEL: func @epilogue_transposed_residual
// CHECK: %[[G:.*]] = kgraph.fused gemm
// CHECK: kgraph.matmul
// CHECK: kgraph.transpose
// CHECK: kgraph.add
// CHECK: kgraph.relu
// CHECK: kgraph.yield
// CHECK-NOT: kgraph.transpose
// CHECK: return %[[G]]
func.func @epilogue_transposed_residual(%a: tensor<64x32xf16>, %b: tensor<32x128xf16>, %r: tensor<128x64xf32>) -> tensor<64x128xf32> {
  %0 = kgraph.matmul %a, %b : tensor<64x32xf16>, tensor<32x128xf16> -> tensor<64x128xf32>
  %1 = kgraph.transpose %r, permutation = [1, 0] : tensor<128x64xf32>
  %2 = kgraph.add %0, %1 : tensor<64x128xf32>, tensor<64x128xf32>
  %3 = kgraph.relu %2 : tensor<64x128xf32>
  return %3 : tensor<64x128xf32>
}

// -----

// Q K^T of a fused QKV projection: both slices (unit steps along the last
// dim) join the GEMM group, which reads them in place from its one input
// %qkv; the slice with a step along the last dim stays out (a copy kernel
// of kgraph-form-kernels).
// CHECK-LABEL: func @matmul_sliced_operands
// CHECK: kgraph.fused gemm (%arg0) : (tensor<64x192xf16>) -> tensor<64x64xf32>
// CHECK-NEXT: ^bb0(%[[X:.*]]: tensor<64x192xf16>):
// CHECK-NEXT: %[[Q:.*]] = kgraph.slice %[[X]] offsets = [0, 0] sizes = [64, 64]
// CHECK-NEXT: %[[K:.*]] = kgraph.slice %[[X]] offsets = [0, 64] sizes = [64, 64]
// CHECK-NEXT: kgraph.matmul %[[Q]], %[[K]] {transpose_b}
// CHECK: kgraph.slice %arg0 offsets = [0, 1] sizes = [64, 32] strides = [1, 3]
// CHECK-NEXT: kgraph.matmul
func.func @matmul_sliced_operands(%qkv: tensor<64x192xf16>, %w: tensor<32x16xf16>) -> (tensor<64x64xf32>, tensor<64x16xf32>) {
  %q = kgraph.slice %qkv offsets = [0, 0] sizes = [64, 64] strides = [1, 1] : tensor<64x192xf16>
  %k = kgraph.slice %qkv offsets = [0, 64] sizes = [64, 64] strides = [1, 1] : tensor<64x192xf16>
  %s = kgraph.matmul %q, %k {transpose_b} : tensor<64x64xf16>, tensor<64x64xf16> -> tensor<64x64xf32>
  %e = kgraph.slice %qkv offsets = [0, 1] sizes = [64, 32] strides = [1, 3] : tensor<64x192xf16>
  %m = kgraph.matmul %e, %w : tensor<64x32xf16>, tensor<32x16xf16> -> tensor<64x16xf32>
  return %s, %m : tensor<64x64xf32>, tensor<64x16xf32>
}

// -----

// A slice that is also used elsewhere: the GEMM group reads its own copy in
// place, the elementwise group reads the original through its access map.
// CHECK-LABEL: func @matmul_shared_slice
// CHECK: kgraph.fused gemm
// CHECK: kgraph.slice
// CHECK-NEXT: kgraph.matmul
// CHECK: kgraph.fused elementwise
// CHECK: kgraph.slice
// CHECK-NEXT: kgraph.exp
func.func @matmul_shared_slice(%x: tensor<64x96xf32>, %w: tensor<32x8xf32>) -> (tensor<64x8xf32>, tensor<64x32xf32>) {
  %a = kgraph.slice %x offsets = [0, 32] sizes = [64, 32] strides = [1, 1] : tensor<64x96xf32>
  %m = kgraph.matmul %a, %w : tensor<64x32xf32>, tensor<32x8xf32> -> tensor<64x8xf32>
  %e = kgraph.exp %a : tensor<64x32xf32>
  return %m, %e : tensor<64x8xf32>, tensor<64x32xf32>
}
