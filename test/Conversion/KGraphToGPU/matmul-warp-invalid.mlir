// RUN: kgraph-opt %s --split-input-file --verify-diagnostics --kgraph-lower-to-gpu

// The SIMT warp tile must split over its lanes (8 x 4 here, as the tile is
// taller than wide).
module attributes {kgraph.target = "sm_80"} {
func.func @fma_lanes(%a: tensor<64x64xf32>, %b: tensor<64x6xf32>) -> tensor<64x6xf32> {
  %0 = kgraph.fused (%a, %b) {kgraph.config = #kgraph.matmul_config<tile_m = 64, tile_n = 6, tile_k = 16, warps_m = 1, warps_n = 1, stages = 2, instruction = fma, instruction_shape = [1, 1, 1], load_width = 2, smem_padding = 4>} : (tensor<64x64xf32>, tensor<64x6xf32>) -> tensor<64x6xf32> {
  ^bb0(%x: tensor<64x64xf32>, %y: tensor<64x6xf32>):
    // expected-error @+1 {{'kgraph.matmul' op fma needs a warp tile divisible by its 8 x 4 lanes; warp tile is 64 x 6}}
    %r = kgraph.matmul %x, %y : tensor<64x64xf32>, tensor<64x6xf32> -> tensor<64x6xf32>
    kgraph.yield %r : tensor<64x6xf32>
  }
  return %0 : tensor<64x6xf32>
}
}

// -----

// An instruction shape kgraph has no fragments for.
module attributes {kgraph.target = "sm_80"} {
func.func @f32_k16(%a: tensor<64x64xf32>, %b: tensor<64x64xf32>) -> tensor<64x64xf32> {
  %0 = kgraph.fused (%a, %b) {kgraph.config = #kgraph.matmul_config<tile_m = 64, tile_n = 64, tile_k = 16, warps_m = 1, warps_n = 1, stages = 2, instruction = mma_sync, instruction_shape = [16, 8, 16], load_width = 4, smem_padding = 4>} : (tensor<64x64xf32>, tensor<64x64xf32>) -> tensor<64x64xf32> {
  ^bb0(%x: tensor<64x64xf32>, %y: tensor<64x64xf32>):
    // expected-error @+1 {{'kgraph.matmul' op has no code generation yet for f32 operands with mma_sync [16, 8, 16]; implemented: fma [1, 1, 1] on float types and i8, mma_sync [16, 8, 16] on f16/bf16, [16, 8, 8] on f16 and f32 (tf32), [16, 8, 32] on i8}}
    %r = kgraph.matmul %x, %y : tensor<64x64xf32>, tensor<64x64xf32> -> tensor<64x64xf32>
    kgraph.yield %r : tensor<64x64xf32>
  }
  return %0 : tensor<64x64xf32>
}
}

// -----

// The batch is grid z, which holds at most 65535 blocks.
module attributes {kgraph.target = "sm_80"} {
func.func @batch_too_big(%a: tensor<65536x16x16xf16>, %b: tensor<65536x16x16xf16>) -> tensor<65536x16x16xf32> {
  %0 = kgraph.fused (%a, %b) {kgraph.config = #kgraph.matmul_config<tile_m = 16, tile_n = 16, tile_k = 16, warps_m = 1, warps_n = 1, stages = 2, instruction = mma_sync, instruction_shape = [16, 8, 16], load_width = 8, smem_padding = 8>} : (tensor<65536x16x16xf16>, tensor<65536x16x16xf16>) -> tensor<65536x16x16xf32> {
  ^bb0(%x: tensor<65536x16x16xf16>, %y: tensor<65536x16x16xf16>):
    // expected-error @+1 {{'kgraph.matmul' op needs 65536 GEMMs (batch or conv2d groups) in grid z; at most 65535}}
    %r = kgraph.matmul %x, %y : tensor<65536x16x16xf16>, tensor<65536x16x16xf16> -> tensor<65536x16x16xf32>
    kgraph.yield %r : tensor<65536x16x16xf32>
  }
  return %0 : tensor<65536x16x16xf32>
}
}

// -----

// Linearized over grid x, the blocks of one GEMM are still limited to 2^31 - 1.
module attributes {kgraph.target = "sm_80"} {
func.func @grid_too_big(%a: tensor<4194304x16xf16>, %b: tensor<16x8388608xf16>) -> tensor<4194304x8388608xf16> {
  %0 = kgraph.fused (%a, %b) {kgraph.config = #kgraph.matmul_config<tile_m = 16, tile_n = 8, tile_k = 16, warps_m = 1, warps_n = 1, stages = 2, instruction = mma_sync, instruction_shape = [16, 8, 16], load_width = 8, smem_padding = 8>} : (tensor<4194304x16xf16>, tensor<16x8388608xf16>) -> tensor<4194304x8388608xf16> {
  ^bb0(%x: tensor<4194304x16xf16>, %y: tensor<16x8388608xf16>):
    // expected-error @+1 {{'kgraph.matmul' op needs 274877906944 blocks per GEMM; at most 2147483647}}
    %r = kgraph.matmul %x, %y : tensor<4194304x16xf16>, tensor<16x8388608xf16> -> tensor<4194304x8388608xf16>
    kgraph.yield %r : tensor<4194304x8388608xf16>
  }
  return %0 : tensor<4194304x8388608xf16>
}
}
