// RUN: kgraph-opt %s --split-input-file --verify-diagnostics \
// RUN:   --pass-pipeline='builtin.module(func.func(kgraph-form-kernels),kgraph-tile{target=sm_80})'

// Pinned conv2d configurations are checked against the implicit GEMM.

// An nchw gather is contiguous nowhere: only load_width = 1.
func.func @nchw_load_width(%a: tensor<2x16x9x9xf16>, %b: tensor<32x16x3x3xf16>) -> tensor<2x32x7x7xf32> {
  // expected-error @+1 {{'kgraph.fused' op load_width = 8 does not divide the contiguous extent 1 (contiguous run of the im2col gather) of input}}
  %0 = kgraph.fused (%a, %b) {kgraph.config = #kgraph.matmul_config<tile_m = 64, tile_n = 64, tile_k = 32, warps_m = 2, warps_n = 2, stages = 3, instruction = mma_sync, instruction_shape = [16, 8, 16], load_width = 8, smem_padding = 8>} : (tensor<2x16x9x9xf16>, tensor<32x16x3x3xf16>) -> tensor<2x32x7x7xf32> {
  ^bb0(%x: tensor<2x16x9x9xf16>, %w: tensor<32x16x3x3xf16>):
    %r = kgraph.conv2d %x, %w : tensor<2x16x9x9xf16>, tensor<32x16x3x3xf16> -> tensor<2x32x7x7xf32>
    kgraph.yield %r : tensor<2x32x7x7xf32>
  }
  return %0 : tensor<2x32x7x7xf32>
}

// -----

// 12 channels per group: 8-element copies would cross a (kh, kw) tap.
func.func @nhwc_channels_per_group(%a: tensor<2x9x9x24xf16>, %b: tensor<32x3x3x12xf16>) -> tensor<2x7x7x32xf32> {
  // expected-error @+1 {{'kgraph.fused' op load_width = 8 does not divide the contiguous extent 12 (contiguous run of the im2col gather) of input}}
  %0 = kgraph.fused (%a, %b) {kgraph.config = #kgraph.matmul_config<tile_m = 64, tile_n = 64, tile_k = 32, warps_m = 2, warps_n = 2, stages = 3, instruction = mma_sync, instruction_shape = [16, 8, 16], load_width = 8, smem_padding = 8>} : (tensor<2x9x9x24xf16>, tensor<32x3x3x12xf16>) -> tensor<2x7x7x32xf32> {
  ^bb0(%x: tensor<2x9x9x24xf16>, %w: tensor<32x3x3x12xf16>):
    %r = kgraph.conv2d %x, %w layout = nhwc groups = 2 : tensor<2x9x9x24xf16>, tensor<32x3x3x12xf16> -> tensor<2x7x7x32xf32>
    kgraph.yield %r : tensor<2x7x7x32xf32>
  }
  return %0 : tensor<2x7x7x32xf32>
}

