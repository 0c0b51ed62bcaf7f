// Edge detection on 8 grayscale 4096x4096 images (f32, nchw): a 5x5
// Gaussian blur, Sobel x and y, the gradient magnitude, and non-maximum
// suppression (keep the magnitude where it equals the 3x3 max pool of itself
// and exceeds a threshold, else 0).
//
//   kgraph-opt --fuse --tile=sm_90a examples/fusion/image_edges.mlir -o edges.ptx
//
// fuses the whole chain into one stencil kernel (1 .entry): every block reads
// its input tile plus a 4-pixel halo once, keeps the intermediates in shared
// memory and writes the result once. --fuse-report says what fused.
func.func @main(%img: tensor<8x1x4096x4096xf32>) -> tensor<8x1x4096x4096xf32> {
  %g = arith.constant dense<[[[[0.00390625, 0.01562500, 0.02343750, 0.01562500, 0.00390625], [0.01562500, 0.06250000, 0.09375000, 0.06250000, 0.01562500], [0.02343750, 0.09375000, 0.14062500, 0.09375000, 0.02343750], [0.01562500, 0.06250000, 0.09375000, 0.06250000, 0.01562500], [0.00390625, 0.01562500, 0.02343750, 0.01562500, 0.00390625]]]]> : tensor<1x1x5x5xf32>
  %sx = arith.constant dense<[[[[-1.0, 0.0, 1.0], [-2.0, 0.0, 2.0], [-1.0, 0.0, 1.0]]]]> : tensor<1x1x3x3xf32>
  %sy = arith.constant dense<[[[[-1.0, -2.0, -1.0], [0.0, 0.0, 0.0], [1.0, 2.0, 1.0]]]]> : tensor<1x1x3x3xf32>
  %blur = kgraph.conv2d %img, %g padding = [2, 2, 2, 2] : tensor<8x1x4096x4096xf32>, tensor<1x1x5x5xf32> -> tensor<8x1x4096x4096xf32>
  %gx = kgraph.conv2d %blur, %sx padding = [1, 1, 1, 1] : tensor<8x1x4096x4096xf32>, tensor<1x1x3x3xf32> -> tensor<8x1x4096x4096xf32>
  %gy = kgraph.conv2d %blur, %sy padding = [1, 1, 1, 1] : tensor<8x1x4096x4096xf32>, tensor<1x1x3x3xf32> -> tensor<8x1x4096x4096xf32>
  %gx2 = kgraph.mul %gx, %gx : tensor<8x1x4096x4096xf32>, tensor<8x1x4096x4096xf32>
  %gy2 = kgraph.mul %gy, %gy : tensor<8x1x4096x4096xf32>, tensor<8x1x4096x4096xf32>
  %sum = kgraph.add %gx2, %gy2 : tensor<8x1x4096x4096xf32>, tensor<8x1x4096x4096xf32>
  %mag = kgraph.sqrt %sum : tensor<8x1x4096x4096xf32>
  %peak = kgraph.pool2d max %mag kernel = [3, 3] padding = [1, 1, 1, 1] : tensor<8x1x4096x4096xf32>
  %is_peak = kgraph.compare eq, %mag, %peak : tensor<8x1x4096x4096xf32>, tensor<8x1x4096x4096xf32>
  %thr = arith.constant dense<0.25> : tensor<1xf32>
  %strong = kgraph.compare gt, %mag, %thr : tensor<8x1x4096x4096xf32>, tensor<1xf32>
  %zero = arith.constant dense<0.0> : tensor<1xf32>
  %kept = kgraph.select %strong, %mag, %zero : tensor<8x1x4096x4096xi1>, tensor<8x1x4096x4096xf32>, tensor<1xf32>
  %out = kgraph.select %is_peak, %kept, %zero : tensor<8x1x4096x4096xi1>, tensor<8x1x4096x4096xf32>, tensor<1xf32>
  return %out : tensor<8x1x4096x4096xf32>
}
