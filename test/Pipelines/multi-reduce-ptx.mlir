// Multi-reduction kernels at the benchmark shapes (softmax f32 4096x4096,
// layer norm f32 8192x1024) and an f16 layer norm and rows too long to hold,
// compiled with --fuse to PTX that ptxas accepts for sm_80 and sm_90a
// without spills: one kernel each, the rows loaded once in 16-byte vectors
// and stored once.
// REQUIRES: ptxas
// RUN: kgraph-opt --fuse --tile=sm_80 %s -o %t.sm80.ptx
// RUN: %ptxas -arch=sm_80 -v %t.sm80.ptx -o %t.sm80.cubin 2>&1 | FileCheck %s --check-prefix=PTXAS
// RUN: kgraph-opt --fuse --tile=sm_90a %s -o %t.sm90a.ptx
// RUN: %ptxas -arch=sm_90a -v %t.sm90a.ptx -o %t.sm90a.cubin 2>&1 | FileCheck %s --check-prefix=PTXAS
// RUN: FileCheck %s --check-prefix=PTX < %t.sm90a.ptx

// PTXAS-NOT: {{[1-9][0-9]* bytes spill}}
// PTXAS: , 0 bytes spill stores, 0 bytes spill loads
// PTXAS-NOT: {{[1-9][0-9]* bytes spill}}

// The softmax on the H200: 256 threads per row, 4 vectors of 4 f32 each,
// loaded once, stored once.
// PTX-LABEL: .visible .entry softmax_k0(
// PTX-COUNT-4: ld.global.v4.b32
// PTX-NOT: ld.global
// PTX-COUNT-4: st.global.v4.b32
// PTX-NOT: .entry softmax_k1
// PTX-LABEL: .visible .entry layer_norm_k0(
// PTX-COUNT-8: ld.global.v4.b32
// PTX-NOT: bar.sync
// PTX: .visible .entry layer_norm_f16_k0(
// PTX: ld.global.v4.b32
// PTX: .visible .entry long_rows_k0(
// PTX: ld.global.v4.b32

func.func @softmax(%x: tensor<4096x4096xf32>) -> tensor<4096x4096xf32> {
  %m = kgraph.reduce max %x axes = [1] keep_dims : tensor<4096x4096xf32>
  %d = kgraph.sub %x, %m : tensor<4096x4096xf32>, tensor<4096x1xf32>
  %e = kgraph.exp %d : tensor<4096x4096xf32>
  %s = kgraph.reduce sum %e axes = [1] keep_dims : tensor<4096x4096xf32>
  %o = kgraph.div %e, %s : tensor<4096x4096xf32>, tensor<4096x1xf32>
  return %o : tensor<4096x4096xf32>
}

func.func @layer_norm(%x: tensor<8192x1024xf32>, %g: tensor<1024xf32>, %b: tensor<1024xf32>) -> tensor<8192x1024xf32> {
  %mu = kgraph.reduce mean %x axes = [1] keep_dims : tensor<8192x1024xf32>
  %d = kgraph.sub %x, %mu : tensor<8192x1024xf32>, tensor<8192x1xf32>
  %sq = kgraph.mul %d, %d : tensor<8192x1024xf32>, tensor<8192x1024xf32>
  %v = kgraph.reduce mean %sq axes = [1] keep_dims : tensor<8192x1024xf32>
  %eps = arith.constant dense<1.0e-5> : tensor<f32>
  %ve = kgraph.add %v, %eps : tensor<8192x1xf32>, tensor<f32>
  %r = kgraph.rsqrt %ve : tensor<8192x1xf32>
  %y = kgraph.mul %d, %r : tensor<8192x1024xf32>, tensor<8192x1xf32>
  %yg = kgraph.mul %y, %g : tensor<8192x1024xf32>, tensor<1024xf32>
  %yb = kgraph.add %yg, %b : tensor<8192x1024xf32>, tensor<1024xf32>
  return %yb : tensor<8192x1024xf32>
}

func.func @layer_norm_f16(%x: tensor<4096x768xf16>, %g: tensor<768xf16>, %b: tensor<768xf16>) -> tensor<4096x768xf16> {
  %mu = kgraph.reduce mean %x axes = [1] keep_dims : tensor<4096x768xf16>
  %d = kgraph.sub %x, %mu : tensor<4096x768xf16>, tensor<4096x1xf16>
  %sq = kgraph.mul %d, %d : tensor<4096x768xf16>, tensor<4096x768xf16>
  %v = kgraph.reduce mean %sq axes = [1] keep_dims : tensor<4096x768xf16>
  %eps = arith.constant dense<1.0e-5> : tensor<f16>
  %ve = kgraph.add %v, %eps : tensor<4096x1xf16>, tensor<f16>
  %r = kgraph.rsqrt %ve : tensor<4096x1xf16>
  %y = kgraph.mul %d, %r : tensor<4096x768xf16>, tensor<4096x1xf16>
  %yg = kgraph.mul %y, %g : tensor<4096x768xf16>, tensor<768xf16>
  %yb = kgraph.add %yg, %b : tensor<4096x768xf16>, tensor<768xf16>
  return %yb : tensor<4096x768xf16>
}

func.func @long_rows(%x: tensor<128x131072xf32>) -> tensor<128x131072xf32> {
  %m = kgraph.reduce max %x axes = [1] keep_dims : tensor<128x131072xf32>
  %d = kgraph.sub %x, %m : tensor<128x131072xf32>, tensor<128x1xf32>
  %e = kgraph.exp %d : tensor<128x131072xf32>
  %s = kgraph.reduce sum %e axes = [1] keep_dims : tensor<128x131072xf32>
  %o = kgraph.div %e, %s : tensor<128x131072xf32>, tensor<128x1xf32>
  return %o : tensor<128x131072xf32>
}
