// RUN: kgraph-opt %s --split-input-file --verify-diagnostics --kgraph-lower-to-gpu

// kgraph-lower-to-gpu checks a stencil group again (configurations written
// by hand or by a tuner skip kgraph-tile's checks).
module attributes {kgraph.target = "sm_80"} {
  func.func @strided_chain(%a: tensor<1x1x16x16xf32>) -> tensor<1x1x8x8xf32> {
    %0 = kgraph.fused (%a) {kgraph.config = #kgraph.stencil_config<tile_h = 8, tile_w = 32, block_x = 32, block_y = 1, rows_per_thread = 4>} : (tensor<1x1x16x16xf32>) -> tensor<1x1x8x8xf32> {
    ^bb0(%x: tensor<1x1x16x16xf32>):
      %r = kgraph.relu %x : tensor<1x1x16x16xf32>
      // expected-error @+1 {{'kgraph.pool2d' op in a stencil group must have strides [1, 1], got [2, 2]}}
      %p = kgraph.pool2d max %r kernel = [2, 2] strides = [2, 2] : tensor<1x1x16x16xf32>
      kgraph.yield %p : tensor<1x1x8x8xf32>
    }
    return %0 : tensor<1x1x8x8xf32>
  }
}

// -----

module attributes {kgraph.target = "sm_80"} {
  func.func @no_stencil(%a: tensor<1x1x16x16xf32>) -> tensor<1x1x16x16xf32> {
    // expected-error @+1 {{'kgraph.fused' op is not a stencil group: it has no kgraph.conv2d or kgraph.pool2d}}
    %0 = kgraph.fused (%a) {kgraph.config = #kgraph.stencil_config<tile_h = 8, tile_w = 32, block_x = 32, block_y = 1, rows_per_thread = 4>} : (tensor<1x1x16x16xf32>) -> tensor<1x1x16x16xf32> {
    ^bb0(%x: tensor<1x1x16x16xf32>):
      %r = kgraph.relu %x : tensor<1x1x16x16xf32>
      kgraph.yield %r : tensor<1x1x16x16xf32>
    }
    return %0 : tensor<1x1x16x16xf32>
  }
}

// -----

module attributes {kgraph.target = "sm_80"} {
  func.func @no_results(%a: tensor<1x1x16x16xf32>) {
    // expected-error @+1 {{'kgraph.fused' op has no results to compute}}
    kgraph.fused (%a) {kgraph.config = #kgraph.stencil_config<tile_h = 8, tile_w = 32, block_x = 32, block_y = 1, rows_per_thread = 4>} : (tensor<1x1x16x16xf32>) -> () {
    ^bb0(%x: tensor<1x1x16x16xf32>):
      %p = kgraph.pool2d max %x kernel = [3, 3] padding = [1, 1, 1, 1] : tensor<1x1x16x16xf32>
      kgraph.yield
    }
    return
  }
}

// -----

module attributes {kgraph.target = "sm_80"} {
  func.func @too_much_shared(%a: tensor<1x4x512x512xf32>) -> tensor<1x4x512x512xf32> {
    // expected-error @+1 {{'kgraph.fused' op stencil tile 256x256 needs 1065024 bytes of shared memory; sm_80 allows 166912 per block}}
    %0 = kgraph.fused (%a) {kgraph.config = #kgraph.stencil_config<tile_h = 256, tile_w = 256, block_x = 32, block_y = 8, rows_per_thread = 4>} : (tensor<1x4x512x512xf32>) -> tensor<1x4x512x512xf32> {
    ^bb0(%x: tensor<1x4x512x512xf32>):
      %p = kgraph.pool2d max %x kernel = [3, 3] padding = [1, 1, 1, 1] : tensor<1x4x512x512xf32>
      kgraph.yield %p : tensor<1x4x512x512xf32>
    }
    return %0 : tensor<1x4x512x512xf32>
  }
}

// -----

// A dense constant read pointwise: checkStencilGroup rejects it before the
// emitter (whose emitSplatConstant would otherwise report it).
module attributes {kgraph.target = "sm_80"} {
  func.func @dense_constant(%a: tensor<1x1x16x16xf32>) -> tensor<1x1x16x16xf32> {
    %0 = kgraph.fused (%a) {kgraph.config = #kgraph.stencil_config<tile_h = 8, tile_w = 32, block_x = 32, block_y = 1, rows_per_thread = 4>} : (tensor<1x1x16x16xf32>) -> tensor<1x1x16x16xf32> {
    ^bb0(%x: tensor<1x1x16x16xf32>):
      // expected-error @+1 {{'arith.constant' op only splat tensor constants (and conv2d filters) can be used inside a stencil group}}
      %c = arith.constant dense<[[[[1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0, 10.0, 11.0, 12.0, 13.0, 14.0, 15.0, 16.0]]]]> : tensor<1x1x1x16xf32>
      %p = kgraph.pool2d max %x kernel = [3, 3] padding = [1, 1, 1, 1] : tensor<1x1x16x16xf32>
      %r = kgraph.add %p, %c : tensor<1x1x16x16xf32>, tensor<1x1x1x16xf32>
      kgraph.yield %r : tensor<1x1x16x16xf32>
    }
    return %0 : tensor<1x1x16x16xf32>
  }
}
