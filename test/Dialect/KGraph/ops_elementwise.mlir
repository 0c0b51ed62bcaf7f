// RUN: kgraph-opt %s | kgraph-opt | FileCheck %s
// RUN: kgraph-opt %s --mlir-print-op-generic | kgraph-opt | FileCheck %s
// RUN: kgraph-opt %s --mlir-print-op-generic | FileCheck %s --check-prefix=GENERIC

// Round trip of every elementwise op in its custom form; the second RUN line
// goes through the generic form.

// CHECK-LABEL: func @binary_broadcast
// CHECK-SAME: (%[[A:.*]]: tensor<4x1xf32>, %[[B:.*]]: tensor<8xf32>)
func.func @binary_broadcast(%a: tensor<4x1xf32>, %b: tensor<8xf32>)
    -> (tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>,
        tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>) {
  // CHECK: %{{.*}} = kgraph.add %[[A]], %[[B]] : tensor<4x1xf32>, tensor<8xf32>
  // GENERIC: "kgraph.add"(%{{.*}}, %{{.*}}) : (tensor<4x1xf32>, tensor<8xf32>) -> tensor<4x8xf32>
  %0 = kgraph.add %a, %b : tensor<4x1xf32>, tensor<8xf32>
  // CHECK: %{{.*}} = kgraph.sub %[[A]], %[[B]] : tensor<4x1xf32>, tensor<8xf32>
  // GENERIC: "kgraph.sub"(%{{.*}}, %{{.*}}) : (tensor<4x1xf32>, tensor<8xf32>) -> tensor<4x8xf32>
  %1 = kgraph.sub %a, %b : tensor<4x1xf32>, tensor<8xf32>
  // CHECK: %{{.*}} = kgraph.mul %[[A]], %[[B]] : tensor<4x1xf32>, tensor<8xf32>
  %2 = kgraph.mul %a, %b : tensor<4x1xf32>, tensor<8xf32>
  // CHECK: %{{.*}} = kgraph.div %[[A]], %[[B]] : tensor<4x1xf32>, tensor<8xf32>
  %3 = kgraph.div %a, %b : tensor<4x1xf32>, tensor<8xf32>
  // CHECK: %{{.*}} = kgraph.max %[[A]], %[[B]] : tensor<4x1xf32>, tensor<8xf32>
  %4 = kgraph.max %a, %b : tensor<4x1xf32>, tensor<8xf32>
  // CHECK: %{{.*}} = kgraph.min %[[A]], %[[B]] : tensor<4x1xf32>, tensor<8xf32>
  %5 = kgraph.min %a, %b : tensor<4x1xf32>, tensor<8xf32>
  // CHECK: %{{.*}} = kgraph.pow %[[A]], %[[B]] : tensor<4x1xf32>, tensor<8xf32>
  // GENERIC: "kgraph.pow"(%{{.*}}, %{{.*}}) : (tensor<4x1xf32>, tensor<8xf32>) -> tensor<4x8xf32>
  %6 = kgraph.pow %a, %b : tensor<4x1xf32>, tensor<8xf32>
  return %0, %1, %2, %3, %4, %5, %6 : tensor<4x8xf32>, tensor<4x8xf32>,
      tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>,
      tensor<4x8xf32>
}

// Broadcasting against a rank-0 tensor, two-sided stretching, and every
// element type.
// CHECK-LABEL: func @binary_types
func.func @binary_types(%s: tensor<i32>, %i: tensor<2x3xi32>,
                        %h: tensor<1x3xf16>, %h2: tensor<5x1xf16>,
                        %bf: tensor<4x8xbf16>, %q: tensor<8xi8>)
    -> (tensor<2x3xi32>, tensor<5x3xf16>, tensor<4x8xbf16>, tensor<8xi8>,
        tensor<5x3xf16>) {
  // CHECK: kgraph.mul %{{.*}}, %{{.*}} : tensor<2x3xi32>, tensor<i32>
  // GENERIC: "kgraph.mul"(%{{.*}}, %{{.*}}) : (tensor<2x3xi32>, tensor<i32>) -> tensor<2x3xi32>
  %0 = kgraph.mul %i, %s : tensor<2x3xi32>, tensor<i32>
  // CHECK: kgraph.sub %{{.*}}, %{{.*}} : tensor<1x3xf16>, tensor<5x1xf16>
  // GENERIC: "kgraph.sub"(%{{.*}}, %{{.*}}) : (tensor<1x3xf16>, tensor<5x1xf16>) -> tensor<5x3xf16>
  %1 = kgraph.sub %h, %h2 : tensor<1x3xf16>, tensor<5x1xf16>
  // CHECK: kgraph.max %{{.*}}, %{{.*}} : tensor<4x8xbf16>, tensor<4x8xbf16>
  %2 = kgraph.max %bf, %bf : tensor<4x8xbf16>, tensor<4x8xbf16>
  // CHECK: kgraph.div %{{.*}}, %{{.*}} : tensor<8xi8>, tensor<8xi8>
  // GENERIC: "kgraph.div"(%{{.*}}, %{{.*}}) : (tensor<8xi8>, tensor<8xi8>) -> tensor<8xi8>
  %3 = kgraph.div %q, %q : tensor<8xi8>, tensor<8xi8>
  // CHECK: kgraph.pow %{{.*}}, %{{.*}} : tensor<5x1xf16>, tensor<1x3xf16>
  %4 = kgraph.pow %h2, %h : tensor<5x1xf16>, tensor<1x3xf16>
  return %0, %1, %2, %3, %4
      : tensor<2x3xi32>, tensor<5x3xf16>, tensor<4x8xbf16>, tensor<8xi8>,
        tensor<5x3xf16>
}

// Zero-sized dimensions broadcast like numpy: 1 stretches to 0.
// CHECK-LABEL: func @binary_zero_size
func.func @binary_zero_size(%a: tensor<0x4xf32>, %b: tensor<1x4xf32>)
    -> tensor<0x4xf32> {
  // CHECK: kgraph.add %{{.*}}, %{{.*}} : tensor<0x4xf32>, tensor<1x4xf32>
  // GENERIC: -> tensor<0x4xf32>
  %0 = kgraph.add %a, %b : tensor<0x4xf32>, tensor<1x4xf32>
  return %0 : tensor<0x4xf32>
}

// CHECK-LABEL: func @unary_numeric
// CHECK-SAME: (%[[F:.*]]: tensor<8xf32>, %[[I8:.*]]: tensor<2x16xi8>, %[[I32:.*]]: tensor<8xi32>, %[[H:.*]]: tensor<4x8xf16>, %[[BF:.*]]: tensor<8xbf16>)
func.func @unary_numeric(%f: tensor<8xf32>, %q: tensor<2x16xi8>,
                         %i: tensor<8xi32>, %h: tensor<4x8xf16>,
                         %bf: tensor<8xbf16>) {
  // CHECK: kgraph.neg %[[F]] : tensor<8xf32>
  // GENERIC: "kgraph.neg"(%{{.*}}) : (tensor<8xf32>) -> tensor<8xf32>
  %0 = kgraph.neg %f : tensor<8xf32>
  // CHECK: kgraph.neg %[[I32]] : tensor<8xi32>
  %1 = kgraph.neg %i : tensor<8xi32>
  // CHECK: kgraph.abs %[[H]] : tensor<4x8xf16>
  %2 = kgraph.abs %h : tensor<4x8xf16>
  // CHECK: kgraph.abs %[[I8]] : tensor<2x16xi8>
  %3 = kgraph.abs %q : tensor<2x16xi8>
  // CHECK: kgraph.relu %[[I8]] : tensor<2x16xi8>
  // GENERIC: "kgraph.relu"(%{{.*}}) : (tensor<2x16xi8>) -> tensor<2x16xi8>
  %4 = kgraph.relu %q : tensor<2x16xi8>
  // CHECK: kgraph.relu %[[BF]] : tensor<8xbf16>
  %5 = kgraph.relu %bf : tensor<8xbf16>
  return
}

// CHECK-LABEL: func @unary_float
// CHECK-SAME: (%[[X:.*]]: tensor<8xf32>, %[[H:.*]]: tensor<8xf16>, %[[BF:.*]]: tensor<8xbf16>)
func.func @unary_float(%x: tensor<8xf32>, %h: tensor<8xf16>,
                       %bf: tensor<8xbf16>) {
  // CHECK: kgraph.exp %[[X]] : tensor<8xf32>
  // GENERIC: "kgraph.exp"(%{{.*}}) : (tensor<8xf32>) -> tensor<8xf32>
  %0 = kgraph.exp %x : tensor<8xf32>
  // CHECK: kgraph.log %[[H]] : tensor<8xf16>
  %1 = kgraph.log %h : tensor<8xf16>
  // CHECK: kgraph.sqrt %[[BF]] : tensor<8xbf16>
  %2 = kgraph.sqrt %bf : tensor<8xbf16>
  // CHECK: kgraph.rsqrt %[[X]] : tensor<8xf32>
  %3 = kgraph.rsqrt %x : tensor<8xf32>
  // CHECK: kgraph.tanh %[[H]] : tensor<8xf16>
  %4 = kgraph.tanh %h : tensor<8xf16>
  // CHECK: kgraph.sigmoid %[[BF]] : tensor<8xbf16>
  %5 = kgraph.sigmoid %bf : tensor<8xbf16>
  // CHECK: kgraph.gelu %[[X]] : tensor<8xf32>
  // GENERIC: "kgraph.gelu"(%{{.*}}) : (tensor<8xf32>) -> tensor<8xf32>
  %6 = kgraph.gelu %x : tensor<8xf32>
  // CHECK: kgraph.gelu %[[X]] {approximate} : tensor<8xf32>
  // GENERIC: "kgraph.gelu"(%{{.*}}) <{approximate}> : (tensor<8xf32>) -> tensor<8xf32>
  %7 = kgraph.gelu %x {approximate} : tensor<8xf32>
  return
}

// CHECK-LABEL: func @clamp
func.func @clamp(%x: tensor<8xf32>, %q: tensor<4x4xi8>)
    -> (tensor<8xf32>, tensor<4x4xi8>) {
  // CHECK: kgraph.clamp %{{.*}} {max = 6.000000e+00 : f64, min = 0.000000e+00 : f64} : tensor<8xf32>
  // GENERIC: "kgraph.clamp"(%{{.*}}) <{max = 6.000000e+00 : f64, min = 0.000000e+00 : f64}> : (tensor<8xf32>) -> tensor<8xf32>
  %0 = kgraph.clamp %x {max = 6.000000e+00 : f64, min = 0.000000e+00 : f64} : tensor<8xf32>
  // Equal bounds are allowed.
  // CHECK: kgraph.clamp %{{.*}} {max = -1.000000e+00 : f64, min = -1.000000e+00 : f64} : tensor<4x4xi8>
  %1 = kgraph.clamp %q {min = -1.0 : f64, max = -1.0 : f64} : tensor<4x4xi8>
  return %0, %1 : tensor<8xf32>, tensor<4x4xi8>
}

// CHECK-LABEL: func @cast
func.func @cast(%x: tensor<8xf32>, %h: tensor<2x4xf16>, %q: tensor<2x4xi8>,
                %i: tensor<3xi32>, %bf: tensor<3xbf16>) {
  // CHECK: kgraph.cast %{{.*}} : tensor<8xf32> to tensor<8xf16>
  // GENERIC: "kgraph.cast"(%{{.*}}) : (tensor<8xf32>) -> tensor<8xf16>
  %0 = kgraph.cast %x : tensor<8xf32> to tensor<8xf16>
  // CHECK: kgraph.cast %{{.*}} : tensor<2x4xf16> to tensor<2x4xi8>
  %1 = kgraph.cast %h : tensor<2x4xf16> to tensor<2x4xi8>
  // CHECK: kgraph.cast %{{.*}} : tensor<2x4xi8> to tensor<2x4xbf16>
  %2 = kgraph.cast %q : tensor<2x4xi8> to tensor<2x4xbf16>
  // CHECK: kgraph.cast %{{.*}} : tensor<3xi32> to tensor<3xi8>
  %3 = kgraph.cast %i : tensor<3xi32> to tensor<3xi8>
  // CHECK: kgraph.cast %{{.*}} : tensor<3xbf16> to tensor<3xi32>
  %4 = kgraph.cast %bf : tensor<3xbf16> to tensor<3xi32>
  // A same-type cast is valid (it folds away under --canonicalize).
  // CHECK: kgraph.cast %{{.*}} : tensor<8xf32> to tensor<8xf32>
  %5 = kgraph.cast %x : tensor<8xf32> to tensor<8xf32>
  return
}

// CHECK-LABEL: func @compare
// CHECK-SAME: (%[[A:.*]]: tensor<4x8xf32>, %[[B:.*]]: tensor<8xf32>, %[[I:.*]]: tensor<2x1xi8>, %[[J:.*]]: tensor<1x3xi8>)
func.func @compare(%a: tensor<4x8xf32>, %b: tensor<8xf32>,
                   %i: tensor<2x1xi8>, %j: tensor<1x3xi8>)
    -> (tensor<4x8xi1>, tensor<2x3xi1>) {
  // CHECK: kgraph.compare lt, %[[A]], %[[B]] : tensor<4x8xf32>, tensor<8xf32>
  // GENERIC: "kgraph.compare"(%{{.*}}, %{{.*}}) <{direction = #kgraph<compare_direction lt>}> : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xi1>
  %0 = kgraph.compare lt, %a, %b : tensor<4x8xf32>, tensor<8xf32>
  // CHECK: kgraph.compare eq, %[[A]], %[[A]]
  %1 = kgraph.compare eq, %a, %a : tensor<4x8xf32>, tensor<4x8xf32>
  // CHECK: kgraph.compare ne, %[[B]], %[[A]]
  %2 = kgraph.compare ne, %b, %a : tensor<8xf32>, tensor<4x8xf32>
  // CHECK: kgraph.compare le, %[[I]], %[[J]] : tensor<2x1xi8>, tensor<1x3xi8>
  // GENERIC: -> tensor<2x3xi1>
  %3 = kgraph.compare le, %i, %j : tensor<2x1xi8>, tensor<1x3xi8>
  // CHECK: kgraph.compare gt, %[[I]], %[[J]]
  %4 = kgraph.compare gt, %i, %j : tensor<2x1xi8>, tensor<1x3xi8>
  // CHECK: kgraph.compare ge, %[[I]], %[[J]]
  %5 = kgraph.compare ge, %i, %j : tensor<2x1xi8>, tensor<1x3xi8>
  return %0, %5 : tensor<4x8xi1>, tensor<2x3xi1>
}

// CHECK-LABEL: func @select
// CHECK-SAME: (%[[C:.*]]: tensor<4x8xi1>, %[[A:.*]]: tensor<4x8xf32>, %[[B:.*]]: tensor<8xf32>, %[[C1:.*]]: tensor<2x1x1xi1>, %[[I:.*]]: tensor<3x1xi32>, %[[J:.*]]: tensor<5xi32>)
func.func @select(%c: tensor<4x8xi1>, %a: tensor<4x8xf32>, %b: tensor<8xf32>,
                  %c1: tensor<2x1x1xi1>, %i: tensor<3x1xi32>,
                  %j: tensor<5xi32>) -> (tensor<4x8xf32>, tensor<2x3x5xi32>) {
  // CHECK: kgraph.select %[[C]], %[[A]], %[[B]] : tensor<4x8xi1>, tensor<4x8xf32>, tensor<8xf32>
  // GENERIC: "kgraph.select"(%{{.*}}, %{{.*}}, %{{.*}}) : (tensor<4x8xi1>, tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
  %0 = kgraph.select %c, %a, %b : tensor<4x8xi1>, tensor<4x8xf32>, tensor<8xf32>
  // All three operands broadcast together.
  // CHECK: kgraph.select %[[C1]], %[[I]], %[[J]] : tensor<2x1x1xi1>, tensor<3x1xi32>, tensor<5xi32>
  // GENERIC: -> tensor<2x3x5xi32>
  %1 = kgraph.select %c1, %i, %j : tensor<2x1x1xi1>, tensor<3x1xi32>, tensor<5xi32>
  return %0, %1 : tensor<4x8xf32>, tensor<2x3x5xi32>
}

// The ops compose: a relu6-style chain and a masked select.
// CHECK-LABEL: func @chain
func.func @chain(%x: tensor<4x8xf32>, %bias: tensor<8xf32>) -> tensor<4x8xf16> {
  // CHECK: %[[S:.*]] = kgraph.add
  // CHECK: %[[G:.*]] = kgraph.gelu %[[S]] {approximate} : tensor<4x8xf32>
  // CHECK: %[[M:.*]] = kgraph.compare gt, %[[G]], %{{.*}} : tensor<4x8xf32>, tensor<8xf32>
  // CHECK: %[[R:.*]] = kgraph.select %[[M]], %[[G]], %{{.*}} : tensor<4x8xi1>, tensor<4x8xf32>, tensor<8xf32>
  // CHECK: kgraph.cast %[[R]] : tensor<4x8xf32> to tensor<4x8xf16>
  %0 = kgraph.add %x, %bias : tensor<4x8xf32>, tensor<8xf32>
  %1 = kgraph.gelu %0 {approximate} : tensor<4x8xf32>
  %2 = kgraph.compare gt, %1, %bias : tensor<4x8xf32>, tensor<8xf32>
  %3 = kgraph.select %2, %1, %bias : tensor<4x8xi1>, tensor<4x8xf32>, tensor<8xf32>
  %4 = kgraph.cast %3 : tensor<4x8xf32> to tensor<4x8xf16>
  return %4 : tensor<4x8xf16>
}
