// kgraph-fuse never forms an elementwise group that yields values of two
// shapes (the elementwise kernel stores its results over one iteration
// space): %x feeds a rank-0 result and a broadcast to tensor<1xf32>.
// Merging all three ops would yield tensor<f32> and tensor<1xf32>, which
// kgraph-tile rejected ("elementwise group results must share one shape");
// the add recomputes the neg instead. Found by test/fuzz (graph t2-81).
// REQUIRES: ptxas
// RUN: kgraph-opt --tile=sm_80 --fuse --emit=tiled %s | FileCheck %s
// RUN: kgraph-opt --tile=sm_80 --fuse %s -o %t.ptx
// RUN: %ptxas -arch=sm_80 %t.ptx -o %t.cubin
// RUN: kgraph-opt --tile=sm_80 --fuse --fuse-report --emit=tiled %s -o /dev/null 2>&1 | FileCheck %s --check-prefix=REPORT

// CHECK: kgraph.fused
// CHECK-SAME: -> tensor<f32>
// CHECK: kgraph.neg
// CHECK: kgraph.exp
// CHECK: kgraph.fused
// CHECK-SAME: -> tensor<1xf32>
// CHECK: kgraph.neg
// CHECK: kgraph.add
// REPORT: remark: fused 2 ops into an elementwise group with 1 result: kgraph.neg at {{.*}}, kgraph.exp
// REPORT: remark: fused 2 ops into an elementwise group with 1 result: kgraph.neg at {{.*}} (recomputed), kgraph.add
func.func @main(%a: tensor<f32>, %b: tensor<1xf32>) -> (tensor<f32>, tensor<1xf32>) {
  %x = kgraph.neg %a : tensor<f32>
  %y = kgraph.exp %x : tensor<f32>
  %z = kgraph.add %b, %x : tensor<1xf32>, tensor<f32>
  return %y, %z : tensor<f32>, tensor<1xf32>
}
