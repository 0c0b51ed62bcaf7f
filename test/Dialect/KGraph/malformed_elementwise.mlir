// RUN: not kgraph-opt %s --split-input-file 2>&1 | FileCheck %s

// Malformed elementwise-op text is rejected with a diagnostic at the offending
// token and a non-zero exit status, never a crash. (`not` fails the test if
// kgraph-opt crashes or exits with status 0.)

// An unknown compare direction lists the valid ones.
// CHECK: malformed_elementwise.mlir:[[# @LINE + 3]]:23: error: custom op 'kgraph.compare' expected ::kgraph::CompareDirection to be one of: eq, ne, lt, le, gt, ge
// CHECK: error: custom op 'kgraph.compare' failed to parse KGraph_CompareDirectionAttr parameter 'value'
func.func @bad_direction(%a: tensor<8xf32>) {
  %0 = kgraph.compare lz, %a, %a : tensor<8xf32>, tensor<8xf32>
  return
}

// -----

// The direction is not optional.
// CHECK: malformed_elementwise.mlir:[[# @LINE + 2]]:23: error: custom op 'kgraph.compare' expected valid keyword or string
func.func @missing_direction(%a: tensor<8xf32>) {
  %0 = kgraph.compare %a, %a : tensor<8xf32>, tensor<8xf32>
  return
}

// -----

// Binary ops spell both operand types.
// CHECK: malformed_elementwise.mlir:[[# @LINE + 2]]:41: error: expected ','
func.func @one_type(%a: tensor<8xf32>) {
  %0 = kgraph.add %a, %a : tensor<8xf32>
  return
}

// -----

// Unranked tensors cannot even be written in the custom form.
// CHECK: malformed_elementwise.mlir:[[# @LINE + 2]]:28: error: custom op 'kgraph.add' invalid kind of type specified: expected builtin.tensor, but found 'tensor<*xf32>'
func.func @unranked(%a: tensor<*xf32>) {
  %0 = kgraph.add %a, %a : tensor<*xf32>, tensor<*xf32>
  return
}

// -----

// CHECK: malformed_elementwise.mlir:[[# @LINE + 2]]:24: error: custom op 'kgraph.exp' invalid kind of type specified: expected builtin.tensor, but found 'memref<8xf32>'
func.func @memref(%a: memref<8xf32>) {
  %0 = kgraph.exp %a : memref<8xf32>
  return
}

// -----

// CHECK: malformed_elementwise.mlir:[[# @LINE + 2]]:38: error: custom op 'kgraph.cast' expected 'to'
func.func @cast_without_to(%a: tensor<8xf32>) {
  %0 = kgraph.cast %a : tensor<8xf32>, tensor<8xf16>
  return
}

// -----

// CHECK: malformed_elementwise.mlir:[[# @LINE + 2]]:58: error: expected ':'
func.func @clamp_without_type(%a: tensor<8xf32>) {
  %0 = kgraph.clamp %a {max = 1.0 : f64, min = 0.0 : f64}
  return
}

// -----

// CHECK: malformed_elementwise.mlir:[[# @LINE + 2]]:28: error: expected ','
func.func @select_two_operands(%c: tensor<8xi1>, %a: tensor<8xf32>) {
  %0 = kgraph.select %c, %a : tensor<8xi1>, tensor<8xf32>
  return
}

// -----

// Unary ops take no functional type.
// CHECK: malformed_elementwise.mlir:[[# @LINE + 2]]:38: error: expected operation name in quotes
func.func @unary_arrow(%a: tensor<8xf32>) {
  %0 = kgraph.relu %a : tensor<8xf32> -> tensor<8xf32>
  return
}

// -----

// CHECK: malformed_elementwise.mlir:[[# @LINE + 2]]:8: error: 'kgraph.add' op expected 2 operands, but found 1
func.func @generic_one_operand(%a: tensor<8xf32>) {
  %0 = "kgraph.add"(%a) : (tensor<8xf32>) -> tensor<8xf32>
  return
}

// -----

// The inferred i1 result of compare cannot be used as f32.
// CHECK: malformed_elementwise.mlir:[[# @LINE + 3]]:19: error: use of value '%0' expects different type than prior uses: 'tensor<8xf32>' vs 'tensor<8xi1>'
func.func @compare_result_misused(%a: tensor<8xf32>) {
  %0 = kgraph.compare lt, %a, %a : tensor<8xf32>, tensor<8xf32>
  %1 = kgraph.add %0, %a : tensor<8xf32>, tensor<8xf32>
  return
}
