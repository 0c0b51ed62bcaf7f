// RUN: kgraph-opt %s --split-input-file \
// RUN:   --pass-pipeline='builtin.module(func.func(kgraph-form-kernels),kgraph-tile{target=sm_90a})' | FileCheck %s
// RUN: kgraph-opt %s --split-input-file \
// RUN:   --pass-pipeline='builtin.module(func.func(kgraph-form-kernels),kgraph-tile{target=sm_70})' | FileCheck %s --check-prefix=SM70

// The window model's defaults (WindowTiling.cpp): 16-byte vectors of the
// widest operand along the output channels, block_x = the channel vectors
// up to 32, about 256 threads in whole warps, at most 8 waves of resident
// blocks (by threads and the model's registers) striding over the pixels in
// even steps; convolutions take the strip (1, 2, 4 or 8 pixels of a row per
// thread) the estimate prefers by at least 5%.

// ResNet-50's max pool, 256x112x112x64 f16: 8 channel vectors of 8 lanes, 32
// pixels per block; 802816 pixels need 25088 blocks. The model's 40
// registers a thread (24 + 8 accumulators + 8 lanes of a column) leave 6
// blocks of 256 threads per SM: 8 waves of 132 SMs x 6 are 6336 blocks, so 4
// steps of 6272 (80 SMs x 6 x 8 = 3840 on sm_70: 7 steps of 3584).
// CHECK-LABEL: func @resnet_pool
// CHECK: kgraph.fused window {{.*}}#kgraph.window_config<vector_width = 8, block_x = 8, block_y = 32, grid_size = 6272>
// SM70-LABEL: func @resnet_pool
// SM70: #kgraph.window_config<vector_width = 8, block_x = 8, block_y = 32, grid_size = 3584>
func.func @resnet_pool(%x: tensor<256x112x112x64xf16>) -> tensor<256x56x56x64xf16> {
  %0 = kgraph.pool2d max %x kernel = [3, 3] strides = [2, 2] padding = [1, 1, 1, 1] layout = nhwc : tensor<256x112x112x64xf16>
  return %0 : tensor<256x56x56x64xf16>
}

// -----

// A depthwise 3x3 on 32x56x56x128 f16. The model counts each thread's
// input loads against the L2 (strips of R pixels load 3 x (R + 2) columns
// for R pixels), so the longest strip, 8, wins; at 8, 16-byte vectors need
// 204 registers (one block of 256 per SM) and 8-byte ones 120 (two), which
// the estimates tie on, so W = 4 with 32 x 8 threads: 12544 strips in 1568
// blocks of 8, one grid-stride step (measured on the H200: 23.6 us, the
// fastest of 9 configurations; strip 2 with W = 8 took 31-44 us).
// On sm_70 (the V100's 900 GB/s) every candidate is memory-bound, so one
// pixel per thread, on the 128-thread blocks more of which are resident:
// 100352 pixels in blocks of 16 x 8, 4 grid-stride steps of 3136 blocks.
// CHECK-LABEL: func @depthwise
// CHECK: kgraph.fused window {{.*}}#kgraph.window_config<vector_width = 4, block_x = 32, block_y = 8, grid_size = 1568, strip = 8>
// SM70-LABEL: func @depthwise
// SM70: #kgraph.window_config<vector_width = 8, block_x = 16, block_y = 8, grid_size = 3136>
func.func @depthwise(%x: tensor<32x56x56x128xf16>, %w: tensor<128x3x3x1xf16>) -> tensor<32x56x56x128xf16> {
  %0 = kgraph.conv2d %x, %w layout = nhwc padding = [1, 1, 1, 1] groups = 128 : tensor<32x56x56x128xf16>, tensor<128x3x3x1xf16> -> tensor<32x56x56x128xf16>
  return %0 : tensor<32x56x56x128xf16>
}

// -----

// Three f32 channels: one lane per thread, 3 x 64 threads per block (whole
// warps), 4 x 16 x 17 = 1088 pixels in 17 blocks.
// CHECK-LABEL: func @rgb
// CHECK: #kgraph.window_config<vector_width = 1, block_x = 3, block_y = 64, grid_size = 17>
func.func @rgb(%x: tensor<4x33x35x3xf32>) -> tensor<4x16x17x3xf32> {
  %0 = kgraph.pool2d avg %x kernel = [2, 2] strides = [2, 2] layout = nhwc : tensor<4x33x35x3xf32>
  return %0 : tensor<4x16x17x3xf32>
}

// -----

// Two pixels of 2048 channels: 32 threads per pixel along 256 channel
// vectors (8 blocks in grid y), block_y no larger than the pixels.
// CHECK-LABEL: func @few_pixels
// CHECK: #kgraph.window_config<vector_width = 8, block_x = 32, block_y = 2, grid_size = 1>
func.func @few_pixels(%x: tensor<2x7x7x2048xf16>) -> tensor<2x1x1x2048xf16> {
  %0 = kgraph.pool2d avg %x kernel = [7, 7] layout = nhwc : tensor<2x7x7x2048xf16>
  return %0 : tensor<2x1x1x2048xf16>
}

// -----

// A pinned configuration is checked and kept; f32 operands limit the
// default to 4 lanes, and the 25 pixels to 32 pixel rows (whole warps of 4
// threads per pixel).
// CHECK-LABEL: func @pinned
// CHECK: #kgraph.window_config<vector_width = 2, block_x = 4, block_y = 16, grid_size = 3>
// CHECK-LABEL: func @f32_lanes
// CHECK: #kgraph.window_config<vector_width = 4, block_x = 4, block_y = 32, grid_size = 1>
func.func @pinned(%a: tensor<1x9x9x8xf32>) -> tensor<1x5x5x8xf32> {
  %0 = kgraph.fused (%a) {kgraph.config = #kgraph.window_config<vector_width = 2, block_x = 4, block_y = 16, grid_size = 3>} : (tensor<1x9x9x8xf32>) -> tensor<1x5x5x8xf32> {
  ^bb0(%x: tensor<1x9x9x8xf32>):
    %p = kgraph.pool2d max %x kernel = [3, 3] strides = [2, 2] padding = [1, 1, 1, 1] layout = nhwc : tensor<1x9x9x8xf32>
    kgraph.yield %p : tensor<1x5x5x8xf32>
  }
  return %0 : tensor<1x5x5x8xf32>
}
func.func @f32_lanes(%x: tensor<1x9x9x16xf32>) -> tensor<1x5x5x16xf32> {
  %0 = kgraph.pool2d max %x kernel = [3, 3] strides = [2, 2] padding = [1, 1, 1, 1] layout = nhwc : tensor<1x9x9x16xf32>
  return %0 : tensor<1x5x5x16xf32>
}
