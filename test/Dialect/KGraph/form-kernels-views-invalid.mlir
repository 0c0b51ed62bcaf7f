// RUN: kgraph-opt %s --verify-diagnostics --kgraph-form-kernels --kgraph-tile=target=sm_80 -o /dev/null

// Still a copy with no kernel: a concat along an inner axis. (Strided and
// misaligned slices and a lone broadcast_to are elementwise copies through
// their access maps: tile-copy.mlir.)
func.func @inner_concat(%x: tensor<2x3xf32>, %y: tensor<2x5xf32>) -> tensor<2x8xf32> {
  // expected-error @+1 {{'kgraph.concat' op has no code generation for sm_80 yet}}
  %c = kgraph.concat %x, %y axis = 1 : tensor<2x3xf32>, tensor<2x5xf32>
  return %c : tensor<2x8xf32>
}

