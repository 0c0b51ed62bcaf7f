func.func @main(%a: tensor<4x8xf32>) -> tensor<8x8xf32> {
  %0 = kgraph.concat %a, %a axis = 0 : tensor<4x8xf32>, tensor<4x8xf32>
  return %0 : tensor<8x8xf32>
}
