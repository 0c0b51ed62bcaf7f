func.func @two_ops(%a: tensor<4x8xf32>, %b: tensor<8xf32>) -> tensor<4x8xf32> {
  %0 = kgraph.add %a, %b : tensor<4x8xf32>, tensor<8xf32>
  %1 = kgraph.add %0, %a : tensor<4x8xf32>, tensor<4x8xf32>
  return %1 : tensor<4x8xf32>
}
