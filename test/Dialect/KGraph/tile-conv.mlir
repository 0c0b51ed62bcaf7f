// RUN: kgraph-opt %s --split-input-file \
// RUN:   --pass-pipeline='builtin.module(func.func(kgraph-form-kernels),kgraph-tile{target=sm_90a})' | FileCheck %s
// RUN: kgraph-opt %s --split-input-file \
// RUN:   --pass-pipeline='builtin.module(func.func(kgraph-form-kernels),kgraph-tile{target=sm_80})' | FileCheck %s --check-prefix=SM80

// kgraph.conv2d is tiled as its implicit GEMM (MatmulProblem in
// MatmulTiling.h): batch = groups, M = N*OH*OW, N = F/groups,
// K = KH*KW*C/groups, filter = B^T; load_width divides the contiguous run
// of the im2col gather (C/groups for nhwc, 1 for nchw).

// ResNet-50 3x3 layer (64 -> 64 channels, 56x56, batch 64) in f16 NHWC:
// M = 64*56*56 = 200704, N = 64, K = 3*3*64 = 576. The gather runs along
// the 64 channels of one (kh, kw) tap, so A takes 16-byte copies; on
// sm_90a through TMA's im2col boxes, one block per SM (a TMA conv block
// overlaps its own loads, so it pays no lone-block penalty). The 784
// 256x64 tiles of 9 iterations run as a persistent grid of one block per
// SM in 6 rounds of whole tiles (stream_k = 132, 4 of the 5 stages beside
// the epilogue's region): 6 waves of data-parallel blocks would pay 5
// block turnovers.
// CHECK-LABEL: func @resnet_3x3_nhwc_f16(
// CHECK: kgraph.fused{{.*}}{kgraph.config = #kgraph.matmul_config<tile_m = 256, tile_n = 64, tile_k = 64, warps_m = 8, warps_n = 1, stages = 4, instruction = wgmma, instruction_shape = [64, 64, 16], load_width = 8, smem_padding = 0, copy = tma, stream_k = 132>}
// SM80-LABEL: func @resnet_3x3_nhwc_f16(
// SM80: kgraph.fused{{.*}}{kgraph.config = #kgraph.matmul_config<tile_m = 256, tile_n = 64, tile_k = 32, warps_m = 4, warps_n = 1, stages = 3, instruction = mma_sync, instruction_shape = [16, 8, 16], load_width = 8, smem_padding = 8>}
func.func @resnet_3x3_nhwc_f16(%x: tensor<64x56x56x64xf16>, %w: tensor<64x3x3x64xf16>) -> tensor<64x56x56x64xf16> {
  %0 = kgraph.conv2d %x, %w layout = nhwc padding = [1, 1, 1, 1] : tensor<64x56x56x64xf16>, tensor<64x3x3x64xf16> -> tensor<64x56x56x64xf16>
  return %0 : tensor<64x56x56x64xf16>
}

// -----

// A 1x1 NHWC conv2d is the plain GEMM [N*H*W, C] x [C, F]: K = 64 is one
// 64-wide k tile. With so short a main loop the epilogue's stores bind; on
// sm_90a one stage of wgmma in the smallest blocks (the most resident per
// SM: their epilogues overlap each other's loads), on sm_80 mma.sync with
// more warps.
// CHECK-LABEL: func @resnet_1x1_nhwc_f16(
// CHECK: kgraph.fused{{.*}}{kgraph.config = #kgraph.matmul_config<tile_m = 64, tile_n = 64, tile_k = 64, warps_m = 4, warps_n = 1, stages = 1, instruction = wgmma, instruction_shape = [64, 64, 16], load_width = 8, smem_padding = 0, group_m = 8>}
// SM80-LABEL: func @resnet_1x1_nhwc_f16(
// SM80: kgraph.fused{{.*}}{kgraph.config = #kgraph.matmul_config<tile_m = 64, tile_n = 128, tile_k = 16, warps_m = 2, warps_n = 4, stages = 4, instruction = mma_sync, instruction_shape = [16, 8, 16], load_width = 8, smem_padding = 8>}
func.func @resnet_1x1_nhwc_f16(%x: tensor<64x56x56x64xf16>, %w: tensor<256x1x1x64xf16>) -> tensor<64x56x56x256xf16> {
  %0 = kgraph.conv2d %x, %w layout = nhwc : tensor<64x56x56x64xf16>, tensor<256x1x1x64xf16> -> tensor<64x56x56x256xf16>
  return %0 : tensor<64x56x56x256xf16>
}

// -----

// The stem has 3 input channels: the gather is contiguous over 3 elements
// only, so load_width is 1 (synchronous copies).
// CHECK-LABEL: func @stem_c3_nhwc_f16(
// CHECK: kgraph.fused{{.*}}{kgraph.config = #kgraph.matmul_config<tile_m = 128, tile_n = 64, tile_k = 16, warps_m = 4, warps_n = 2, stages = 4, instruction = mma_sync, instruction_shape = [16, 8, 16], load_width = 1, smem_padding = 8>}
// SM80-LABEL: func @stem_c3_nhwc_f16(
// SM80: kgraph.fused{{.*}}{kgraph.config = #kgraph.matmul_config<tile_m = 128, tile_n = 64, tile_k = 16, warps_m = 4, warps_n = 2, stages = 4, instruction = mma_sync, instruction_shape = [16, 8, 16], load_width = 1, smem_padding = 8>}
func.func @stem_c3_nhwc_f16(%x: tensor<64x224x224x3xf16>, %w: tensor<64x7x7x3xf16>) -> tensor<64x112x112x64xf16> {
  %0 = kgraph.conv2d %x, %w layout = nhwc strides = [2, 2] padding = [3, 3, 3, 3] : tensor<64x224x224x3xf16>, tensor<64x7x7x3xf16> -> tensor<64x112x112x64xf16>
  return %0 : tensor<64x112x112x64xf16>
}

// -----

// NCHW gathers are strided along K (c, kh, kw): load_width 1. f16 inputs
// with an f32 result still use mma.sync (wgmma only with cp.async copies).
// CHECK-LABEL: func @nchw_f16(
// CHECK: kgraph.fused{{.*}}{kgraph.config = #kgraph.matmul_config<tile_m = 64, tile_n = 128, tile_k = 64, warps_m = 4, warps_n = 4, stages = 4, instruction = mma_sync, instruction_shape = [16, 8, 16], load_width = 1, smem_padding = 8>}
// SM80-LABEL: func @nchw_f16(
// SM80: kgraph.fused{{.*}}{kgraph.config = #kgraph.matmul_config<tile_m = 64, tile_n = 128, tile_k = 64, warps_m = 4, warps_n = 4, stages = 4, instruction = mma_sync, instruction_shape = [16, 8, 16], load_width = 1, smem_padding = 8>}
func.func @nchw_f16(%x: tensor<8x64x28x28xf16>, %w: tensor<128x64x3x3xf16>) -> tensor<8x128x28x28xf32> {
  %0 = kgraph.conv2d %x, %w padding = [1, 1, 1, 1] : tensor<8x64x28x28xf16>, tensor<128x64x3x3xf16> -> tensor<8x128x28x28xf32>
  return %0 : tensor<8x128x28x28xf32>
}

// -----

// groups = 2 is a batch of two GEMMs (grid z): N = 32 / 2 = 16,
// K = 3*3*12 = 108; the 12 channels per group allow 4-element copies.
// CHECK-LABEL: func @groups_nhwc_f16(
// CHECK: kgraph.fused{{.*}}{kgraph.config = #kgraph.matmul_config<tile_m = 128, tile_n = 32, tile_k = 32, warps_m = 4, warps_n = 4, stages = 4, instruction = mma_sync, instruction_shape = [16, 8, 16], load_width = 4, smem_padding = 8>}
// SM80-LABEL: func @groups_nhwc_f16(
// SM80: kgraph.fused{{.*}}{kgraph.config = #kgraph.matmul_config<tile_m = 128, tile_n = 32, tile_k = 32, warps_m = 4, warps_n = 4, stages = 4, instruction = mma_sync, instruction_shape = [16, 8, 16], load_width = 4, smem_padding = 8>}
func.func @groups_nhwc_f16(%x: tensor<4x14x14x24xf16>, %w: tensor<32x3x3x12xf16>) -> tensor<4x14x14x32xf16> {
  %0 = kgraph.conv2d %x, %w layout = nhwc padding = [1, 1, 1, 1] groups = 2 : tensor<4x14x14x24xf16>, tensor<32x3x3x12xf16> -> tensor<4x14x14x32xf16>
  return %0 : tensor<4x14x14x32xf16>
}

// -----

// f32 without precision = tf32 runs on SIMT fma. The model counts each
// thread's im2col copy addresses, so the 64 x 128 tile over 4 warps (254
// registers in ptxas 13.0) gives way to 64 x 64 over 2 x 2 warps (168).
// CHECK-LABEL: func @nchw_f32(
// CHECK: kgraph.fused{{.*}}{kgraph.config = #kgraph.matmul_config<tile_m = 64, tile_n = 64, tile_k = 16, warps_m = 2, warps_n = 2, stages = 4, instruction = fma, instruction_shape = [1, 1, 1], load_width = 1, smem_padding = 4>}
// SM80-LABEL: func @nchw_f32(
// SM80: kgraph.fused{{.*}}{kgraph.config = #kgraph.matmul_config<tile_m = 32, tile_n = 64, tile_k = 16, warps_m = 1, warps_n = 2, stages = 4, instruction = fma, instruction_shape = [1, 1, 1], load_width = 1, smem_padding = 4>}
func.func @nchw_f32(%x: tensor<64x256x14x14xf32>, %w: tensor<256x256x3x3xf32>) -> tensor<64x256x14x14xf32> {
  %0 = kgraph.conv2d %x, %w padding = [1, 1, 1, 1] : tensor<64x256x14x14xf32>, tensor<256x256x3x3xf32> -> tensor<64x256x14x14xf32>
  return %0 : tensor<64x256x14x14xf32>
}

// -----

// A pinned configuration is kept.
// CHECK-LABEL: func @pinned(
// CHECK: kgraph.config = #kgraph.matmul_config<tile_m = 64, tile_n = 64, tile_k = 32, warps_m = 2, warps_n = 2, stages = 3, instruction = mma_sync, instruction_shape = [16, 8, 16], load_width = 8, smem_padding = 8>
// SM80-LABEL: func @pinned(
// SM80: kgraph.config = #kgraph.matmul_config<tile_m = 64, tile_n = 64, tile_k = 32, warps_m = 2, warps_n = 2, stages = 3, instruction = mma_sync, instruction_shape = [16, 8, 16], load_width = 8, smem_padding = 8>
func.func @pinned(%a: tensor<2x9x9x16xf16>, %b: tensor<32x3x3x16xf16>) -> tensor<2x9x9x32xf32> {
  %0 = kgraph.fused (%a, %b) {kgraph.config = #kgraph.matmul_config<tile_m = 64, tile_n = 64, tile_k = 32, warps_m = 2, warps_n = 2, stages = 3, instruction = mma_sync, instruction_shape = [16, 8, 16], load_width = 8, smem_padding = 8>} : (tensor<2x9x9x16xf16>, tensor<32x3x3x16xf16>) -> tensor<2x9x9x32xf32> {
  ^bb0(%x: tensor<2x9x9x16xf16>, %w: tensor<32x3x3x16xf16>):
    %r = kgraph.conv2d %x, %w layout = nhwc padding = [1, 1, 1, 1] : tensor<2x9x9x16xf16>, tensor<32x3x3x16xf16> -> tensor<2x9x9x32xf32>
    kgraph.yield %r : tensor<2x9x9x32xf32>
  }
  return %0 : tensor<2x9x9x32xf32>
}

// -----

// A deep implicit GEMM (K = 3 * 3 * 256 = 2304) amortizes its per-iteration
// gather and barrier over tile_k = 64 (the conv iteration overhead of the
// model, calibrated on the H200); on the H200 with wgmma (128x256 blocks of
// two warpgroups).
// CHECK-LABEL: func @deep_k_nhwc_f16(
// CHECK: tile_k = 64
// CHECK-SAME: instruction = wgmma
func.func @deep_k_nhwc_f16(%x: tensor<64x14x14x256xf16>, %w: tensor<256x3x3x256xf16>) -> tensor<64x14x14x256xf16> {
  %0 = kgraph.conv2d %x, %w layout = nhwc padding = [1, 1, 1, 1] : tensor<64x14x14x256xf16>, tensor<256x3x3x256xf16> -> tensor<64x14x14x256xf16>
  return %0 : tensor<64x14x14x256xf16>
}

// -----

// An integer conv2d of stencil shape (same size, <= 4 channels) is an
// implicit GEMM: the stencil emitter computes floats (fuzz graph
// 20261201-88733 was a stencil group the tiler then rejected).
// CHECK-LABEL: func @int_stencil_shape(
// CHECK: kgraph.fused gemm
// CHECK-SAME: kgraph.config = #kgraph.matmul_config<
// SM80-LABEL: func @int_stencil_shape(
// SM80: kgraph.fused gemm
// SM80-SAME: kgraph.config = #kgraph.matmul_config<
func.func @int_stencil_shape(%x: tensor<1x48x33x4xi8>, %w: tensor<2x2x3x4xi8>) -> tensor<1x48x33x2xi32> {
  %0 = kgraph.conv2d %x, %w layout = nhwc padding = [0, 1, 0, 2] : tensor<1x48x33x4xi8>, tensor<2x2x3x4xi8> -> tensor<1x48x33x2xi32>
  return %0 : tensor<1x48x33x2xi32>
}

// -----

// Tiles sized to the SM count (cuBLAS's and cuDNN's 128x96 and 128x192 on
// these layers make exactly 132): the deep 1x1 conv 2048 -> 512 at 7x7,
// M = 3136, N = 512, gets 128x112 tiles (25 x 5 = 125 blocks; 128x128 made
// 100), 7 stages deep. The 1x1 conv 1024 -> 256 at 14x14 (M = 12544)
// gets 192x128 tiles as one warpgroup (66 x 2 = 132 blocks; 128x256 made
// 98), which ran 1.05x faster: its three slabs count as two warpgroups'
// issue. Three-slab tiles as two warpgroups across N are not enumerated
// (never measured). A grid of more than one wave keeps power-of-two
// tiles (the 256 -> 64 conv at 56x56 below).
// CHECK-LABEL: func @deep_1x1_2048(
// CHECK: tile_m = 128, tile_n = 112, tile_k = 64, warps_m = 4, warps_n = 1, stages = 7, instruction = wgmma, instruction_shape = [64, 112, 16]
// CHECK-SAME: copy = tma
// CHECK-LABEL: func @deep_1x1_1024(
// CHECK: tile_m = 192, tile_n = 128, tile_k = 64, warps_m = 4, warps_n = 1, stages = 5
// CHECK-SAME: instruction = wgmma
// CHECK-SAME: copy = tma
// CHECK-LABEL: func @many_waves_1x1(
// CHECK: tile_m = 256, tile_n = 64,
func.func @deep_1x1_2048(%x: tensor<64x7x7x2048xf16>, %w: tensor<512x1x1x2048xf16>) -> tensor<64x7x7x512xf16> {
  %0 = kgraph.conv2d %x, %w layout = nhwc : tensor<64x7x7x2048xf16>, tensor<512x1x1x2048xf16> -> tensor<64x7x7x512xf16>
  return %0 : tensor<64x7x7x512xf16>
}
func.func @deep_1x1_1024(%x: tensor<64x14x14x1024xf16>, %w: tensor<256x1x1x1024xf16>) -> tensor<64x14x14x256xf16> {
  %0 = kgraph.conv2d %x, %w layout = nhwc : tensor<64x14x14x1024xf16>, tensor<256x1x1x1024xf16> -> tensor<64x14x14x256xf16>
  return %0 : tensor<64x14x14x256xf16>
}
func.func @many_waves_1x1(%x: tensor<64x56x56x256xf16>, %w: tensor<64x1x1x256xf16>) -> tensor<64x56x56x64xf16> {
  %0 = kgraph.conv2d %x, %w layout = nhwc : tensor<64x56x56x256xf16>, tensor<64x1x1x256xf16> -> tensor<64x56x56x64xf16>
  return %0 : tensor<64x56x56x64xf16>
}

// -----

// A 3x3 conv's TMA gathers its input by im2col boxes: such pipelines keep
// at most 6 stages (the 512 3x3 conv at 7x7 ran 36.0 us 7 deep and 31.5 us
// 6 deep, S31-1). A strided 3x3 conv whose copies stay cp.async keeps two
// warpgroups: there a one-warpgroup 192x128 block (its 4 warps gather the
// operands too) ran 2x slower than 256x128 as two (S31-1).
// CHECK-LABEL: func @im2col_3x3_512(
// CHECK: tile_m = 128, tile_n = 112, tile_k = 64, warps_m = 4, warps_n = 1, stages = 6
// CHECK-SAME: copy = tma
// CHECK-LABEL: func @strided_3x3_cp_async(
// CHECK: tile_m = 256, tile_n = 128, tile_k = 64, warps_m = 8, warps_n = 1, stages = 4, instruction = wgmma, instruction_shape = [64, 128, 16], load_width = 8, smem_padding = 0>}
func.func @im2col_3x3_512(%x: tensor<64x7x7x512xf16>, %w: tensor<512x3x3x512xf16>) -> tensor<64x7x7x512xf16> {
  %0 = kgraph.conv2d %x, %w layout = nhwc padding = [1, 1, 1, 1] : tensor<64x7x7x512xf16>, tensor<512x3x3x512xf16> -> tensor<64x7x7x512xf16>
  return %0 : tensor<64x7x7x512xf16>
}
func.func @strided_3x3_cp_async(%x: tensor<64x35x35x96xf16>, %w: tensor<128x3x3x96xf16>) -> tensor<64x17x17x128xf16> {
  %0 = kgraph.conv2d %x, %w layout = nhwc strides = [2, 2] : tensor<64x35x35x96xf16>, tensor<128x3x3x96xf16> -> tensor<64x17x17x128xf16>
  return %0 : tensor<64x17x17x128xf16>
}
