func.func @bad(%a: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %0 = kgraph.no_such_op %a : tensor<4x8xf32>
  return %0 : tensor<4x8xf32>
}
