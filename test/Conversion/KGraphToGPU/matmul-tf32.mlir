// RUN: kgraph-opt %s --split-input-file \
// RUN:   --pass-pipeline='builtin.module(func.func(kgraph-form-kernels),kgraph-tile{target=sm_80},kgraph-lower-to-gpu,canonicalize,cse)' \
// RUN:   | FileCheck %s

// f32 with precision = tf32: mma.sync m16n8k8 with tf32Enabled. A ([m][k])
// comes through ldmatrix x4 (an 8x8 b16 matrix is 8 rows of four f32 k);
// B ([k][n]) would need a 32-bit transpose, so its two registers per n-tile
// are scalar shared loads.
// CHECK-LABEL: func.func @tf32
// CHECK: gpu.func @tf32_k0
// CHECK-DAG: %[[A:.*]] = memref.view {{.*}} to memref<3x128x20xf32, #gpu.address_space<workgroup>>
// CHECK-DAG: %[[B:.*]] = memref.view {{.*}} to memref<3x16x132xf32, #gpu.address_space<workgroup>>
// CHECK: scf.for
// CHECK: nvgpu.ldmatrix %[[A]]{{.*}} {numTiles = 4 : i32, transpose = false} : memref<3x128x20xf32, #gpu.address_space<workgroup>> -> vector<4x1xf32>
// CHECK: memref.load %[[B]]
// CHECK: nvgpu.mma.sync({{.*}}) {mmaShape = [16, 8, 8], tf32Enabled} : (vector<4x1xf32>, vector<2x1xf32>, vector<2x2xf32>) -> vector<2x2xf32>
func.func @tf32(%a: tensor<256x64xf32>, %b: tensor<64x256xf32>) -> tensor<256x256xf32> {
  %0 = kgraph.fused (%a, %b) {kgraph.config = #kgraph.matmul_config<tile_m = 128, tile_n = 128, tile_k = 16, warps_m = 2, warps_n = 2, stages = 3, instruction = mma_sync, instruction_shape = [16, 8, 8], load_width = 4, smem_padding = 4>} : (tensor<256x64xf32>, tensor<64x256xf32>) -> tensor<256x256xf32> {
  ^bb0(%x: tensor<256x64xf32>, %y: tensor<64x256xf32>):
    %r = kgraph.matmul %x, %y precision = tf32 : tensor<256x64xf32>, tensor<64x256xf32> -> tensor<256x256xf32>
    kgraph.yield %r : tensor<256x256xf32>
  }
  return %0 : tensor<256x256xf32>
}

// -----

// Transposed: B ([n][k]) now comes through ldmatrix (x4 for two n-tiles,
// x2 for one), A ([k][m]) through scalar loads; batched, odd shapes (one k tile,
// so no loop).
// CHECK-LABEL: func.func @tf32_transposed_batched
// CHECK: gpu.func @tf32_transposed_batched_k0
// CHECK: gpu.block_id z
// CHECK: memref.load %{{.*}} : memref<{{.*}}xf32, #gpu.address_space<workgroup>>
// CHECK: nvgpu.ldmatrix {{.*}} {numTiles = {{[24]}} : i32, transpose = false} : memref<{{.*}}xf32, #gpu.address_space<workgroup>> -> vector<{{[24]}}x1xf32>
// CHECK: nvgpu.mma.sync({{.*}}) {mmaShape = [16, 8, 8], tf32Enabled}
func.func @tf32_transposed_batched(%a: tensor<3x36x65xf32>, %b: tensor<3x33x36xf32>) -> tensor<3x65x33xf32> {
  %0 = kgraph.matmul %a, %b precision = tf32 {transpose_a, transpose_b} : tensor<3x36x65xf32>, tensor<3x33x36xf32> -> tensor<3x65x33xf32>
  return %0 : tensor<3x65x33xf32>
}
