// RUN: kgraph-opt %s --split-input-file --verify-diagnostics \
// RUN:   --pass-pipeline='builtin.module(func.func(kgraph-form-kernels),kgraph-tile{target=sm_75})'

// Pinned #kgraph.matmul_config checked against the T4 (sm_75: 64 KiB of
// shared memory per block, mma.sync m16n8k8 for f16, no cp.async).

func.func @smem(%a: tensor<512x512xf16>, %b: tensor<512x512xf16>) -> tensor<512x512xf32> {
  // 2 x (128 x (64 + 8) + 64 x (256 + 8)) x 2 B = 104448 B > 65536.
  // expected-error @+1 {{'kgraph.fused' op configuration needs 104448 bytes of shared memory per block (2 stages of 52224), but sm_75 allows at most 65536}}
  %0 = kgraph.fused (%a, %b) {kgraph.config = #kgraph.matmul_config<tile_m = 128, tile_n = 256, tile_k = 64, warps_m = 2, warps_n = 4, stages = 2, instruction = mma_sync, instruction_shape = [16, 8, 8], load_width = 8, smem_padding = 8>} : (tensor<512x512xf16>, tensor<512x512xf16>) -> tensor<512x512xf32> {
  ^bb0(%x: tensor<512x512xf16>, %y: tensor<512x512xf16>):
    %r = kgraph.matmul %x, %y : tensor<512x512xf16>, tensor<512x512xf16> -> tensor<512x512xf32>
    kgraph.yield %r : tensor<512x512xf32>
  }
  return %0 : tensor<512x512xf32>
}

// -----

func.func @shape_not_offered(%a: tensor<512x512xf16>, %b: tensor<512x512xf16>) -> tensor<512x512xf32> {
  // expected-error @+1 {{'kgraph.fused' op mma_sync [16, 8, 16] is not offered by sm_75 for f16 operands; it offers [16, 8, 8]}}
  %0 = kgraph.fused (%a, %b) {kgraph.config = #kgraph.matmul_config<tile_m = 64, tile_n = 64, tile_k = 32, warps_m = 2, warps_n = 2, stages = 2, instruction = mma_sync, instruction_shape = [16, 8, 16], load_width = 8, smem_padding = 8>} : (tensor<512x512xf16>, tensor<512x512xf16>) -> tensor<512x512xf32> {
  ^bb0(%x: tensor<512x512xf16>, %y: tensor<512x512xf16>):
    %r = kgraph.matmul %x, %y : tensor<512x512xf16>, tensor<512x512xf16> -> tensor<512x512xf32>
    kgraph.yield %r : tensor<512x512xf32>
  }
  return %0 : tensor<512x512xf32>
}

// -----

// sm_75 has no bf16 tensor-core shape at all.
func.func @type_not_offered(%a: tensor<512x512xbf16>, %b: tensor<512x512xbf16>) -> tensor<512x512xf32> {
  // expected-error @+1 {{'kgraph.fused' op mma_sync [16, 8, 8] is not offered by sm_75 for bf16 operands; it offers no mma_sync shape for that type}}
  %0 = kgraph.fused (%a, %b) {kgraph.config = #kgraph.matmul_config<tile_m = 64, tile_n = 64, tile_k = 32, warps_m = 2, warps_n = 2, stages = 2, instruction = mma_sync, instruction_shape = [16, 8, 8], load_width = 8, smem_padding = 8>} : (tensor<512x512xbf16>, tensor<512x512xbf16>) -> tensor<512x512xf32> {
  ^bb0(%x: tensor<512x512xbf16>, %y: tensor<512x512xbf16>):
    %r = kgraph.matmul %x, %y : tensor<512x512xbf16>, tensor<512x512xbf16> -> tensor<512x512xf32>
    kgraph.yield %r : tensor<512x512xf32>
  }
  return %0 : tensor<512x512xf32>
}

// -----

func.func @wgmma(%a: tensor<512x512xf16>, %b: tensor<512x512xf16>) -> tensor<512x512xf32> {
  // expected-error @+1 {{'kgraph.fused' op wgmma [64, 128, 16] is not offered by sm_75 for f16 operands; it offers no wgmma shape for that type}}
  %0 = kgraph.fused (%a, %b) {kgraph.config = #kgraph.matmul_config<tile_m = 128, tile_n = 128, tile_k = 32, warps_m = 8, warps_n = 1, stages = 2, instruction = wgmma, instruction_shape = [64, 128, 16], load_width = 8, smem_padding = 8>} : (tensor<512x512xf16>, tensor<512x512xf16>) -> tensor<512x512xf32> {
  ^bb0(%x: tensor<512x512xf16>, %y: tensor<512x512xf16>):
    %r = kgraph.matmul %x, %y : tensor<512x512xf16>, tensor<512x512xf16> -> tensor<512x512xf32>
    kgraph.yield %r : tensor<512x512xf32>
  }
  return %0 : tensor<512x512xf32>
}

// -----

func.func @f32_ieee_on_tensor_cores(%a: tensor<512x512xf32>, %b: tensor<512x512xf32>) -> tensor<512x512xf32> {
  // expected-error @+1 {{'kgraph.fused' op mma_sync needs tensor-core operands, but 'f32' operands with precision ieee have none (use fma, or precision = tf32 for f32)}}
  %0 = kgraph.fused (%a, %b) {kgraph.config = #kgraph.matmul_config<tile_m = 64, tile_n = 64, tile_k = 16, warps_m = 2, warps_n = 2, stages = 2, instruction = mma_sync, instruction_shape = [16, 8, 8], load_width = 4, smem_padding = 4>} : (tensor<512x512xf32>, tensor<512x512xf32>) -> tensor<512x512xf32> {
  ^bb0(%x: tensor<512x512xf32>, %y: tensor<512x512xf32>):
    %r = kgraph.matmul %x, %y : tensor<512x512xf32>, tensor<512x512xf32> -> tensor<512x512xf32>
    kgraph.yield %r : tensor<512x512xf32>
  }
  return %0 : tensor<512x512xf32>
}

// -----

func.func @stages_without_cp_async(%a: tensor<512x512xf16>, %b: tensor<512x512xf16>) -> tensor<512x512xf32> {
  // expected-error @+1 {{'kgraph.fused' op stages = 3 needs cp.async, which sm_75 lacks; it takes at most 2 (register double buffering)}}
  %0 = kgraph.fused (%a, %b) {kgraph.config = #kgraph.matmul_config<tile_m = 64, tile_n = 64, tile_k = 32, warps_m = 2, warps_n = 2, stages = 3, instruction = mma_sync, instruction_shape = [16, 8, 8], load_width = 8, smem_padding = 8>} : (tensor<512x512xf16>, tensor<512x512xf16>) -> tensor<512x512xf32> {
  ^bb0(%x: tensor<512x512xf16>, %y: tensor<512x512xf16>):
    %r = kgraph.matmul %x, %y : tensor<512x512xf16>, tensor<512x512xf16> -> tensor<512x512xf32>
    kgraph.yield %r : tensor<512x512xf32>
  }
  return %0 : tensor<512x512xf32>
}

// -----

func.func @load_too_wide(%a: tensor<512x512xf16>, %b: tensor<512x512xf16>) -> tensor<512x512xf32> {
  // expected-error @+1 {{'kgraph.fused' op load_width = 16 moves 32 bytes per access of 'f16' elements; at most 16}}
  %0 = kgraph.fused (%a, %b) {kgraph.config = #kgraph.matmul_config<tile_m = 64, tile_n = 64, tile_k = 32, warps_m = 2, warps_n = 2, stages = 2, instruction = mma_sync, instruction_shape = [16, 8, 8], load_width = 16, smem_padding = 8>} : (tensor<512x512xf16>, tensor<512x512xf16>) -> tensor<512x512xf32> {
  ^bb0(%x: tensor<512x512xf16>, %y: tensor<512x512xf16>):
    %r = kgraph.matmul %x, %y : tensor<512x512xf16>, tensor<512x512xf16> -> tensor<512x512xf32>
    kgraph.yield %r : tensor<512x512xf32>
  }
  return %0 : tensor<512x512xf32>
}

// -----

func.func @load_misaligned_lhs(%a: tensor<512x100xf16>, %b: tensor<100x512xf16>) -> tensor<512x512xf32> {
  // expected-error @+1 {{'kgraph.fused' op load_width = 8 does not divide the contiguous extent 100 (K) of lhs}}
  %0 = kgraph.fused (%a, %b) {kgraph.config = #kgraph.matmul_config<tile_m = 64, tile_n = 64, tile_k = 32, warps_m = 2, warps_n = 2, stages = 2, instruction = mma_sync, instruction_shape = [16, 8, 8], load_width = 8, smem_padding = 8>} : (tensor<512x100xf16>, tensor<100x512xf16>) -> tensor<512x512xf32> {
  ^bb0(%x: tensor<512x100xf16>, %y: tensor<100x512xf16>):
    %r = kgraph.matmul %x, %y : tensor<512x100xf16>, tensor<100x512xf16> -> tensor<512x512xf32>
    kgraph.yield %r : tensor<512x512xf32>
  }
  return %0 : tensor<512x512xf32>
}

// -----

func.func @load_misaligned_rhs(%a: tensor<512x512xf16>, %b: tensor<512x500xf16>) -> tensor<512x500xf32> {
  // B is stored [K, N]: its rows are N = 500 elements, not a multiple of 8.
  // expected-error @+1 {{'kgraph.fused' op load_width = 8 does not divide the contiguous extent 500 (N) of rhs}}
  %0 = kgraph.fused (%a, %b) {kgraph.config = #kgraph.matmul_config<tile_m = 64, tile_n = 64, tile_k = 32, warps_m = 2, warps_n = 2, stages = 2, instruction = mma_sync, instruction_shape = [16, 8, 8], load_width = 8, smem_padding = 8>} : (tensor<512x512xf16>, tensor<512x500xf16>) -> tensor<512x500xf32> {
  ^bb0(%x: tensor<512x512xf16>, %y: tensor<512x500xf16>):
    %r = kgraph.matmul %x, %y : tensor<512x512xf16>, tensor<512x500xf16> -> tensor<512x500xf32>
    kgraph.yield %r : tensor<512x500xf32>
  }
  return %0 : tensor<512x500xf32>
}

// -----

func.func @load_misaligned_lhs_transposed(%a: tensor<512x100xf16>, %b: tensor<512x512xf16>) -> tensor<100x512xf32> {
  // With transpose_a, A is stored [K, M]: its rows are M = 100 elements.
  // expected-error @+1 {{'kgraph.fused' op load_width = 8 does not divide the contiguous extent 100 (M) of lhs}}
  %0 = kgraph.fused (%a, %b) {kgraph.config = #kgraph.matmul_config<tile_m = 64, tile_n = 64, tile_k = 32, warps_m = 2, warps_n = 2, stages = 2, instruction = mma_sync, instruction_shape = [16, 8, 8], load_width = 8, smem_padding = 8>} : (tensor<512x100xf16>, tensor<512x512xf16>) -> tensor<100x512xf32> {
  ^bb0(%x: tensor<512x100xf16>, %y: tensor<512x512xf16>):
    %r = kgraph.matmul %x, %y {transpose_a} : tensor<512x100xf16>, tensor<512x512xf16> -> tensor<100x512xf32>
    kgraph.yield %r : tensor<100x512xf32>
  }
  return %0 : tensor<100x512xf32>
}

// -----

func.func @too_many_registers(%a: tensor<512x512xf16>, %b: tensor<512x512xf16>) -> tensor<512x512xf32> {
  // One warp for 128 x 128: 512 accumulators, 2 x (8 x 2 + 16 x 1) = 64
  // fragment, (2 x 128 x 16) x 2 B / (32 x 4 B) = 64 staging and 40 other
  // registers per thread. (The warning does not stop the pass.)
  // expected-warning @+1 {{configuration needs an estimated 680 registers per thread, more than the 255 sm_75 allows: expect spills}}
  %0 = kgraph.fused (%a, %b) {kgraph.config = #kgraph.matmul_config<tile_m = 128, tile_n = 128, tile_k = 16, warps_m = 1, warps_n = 1, stages = 1, instruction = mma_sync, instruction_shape = [16, 8, 8], load_width = 8, smem_padding = 8>} : (tensor<512x512xf16>, tensor<512x512xf16>) -> tensor<512x512xf32> {
  ^bb0(%x: tensor<512x512xf16>, %y: tensor<512x512xf16>):
    %r = kgraph.matmul %x, %y : tensor<512x512xf16>, tensor<512x512xf16> -> tensor<512x512xf32>
    kgraph.yield %r : tensor<512x512xf32>
  }
  return %0 : tensor<512x512xf32>
}

// -----

func.func @elementwise_config_on_matmul(%a: tensor<64x64xf16>, %b: tensor<64x64xf16>) -> tensor<64x64xf32> {
  // expected-error @+1 {{'kgraph.fused' op has a 'kgraph.config' for elementwise kernels but holds 'kgraph.matmul', which elementwise kernels cannot compute: #kgraph.elementwise_config<block_size = 256, vector_width = 4, unroll = 1, grid_size = 1>}}
  %0 = kgraph.fused (%a, %b) {kgraph.config = #kgraph.elementwise_config<block_size = 256, vector_width = 4, unroll = 1, grid_size = 1>} : (tensor<64x64xf16>, tensor<64x64xf16>) -> tensor<64x64xf32> {
  ^bb0(%x: tensor<64x64xf16>, %y: tensor<64x64xf16>):
    %r = kgraph.matmul %x, %y : tensor<64x64xf16>, tensor<64x64xf16> -> tensor<64x64xf32>
    kgraph.yield %r : tensor<64x64xf32>
  }
  return %0 : tensor<64x64xf32>
}

// -----

func.func @matmul_config_on_elementwise(%a: tensor<64xf32>) -> tensor<64xf32> {
  // expected-error @+1 {{'kgraph.fused' op has a 'kgraph.config' for gemm kernels but needs exactly one kgraph.matmul or kgraph.conv2d, found 0}}
  %0 = kgraph.fused (%a) {kgraph.config = #kgraph.matmul_config<tile_m = 32, tile_n = 32, tile_k = 16, warps_m = 1, warps_n = 1, stages = 1, instruction = fma, instruction_shape = [1, 1, 1], load_width = 1, smem_padding = 0>} : (tensor<64xf32>) -> tensor<64xf32> {
  ^bb0(%x: tensor<64xf32>):
    %r = kgraph.exp %x : tensor<64xf32>
    kgraph.yield %r : tensor<64xf32>
  }
  return %0 : tensor<64xf32>
}

// -----

func.func @empty(%a: tensor<0x8xf16>, %b: tensor<8x16xf16>) -> tensor<0x16xf32> {
  // expected-error @+1 {{'kgraph.matmul' op has no code generation for sm_75: the product is empty (batch 1, M 0, N 16, K 8)}}
  %0 = kgraph.matmul %a, %b : tensor<0x8xf16>, tensor<8x16xf16> -> tensor<0x16xf32>
  return %0 : tensor<0x16xf32>
}
