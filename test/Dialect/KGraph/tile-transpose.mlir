// RUN: kgraph-opt %s --split-input-file --verify-diagnostics \
// RUN:   --pass-pipeline='builtin.module(func.func(kgraph-form-kernels),kgraph-tile{target=sm_90a})' | FileCheck %s

// A transpose that moves the innermost dim is a transpose group: 64x64
// tiles, 16-byte vectors (4 x f32), 256 threads, one element of padding.
// CHECK-LABEL: func @square_f32
// CHECK: kgraph.fused transpose (%{{.*}}) {kgraph.config = #kgraph.transpose_config<tile_in = 64, tile_out = 64, vector_width = 4, block_size = 256, smem_padding = 1>}
func.func @square_f32(%x: tensor<8192x8192xf32>) -> tensor<8192x8192xf32> {
  %0 = kgraph.transpose %x, permutation = [1, 0] : tensor<8192x8192xf32>
  return %0 : tensor<8192x8192xf32>
}

// -----

// f16: 8 elements per 16-byte vector, one 4-byte word of padding.
// CHECK-LABEL: func @square_f16
// CHECK: kgraph.fused transpose (%{{.*}}) {kgraph.config = #kgraph.transpose_config<tile_in = 64, tile_out = 64, vector_width = 8, block_size = 256, smem_padding = 2>}
func.func @square_f16(%x: tensor<8192x8192xf16>) -> tensor<8192x8192xf16> {
  %0 = kgraph.transpose %x, permutation = [1, 0] : tensor<8192x8192xf16>
  return %0 : tensor<8192x8192xf16>
}

// -----

// NCHW -> NHWC is [N, C, HW] -> [N, HW, C] (H and W merged): tiled.
// CHECK-LABEL: func @nchw_to_nhwc
// CHECK: kgraph.fused transpose (%{{.*}}) {kgraph.config = #kgraph.transpose_config<tile_in = 64, tile_out = 64, vector_width = 4, block_size = 256, smem_padding = 1>}
func.func @nchw_to_nhwc(%x: tensor<64x256x56x56xf32>) -> tensor<64x56x56x256xf32> {
  %0 = kgraph.transpose %x, permutation = [0, 2, 3, 1] : tensor<64x256x56x56xf32>
  return %0 : tensor<64x56x56x256xf32>
}

// -----

// Odd extents take vector width 1; the tile stays 64x64.
// CHECK-LABEL: func @odd_f32
// CHECK: kgraph.fused transpose (%{{.*}}) {kgraph.config = #kgraph.transpose_config<tile_in = 64, tile_out = 64, vector_width = 1, block_size = 256, smem_padding = 1>}
func.func @odd_f32(%x: tensor<37x1001xf32>) -> tensor<1001x37xf32> {
  %0 = kgraph.transpose %x, permutation = [1, 0] : tensor<37x1001xf32>
  return %0 : tensor<1001x37xf32>
}

// -----

// Booleans move as bytes: a word of padding is 4 of them.
// CHECK-LABEL: func @mask
// CHECK: kgraph.fused transpose (%{{.*}}) {kgraph.config = #kgraph.transpose_config<tile_in = 64, tile_out = 64, vector_width = 1, block_size = 256, smem_padding = 4>}
func.func @mask(%x: tensor<33x65xi1>) -> tensor<65x33xi1> {
  %0 = kgraph.transpose %x, permutation = [1, 0] : tensor<33x65xi1>
  return %0 : tensor<65x33xi1>
}

// -----

// A short side: the tile grows along the long one (4 x 1024 elements).
// CHECK-LABEL: func @rgb
// CHECK: kgraph.fused transpose (%{{.*}}) {kgraph.config = #kgraph.transpose_config<tile_in = 4, tile_out = 256, vector_width = 1, block_size = 256, smem_padding = 1>}
func.func @rgb(%x: tensor<8x224x224x3xf32>) -> tensor<8x3x224x224xf32> {
  %0 = kgraph.transpose %x, permutation = [0, 3, 1, 2] : tensor<8x224x224x3xf32>
  return %0 : tensor<8x3x224x224xf32>
}

// -----

// The head split keeps the innermost dim: an elementwise copy through the
// access map (16-byte vectors along the 64 contiguous elements).
// CHECK-LABEL: func @heads
// CHECK: kgraph.fused elementwise (%{{.*}}) {kgraph.config = #kgraph.elementwise_config<block_size = 256, vector_width = 4, unroll = 1, grid_size = 3072>}
func.func @heads(%x: tensor<8x512x12x64xf32>) -> tensor<8x12x512x64xf32> {
  %0 = kgraph.transpose %x, permutation = [0, 2, 1, 3] : tensor<8x512x12x64xf32>
  return %0 : tensor<8x12x512x64xf32>
}

// -----

// Only size-1 dims move: a copy.
// CHECK-LABEL: func @unit_dims
// CHECK: kgraph.fused elementwise
func.func @unit_dims(%x: tensor<1x37x1xf32>) -> tensor<1x37x1xf32> {
  %0 = kgraph.transpose %x, permutation = [2, 1, 0] : tensor<1x37x1xf32>
  return %0 : tensor<1x37x1xf32>
}

// -----

// A pinned configuration is checked against the group.
func.func @too_wide(%x: tensor<64x64xf32>) -> tensor<64x64xf32> {
  // expected-error @+1 {{'kgraph.fused' op vector_width 8 makes 32-byte accesses; at most 16 bytes}}
  %0 = kgraph.fused (%x) {kgraph.config = #kgraph.transpose_config<tile_in = 64, tile_out = 64, vector_width = 8, block_size = 256, smem_padding = 1>} : (tensor<64x64xf32>) -> tensor<64x64xf32> {
  ^bb0(%a: tensor<64x64xf32>):
    %r = kgraph.transpose %a, permutation = [1, 0] : tensor<64x64xf32>
    kgraph.yield %r : tensor<64x64xf32>
  }
  return %0 : tensor<64x64xf32>
}

// -----

func.func @not_dividing(%x: tensor<37x1001xf32>) -> tensor<1001x37xf32> {
  // expected-error @+1 {{'kgraph.fused' op vector_width 4 does not divide the transposed extents 1001 (input innermost) and 37 (output innermost)}}
  %0 = kgraph.fused (%x) {kgraph.config = #kgraph.transpose_config<tile_in = 64, tile_out = 64, vector_width = 4, block_size = 256, smem_padding = 1>} : (tensor<37x1001xf32>) -> tensor<1001x37xf32> {
  ^bb0(%a: tensor<37x1001xf32>):
    %r = kgraph.transpose %a, permutation = [1, 0] : tensor<37x1001xf32>
    kgraph.yield %r : tensor<1001x37xf32>
  }
  return %0 : tensor<1001x37xf32>
}

// -----

func.func @too_many_steps(%x: tensor<256x256xf32>) -> tensor<256x256xf32> {
  // expected-error @+1 {{'kgraph.fused' op each thread would move 64 vectors per phase; at most 32 (use a larger block or vector_width)}}
  %0 = kgraph.fused (%x) {kgraph.config = #kgraph.transpose_config<tile_in = 128, tile_out = 128, vector_width = 1, block_size = 256, smem_padding = 1>} : (tensor<256x256xf32>) -> tensor<256x256xf32> {
  ^bb0(%a: tensor<256x256xf32>):
    %r = kgraph.transpose %a, permutation = [1, 0] : tensor<256x256xf32>
    kgraph.yield %r : tensor<256x256xf32>
  }
  return %0 : tensor<256x256xf32>
}

// -----

func.func @smem_too_big(%x: tensor<256x256xf32>) -> tensor<256x256xf32> {
  // expected-error @+1 {{'kgraph.fused' op shared tile of 65792 bytes exceeds the 49152 bytes of static shared memory}}
  %0 = kgraph.fused (%x) {kgraph.config = #kgraph.transpose_config<tile_in = 256, tile_out = 64, vector_width = 4, block_size = 1024, smem_padding = 1>} : (tensor<256x256xf32>) -> tensor<256x256xf32> {
  ^bb0(%a: tensor<256x256xf32>):
    %r = kgraph.transpose %a, permutation = [1, 0] : tensor<256x256xf32>
    kgraph.yield %r : tensor<256x256xf32>
  }
  return %0 : tensor<256x256xf32>
}

// -----

// A transpose that keeps its innermost dim has no tiled kernel.
func.func @inner_kept(%x: tensor<2x3x4xf32>) -> tensor<3x2x4xf32> {
  %0 = kgraph.fused (%x) {kgraph.config = #kgraph.transpose_config<tile_in = 64, tile_out = 64, vector_width = 4, block_size = 256, smem_padding = 1>} : (tensor<2x3x4xf32>) -> tensor<3x2x4xf32> {
  ^bb0(%a: tensor<2x3x4xf32>):
    // expected-error @+1 {{'kgraph.transpose' op keeps its innermost dim in place: it is an elementwise copy, not a tiled transpose}}
    %r = kgraph.transpose %a, permutation = [1, 0, 2] : tensor<2x3x4xf32>
    kgraph.yield %r : tensor<3x2x4xf32>
  }
  return %0 : tensor<3x2x4xf32>
}

// -----

// A transpose group holds one transpose and nothing else.
func.func @with_elementwise(%x: tensor<64x64xf32>) -> tensor<64x64xf32> {
  // expected-error @+1 {{'kgraph.fused' op has a 'kgraph.config' for transpose kernels but needs exactly one kgraph.transpose and nothing else}}
  %0 = kgraph.fused (%x) {kgraph.config = #kgraph.transpose_config<tile_in = 64, tile_out = 64, vector_width = 4, block_size = 256, smem_padding = 1>} : (tensor<64x64xf32>) -> tensor<64x64xf32> {
  ^bb0(%a: tensor<64x64xf32>):
    %r = kgraph.transpose %a, permutation = [1, 0] : tensor<64x64xf32>
    %s = kgraph.relu %r : tensor<64x64xf32>
    kgraph.yield %s : tensor<64x64xf32>
  }
  return %0 : tensor<64x64xf32>
}
