// RUN: kgraph-opt %s --split-input-file --verify-diagnostics

//===----------------------------------------------------------------------===//
// kgraph.matmul
//===----------------------------------------------------------------------===//

func.func @matmul_rank(%a: tensor<1x2x4x8xf32>, %b: tensor<1x2x8x4xf32>) {
  // expected-error@+1 {{'kgraph.matmul' op lhs must have rank 2 or 3, got rank 4}}
  %0 = kgraph.matmul %a, %b : tensor<1x2x4x8xf32>, tensor<1x2x8x4xf32> -> tensor<1x2x4x4xf32>
  return
}

// -----

func.func @matmul_rank_mismatch(%a: tensor<4x8xf32>, %b: tensor<2x8x4xf32>) {
  // expected-error@+1 {{'kgraph.matmul' op lhs has rank 2 but rhs has rank 3}}
  %0 = kgraph.matmul %a, %b : tensor<4x8xf32>, tensor<2x8x4xf32> -> tensor<2x4x4xf32>
  return
}

// -----

func.func @matmul_element_types(%a: tensor<4x8xf16>, %b: tensor<8x4xbf16>) {
  // expected-error@+1 {{'kgraph.matmul' op lhs element type 'f16' differs from rhs element type 'bf16'}}
  %0 = kgraph.matmul %a, %b : tensor<4x8xf16>, tensor<8x4xbf16> -> tensor<4x4xf32>
  return
}

// -----

func.func @matmul_batch(%a: tensor<2x4x8xf32>, %b: tensor<3x8x4xf32>) {
  // expected-error@+1 {{'kgraph.matmul' op batch dimensions differ: lhs dim 0 is 2, rhs dim 0 is 3}}
  %0 = kgraph.matmul %a, %b : tensor<2x4x8xf32>, tensor<3x8x4xf32> -> tensor<2x4x4xf32>
  return
}

// -----

func.func @matmul_contracting(%a: tensor<4x8xf16>, %b: tensor<9x16xf16>) {
  // expected-error@+1 {{'kgraph.matmul' op contracting dimensions differ: lhs dim 1 is 8, rhs dim 0 is 9}}
  %0 = kgraph.matmul %a, %b : tensor<4x8xf16>, tensor<9x16xf16> -> tensor<4x16xf32>
  return
}

// -----

// With both operands transposed, K is lhs dim 1 of [B, K, M] and rhs dim 2 of
// [B, N, K].
func.func @matmul_contracting_transposed(%a: tensor<2x8x4xf16>, %b: tensor<2x16x9xf16>) {
  // expected-error@+1 {{'kgraph.matmul' op contracting dimensions differ: lhs dim 1 is 8, rhs dim 2 is 9}}
  %0 = kgraph.matmul %a, %b {transpose_a, transpose_b} : tensor<2x8x4xf16>, tensor<2x16x9xf16> -> tensor<2x4x16xf32>
  return
}

// -----

func.func @matmul_result_shape(%a: tensor<4x8xf16>, %b: tensor<8x16xf16>) {
  // expected-error@+1 {{'kgraph.matmul' op result shape [4, 17] does not match [4, 16] computed from the operands}}
  %0 = kgraph.matmul %a, %b : tensor<4x8xf16>, tensor<8x16xf16> -> tensor<4x17xf32>
  return
}

// -----

func.func @matmul_transposed_result_shape(%a: tensor<64x32xf16>, %b: tensor<128x32xf16>) {
  // expected-error@+1 {{'kgraph.matmul' op result shape [64, 32] does not match [64, 128] computed from the operands}}
  %0 = kgraph.matmul %a, %b {transpose_b} : tensor<64x32xf16>, tensor<128x32xf16> -> tensor<64x32xf32>
  return
}

// -----

func.func @matmul_accumulation(%a: tensor<4x8xf16>, %b: tensor<8x16xf16>) {
  // expected-error@+1 {{'kgraph.matmul' op 'f16' operands cannot accumulate into 'i32'}}
  %0 = kgraph.matmul %a, %b : tensor<4x8xf16>, tensor<8x16xf16> -> tensor<4x16xi32>
  return
}

// -----

func.func @matmul_accumulation_i8(%a: tensor<4x8xi8>, %b: tensor<8x16xi8>) {
  // expected-error@+1 {{'kgraph.matmul' op 'i8' operands cannot accumulate into 'i8'}}
  %0 = kgraph.matmul %a, %b : tensor<4x8xi8>, tensor<8x16xi8> -> tensor<4x16xi8>
  return
}

// -----

func.func @matmul_tf32_f16(%a: tensor<4x8xf16>, %b: tensor<8x16xf16>) {
  // expected-error@+1 {{'kgraph.matmul' op precision tf32 requires f32 operands, got 'f16'}}
  %0 = kgraph.matmul %a, %b precision = tf32 : tensor<4x8xf16>, tensor<8x16xf16> -> tensor<4x16xf32>
  return
}

// -----

func.func @matmul_f64(%a: tensor<4x8xf64>, %b: tensor<8x16xf64>) {
  // expected-error@+1 {{'kgraph.matmul' op operand #0 must be statically shaped tensor of}}
  %0 = kgraph.matmul %a, %b : tensor<4x8xf64>, tensor<8x16xf64> -> tensor<4x16xf64>
  return
}

// -----

//===----------------------------------------------------------------------===//
// kgraph.conv2d
//===----------------------------------------------------------------------===//

func.func @conv2d_input_rank(%x: tensor<3x8x8xf32>, %w: tensor<4x3x3x3xf32>) {
  // expected-error@+1 {{'kgraph.conv2d' op input must have rank 4, got rank 3}}
  %0 = kgraph.conv2d %x, %w : tensor<3x8x8xf32>, tensor<4x3x3x3xf32> -> tensor<1x4x6x6xf32>
  return
}

// -----

func.func @conv2d_filter_rank(%x: tensor<1x3x8x8xf32>, %w: tensor<4x3x3xf32>) {
  // expected-error@+1 {{'kgraph.conv2d' op filter must have rank 4, got rank 3}}
  %0 = kgraph.conv2d %x, %w : tensor<1x3x8x8xf32>, tensor<4x3x3xf32> -> tensor<1x4x6x6xf32>
  return
}

// -----

func.func @conv2d_element_types(%x: tensor<1x3x8x8xf16>, %w: tensor<4x3x3x3xf32>) {
  // expected-error@+1 {{'kgraph.conv2d' op input element type 'f16' differs from filter element type 'f32'}}
  %0 = kgraph.conv2d %x, %w : tensor<1x3x8x8xf16>, tensor<4x3x3x3xf32> -> tensor<1x4x6x6xf32>
  return
}

// -----

func.func @conv2d_strides_length(%x: tensor<1x3x8x8xf32>, %w: tensor<4x3x3x3xf32>) {
  // expected-error@+1 {{'kgraph.conv2d' op strides must have 2 values, got 3}}
  %0 = kgraph.conv2d %x, %w strides = [1, 1, 1] : tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32> -> tensor<1x4x6x6xf32>
  return
}

// -----

func.func @conv2d_strides_positive(%x: tensor<1x3x8x8xf32>, %w: tensor<4x3x3x3xf32>) {
  // expected-error@+1 {{'kgraph.conv2d' op strides must be positive, got [0, 1]}}
  %0 = kgraph.conv2d %x, %w strides = [0, 1] : tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32> -> tensor<1x4x6x6xf32>
  return
}

// -----

func.func @conv2d_padding_length(%x: tensor<1x3x8x8xf32>, %w: tensor<4x3x3x3xf32>) {
  // expected-error@+1 {{'kgraph.conv2d' op padding must have 4 values, got 2}}
  %0 = kgraph.conv2d %x, %w padding = [1, 1] : tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32> -> tensor<1x4x8x8xf32>
  return
}

// -----

func.func @conv2d_padding_negative(%x: tensor<1x3x8x8xf32>, %w: tensor<4x3x3x3xf32>) {
  // expected-error@+1 {{'kgraph.conv2d' op padding must be non-negative, got [-1, 0, 0, 0]}}
  %0 = kgraph.conv2d %x, %w padding = [-1, 0, 0, 0] : tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32> -> tensor<1x4x5x6xf32>
  return
}

// -----

func.func @conv2d_dilations_length(%x: tensor<1x3x8x8xf32>, %w: tensor<4x3x3x3xf32>) {
  // expected-error@+1 {{'kgraph.conv2d' op dilations must have 2 values, got 1}}
  %0 = kgraph.conv2d %x, %w dilations = [2] : tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32> -> tensor<1x4x4x4xf32>
  return
}

// -----

func.func @conv2d_dilations_positive(%x: tensor<1x3x8x8xf32>, %w: tensor<4x3x3x3xf32>) {
  // expected-error@+1 {{'kgraph.conv2d' op dilations must be positive, got [1, 0]}}
  %0 = kgraph.conv2d %x, %w dilations = [1, 0] : tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32> -> tensor<1x4x6x8xf32>
  return
}

// -----

func.func @conv2d_groups_positive(%x: tensor<1x3x8x8xf32>, %w: tensor<4x3x3x3xf32>) {
  // expected-error@+1 {{'kgraph.conv2d' op groups must be positive, got 0}}
  %0 = kgraph.conv2d %x, %w groups = 0 : tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32> -> tensor<1x4x6x6xf32>
  return
}

// -----

func.func @conv2d_groups_channels(%x: tensor<1x8x8x8xf32>, %w: tensor<6x2x3x3xf32>) {
  // expected-error@+1 {{'kgraph.conv2d' op groups 3 does not divide the 8 input channels}}
  %0 = kgraph.conv2d %x, %w groups = 3 : tensor<1x8x8x8xf32>, tensor<6x2x3x3xf32> -> tensor<1x6x6x6xf32>
  return
}

// -----

func.func @conv2d_groups_filters(%x: tensor<1x8x8x8xf32>, %w: tensor<5x4x3x3xf32>) {
  // expected-error@+1 {{'kgraph.conv2d' op groups 2 does not divide the 5 output channels (filters)}}
  %0 = kgraph.conv2d %x, %w groups = 2 : tensor<1x8x8x8xf32>, tensor<5x4x3x3xf32> -> tensor<1x5x6x6xf32>
  return
}

// -----

func.func @conv2d_filter_channels(%x: tensor<1x8x8x8xf32>, %w: tensor<16x4x3x3xf32>) {
  // expected-error@+1 {{'kgraph.conv2d' op filter has 4 channels per group but the input has 8 channels in 1 groups (expected 8)}}
  %0 = kgraph.conv2d %x, %w : tensor<1x8x8x8xf32>, tensor<16x4x3x3xf32> -> tensor<1x16x6x6xf32>
  return
}

// -----

// nhwc: the filter's channels are its last dim, not dim 1.
func.func @conv2d_filter_channels_nhwc(%x: tensor<1x8x8x4xf32>, %w: tensor<16x4x3x3xf32>) {
  // expected-error@+1 {{'kgraph.conv2d' op filter has 3 channels per group but the input has 4 channels in 1 groups (expected 4)}}
  %0 = kgraph.conv2d %x, %w layout = nhwc : tensor<1x8x8x4xf32>, tensor<16x4x3x3xf32> -> tensor<1x5x6x16xf32>
  return
}

// -----

func.func @conv2d_empty_kernel(%x: tensor<1x3x8x8xf32>, %w: tensor<4x3x0x3xf32>) {
  // expected-error@+1 {{'kgraph.conv2d' op filter kernel must be non-empty, got 0x3}}
  %0 = kgraph.conv2d %x, %w : tensor<1x3x8x8xf32>, tensor<4x3x0x3xf32> -> tensor<1x4x8x6xf32>
  return
}

// -----

func.func @conv2d_output_height(%x: tensor<1x3x4x8xf32>, %w: tensor<4x3x7x3xf32>) {
  // expected-error@+1 {{'kgraph.conv2d' op output height is non-positive: floor((H 4 + padding 0 + 0 - dilation 1 * (KH 7 - 1) - 1) / stride 1) + 1 = -2}}
  %0 = kgraph.conv2d %x, %w : tensor<1x3x4x8xf32>, tensor<4x3x7x3xf32> -> tensor<1x4x1x6xf32>
  return
}

// -----

// Dilation 4 spreads the 3-wide kernel over 9 columns; 8 + 0 padding is too few.
func.func @conv2d_output_width(%x: tensor<1x3x8x8xf32>, %w: tensor<4x3x3x3xf32>) {
  // expected-error@+1 {{'kgraph.conv2d' op output width is non-positive: floor((W 8 + padding 0 + 0 - dilation 4 * (KW 3 - 1) - 1) / stride 2) + 1 = 0}}
  %0 = kgraph.conv2d %x, %w strides = [1, 2] dilations = [1, 4] : tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32> -> tensor<1x4x6x1xf32>
  return
}

// -----

// Attributes are unbounded: 2^62 * (3 - 1) does not fit in int64.
func.func @conv2d_output_overflow(%x: tensor<1x3x8x8xf32>, %w: tensor<4x3x3x3xf32>) {
  // expected-error@+1 {{'kgraph.conv2d' op output height is out of int64 range: floor((H 8 + padding 0 + 0 - dilation 4611686018427387904 * (KH 3 - 1) - 1) / stride 1) + 1}}
  %0 = kgraph.conv2d %x, %w dilations = [4611686018427387904, 1] : tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32> -> tensor<1x4x6x6xf32>
  return
}

// -----

func.func @conv2d_result_shape(%x: tensor<1x3x224x224xf16>, %w: tensor<64x3x3x3xf16>) {
  // expected-error@+1 {{'kgraph.conv2d' op result shape [1, 64, 224, 224] does not match [1, 64, 112, 112] computed from the operands}}
  %0 = kgraph.conv2d %x, %w strides = [2, 2] padding = [1, 1, 1, 1] : tensor<1x3x224x224xf16>, tensor<64x3x3x3xf16> -> tensor<1x64x224x224xf32>
  return
}

// -----

// The nhwc result is [N, OH, OW, F].
func.func @conv2d_result_shape_nhwc(%x: tensor<1x8x8x4xf32>, %w: tensor<16x3x3x4xf32>) {
  // expected-error@+1 {{'kgraph.conv2d' op result shape [1, 16, 6, 6] does not match [1, 6, 6, 16] computed from the operands}}
  %0 = kgraph.conv2d %x, %w layout = nhwc : tensor<1x8x8x4xf32>, tensor<16x3x3x4xf32> -> tensor<1x16x6x6xf32>
  return
}

// -----

func.func @conv2d_accumulation(%x: tensor<1x3x8x8xbf16>, %w: tensor<4x3x3x3xbf16>) {
  // expected-error@+1 {{'kgraph.conv2d' op 'bf16' operands cannot accumulate into 'f16'}}
  %0 = kgraph.conv2d %x, %w : tensor<1x3x8x8xbf16>, tensor<4x3x3x3xbf16> -> tensor<1x4x6x6xf16>
  return
}

// -----

func.func @conv2d_tf32_i8(%x: tensor<1x3x8x8xi8>, %w: tensor<4x3x3x3xi8>) {
  // expected-error@+1 {{'kgraph.conv2d' op precision tf32 requires f32 operands, got 'i8'}}
  %0 = kgraph.conv2d %x, %w precision = tf32 : tensor<1x3x8x8xi8>, tensor<4x3x3x3xi8> -> tensor<1x4x6x6xi32>
  return
}

// -----

//===----------------------------------------------------------------------===//
// kgraph.pool2d
//===----------------------------------------------------------------------===//

func.func @pool2d_dynamic(%x: tensor<?x3x8x8xf32>) {
  // expected-error@+1 {{'kgraph.pool2d' op input must be a statically shaped tensor, got 'tensor<?x3x8x8xf32>'}}
  %0 = kgraph.pool2d max %x kernel = [2, 2] : tensor<?x3x8x8xf32>
  return
}

// -----

func.func @pool2d_rank(%x: tensor<3x8x8xf32>) {
  // expected-error@+1 {{'kgraph.pool2d' op input must have rank 4, got rank 3}}
  %0 = kgraph.pool2d max %x kernel = [2, 2] : tensor<3x8x8xf32>
  return
}

// -----

func.func @pool2d_kernel_length(%x: tensor<1x3x8x8xf32>) {
  // expected-error@+1 {{'kgraph.pool2d' op kernel must have 2 values, got 1}}
  %0 = kgraph.pool2d max %x kernel = [2] : tensor<1x3x8x8xf32>
  return
}

// -----

func.func @pool2d_kernel_positive(%x: tensor<1x3x8x8xf32>) {
  // expected-error@+1 {{'kgraph.pool2d' op kernel must be positive, got [2, 0]}}
  %0 = kgraph.pool2d max %x kernel = [2, 0] : tensor<1x3x8x8xf32>
  return
}

// -----

func.func @pool2d_strides_positive(%x: tensor<1x3x8x8xf32>) {
  // expected-error@+1 {{'kgraph.pool2d' op strides must be positive, got [-2, 2]}}
  %0 = kgraph.pool2d max %x kernel = [2, 2] strides = [-2, 2] : tensor<1x3x8x8xf32>
  return
}

// -----

func.func @pool2d_padding_length(%x: tensor<1x3x8x8xf32>) {
  // expected-error@+1 {{'kgraph.pool2d' op padding must have 4 values, got 3}}
  %0 = kgraph.pool2d max %x kernel = [2, 2] padding = [1, 1, 1] : tensor<1x3x8x8xf32>
  return
}

// -----

func.func @pool2d_padding_negative(%x: tensor<1x3x8x8xf32>) {
  // expected-error@+1 {{'kgraph.pool2d' op padding must be non-negative, got [0, 0, 0, -1]}}
  %0 = kgraph.pool2d max %x kernel = [2, 2] padding = [0, 0, 0, -1] : tensor<1x3x8x8xf32>
  return
}

// -----

func.func @pool2d_padding_too_large(%x: tensor<1x3x8x8xf32>) {
  // expected-error@+1 {{'kgraph.pool2d' op padding 2 on the right must be smaller than the kernel width 2}}
  %0 = kgraph.pool2d avg %x kernel = [2, 2] padding = [1, 1, 0, 2] : tensor<1x3x8x8xf32>
  return
}

// -----

func.func @pool2d_avg_integer(%x: tensor<1x3x8x8xi8>) {
  // expected-error@+1 {{'kgraph.pool2d' op avg pooling requires a float element type, got 'i8'}}
  %0 = kgraph.pool2d avg %x kernel = [2, 2] : tensor<1x3x8x8xi8>
  return
}

// -----

func.func @pool2d_output_height(%x: tensor<1x2x8x3xf32>) {
  // nhwc: H is dim 1 (2), W is dim 2 (8).
  // expected-error@+1 {{'kgraph.pool2d' op output height is non-positive: floor((H 2 + padding 0 + 0 - KH 3) / stride 1) + 1 = 0}}
  %0 = kgraph.pool2d max %x kernel = [3, 3] layout = nhwc : tensor<1x2x8x3xf32>
  return
}

// -----

func.func @pool2d_output_overflow(%x: tensor<1x3x8x8xf32>) {
  // expected-error@+1 {{'kgraph.pool2d' op output width is out of int64 range: floor((W 8 + padding 9223372036854775806 + 0 - KW 9223372036854775807) / stride 1) + 1}}
  %0 = kgraph.pool2d max %x kernel = [2, 9223372036854775807] padding = [0, 0, 9223372036854775806, 0] : tensor<1x3x8x8xf32>
  return
}

// -----

func.func @pool2d_result_type(%x: tensor<1x3x8x8xf32>) {
  // The interface verifier follows the mismatch with a generic message.
  // expected-error@+2 {{'kgraph.pool2d' op failed to infer returned types}}
  // expected-error@+1 {{'kgraph.pool2d' op inferred type(s) 'tensor<1x3x4x4xf32>' are incompatible with return type(s) of operation 'tensor<1x3x8x8xf32>'}}
  %0 = "kgraph.pool2d"(%x) <{kind = #kgraph<pool_kind max>, kernel = array<i64: 2, 2>, strides = array<i64: 2, 2>}> : (tensor<1x3x8x8xf32>) -> tensor<1x3x8x8xf32>
  return
}

// -----

//===----------------------------------------------------------------------===//
// kgraph.reduce
//===----------------------------------------------------------------------===//

func.func @reduce_dynamic(%x: tensor<4x?xf32>) {
  // expected-error@+1 {{'kgraph.reduce' op input must be a statically shaped tensor, got 'tensor<4x?xf32>'}}
  %0 = kgraph.reduce sum %x axes = [1] : tensor<4x?xf32>
  return
}

// -----

func.func @reduce_axis_range(%x: tensor<4x8xf32>) {
  // expected-error@+1 {{'kgraph.reduce' op axis 2 is out of range for rank 2}}
  %0 = kgraph.reduce sum %x axes = [0, 2] : tensor<4x8xf32>
  return
}

// -----

func.func @reduce_axis_negative(%x: tensor<4x8xf32>) {
  // expected-error@+1 {{'kgraph.reduce' op axis -1 is out of range for rank 2}}
  %0 = kgraph.reduce max %x axes = [-1] : tensor<4x8xf32>
  return
}

// -----

func.func @reduce_axis_repeated(%x: tensor<4x8x2xf32>) {
  // expected-error@+1 {{'kgraph.reduce' op axis 1 is repeated}}
  %0 = kgraph.reduce sum %x axes = [1, 2, 1] : tensor<4x8x2xf32>
  return
}

// -----

func.func @reduce_mean_integer(%x: tensor<4x8xi32>) {
  // expected-error@+1 {{'kgraph.reduce' op mean reduction requires a float element type, got 'i32'}}
  %0 = kgraph.reduce mean %x axes = [1] : tensor<4x8xi32>
  return
}

// -----

func.func @reduce_result_type(%x: tensor<4x8xf32>) {
  // The interface verifier follows the mismatch with a generic message.
  // expected-error@+2 {{'kgraph.reduce' op failed to infer returned types}}
  // expected-error@+1 {{'kgraph.reduce' op inferred type(s) 'tensor<4xf32>' are incompatible with return type(s) of operation 'tensor<4x1xf32>'}}
  %0 = "kgraph.reduce"(%x) <{kind = #kgraph<reduce_kind sum>, axes = array<i64: 1>}> : (tensor<4x8xf32>) -> tensor<4x1xf32>
  return
}
