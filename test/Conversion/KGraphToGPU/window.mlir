// RUN: kgraph-opt %s --split-input-file \
// RUN:   --pass-pipeline='builtin.module(func.func(kgraph-form-kernels),kgraph-tile{target=sm_80},kgraph-lower-to-gpu,canonicalize,cse)' \
// RUN:   | FileCheck %s

// A channels-last max pool (WindowEmitter.cpp): thread (x, y) of block
// (bx, by) owns channels [(by * 8 + x) * 8, +8) of 64 (no channel guard:
// 8 vectors fill block_x = 8 exactly) and walks the 2 x 7 x 11 = 154
// pixels from bx * 32 + y by grid_size * 32 = 160. Each of the 9 taps is one 8-lane vector load at the
// clamped input pixel, selected against -inf when outside the image, and a
// maximumf; the result is rounded to f16 and stored as one vector.
// CHECK-LABEL: func.func @max_pool
// CHECK: gpu.func @max_pool_k0
// CHECK-DAG: %[[NEGINF:.*]] = arith.constant 0xFF800000 : f32
// CHECK-DAG: %[[TX:.*]] = gpu.thread_id  x
// CHECK-DAG: %[[TY:.*]] = gpu.thread_id  y
// CHECK-DAG: %[[BX:.*]] = gpu.block_id  x
// CHECK-DAG: %[[BY:.*]] = gpu.block_id  y
// CHECK-NOT: scf.if
// CHECK: scf.for %[[P:.*]] = %{{.*}} to %c154 step %c160 {
// CHECK: arith.remui %[[P]], %c11
// CHECK: arith.divui %[[P]], %c11
// CHECK: arith.maxsi
// CHECK: arith.minsi
// CHECK: vector.load %{{.*}} : memref<34944xf16>, vector<8xf16>
// CHECK: arith.extf
// CHECK: arith.select %{{.*}}, %{{.*}}, %[[NEGINF]] : f32
// CHECK-COUNT-8: vector.load %{{.*}} : memref<34944xf16>, vector<8xf16>
// CHECK: arith.maximumf
// CHECK: arith.truncf %{{.*}} : f32 to f16
// CHECK: vector.store %{{.*}} : memref<9856xf16>, vector<8xf16>
// CHECK-NOT: vector.load
// CHECK: gpu.return
func.func @max_pool(%x: tensor<2x13x21x64xf16>) -> tensor<2x7x11x64xf16> {
  %0 = kgraph.pool2d max %x kernel = [3, 3] strides = [2, 2] padding = [1, 1, 1, 1] layout = nhwc : tensor<2x13x21x64xf16>
  return %0 : tensor<2x7x11x64xf16>
}

// -----

// An average pool divides by the in-image taps of the window, counted from
// the clamped window bounds (here 2x3 windows at stride 3, padding
// [0, 1, 2, 2]); the start value is 0.
// CHECK-LABEL: func.func @avg_pool
// CHECK: gpu.func @avg_pool_k0
// CHECK-DAG: %[[ZERO:.*]] = arith.constant 0.000000e+00 : f32
// CHECK: scf.for
// CHECK: arith.select %{{.*}}, %{{.*}}, %[[ZERO]] : f32
// CHECK: arith.addf
// CHECK: arith.sitofp %{{.*}} : i32 to f32
// CHECK: arith.divf
// CHECK: vector.store
func.func @avg_pool(%x: tensor<1x5x6x8xf32>) -> tensor<1x2x3x8xf32> {
  %0 = kgraph.pool2d avg %x kernel = [2, 3] strides = [3, 3] padding = [0, 1, 2, 2] layout = nhwc : tensor<1x5x6x8xf32>
  return %0 : tensor<1x2x3x8xf32>
}

// -----

// A depthwise 3x3 conv: the 9 taps of the thread's 4 channels are loaded
// into registers before the pixel loop; they are the 36 contiguous elements
// from f0 * 9 of filter [24, 3, 3, 1] (lane l of tap t at (f0 + l) * 9 + t),
// so 9 vector loads. Then each tap is a vector load of the input and 4
// fmas. 24 / 4 = 6 vectors fill block_x = 6: no guard.
// CHECK-LABEL: func.func @depthwise
// CHECK: gpu.func @depthwise_k0
// CHECK: %[[F0:.*]] = arith.muli %{{.*}}, %c36 : index
// CHECK: vector.load %{{.*}}[%[[F0]]] {alignment = 16 : i64} : memref<216xf32>, vector<4xf32>
// CHECK-COUNT-8: vector.load %{{.*}} : memref<216xf32>, vector<4xf32>
// CHECK-NOT: memref.load %{{.*}} : memref<216xf32>
// CHECK: scf.for
// CHECK-NOT: memref<216xf32>
// CHECK: vector.load %{{.*}} : memref<4752xf32>, vector<4xf32>
// CHECK: math.fma
// CHECK: gpu.return
func.func @depthwise(%x: tensor<2x9x11x24xf32>, %w: tensor<24x3x3x1xf32>) -> tensor<2x9x11x24xf32> {
  %0 = kgraph.conv2d %x, %w layout = nhwc padding = [1, 1, 1, 1] groups = 24 : tensor<2x9x11x24xf32>, tensor<24x3x3x1xf32> -> tensor<2x9x11x24xf32>
  return %0 : tensor<2x9x11x24xf32>
}

// -----

// Strips of 3 pixels (pinned): a thread walks the 2 x 9 x ceil(11 / 3) = 72
// strips; per strip each window row loads its 3 + 2 columns once, then
// takes 3 pixels x 3 taps x 4 lanes fmas (15 input loads for 27 taps), then
// 3 outputs. OW = 11 leaves the
// last strip of a row 2 pixels: pixels 1 and 2 are stored only within the
// row (pixel 0 always is).
// CHECK-LABEL: func.func @depthwise_strip
// CHECK: gpu.func @depthwise_strip_k0
// CHECK-COUNT-9: vector.load %{{.*}} : memref<216xf32>, vector<4xf32>
// CHECK: scf.for %{{.*}} = %{{.*}} to %c72 step %c64
// CHECK-COUNT-5: vector.load %{{.*}} : memref<4752xf32>, vector<4xf32>
// CHECK-NOT: vector.load
// CHECK-COUNT-36: math.fma
// CHECK-NOT: math.fma
// CHECK-COUNT-5: vector.load %{{.*}} : memref<4752xf32>, vector<4xf32>
// CHECK-NOT: vector.load
// CHECK-COUNT-36: math.fma
// CHECK-NOT: math.fma
// CHECK-COUNT-5: vector.load %{{.*}} : memref<4752xf32>, vector<4xf32>
// CHECK-NOT: vector.load
// CHECK-COUNT-36: math.fma
// CHECK-NOT: math.fma
// CHECK: vector.store
// CHECK: scf.if
// CHECK: vector.store
// CHECK: scf.if
// CHECK: vector.store
// CHECK: gpu.return
func.func @depthwise_strip(%x: tensor<2x9x11x24xf32>, %w: tensor<24x3x3x1xf32>) -> tensor<2x9x11x24xf32> {
  %0 = kgraph.fused (%x, %w) {kgraph.config = #kgraph.window_config<vector_width = 4, block_x = 6, block_y = 32, grid_size = 2, strip = 3>} : (tensor<2x9x11x24xf32>, tensor<24x3x3x1xf32>) -> tensor<2x9x11x24xf32> {
  ^bb0(%a: tensor<2x9x11x24xf32>, %b: tensor<24x3x3x1xf32>):
    %y = kgraph.conv2d %a, %b layout = nhwc padding = [1, 1, 1, 1] groups = 24 : tensor<2x9x11x24xf32>, tensor<24x3x3x1xf32> -> tensor<2x9x11x24xf32>
    kgraph.yield %y : tensor<2x9x11x24xf32>
  }
  return %0 : tensor<2x9x11x24xf32>
}

// -----

// An integer max pool starts from the i32 minimum and takes arith.maxsi.
// 7 channels leave one lane per thread and 7 threads per pixel.
// CHECK-LABEL: func.func @int_pool
// CHECK: gpu.func @int_pool_k0
// CHECK-DAG: %[[MIN:.*]] = arith.constant -2147483648 : i32
// CHECK: arith.extsi %{{.*}} : i8 to i32
// CHECK: arith.select %{{.*}}, %{{.*}}, %[[MIN]] : i32
// CHECK: arith.maxsi
// CHECK: arith.trunci %{{.*}} : i32 to i8
// CHECK-NOT: arith.maximumf
func.func @int_pool(%x: tensor<2x6x5x7xi8>) -> tensor<2x6x5x7xi8> {
  %0 = kgraph.pool2d max %x kernel = [3, 3] padding = [1, 1, 1, 1] layout = nhwc : tensor<2x6x5x7xi8>
  return %0 : tensor<2x6x5x7xi8>
}

// -----

// 40 channels of bf16 are 5 vectors of 8: a block of 32 threads along them
// has idle threads, guarded by an scf.if on the channel vector.
// CHECK-LABEL: func.func @channel_guard
// CHECK: gpu.func @channel_guard_k0
// CHECK: arith.cmpi ult, %{{.*}}, %c5 : index
// CHECK: scf.if
// CHECK: scf.for
func.func @channel_guard(%x: tensor<2x7x8x40xbf16>) -> tensor<2x4x4x40xbf16> {
  %0 = kgraph.fused (%x) {kgraph.config = #kgraph.window_config<vector_width = 8, block_x = 32, block_y = 1, grid_size = 4>} : (tensor<2x7x8x40xbf16>) -> tensor<2x4x4x40xbf16> {
  ^bb0(%a: tensor<2x7x8x40xbf16>):
    %p = kgraph.pool2d avg %a kernel = [3, 3] strides = [2, 2] padding = [1, 1, 1, 1] layout = nhwc : tensor<2x7x8x40xbf16>
    kgraph.yield %p : tensor<2x4x4x40xbf16>
  }
  return %0 : tensor<2x4x4x40xbf16>
}
