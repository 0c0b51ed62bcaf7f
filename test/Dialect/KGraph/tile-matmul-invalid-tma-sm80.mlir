// RUN: kgraph-opt %s --split-input-file --verify-diagnostics \
// RUN:   --pass-pipeline='builtin.module(func.func(kgraph-form-kernels),kgraph-tile{target=sm_80})'

func.func @no_tma(%a: tensor<256x256xf16>, %b: tensor<256x256xf16>) -> tensor<256x256xf32> {
  // expected-error @+1 {{'kgraph.fused' op copy = tma needs the tensor memory accelerator (cp.async.bulk.tensor), which sm_80 lacks}}
  %0 = kgraph.fused (%a, %b) {kgraph.config = #kgraph.matmul_config<tile_m = 128, tile_n = 128, tile_k = 64, warps_m = 8, warps_n = 1, stages = 4, instruction = wgmma, instruction_shape = [64, 128, 16], load_width = 8, smem_padding = 0, copy = tma>} : (tensor<256x256xf16>, tensor<256x256xf16>) -> tensor<256x256xf32> {
  ^bb0(%x: tensor<256x256xf16>, %y: tensor<256x256xf16>):
    %r = kgraph.matmul %x, %y : tensor<256x256xf16>, tensor<256x256xf16> -> tensor<256x256xf32>
    kgraph.yield %r : tensor<256x256xf32>
  }
  return %0 : tensor<256x256xf32>
}
