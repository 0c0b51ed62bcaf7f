// The issue-5 edge chain (5x5 blur, Sobel x and y, gradient magnitude,
// 3x3 max-pool non-maximum suppression with a threshold) on 8x1x4096x4096
// f32 as one stencil group: one kernel, valid PTX for sm_80 and sm_90a,
// no spills.
// REQUIRES: ptxas
// RUN: kgraph-opt --tile=sm_80 %s -o %t.sm80.ptx
// RUN: %ptxas -arch=sm_80 -v %t.sm80.ptx -o %t.sm80.cubin 2>&1 | FileCheck %s --check-prefix=PTXAS
// RUN: grep -c "\.entry" %t.sm80.ptx | FileCheck %s --check-prefix=ONE
// RUN: FileCheck %s --check-prefix=PLAN --match-full-lines < %t.sm80.plan.json
// RUN: kgraph-opt --tile=sm_90a %s -o %t.sm90a.ptx
// RUN: %ptxas -arch=sm_90a -v %t.sm90a.ptx -o %t.sm90a.cubin 2>&1 | FileCheck %s --check-prefix=PTXAS
// RUN: grep -c "\.entry" %t.sm90a.ptx | FileCheck %s --check-prefix=ONE

// PTXAS-NOT: {{[1-9][0-9]* bytes spill}}
// PTXAS: , 0 bytes spill stores, 0 bytes spill loads
// PTXAS-NOT: {{[1-9][0-9]* bytes spill}}
// ONE: {{^1$}}
// PLAN: "block": [
// PLAN-NEXT: 64,
// PLAN-NEXT: 4,
// PLAN-NEXT: 1
// sm_80's 164 KiB of shared memory take 64x128 tiles (the pool's row
// maxima made the taps cheaper than the halo they would re-read), in 4x2
// strips: with 4-column strips the held regions would not fit twice per SM.
// PLAN: "grid": [
// PLAN-NEXT: 32,
// PLAN-NEXT: 64,
// PLAN-NEXT: 8
// PLAN: "shared_bytes": 80512
func.func @main(%img: tensor<8x1x4096x4096xf32>, %g: tensor<1x1x5x5xf32>, %sx: tensor<1x1x3x3xf32>, %sy: tensor<1x1x3x3xf32>) -> tensor<8x1x4096x4096xf32> {
  %r = kgraph.fused (%img, %g, %sx, %sy) : (tensor<8x1x4096x4096xf32>, tensor<1x1x5x5xf32>, tensor<1x1x3x3xf32>, tensor<1x1x3x3xf32>) -> tensor<8x1x4096x4096xf32> {
  ^bb0(%x: tensor<8x1x4096x4096xf32>, %gw: tensor<1x1x5x5xf32>, %wx: tensor<1x1x3x3xf32>, %wy: tensor<1x1x3x3xf32>):
    %b = kgraph.conv2d %x, %gw padding = [2, 2, 2, 2] : tensor<8x1x4096x4096xf32>, tensor<1x1x5x5xf32> -> tensor<8x1x4096x4096xf32>
    %gx = kgraph.conv2d %b, %wx padding = [1, 1, 1, 1] : tensor<8x1x4096x4096xf32>, tensor<1x1x3x3xf32> -> tensor<8x1x4096x4096xf32>
    %gy = kgraph.conv2d %b, %wy padding = [1, 1, 1, 1] : tensor<8x1x4096x4096xf32>, tensor<1x1x3x3xf32> -> tensor<8x1x4096x4096xf32>
    %gx2 = kgraph.mul %gx, %gx : tensor<8x1x4096x4096xf32>, tensor<8x1x4096x4096xf32>
    %gy2 = kgraph.mul %gy, %gy : tensor<8x1x4096x4096xf32>, tensor<8x1x4096x4096xf32>
    %s = kgraph.add %gx2, %gy2 : tensor<8x1x4096x4096xf32>, tensor<8x1x4096x4096xf32>
    %m = kgraph.sqrt %s : tensor<8x1x4096x4096xf32>
    %p = kgraph.pool2d max %m kernel = [3, 3] padding = [1, 1, 1, 1] : tensor<8x1x4096x4096xf32>
    %eq = kgraph.compare eq, %m, %p : tensor<8x1x4096x4096xf32>, tensor<8x1x4096x4096xf32>
    %t = arith.constant dense<0.1> : tensor<f32>
    %gt = kgraph.compare gt, %m, %t : tensor<8x1x4096x4096xf32>, tensor<f32>
    %z = arith.constant dense<0.0> : tensor<f32>
    %s1 = kgraph.select %gt, %m, %z : tensor<8x1x4096x4096xi1>, tensor<8x1x4096x4096xf32>, tensor<f32>
    %o = kgraph.select %eq, %s1, %z : tensor<8x1x4096x4096xi1>, tensor<8x1x4096x4096xf32>, tensor<f32>
    kgraph.yield %o : tensor<8x1x4096x4096xf32>
  }
  return %r : tensor<8x1x4096x4096xf32>
}
