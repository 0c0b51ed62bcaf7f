// RUN: kgraph-opt %s --split-input-file --verify-diagnostics \
// RUN:   --pass-pipeline='builtin.module(func.func(kgraph-form-kernels),kgraph-tile{target=sm_90a report=true})'
// RUN: kgraph-opt %s --split-input-file --mlir-print-op-on-diagnostic=false \
// RUN:   --pass-pipeline='builtin.module(func.func(kgraph-form-kernels),kgraph-tile{target=sm_75 report=true})' 2>&1 >/dev/null | FileCheck %s --check-prefix=T4

// kgraph-tile{report=true} states the model's estimate for every matmul
// group, so these tests pin the model itself.

// wgmma 128x256x64, 4 stages of (128 x 64 + 64 x 256) f16 unpadded plus the
// 1024-byte alignment slack plus 16 bytes of mbarriers per stage (the model
// picks copy = tma here) = 197696 B (one block per SM); 128 accumulators
// (one m64n256 slab per warpgroup) + 40 = 168 registers; 512 blocks over 132
// SMs -> 4 waves at 512 / 528 = 97%. Two tiles load ahead (the third stage
// is still read by the previous tile's wgmmas): the model finds it L2-bound,
// plus the main loop's unhidden per-iteration overhead; the epilogue's 64 MB
// of f32 stores (8 warps at 0.45 B per warp-clock) hide behind it.
// The 4 waves of one block per SM pay 3 block turnovers (5000 cycles each)
// that a persistent grid of whole tiles would hide: 15000 cycles, too few
// for it to be picked (tile-matmul-stream-k.mlir).
// On the T4 (no cp.async, m16n8k8) the model picks 128x128x16 in 2 stages,
// which travel through registers: (128 x 16 + 16 x 128) x 2 B / (128
// threads x 4 B) = 16 staging registers; fragments 2 x (4 x 2 + 8 x 1).
// T4: remark: matmul smem 20992 B, 216 regs/thread (acc 128, frag 32, staging 16, addresses 0), 128 threads, 2 blocks/SM (registers), 1024 blocks in 13 waves (98.5% efficient)
func.func @f16_4096(%a: tensor<4096x4096xf16>, %b: tensor<4096x4096xf16>) -> tensor<4096x4096xf32> {
  // expected-remark @+1 {{matmul smem 197696 B, 168 regs/thread (acc 128, frag 0, staging 0, addresses 0), 256 threads, 1 blocks/SM (shared memory), 512 blocks in 4 waves (97.0% efficient), cycles: compute 254200, global 381300, shared 158875, overhead 3972, epilogue 141222, block turnover 15000, estimated 437043}}
  %0 = kgraph.matmul %a, %b : tensor<4096x4096xf16>, tensor<4096x4096xf16> -> tensor<4096x4096xf32>
  return %0 : tensor<4096x4096xf32>
}

// -----

// One block on one SM: the grid is a single partial wave (1 / 132 SMs on
// the H200, 1 / 40 on the T4).
// T4: remark: matmul smem {{[0-9]+}} B, {{.*}} 1 blocks in 1 waves (2.5% efficient)
func.func @tiny(%a: tensor<1x1xf16>, %b: tensor<1x1xf16>) -> tensor<1x1xf32> {
  // expected-remark @+1 {{1 blocks in 1 waves (0.8% efficient)}}
  %0 = kgraph.matmul %a, %b : tensor<1x1xf16>, tensor<1x1xf16> -> tensor<1x1xf32>
  return %0 : tensor<1x1xf32>
}

// -----

// A pinned configuration gets the same estimate: 2 stages of
// (64 x 16 + 16 x 32) f16 = 6144 B (no padding), grown to the staged
// epilogue's 64 x (32 + 8) f32 = 10240 B; 64 threads; 32 x 32 warp
// tiles: 32 accumulators, SIMT lanes 4 x 8 -> 8 x 4 thread tiles, so
// 2 x (8 + 4) fragment registers, plus 40, plus the addresses of each
// thread's copies per stage: 5 x (64 x 16 / (64 threads x 2 lanes)) for A
// and 2 x (16 x 32 / 128) for B = 48; the T4 adds
// (64 x 16 + 16 x 32) x 2 B / (64 x 4 B) = 12 staging registers.
// T4: remark: matmul smem 10240 B, 156 regs/thread (acc 32, frag 24, staging 12, addresses 48), 64 threads, 6 blocks/SM (shared memory)
func.func @pinned(%a: tensor<512x256xf16>, %b: tensor<256x512xf16>) -> tensor<512x512xf32> {
  // expected-remark @+1 {{matmul smem 10240 B, 144 regs/thread (acc 32, frag 24, staging 0, addresses 48), 64 threads}}
  %0 = kgraph.fused (%a, %b) {kgraph.config = #kgraph.matmul_config<tile_m = 64, tile_n = 32, tile_k = 16, warps_m = 2, warps_n = 1, stages = 2, instruction = fma, instruction_shape = [1, 1, 1], load_width = 2, smem_padding = 0>} : (tensor<512x256xf16>, tensor<256x512xf16>) -> tensor<512x512xf32> {
  ^bb0(%x: tensor<512x256xf16>, %y: tensor<256x512xf16>):
    %r = kgraph.matmul %x, %y : tensor<512x256xf16>, tensor<256x512xf16> -> tensor<512x512xf32>
    kgraph.yield %r : tensor<512x512xf32>
  }
  return %0 : tensor<512x512xf32>
}
