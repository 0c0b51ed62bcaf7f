// RUN: kgraph-opt %s --split-input-file --verify-diagnostics \
// RUN:   --pass-pipeline='builtin.module(func.func(kgraph-form-kernels),kgraph-tile{target=sm_80})'

// One test per diagnostic of checkStencilGroup and of kgraph-tile's stencil
// configuration checks.

// A conv2d with more than 4 channels in a stencil chain.
func.func @channels(%a: tensor<1x8x16x16xf32>, %w: tensor<4x8x3x3xf32>) -> tensor<1x4x16x16xf32> {
  %0 = kgraph.fused (%a, %w) : (tensor<1x8x16x16xf32>, tensor<4x8x3x3xf32>) -> tensor<1x4x16x16xf32> {
  ^bb0(%x: tensor<1x8x16x16xf32>, %f: tensor<4x8x3x3xf32>):
    // expected-error @+1 {{'kgraph.conv2d' op in a stencil group has 8 input and 4 output channels; at most 4 are supported}}
    %c = kgraph.conv2d %x, %f padding = [1, 1, 1, 1] : tensor<1x8x16x16xf32>, tensor<4x8x3x3xf32> -> tensor<1x4x16x16xf32>
    %p = kgraph.pool2d max %c kernel = [3, 3] padding = [1, 1, 1, 1] : tensor<1x4x16x16xf32>
    kgraph.yield %p : tensor<1x4x16x16xf32>
  }
  return %0 : tensor<1x4x16x16xf32>
}

// -----

// A strided conv2d in a chain.
func.func @conv_stride(%a: tensor<1x1x16x16xf32>, %w: tensor<1x1x3x3xf32>) -> tensor<1x1x8x8xf32> {
  %0 = kgraph.fused (%a, %w) : (tensor<1x1x16x16xf32>, tensor<1x1x3x3xf32>) -> tensor<1x1x8x8xf32> {
  ^bb0(%x: tensor<1x1x16x16xf32>, %f: tensor<1x1x3x3xf32>):
    // expected-error @+1 {{'kgraph.conv2d' op in a stencil group must have strides [1, 1], got [2, 2]}}
    %c = kgraph.conv2d %x, %f strides = [2, 2] padding = [1, 0, 1, 0] : tensor<1x1x16x16xf32>, tensor<1x1x3x3xf32> -> tensor<1x1x8x8xf32>
    %p = kgraph.pool2d max %c kernel = [3, 3] padding = [1, 1, 1, 1] : tensor<1x1x8x8xf32>
    kgraph.yield %p : tensor<1x1x8x8xf32>
  }
  return %0 : tensor<1x1x8x8xf32>
}

// -----

// A strided pool2d in a chain.
func.func @pool_stride(%a: tensor<1x1x16x16xf32>) -> tensor<1x1x8x8xf32> {
  %0 = kgraph.fused (%a) : (tensor<1x1x16x16xf32>) -> tensor<1x1x8x8xf32> {
  ^bb0(%x: tensor<1x1x16x16xf32>):
    %r = kgraph.relu %x : tensor<1x1x16x16xf32>
    // expected-error @+1 {{'kgraph.pool2d' op in a stencil group must have strides [1, 1], got [2, 2]}}
    %p = kgraph.pool2d max %r kernel = [2, 2] strides = [2, 2] : tensor<1x1x16x16xf32>
    kgraph.yield %p : tensor<1x1x8x8xf32>
  }
  return %0 : tensor<1x1x8x8xf32>
}

// -----

func.func @dilation(%a: tensor<1x1x16x16xf32>, %w: tensor<1x1x3x3xf32>) -> tensor<1x1x16x16xf32> {
  %0 = kgraph.fused (%a, %w) : (tensor<1x1x16x16xf32>, tensor<1x1x3x3xf32>) -> tensor<1x1x16x16xf32> {
  ^bb0(%x: tensor<1x1x16x16xf32>, %f: tensor<1x1x3x3xf32>):
    // expected-error @+1 {{'kgraph.conv2d' op in a stencil group must have dilations [1, 1], got [2, 2]}}
    %c = kgraph.conv2d %x, %f padding = [2, 2, 2, 2] dilations = [2, 2] : tensor<1x1x16x16xf32>, tensor<1x1x3x3xf32> -> tensor<1x1x16x16xf32>
    %p = kgraph.pool2d max %c kernel = [3, 3] padding = [1, 1, 1, 1] : tensor<1x1x16x16xf32>
    kgraph.yield %p : tensor<1x1x16x16xf32>
  }
  return %0 : tensor<1x1x16x16xf32>
}

// -----

func.func @groups(%a: tensor<1x2x16x16xf32>, %w: tensor<2x1x3x3xf32>) -> tensor<1x2x16x16xf32> {
  %0 = kgraph.fused (%a, %w) : (tensor<1x2x16x16xf32>, tensor<2x1x3x3xf32>) -> tensor<1x2x16x16xf32> {
  ^bb0(%x: tensor<1x2x16x16xf32>, %f: tensor<2x1x3x3xf32>):
    // expected-error @+1 {{'kgraph.conv2d' op in a stencil group must have groups = 1, got 2}}
    %c = kgraph.conv2d %x, %f padding = [1, 1, 1, 1] groups = 2 : tensor<1x2x16x16xf32>, tensor<2x1x3x3xf32> -> tensor<1x2x16x16xf32>
    %p = kgraph.pool2d max %c kernel = [3, 3] padding = [1, 1, 1, 1] : tensor<1x2x16x16xf32>
    kgraph.yield %p : tensor<1x2x16x16xf32>
  }
  return %0 : tensor<1x2x16x16xf32>
}

// -----

// Mismatched spatial shapes: a "valid" conv2d shrinks the image.
func.func @not_same(%a: tensor<1x1x16x16xf32>, %w: tensor<1x1x3x3xf32>) -> tensor<1x1x14x14xf32> {
  %0 = kgraph.fused (%a, %w) : (tensor<1x1x16x16xf32>, tensor<1x1x3x3xf32>) -> tensor<1x1x14x14xf32> {
  ^bb0(%x: tensor<1x1x16x16xf32>, %f: tensor<1x1x3x3xf32>):
    // expected-error @+1 {{'kgraph.conv2d' op in a stencil group must keep the spatial size ("same" padding), got 16x16 -> 14x14}}
    %c = kgraph.conv2d %x, %f : tensor<1x1x16x16xf32>, tensor<1x1x3x3xf32> -> tensor<1x1x14x14xf32>
    %p = kgraph.pool2d max %c kernel = [3, 3] padding = [1, 1, 1, 1] : tensor<1x1x14x14xf32>
    kgraph.yield %p : tensor<1x1x14x14xf32>
  }
  return %0 : tensor<1x1x14x14xf32>
}

// -----

func.func @window(%a: tensor<1x1x16x16xf32>) -> tensor<1x1x16x16xf32> {
  %0 = kgraph.fused (%a) : (tensor<1x1x16x16xf32>) -> tensor<1x1x16x16xf32> {
  ^bb0(%x: tensor<1x1x16x16xf32>):
    %r = kgraph.relu %x : tensor<1x1x16x16xf32>
    // expected-error @+1 {{'kgraph.pool2d' op in a stencil group has a 9x9 window; at most 7x7 is supported}}
    %p = kgraph.pool2d avg %r kernel = [9, 9] padding = [4, 4, 4, 4] : tensor<1x1x16x16xf32>
    kgraph.yield %p : tensor<1x1x16x16xf32>
  }
  return %0 : tensor<1x1x16x16xf32>
}

// -----

func.func @computed_filter(%a: tensor<1x1x16x16xf32>, %w: tensor<1x1x3x3xf32>) -> tensor<1x1x16x16xf32> {
  %0 = kgraph.fused (%a, %w) : (tensor<1x1x16x16xf32>, tensor<1x1x3x3xf32>) -> tensor<1x1x16x16xf32> {
  ^bb0(%x: tensor<1x1x16x16xf32>, %f: tensor<1x1x3x3xf32>):
    %g = kgraph.neg %f : tensor<1x1x3x3xf32>
    // expected-error @+1 {{'kgraph.conv2d' op filter must be a group input or a constant in a stencil group}}
    %c = kgraph.conv2d %x, %g padding = [1, 1, 1, 1] : tensor<1x1x16x16xf32>, tensor<1x1x3x3xf32> -> tensor<1x1x16x16xf32>
    kgraph.yield %c : tensor<1x1x16x16xf32>
  }
  return %0 : tensor<1x1x16x16xf32>
}

// -----

func.func @not_allowed(%a: tensor<1x1x16x16xf32>) -> tensor<1x1x16xf32> {
  %0 = kgraph.fused (%a) : (tensor<1x1x16x16xf32>) -> tensor<1x1x16xf32> {
  ^bb0(%x: tensor<1x1x16x16xf32>):
    %p = kgraph.pool2d max %x kernel = [3, 3] padding = [1, 1, 1, 1] : tensor<1x1x16x16xf32>
    // expected-error @+1 {{'kgraph.reduce' op cannot be part of a stencil group: only kgraph.conv2d, kgraph.pool2d and elementwise ops can}}
    %r = kgraph.reduce sum %p axes = [3] : tensor<1x1x16x16xf32>
    kgraph.yield %r : tensor<1x1x16xf32>
  }
  return %0 : tensor<1x1x16xf32>
}

// -----

func.func @layouts(%a: tensor<1x16x16x1xf32>) -> tensor<1x16x16x1xf32> {
  %0 = kgraph.fused (%a) : (tensor<1x16x16x1xf32>) -> tensor<1x16x16x1xf32> {
  ^bb0(%x: tensor<1x16x16x1xf32>):
    %p = kgraph.pool2d max %x kernel = [3, 3] padding = [1, 1, 1, 1] layout = nhwc : tensor<1x16x16x1xf32>
    // expected-error @+1 {{'kgraph.pool2d' op layout differs from the stencil group's (nhwc)}}
    %q = kgraph.pool2d max %p kernel = [1, 1] : tensor<1x16x16x1xf32>
    kgraph.yield %q : tensor<1x16x16x1xf32>
  }
  return %0 : tensor<1x16x16x1xf32>
}

// -----

// Two images of different sizes in one group.
func.func @grid(%a: tensor<1x1x16x16xf32>, %b: tensor<1x1x8x8xf32>) -> (tensor<1x1x16x16xf32>, tensor<1x1x8x8xf32>) {
  %0:2 = kgraph.fused (%a, %b) : (tensor<1x1x16x16xf32>, tensor<1x1x8x8xf32>) -> (tensor<1x1x16x16xf32>, tensor<1x1x8x8xf32>) {
  ^bb0(%x: tensor<1x1x16x16xf32>, %y: tensor<1x1x8x8xf32>):
    %p = kgraph.pool2d max %x kernel = [3, 3] padding = [1, 1, 1, 1] : tensor<1x1x16x16xf32>
    // expected-error @+1 {{'kgraph.relu' op result 'tensor<1x1x8x8xf32>' does not match the stencil grid of the group (N 1, H 16, W 16, nchw)}}
    %q = kgraph.relu %y : tensor<1x1x8x8xf32>
    kgraph.yield %p, %q : tensor<1x1x16x16xf32>, tensor<1x1x8x8xf32>
  }
  return %0#0, %0#1 : tensor<1x1x16x16xf32>, tensor<1x1x8x8xf32>
}

// -----

func.func @rank(%a: tensor<1x1x16x16xf32>, %b: tensor<2x1x1x16x16xf32>) -> tensor<2x1x1x16x16xf32> {
  %0 = kgraph.fused (%a, %b) : (tensor<1x1x16x16xf32>, tensor<2x1x1x16x16xf32>) -> tensor<2x1x1x16x16xf32> {
  ^bb0(%x: tensor<1x1x16x16xf32>, %y: tensor<2x1x1x16x16xf32>):
    %p = kgraph.pool2d max %x kernel = [3, 3] padding = [1, 1, 1, 1] : tensor<1x1x16x16xf32>
    // expected-error @+1 {{'kgraph.add' op result must be 4-D in a stencil group, got 'tensor<2x1x1x16x16xf32>'}}
    %q = kgraph.add %p, %y : tensor<1x1x16x16xf32>, tensor<2x1x1x16x16xf32>
    kgraph.yield %q : tensor<2x1x1x16x16xf32>
  }
  return %0 : tensor<2x1x1x16x16xf32>
}

// -----

// Channels > 4 through broadcasting.
func.func @wide(%a: tensor<1x1x16x16xf32>, %b: tensor<1x8x1x1xf32>) -> tensor<1x8x16x16xf32> {
  %0 = kgraph.fused (%a, %b) : (tensor<1x1x16x16xf32>, tensor<1x8x1x1xf32>) -> tensor<1x8x16x16xf32> {
  ^bb0(%x: tensor<1x1x16x16xf32>, %y: tensor<1x8x1x1xf32>):
    %p = kgraph.pool2d max %x kernel = [3, 3] padding = [1, 1, 1, 1] : tensor<1x1x16x16xf32>
    // expected-error @+1 {{'kgraph.mul' op result has 8 channels; values of a stencil group have at most 4}}
    %q = kgraph.mul %p, %y : tensor<1x1x16x16xf32>, tensor<1x8x1x1xf32>
    kgraph.yield %q : tensor<1x8x16x16xf32>
  }
  return %0 : tensor<1x8x16x16xf32>
}

// -----

func.func @dense_constant(%a: tensor<1x1x4x4xf32>) -> tensor<1x1x4x4xf32> {
  %0 = kgraph.fused (%a) : (tensor<1x1x4x4xf32>) -> tensor<1x1x4x4xf32> {
  ^bb0(%x: tensor<1x1x4x4xf32>):
    // expected-error @+1 {{'arith.constant' op only splat tensor constants (and conv2d filters) can be used inside a stencil group}}
    %c = arith.constant dense<[1.0, 2.0, 3.0, 4.0]> : tensor<4xf32>
    %m = kgraph.mul %x, %c : tensor<1x1x4x4xf32>, tensor<4xf32>
    %p = kgraph.pool2d max %m kernel = [3, 3] padding = [1, 1, 1, 1] : tensor<1x1x4x4xf32>
    kgraph.yield %p : tensor<1x1x4x4xf32>
  }
  return %0 : tensor<1x1x4x4xf32>
}

// -----

// A value read with zero padding (conv2d) and -inf padding (max pool2d).
func.func @padding_semantics(%a: tensor<1x1x16x16xf32>, %w: tensor<1x1x3x3xf32>) -> (tensor<1x1x16x16xf32>, tensor<1x1x16x16xf32>) {
  %0:2 = kgraph.fused (%a, %w) : (tensor<1x1x16x16xf32>, tensor<1x1x3x3xf32>) -> (tensor<1x1x16x16xf32>, tensor<1x1x16x16xf32>) {
  ^bb0(%x: tensor<1x1x16x16xf32>, %f: tensor<1x1x3x3xf32>):
    %c = kgraph.conv2d %x, %f padding = [1, 1, 1, 1] : tensor<1x1x16x16xf32>, tensor<1x1x3x3xf32> -> tensor<1x1x16x16xf32>
    // expected-error @+1 {{'kgraph.pool2d' op reads a value that kgraph.conv2d of the same group reads with other padding semantics (zero vs ignored); put them in separate groups}}
    %p = kgraph.pool2d max %x kernel = [3, 3] padding = [1, 1, 1, 1] : tensor<1x1x16x16xf32>
    kgraph.yield %c, %p : tensor<1x1x16x16xf32>, tensor<1x1x16x16xf32>
  }
  return %0#0, %0#1 : tensor<1x1x16x16xf32>, tensor<1x1x16x16xf32>
}

// -----

func.func @yield_input(%a: tensor<1x1x16x16xf32>) -> (tensor<1x1x16x16xf32>, tensor<1x1x16x16xf32>) {
  // expected-error @+1 {{'kgraph.fused' op stencil groups cannot yield a group input}}
  %0:2 = kgraph.fused (%a) : (tensor<1x1x16x16xf32>) -> (tensor<1x1x16x16xf32>, tensor<1x1x16x16xf32>) {
  ^bb0(%x: tensor<1x1x16x16xf32>):
    %p = kgraph.pool2d max %x kernel = [3, 3] padding = [1, 1, 1, 1] : tensor<1x1x16x16xf32>
    kgraph.yield %p, %x : tensor<1x1x16x16xf32>, tensor<1x1x16x16xf32>
  }
  return %0#0, %0#1 : tensor<1x1x16x16xf32>, tensor<1x1x16x16xf32>
}

// -----

// An integer conv2d in a stencil group (pool2d of integers is supported).
func.func @int_conv(%a: tensor<1x1x16x16xi8>, %w: tensor<1x1x3x3xi8>) -> tensor<1x1x16x16xi32> {
  %0 = kgraph.fused (%a, %w) : (tensor<1x1x16x16xi8>, tensor<1x1x3x3xi8>) -> tensor<1x1x16x16xi32> {
  ^bb0(%x: tensor<1x1x16x16xi8>, %f: tensor<1x1x3x3xi8>):
    // expected-error @+1 {{'kgraph.conv2d' op in a stencil group must compute floats, got 'i8' -> 'i32'}}
    %c = kgraph.conv2d %x, %f padding = [1, 1, 1, 1] : tensor<1x1x16x16xi8>, tensor<1x1x3x3xi8> -> tensor<1x1x16x16xi32>
    %p = kgraph.pool2d max %c kernel = [3, 3] padding = [1, 1, 1, 1] : tensor<1x1x16x16xi32>
    kgraph.yield %p : tensor<1x1x16x16xi32>
  }
  return %0 : tensor<1x1x16x16xi32>
}

// -----

func.func @pinned_matmul(%a: tensor<1x1x16x16xf32>) -> tensor<1x1x16x16xf32> {
  // expected-error @+1 {{'kgraph.fused' op has a 'kgraph.config' for elementwise kernels but holds 'kgraph.pool2d', which elementwise kernels cannot compute: #kgraph.elementwise_config<block_size = 256, vector_width = 4, unroll = 1, grid_size = 1>}}
  %0 = kgraph.fused (%a) {kgraph.config = #kgraph.elementwise_config<block_size = 256, vector_width = 4, unroll = 1, grid_size = 1>} : (tensor<1x1x16x16xf32>) -> tensor<1x1x16x16xf32> {
  ^bb0(%x: tensor<1x1x16x16xf32>):
    %p = kgraph.pool2d max %x kernel = [3, 3] padding = [1, 1, 1, 1] : tensor<1x1x16x16xf32>
    kgraph.yield %p : tensor<1x1x16x16xf32>
  }
  return %0 : tensor<1x1x16x16xf32>
}

// -----

func.func @stencil_config_on_elementwise(%a: tensor<16xf32>) -> tensor<16xf32> {
  // expected-error @+1 {{'kgraph.fused' op has a 'kgraph.config' for stencil kernels but has no kgraph.conv2d or kgraph.pool2d: #kgraph.stencil_config<tile_h = 4, tile_w = 32, block_x = 32, block_y = 1, rows_per_thread = 4>}}
  %0 = kgraph.fused (%a) {kgraph.config = #kgraph.stencil_config<tile_h = 4, tile_w = 32, block_x = 32, block_y = 1, rows_per_thread = 4>} : (tensor<16xf32>) -> tensor<16xf32> {
  ^bb0(%x: tensor<16xf32>):
    %r = kgraph.relu %x : tensor<16xf32>
    kgraph.yield %r : tensor<16xf32>
  }
  return %0 : tensor<16xf32>
}

// -----

// The intermediates of a 256x256 tile do not fit in shared memory.
func.func @too_big(%a: tensor<1x4x512x512xf32>) -> tensor<1x4x512x512xf32> {
  // expected-error @+1 {{'kgraph.fused' op stencil tile 256x256 needs 1065024 bytes of shared memory; sm_80 allows 166912 per block}}
  %0 = kgraph.fused (%a) {kgraph.config = #kgraph.stencil_config<tile_h = 256, tile_w = 256, block_x = 32, block_y = 8, rows_per_thread = 4>} : (tensor<1x4x512x512xf32>) -> tensor<1x4x512x512xf32> {
  ^bb0(%x: tensor<1x4x512x512xf32>):
    %p = kgraph.pool2d max %x kernel = [3, 3] padding = [1, 1, 1, 1] : tensor<1x4x512x512xf32>
    kgraph.yield %p : tensor<1x4x512x512xf32>
  }
  return %0 : tensor<1x4x512x512xf32>
}

// -----

// The grid exceeds 65535 blocks along y.
func.func @grid_y(%a: tensor<1x1x70000x4xf32>) -> tensor<1x1x70000x4xf32> {
  // expected-error @+1 {{'kgraph.fused' op stencil grid 1 x 70000 x 1 exceeds the blocks a launch allows (2^31 - 1 along x with the images folded in, 65535 along y)}}
  %0 = kgraph.fused (%a) {kgraph.config = #kgraph.stencil_config<tile_h = 1, tile_w = 32, block_x = 32, block_y = 1, rows_per_thread = 1>} : (tensor<1x1x70000x4xf32>) -> tensor<1x1x70000x4xf32> {
  ^bb0(%x: tensor<1x1x70000x4xf32>):
    %p = kgraph.pool2d max %x kernel = [3, 3] padding = [1, 1, 1, 1] : tensor<1x1x70000x4xf32>
    kgraph.yield %p : tensor<1x1x70000x4xf32>
  }
  return %0 : tensor<1x1x70000x4xf32>
}

// -----

// Sixteen chained 7x7 pools on 4 channels: even a 1x1 tile needs a
// 97x97 region of the input (and the intermediates), more than shared
// memory holds.
func.func @no_tile(%a: tensor<1x4x512x512xf32>) -> tensor<1x4x512x512xf32> {
  // expected-error @+1 {{'kgraph.fused' op has no stencil tile whose intermediates fit the 166912 bytes of shared memory of sm_80}}
  %0 = kgraph.fused (%a) : (tensor<1x4x512x512xf32>) -> tensor<1x4x512x512xf32> {
  ^bb0(%x: tensor<1x4x512x512xf32>):
    %p0 = kgraph.pool2d max %x kernel = [7, 7] padding = [3, 3, 3, 3] : tensor<1x4x512x512xf32>
    %p1 = kgraph.pool2d max %p0 kernel = [7, 7] padding = [3, 3, 3, 3] : tensor<1x4x512x512xf32>
    %p2 = kgraph.pool2d max %p1 kernel = [7, 7] padding = [3, 3, 3, 3] : tensor<1x4x512x512xf32>
    %p3 = kgraph.pool2d max %p2 kernel = [7, 7] padding = [3, 3, 3, 3] : tensor<1x4x512x512xf32>
    %p4 = kgraph.pool2d max %p3 kernel = [7, 7] padding = [3, 3, 3, 3] : tensor<1x4x512x512xf32>
    %p5 = kgraph.pool2d max %p4 kernel = [7, 7] padding = [3, 3, 3, 3] : tensor<1x4x512x512xf32>
    %p6 = kgraph.pool2d max %p5 kernel = [7, 7] padding = [3, 3, 3, 3] : tensor<1x4x512x512xf32>
    %p7 = kgraph.pool2d max %p6 kernel = [7, 7] padding = [3, 3, 3, 3] : tensor<1x4x512x512xf32>
    %p8 = kgraph.pool2d max %p7 kernel = [7, 7] padding = [3, 3, 3, 3] : tensor<1x4x512x512xf32>
    %p9 = kgraph.pool2d max %p8 kernel = [7, 7] padding = [3, 3, 3, 3] : tensor<1x4x512x512xf32>
    %p10 = kgraph.pool2d max %p9 kernel = [7, 7] padding = [3, 3, 3, 3] : tensor<1x4x512x512xf32>
    %p11 = kgraph.pool2d max %p10 kernel = [7, 7] padding = [3, 3, 3, 3] : tensor<1x4x512x512xf32>
    %p12 = kgraph.pool2d max %p11 kernel = [7, 7] padding = [3, 3, 3, 3] : tensor<1x4x512x512xf32>
    %p13 = kgraph.pool2d max %p12 kernel = [7, 7] padding = [3, 3, 3, 3] : tensor<1x4x512x512xf32>
    %p14 = kgraph.pool2d max %p13 kernel = [7, 7] padding = [3, 3, 3, 3] : tensor<1x4x512x512xf32>
    %p15 = kgraph.pool2d max %p14 kernel = [7, 7] padding = [3, 3, 3, 3] : tensor<1x4x512x512xf32>
    kgraph.yield %p15 : tensor<1x4x512x512xf32>
  }
  return %0 : tensor<1x4x512x512xf32>
}
