// copy = tma (TmaPipeline.cpp): the kernel gets a producer warpgroup (block
// 256 + 128 threads), TMA loads on mbarriers and setmaxnreg; its PTX for
// sm_90a assembles without spills, and the plan passes the operands' tensor
// maps as one "tensor_maps" argument (dims innermost first, 64-column boxes,
// 128-byte swizzle, zero fill).
// REQUIRES: ptxas
// RUN: rm -rf %t && split-file %s %t
// RUN: for k in nn nt; do \
// RUN:   kgraph-opt --tile=sm_90a %t/$k.mlir -o %t/$k.ptx && \
// RUN:   %ptxas -arch=sm_90a -v %t/$k.ptx -o %t/$k.cubin 2>&1 || exit 1; \
// RUN: done | FileCheck %s --check-prefix=PTXAS
// RUN: FileCheck %s < %t/nn.ptx
// RUN: FileCheck %s --check-prefix=PLAN --match-full-lines < %t/nn.plan.json
// RUN: FileCheck %s --check-prefix=PLANT --match-full-lines < %t/nt.plan.json

// PTXAS-NOT: warning
// PTXAS-NOT: {{[1-9][0-9]* bytes spill}}
// PTXAS-COUNT-2: , 0 bytes spill stores, 0 bytes spill loads

// CHECK-LABEL: .entry main_k0(
// CHECK: .maxntid 384, 1, 1{{$}}
// CHECK: mbarrier.init
// CHECK: setmaxnreg.inc.sync.aligned.u32{{.*}}232;
// CHECK: mbarrier.try_wait.parity
// CHECK: wgmma.mma_async.sync.aligned.m64n128k16.f32.f16.f16
// CHECK: mbarrier.arrive
// CHECK: setmaxnreg.dec.sync.aligned.u32{{.*}}40;
// CHECK: mbarrier.arrive.expect_tx
// CHECK: cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes

// PLAN: "kind": "tensor_maps",
// PLAN-NEXT: "maps": [
// PLAN: "box": [
// PLAN-NEXT: 64,
// PLAN-NEXT: 128
// PLAN: "buffer": 0,
// PLAN-NEXT: "dims": [
// PLAN-NEXT: 328,
// PLAN-NEXT: 1000
// PLAN: "dtype": "f16",
// PLAN-NEXT: "element_strides": [
// PLAN: "interleave": "none",
// PLAN-NEXT: "l2_promotion": "256B",
// PLAN-NEXT: "oob_fill": "zero",
// PLAN-NEXT: "strides": [
// PLAN-NEXT: 656
// PLAN: "swizzle": "128B"
// PLAN: "box": [
// PLAN-NEXT: 64,
// PLAN-NEXT: 64
// PLAN: "buffer": 1,
// PLAN-NEXT: "dims": [
// PLAN-NEXT: 712,
// PLAN-NEXT: 328
// PLAN: "block": [
// PLAN-NEXT: 384,

// B^T [N][K] of a batch of 2: rank-3 maps (batch stride), box rows =
// tile_n.
// PLANT: "kind": "tensor_maps",
// PLANT: "box": [
// PLANT-NEXT: 64,
// PLANT-NEXT: 128,
// PLANT-NEXT: 1
// PLANT: "box": [
// PLANT-NEXT: 64,
// PLANT-NEXT: 128,
// PLANT-NEXT: 1
// PLANT: "buffer": 1,
// PLANT-NEXT: "dims": [
// PLANT-NEXT: 200,
// PLANT-NEXT: 136,
// PLANT-NEXT: 2
// PLANT: "dtype": "bf16",
// PLANT: "strides": [
// PLANT-NEXT: 400,
// PLANT-NEXT: 54400

//--- nn.mlir
func.func @main(%a: tensor<1000x328xf16>, %b: tensor<328x712xf16>, %bias: tensor<712xf16>) -> tensor<1000x712xf16> {
  %0 = kgraph.fused (%a, %b, %bias) {kgraph.config = #kgraph.matmul_config<tile_m = 128, tile_n = 128, tile_k = 64, warps_m = 8, warps_n = 1, stages = 4, instruction = wgmma, instruction_shape = [64, 128, 16], load_width = 8, smem_padding = 0, copy = tma>} : (tensor<1000x328xf16>, tensor<328x712xf16>, tensor<712xf16>) -> tensor<1000x712xf16> {
  ^bb0(%x: tensor<1000x328xf16>, %y: tensor<328x712xf16>, %z: tensor<712xf16>):
    %m = kgraph.matmul %x, %y : tensor<1000x328xf16>, tensor<328x712xf16> -> tensor<1000x712xf16>
    %s = kgraph.add %m, %z : tensor<1000x712xf16>, tensor<712xf16>
    %r = kgraph.relu %s : tensor<1000x712xf16>
    kgraph.yield %r : tensor<1000x712xf16>
  }
  return %0 : tensor<1000x712xf16>
}

//--- nt.mlir
func.func @main(%a: tensor<2x264x200xbf16>, %b: tensor<2x136x200xbf16>) -> tensor<2x264x136xbf16> {
  %0 = kgraph.fused (%a, %b) {kgraph.config = #kgraph.matmul_config<tile_m = 128, tile_n = 128, tile_k = 64, warps_m = 8, warps_n = 1, stages = 3, instruction = wgmma, instruction_shape = [64, 128, 16], load_width = 8, smem_padding = 0, copy = tma>} : (tensor<2x264x200xbf16>, tensor<2x136x200xbf16>) -> tensor<2x264x136xbf16> {
  ^bb0(%x: tensor<2x264x200xbf16>, %y: tensor<2x136x200xbf16>):
    %r = kgraph.matmul %x, %y {transpose_b} : tensor<2x264x200xbf16>, tensor<2x136x200xbf16> -> tensor<2x264x136xbf16>
    kgraph.yield %r : tensor<2x264x136xbf16>
  }
  return %0 : tensor<2x264x136xbf16>
}
