// Mixed precision and masks: a bf16 activation is upcast, clamped, compared
// with a threshold, and the mask selects between it and a fallback in f16.
func.func @main(%act: tensor<64x1000xbf16>, %fallback: tensor<1000xf16>) -> (tensor<64x1000xf16>, tensor<64x1000xi1>) {
  %threshold = arith.constant dense<0.5> : tensor<1xf32>
  %0 = kgraph.cast %act : tensor<64x1000xbf16> to tensor<64x1000xf32>
  %1 = kgraph.clamp %0 {max = 6.000000e+00 : f64, min = 0.000000e+00 : f64} : tensor<64x1000xf32>
  %mask = kgraph.compare gt, %1, %threshold : tensor<64x1000xf32>, tensor<1xf32>
  %2 = kgraph.cast %1 : tensor<64x1000xf32> to tensor<64x1000xf16>
  %3 = kgraph.select %mask, %2, %fallback : tensor<64x1000xi1>, tensor<64x1000xf16>, tensor<1000xf16>
  return %3, %mask : tensor<64x1000xf16>, tensor<64x1000xi1>
}
