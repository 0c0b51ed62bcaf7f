// The model's stream-K choice (MatmulTiling.cpp, chooseStreamK): a plain
// matmul of few output tiles and a long K gets a persistent grid of one
// block per SM (sm_90a: 132) with TMA copies, splitting tiles; a grid of
// several waves of short-K tiles (matmul or conv) a persistent grid of
// whole tiles per block (a divisor of the tiles, at least 3/4 of the SMs,
// or one block per SM in rounds); long-K grids of many tiles, targets
// without TMA, and deep-K convs over few pixels (kgraph-split-k-convs'
// case) stay data-parallel.
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

// -----

// 768 tiles of 128x256 with 12 k tiles: 6 waves of one block per SM pay 5
// block turnovers; 128 blocks of 6 whole tiles load each next tile under
// the previous one's epilogue (3 of the 4 stages fit beside its region).
// CHECK-LABEL: func.func @short_k_waves
// CHECK: stages = 3, {{.*}}copy = tma, stream_k = 128>
// SM80-LABEL: func.func @short_k_waves
// SM80-NOT: stream_k
// SM80: return
func.func @short_k_waves(%a: tensor<8192x768xf16>, %b: tensor<768x3072xf16>) -> tensor<8192x3072xf16> {
  %0 = kgraph.matmul %a, %b : tensor<8192x768xf16>, tensor<768x3072xf16> -> tensor<8192x3072xf16>
  return %0 : tensor<8192x3072xf16>
}

// -----

// The 64-channel 3x3 conv of ResNet-50 at batch 64: 784 tiles of 256x64 with
// 9 k tiles; 132 blocks in 6 rounds of whole tiles, the last one of 124
// (measured 1.07x 112 blocks of 7 tiles, which were 1.16x the 6-wave
// data-parallel grid on the H100, bench/RESULTS.md S29-2 and S28-1). At
// batch 8 (98 tiles, one wave) it stays data-parallel.
// CHECK-LABEL: func.func @short_k_conv
// CHECK: stages = 4, {{.*}}copy = tma, stream_k = 132>
// CHECK-LABEL: func.func @short_k_conv_one_wave
// CHECK-NOT: stream_k
// CHECK: return
func.func @short_k_conv(%x: tensor<64x56x56x64xf16>, %w: tensor<64x3x3x64xf16>) -> tensor<64x56x56x64xf16> {
  %0 = kgraph.conv2d %x, %w layout = nhwc padding = [1, 1, 1, 1] : tensor<64x56x56x64xf16>, tensor<64x3x3x64xf16> -> tensor<64x56x56x64xf16>
  return %0 : tensor<64x56x56x64xf16>
}
func.func @short_k_conv_one_wave(%x: tensor<8x56x56x64xf16>, %w: tensor<64x3x3x64xf16>) -> tensor<8x56x56x64xf16> {
  %0 = kgraph.conv2d %x, %w layout = nhwc padding = [1, 1, 1, 1] : tensor<8x56x56x64xf16>, tensor<64x3x3x64xf16> -> tensor<8x56x56x64xf16>
  return %0 : tensor<8x56x56x64xf16>
}
