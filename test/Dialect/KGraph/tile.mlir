// RUN: kgraph-opt %s --split-input-file --verify-diagnostics \
// RUN:   --pass-pipeline='builtin.module(func.func(kgraph-form-kernels),kgraph-tile{target=sm_80})' | FileCheck %s
// RUN: kgraph-opt %s --split-input-file --verify-diagnostics \
// RUN:   --pass-pipeline='builtin.module(func.func(kgraph-form-kernels),kgraph-tile{target=sm_90a})' | FileCheck %s --check-prefix=H200

// The target is recorded on the module; 16-byte vectors of the widest type;
// one vector per thread: ceil(1000 / 4 / 256) = 1 block.
// CHECK: module attributes {kgraph.target = "sm_80"}
// H200: module attributes {kgraph.target = "sm_90a"}
// CHECK-LABEL: func @f32
// CHECK: kgraph.fused{{.*}}{kgraph.config = #kgraph.elementwise_config<block_size = 256, vector_width = 4, unroll = 1, grid_size = 1>}
func.func @f32(%a: tensor<1000xf32>) -> tensor<1000xf32> {
  %0 = kgraph.exp %a : tensor<1000xf32>
  return %0 : tensor<1000xf32>
}

// -----

// f16 moves 8 elements per 16 bytes: ceil(1048576 / 8 / 256) = 512 blocks.
// CHECK-LABEL: func @f16
// CHECK: vector_width = 8, unroll = 1, grid_size = 512
func.func @f16(%a: tensor<1024x1024xf16>) -> tensor<1024x1024xf16> {
  %0 = kgraph.relu %a : tensor<1024x1024xf16>
  return %0 : tensor<1024x1024xf16>
}

// -----

// A cast is sized by its widest side (f32): 4 elements per step.
// CHECK-LABEL: func @cast
// CHECK: vector_width = 4
func.func @cast(%a: tensor<4096xi8>) -> tensor<4096xf32> {
  %0 = kgraph.cast %a : tensor<4096xi8> to tensor<4096xf32>
  return %0 : tensor<4096xf32>
}

// -----

// Huge tensors are capped at 64 waves of resident blocks and use a
// grid-stride loop: sm_80 has 108 SMs x 8 blocks of 256 threads, so
// 64 * 864 = 55296 blocks; the H200 (sm_90a, 132 SMs) gets 64 * 1056 = 67584.
// CHECK-LABEL: func @huge
// CHECK: grid_size = 55296
// H200-LABEL: func @huge
// H200: grid_size = 67584
func.func @huge(%a: tensor<268435456xf32>) -> tensor<268435456xf32> {
  %0 = kgraph.neg %a : tensor<268435456xf32>
  return %0 : tensor<268435456xf32>
}

// -----

// A configuration already in the IR is respected.
// CHECK-LABEL: func @pinned
// CHECK: #kgraph.elementwise_config<block_size = 128, vector_width = 2, unroll = 3, grid_size = 7>
func.func @pinned(%a: tensor<64xf32>) -> tensor<64xf32> {
  %0 = kgraph.fused (%a) {kgraph.config = #kgraph.elementwise_config<block_size = 128, vector_width = 2, unroll = 3, grid_size = 7>} : (tensor<64xf32>) -> tensor<64xf32> {
  ^bb0(%x: tensor<64xf32>):
    %r = kgraph.tanh %x : tensor<64xf32>
    kgraph.yield %r : tensor<64xf32>
  }
  return %0 : tensor<64xf32>
}

// -----

// Matmul groups are covered by tile-matmul*.mlir, stencil groups and
// pooling by tile-stencil.mlir, reductions by tile-reduce.mlir, transposes
// by tile-transpose.mlir. A concat along an inner axis is an elementwise
// group over its result, sized like any other (32 f32 elements: 1 block).
// CHECK-LABEL: func @concat
// CHECK: kgraph.fused elementwise {{.*}}{kgraph.config = #kgraph.elementwise_config<block_size = 256, vector_width = 4, unroll = 1, grid_size = 1>}
// CHECK-NEXT: ^bb0
// CHECK-NEXT: kgraph.concat
func.func @concat(%x: tensor<4x3xf32>, %y: tensor<4x5xf32>) -> tensor<4x8xf32> {
  %0 = kgraph.concat %x, %y axis = 1 : tensor<4x3xf32>, tensor<4x5xf32>
  return %0 : tensor<4x8xf32>
}

// -----

// A Winograd input transform alone in its group computes whole tiles: the
// threads step over one point's [C, T] slice (64 x 3136 here), W lanes each
// holding all 36 points: W * 36 <= 72 gives W = 2, 100352 steps, 392 blocks.
// CHECK-LABEL: func @winograd_input_tiles
// CHECK: #kgraph.elementwise_config<block_size = 256, vector_width = 2, unroll = 1, grid_size = 392>
func.func @winograd_input_tiles(%x: tensor<64x64x28x28xf32>) -> tensor<36x64x3136xf32> {
  %0 = kgraph.winograd_input %x padding = [1, 1, 1, 1] : tensor<64x64x28x28xf32> -> tensor<36x64x3136xf32>
  return %0 : tensor<36x64x3136xf32>
}

// -----

// An odd innermost dim (9 tiles) keeps one lane per thread.
// CHECK-LABEL: func @winograd_input_odd_tiles
// CHECK: #kgraph.elementwise_config<block_size = 256, vector_width = 1, unroll = 1, grid_size = 1>
func.func @winograd_input_odd_tiles(%x: tensor<1x16x10x10xf32>) -> tensor<36x16x9xf32> {
  %0 = kgraph.winograd_input %x padding = [1, 1, 1, 1] : tensor<1x16x10x10xf32> -> tensor<36x16x9xf32>
  return %0 : tensor<36x16x9xf32>
}

// -----

func.func @winograd_input_pinned_width(%x: tensor<1x16x10x10xf32>) -> tensor<36x16x9xf32> {
  // expected-error @+1 {{'kgraph.fused' op vector_width 2 does not divide the innermost dim (9) of the kgraph.winograd_input result, whose tiles a thread computes whole}}
  %0 = kgraph.fused (%x) {kgraph.config = #kgraph.elementwise_config<block_size = 128, vector_width = 2, unroll = 1, grid_size = 2>} : (tensor<1x16x10x10xf32>) -> tensor<36x16x9xf32> {
  ^bb0(%a: tensor<1x16x10x10xf32>):
    %r = kgraph.winograd_input %a padding = [1, 1, 1, 1] : tensor<1x16x10x10xf32> -> tensor<36x16x9xf32>
    kgraph.yield %r : tensor<36x16x9xf32>
  }
  return %0 : tensor<36x16x9xf32>
}

// -----

// So does a filter transform: the threads step over one point's [F, C]
// slice (128 x 128), two channels each.
// CHECK-LABEL: func @winograd_filter_tiles
// CHECK: #kgraph.elementwise_config<block_size = 256, vector_width = 2, unroll = 1, grid_size = 32>
func.func @winograd_filter_tiles(%w: tensor<128x128x3x3xf32>) -> tensor<36x128x128xf32> {
  %0 = kgraph.winograd_filter %w : tensor<128x128x3x3xf32> -> tensor<36x128x128xf32>
  return %0 : tensor<36x128x128xf32>
}
