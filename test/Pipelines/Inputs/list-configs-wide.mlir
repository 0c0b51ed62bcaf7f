// A matmul whose wgmma TMA tiles (one block per SM) have cp.async twins
// that would need more than 255 registers (list-configs.test, ALL).
func.func @main(%a: tensor<512x256xf16>, %b: tensor<256x384xf16>) -> tensor<512x384xf16> {
  %0 = kgraph.matmul %a, %b : tensor<512x256xf16>, tensor<256x384xf16> -> tensor<512x384xf16>
  return %0 : tensor<512x384xf16>
}
