// RUN: kgraph-opt %s --split-input-file --verify-diagnostics \
// RUN:   --pass-pipeline='builtin.module(func.func(kgraph-form-kernels),kgraph-tile{target=sm_80})'

// One test per diagnostic of checkWindowGroup and verifyWindowConfig.

// A window configuration on a channels-first pool.
func.func @nchw(%a: tensor<1x8x9x9xf32>) -> tensor<1x8x4x4xf32> {
  %0 = kgraph.fused (%a) {kgraph.config = #kgraph.window_config<vector_width = 1, block_x = 8, block_y = 4, grid_size = 1>} : (tensor<1x8x9x9xf32>) -> tensor<1x8x4x4xf32> {
  ^bb0(%x: tensor<1x8x9x9xf32>):
    // expected-error @+1 {{'kgraph.pool2d' op cannot be computed by a window kernel: layout is nchw (window kernels read channels-last vectors)}}
    %p = kgraph.pool2d max %x kernel = [2, 2] strides = [2, 2] : tensor<1x8x9x9xf32>
    kgraph.yield %p : tensor<1x8x4x4xf32>
  }
  return %0 : tensor<1x8x4x4xf32>
}

// -----

// A window configuration on a conv2d with 16 input channels per group.
func.func @wide_groups(%a: tensor<1x6x6x32xf32>, %b: tensor<8x3x3x16xf32>) -> tensor<1x4x4x8xf32> {
  %0 = kgraph.fused (%a, %b) {kgraph.config = #kgraph.window_config<vector_width = 1, block_x = 8, block_y = 4, grid_size = 1>} : (tensor<1x6x6x32xf32>, tensor<8x3x3x16xf32>) -> tensor<1x4x4x8xf32> {
  ^bb0(%x: tensor<1x6x6x32xf32>, %w: tensor<8x3x3x16xf32>):
    // expected-error @+1 {{'kgraph.conv2d' op cannot be computed by a window kernel: conv2d has 16 input channels per group (at most 8)}}
    %c = kgraph.conv2d %x, %w layout = nhwc groups = 2 : tensor<1x6x6x32xf32>, tensor<8x3x3x16xf32> -> tensor<1x4x4x8xf32>
    kgraph.yield %c : tensor<1x4x4x8xf32>
  }
  return %0 : tensor<1x4x4x8xf32>
}

// -----

// A window configuration on a group of two pools.
func.func @two_pools(%a: tensor<1x9x9x8xf32>) -> tensor<1x2x2x8xf32> {
  // expected-error @+1 {{'kgraph.fused' op has a 'kgraph.config' for window kernels but needs exactly one kgraph.pool2d or kgraph.conv2d, found 2}}
  %0 = kgraph.fused (%a) {kgraph.config = #kgraph.window_config<vector_width = 1, block_x = 8, block_y = 4, grid_size = 1>} : (tensor<1x9x9x8xf32>) -> tensor<1x2x2x8xf32> {
  ^bb0(%x: tensor<1x9x9x8xf32>):
    %p = kgraph.pool2d max %x kernel = [2, 2] strides = [2, 2] layout = nhwc : tensor<1x9x9x8xf32>
    %q = kgraph.pool2d max %p kernel = [2, 2] strides = [2, 2] layout = nhwc : tensor<1x4x4x8xf32>
    kgraph.yield %q : tensor<1x2x2x8xf32>
  }
  return %0 : tensor<1x2x2x8xf32>
}

// -----

// A window group yielding a producer's value (of the input's shape): the
// kernel walks output pixels only.
func.func @yields_producer(%a: tensor<1x8x8x8xf32>) -> (tensor<1x4x4x8xf32>, tensor<1x8x8x8xf32>) {
  // expected-error @+1 {{'kgraph.fused' op yields a value of type 'tensor<1x8x8x8xf32>'; a window kernel writes only values of its anchor's result shape 'tensor<1x4x4x8xf32>'}}
  %0:2 = kgraph.fused window (%a) : (tensor<1x8x8x8xf32>) -> (tensor<1x4x4x8xf32>, tensor<1x8x8x8xf32>) {
  ^bb0(%x: tensor<1x8x8x8xf32>):
    %r = kgraph.relu %x : tensor<1x8x8x8xf32>
    %p = kgraph.pool2d max %r kernel = [2, 2] strides = [2, 2] layout = nhwc : tensor<1x8x8x8xf32>
    kgraph.yield %p, %r : tensor<1x4x4x8xf32>, tensor<1x8x8x8xf32>
  }
  return %0#0, %0#1 : tensor<1x4x4x8xf32>, tensor<1x8x8x8xf32>
}

// -----

// A window group with no results.
func.func @no_results(%a: tensor<1x8x8x8xf32>) {
  // expected-error @+1 {{'kgraph.fused' op has no results to compute}}
  kgraph.fused window (%a) : (tensor<1x8x8x8xf32>) -> () {
  ^bb0(%x: tensor<1x8x8x8xf32>):
    %p = kgraph.pool2d max %x kernel = [2, 2] strides = [2, 2] layout = nhwc : tensor<1x8x8x8xf32>
    kgraph.yield
  }
  return
}

// -----

// vector_width must divide the output channels.
func.func @width_divides(%a: tensor<1x8x8x12xf16>) -> tensor<1x4x4x12xf16> {
  // expected-error @+1 {{'kgraph.fused' op vector_width 8 must divide the 12 output channels}}
  %0 = kgraph.fused (%a) {kgraph.config = #kgraph.window_config<vector_width = 8, block_x = 1, block_y = 32, grid_size = 1>} : (tensor<1x8x8x12xf16>) -> tensor<1x4x4x12xf16> {
  ^bb0(%x: tensor<1x8x8x12xf16>):
    %p = kgraph.pool2d max %x kernel = [2, 2] strides = [2, 2] layout = nhwc : tensor<1x8x8x12xf16>
    kgraph.yield %p : tensor<1x4x4x12xf16>
  }
  return %0 : tensor<1x4x4x12xf16>
}

// -----

// At most 16 bytes per access: 8 lanes of an f32 bias are 32.
func.func @width_bytes(%a: tensor<1x8x8x16xf16>, %b: tensor<16xf32>) -> tensor<1x4x4x16xf32> {
  // expected-error @+1 {{'kgraph.fused' op vector_width 8 moves 32 bytes of the group's widest element type; at most 16 bytes per access}}
  %0 = kgraph.fused (%a, %b) {kgraph.config = #kgraph.window_config<vector_width = 8, block_x = 2, block_y = 16, grid_size = 1>} : (tensor<1x8x8x16xf16>, tensor<16xf32>) -> tensor<1x4x4x16xf32> {
  ^bb0(%x: tensor<1x8x8x16xf16>, %y: tensor<16xf32>):
    %p = kgraph.pool2d max %x kernel = [2, 2] strides = [2, 2] layout = nhwc : tensor<1x8x8x16xf16>
    %c = kgraph.cast %p : tensor<1x4x4x16xf16> to tensor<1x4x4x16xf32>
    %s = kgraph.add %c, %y : tensor<1x4x4x16xf32>, tensor<16xf32>
    kgraph.yield %s : tensor<1x4x4x16xf32>
  }
  return %0 : tensor<1x4x4x16xf32>
}

// -----

// Grid y holds the channel vectors over block_x: at most 65535 blocks.
func.func @grid_y(%a: tensor<1x1x1x131072xf32>) -> tensor<1x1x1x131072xf32> {
  // expected-error @+1 {{'kgraph.fused' op needs 131072 blocks in grid y (output channel vectors over block_x); at most 65535}}
  %0 = kgraph.fused (%a) {kgraph.config = #kgraph.window_config<vector_width = 1, block_x = 1, block_y = 32, grid_size = 1>} : (tensor<1x1x1x131072xf32>) -> tensor<1x1x1x131072xf32> {
  ^bb0(%x: tensor<1x1x1x131072xf32>):
    %p = kgraph.pool2d max %x kernel = [1, 1] layout = nhwc : tensor<1x1x1x131072xf32>
    kgraph.yield %p : tensor<1x1x1x131072xf32>
  }
  return %0 : tensor<1x1x1x131072xf32>
}

// -----

// A strip longer than the output row.
func.func @strip_past_row(%a: tensor<1x9x9x8xf32>) -> tensor<1x4x4x8xf32> {
  // expected-error @+1 {{'kgraph.fused' op strip 5 exceeds the 4 output columns}}
  %0 = kgraph.fused (%a) {kgraph.config = #kgraph.window_config<vector_width = 4, block_x = 2, block_y = 16, grid_size = 1, strip = 5>} : (tensor<1x9x9x8xf32>) -> tensor<1x4x4x8xf32> {
  ^bb0(%x: tensor<1x9x9x8xf32>):
    %p = kgraph.pool2d max %x kernel = [2, 2] strides = [2, 2] layout = nhwc : tensor<1x9x9x8xf32>
    kgraph.yield %p : tensor<1x4x4x8xf32>
  }
  return %0 : tensor<1x4x4x8xf32>
}

// -----

// Strips unroll every tap: a 9x9 window (81 taps) loops over its rows.
func.func @strip_taps(%a: tensor<1x12x12x8xf32>, %b: tensor<8x9x9x1xf32>) -> tensor<1x4x4x8xf32> {
  // expected-error @+1 {{'kgraph.fused' op strip 2 needs every window tap unrolled; the window has 81 taps (KH * KW * input channels per group), at most 64}}
  %0 = kgraph.fused (%a, %b) {kgraph.config = #kgraph.window_config<vector_width = 4, block_x = 2, block_y = 16, grid_size = 1, strip = 2>} : (tensor<1x12x12x8xf32>, tensor<8x9x9x1xf32>) -> tensor<1x4x4x8xf32> {
  ^bb0(%x: tensor<1x12x12x8xf32>, %w: tensor<8x9x9x1xf32>):
    %c = kgraph.conv2d %x, %w layout = nhwc groups = 8 : tensor<1x12x12x8xf32>, tensor<8x9x9x1xf32> -> tensor<1x4x4x8xf32>
    kgraph.yield %c : tensor<1x4x4x8xf32>
  }
  return %0 : tensor<1x4x4x8xf32>
}

// -----

// A non-splat constant in a window group.
func.func @dense_constant(%a: tensor<1x4x4x2xf32>) -> tensor<1x2x2x2xf32> {
  %0 = kgraph.fused window (%a) : (tensor<1x4x4x2xf32>) -> tensor<1x2x2x2xf32> {
  ^bb0(%x: tensor<1x4x4x2xf32>):
    // expected-error @+1 {{'arith.constant' op only splat tensor constants can be used inside a kernel group}}
    %c = arith.constant dense<[1.0, 2.0]> : tensor<2xf32>
    %p = kgraph.pool2d max %x kernel = [2, 2] strides = [2, 2] layout = nhwc : tensor<1x4x4x2xf32>
    %s = kgraph.add %p, %c : tensor<1x2x2x2xf32>, tensor<2xf32>
    kgraph.yield %s : tensor<1x2x2x2xf32>
  }
  return %0 : tensor<1x2x2x2xf32>
}
