// wgmma kernels with pinned configurations, one per operand layout (and a
// conv2d): the PTX for sm_90a assembles without spills, and each kernel
// issues its wgmma with the transpose immediates of its layout
// (imm-trans-a 1: A^T is M-major; imm-trans-b 1: B is N-major).
// REQUIRES: ptxas
// RUN: rm -rf %t && split-file %s %t
// RUN: for k in nn nt tn tt conv; do \
// RUN:   kgraph-opt --tile=sm_90a %t/$k.mlir -o %t/$k.ptx && \
// RUN:   %ptxas -arch=sm_90a -v %t/$k.ptx -o %t/$k.cubin 2>&1 || exit 1; \
// RUN: done | FileCheck %s --check-prefix=PTXAS
// RUN: cat %t/nn.ptx %t/nt.ptx %t/tn.ptx %t/tt.ptx %t/conv.ptx | FileCheck %s

// PTXAS-NOT: {{[1-9][0-9]* bytes spill}}
// PTXAS-COUNT-5: , 0 bytes spill stores, 0 bytes spill loads
// PTXAS-NOT: {{[1-9][0-9]* bytes spill}}

//--- nn.mlir
// CHECK-LABEL: .entry main_k0(
// CHECK: wgmma.mma_async.sync.aligned.m64n128k16.f32.f16.f16 {{.*}}, p, 1, 1, 0, 1;
// CHECK: wgmma.wait_group.sync.aligned 1;
func.func @main(%a: tensor<256x512xf16>, %b: tensor<512x256xf16>) -> tensor<256x256xf32> {
  %0 = kgraph.fused (%a, %b) {kgraph.config = #kgraph.matmul_config<tile_m = 128, tile_n = 128, tile_k = 64, warps_m = 8, warps_n = 1, stages = 4, instruction = wgmma, instruction_shape = [64, 128, 16], load_width = 8, smem_padding = 0>} : (tensor<256x512xf16>, tensor<512x256xf16>) -> tensor<256x256xf32> {
  ^bb0(%x: tensor<256x512xf16>, %y: tensor<512x256xf16>):
    %r = kgraph.matmul %x, %y : tensor<256x512xf16>, tensor<512x256xf16> -> tensor<256x256xf32>
    kgraph.yield %r : tensor<256x256xf32>
  }
  return %0 : tensor<256x256xf32>
}

//--- nt.mlir
// CHECK-LABEL: .entry main_k0(
// CHECK: wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16 {{.*}}, p, 1, 1, 0, 0;
func.func @main(%a: tensor<256x512xbf16>, %b: tensor<256x512xbf16>) -> tensor<256x256xbf16> {
  %0 = kgraph.fused (%a, %b) {kgraph.config = #kgraph.matmul_config<tile_m = 128, tile_n = 128, tile_k = 64, warps_m = 8, warps_n = 1, stages = 3, instruction = wgmma, instruction_shape = [64, 128, 16], load_width = 8, smem_padding = 0>} : (tensor<256x512xbf16>, tensor<256x512xbf16>) -> tensor<256x256xbf16> {
  ^bb0(%x: tensor<256x512xbf16>, %y: tensor<256x512xbf16>):
    %r = kgraph.matmul %x, %y {transpose_b} : tensor<256x512xbf16>, tensor<256x512xbf16> -> tensor<256x256xbf16>
    kgraph.yield %r : tensor<256x256xbf16>
  }
  return %0 : tensor<256x256xbf16>
}

//--- tn.mlir
// CHECK-LABEL: .entry main_k0(
// CHECK: wgmma.mma_async.sync.aligned.m64n64k16.f32.f16.f16 {{.*}}, p, 1, 1, 1, 1;
// CHECK: wgmma.wait_group.sync.aligned 0;
func.func @main(%a: tensor<512x256xf16>, %b: tensor<512x256xf16>) -> tensor<256x256xf16> {
  %0 = kgraph.fused (%a, %b) {kgraph.config = #kgraph.matmul_config<tile_m = 128, tile_n = 128, tile_k = 64, warps_m = 8, warps_n = 2, stages = 2, instruction = wgmma, instruction_shape = [64, 64, 16], load_width = 8, smem_padding = 0>} : (tensor<512x256xf16>, tensor<512x256xf16>) -> tensor<256x256xf16> {
  ^bb0(%x: tensor<512x256xf16>, %y: tensor<512x256xf16>):
    %r = kgraph.matmul %x, %y {transpose_a} : tensor<512x256xf16>, tensor<512x256xf16> -> tensor<256x256xf16>
    kgraph.yield %r : tensor<256x256xf16>
  }
  return %0 : tensor<256x256xf16>
}

//--- tt.mlir
// CHECK-LABEL: .entry main_k0(
// CHECK: wgmma.mma_async.sync.aligned.m64n96k16.f32.f16.f16 {{.*}}, p, 1, 1, 1, 0;
func.func @main(%a: tensor<4x512x256xf16>, %b: tensor<4x192x512xf16>) -> tensor<4x256x192xf32> {
  %0 = kgraph.fused (%a, %b) {kgraph.config = #kgraph.matmul_config<tile_m = 128, tile_n = 96, tile_k = 64, warps_m = 4, warps_n = 1, stages = 4, instruction = wgmma, instruction_shape = [64, 96, 16], load_width = 8, smem_padding = 0>} : (tensor<4x512x256xf16>, tensor<4x192x512xf16>) -> tensor<4x256x192xf32> {
  ^bb0(%x: tensor<4x512x256xf16>, %y: tensor<4x192x512xf16>):
    %r = kgraph.matmul %x, %y {transpose_a, transpose_b} : tensor<4x512x256xf16>, tensor<4x192x512xf16> -> tensor<4x256x192xf32>
    kgraph.yield %r : tensor<4x256x192xf32>
  }
  return %0 : tensor<4x256x192xf32>
}

//--- conv.mlir
// The ResNet-50 3x3 layer as an implicit GEMM (im2col A and the filter as
// B^T: both K-major), zero-filled cp.async at the padding.
// CHECK-LABEL: .entry main_k0(
// CHECK: cp.async.cg.shared.global [{{.*}}], [{{.*}}], 16, {{%r[0-9]+}}
// CHECK: wgmma.mma_async.sync.aligned.m64n64k16.f32.f16.f16 {{.*}}, p, 1, 1, 0, 0;
func.func @main(%x: tensor<64x56x56x64xf16>, %w: tensor<64x3x3x64xf16>) -> tensor<64x56x56x64xf16> {
  %0 = kgraph.fused (%x, %w) {kgraph.config = #kgraph.matmul_config<tile_m = 256, tile_n = 64, tile_k = 64, warps_m = 8, warps_n = 1, stages = 2, instruction = wgmma, instruction_shape = [64, 64, 16], load_width = 8, smem_padding = 0>} : (tensor<64x56x56x64xf16>, tensor<64x3x3x64xf16>) -> tensor<64x56x56x64xf16> {
  ^bb0(%i: tensor<64x56x56x64xf16>, %f: tensor<64x3x3x64xf16>):
    %r = kgraph.conv2d %i, %f layout = nhwc padding = [1, 1, 1, 1] : tensor<64x56x56x64xf16>, tensor<64x3x3x64xf16> -> tensor<64x56x56x64xf16>
    kgraph.yield %r : tensor<64x56x56x64xf16>
  }
  return %0 : tensor<64x56x56x64xf16>
}
