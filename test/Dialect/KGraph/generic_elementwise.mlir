// RUN: kgraph-opt %s | FileCheck %s
// RUN: kgraph-opt %s --mlir-print-op-generic | FileCheck %s --check-prefix=GENERIC

// Every attribute-free elementwise op parses in the MLIR generic form with no
// attributes or properties at all: result types are spelled explicitly and
// must match the inferred ones. Tools that build IR generically (or print it
// with --mlir-print-op-generic) rely on this.

// CHECK-LABEL: func @generic_binary
func.func @generic_binary(%a: tensor<4x1xf32>, %b: tensor<8xf32>,
                          %i: tensor<3xi32>, %s: tensor<i32>) {
  // CHECK: kgraph.add %{{.*}}, %{{.*}} : tensor<4x1xf32>, tensor<8xf32>
  // GENERIC: "kgraph.add"(%{{.*}}, %{{.*}}) : (tensor<4x1xf32>, tensor<8xf32>) -> tensor<4x8xf32>
  %0 = "kgraph.add"(%a, %b) : (tensor<4x1xf32>, tensor<8xf32>) -> tensor<4x8xf32>
  // CHECK: kgraph.sub %{{.*}}, %{{.*}} : tensor<4x1xf32>, tensor<8xf32>
  // GENERIC: "kgraph.sub"(%{{.*}}, %{{.*}}) : (tensor<4x1xf32>, tensor<8xf32>) -> tensor<4x8xf32>
  %1 = "kgraph.sub"(%a, %b) : (tensor<4x1xf32>, tensor<8xf32>) -> tensor<4x8xf32>
  // CHECK: kgraph.mul %{{.*}}, %{{.*}} : tensor<3xi32>, tensor<i32>
  // GENERIC: "kgraph.mul"(%{{.*}}, %{{.*}}) : (tensor<3xi32>, tensor<i32>) -> tensor<3xi32>
  %2 = "kgraph.mul"(%i, %s) : (tensor<3xi32>, tensor<i32>) -> tensor<3xi32>
  // CHECK: kgraph.div %{{.*}}, %{{.*}} : tensor<i32>, tensor<3xi32>
  // GENERIC: "kgraph.div"(%{{.*}}, %{{.*}}) : (tensor<i32>, tensor<3xi32>) -> tensor<3xi32>
  %3 = "kgraph.div"(%s, %i) : (tensor<i32>, tensor<3xi32>) -> tensor<3xi32>
  // CHECK: kgraph.max %{{.*}}, %{{.*}} : tensor<4x1xf32>, tensor<8xf32>
  // GENERIC: "kgraph.max"(%{{.*}}, %{{.*}}) : (tensor<4x1xf32>, tensor<8xf32>) -> tensor<4x8xf32>
  %4 = "kgraph.max"(%a, %b) : (tensor<4x1xf32>, tensor<8xf32>) -> tensor<4x8xf32>
  // CHECK: kgraph.min %{{.*}}, %{{.*}} : tensor<3xi32>, tensor<3xi32>
  // GENERIC: "kgraph.min"(%{{.*}}, %{{.*}}) : (tensor<3xi32>, tensor<3xi32>) -> tensor<3xi32>
  %5 = "kgraph.min"(%i, %i) : (tensor<3xi32>, tensor<3xi32>) -> tensor<3xi32>
  // CHECK: kgraph.pow %{{.*}}, %{{.*}} : tensor<8xf32>, tensor<4x1xf32>
  // GENERIC: "kgraph.pow"(%{{.*}}, %{{.*}}) : (tensor<8xf32>, tensor<4x1xf32>) -> tensor<4x8xf32>
  %6 = "kgraph.pow"(%b, %a) : (tensor<8xf32>, tensor<4x1xf32>) -> tensor<4x8xf32>
  return
}

// CHECK-LABEL: func @generic_unary
func.func @generic_unary(%x: tensor<8xf32>, %h: tensor<2x4xf16>,
                         %q: tensor<8xi8>) {
  // CHECK: kgraph.neg %{{.*}} : tensor<8xi8>
  // GENERIC: "kgraph.neg"(%{{.*}}) : (tensor<8xi8>) -> tensor<8xi8>
  %0 = "kgraph.neg"(%q) : (tensor<8xi8>) -> tensor<8xi8>
  // CHECK: kgraph.abs %{{.*}} : tensor<2x4xf16>
  // GENERIC: "kgraph.abs"(%{{.*}}) : (tensor<2x4xf16>) -> tensor<2x4xf16>
  %1 = "kgraph.abs"(%h) : (tensor<2x4xf16>) -> tensor<2x4xf16>
  // CHECK: kgraph.exp %{{.*}} : tensor<8xf32>
  // GENERIC: "kgraph.exp"(%{{.*}}) : (tensor<8xf32>) -> tensor<8xf32>
  %2 = "kgraph.exp"(%x) : (tensor<8xf32>) -> tensor<8xf32>
  // CHECK: kgraph.log %{{.*}} : tensor<8xf32>
  // GENERIC: "kgraph.log"(%{{.*}}) : (tensor<8xf32>) -> tensor<8xf32>
  %3 = "kgraph.log"(%x) : (tensor<8xf32>) -> tensor<8xf32>
  // CHECK: kgraph.sqrt %{{.*}} : tensor<2x4xf16>
  // GENERIC: "kgraph.sqrt"(%{{.*}}) : (tensor<2x4xf16>) -> tensor<2x4xf16>
  %4 = "kgraph.sqrt"(%h) : (tensor<2x4xf16>) -> tensor<2x4xf16>
  // CHECK: kgraph.rsqrt %{{.*}} : tensor<8xf32>
  // GENERIC: "kgraph.rsqrt"(%{{.*}}) : (tensor<8xf32>) -> tensor<8xf32>
  %5 = "kgraph.rsqrt"(%x) : (tensor<8xf32>) -> tensor<8xf32>
  // CHECK: kgraph.tanh %{{.*}} : tensor<8xf32>
  // GENERIC: "kgraph.tanh"(%{{.*}}) : (tensor<8xf32>) -> tensor<8xf32>
  %6 = "kgraph.tanh"(%x) : (tensor<8xf32>) -> tensor<8xf32>
  // CHECK: kgraph.sigmoid %{{.*}} : tensor<8xf32>
  // GENERIC: "kgraph.sigmoid"(%{{.*}}) : (tensor<8xf32>) -> tensor<8xf32>
  %7 = "kgraph.sigmoid"(%x) : (tensor<8xf32>) -> tensor<8xf32>
  // CHECK: kgraph.relu %{{.*}} : tensor<8xi8>
  // GENERIC: "kgraph.relu"(%{{.*}}) : (tensor<8xi8>) -> tensor<8xi8>
  %8 = "kgraph.relu"(%q) : (tensor<8xi8>) -> tensor<8xi8>
  // Without attributes gelu is the exact (erf) form.
  // CHECK: kgraph.gelu %{{.*}} : tensor<8xf32>
  // CHECK-NOT: approximate
  // GENERIC: "kgraph.gelu"(%{{.*}}) : (tensor<8xf32>) -> tensor<8xf32>
  %9 = "kgraph.gelu"(%x) : (tensor<8xf32>) -> tensor<8xf32>
  return
}

// CHECK-LABEL: func @generic_cast
func.func @generic_cast(%x: tensor<8xf32>, %q: tensor<2x3xi8>) {
  // CHECK: kgraph.cast %{{.*}} : tensor<8xf32> to tensor<8xf16>
  // GENERIC: "kgraph.cast"(%{{.*}}) : (tensor<8xf32>) -> tensor<8xf16>
  %0 = "kgraph.cast"(%x) : (tensor<8xf32>) -> tensor<8xf16>
  // CHECK: kgraph.cast %{{.*}} : tensor<2x3xi8> to tensor<2x3xi32>
  // GENERIC: "kgraph.cast"(%{{.*}}) : (tensor<2x3xi8>) -> tensor<2x3xi32>
  %1 = "kgraph.cast"(%q) : (tensor<2x3xi8>) -> tensor<2x3xi32>
  return
}

// select has no attributes either.
// CHECK-LABEL: func @generic_select
func.func @generic_select(%c: tensor<4x8xi1>, %a: tensor<4x8xf32>,
                          %b: tensor<8xf32>) {
  // CHECK: kgraph.select %{{.*}}, %{{.*}}, %{{.*}} : tensor<4x8xi1>, tensor<4x8xf32>, tensor<8xf32>
  // GENERIC: "kgraph.select"(%{{.*}}, %{{.*}}, %{{.*}}) : (tensor<4x8xi1>, tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
  %0 = "kgraph.select"(%c, %a, %b) : (tensor<4x8xi1>, tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
  return
}
