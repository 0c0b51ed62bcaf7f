// RUN: kgraph-opt %s --verify-diagnostics --kgraph-form-kernels --kgraph-tile=target=sm_80 -o /dev/null

// Still a copy with no kernel: a kgraph.reshape inside a group (the fuser
// never puts one there: reshapes are views of their input's buffer). Every
// other data-movement op is read by the elementwise family: strided and
// misaligned slices and a lone broadcast_to through their access maps
// (fuse-transpose.mlir, transpose-interp.test), a concat that is not
// written in place through its inputs' segments (fuse-concat.mlir,
// concat-interp.test).
func.func @reshape_in_group(%a: tensor<4x6xf32>) -> tensor<24xf32> {
  %0 = kgraph.fused (%a) : (tensor<4x6xf32>) -> tensor<24xf32> {
  ^bb0(%x: tensor<4x6xf32>):
    // expected-error @+1 {{'kgraph.reshape' op has no code generation for sm_80 yet}}
    %r = kgraph.reshape %x : tensor<4x6xf32> to tensor<24xf32>
    %e = kgraph.exp %r : tensor<24xf32>
    kgraph.yield %e : tensor<24xf32>
  }
  return %0 : tensor<24xf32>
}
