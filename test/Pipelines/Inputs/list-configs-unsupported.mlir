func.func @main(%a: tensor<4x8xf32>) -> tensor<8x4xf32> {
  %0 = kgraph.transpose %a, permutation = [1, 0] : tensor<4x8xf32>
  return %0 : tensor<8x4xf32>
}
