// A transformer MLP layer (f16): gelu(x W1 + b1) W2 + b2 + x.
//
//   kgraph-opt --fuse --tile=sm_90a examples/fusion/mlp.mlir -o mlp.ptx
//
// compiles to 2 GEMM kernels (wgmma on sm_90a, mma.sync on sm_80) with the
// bias, gelu and residual add fused into their epilogues.
func.func @main(%x: tensor<4096x1024xf16>, %w1: tensor<1024x4096xf16>,
                %b1: tensor<4096xf16>, %w2: tensor<4096x1024xf16>,
                %b2: tensor<1024xf16>) -> tensor<4096x1024xf16> {
  %h = kgraph.matmul %x, %w1 : tensor<4096x1024xf16>, tensor<1024x4096xf16> -> tensor<4096x4096xf16>
  %hb = kgraph.add %h, %b1 : tensor<4096x4096xf16>, tensor<4096xf16>
  %g = kgraph.gelu %hb : tensor<4096x4096xf16>
  %o = kgraph.matmul %g, %w2 : tensor<4096x4096xf16>, tensor<4096x1024xf16> -> tensor<4096x1024xf16>
  %ob = kgraph.add %o, %b2 : tensor<4096x1024xf16>, tensor<1024xf16>
  %r = kgraph.add %ob, %x : tensor<4096x1024xf16>, tensor<4096x1024xf16>
  return %r : tensor<4096x1024xf16>
}
