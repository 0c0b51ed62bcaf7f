// RUN: kgraph-opt %s --split-input-file \
// RUN:   --pass-pipeline='builtin.module(func.func(kgraph-form-kernels),kgraph-tile{target=sm_80},kgraph-lower-to-gpu,canonicalize,cse)' \
// RUN:   | FileCheck %s

// i8 -> i32: mma.sync m16n8k32 (s8). A ([m][k]) comes through ldmatrix x4
// (an 8x8 b16 matrix is 8 rows of 16 k, four per register); B ([k][n]) is
// gathered four bytes per register with scalar loads. The i32 accumulators
// are stored as they are.
// CHECK-LABEL: func.func @i8
// CHECK: gpu.func @i8_k0
// CHECK-DAG: %[[A:.*]] = memref.view {{.*}} to memref<4x128x80xi8, #gpu.address_space<workgroup>>
// CHECK-DAG: %[[B:.*]] = memref.view {{.*}} to memref<4x64x144xi8, #gpu.address_space<workgroup>>
// CHECK: scf.for
// CHECK: nvgpu.ldmatrix %[[A]]{{.*}} {numTiles = 4 : i32, transpose = false} : memref<4x128x80xi8, #gpu.address_space<workgroup>> -> vector<4x4xi8>
// CHECK-COUNT-8: memref.load %[[B]]
// CHECK: vector.from_elements {{.*}} : vector<2x4xi8>
// CHECK: nvgpu.mma.sync({{.*}}) {mmaShape = [16, 8, 32]} : (vector<4x4xi8>, vector<2x4xi8>, vector<2x2xi32>) -> vector<2x2xi32>
// CHECK-NOT: arith.trunci
// CHECK: vector.store {{.*}} : memref<128x136xi32, #gpu.address_space<workgroup>>, vector<2xi32>
// CHECK: vector.load {{.*}} : memref<128x136xi32, #gpu.address_space<workgroup>>, vector<4xi32>
// CHECK-NOT: arith.trunci
// CHECK: vector.store {{.*}} : memref<65536xi32>, vector<4xi32>
func.func @i8(%a: tensor<256x128xi8>, %b: tensor<128x256xi8>) -> tensor<256x256xi32> {
  %0 = kgraph.fused (%a, %b) {kgraph.config = #kgraph.matmul_config<tile_m = 128, tile_n = 128, tile_k = 64, warps_m = 2, warps_n = 2, stages = 4, instruction = mma_sync, instruction_shape = [16, 8, 32], load_width = 16, smem_padding = 16>} : (tensor<256x128xi8>, tensor<128x256xi8>) -> tensor<256x256xi32> {
  ^bb0(%x: tensor<256x128xi8>, %y: tensor<128x256xi8>):
    %r = kgraph.matmul %x, %y : tensor<256x128xi8>, tensor<128x256xi8> -> tensor<256x256xi32>
    kgraph.yield %r : tensor<256x256xi32>
  }
  return %0 : tensor<256x256xi32>
}

// -----

// Transposed: B ([n][k]) through ldmatrix, A ([k][m]) gathered.
// CHECK-LABEL: func.func @i8_transposed
// CHECK: gpu.func @i8_transposed_k0
// CHECK: memref.load %{{.*}} : memref<{{.*}}xi8, #gpu.address_space<workgroup>>
// CHECK: nvgpu.ldmatrix {{.*}} {numTiles = {{[24]}} : i32, transpose = false} : memref<{{.*}}xi8, #gpu.address_space<workgroup>> -> vector<{{[24]}}x4xi8>
// CHECK: nvgpu.mma.sync({{.*}}) {mmaShape = [16, 8, 32]}
func.func @i8_transposed(%a: tensor<64x96xi8>, %b: tensor<40x64xi8>) -> tensor<96x40xi32> {
  %0 = kgraph.matmul %a, %b {transpose_a, transpose_b} : tensor<64x96xi8>, tensor<40x64xi8> -> tensor<96x40xi32>
  return %0 : tensor<96x40xi32>
}
