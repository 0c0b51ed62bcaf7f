// RUN: kgraph-opt %s --split-input-file --verify-diagnostics \
// RUN:   --pass-pipeline='builtin.module(func.func(kgraph-form-kernels),kgraph-tile{target=sm_90a report=true})' | FileCheck %s

// The issue-5 edge chain on 8x1x4096x4096: blur 5x5, Sobel x/y, magnitude,
// 3x3 max-pool non-maximum suppression. Halo 4 around the input, 3 around
// the blur, 1 around the magnitude. 64x64 tiles of 4x2 strips (4x4 strips
// would hold more shared memory: 4 blocks per SM instead of 5): rows
// rounded to 4; each value computed over the columns some output needs,
// rounded out to multiples of 2, and held over the columns its readers'
// strips read, rounded out too: input staged 76x72, blur computed 72x68
// and held 72x72, magnitude 68x68, in f32; the magnitude takes the input's
// bytes (the blur is the input's last reader, a barrier between), so shared
// memory is the input's and the blur's, 42624 bytes; 4 * 76*72/4096 + 4 =
// 9.34 bytes read and written per pixel plus the filter taps.
// CHECK-LABEL: func @edges_4096
// CHECK: kgraph.config = #kgraph.stencil_config<tile_h = 64, tile_w = 64, block_x = 32, block_y = 8, rows_per_thread = 4, cols_per_thread = 2>
func.func @edges_4096(%img: tensor<8x1x4096x4096xf32>, %g: tensor<1x1x5x5xf32>, %sx: tensor<1x1x3x3xf32>, %sy: tensor<1x1x3x3xf32>) -> tensor<8x1x4096x4096xf32> {
  // expected-remark @+1 {{stencil tile 64x64, strips 4x2, 256 threads, 42624 B shared, grid 64x64x8, 9.34 global B/px, halo overhead 1.16, 68.4 taps/px}}
  %r = kgraph.fused (%img, %g, %sx, %sy) : (tensor<8x1x4096x4096xf32>, tensor<1x1x5x5xf32>, tensor<1x1x3x3xf32>, tensor<1x1x3x3xf32>) -> tensor<8x1x4096x4096xf32> {
  ^bb0(%x: tensor<8x1x4096x4096xf32>, %gw: tensor<1x1x5x5xf32>, %wx: tensor<1x1x3x3xf32>, %wy: tensor<1x1x3x3xf32>):
    %b = kgraph.conv2d %x, %gw padding = [2, 2, 2, 2] : tensor<8x1x4096x4096xf32>, tensor<1x1x5x5xf32> -> tensor<8x1x4096x4096xf32>
    %gx = kgraph.conv2d %b, %wx padding = [1, 1, 1, 1] : tensor<8x1x4096x4096xf32>, tensor<1x1x3x3xf32> -> tensor<8x1x4096x4096xf32>
    %gy = kgraph.conv2d %b, %wy padding = [1, 1, 1, 1] : tensor<8x1x4096x4096xf32>, tensor<1x1x3x3xf32> -> tensor<8x1x4096x4096xf32>
    %gx2 = kgraph.mul %gx, %gx : tensor<8x1x4096x4096xf32>, tensor<8x1x4096x4096xf32>
    %gy2 = kgraph.mul %gy, %gy : tensor<8x1x4096x4096xf32>, tensor<8x1x4096x4096xf32>
    %s = kgraph.add %gx2, %gy2 : tensor<8x1x4096x4096xf32>, tensor<8x1x4096x4096xf32>
    %m = kgraph.sqrt %s : tensor<8x1x4096x4096xf32>
    %p = kgraph.pool2d max %m kernel = [3, 3] padding = [1, 1, 1, 1] : tensor<8x1x4096x4096xf32>
    %eq = kgraph.compare eq, %m, %p : tensor<8x1x4096x4096xf32>, tensor<8x1x4096x4096xf32>
    %t = arith.constant dense<0.1> : tensor<f32>
    %gt = kgraph.compare gt, %m, %t : tensor<8x1x4096x4096xf32>, tensor<f32>
    %z = arith.constant dense<0.0> : tensor<f32>
    %s1 = kgraph.select %gt, %m, %z : tensor<8x1x4096x4096xi1>, tensor<8x1x4096x4096xf32>, tensor<f32>
    %o = kgraph.select %eq, %s1, %z : tensor<8x1x4096x4096xi1>, tensor<8x1x4096x4096xf32>, tensor<f32>
    kgraph.yield %o : tensor<8x1x4096x4096xf32>
  }
  return %r : tensor<8x1x4096x4096xf32>
}

// -----

// A lone pool2d of any stride is a one-op stencil group; its channels are
// split in blocks of 4 (grid z = 2 images x 8 channel blocks).
// CHECK-LABEL: func @pool_stride2
// CHECK: kgraph.fused{{.*}}kgraph.config = #kgraph.stencil_config<tile_h = 16, tile_w = 32, block_x = 32, block_y = 8, rows_per_thread = 4>
func.func @pool_stride2(%x: tensor<2x32x56x56xf16>) -> tensor<2x32x28x28xf16> {
  // expected-remark @+1 {{stencil tile 16x32, strips 4x1, 256 threads, 34320 B shared, grid 1x2x16, 41.52 global B/px, halo overhead 1.00, 61.1 taps/px}}
  %0 = kgraph.pool2d max %x kernel = [3, 3] strides = [2, 2] padding = [1, 1, 1, 1] : tensor<2x32x56x56xf16>
  return %0 : tensor<2x32x28x28xf16>
}

// -----

// A lone stencil conv2d (stride 1, same size, <= 4 channels) takes the
// stencil kernel; a wider one stays an implicit GEMM.
// CHECK-LABEL: func @lone_convs
// CHECK: #kgraph.stencil_config
// CHECK: #kgraph.matmul_config
func.func @lone_convs(%x: tensor<1x3x64x64xf32>, %w: tensor<4x3x3x3xf32>, %w8: tensor<8x3x3x3xf32>) -> (tensor<1x4x64x64xf32>, tensor<1x8x64x64xf32>) {
  // expected-remark @+1 {{stencil tile}}
  %0 = kgraph.conv2d %x, %w padding = [1, 1, 1, 1] : tensor<1x3x64x64xf32>, tensor<4x3x3x3xf32> -> tensor<1x4x64x64xf32>
  // expected-remark @+1 {{conv2d}}
  %1 = kgraph.conv2d %x, %w8 padding = [1, 1, 1, 1] : tensor<1x3x64x64xf32>, tensor<8x3x3x3xf32> -> tensor<1x8x64x64xf32>
  return %0, %1 : tensor<1x4x64x64xf32>, tensor<1x8x64x64xf32>
}

// -----

// A pinned configuration is validated and kept.
// CHECK-LABEL: func @pinned
// CHECK: kgraph.config = #kgraph.stencil_config<tile_h = 8, tile_w = 128, block_x = 128, block_y = 1, rows_per_thread = 2>
func.func @pinned(%x: tensor<1x1x100x300xf32>) -> tensor<1x1x100x300xf32> {
  // expected-remark @+1 {{stencil tile 8x128, strips 2x1, 128 threads, 6336 B shared, grid 3x13x1, 10.19 global B/px, halo overhead 1.00, 26.0 taps/px}}
  %0 = kgraph.fused (%x) {kgraph.config = #kgraph.stencil_config<tile_h = 8, tile_w = 128, block_x = 128, block_y = 1, rows_per_thread = 2>} : (tensor<1x1x100x300xf32>) -> tensor<1x1x100x300xf32> {
  ^bb0(%a: tensor<1x1x100x300xf32>):
    %p = kgraph.pool2d avg %a kernel = [5, 5] padding = [2, 2, 2, 2] : tensor<1x1x100x300xf32>
    %r = kgraph.relu %p : tensor<1x1x100x300xf32>
    kgraph.yield %r : tensor<1x1x100x300xf32>
  }
  return %0 : tensor<1x1x100x300xf32>
}

// -----

// Eight chained 7x7 pools on 4 channels: no usual tile (16x32 and up)
// fits, so the search goes on over smaller tiles. Only two pools' regions
// are live at a time (each is read once, by the next), so a 2x32 tile of
// one warp fits two blocks per SM.
// CHECK-LABEL: func @pool_chain
// CHECK: kgraph.config = #kgraph.stencil_config<tile_h = 2, tile_w = 32, block_x = 32, block_y = 1, rows_per_thread = 2>
func.func @pool_chain(%a: tensor<1x4x512x512xf32>) -> tensor<1x4x512x512xf32> {
  // expected-remark @+1 {{stencil tile 2x32, strips 2x1, 32 threads, 116096 B shared, grid 16x256x1, 1016.00 global B/px, halo overhead 25.00, 22774.0 taps/px}}
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
    kgraph.yield %p7 : tensor<1x4x512x512xf32>
  }
  return %0 : tensor<1x4x512x512xf32>
}

// -----

// The edge chain with its filters as constants: the Gaussian is rank one
// ([1 4 6 4 1] x [1 4 6 4 1]) and runs as a row and a column pass (5 * 8/4
// + 5 = 15 multiply-adds per output at 4 rows per thread, not 25), the
// Sobel filters' zero columns and rows are skipped (6 taps each; as row and
// column passes they would take 2 * 6/4 + 3 = 6 too, so they stay direct),
// the 3x3 max pool combines row maxima (2 * 6/4 + 2 = 5 operations, not 8):
// fewer taps per pixel than with the filters read at run time (68.4).
// CHECK-LABEL: func @edges_constant_filters
func.func @edges_constant_filters(%x: tensor<8x1x4096x4096xf32>) -> tensor<8x1x4096x4096xf32> {
  // expected-remark @+1 {{stencil tile 64x64, strips 4x2, 256 threads, 42624 B shared, grid 64x64x8, 9.34 global B/px, halo overhead 1.16, 40.4 taps/px}}
  %r = kgraph.fused (%x) : (tensor<8x1x4096x4096xf32>) -> tensor<8x1x4096x4096xf32> {
  ^bb0(%in: tensor<8x1x4096x4096xf32>):
    %g = arith.constant dense<[[[[1.0, 4.0, 6.0, 4.0, 1.0], [4.0, 16.0, 24.0, 16.0, 4.0], [6.0, 24.0, 36.0, 24.0, 6.0], [4.0, 16.0, 24.0, 16.0, 4.0], [1.0, 4.0, 6.0, 4.0, 1.0]]]]> : tensor<1x1x5x5xf32>
    %sx = arith.constant dense<[[[[-1.0, 0.0, 1.0], [-2.0, 0.0, 2.0], [-1.0, 0.0, 1.0]]]]> : tensor<1x1x3x3xf32>
    %sy = arith.constant dense<[[[[-1.0, -2.0, -1.0], [0.0, 0.0, 0.0], [1.0, 2.0, 1.0]]]]> : tensor<1x1x3x3xf32>
    %b = kgraph.conv2d %in, %g padding = [2, 2, 2, 2] : tensor<8x1x4096x4096xf32>, tensor<1x1x5x5xf32> -> tensor<8x1x4096x4096xf32>
    %gx = kgraph.conv2d %b, %sx padding = [1, 1, 1, 1] : tensor<8x1x4096x4096xf32>, tensor<1x1x3x3xf32> -> tensor<8x1x4096x4096xf32>
    %gy = kgraph.conv2d %b, %sy padding = [1, 1, 1, 1] : tensor<8x1x4096x4096xf32>, tensor<1x1x3x3xf32> -> tensor<8x1x4096x4096xf32>
    %gx2 = kgraph.mul %gx, %gx : tensor<8x1x4096x4096xf32>, tensor<8x1x4096x4096xf32>
    %gy2 = kgraph.mul %gy, %gy : tensor<8x1x4096x4096xf32>, tensor<8x1x4096x4096xf32>
    %s = kgraph.add %gx2, %gy2 : tensor<8x1x4096x4096xf32>, tensor<8x1x4096x4096xf32>
    %m = kgraph.sqrt %s : tensor<8x1x4096x4096xf32>
    %p = kgraph.pool2d max %m kernel = [3, 3] padding = [1, 1, 1, 1] : tensor<8x1x4096x4096xf32>
    kgraph.yield %p : tensor<8x1x4096x4096xf32>
  }
  return %r : tensor<8x1x4096x4096xf32>
}
