func.func @main(%a: tensor<4x3xf32>, %b: tensor<4x5xf32>) -> tensor<4x8xf32> {
  %0 = kgraph.concat %a, %b axis = 1 : tensor<4x3xf32>, tensor<4x5xf32>
  return %0 : tensor<4x8xf32>
}
