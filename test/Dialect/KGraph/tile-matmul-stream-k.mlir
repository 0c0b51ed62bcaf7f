// The model's stream-K choice (MatmulTiling.cpp, chooseStreamK): a plain
// matmul of few output tiles and a long K gets a persistent grid of one
// block per SM (sm_90a: 132) with TMA copies; grids of many tiles, targets
// without TMA, and convs (kgraph-split-k-convs' case) stay data-parallel.
// RUN: kgraph-opt %s --split-input-file \
// RUN:   --pass-pipeline='builtin.module(func.func(kgraph-form-kernels),kgraph-tile{target=sm_90a})' | FileCheck %s
// RUN: kgraph-opt %s --split-input-file \
// RUN:   --pass-pipeline='builtin.module(func.func(kgraph-form-kernels),kgraph-tile{target=sm_80})' | FileCheck %s --check-prefix=SM80

// 16 tiles of 128x128, 256 k tiles each (measured 2.2x the data-parallel
// pick on the H100, bench/RESULTS.md S24-2).
// CHECK-LABEL: func.func @long_k
// CHECK: copy = tma, stream_k = 132>
// SM80-LABEL: func.func @long_k
// SM80-NOT: stream_k
// SM80: return
func.func @long_k(%a: tensor<512x16384xf16>, %b: tensor<16384x512xf16>) -> tensor<512x512xf16> {
  %0 = kgraph.matmul %a, %b : tensor<512x16384xf16>, tensor<16384x512xf16> -> tensor<512x512xf16>
  return %0 : tensor<512x512xf16>
}

// -----

// 128 tiles (stream-K measured 37% slower).
// CHECK-LABEL: func.func @many_tiles
// CHECK-NOT: stream_k
// CHECK: return
func.func @many_tiles(%a: tensor<2048x4096xf16>, %b: tensor<4096x1024xf16>) -> tensor<2048x1024xf16> {
  %0 = kgraph.matmul %a, %b : tensor<2048x4096xf16>, tensor<4096x1024xf16> -> tensor<2048x1024xf16>
  return %0 : tensor<2048x1024xf16>
}

// -----

// A deep-K conv over few pixels: not stream-K.
// CHECK-LABEL: func.func @deep_conv
// CHECK-NOT: stream_k
// CHECK: return
func.func @deep_conv(%x: tensor<1x7x7x2048xf16>, %w: tensor<512x1x1x2048xf16>) -> tensor<1x7x7x512xf16> {
  %0 = kgraph.conv2d %x, %w layout = nhwc : tensor<1x7x7x2048xf16>, tensor<512x1x1x2048xf16> -> tensor<1x7x7x512xf16>
  return %0 : tensor<1x7x7x512xf16>
}
