// RUN: kgraph-opt %s --split-input-file --verify-diagnostics \
// RUN:   --pass-pipeline='builtin.module(func.func(kgraph-form-kernels),kgraph-tile{target=sm_90a})'

// sm_90a offers wgmma m64nNk16 for f16 with N a multiple of 8 up to 256.
func.func @wgmma_bad_k(%a: tensor<512x512xf16>, %b: tensor<512x512xf16>) -> tensor<512x512xf32> {
  // expected-error @+1 {{'kgraph.fused' op wgmma [64, 128, 32] is not offered by sm_90a for f16 operands; it offers [64, 8...256, 16]}}
  %0 = kgraph.fused (%a, %b) {kgraph.config = #kgraph.matmul_config<tile_m = 128, tile_n = 128, tile_k = 64, warps_m = 8, warps_n = 1, stages = 3, instruction = wgmma, instruction_shape = [64, 128, 32], load_width = 8, smem_padding = 8>} : (tensor<512x512xf16>, tensor<512x512xf16>) -> tensor<512x512xf32> {
  ^bb0(%x: tensor<512x512xf16>, %y: tensor<512x512xf16>):
    %r = kgraph.matmul %x, %y : tensor<512x512xf16>, tensor<512x512xf16> -> tensor<512x512xf32>
    kgraph.yield %r : tensor<512x512xf32>
  }
  return %0 : tensor<512x512xf32>
}

// -----

// 4 stages of 256 x 256 x 64 f16 tiles exceed the H200's 227 KiB:
// 4 x (256 x (64 + 8) + 64 x (256 + 8)) x 2 B = 282624 B.
func.func @smem(%a: tensor<512x512xf16>, %b: tensor<512x512xf16>) -> tensor<512x512xf32> {
  // expected-error @+1 {{'kgraph.fused' op configuration needs 282624 bytes of shared memory per block (4 stages of 70656), but sm_90a allows at most 232448}}
  %0 = kgraph.fused (%a, %b) {kgraph.config = #kgraph.matmul_config<tile_m = 256, tile_n = 256, tile_k = 64, warps_m = 4, warps_n = 4, stages = 4, instruction = mma_sync, instruction_shape = [16, 8, 16], load_width = 8, smem_padding = 8>} : (tensor<512x512xf16>, tensor<512x512xf16>) -> tensor<512x512xf32> {
  ^bb0(%x: tensor<512x512xf16>, %y: tensor<512x512xf16>):
    %r = kgraph.matmul %x, %y : tensor<512x512xf16>, tensor<512x512xf16> -> tensor<512x512xf32>
    kgraph.yield %r : tensor<512x512xf32>
  }
  return %0 : tensor<512x512xf32>
}

// -----

// The table lists wgmma for i8, but kgraph implements it for f16/bf16 only.
func.func @wgmma_i8(%a: tensor<512x512xi8>, %b: tensor<512x512xi8>) -> tensor<512x512xi32> {
  // expected-error @+1 {{'kgraph.fused' op wgmma is implemented for f16 and bf16 operands only, not i8 (use mma_sync)}}
  %0 = kgraph.fused (%a, %b) {kgraph.config = #kgraph.matmul_config<tile_m = 128, tile_n = 128, tile_k = 64, warps_m = 8, warps_n = 1, stages = 3, instruction = wgmma, instruction_shape = [64, 128, 32], load_width = 16, smem_padding = 0>} : (tensor<512x512xi8>, tensor<512x512xi8>) -> tensor<512x512xi32> {
  ^bb0(%x: tensor<512x512xi8>, %y: tensor<512x512xi8>):
    %r = kgraph.matmul %x, %y : tensor<512x512xi8>, tensor<512x512xi8> -> tensor<512x512xi32>
    kgraph.yield %r : tensor<512x512xi32>
  }
  return %0 : tensor<512x512xi32>
}

// -----

// wgmma's tiles are swizzled, not padded.
func.func @wgmma_padding(%a: tensor<512x512xf16>, %b: tensor<512x512xf16>) -> tensor<512x512xf32> {
  // expected-error @+1 {{'kgraph.fused' op wgmma takes smem_padding = 0 (its shared-memory tiles are swizzled, not padded), got 8}}
  %0 = kgraph.fused (%a, %b) {kgraph.config = #kgraph.matmul_config<tile_m = 128, tile_n = 128, tile_k = 64, warps_m = 8, warps_n = 1, stages = 3, instruction = wgmma, instruction_shape = [64, 128, 16], load_width = 8, smem_padding = 8>} : (tensor<512x512xf16>, tensor<512x512xf16>) -> tensor<512x512xf32> {
  ^bb0(%x: tensor<512x512xf16>, %y: tensor<512x512xf16>):
    %r = kgraph.matmul %x, %y : tensor<512x512xf16>, tensor<512x512xf16> -> tensor<512x512xf32>
    kgraph.yield %r : tensor<512x512xf32>
  }
  return %0 : tensor<512x512xf32>
}

// -----

// A K-major operand (A here) is stored in rows of 64 elements along K.
func.func @wgmma_tile_k(%a: tensor<512x512xf16>, %b: tensor<512x512xf16>) -> tensor<512x512xf32> {
  // expected-error @+1 {{'kgraph.fused' op wgmma needs tile_k to be a multiple of 64 for a K-major operand (A, or B with transpose_b), got 32}}
  %0 = kgraph.fused (%a, %b) {kgraph.config = #kgraph.matmul_config<tile_m = 128, tile_n = 128, tile_k = 32, warps_m = 8, warps_n = 1, stages = 3, instruction = wgmma, instruction_shape = [64, 128, 16], load_width = 8, smem_padding = 0>} : (tensor<512x512xf16>, tensor<512x512xf16>) -> tensor<512x512xf32> {
  ^bb0(%x: tensor<512x512xf16>, %y: tensor<512x512xf16>):
    %r = kgraph.matmul %x, %y : tensor<512x512xf16>, tensor<512x512xf16> -> tensor<512x512xf32>
    kgraph.yield %r : tensor<512x512xf32>
  }
  return %0 : tensor<512x512xf32>
}

// -----

// An N-major B ([k][n]) is read in blocks of 64 columns: each instruction
// must start on one.
func.func @wgmma_n_major_b(%a: tensor<512x512xf16>, %b: tensor<512x512xf16>) -> tensor<512x512xf32> {
  // expected-error @+1 {{'kgraph.fused' op wgmma with an N-major B (no transpose_b) needs the instruction's N to be a multiple of 64, got 32}}
  %0 = kgraph.fused (%a, %b) {kgraph.config = #kgraph.matmul_config<tile_m = 64, tile_n = 64, tile_k = 64, warps_m = 4, warps_n = 2, stages = 3, instruction = wgmma, instruction_shape = [64, 32, 16], load_width = 8, smem_padding = 0>} : (tensor<512x512xf16>, tensor<512x512xf16>) -> tensor<512x512xf32> {
  ^bb0(%x: tensor<512x512xf16>, %y: tensor<512x512xf16>):
    %r = kgraph.matmul %x, %y : tensor<512x512xf16>, tensor<512x512xf16> -> tensor<512x512xf32>
    kgraph.yield %r : tensor<512x512xf32>
  }
  return %0 : tensor<512x512xf32>
}

// -----

// A stream-K grid whose workspace passes the launch plan's 1 GiB: 4096
// tiles of 128x256 on 8192 blocks, each tile split into a head and one
// piece (two f32 partials of 128 KiB).
func.func @stream_k_workspace(%a: tensor<8192x8192xf16>, %b: tensor<8192x16384xf16>) -> tensor<8192x16384xf16> {
  // expected-error @+1 {{'kgraph.fused' op stream_k = 8192 needs 1073758208 bytes of workspace (4096 split tiles of 2 partial tiles each); at most 1073741824}}
  %0 = kgraph.fused (%a, %b) {kgraph.config = #kgraph.matmul_config<tile_m = 128, tile_n = 256, tile_k = 64, warps_m = 8, warps_n = 1, stages = 3, instruction = wgmma, instruction_shape = [64, 256, 16], load_width = 8, smem_padding = 0, copy = tma, stream_k = 8192>} : (tensor<8192x8192xf16>, tensor<8192x16384xf16>) -> tensor<8192x16384xf16> {
  ^bb0(%x: tensor<8192x8192xf16>, %y: tensor<8192x16384xf16>):
    %r = kgraph.matmul %x, %y : tensor<8192x8192xf16>, tensor<8192x16384xf16> -> tensor<8192x16384xf16>
    kgraph.yield %r : tensor<8192x16384xf16>
  }
  return %0 : tensor<8192x16384xf16>
}

// -----

// A stream-K grid whose blocks would each run 2^31 iterations or more (the
// pipeline counts them in 32 bits).
func.func @stream_k_iterations(%a: tensor<131072x131072xf16>, %b: tensor<131072x131072xf16>) -> tensor<131072x131072xf16> {
  // expected-error @+1 {{'kgraph.fused' op stream_k = 1 gives a block 2147483648 of 2147483648 iterations (1048576 tiles x 2048 k tiles); a block may run at most 2^31 - 1}}
  %0 = kgraph.fused (%a, %b) {kgraph.config = #kgraph.matmul_config<tile_m = 128, tile_n = 128, tile_k = 64, warps_m = 4, warps_n = 1, stages = 4, instruction = wgmma, instruction_shape = [64, 128, 16], load_width = 8, smem_padding = 0, copy = tma, stream_k = 1>} : (tensor<131072x131072xf16>, tensor<131072x131072xf16>) -> tensor<131072x131072xf16> {
  ^bb0(%x: tensor<131072x131072xf16>, %y: tensor<131072x131072xf16>):
    %r = kgraph.matmul %x, %y : tensor<131072x131072xf16>, tensor<131072x131072xf16> -> tensor<131072x131072xf16>
    kgraph.yield %r : tensor<131072x131072xf16>
  }
  return %0 : tensor<131072x131072xf16>
}
