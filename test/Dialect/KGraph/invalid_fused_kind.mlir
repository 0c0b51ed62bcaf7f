// RUN: kgraph-opt %s --verify-diagnostics

func.func @unknown_kind(%a: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{unknown group kind 'matmul'; kinds: elementwise, gemm, reduce, stencil, copy, transpose, window}}
  %0 = kgraph.fused matmul (%a) : (tensor<4xf32>) -> tensor<4xf32> {
  ^bb0(%x: tensor<4xf32>):
    kgraph.yield %x : tensor<4xf32>
  }
  return %0 : tensor<4xf32>
}
