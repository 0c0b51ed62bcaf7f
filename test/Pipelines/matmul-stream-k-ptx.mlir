// stream_k = B (TmaPipeline.cpp): a persistent grid of min(B, tiles x k
// tiles) blocks (getStreamKSchedule: rounds of whole tiles, then the
// remaining tiles split in k); split tiles are finished by the last block
// to arrive (atomic arrival counter, partial tiles through the workspace,
// membar.gl on both sides). The PTX for sm_90a assembles without spills,
// and the plan passes the kernel's workspace as a last "workspace"
// argument of align(split tiles * 4, 128) + split tiles * (pieces + 1) *
// tile_m * tile_n * 4 bytes.
// REQUIRES: ptxas
// RUN: rm -rf %t && split-file %s %t
// RUN: for k in nn few; do \
// RUN:   kgraph-opt --tile=sm_90a %t/$k.mlir -o %t/$k.ptx && \
// RUN:   %ptxas -arch=sm_90a -v %t/$k.ptx -o %t/$k.cubin 2>&1 || exit 1; \
// RUN: done | FileCheck %s --check-prefix=PTXAS
// RUN: FileCheck %s < %t/nn.ptx
// RUN: FileCheck %s --check-prefix=PLAN --match-full-lines < %t/nn.plan.json
// RUN: FileCheck %s --check-prefix=FEW --match-full-lines < %t/few.plan.json

// PTXAS-NOT: warning
// PTXAS-NOT: {{[1-9][0-9]* bytes spill}}
// PTXAS-COUNT-2: , 0 bytes spill stores, 0 bytes spill loads

// CHECK-LABEL: .entry main_k0(
// CHECK: .maxntid 384, 1, 1{{$}}
// CHECK: wgmma.mma_async.sync.aligned.m64n128k16.f32.f16.f16
// CHECK: membar.gl;
// CHECK: atom.global.add.u32
// CHECK: membar.gl;
// CHECK: cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes

// 1000x712 in 128x128 tiles: 8 x 6 = 48 tiles of 64 k tiles (K = 4096), 40
// blocks: a round of whole tiles, then 8 tiles split into a head of 17 k
// tiles and 4 pieces of 12 (the last 11), one piece for each of the 32
// other blocks; counters 32 -> 128 bytes, partials 8 * 5 * 128 * 128 * 4.
// PLAN: "kind": "tensor_maps",
// PLAN: "bytes": 2621568,
// PLAN-NEXT: "kind": "workspace"
// PLAN-NEXT: }
// PLAN-NEXT: ],
// PLAN-NEXT: "block": [
// PLAN-NEXT: 384,
// PLAN: "grid": [
// PLAN-NEXT: 40,
// PLAN-NEXT: 1,
// PLAN-NEXT: 1
// PLAN-NEXT: ],

// 200x64x64: 2 tiles of 1 k tile; stream_k = 132 launches 2 blocks of one
// whole tile each: no partials, one counter word.
// FEW: "bytes": 128,
// FEW-NEXT: "kind": "workspace"
// FEW: "grid": [
// FEW-NEXT: 2,
// FEW-NEXT: 1,

//--- nn.mlir
func.func @main(%a: tensor<1000x4096xf16>, %b: tensor<4096x712xf16>, %bias: tensor<712xf16>) -> tensor<1000x712xf16> {
  %0 = kgraph.fused (%a, %b, %bias) {kgraph.config = #kgraph.matmul_config<tile_m = 128, tile_n = 128, tile_k = 64, warps_m = 8, warps_n = 1, stages = 4, instruction = wgmma, instruction_shape = [64, 128, 16], load_width = 8, smem_padding = 0, copy = tma, stream_k = 40>} : (tensor<1000x4096xf16>, tensor<4096x712xf16>, tensor<712xf16>) -> tensor<1000x712xf16> {
  ^bb0(%x: tensor<1000x4096xf16>, %y: tensor<4096x712xf16>, %z: tensor<712xf16>):
    %m = kgraph.matmul %x, %y : tensor<1000x4096xf16>, tensor<4096x712xf16> -> tensor<1000x712xf16>
    %s = kgraph.add %m, %z : tensor<1000x712xf16>, tensor<712xf16>
    %r = kgraph.relu %s : tensor<1000x712xf16>
    kgraph.yield %r : tensor<1000x712xf16>
  }
  return %0 : tensor<1000x712xf16>
}

//--- few.mlir
func.func @main(%a: tensor<200x64xf16>, %b: tensor<64x64xf16>) -> tensor<200x64xf32> {
  %0 = kgraph.fused (%a, %b) {kgraph.config = #kgraph.matmul_config<tile_m = 128, tile_n = 64, tile_k = 64, warps_m = 4, warps_n = 1, stages = 2, instruction = wgmma, instruction_shape = [64, 64, 16], load_width = 8, smem_padding = 0, copy = tma, stream_k = 132>} : (tensor<200x64xf16>, tensor<64x64xf16>) -> tensor<200x64xf32> {
  ^bb0(%x: tensor<200x64xf16>, %y: tensor<64x64xf16>):
    %m = kgraph.matmul %x, %y : tensor<200x64xf16>, tensor<64x64xf16> -> tensor<200x64xf32>
    kgraph.yield %m : tensor<200x64xf32>
  }
  return %0 : tensor<200x64xf32>
}
