// RUN: kgraph-opt %s --split-input-file \
// RUN:   --pass-pipeline='builtin.module(func.func(kgraph-form-kernels),kgraph-tile{target=sm_75},kgraph-lower-to-gpu,canonicalize,cse)' \
// RUN:   | FileCheck %s

// sm_75 (no cp.async, so one stage copied synchronously). f16 takes
// mma.sync m16n8k8: A through ldmatrix x2, B through ldmatrix .trans x2 for
// each pair of n-tiles.
// CHECK-LABEL: func.func @f16_k8
// CHECK: gpu.func @f16_k8_k0
// CHECK: scf.for
// CHECK: nvgpu.ldmatrix {{.*}} {numTiles = 2 : i32, transpose = false} : memref<1x64x72xf16, #gpu.address_space<workgroup>> -> vector<2x2xf16>
// CHECK: nvgpu.ldmatrix {{.*}} {numTiles = 2 : i32, transpose = true} : memref<1x64x72xf16, #gpu.address_space<workgroup>> -> vector<2x2xf16>
// CHECK: nvgpu.mma.sync({{.*}}) {mmaShape = [16, 8, 8]} : (vector<2x2xf16>, vector<1x2xf16>, vector<2x2xf32>) -> vector<2x2xf32>
func.func @f16_k8(%a: tensor<64x96xf16>, %b: tensor<96x40xf16>) -> tensor<64x40xf32> {
  %0 = kgraph.fused (%a, %b) {kgraph.config = #kgraph.matmul_config<tile_m = 64, tile_n = 64, tile_k = 64, warps_m = 2, warps_n = 4, stages = 1, instruction = mma_sync, instruction_shape = [16, 8, 8], load_width = 8, smem_padding = 8>} : (tensor<64x96xf16>, tensor<96x40xf16>) -> tensor<64x40xf32> {
  ^bb0(%x: tensor<64x96xf16>, %y: tensor<96x40xf16>):
    %r = kgraph.matmul %x, %y : tensor<64x96xf16>, tensor<96x40xf16> -> tensor<64x40xf32>
    kgraph.yield %r : tensor<64x40xf32>
  }
  return %0 : tensor<64x40xf32>
}

// -----

// Transposed operands swap which side ldmatrix transposes; a warp tile of
// one n-tile loads B with ldmatrix x1.
// CHECK-LABEL: func.func @f16_k8_transposed
// CHECK: gpu.func @f16_k8_transposed_k0
// CHECK: nvgpu.ldmatrix {{.*}} {numTiles = 2 : i32, transpose = true} : memref<1x64x72xf16, #gpu.address_space<workgroup>> -> vector<2x2xf16>
// CHECK: nvgpu.ldmatrix {{.*}} {numTiles = 1 : i32, transpose = false} : memref<1x32x72xf16, #gpu.address_space<workgroup>> -> vector<1x2xf16>
// CHECK: nvgpu.mma.sync({{.*}}) {mmaShape = [16, 8, 8]}
// CHECK: arith.truncf {{.*}} : f32 to f16
func.func @f16_k8_transposed(%a: tensor<96x64xf16>, %b: tensor<40x96xf16>) -> tensor<64x40xf16> {
  %0 = kgraph.fused (%a, %b) {kgraph.config = #kgraph.matmul_config<tile_m = 64, tile_n = 32, tile_k = 64, warps_m = 2, warps_n = 4, stages = 1, instruction = mma_sync, instruction_shape = [16, 8, 8], load_width = 8, smem_padding = 8>} : (tensor<96x64xf16>, tensor<40x96xf16>) -> tensor<64x40xf16> {
  ^bb0(%x: tensor<96x64xf16>, %y: tensor<40x96xf16>):
    %r = kgraph.matmul %x, %y {transpose_a, transpose_b} : tensor<96x64xf16>, tensor<40x96xf16> -> tensor<64x40xf16>
    kgraph.yield %r : tensor<64x40xf16>
  }
  return %0 : tensor<64x40xf16>
}

// -----

// i8 has no mma.sync kgraph generates on sm_75: SIMT fma in i32 (operands
// sign-extended, muli + addi), stored as i32 without conversion. The 16x8
// warp tile spreads over 8 x 4 lanes: 2 x 2 elements per thread, B read as
// pairs of columns.
// CHECK-LABEL: func.func @i8_fma
// CHECK: gpu.func @i8_fma_k0
// CHECK: scf.for {{.*}} -> (vector<2x2xi32>)
// CHECK: vector.load {{.*}} {alignment = 2 : i64} : memref<1x64x48xi8, #gpu.address_space<workgroup>>, vector<2xi8>
// CHECK: arith.extsi {{.*}} : i8 to i32
// CHECK: arith.muli {{.*}} : vector<2xi32>
// CHECK: arith.addi {{.*}} : vector<2xi32>
// CHECK-NOT: arith.trunci
// CHECK: vector.store {{.*}} : memref<2560xi32>, vector<4xi32>
func.func @i8_fma(%a: tensor<64x96xi8>, %b: tensor<96x40xi8>) -> tensor<64x40xi32> {
  %0 = kgraph.fused (%a, %b) {kgraph.config = #kgraph.matmul_config<tile_m = 32, tile_n = 32, tile_k = 64, warps_m = 2, warps_n = 4, stages = 1, instruction = fma, instruction_shape = [1, 1, 1], load_width = 8, smem_padding = 16>} : (tensor<64x96xi8>, tensor<96x40xi8>) -> tensor<64x40xi32> {
  ^bb0(%x: tensor<64x96xi8>, %y: tensor<96x40xi8>):
    %r = kgraph.matmul %x, %y : tensor<64x96xi8>, tensor<96x40xi8> -> tensor<64x40xi32>
    kgraph.yield %r : tensor<64x40xi32>
  }
  return %0 : tensor<64x40xi32>
}
