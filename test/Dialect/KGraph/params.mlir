// Model parameters (docs/launch-plan.md): `kgraph.param` marks a func.func
// tensor argument whose data is the named tensor of the module's
// `kgraph.weights` file. Valid uses round-trip; every misuse is an error.
// RUN: kgraph-opt %s --split-input-file | FileCheck %s

// CHECK: module attributes {kgraph.weights = "model.safetensors"}
// CHECK: func.func @main(%{{.*}}: tensor<4x8xf32>, %{{.*}}: tensor<8xf32> {kgraph.param = "fc.bias"}, %{{.*}}: tensor<8x8xf16> {kgraph.param = "fc.weight"})
module attributes {kgraph.weights = "model.safetensors"} {
  func.func @main(%x: tensor<4x8xf32>, %b: tensor<8xf32> {kgraph.param = "fc.bias"},
                  %w: tensor<8x8xf16> {kgraph.param = "fc.weight"}) -> tensor<4x8xf32> {
    %0 = kgraph.add %x, %b : tensor<4x8xf32>, tensor<8xf32>
    return %0 : tensor<4x8xf32>
  }
}

// -----

// The same name in two functions is one tensor used twice.
// CHECK-LABEL: func.func @f(
// CHECK-SAME: {kgraph.param = "shared"}
// CHECK-LABEL: func.func @g(
// CHECK-SAME: {kgraph.param = "shared"}
func.func @f(%b: tensor<8xf32> {kgraph.param = "shared"}) -> tensor<8xf32> {
  %0 = kgraph.exp %b : tensor<8xf32>
  return %0 : tensor<8xf32>
}
func.func @g(%b: tensor<8xf32> {kgraph.param = "shared"}) -> tensor<8xf32> {
  %0 = kgraph.log %b : tensor<8xf32>
  return %0 : tensor<8xf32>
}
