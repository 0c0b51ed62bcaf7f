// RUN: kgraph-opt %s --split-input-file \
// RUN:   --pass-pipeline='builtin.module(func.func(kgraph-form-kernels),kgraph-tile{target=sm_80},kgraph-lower-to-gpu,canonicalize,cse)' \
// RUN:   | FileCheck %s

// SIMT fma, pinned: 32x32 warp tiles over 4 x 8 lanes, 8 x 4 elements per
// thread. A ([m][k], rows along K) is read one row per thread element,
// four k at a time (16-byte vector loads, kept for four k steps); B ([k][n])
// one 16-byte chunk of 4 columns per k; each k is 8 x 4 fma on vector<4xf32>
// rows of a vector<8x4xf32> accumulator; the epilogue stores 4 columns at a
// time where the block tile is inside C.
// CHECK-LABEL: func.func @fma_pinned
// CHECK: gpu.func @fma_pinned_k0
// CHECK-DAG: %[[A:.*]] = memref.view {{.*}} to memref<3x64x20xf32, #gpu.address_space<workgroup>>
// CHECK-DAG: %[[B:.*]] = memref.view {{.*}} to memref<3x16x68xf32, #gpu.address_space<workgroup>>
// CHECK: scf.for {{.*}} iter_args(%[[ACC:.*]] = %{{.*}}) -> (vector<8x4xf32>)
// CHECK-COUNT-8: vector.load %[[A]][{{.*}}] {alignment = 16 : i64} : memref<3x64x20xf32, #gpu.address_space<workgroup>>, vector<4xf32>
// CHECK: vector.load %[[B]][{{.*}}] {alignment = 16 : i64} : memref<3x16x68xf32, #gpu.address_space<workgroup>>, vector<4xf32>
// CHECK: vector.extract %[[ACC]][0] : vector<4xf32> from vector<8x4xf32>
// CHECK-NEXT: math.fma {{.*}} : vector<4xf32>
// CHECK-NOT: vector.load %[[A]]
// CHECK: vector.load %[[B]]
// CHECK: vector.load %[[A]]
// CHECK: scf.yield {{.*}} : vector<8x4xf32>
// CHECK: scf.if
// CHECK: vector.store {{.*}} {alignment = 16 : i64} : memref<7200xf32>, vector<4xf32>
// CHECK: } else {
// CHECK: memref.store {{.*}} : memref<7200xf32>
func.func @fma_pinned(%a: tensor<100x64xf32>, %b: tensor<64x72xf32>) -> tensor<100x72xf32> {
  %0 = kgraph.fused (%a, %b) {kgraph.config = #kgraph.matmul_config<tile_m = 64, tile_n = 64, tile_k = 16, warps_m = 2, warps_n = 2, stages = 3, instruction = fma, instruction_shape = [1, 1, 1], load_width = 4, smem_padding = 4>} : (tensor<100x64xf32>, tensor<64x72xf32>) -> tensor<100x72xf32> {
  ^bb0(%x: tensor<100x64xf32>, %y: tensor<64x72xf32>):
    %r = kgraph.matmul %x, %y : tensor<100x64xf32>, tensor<64x72xf32> -> tensor<100x72xf32>
    kgraph.yield %r : tensor<100x72xf32>
  }
  return %0 : tensor<100x72xf32>
}

// -----

// Both operands transposed: A ([k][m]) is now read in 4-row chunks along
// its stored rows, B ([n][k]) one row per thread column, along K; so the
// accumulators hold one column each (vector<8x1xf32>, scalar stores).
// CHECK-LABEL: func.func @fma_transposed
// CHECK: gpu.func @fma_transposed_k0
// CHECK-DAG: %[[A:.*]] = memref.view {{.*}} to memref<3x16x68xf32, #gpu.address_space<workgroup>>
// CHECK-DAG: %[[B:.*]] = memref.view {{.*}} to memref<3x64x20xf32, #gpu.address_space<workgroup>>
// CHECK: scf.for {{.*}} -> (vector<8x1xf32>, vector<8x1xf32>, vector<8x1xf32>, vector<8x1xf32>)
// CHECK: vector.load %[[A]][{{.*}}] {alignment = 16 : i64} : memref<3x16x68xf32, #gpu.address_space<workgroup>>, vector<4xf32>
// CHECK: vector.load %[[B]][{{.*}}] {alignment = 16 : i64} : memref<3x64x20xf32, #gpu.address_space<workgroup>>, vector<4xf32>
// CHECK: math.fma {{.*}} : vector<1xf32>
func.func @fma_transposed(%a: tensor<64x128xf32>, %b: tensor<128x64xf32>) -> tensor<128x128xf32> {
  %0 = kgraph.fused (%a, %b) {kgraph.config = #kgraph.matmul_config<tile_m = 64, tile_n = 64, tile_k = 16, warps_m = 2, warps_n = 2, stages = 3, instruction = fma, instruction_shape = [1, 1, 1], load_width = 4, smem_padding = 4>} : (tensor<64x128xf32>, tensor<128x64xf32>) -> tensor<128x128xf32> {
  ^bb0(%x: tensor<64x128xf32>, %y: tensor<128x64xf32>):
    %r = kgraph.matmul %x, %y {transpose_a, transpose_b} : tensor<64x128xf32>, tensor<128x64xf32> -> tensor<128x128xf32>
    kgraph.yield %r : tensor<128x128xf32>
  }
  return %0 : tensor<128x128xf32>
}
