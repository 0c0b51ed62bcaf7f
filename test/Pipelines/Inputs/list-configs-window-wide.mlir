// A window group over 33 i32 channels (odd: 1-lane vectors, 33 channel
// vectors): candidates whose block_x takes all 33 vectors would need 33 x 32
// threads, more than a block holds, and are not listed (random graph
// 2048393671-11 asserted on them in the sanitizer build).
func.func @main(%x: tensor<16x32x33x33xi32>) -> tensor<16x9x16x33xi32> {
  %0 = kgraph.pool2d max %x kernel = [2, 6] strides = [4, 2] padding = [1, 1, 1, 2] layout = nhwc : tensor<16x32x33x33xi32>
  return %0 : tensor<16x9x16x33xi32>
}
