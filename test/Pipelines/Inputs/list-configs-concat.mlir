// Concats along inner axes: one read by its tanh consumer, one alone.
func.func @main(%x: tensor<2x3x5x7xf16>, %y: tensor<2x4x5x7xf16>, %a: tensor<6x33xf32>, %b: tensor<6x1xf32>) -> (tensor<2x7x5x7xf16>, tensor<6x34xf32>) {
  %0 = kgraph.concat %x, %y axis = 1 : tensor<2x3x5x7xf16>, tensor<2x4x5x7xf16>
  %1 = kgraph.tanh %0 : tensor<2x7x5x7xf16>
  %2 = kgraph.concat %a, %b axis = 1 : tensor<6x33xf32>, tensor<6x1xf32>
  return %1, %2 : tensor<2x7x5x7xf16>, tensor<6x34xf32>
}
