// RUN: kgraph-opt %s --split-input-file --verify-diagnostics \
// RUN:   --pass-pipeline='builtin.module(func.func(kgraph-form-kernels),kgraph-tile{target=sm_90})'

// wgmma needs the architecture-specific sm_90a: plain sm_90 (forward
// compatible PTX) has no wgmma in the SM table.
func.func @wgmma_sm90(%a: tensor<512x512xf16>, %b: tensor<512x512xf16>) -> tensor<512x512xf32> {
  // expected-error @+1 {{'kgraph.fused' op wgmma [64, 128, 16] is not offered by sm_90 for f16 operands; it offers no wgmma shape for that type}}
  %0 = kgraph.fused (%a, %b) {kgraph.config = #kgraph.matmul_config<tile_m = 128, tile_n = 128, tile_k = 64, warps_m = 8, warps_n = 1, stages = 3, instruction = wgmma, instruction_shape = [64, 128, 16], load_width = 8, smem_padding = 0>} : (tensor<512x512xf16>, tensor<512x512xf16>) -> tensor<512x512xf32> {
  ^bb0(%x: tensor<512x512xf16>, %y: tensor<512x512xf16>):
    %r = kgraph.matmul %x, %y : tensor<512x512xf16>, tensor<512x512xf16> -> tensor<512x512xf32>
    kgraph.yield %r : tensor<512x512xf32>
  }
  return %0 : tensor<512x512xf32>
}
