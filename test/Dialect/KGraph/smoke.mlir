// RUN: kgraph-opt %s | kgraph-opt | FileCheck %s

// CHECK-LABEL: func @broadcast_add
func.func @broadcast_add(%a: tensor<4x1xf32>, %b: tensor<8xf32>) -> tensor<4x8xf32> {
  // CHECK: kgraph.add %{{.*}}, %{{.*}} : tensor<4x1xf32>, tensor<8xf32>
  %0 = kgraph.add %a, %b : tensor<4x1xf32>, tensor<8xf32>
  return %0 : tensor<4x8xf32>
}
