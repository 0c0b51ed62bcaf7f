// RUN: kgraph-opt %s --split-input-file --verify-diagnostics \
// RUN:   --pass-pipeline='builtin.module(func.func(kgraph-form-kernels),kgraph-tile{target=sm_90a report=true})'

// The cost model's terms for a wgmma kernel whose own warps issue cp.async
// copies (no producer warpgroup): the copies' address registers and the
// serialized epilogue of a lone block.

// ResNet-50's space-to-depth stem at batch 64 (M = 64 x 112 x 112, N = 64,
// K = 4 x 4 x 16 = 256). 256x64 blocks of 8 warps: 64 accumulators + 40,
// plus 3 registers for each 16-byte copy a thread issues per stage: A
// 256 x 64 / (256 threads x 8) = 8, B 64 x 64 / 2048 = 2, so 30 (ptxas
// 13.0: 144 registers). 134 registers round to 136 per thread, 34816 per
// block: one block per SM (two by shared memory). A lone block over 24
// waves stores its tile while nothing else on the SM loads: main loop
// (121639 global + 6082 overhead) plus epilogue (216247: 8 warps at 0.45
// bytes per warp-clock) over 99% wave efficiency, times the lone-block
// factor 1.1 = 382225 cycles (measured 132-138 us on the H200 and H100,
// 261k-273k cycles, against 129024 when the model took it for two blocks
// of which the larger term binds).
func.func @stem_lone_block(%x: tensor<64x112x112x16xf16>, %w: tensor<64x4x4x16xf16>) -> tensor<64x112x112x64xf16> {
  // expected-remark @+1 {{conv2d smem 82944 B, 134 regs/thread (acc 64, frag 0, staging 0, addresses 30), 256 threads, 1 blocks/SM (registers), 3136 blocks in 24 waves (99.0% efficient), cycles: compute 48656, global 121639, shared 36492, overhead 6082, epilogue 216247, block turnover 115000, estimated 382225}}
  %0 = kgraph.fused (%x, %w) {kgraph.config = #kgraph.matmul_config<tile_m = 256, tile_n = 64, tile_k = 64, warps_m = 8, warps_n = 1, stages = 2, instruction = wgmma, instruction_shape = [64, 64, 16], load_width = 8, smem_padding = 0>} : (tensor<64x112x112x16xf16>, tensor<64x4x4x16xf16>) -> tensor<64x112x112x64xf16> {
  ^bb0(%a: tensor<64x112x112x16xf16>, %b: tensor<64x4x4x16xf16>):
    %r = kgraph.conv2d %a, %b layout = nhwc padding = [2, 1, 2, 1] : tensor<64x112x112x16xf16>, tensor<64x4x4x16xf16> -> tensor<64x112x112x64xf16>
    kgraph.yield %r : tensor<64x112x112x64xf16>
  }
  return %0 : tensor<64x112x112x64xf16>
}

// -----

// The model's own pick for the stem: 128x64 blocks of two warpgroups, 4
// stages, 32 accumulators + 40 + 3 x (4 + 2) = 90 registers; two blocks
// per SM (shared memory), whose epilogues overlap each other's main loops.
// Measured on the H100 (S33-2): 1.21x faster than 256x64.
func.func @stem(%x: tensor<64x112x112x16xf16>, %w: tensor<64x4x4x16xf16>) -> tensor<64x112x112x64xf16> {
  // expected-remark @+1 {{conv2d smem 99328 B, 90 regs/thread (acc 32, frag 0, staging 0, addresses 18), 256 threads, 2 blocks/SM (shared memory), 6272 blocks in 24 waves (99.0% efficient), cycles: compute 48656, global 145967, shared 48656, overhead 12164, epilogue 119767, estimated 159744}}
  %r = kgraph.conv2d %x, %w layout = nhwc padding = [2, 1, 2, 1] : tensor<64x112x112x16xf16>, tensor<64x4x4x16xf16> -> tensor<64x112x112x64xf16>
  return %r : tensor<64x112x112x64xf16>
}

// -----

// A 1x1 filter's gather (a row of A is a pixel's channels) costs no
// address registers (ptxas: -14 to +24 around acc + 40): the same 256x64
// block keeps 104 registers and two blocks per SM, and the larger of main
// loop and epilogue is the estimate.
func.func @conv1x1(%x: tensor<64x56x56x256xf16>, %w: tensor<64x1x1x256xf16>) -> tensor<64x56x56x64xf16> {
  // expected-remark @+1 {{conv2d smem 82944 B, 104 regs/thread (acc 64, frag 0, staging 0, addresses 0), 256 threads, 2 blocks/SM (shared memory), 784 blocks in 3 waves (99.0% efficient), cycles: compute 12164, global 30410, shared 9123, overhead 1520, epilogue 29942, estimated 32256}}
  %0 = kgraph.fused (%x, %w) {kgraph.config = #kgraph.matmul_config<tile_m = 256, tile_n = 64, tile_k = 64, warps_m = 8, warps_n = 1, stages = 2, instruction = wgmma, instruction_shape = [64, 64, 16], load_width = 8, smem_padding = 0>} : (tensor<64x56x56x256xf16>, tensor<64x1x1x256xf16>) -> tensor<64x56x56x64xf16> {
  ^bb0(%a: tensor<64x56x56x256xf16>, %b: tensor<64x1x1x256xf16>):
    %r = kgraph.conv2d %a, %b layout = nhwc : tensor<64x56x56x256xf16>, tensor<64x1x1x256xf16> -> tensor<64x56x56x64xf16>
    kgraph.yield %r : tensor<64x56x56x64xf16>
  }
  return %0 : tensor<64x56x56x64xf16>
}
