// One group of every kind, shapes that are not multiples of any tile.
func.func @main(%a: tensor<300x200xf16>, %b: tensor<200x130xf16>, %bias: tensor<130xf16>,
                %x: tensor<37x1001xf32>, %img: tensor<2x1x33x47xf32>, %w: tensor<1x1x3x3xf32>,
                %e: tensor<3x5x1023xf32>) -> (tensor<300x130xf16>, tensor<37xf32>, tensor<2x1x33x47xf32>, tensor<3x5x1023xf32>) {
  %0 = kgraph.matmul %a, %b : tensor<300x200xf16>, tensor<200x130xf16> -> tensor<300x130xf16>
  %1 = kgraph.add %0, %bias : tensor<300x130xf16>, tensor<130xf16>
  %2 = kgraph.relu %1 : tensor<300x130xf16>
  %3 = kgraph.exp %x : tensor<37x1001xf32>
  %4 = kgraph.reduce sum %3 axes = [1] : tensor<37x1001xf32>
  %5 = kgraph.conv2d %img, %w padding = [1, 1, 1, 1] : tensor<2x1x33x47xf32>, tensor<1x1x3x3xf32> -> tensor<2x1x33x47xf32>
  %6 = kgraph.relu %5 : tensor<2x1x33x47xf32>
  %7 = kgraph.tanh %e : tensor<3x5x1023xf32>
  %8 = kgraph.mul %7, %e : tensor<3x5x1023xf32>, tensor<3x5x1023xf32>
  return %2, %4, %6, %8 : tensor<300x130xf16>, tensor<37xf32>, tensor<2x1x33x47xf32>, tensor<3x5x1023xf32>
}
