// RUN: kgraph-opt %s --split-input-file --verify-diagnostics

//===----------------------------------------------------------------------===//
// kgraph.reshape
//===----------------------------------------------------------------------===//

func.func @reshape_element_type(%x: tensor<2x3xf32>) {
  // expected-error@+1 {{'kgraph.reshape' op result element type 'f16' differs from input element type 'f32'}}
  %0 = kgraph.reshape %x : tensor<2x3xf32> to tensor<6xf16>
  return
}

// -----

func.func @reshape_count(%x: tensor<2x3xf32>) {
  // expected-error@+1 {{'kgraph.reshape' op input has 6 elements but the result has 8}}
  %0 = kgraph.reshape %x : tensor<2x3xf32> to tensor<2x4xf32>
  return
}

// -----

//===----------------------------------------------------------------------===//
// kgraph.transpose
//===----------------------------------------------------------------------===//

func.func @transpose_dynamic(%x: tensor<?x3xf32>) {
  // expected-error@+1 {{'kgraph.transpose' op input must be a statically shaped tensor, got 'tensor<?x3xf32>'}}
  %0 = kgraph.transpose %x, permutation = [1, 0] : tensor<?x3xf32>
  return
}

// -----

func.func @transpose_length(%x: tensor<2x3xf32>) {
  // expected-error@+1 {{'kgraph.transpose' op permutation [2, 0, 1] has 3 values but the input has rank 2}}
  %0 = kgraph.transpose %x, permutation = [2, 0, 1] : tensor<2x3xf32>
  return
}

// -----

func.func @transpose_out_of_range(%x: tensor<2x3x4xf32>) {
  // expected-error@+1 {{'kgraph.transpose' op permutation [0, 3, 1] is not a permutation: value 3 is out of range for rank 3}}
  %0 = kgraph.transpose %x, permutation = [0, 3, 1] : tensor<2x3x4xf32>
  return
}

// -----

func.func @transpose_negative(%x: tensor<2x3xf32>) {
  // expected-error@+1 {{'kgraph.transpose' op permutation [-1, 0] is not a permutation: value -1 is out of range for rank 2}}
  %0 = kgraph.transpose %x, permutation = [-1, 0] : tensor<2x3xf32>
  return
}

// -----

func.func @transpose_repeated(%x: tensor<2x3x4xf32>) {
  // expected-error@+1 {{'kgraph.transpose' op permutation [1, 0, 1] is not a permutation: value 1 is repeated}}
  %0 = kgraph.transpose %x, permutation = [1, 0, 1] : tensor<2x3x4xf32>
  return
}

// -----

func.func @transpose_result_type(%x: tensor<2x3xf32>) {
  // expected-error@+2 {{'kgraph.transpose' op failed to infer returned types}}
  // expected-error@+1 {{'kgraph.transpose' op inferred type(s) 'tensor<3x2xf32>' are incompatible with return type(s) of operation 'tensor<2x3xf32>'}}
  %0 = "kgraph.transpose"(%x) <{permutation = array<i64: 1, 0>}> : (tensor<2x3xf32>) -> tensor<2x3xf32>
  return
}

// -----

// In generic form the inference error is followed by the interface's own.
func.func @transpose_generic_invalid(%x: tensor<2x3xf32>) {
  // expected-error@+2 {{'kgraph.transpose' op failed to infer returned types}}
  // expected-error@+1 {{'kgraph.transpose' op permutation [0, 0] is not a permutation: value 0 is repeated}}
  %0 = "kgraph.transpose"(%x) <{permutation = array<i64: 0, 0>}> : (tensor<2x3xf32>) -> tensor<2x3xf32>
  return
}

// -----

//===----------------------------------------------------------------------===//
// kgraph.slice
//===----------------------------------------------------------------------===//

func.func @slice_length(%x: tensor<8x8xf32>) {
  // expected-error@+1 {{'kgraph.slice' op sizes [4] has 1 values but the input has rank 2}}
  %0 = kgraph.slice %x offsets = [0, 0] sizes = [4] strides = [1, 1] : tensor<8x8xf32>
  return
}

// -----

func.func @slice_offset_negative(%x: tensor<8x8xf32>) {
  // expected-error@+1 {{'kgraph.slice' op offsets must be non-negative, got [0, -1]}}
  %0 = kgraph.slice %x offsets = [0, -1] sizes = [4, 4] strides = [1, 1] : tensor<8x8xf32>
  return
}

// -----

func.func @slice_size_positive(%x: tensor<8x8xf32>) {
  // expected-error@+1 {{'kgraph.slice' op sizes must be positive, got [0, 4]}}
  %0 = kgraph.slice %x offsets = [0, 0] sizes = [0, 4] strides = [1, 1] : tensor<8x8xf32>
  return
}

// -----

func.func @slice_stride_positive(%x: tensor<8x8xf32>) {
  // expected-error@+1 {{'kgraph.slice' op strides must be positive, got [1, 0]}}
  %0 = kgraph.slice %x offsets = [0, 0] sizes = [4, 4] strides = [1, 0] : tensor<8x8xf32>
  return
}

// -----

func.func @slice_out_of_bounds(%x: tensor<8x8xf32>) {
  // expected-error@+1 {{'kgraph.slice' op slice of dim 1 is out of bounds: last index offset 2 + (size 4 - 1) * stride 2 = 8 is not below the dim size 8}}
  %0 = kgraph.slice %x offsets = [0, 2] sizes = [4, 4] strides = [1, 2] : tensor<8x8xf32>
  return
}

// -----

func.func @slice_overflow(%x: tensor<8xf32>) {
  // expected-error@+1 {{'kgraph.slice' op slice of dim 0 is out of bounds: last index offset 1 + (size 3 - 1) * stride 9223372036854775807 is out of int64 range (dim size 8)}}
  %0 = kgraph.slice %x offsets = [1] sizes = [3] strides = [9223372036854775807] : tensor<8xf32>
  return
}

// -----

//===----------------------------------------------------------------------===//
// kgraph.concat
//===----------------------------------------------------------------------===//

func.func @concat_empty() {
  // expected-error@+2 {{'kgraph.concat' op failed to infer returned types}}
  // expected-error@+1 {{'kgraph.concat' op requires at least one input}}
  %0 = "kgraph.concat"() <{axis = 0 : i64}> : () -> tensor<2xf32>
  return
}

// -----

func.func @concat_dynamic(%a: tensor<2x3xf32>, %b: tensor<2x?xf32>) {
  // expected-error@+1 {{'kgraph.concat' op input #1 must be a statically shaped tensor, got 'tensor<2x?xf32>'}}
  %0 = kgraph.concat %a, %b axis = 1 : tensor<2x3xf32>, tensor<2x?xf32>
  return
}

// -----

func.func @concat_axis(%a: tensor<2x3xf32>, %b: tensor<2x5xf32>) {
  // expected-error@+1 {{'kgraph.concat' op axis 2 is out of range for rank 2}}
  %0 = kgraph.concat %a, %b axis = 2 : tensor<2x3xf32>, tensor<2x5xf32>
  return
}

// -----

func.func @concat_axis_negative(%a: tensor<2x3xf32>, %b: tensor<2x5xf32>) {
  // expected-error@+1 {{'kgraph.concat' op axis -1 is out of range for rank 2}}
  %0 = kgraph.concat %a, %b axis = -1 : tensor<2x3xf32>, tensor<2x5xf32>
  return
}

// -----

func.func @concat_rank(%a: tensor<2x3xf32>, %b: tensor<2x3x1xf32>) {
  // expected-error@+1 {{'kgraph.concat' op input #1 has rank 3 but input #0 has rank 2}}
  %0 = kgraph.concat %a, %b axis = 1 : tensor<2x3xf32>, tensor<2x3x1xf32>
  return
}

// -----

func.func @concat_element_type(%a: tensor<2x3xf32>, %b: tensor<2x5xf16>) {
  // expected-error@+1 {{'kgraph.concat' op input #1 has element type 'f16' but input #0 has element type 'f32'}}
  %0 = kgraph.concat %a, %b axis = 1 : tensor<2x3xf32>, tensor<2x5xf16>
  return
}

// -----

func.func @concat_dims(%a: tensor<2x3xf32>, %b: tensor<2x3xf32>, %c: tensor<3x3xf32>) {
  // expected-error@+1 {{'kgraph.concat' op input #2 dim 0 is 3 but input #0 dim 0 is 2; only the concat axis 1 may differ}}
  %0 = kgraph.concat %a, %b, %c axis = 1 : tensor<2x3xf32>, tensor<2x3xf32>, tensor<3x3xf32>
  return
}

// -----

//===----------------------------------------------------------------------===//
// kgraph.broadcast_to
//===----------------------------------------------------------------------===//

func.func @broadcast_element_type(%x: tensor<1x8xf32>) {
  // expected-error@+1 {{'kgraph.broadcast_to' op result element type 'i32' differs from input element type 'f32'}}
  %0 = kgraph.broadcast_to %x : tensor<1x8xf32> to tensor<4x8xi32>
  return
}

// -----

func.func @broadcast_rank(%x: tensor<2x1x8xf32>) {
  // expected-error@+1 {{'kgraph.broadcast_to' op input rank 3 exceeds result rank 2; broadcasting can only add leading dims}}
  %0 = kgraph.broadcast_to %x : tensor<2x1x8xf32> to tensor<4x8xf32>
  return
}

// -----

// Shapes align at the trailing dims: input dim 0 (3) meets result dim 1 (4).
func.func @broadcast_dim(%x: tensor<3x8xf32>) {
  // expected-error@+1 {{'kgraph.broadcast_to' op input dim 0 (size 3) cannot broadcast to result dim 1 (size 4): sizes must match or the input size must be 1}}
  %0 = kgraph.broadcast_to %x : tensor<3x8xf32> to tensor<2x4x8xf32>
  return
}
