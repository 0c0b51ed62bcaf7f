// RUN: kgraph-opt %s --split-input-file \
// RUN:   --pass-pipeline='builtin.module(func.func(kgraph-form-kernels),kgraph-tile{target=sm_80},kgraph-lower-to-gpu,canonicalize,cse)' \
// RUN:   | FileCheck %s

// A 3x3 conv2d (zero padding) feeding a 3x3 max pool2d (-inf padding) on a
// 5x6 image, 4x4 tiles, 2 rows per thread. The pool's input (the conv
// result) is needed over the tile plus 1: rows [-1, 5) x cols [-1, 5), a
// 6x6 region; the conv's input over rows [-2, 6) x cols [-2, 6), 8x8.
// Shared memory: 4 * (8*8 + 6*6) = 400 bytes; grid 2 x 2 x 1.
// CHECK-LABEL: func.func @conv_pool
// CHECK-DAG: %[[SMEM:.*]] = arith.constant 400 : i32
// CHECK-DAG: %[[C2:.*]] = arith.constant 2 : index
// CHECK: gpu.launch_func @kgraph_kernels::@conv_pool_k0 blocks in (%[[C2]], %[[C2]], %{{.*}}) threads in (%{{.*}}, %{{.*}}, %{{.*}}) dynamic_shared_memory_size %[[SMEM]]
// CHECK: gpu.func @conv_pool_k0(%[[IN:.*]]: memref<1x1x5x6xf32>, %[[W:.*]]: memref<1x1x3x3xf32>, %[[OUT:.*]]: memref<1x1x5x6xf32>)
// CHECK-SAME: known_block_size = array<i32: 32, 1, 1>
// CHECK-DAG: %[[NEGINF:.*]] = arith.constant 0xFF800000 : f32
// CHECK-DAG: %[[ZERO:.*]] = arith.constant 0.000000e+00 : f32
// CHECK-DAG: %[[X:.*]] = memref.view {{.*}} to memref<1x8x8xf32, #gpu.address_space<workgroup>>
// CHECK-DAG: %[[C:.*]] = memref.view {{.*}} to memref<1x6x6xf32, #gpu.address_space<workgroup>>
// The nine filter taps, once per block.
// CHECK-COUNT-9: memref.load %[[W]]
// Stage the input region (64 positions, 2 per thread, unrolled: both loads
// before the stores), 0 outside the image.
// CHECK: scf.for %{{.*}} = %{{.*}} to %c64 step %c64
// CHECK: memref.load %[[IN]]
// CHECK: arith.select %{{.*}}, %{{.*}}, %[[ZERO]] : f32
// CHECK: memref.load %[[IN]]
// CHECK: arith.select %{{.*}}, %{{.*}}, %[[ZERO]] : f32
// CHECK: memref.store %{{.*}}, %[[X]]
// CHECK: scf.if
// CHECK: memref.store %{{.*}}, %[[X]]
// CHECK: gpu.barrier
// The conv over its 6x6 region in strips of 2 rows (18 strips): 4 x 3 input
// taps feed both rows; -inf outside the image for the max pool.
// CHECK: scf.for %{{.*}} = %{{.*}} to %{{.*}} step
// CHECK-COUNT-12: memref.load %[[X]]
// CHECK: arith.select %{{.*}}, %{{.*}}, %[[NEGINF]] : f32
// CHECK: memref.store %{{.*}}, %[[C]]
// CHECK: arith.select %{{.*}}, %{{.*}}, %[[NEGINF]] : f32
// CHECK: memref.store %{{.*}}, %[[C]]
// CHECK: gpu.barrier
// The pool over the tile, stored once, inside the image only.
// CHECK: scf.for
// CHECK-COUNT-12: memref.load %[[C]]
// CHECK: scf.if
// CHECK: memref.store %{{.*}}, %[[OUT]]
// CHECK: scf.if
// CHECK: memref.store %{{.*}}, %[[OUT]]
// CHECK: gpu.return
func.func @conv_pool(%img: tensor<1x1x5x6xf32>, %g: tensor<1x1x3x3xf32>) -> tensor<1x1x5x6xf32> {
  %r = kgraph.fused (%img, %g) {kgraph.config = #kgraph.stencil_config<tile_h = 4, tile_w = 4, block_x = 32, block_y = 1, rows_per_thread = 2>} : (tensor<1x1x5x6xf32>, tensor<1x1x3x3xf32>) -> tensor<1x1x5x6xf32> {
  ^bb0(%x: tensor<1x1x5x6xf32>, %gw: tensor<1x1x3x3xf32>):
    %b = kgraph.conv2d %x, %gw padding = [1, 1, 1, 1] : tensor<1x1x5x6xf32>, tensor<1x1x3x3xf32> -> tensor<1x1x5x6xf32>
    %p = kgraph.pool2d max %b kernel = [3, 3] padding = [1, 1, 1, 1] : tensor<1x1x5x6xf32>
    kgraph.yield %p : tensor<1x1x5x6xf32>
  }
  return %r : tensor<1x1x5x6xf32>
}

// -----

// A lone avg pool2d, stride 2, NHWC, 8 channels in 2 blocks of 4 (grid z =
// 2 images x 2), pinned to the stencil kernel (by default a channels-last
// pool is a window group, window.mlir). Padded positions are not counted: the divisor is the number
// of window positions inside the image, computed per output.
// CHECK-LABEL: func.func @avg_pool_nhwc
// CHECK-DAG: %[[C4:.*]] = arith.constant 4 : index
// CHECK: gpu.launch_func @kgraph_kernels::@avg_pool_nhwc_k0 blocks in (%{{.*}}, %{{.*}}, %[[C4]])
// CHECK: gpu.func @avg_pool_nhwc_k0(%[[IN:.*]]: memref<2x9x11x8xf16>, %[[OUT:.*]]: memref<2x5x6x8xf16>)
// CHECK: %[[BZ:.*]] = gpu.block_id z
// CHECK: arith.divui %[[BZ]]
// CHECK: arith.remui %[[BZ]]
// CHECK: memref.view {{.*}} to memref<4x
// CHECK: memref.load %[[IN]]
// CHECK: arith.extf %{{.*}} : f16 to f32
// CHECK: gpu.barrier
// CHECK: arith.sitofp %{{.*}} : i32 to f32
// CHECK: arith.divf
// CHECK: arith.truncf %{{.*}} : f32 to f16
// CHECK: memref.store %{{.*}}, %[[OUT]]
func.func @avg_pool_nhwc(%x: tensor<2x9x11x8xf16>) -> tensor<2x5x6x8xf16> {
  %0 = kgraph.fused (%x) {kgraph.config = #kgraph.stencil_config<tile_h = 16, tile_w = 32, block_x = 32, block_y = 8, rows_per_thread = 4>} : (tensor<2x9x11x8xf16>) -> tensor<2x5x6x8xf16> {
  ^bb0(%a: tensor<2x9x11x8xf16>):
    %p = kgraph.pool2d avg %a kernel = [3, 3] strides = [2, 2] padding = [1, 1, 1, 1] layout = nhwc : tensor<2x9x11x8xf16>
    kgraph.yield %p : tensor<2x5x6x8xf16>
  }
  return %0 : tensor<2x5x6x8xf16>
}

// -----

// Elementwise ops on a stencil result are computed where they are used; an
// elementwise op feeding a stencil op is materialized over its region. The
// f16 relu result is rounded to f16 before the pool reads it.
// CHECK-LABEL: func.func @relu_pool_f16
// CHECK: gpu.func @relu_pool_f16_k0
// CHECK: memref.view {{.*}} to memref<1x{{.*}}xf32, #gpu.address_space<workgroup>>
// CHECK-NOT: memref.view
// CHECK: scf.for
// CHECK: memref.load %arg0
// CHECK: arith.cmpf olt
// CHECK: arith.truncf %{{.*}} : f32 to f16
// CHECK: arith.extf
// CHECK: gpu.barrier
// CHECK: arith.maximumf
func.func @relu_pool_f16(%a: tensor<1x1x20x20xf16>) -> tensor<1x1x20x20xf16> {
  %0 = kgraph.fused (%a) : (tensor<1x1x20x20xf16>) -> tensor<1x1x20x20xf16> {
  ^bb0(%x: tensor<1x1x20x20xf16>):
    %r = kgraph.relu %x : tensor<1x1x20x20xf16>
    %p = kgraph.pool2d max %r kernel = [3, 3] padding = [1, 1, 1, 1] : tensor<1x1x20x20xf16>
    kgraph.yield %p : tensor<1x1x20x20xf16>
  }
  return %0 : tensor<1x1x20x20xf16>
}

// -----

// More images x channel blocks (70000 x 1) than grid z holds (65535): they
// ride along x, block x = image * tiles per row + tile column (3 tiles of
// 4 columns over a 10-wide image: 210000 blocks).
// CHECK-LABEL: func.func @many_images
// CHECK-DAG: %[[GX:.*]] = arith.constant 210000 : index
// CHECK-DAG: %[[ONE:.*]] = arith.constant 1 : index
// CHECK: gpu.launch_func @kgraph_kernels::@many_images_k0 blocks in (%[[GX]], %[[ONE]], %[[ONE]])
// CHECK: gpu.func @many_images_k0
// CHECK-DAG: %[[C3:.*]] = arith.constant 3 : index
// CHECK-DAG: %[[BX:.*]] = gpu.block_id  x
// CHECK-DAG: %[[IMG:.*]] = arith.divui %[[BX]], %[[C3]] : index
// CHECK-DAG: %[[COL:.*]] = arith.remui %[[BX]], %[[C3]] : index
func.func @many_images(%a: tensor<70000x1x2x10xf32>) -> tensor<70000x1x2x10xf32> {
  %0 = kgraph.fused (%a) {kgraph.config = #kgraph.stencil_config<tile_h = 2, tile_w = 4, block_x = 4, block_y = 8, rows_per_thread = 1>} : (tensor<70000x1x2x10xf32>) -> tensor<70000x1x2x10xf32> {
  ^bb0(%x: tensor<70000x1x2x10xf32>):
    %p = kgraph.pool2d avg %x kernel = [3, 3] padding = [1, 1, 1, 1] : tensor<70000x1x2x10xf32>
    kgraph.yield %p : tensor<70000x1x2x10xf32>
  }
  return %0 : tensor<70000x1x2x10xf32>
}

// -----

// A rank-one constant filter ([1 2 1] x [1 2 1]) at 4 rows per thread runs
// as a row pass over the 6 input rows the rows read (weights 2 and 1 as
// fmas, the first weight 1 folded) and a column pass over the row sums: 12
// + 8 fmas, not 4 * 8 = 32. The 3x3 max pool likewise combines the maxima
// of 6 rows (12) in 4 columns (8): 20 maximumf, not 32.
// CHECK-LABEL: gpu.func @separable_k0
// CHECK-COUNT-20: math.fma
// CHECK-NOT: math.fma
// CHECK-COUNT-20: arith.maximumf
// CHECK-NOT: arith.maximumf
// CHECK: gpu.return
func.func @separable(%a: tensor<1x1x16x32xf32>) -> tensor<1x1x16x32xf32> {
  %0 = kgraph.fused (%a) {kgraph.config = #kgraph.stencil_config<tile_h = 16, tile_w = 32, block_x = 32, block_y = 4, rows_per_thread = 4>} : (tensor<1x1x16x32xf32>) -> tensor<1x1x16x32xf32> {
  ^bb0(%x: tensor<1x1x16x32xf32>):
    %w = arith.constant dense<[[[[1.0, 2.0, 1.0], [2.0, 4.0, 2.0], [1.0, 2.0, 1.0]]]]> : tensor<1x1x3x3xf32>
    %c = kgraph.conv2d %x, %w padding = [1, 1, 1, 1] : tensor<1x1x16x32xf32>, tensor<1x1x3x3xf32> -> tensor<1x1x16x32xf32>
    %p = kgraph.pool2d max %c kernel = [3, 3] padding = [1, 1, 1, 1] : tensor<1x1x16x32xf32>
    kgraph.yield %p : tensor<1x1x16x32xf32>
  }
  return %0 : tensor<1x1x16x32xf32>
}
