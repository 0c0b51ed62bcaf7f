// A 3x3, stride-3 max pool on a tiny f16 image (2x8x13x21 -> 2x8x4x7). A
// 16x32 output tile of it stages 48x96 inputs for each of 4 channels
// (72 KiB), more than half the shared memory of an sm_70/sm_86/sm_89 SM and
// more than an sm_75 block may have: kgraph-tile falls back to smaller
// tiles with fewer threads (here 1x8 outputs, 32 threads). Every target
// compiles it to PTX that ptxas accepts; sm_80 and sm_90a keep the usual
// 16x32 tile.
// REQUIRES: ptxas
// RUN: kgraph-opt --tile=sm_70 --emit=tiled %s | FileCheck %s --check-prefix=SMALL
// RUN: kgraph-opt --tile=sm_86 --emit=tiled %s | FileCheck %s --check-prefix=SMALL
// RUN: kgraph-opt --tile=sm_80 --emit=tiled %s | FileCheck %s --check-prefix=USUAL
// RUN: kgraph-opt --tile=sm_70 %s -o %t.sm70.ptx
// ptxas 13 no longer assembles sm_70; its PTX (.target sm_70) is assembled
// for sm_75, which runs sm_70 code.
// RUN: %ptxas -arch=sm_75 %t.sm70.ptx -o %t.sm70.cubin
// RUN: FileCheck %s --check-prefix=PLAN --match-full-lines < %t.sm70.plan.json
// RUN: kgraph-opt --tile=sm_75 %s -o %t.sm75.ptx
// RUN: %ptxas -arch=sm_75 %t.sm75.ptx -o %t.sm75.cubin
// RUN: kgraph-opt --tile=sm_86 %s -o %t.sm86.ptx
// RUN: %ptxas -arch=sm_86 %t.sm86.ptx -o %t.sm86.cubin
// RUN: kgraph-opt --tile=sm_89 %s -o %t.sm89.ptx
// RUN: %ptxas -arch=sm_89 %t.sm89.ptx -o %t.sm89.cubin
// RUN: kgraph-opt --tile=sm_80 %s -o %t.sm80.ptx
// RUN: %ptxas -arch=sm_80 %t.sm80.ptx -o %t.sm80.cubin
// RUN: kgraph-opt --tile=sm_90a %s -o %t.sm90a.ptx
// RUN: %ptxas -arch=sm_90a %t.sm90a.ptx -o %t.sm90a.cubin

// SMALL: #kgraph.stencil_config<tile_h = 1, tile_w = 8, block_x = 8, block_y = 4, rows_per_thread = 1>
// USUAL: #kgraph.stencil_config<tile_h = 16, tile_w = 32, block_x = 32, block_y = 8, rows_per_thread = 4>
// PLAN: "block": [
// PLAN-NEXT: 8,
// PLAN-NEXT: 4,
// PLAN-NEXT: 1
// PLAN: "grid": [
// PLAN-NEXT: 1,
// PLAN-NEXT: 4,
// PLAN-NEXT: 4
func.func @main(%x: tensor<2x8x13x21xf16>) -> tensor<2x8x4x7xf16> {
  %0 = kgraph.pool2d max %x kernel = [3, 3] strides = [3, 3] : tensor<2x8x13x21xf16>
  return %0 : tensor<2x8x4x7xf16>
}
