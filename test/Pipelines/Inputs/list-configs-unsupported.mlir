func.func @main(%a: tensor<0x8xf16>, %b: tensor<8x16xf16>) -> tensor<0x16xf32> {
  %0 = kgraph.matmul %a, %b : tensor<0x8xf16>, tensor<8x16xf16> -> tensor<0x16xf32>
  return %0 : tensor<0x16xf32>
}
