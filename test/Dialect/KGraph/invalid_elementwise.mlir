// RUN: kgraph-opt %s --split-input-file --verify-diagnostics

// One case per diagnostic of the elementwise ops. In the custom form the
// result type inference runs while parsing and reports the problem; in the
// generic form the same checks run as the first verifier.

//===----------------------------------------------------------------------===//
// Binary ops
//===----------------------------------------------------------------------===//

func.func @broadcast_mismatch(%a: tensor<4x3xf32>, %b: tensor<4xf32>) {
  // expected-error @+1 {{'kgraph.add' op operands are not broadcast compatible: dimension 1 of lhs 'tensor<4x3xf32>' is 3 but dimension 0 of rhs 'tensor<4xf32>' is 4}}
  %0 = kgraph.add %a, %b : tensor<4x3xf32>, tensor<4xf32>
  return
}

// -----

// Mismatch in a leading dimension, rhs of higher rank.
func.func @broadcast_mismatch_leading(%a: tensor<2x1xi32>, %b: tensor<5x3x8xi32>) {
  // expected-error @+1 {{'kgraph.mul' op operands are not broadcast compatible: dimension 0 of lhs 'tensor<2x1xi32>' is 2 but dimension 1 of rhs 'tensor<5x3x8xi32>' is 3}}
  %0 = kgraph.mul %a, %b : tensor<2x1xi32>, tensor<5x3x8xi32>
  return
}

// -----

// A zero-sized dimension only broadcasts with 1, not with another size.
func.func @broadcast_zero_size(%a: tensor<0xf32>, %b: tensor<4xf32>) {
  // expected-error @+1 {{'kgraph.sub' op operands are not broadcast compatible: dimension 0 of lhs 'tensor<0xf32>' is 0 but dimension 0 of rhs 'tensor<4xf32>' is 4}}
  %0 = kgraph.sub %a, %b : tensor<0xf32>, tensor<4xf32>
  return
}

// -----

func.func @element_type_mismatch(%a: tensor<8xf32>, %b: tensor<8xf16>) {
  // expected-error @+1 {{'kgraph.div' op lhs and rhs must have the same element type, but lhs has 'f32' and rhs has 'f16'}}
  %0 = kgraph.div %a, %b : tensor<8xf32>, tensor<8xf16>
  return
}

// -----

func.func @unsupported_element_type(%a: tensor<8xi64>) {
  // expected-error @+1 {{'kgraph.max' op lhs element type 'i64' is not supported; expected f32, f16, bf16, i8 or i32}}
  %0 = kgraph.max %a, %a : tensor<8xi64>, tensor<8xi64>
  return
}

// -----

func.func @unsupported_rhs_element_type(%a: tensor<8xf32>, %b: tensor<8xf64>) {
  // expected-error @+1 {{'kgraph.min' op rhs element type 'f64' is not supported; expected f32, f16, bf16, i8 or i32}}
  %0 = kgraph.min %a, %b : tensor<8xf32>, tensor<8xf64>
  return
}

// -----

func.func @pow_integer(%a: tensor<8xi32>) {
  // expected-error @+1 {{'kgraph.pow' op lhs element type 'i32' is not supported; expected f32, f16 or bf16}}
  %0 = kgraph.pow %a, %a : tensor<8xi32>, tensor<8xi32>
  return
}

// -----

func.func @dynamic_shape(%a: tensor<?xf32>, %b: tensor<8xf32>) {
  // expected-error @+1 {{'kgraph.add' op lhs must be a statically shaped tensor, but got 'tensor<?xf32>'}}
  %0 = kgraph.add %a, %b : tensor<?xf32>, tensor<8xf32>
  return
}

// -----

func.func @dynamic_shape_rhs(%a: tensor<4x8xf32>, %b: tensor<4x?xf32>) {
  // expected-error @+1 {{'kgraph.sub' op rhs must be a statically shaped tensor, but got 'tensor<4x?xf32>'}}
  %0 = kgraph.sub %a, %b : tensor<4x8xf32>, tensor<4x?xf32>
  return
}

// -----

// Generic form: the written result type must be the inferred one.
func.func @generic_wrong_result_shape(%a: tensor<4x1xf32>, %b: tensor<8xf32>) {
  // expected-error @+1 {{'kgraph.add' op result #0 has type 'tensor<4x9xf32>' but the operands imply 'tensor<4x8xf32>'}}
  %0 = "kgraph.add"(%a, %b) : (tensor<4x1xf32>, tensor<8xf32>) -> tensor<4x9xf32>
  return
}

// -----

// A wrong rank is a wrong result type as well.
func.func @generic_wrong_result_rank(%a: tensor<4x8xf32>, %b: tensor<8xf32>) {
  // expected-error @+1 {{'kgraph.mul' op result #0 has type 'tensor<8xf32>' but the operands imply 'tensor<4x8xf32>'}}
  %0 = "kgraph.mul"(%a, %b) : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<8xf32>
  return
}

// -----

func.func @generic_wrong_result_element(%a: tensor<8xf32>, %b: tensor<8xf32>) {
  // expected-error @+1 {{'kgraph.pow' op result #0 has type 'tensor<8xf16>' but the operands imply 'tensor<8xf32>'}}
  %0 = "kgraph.pow"(%a, %b) : (tensor<8xf32>, tensor<8xf32>) -> tensor<8xf16>
  return
}

// -----

// Generic form: the broadcast check names the dimensions too.
func.func @generic_broadcast_mismatch(%a: tensor<4x3xf32>, %b: tensor<4xf32>) {
  // expected-error @+1 {{'kgraph.max' op operands are not broadcast compatible: dimension 1 of lhs 'tensor<4x3xf32>' is 3 but dimension 0 of rhs 'tensor<4xf32>' is 4}}
  %0 = "kgraph.max"(%a, %b) : (tensor<4x3xf32>, tensor<4xf32>) -> tensor<4x3xf32>
  return
}

// -----

func.func @generic_element_type_mismatch(%a: tensor<8xi8>, %b: tensor<8xi32>) {
  // expected-error @+1 {{'kgraph.add' op lhs and rhs must have the same element type, but lhs has 'i8' and rhs has 'i32'}}
  %0 = "kgraph.add"(%a, %b) : (tensor<8xi8>, tensor<8xi32>) -> tensor<8xi8>
  return
}

// -----

// Generic form: operand type constraints are checked before inference.
func.func @generic_dynamic_shape(%a: tensor<?xf32>) {
  // expected-error @+1 {{'kgraph.add' op operand #0 must be statically shaped tensor of 32-bit float or 16-bit float or bfloat16 type or 8-bit signless integer or 32-bit signless integer values, but got 'tensor<?xf32>'}}
  %0 = "kgraph.add"(%a, %a) : (tensor<?xf32>, tensor<?xf32>) -> tensor<?xf32>
  return
}

// -----

func.func @generic_unranked(%a: tensor<*xf32>) {
  // expected-error @+1 {{'kgraph.sub' op operand #0 must be statically shaped tensor of 32-bit float or 16-bit float or bfloat16 type or 8-bit signless integer or 32-bit signless integer values, but got 'tensor<*xf32>'}}
  %0 = "kgraph.sub"(%a, %a) : (tensor<*xf32>, tensor<*xf32>) -> tensor<*xf32>
  return
}

// -----

//===----------------------------------------------------------------------===//
// Unary ops
//===----------------------------------------------------------------------===//

func.func @float_only_on_integer(%a: tensor<8xi32>) {
  // expected-error @+1 {{'kgraph.exp' op input element type 'i32' is not supported; expected f32, f16 or bf16}}
  %0 = kgraph.exp %a : tensor<8xi32>
  return
}

// -----

func.func @gelu_on_integer(%a: tensor<4x4xi8>) {
  // expected-error @+1 {{'kgraph.gelu' op input element type 'i8' is not supported; expected f32, f16 or bf16}}
  %0 = kgraph.gelu %a {approximate} : tensor<4x4xi8>
  return
}

// -----

func.func @numeric_on_f64(%a: tensor<8xf64>) {
  // expected-error @+1 {{'kgraph.relu' op input element type 'f64' is not supported; expected f32, f16, bf16, i8 or i32}}
  %0 = kgraph.relu %a : tensor<8xf64>
  return
}

// -----

func.func @numeric_on_i1(%a: tensor<8xi1>) {
  // expected-error @+1 {{'kgraph.neg' op input element type 'i1' is not supported; expected f32, f16, bf16, i8 or i32}}
  %0 = kgraph.neg %a : tensor<8xi1>
  return
}

// -----

func.func @unary_dynamic_shape(%a: tensor<?x8xf32>) {
  // expected-error @+1 {{'kgraph.tanh' op input must be a statically shaped tensor, but got 'tensor<?x8xf32>'}}
  %0 = kgraph.tanh %a : tensor<?x8xf32>
  return
}

// -----

func.func @generic_unary_wrong_shape(%a: tensor<8xf32>) {
  // expected-error @+1 {{'kgraph.sqrt' op result #0 has type 'tensor<4xf32>' but the operands imply 'tensor<8xf32>'}}
  %0 = "kgraph.sqrt"(%a) : (tensor<8xf32>) -> tensor<4xf32>
  return
}

// -----

func.func @generic_unary_wrong_element(%a: tensor<8xf32>) {
  // expected-error @+1 {{'kgraph.abs' op result #0 has type 'tensor<8xf16>' but the operands imply 'tensor<8xf32>'}}
  %0 = "kgraph.abs"(%a) : (tensor<8xf32>) -> tensor<8xf16>
  return
}

// -----

func.func @generic_float_only_on_integer(%a: tensor<8xi32>) {
  // expected-error @+1 {{'kgraph.log' op operand #0 must be statically shaped tensor of 32-bit float or 16-bit float or bfloat16 type values, but got 'tensor<8xi32>'}}
  %0 = "kgraph.log"(%a) : (tensor<8xi32>) -> tensor<8xi32>
  return
}

// -----

func.func @gelu_approximate_not_unit(%a: tensor<8xf32>) {
  // expected-error @+1 {{'kgraph.gelu' op attribute 'approximate' failed to satisfy constraint: unit attribute}}
  %0 = kgraph.gelu %a {approximate = 1 : i32} : tensor<8xf32>
  return
}

// -----

//===----------------------------------------------------------------------===//
// Clamp
//===----------------------------------------------------------------------===//

func.func @clamp_min_above_max(%a: tensor<8xf32>) {
  // expected-error @+1 {{'kgraph.clamp' op requires min <= max, but got min = 6.000000e+00 and max = 0.000000e+00}}
  %0 = kgraph.clamp %a {max = 0.0 : f64, min = 6.0 : f64} : tensor<8xf32>
  return
}

// -----

func.func @clamp_nan_bound(%a: tensor<8xf32>) {
  // expected-error @+1 {{'kgraph.clamp' op requires non-NaN bounds, but got min = nan and max = 1.000000e+00}}
  %0 = kgraph.clamp %a {max = 1.0 : f64, min = 0x7FF8000000000000 : f64} : tensor<8xf32>
  return
}

// -----

func.func @clamp_missing_min(%a: tensor<8xf32>) {
  // expected-error @+1 {{'kgraph.clamp' op requires attribute 'min'}}
  %0 = kgraph.clamp %a {max = 1.0 : f64} : tensor<8xf32>
  return
}

// -----

func.func @clamp_f32_bound(%a: tensor<8xf32>) {
  // expected-error @+1 {{'kgraph.clamp' op attribute 'max' failed to satisfy constraint: 64-bit float attribute}}
  %0 = kgraph.clamp %a {max = 1.0 : f32, min = 0.0 : f64} : tensor<8xf32>
  return
}

// -----

func.func @clamp_unsupported_type(%a: tensor<8xf64>) {
  // expected-error @+1 {{'kgraph.clamp' op input element type 'f64' is not supported; expected f32, f16, bf16, i8 or i32}}
  %0 = kgraph.clamp %a {max = 1.0 : f64, min = 0.0 : f64} : tensor<8xf64>
  return
}

// -----

//===----------------------------------------------------------------------===//
// Cast
//===----------------------------------------------------------------------===//

func.func @cast_dim_mismatch(%a: tensor<2x8xf32>) {
  // expected-error @+1 {{'kgraph.cast' op requires all operands and results to have the same shape, but dimension 1 of operand #0 'tensor<2x8xf32>' is 8 while dimension 1 of result #0 'tensor<2x4xf16>' is 4}}
  %0 = kgraph.cast %a : tensor<2x8xf32> to tensor<2x4xf16>
  return
}

// -----

func.func @cast_rank_mismatch(%a: tensor<8xf32>) {
  // expected-error @+1 {{'kgraph.cast' op requires all operands and results to have the same shape, but operand #0 'tensor<8xf32>' has rank 1 while result #0 'tensor<2x4xf16>' has rank 2}}
  %0 = kgraph.cast %a : tensor<8xf32> to tensor<2x4xf16>
  return
}

// -----

func.func @cast_unsupported_type(%a: tensor<8xf32>) {
  // expected-error @+1 {{'kgraph.cast' op result #0 must be statically shaped tensor of 32-bit float or 16-bit float or bfloat16 type or 8-bit signless integer or 32-bit signless integer values, but got 'tensor<8xi64>'}}
  %0 = kgraph.cast %a : tensor<8xf32> to tensor<8xi64>
  return
}

// -----

func.func @cast_dynamic_shape(%a: tensor<?xf32>) {
  // expected-error @+1 {{'kgraph.cast' op operand #0 must be statically shaped tensor of 32-bit float or 16-bit float or bfloat16 type or 8-bit signless integer or 32-bit signless integer values, but got 'tensor<?xf32>'}}
  %0 = kgraph.cast %a : tensor<?xf32> to tensor<?xf16>
  return
}

// -----

//===----------------------------------------------------------------------===//
// Compare
//===----------------------------------------------------------------------===//

func.func @compare_element_mismatch(%a: tensor<8xf32>, %b: tensor<8xi32>) {
  // expected-error @+1 {{'kgraph.compare' op lhs and rhs must have the same element type, but lhs has 'f32' and rhs has 'i32'}}
  %0 = kgraph.compare eq, %a, %b : tensor<8xf32>, tensor<8xi32>
  return
}

// -----

func.func @compare_broadcast_mismatch(%a: tensor<4x8xf32>, %b: tensor<4xf32>) {
  // expected-error @+1 {{'kgraph.compare' op operands are not broadcast compatible: dimension 1 of lhs 'tensor<4x8xf32>' is 8 but dimension 0 of rhs 'tensor<4xf32>' is 4}}
  %0 = kgraph.compare lt, %a, %b : tensor<4x8xf32>, tensor<4xf32>
  return
}

// -----

// Comparing booleans is not supported; combine masks with select instead.
func.func @compare_bool(%a: tensor<8xi1>) {
  // expected-error @+1 {{'kgraph.compare' op lhs element type 'i1' is not supported; expected f32, f16, bf16, i8 or i32}}
  %0 = kgraph.compare ne, %a, %a : tensor<8xi1>, tensor<8xi1>
  return
}

// -----

func.func @generic_compare_not_bool(%a: tensor<8xf32>) {
  // expected-error @+1 {{'kgraph.compare' op result #0 must be statically shaped tensor of 1-bit signless integer values, but got 'tensor<8xf32>'}}
  %0 = "kgraph.compare"(%a, %a) <{direction = #kgraph<compare_direction lt>}> : (tensor<8xf32>, tensor<8xf32>) -> tensor<8xf32>
  return
}

// -----

func.func @generic_compare_wrong_shape(%a: tensor<4x1xf32>, %b: tensor<8xf32>) {
  // expected-error @+1 {{'kgraph.compare' op result #0 has type 'tensor<4x1xi1>' but the operands imply 'tensor<4x8xi1>'}}
  %0 = "kgraph.compare"(%a, %b) <{direction = #kgraph<compare_direction ge>}> : (tensor<4x1xf32>, tensor<8xf32>) -> tensor<4x1xi1>
  return
}

// -----

func.func @generic_compare_no_direction(%a: tensor<8xf32>) {
  // expected-error @+1 {{'kgraph.compare' op requires attribute 'direction'}}
  %0 = "kgraph.compare"(%a, %a) : (tensor<8xf32>, tensor<8xf32>) -> tensor<8xi1>
  return
}

// -----

//===----------------------------------------------------------------------===//
// Select
//===----------------------------------------------------------------------===//

func.func @select_condition_not_bool(%c: tensor<8xf32>, %a: tensor<8xf32>) {
  // expected-error @+1 {{'kgraph.select' op condition element type 'f32' is not supported; expected i1}}
  %0 = kgraph.select %c, %a, %a : tensor<8xf32>, tensor<8xf32>, tensor<8xf32>
  return
}

// -----

func.func @select_value_mismatch(%c: tensor<8xi1>, %a: tensor<8xf32>, %b: tensor<8xbf16>) {
  // expected-error @+1 {{'kgraph.select' op true_value and false_value must have the same element type, but true_value has 'f32' and false_value has 'bf16'}}
  %0 = kgraph.select %c, %a, %b : tensor<8xi1>, tensor<8xf32>, tensor<8xbf16>
  return
}

// -----

func.func @select_bool_values(%c: tensor<8xi1>) {
  // expected-error @+1 {{'kgraph.select' op true_value element type 'i1' is not supported; expected f32, f16, bf16, i8 or i32}}
  %0 = kgraph.select %c, %c, %c : tensor<8xi1>, tensor<8xi1>, tensor<8xi1>
  return
}

// -----

func.func @select_condition_broadcast(%c: tensor<2x1xi1>, %a: tensor<3x1xf32>, %b: tensor<1x4xf32>) {
  // expected-error @+1 {{'kgraph.select' op operands are not broadcast compatible: dimension 0 of condition 'tensor<2x1xi1>' is 2 but dimension 0 of true_value 'tensor<3x1xf32>' is 3}}
  %0 = kgraph.select %c, %a, %b : tensor<2x1xi1>, tensor<3x1xf32>, tensor<1x4xf32>
  return
}

// -----

func.func @select_values_broadcast(%c: tensor<8xi1>, %a: tensor<8xf32>, %b: tensor<2x4xf32>) {
  // expected-error @+1 {{'kgraph.select' op operands are not broadcast compatible: dimension 0 of condition 'tensor<8xi1>' is 8 but dimension 1 of false_value 'tensor<2x4xf32>' is 4}}
  %0 = kgraph.select %c, %a, %b : tensor<8xi1>, tensor<8xf32>, tensor<2x4xf32>
  return
}

// -----

func.func @select_dynamic_condition(%c: tensor<?xi1>, %a: tensor<8xf32>) {
  // expected-error @+1 {{'kgraph.select' op condition must be a statically shaped tensor, but got 'tensor<?xi1>'}}
  %0 = kgraph.select %c, %a, %a : tensor<?xi1>, tensor<8xf32>, tensor<8xf32>
  return
}

// -----

func.func @generic_select_wrong_result(%c: tensor<4x8xi1>, %a: tensor<8xi8>) {
  // expected-error @+1 {{'kgraph.select' op result #0 has type 'tensor<8xi8>' but the operands imply 'tensor<4x8xi8>'}}
  %0 = "kgraph.select"(%c, %a, %a) : (tensor<4x8xi1>, tensor<8xi8>, tensor<8xi8>) -> tensor<8xi8>
  return
}
