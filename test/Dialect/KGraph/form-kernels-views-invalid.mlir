// RUN: kgraph-opt %s --split-input-file --verify-diagnostics --kgraph-form-kernels --kgraph-tile=target=sm_80 -o /dev/null

// Still copies, which have no kernels yet: a slice that is not one
// contiguous run, a contiguous slice at an offset that is not a multiple of
// 16 bytes, a concat along an inner axis, a standalone broadcast_to.
func.func @strided_slice(%x: tensor<8x6xf32>) -> tensor<8x3xf32> {
  // expected-error @+1 {{'kgraph.slice' op has no code generation for sm_80 yet}}
  %s = kgraph.slice %x offsets = [0, 1] sizes = [8, 3] strides = [1, 2] : tensor<8x6xf32>
  return %s : tensor<8x3xf32>
}

// -----

func.func @misaligned_slice(%x: tensor<8x6xf32>) -> tensor<3x6xf32> {
  // expected-error @+1 {{'kgraph.slice' op has no code generation for sm_80 yet}}
  %s = kgraph.slice %x offsets = [1, 0] sizes = [3, 6] strides = [1, 1] : tensor<8x6xf32>
  return %s : tensor<3x6xf32>
}

// -----

func.func @inner_concat(%x: tensor<2x3xf32>, %y: tensor<2x5xf32>) -> tensor<2x8xf32> {
  // expected-error @+1 {{'kgraph.concat' op has no code generation for sm_80 yet}}
  %c = kgraph.concat %x, %y axis = 1 : tensor<2x3xf32>, tensor<2x5xf32>
  return %c : tensor<2x8xf32>
}

// -----

func.func @broadcast_result(%x: tensor<5xf32>) -> tensor<3x5xf32> {
  // expected-error @+1 {{'kgraph.broadcast_to' op has no code generation for sm_80 yet}}
  %b = kgraph.broadcast_to %x : tensor<5xf32> to tensor<3x5xf32>
  return %b : tensor<3x5xf32>
}
