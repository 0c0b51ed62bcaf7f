// RUN: kgraph-opt %s --split-input-file \
// RUN:   --pass-pipeline='builtin.module(func.func(kgraph-form-kernels),kgraph-tile{target=sm_90a})' | FileCheck %s
// RUN: kgraph-opt %s --split-input-file \
// RUN:   --pass-pipeline='builtin.module(func.func(kgraph-form-kernels),kgraph-tile{target=sm_80})' | FileCheck %s --check-prefix=SM80
// RUN: kgraph-opt %s --split-input-file \
// RUN:   --pass-pipeline='builtin.module(func.func(kgraph-form-kernels),kgraph-tile{target=sm_90})' | FileCheck %s --check-prefix=SM90
// RUN: kgraph-opt %s --split-input-file \
// RUN:   --pass-pipeline='builtin.module(func.func(kgraph-form-kernels),kgraph-tile{target=sm_75})' | FileCheck %s --check-prefix=SM75
// RUN: kgraph-opt %s --split-input-file \
// RUN:   --pass-pipeline='builtin.module(func.func(kgraph-form-kernels),kgraph-tile{target=sm_70})' | FileCheck %s --check-prefix=SM70

// Matmul tiling chosen by the model of MatmulTiling.h/.cpp for the H200
// (sm_90a, the default prefix), the A100 (sm_80), the T4 (sm_75: mma.sync
// m16n8k8 for f16, no cp.async so at most 2 stages, fma for bf16, tf32 and
// i8) and the V100 (sm_70: only m8n8k4, so everything is SIMT fma).

// The square GEMM: on the H200 wgmma (twice mma.sync's rate in the model)
// with 128x256 blocks of 2 warpgroups side by side (warps_n = 2), each two
// 64-row slabs of m64n128k16, 4 stages of 64-deep K tiles, operands loaded
// by TMA from a producer warpgroup (copy = tma: one block per SM anyway) and
// grouped rasterization (group_m = 16: the 512 blocks take four waves);
// elsewhere 128x128 blocks of 2x2 warps (64x64
// warp tiles, 232 registers: two blocks per SM) with a 4-stage cp.async
// pipeline.
// CHECK-LABEL: func @f16_4096(
// CHECK: kgraph.fused{{.*}}{kgraph.config = #kgraph.matmul_config<tile_m = 128, tile_n = 256, tile_k = 64, warps_m = 8, warps_n = 1, stages = 4, instruction = wgmma, instruction_shape = [64, 256, 16], load_width = 8, smem_padding = 0, group_m = 16, copy = tma>}
// Plain sm_90 (no "a" features) has no wgmma: mma.sync.
// SM90-LABEL: func @f16_4096(
// SM90: kgraph.config = #kgraph.matmul_config<{{.*}}instruction = mma_sync, instruction_shape = [16, 8, 16]
// SM80-LABEL: func @f16_4096(
// SM80: kgraph.fused{{.*}}{kgraph.config = #kgraph.matmul_config<tile_m = 128, tile_n = 128, tile_k = 32, warps_m = 2, warps_n = 2, stages = 4, instruction = mma_sync, instruction_shape = [16, 8, 16], load_width = 8, smem_padding = 8>}
// SM75-LABEL: func @f16_4096(
// SM75: kgraph.fused{{.*}}{kgraph.config = #kgraph.matmul_config<tile_m = 128, tile_n = 128, tile_k = 16, warps_m = 2, warps_n = 2, stages = 2, instruction = mma_sync, instruction_shape = [16, 8, 8], load_width = 8, smem_padding = 8>}
// SM70-LABEL: func @f16_4096(
// SM70: kgraph.fused{{.*}}{kgraph.config = #kgraph.matmul_config<tile_m = 64, tile_n = 128, tile_k = 32, warps_m = 1, warps_n = 4, stages = 2, instruction = fma, instruction_shape = [1, 1, 1], load_width = 8, smem_padding = 8>}
func.func @f16_4096(%a: tensor<4096x4096xf16>, %b: tensor<4096x4096xf16>) -> tensor<4096x4096xf32> {
  %0 = kgraph.matmul %a, %b : tensor<4096x4096xf16>, tensor<4096x4096xf16> -> tensor<4096x4096xf32>
  return %0 : tensor<4096x4096xf32>
}

// -----

// 1024^3 has too few 128x128 tiles for 132 SMs: the H200 takes 64x128 blocks
// of one warpgroup (wgmma, 7 stages: the deepest the model tries with TMA
// loads; one is still read by the previous tile's wgmmas); sm_80 (108 SMs)
// keeps 128x128. An f16 result still accumulates in f32.
// CHECK-LABEL: func @f16_1024(
// CHECK: kgraph.fused{{.*}}{kgraph.config = #kgraph.matmul_config<tile_m = 64, tile_n = 128, tile_k = 64, warps_m = 4, warps_n = 1, stages = 7, instruction = wgmma, instruction_shape = [64, 128, 16], load_width = 8, smem_padding = 0, copy = tma>}
// SM80-LABEL: func @f16_1024(
// SM80: kgraph.fused{{.*}}{kgraph.config = #kgraph.matmul_config<tile_m = 128, tile_n = 128, tile_k = 32, warps_m = 2, warps_n = 4, stages = 4, instruction = mma_sync, instruction_shape = [16, 8, 16], load_width = 8, smem_padding = 8>}
// SM75-LABEL: func @f16_1024(
// SM75: kgraph.fused{{.*}}{kgraph.config = #kgraph.matmul_config<tile_m = 128, tile_n = 256, tile_k = 32, warps_m = 2, warps_n = 4, stages = 2, instruction = mma_sync, instruction_shape = [16, 8, 8], load_width = 8, smem_padding = 8>}
// SM70-LABEL: func @f16_1024(
// SM70: kgraph.fused{{.*}}{kgraph.config = #kgraph.matmul_config<tile_m = 32, tile_n = 32, tile_k = 16, warps_m = 1, warps_n = 1, stages = 2, instruction = fma, instruction_shape = [1, 1, 1], load_width = 8, smem_padding = 8>}
func.func @f16_1024(%a: tensor<1024x1024xf16>, %b: tensor<1024x1024xf16>) -> tensor<1024x1024xf16> {
  %0 = kgraph.matmul %a, %b : tensor<1024x1024xf16>, tensor<1024x1024xf16> -> tensor<1024x1024xf16>
  return %0 : tensor<1024x1024xf16>
}

// -----

// ResNet-like 3136x64x576: N = 64 fits one block column; small 32x64 tiles
// give 98 blocks instead of 25.
// CHECK-LABEL: func @conv_like(
// CHECK: kgraph.fused{{.*}}{kgraph.config = #kgraph.matmul_config<tile_m = 32, tile_n = 64, tile_k = 64, warps_m = 2, warps_n = 4, stages = 4, instruction = mma_sync, instruction_shape = [16, 8, 16], load_width = 8, smem_padding = 8>}
// SM80-LABEL: func @conv_like(
// SM80: kgraph.fused{{.*}}{kgraph.config = #kgraph.matmul_config<tile_m = 32, tile_n = 64, tile_k = 64, warps_m = 2, warps_n = 4, stages = 4, instruction = mma_sync, instruction_shape = [16, 8, 16], load_width = 8, smem_padding = 8>}
// SM75-LABEL: func @conv_like(
// SM75: kgraph.fused{{.*}}{kgraph.config = #kgraph.matmul_config<tile_m = 128, tile_n = 64, tile_k = 64, warps_m = 4, warps_n = 2, stages = 2, instruction = mma_sync, instruction_shape = [16, 8, 8], load_width = 8, smem_padding = 8>}
// SM70-LABEL: func @conv_like(
// SM70: kgraph.fused{{.*}}{kgraph.config = #kgraph.matmul_config<tile_m = 32, tile_n = 32, tile_k = 64, warps_m = 2, warps_n = 2, stages = 2, instruction = fma, instruction_shape = [1, 1, 1], load_width = 8, smem_padding = 8>}
func.func @conv_like(%a: tensor<3136x576xf16>, %b: tensor<576x64xf16>) -> tensor<3136x64xf32> {
  %0 = kgraph.matmul %a, %b : tensor<3136x576xf16>, tensor<576x64xf16> -> tensor<3136x64xf32>
  return %0 : tensor<3136x64xf32>
}

// -----

// 256x1000x2048: N = 1000 is a multiple of 8, so 16-byte loads stay.
// CHECK-LABEL: func @classifier(
// CHECK: kgraph.fused{{.*}}{kgraph.config = #kgraph.matmul_config<tile_m = 32, tile_n = 64, tile_k = 64, warps_m = 1, warps_n = 4, stages = 4, instruction = mma_sync, instruction_shape = [16, 8, 16], load_width = 8, smem_padding = 8>}
// SM80-LABEL: func @classifier(
// SM80: kgraph.fused{{.*}}{kgraph.config = #kgraph.matmul_config<tile_m = 64, tile_n = 64, tile_k = 64, warps_m = 2, warps_n = 2, stages = 4, instruction = mma_sync, instruction_shape = [16, 8, 16], load_width = 8, smem_padding = 8>}
// SM75-LABEL: func @classifier(
// SM75: kgraph.fused{{.*}}{kgraph.config = #kgraph.matmul_config<tile_m = 64, tile_n = 128, tile_k = 64, warps_m = 2, warps_n = 4, stages = 2, instruction = mma_sync, instruction_shape = [16, 8, 8], load_width = 8, smem_padding = 8>}
// SM70-LABEL: func @classifier(
// SM70: kgraph.fused{{.*}}{kgraph.config = #kgraph.matmul_config<tile_m = 64, tile_n = 64, tile_k = 64, warps_m = 2, warps_n = 4, stages = 2, instruction = fma, instruction_shape = [1, 1, 1], load_width = 8, smem_padding = 8>}
func.func @classifier(%a: tensor<256x2048xf16>, %b: tensor<2048x1000xf16>) -> tensor<256x1000xf32> {
  %0 = kgraph.matmul %a, %b : tensor<256x2048xf16>, tensor<2048x1000xf16> -> tensor<256x1000xf32>
  return %0 : tensor<256x1000xf32>
}

// -----

// 1x1x1: one K step, hence one stage; K = 1 allows only scalar loads.
// CHECK-LABEL: func @tiny(
// CHECK: kgraph.fused{{.*}}{kgraph.config = #kgraph.matmul_config<tile_m = 64, tile_n = 32, tile_k = 16, warps_m = 4, warps_n = 4, stages = 1, instruction = mma_sync, instruction_shape = [16, 8, 16], load_width = 1, smem_padding = 8>}
// SM80-LABEL: func @tiny(
// SM80: kgraph.fused{{.*}}{kgraph.config = #kgraph.matmul_config<tile_m = 64, tile_n = 32, tile_k = 16, warps_m = 4, warps_n = 4, stages = 1, instruction = mma_sync, instruction_shape = [16, 8, 16], load_width = 1, smem_padding = 8>}
// SM75-LABEL: func @tiny(
// SM75: kgraph.fused{{.*}}{kgraph.config = #kgraph.matmul_config<tile_m = 32, tile_n = 32, tile_k = 16, warps_m = 2, warps_n = 4, stages = 1, instruction = mma_sync, instruction_shape = [16, 8, 8], load_width = 1, smem_padding = 8>}
// SM70-LABEL: func @tiny(
// SM70: kgraph.fused{{.*}}{kgraph.config = #kgraph.matmul_config<tile_m = 32, tile_n = 32, tile_k = 16, warps_m = 2, warps_n = 4, stages = 1, instruction = fma, instruction_shape = [1, 1, 1], load_width = 1, smem_padding = 8>}
func.func @tiny(%a: tensor<1x1xf16>, %b: tensor<1x1xf16>) -> tensor<1x1xf32> {
  %0 = kgraph.matmul %a, %b : tensor<1x1xf16>, tensor<1x1xf16> -> tensor<1x1xf32>
  return %0 : tensor<1x1xf32>
}

// -----

// K = 27 (odd) forces load_width = 1; one 32-deep K step, one stage.
// CHECK-LABEL: func @odd(
// CHECK: kgraph.fused{{.*}}{kgraph.config = #kgraph.matmul_config<tile_m = 64, tile_n = 32, tile_k = 32, warps_m = 4, warps_n = 4, stages = 1, instruction = mma_sync, instruction_shape = [16, 8, 16], load_width = 1, smem_padding = 8>}
// SM80-LABEL: func @odd(
// SM80: kgraph.fused{{.*}}{kgraph.config = #kgraph.matmul_config<tile_m = 64, tile_n = 32, tile_k = 32, warps_m = 4, warps_n = 4, stages = 1, instruction = mma_sync, instruction_shape = [16, 8, 16], load_width = 1, smem_padding = 8>}
// SM75-LABEL: func @odd(
// SM75: kgraph.fused{{.*}}{kgraph.config = #kgraph.matmul_config<tile_m = 32, tile_n = 32, tile_k = 32, warps_m = 2, warps_n = 4, stages = 1, instruction = mma_sync, instruction_shape = [16, 8, 8], load_width = 1, smem_padding = 8>}
// SM70-LABEL: func @odd(
// SM70: kgraph.fused{{.*}}{kgraph.config = #kgraph.matmul_config<tile_m = 32, tile_n = 32, tile_k = 32, warps_m = 2, warps_n = 4, stages = 1, instruction = fma, instruction_shape = [1, 1, 1], load_width = 1, smem_padding = 8>}
func.func @odd(%a: tensor<100x27xf16>, %b: tensor<27x30xf16>) -> tensor<100x30xf32> {
  %0 = kgraph.matmul %a, %b : tensor<100x27xf16>, tensor<27x30xf16> -> tensor<100x30xf32>
  return %0 : tensor<100x30xf32>
}

// -----

// Batched bf16: the batch multiplies the grid; K = 64 leaves room for 4
// stages only with tile_k = 16.
// CHECK-LABEL: func @batched(
// CHECK: kgraph.fused{{.*}}{kgraph.config = #kgraph.matmul_config<tile_m = 128, tile_n = 128, tile_k = 64, warps_m = 8, warps_n = 2, stages = 1, instruction = wgmma, instruction_shape = [64, 64, 16], load_width = 8, smem_padding = 0>}
// SM80-LABEL: func @batched(
// SM80: kgraph.fused{{.*}}{kgraph.config = #kgraph.matmul_config<tile_m = 32, tile_n = 32, tile_k = 16, warps_m = 1, warps_n = 1, stages = 2, instruction = mma_sync, instruction_shape = [16, 8, 16], load_width = 8, smem_padding = 8>}
// SM75-LABEL: func @batched(
// SM75: kgraph.fused{{.*}}{kgraph.config = #kgraph.matmul_config<tile_m = 32, tile_n = 64, tile_k = 32, warps_m = 4, warps_n = 4, stages = 2, instruction = fma, instruction_shape = [1, 1, 1], load_width = 8, smem_padding = 8>}
// SM70-LABEL: func @batched(
// SM70: kgraph.fused{{.*}}{kgraph.config = #kgraph.matmul_config<tile_m = 32, tile_n = 32, tile_k = 32, warps_m = 4, warps_n = 4, stages = 2, instruction = fma, instruction_shape = [1, 1, 1], load_width = 8, smem_padding = 8>}
func.func @batched(%a: tensor<8x512x64xbf16>, %b: tensor<8x64x512xbf16>) -> tensor<8x512x512xbf16> {
  %0 = kgraph.matmul %a, %b : tensor<8x512x64xbf16>, tensor<8x64x512xbf16> -> tensor<8x512x512xbf16>
  return %0 : tensor<8x512x512xbf16>
}

// -----

// transpose_a: A's contiguous extent is M = 100, so load_width = 4.
// CHECK-LABEL: func @transpose_a(
// CHECK: kgraph.fused{{.*}}{kgraph.config = #kgraph.matmul_config<tile_m = 32, tile_n = 32, tile_k = 64, warps_m = 2, warps_n = 2, stages = 4, instruction = mma_sync, instruction_shape = [16, 8, 16], load_width = 4, smem_padding = 8>}
// SM80-LABEL: func @transpose_a(
// SM80: kgraph.fused{{.*}}{kgraph.config = #kgraph.matmul_config<tile_m = 32, tile_n = 32, tile_k = 64, warps_m = 2, warps_n = 2, stages = 4, instruction = mma_sync, instruction_shape = [16, 8, 16], load_width = 4, smem_padding = 8>}
// SM75-LABEL: func @transpose_a(
// SM75: kgraph.fused{{.*}}{kgraph.config = #kgraph.matmul_config<tile_m = 64, tile_n = 128, tile_k = 64, warps_m = 4, warps_n = 4, stages = 2, instruction = mma_sync, instruction_shape = [16, 8, 8], load_width = 4, smem_padding = 8>}
// SM70-LABEL: func @transpose_a(
// SM70: kgraph.fused{{.*}}{kgraph.config = #kgraph.matmul_config<tile_m = 32, tile_n = 32, tile_k = 64, warps_m = 2, warps_n = 4, stages = 2, instruction = fma, instruction_shape = [1, 1, 1], load_width = 4, smem_padding = 8>}
func.func @transpose_a(%a: tensor<512x100xf16>, %b: tensor<512x256xf16>) -> tensor<100x256xf32> {
  %0 = kgraph.matmul %a, %b {transpose_a} : tensor<512x100xf16>, tensor<512x256xf16> -> tensor<100x256xf32>
  return %0 : tensor<100x256xf32>
}

// -----

// transpose_b: B's contiguous extent is K = 1000, a multiple of 8.
// CHECK-LABEL: func @transpose_b(
// CHECK: kgraph.fused{{.*}}{kgraph.config = #kgraph.matmul_config<tile_m = 64, tile_n = 128, tile_k = 64, warps_m = 4, warps_n = 2, stages = 7, instruction = wgmma, instruction_shape = [64, 64, 16], load_width = 8, smem_padding = 0, copy = tma>}
// SM80-LABEL: func @transpose_b(
// SM80: kgraph.fused{{.*}}{kgraph.config = #kgraph.matmul_config<tile_m = 128, tile_n = 128, tile_k = 32, warps_m = 4, warps_n = 4, stages = 4, instruction = mma_sync, instruction_shape = [16, 8, 16], load_width = 8, smem_padding = 8>}
// SM75-LABEL: func @transpose_b(
// SM75: kgraph.fused{{.*}}{kgraph.config = #kgraph.matmul_config<tile_m = 128, tile_n = 256, tile_k = 32, warps_m = 2, warps_n = 4, stages = 2, instruction = mma_sync, instruction_shape = [16, 8, 8], load_width = 8, smem_padding = 8>}
// SM70-LABEL: func @transpose_b(
// SM70: kgraph.fused{{.*}}{kgraph.config = #kgraph.matmul_config<tile_m = 32, tile_n = 32, tile_k = 16, warps_m = 1, warps_n = 1, stages = 2, instruction = fma, instruction_shape = [1, 1, 1], load_width = 8, smem_padding = 8>}
func.func @transpose_b(%a: tensor<1024x1000xf16>, %b: tensor<1024x1000xf16>) -> tensor<1024x1024xf32> {
  %0 = kgraph.matmul %a, %b {transpose_b} : tensor<1024x1000xf16>, tensor<1024x1000xf16> -> tensor<1024x1024xf32>
  return %0 : tensor<1024x1024xf32>
}

// -----

// i8 -> i32 on mma.sync m16n8k32: 16-byte loads are 16 elements; padding
// is 16 bytes = 16 elements.
// CHECK-LABEL: func @i8(
// CHECK: kgraph.fused{{.*}}{kgraph.config = #kgraph.matmul_config<tile_m = 128, tile_n = 128, tile_k = 64, warps_m = 2, warps_n = 2, stages = 4, instruction = mma_sync, instruction_shape = [16, 8, 32], load_width = 16, smem_padding = 16>}
// SM80-LABEL: func @i8(
// SM80: kgraph.fused{{.*}}{kgraph.config = #kgraph.matmul_config<tile_m = 128, tile_n = 128, tile_k = 64, warps_m = 2, warps_n = 2, stages = 4, instruction = mma_sync, instruction_shape = [16, 8, 32], load_width = 16, smem_padding = 16>}
// SM75-LABEL: func @i8(
// SM75: kgraph.fused{{.*}}{kgraph.config = #kgraph.matmul_config<tile_m = 128, tile_n = 128, tile_k = 32, warps_m = 2, warps_n = 2, stages = 2, instruction = fma, instruction_shape = [1, 1, 1], load_width = 16, smem_padding = 16>}
// SM70-LABEL: func @i8(
// SM70: kgraph.fused{{.*}}{kgraph.config = #kgraph.matmul_config<tile_m = 64, tile_n = 128, tile_k = 64, warps_m = 1, warps_n = 4, stages = 2, instruction = fma, instruction_shape = [1, 1, 1], load_width = 16, smem_padding = 16>}
func.func @i8(%a: tensor<4096x4096xi8>, %b: tensor<4096x4096xi8>) -> tensor<4096x4096xi32> {
  %0 = kgraph.matmul %a, %b : tensor<4096x4096xi8>, tensor<4096x4096xi8> -> tensor<4096x4096xi32>
  return %0 : tensor<4096x4096xi32>
}

// -----

// precision = tf32 runs on mma.sync m16n8k8 with 4-element (16-byte) loads.
// CHECK-LABEL: func @tf32(
// CHECK: kgraph.fused{{.*}}{kgraph.config = #kgraph.matmul_config<tile_m = 128, tile_n = 128, tile_k = 16, warps_m = 2, warps_n = 2, stages = 4, instruction = mma_sync, instruction_shape = [16, 8, 8], load_width = 4, smem_padding = 4>}
// SM80-LABEL: func @tf32(
// SM80: kgraph.fused{{.*}}{kgraph.config = #kgraph.matmul_config<tile_m = 128, tile_n = 128, tile_k = 16, warps_m = 2, warps_n = 2, stages = 4, instruction = mma_sync, instruction_shape = [16, 8, 8], load_width = 4, smem_padding = 4>}
// SM75-LABEL: func @tf32(
// SM75: kgraph.fused{{.*}}{kgraph.config = #kgraph.matmul_config<tile_m = 64, tile_n = 64, tile_k = 16, warps_m = 2, warps_n = 2, stages = 2, instruction = fma, instruction_shape = [1, 1, 1], load_width = 4, smem_padding = 4>}
// SM70-LABEL: func @tf32(
// SM70: kgraph.fused{{.*}}{kgraph.config = #kgraph.matmul_config<tile_m = 64, tile_n = 128, tile_k = 16, warps_m = 1, warps_n = 4, stages = 2, instruction = fma, instruction_shape = [1, 1, 1], load_width = 4, smem_padding = 4>}
func.func @tf32(%a: tensor<4096x4096xf32>, %b: tensor<4096x4096xf32>) -> tensor<4096x4096xf32> {
  %0 = kgraph.matmul %a, %b precision = tf32 : tensor<4096x4096xf32>, tensor<4096x4096xf32> -> tensor<4096x4096xf32>
  return %0 : tensor<4096x4096xf32>
}

// -----

// Plain f32 (precision ieee) is SIMT fma.
// CHECK-LABEL: func @f32(
// CHECK: kgraph.fused{{.*}}{kgraph.config = #kgraph.matmul_config<tile_m = 128, tile_n = 128, tile_k = 16, warps_m = 2, warps_n = 2, stages = 4, instruction = fma, instruction_shape = [1, 1, 1], load_width = 4, smem_padding = 4>}
// SM80-LABEL: func @f32(
// SM80: kgraph.fused{{.*}}{kgraph.config = #kgraph.matmul_config<tile_m = 64, tile_n = 64, tile_k = 32, warps_m = 2, warps_n = 2, stages = 4, instruction = fma, instruction_shape = [1, 1, 1], load_width = 4, smem_padding = 4>}
// SM75-LABEL: func @f32(
// SM75: kgraph.fused{{.*}}{kgraph.config = #kgraph.matmul_config<tile_m = 64, tile_n = 64, tile_k = 16, warps_m = 2, warps_n = 2, stages = 2, instruction = fma, instruction_shape = [1, 1, 1], load_width = 4, smem_padding = 4>}
// SM70-LABEL: func @f32(
// SM70: kgraph.fused{{.*}}{kgraph.config = #kgraph.matmul_config<tile_m = 64, tile_n = 128, tile_k = 16, warps_m = 1, warps_n = 4, stages = 2, instruction = fma, instruction_shape = [1, 1, 1], load_width = 4, smem_padding = 4>}
func.func @f32(%a: tensor<4096x4096xf32>, %b: tensor<4096x4096xf32>) -> tensor<4096x4096xf32> {
  %0 = kgraph.matmul %a, %b : tensor<4096x4096xf32>, tensor<4096x4096xf32> -> tensor<4096x4096xf32>
  return %0 : tensor<4096x4096xf32>
}

// -----

// A configuration already in the IR is respected on every target (it is
// valid on all of them: fma, 2 stages, 20 KiB of shared memory).
// CHECK-LABEL: func @pinned(
// CHECK: kgraph.config = #kgraph.matmul_config<tile_m = 64, tile_n = 32, tile_k = 16, warps_m = 2, warps_n = 1, stages = 2, instruction = fma, instruction_shape = [1, 1, 1], load_width = 2, smem_padding = 0>
// SM80-LABEL: func @pinned(
// SM80: tile_m = 64, tile_n = 32, tile_k = 16, warps_m = 2, warps_n = 1, stages = 2, instruction = fma
// SM75-LABEL: func @pinned(
// SM75: tile_m = 64, tile_n = 32, tile_k = 16, warps_m = 2, warps_n = 1, stages = 2, instruction = fma
// SM70-LABEL: func @pinned(
// SM70: tile_m = 64, tile_n = 32, tile_k = 16, warps_m = 2, warps_n = 1, stages = 2, instruction = fma
func.func @pinned(%a: tensor<512x256xf16>, %b: tensor<256x512xf16>) -> tensor<512x512xf32> {
  %0 = kgraph.fused (%a, %b) {kgraph.config = #kgraph.matmul_config<tile_m = 64, tile_n = 32, tile_k = 16, warps_m = 2, warps_n = 1, stages = 2, instruction = fma, instruction_shape = [1, 1, 1], load_width = 2, smem_padding = 0>} : (tensor<512x256xf16>, tensor<256x512xf16>) -> tensor<512x512xf32> {
  ^bb0(%x: tensor<512x256xf16>, %y: tensor<256x512xf16>):
    %r = kgraph.matmul %x, %y : tensor<512x256xf16>, tensor<256x512xf16> -> tensor<512x512xf32>
    kgraph.yield %r : tensor<512x512xf32>
  }
  return %0 : tensor<512x512xf32>
}
