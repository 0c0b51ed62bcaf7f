// Reductions of every kind and axis pattern, with producers and consumers,
// compiled to PTX that ptxas accepts for sm_80 and sm_90a without spills.
// REQUIRES: ptxas
// RUN: kgraph-opt --tile=sm_80 %s -o %t.sm80.ptx
// RUN: %ptxas -arch=sm_80 -v %t.sm80.ptx -o %t.sm80.cubin 2>&1 | FileCheck %s --check-prefix=PTXAS
// RUN: FileCheck %s --check-prefix=PTX < %t.sm80.ptx
// RUN: FileCheck %s --check-prefix=PLAN --match-full-lines < %t.sm80.plan.json
// RUN: kgraph-opt --tile=sm_90a %s -o %t.sm90a.ptx
// RUN: %ptxas -arch=sm_90a -v %t.sm90a.ptx -o %t.sm90a.cubin 2>&1 | FileCheck %s --check-prefix=PTXAS
// RUN: FileCheck %s --check-prefix=PTX90 < %t.sm90a.ptx

// PTXAS-NOT: {{[1-9][0-9]* bytes spill}}
// PTXAS: , 0 bytes spill stores, 0 bytes spill loads
// PTXAS-NOT: {{[1-9][0-9]* bytes spill}}

// PTX: .target sm_80
// PTX: .visible .entry main_k0(
// PTX: shfl.sync.bfly.b32
// PTX: bar.sync 0;
// PTX: .visible .entry main_k1(
// PTX: ld.global.v4.b32
// PTX: .visible .entry main_k2(
// PTX: ld.global.v4.b32
// PTX: ex2.approx
// PTX: .visible .entry main_k7(
// PTX-NOT: .entry
// PTX90: .target sm_90a
// PTX90: .visible .entry main_k7(

// PLAN: "name": "main_k0",
// PLAN: "name": "main_k7",

func.func @main(%a: tensor<37x1001xf32>, %b: tensor<64x4096xf32>, %c: tensor<37x1001xf16>,
                %d: tensor<3x5x1024xbf16>, %e: tensor<4097xi32>, %f: tensor<512x1024xf32>,
                %g: tensor<100x128xi8>)
    -> (tensor<37xf32>, tensor<64x1xf32>, tensor<1001xf16>, tensor<3x1x1xbf16>, tensor<i32>,
        tensor<1024xf32>, tensor<100xi8>) {
  // k0: sum over the last axis, 128 threads per row.
  %0 = kgraph.reduce sum %a axes = [1] : tensor<37x1001xf32>
  // k1: max; k2: exp(x - max) summed, then its reciprocal.
  %m = kgraph.fused (%b) : (tensor<64x4096xf32>) -> tensor<64x1xf32> {
  ^bb0(%x: tensor<64x4096xf32>):
    %mx = kgraph.reduce max %x axes = [1] keep_dims : tensor<64x4096xf32>
    kgraph.yield %mx : tensor<64x1xf32>
  }
  %1 = kgraph.fused (%b, %m) : (tensor<64x4096xf32>, tensor<64x1xf32>) -> tensor<64x1xf32> {
  ^bb0(%x: tensor<64x4096xf32>, %y: tensor<64x1xf32>):
    %s = kgraph.sub %x, %y : tensor<64x4096xf32>, tensor<64x1xf32>
    %ex = kgraph.exp %s : tensor<64x4096xf32>
    %sum = kgraph.reduce sum %ex axes = [1] keep_dims : tensor<64x4096xf32>
    %one = arith.constant dense<1.0> : tensor<f32>
    %r = kgraph.div %one, %sum : tensor<f32>, tensor<64x1xf32>
    kgraph.yield %r : tensor<64x1xf32>
  }
  // k3..k7: max over axis 0 (a thread per output), mean over two inner axes with
  // keep_dims, a full i32 reduction, a strided f32 sum of squares with 4
  // outputs per thread, and an i8 sum with a consumer.
  %2 = kgraph.reduce max %c axes = [0] : tensor<37x1001xf16>
  %3 = kgraph.reduce mean %d axes = [1, 2] keep_dims : tensor<3x5x1024xbf16>
  %4 = kgraph.reduce sum %e axes = [0] : tensor<4097xi32>
  %5 = kgraph.fused (%f) {kgraph.config = #kgraph.reduce_config<threads_per_row = 1, rows_per_block = 128, vector_width = 4, grid_size = 2>} : (tensor<512x1024xf32>) -> tensor<1024xf32> {
  ^bb0(%x: tensor<512x1024xf32>):
    %sq = kgraph.mul %x, %x : tensor<512x1024xf32>, tensor<512x1024xf32>
    %s = kgraph.reduce sum %sq axes = [0] : tensor<512x1024xf32>
    %r = kgraph.sqrt %s : tensor<1024xf32>
    kgraph.yield %r : tensor<1024xf32>
  }
  %6 = kgraph.fused (%g) : (tensor<100x128xi8>) -> tensor<100xi8> {
  ^bb0(%x: tensor<100x128xi8>):
    %s = kgraph.reduce sum %x axes = [1] : tensor<100x128xi8>
    %r = kgraph.relu %s : tensor<100xi8>
    kgraph.yield %r : tensor<100xi8>
  }
  return %0, %1, %2, %3, %4, %5, %6 : tensor<37xf32>, tensor<64x1xf32>, tensor<1001xf16>, tensor<3x1x1xbf16>, tensor<i32>, tensor<1024xf32>, tensor<100xi8>
}
