// RUN: kgraph-opt %s -split-input-file -kgraph-test-access-map -verify-diagnostics | FileCheck %s

// kgraph::AccessMap (include/kgraph/Dialect/KGraph/IR/AccessMap.h) through
// test/lib's kgraph-test-access-map: the map from each function's result
// back through its transpose/slice/broadcast_to ops to the argument (checked
// there against the ops element by element), its properties as a remark, and
// its index arithmetic: @<f>_linear (the flat index, outer dim first, as the
// lane evaluator emits it), @<f>_indices (per operand dim, as the stencil
// emitter's buffer indices) and @<f>_groups (coordinate groups, inner dim
// first, as the GEMM epilogue emits them).

// Same shape: the flat index is the operand index.
func.func @identity(%x: tensor<4x8xf32>) -> tensor<4x8xf32> attributes {kgraph.test.width = array<i64: 8>} {
  // expected-remark@-1 {{out [4, 8] -> operand [4, 8]: dims (d0, d1), index 0 + 8*d0 + 1*d1; contiguous 32, uniform 1, flat order kept; vector 8 along d1}}
  return %x : tensor<4x8xf32>
}
// CHECK-LABEL: func.func @identity_linear(%arg0: index) -> index
// CHECK-NEXT:    return %arg0 : index

// A middle-dim broadcast (the lane evaluator's [5,1,129] -> [5,33,129]):
// no term for the broadcast dim; runs of 129 are contiguous.
func.func @broadcast_middle(%x: tensor<5x1x129xf32>) -> tensor<5x33x129xf32> attributes {kgraph.test.width = array<i64: 3, 4>} {
  // expected-remark@-1 {{out [5, 33, 129] -> operand [5, 1, 129]: dims (d0, 0, d2), index 0 + 129*d0 + 1*d2; contiguous 129, uniform 1; vector 3 along d2; vector 4 along none}}
  %0 = kgraph.broadcast_to %x : tensor<5x1x129xf32> to tensor<5x33x129xf32>
  return %0 : tensor<5x33x129xf32>
}
// CHECK-LABEL: func.func @broadcast_middle_linear(%arg0: index) -> index
// CHECK-NEXT:    %[[C4257:.*]] = arith.constant 4257 : index
// CHECK-NEXT:    %[[D0:.*]] = arith.divui %arg0, %[[C4257]] : index
// CHECK-NEXT:    %[[C129:.*]] = arith.constant 129 : index
// CHECK-NEXT:    %[[T0:.*]] = arith.muli %[[D0]], %[[C129]] : index
// CHECK-NEXT:    %[[C129B:.*]] = arith.constant 129 : index
// CHECK-NEXT:    %[[D2:.*]] = arith.remui %arg0, %[[C129B]] : index
// CHECK-NEXT:    %[[SUM:.*]] = arith.addi %[[T0]], %[[D2]] : index
// CHECK-NEXT:    return %[[SUM]] : index
// CHECK-LABEL: func.func @broadcast_middle_indices(%arg0: index, %arg1: index, %arg2: index)
// CHECK-NEXT:    %[[C0:.*]] = arith.constant 0 : index
// CHECK-NEXT:    return %arg0, %[[C0]], %arg2

// One element for every output element.
func.func @scalar(%x: tensor<1x1xf32>) -> tensor<4x4xf32> {
  // expected-remark@-1 {{out [4, 4] -> operand [1, 1]: dims (0, 0), index 0; contiguous 1, uniform 16, one element}}
  %0 = kgraph.broadcast_to %x : tensor<1x1xf32> to tensor<4x4xf32>
  return %0 : tensor<4x4xf32>
}
// CHECK-LABEL: func.func @scalar_linear(%arg0: index) -> index
// CHECK-NEXT:    %[[C0:.*]] = arith.constant 0 : index
// CHECK-NEXT:    return %[[C0]] : index

// A permutation: operand dim 2 follows output dim 0.
func.func @transpose(%x: tensor<2x3x4xf32>) -> tensor<4x2x3xf32> {
  // expected-remark@-1 {{out [4, 2, 3] -> operand [2, 3, 4]: dims (d1, d2, d0), index 0 + 1*d0 + 12*d1 + 4*d2; contiguous 1, uniform 1}}
  %0 = kgraph.transpose %x, permutation = [2, 0, 1] : tensor<2x3x4xf32>
  return %0 : tensor<4x2x3xf32>
}
// CHECK-LABEL: func.func @transpose_linear
// CHECK-LABEL: func.func @transpose_indices(%arg0: index, %arg1: index, %arg2: index)
// CHECK-NEXT:    return %arg1, %arg2, %arg0

// A strided slice: the offset is added last.
func.func @slice(%x: tensor<8x8xf32>) -> tensor<3x3xf32> {
  // expected-remark@-1 {{out [3, 3] -> operand [8, 8]: dims (1+2*d0, 2+2*d1), index 10 + 16*d0 + 2*d1; contiguous 1, uniform 1}}
  %0 = kgraph.slice %x offsets = [1, 2] sizes = [3, 3] strides = [2, 2] : tensor<8x8xf32>
  return %0 : tensor<3x3xf32>
}
// CHECK-LABEL: func.func @slice_linear(%arg0: index) -> index
// CHECK:         %[[SUM:.*]] = arith.addi
// CHECK-NEXT:    %[[C10:.*]] = arith.constant 10 : index
// CHECK-NEXT:    %[[IDX:.*]] = arith.addi %[[SUM]], %[[C10]] : index
// CHECK-NEXT:    return %[[IDX]] : index
// CHECK-LABEL: func.func @slice_indices(%arg0: index, %arg1: index)
// CHECK-NEXT:    %[[C2:.*]] = arith.constant 2 : index
// CHECK-NEXT:    %[[M0:.*]] = arith.muli %arg0, %[[C2]] : index
// CHECK-NEXT:    %[[C1:.*]] = arith.constant 1 : index
// CHECK-NEXT:    %[[I0:.*]] = arith.addi %[[M0]], %[[C1]] : index
// CHECK-NEXT:    %[[C2B:.*]] = arith.constant 2 : index
// CHECK-NEXT:    %[[M1:.*]] = arith.muli %arg1, %[[C2B]] : index
// CHECK-NEXT:    %[[C2C:.*]] = arith.constant 2 : index
// CHECK-NEXT:    %[[I1:.*]] = arith.addi %[[M1]], %[[C2C]] : index
// CHECK-NEXT:    return %[[I0]], %[[I1]]

// A transpose of a strided slice, composed; rows of 8 stay contiguous.
func.func @transpose_of_slice(%x: tensor<4x6x8xf32>) -> tensor<2x4x8xf32> attributes {kgraph.test.width = array<i64: 4>} {
  // expected-remark@-1 {{out [2, 4, 8] -> operand [4, 6, 8]: dims (d1, 1+2*d0, d2), index 8 + 16*d0 + 48*d1 + 1*d2; contiguous 8, uniform 1; vector 4 along d2}}
  %0 = kgraph.slice %x offsets = [0, 1, 0] sizes = [4, 2, 8] strides = [1, 2, 1] : tensor<4x6x8xf32>
  %1 = kgraph.transpose %0, permutation = [1, 0, 2] : tensor<4x2x8xf32>
  return %1 : tensor<2x4x8xf32>
}
// CHECK-LABEL: func.func @transpose_of_slice_indices(%arg0: index, %arg1: index, %arg2: index)
// CHECK-NEXT:    %[[C2:.*]] = arith.constant 2 : index
// CHECK-NEXT:    %[[M:.*]] = arith.muli %arg0, %[[C2]] : index
// CHECK-NEXT:    %[[C1:.*]] = arith.constant 1 : index
// CHECK-NEXT:    %[[I:.*]] = arith.addi %[[M]], %[[C1]] : index
// CHECK-NEXT:    return %arg1, %[[I]], %arg2

// A broadcast row read through a transpose: uniform along the inner dim.
func.func @transpose_of_broadcast(%x: tensor<5xf32>) -> tensor<5x3xf32> {
  // expected-remark@-1 {{out [5, 3] -> operand [5]: dims (d0), index 0 + 1*d0; contiguous 1, uniform 3}}
  %0 = kgraph.broadcast_to %x : tensor<5xf32> to tensor<3x5xf32>
  %1 = kgraph.transpose %0, permutation = [1, 0] : tensor<3x5xf32>
  return %1 : tensor<5x3xf32>
}
// CHECK-LABEL: func.func @transpose_of_broadcast_linear(%arg0: index) -> index
// CHECK-NEXT:    %[[C3:.*]] = arith.constant 3 : index
// CHECK-NEXT:    %[[D:.*]] = arith.divui %arg0, %[[C3]] : index
// CHECK-NEXT:    return %[[D]] : index

// An nhwc activation read at logical (N, C, H, W) coordinates.
func.func @nhwc(%x: tensor<2x5x6x3xf32>) -> tensor<2x5x6x3xf32> attributes {kgraph.test.activation = "nhwc"} {
  // expected-remark@-1 {{out [2, 3, 5, 6] -> operand [2, 5, 6, 3]: dims (d0, d2, d3, d1), index 0 + 90*d0 + 1*d1 + 18*d2 + 3*d3; contiguous 1, uniform 1}}
  return %x : tensor<2x5x6x3xf32>
}
// CHECK-LABEL: func.func @nhwc_indices(%arg0: index, %arg1: index, %arg2: index, %arg3: index)
// CHECK-NEXT:    return %arg0, %arg2, %arg3, %arg1

// A [C, 1, 1] bias of an nchw activation (the stencil emitter's buffer
// indices: size-1 dims read index 0).
func.func @nchw_bias(%x: tensor<3x1x1xf32>) -> tensor<2x3x5x6xf32> attributes {kgraph.test.activation = "nchw"} {
  // expected-remark@-1 {{out [2, 3, 5, 6] -> operand [3, 1, 1]: dims (d1, 0, 0), index 0 + 1*d1; contiguous 1, uniform 30}}
  %0 = kgraph.broadcast_to %x : tensor<3x1x1xf32> to tensor<2x3x5x6xf32>
  return %0 : tensor<2x3x5x6xf32>
}
// CHECK-LABEL: func.func @nchw_bias_indices(%arg0: index, %arg1: index, %arg2: index, %arg3: index)
// CHECK-NEXT:    %[[C0:.*]] = arith.constant 0 : index
// CHECK-NEXT:    %[[C0B:.*]] = arith.constant 0 : index
// CHECK-NEXT:    return %arg1, %[[C0]], %[[C0B]]

// The GEMM epilogue of an nhwc conv2d: the row group (n, oh, ow) per dim,
// inner dim first, broadcast along n; then the channel.
func.func @pixel_bias(%x: tensor<1x5x6x3xf32>) -> tensor<2x5x6x3xf32> attributes {kgraph.test.groups = [array<i64: 0, 3>, array<i64: 3, 1>]} {
  // expected-remark@-1 {{out [2, 5, 6, 3] -> operand [1, 5, 6, 3]: dims (0, d1, d2, d3), index 0 + 18*d1 + 3*d2 + 1*d3; contiguous 90, uniform 1}}
  %0 = kgraph.broadcast_to %x : tensor<1x5x6x3xf32> to tensor<2x5x6x3xf32>
  return %0 : tensor<2x5x6x3xf32>
}
// CHECK-LABEL: func.func @pixel_bias_groups(%arg0: index, %arg1: index) -> index
// CHECK-NEXT:    %[[C6:.*]] = arith.constant 6 : index
// CHECK-NEXT:    %[[OW:.*]] = arith.remui %arg0, %[[C6]] : index
// CHECK-NEXT:    %[[C3:.*]] = arith.constant 3 : index
// CHECK-NEXT:    %[[TW:.*]] = arith.muli %[[OW]], %[[C3]] : index
// CHECK-NEXT:    %[[C6B:.*]] = arith.constant 6 : index
// CHECK-NEXT:    %[[Q:.*]] = arith.divui %arg0, %[[C6B]] : index
// CHECK-NEXT:    %[[C5:.*]] = arith.constant 5 : index
// CHECK-NEXT:    %[[OH:.*]] = arith.remui %[[Q]], %[[C5]] : index
// CHECK-NEXT:    %[[C18:.*]] = arith.constant 18 : index
// CHECK-NEXT:    %[[TH:.*]] = arith.muli %[[OH]], %[[C18]] : index
// CHECK-NEXT:    %[[ROW:.*]] = arith.addi %[[TW]], %[[TH]] : index
// CHECK-NEXT:    %[[IDX:.*]] = arith.addi %[[ROW]], %arg1 : index
// CHECK-NEXT:    return %[[IDX]] : index

// An input matching the result: the row group is one strided run.
func.func @pixel_rows(%x: tensor<2x5x6x3xf32>) -> tensor<2x5x6x3xf32> attributes {kgraph.test.groups = [array<i64: 0, 3>, array<i64: 3, 1>]} {
  // expected-remark@-1 {{out [2, 5, 6, 3] -> operand [2, 5, 6, 3]: dims (d0, d1, d2, d3), index 0 + 90*d0 + 18*d1 + 3*d2 + 1*d3; contiguous 180, uniform 1, flat order kept}}
  return %x : tensor<2x5x6x3xf32>
}
// CHECK-LABEL: func.func @pixel_rows_groups(%arg0: index, %arg1: index) -> index
// CHECK-NEXT:    %[[C3:.*]] = arith.constant 3 : index
// CHECK-NEXT:    %[[ROW:.*]] = arith.muli %arg0, %[[C3]] : index
// CHECK-NEXT:    %[[IDX:.*]] = arith.addi %[[ROW]], %arg1 : index
// CHECK-NEXT:    return %[[IDX]] : index

// -----

// expected-error@+1 {{'func.func' op must return one value}}
func.func @two_results(%x: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
  return %x, %x : tensor<4xf32>, tensor<4xf32>
}

// -----

func.func @not_data_movement(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error@+1 {{'kgraph.neg' op is not a transpose, slice or broadcast_to}}
  %0 = kgraph.neg %x : tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// expected-error@+1 {{'func.func' op kgraph.test.activation must be nchw or nhwc}}
func.func @bad_layout(%x: tensor<1x2x3x4xf32>) -> tensor<1x2x3x4xf32> attributes {kgraph.test.activation = "hwcn"} {
  return %x : tensor<1x2x3x4xf32>
}

// -----

// expected-error@+1 {{'func.func' op returns no 4-D activation}}
func.func @not_4d(%x: tensor<2x3xf32>) -> tensor<2x3xf32> attributes {kgraph.test.activation = "nhwc"} {
  return %x : tensor<2x3xf32>
}
