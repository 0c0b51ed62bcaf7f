// RUN: kgraph-opt %s --split-input-file --verify-diagnostics \
// RUN:   --pass-pipeline='builtin.module(func.func(kgraph-form-kernels),kgraph-tile{target=sm_90a})'

// Rows of 700 f16 (1400 bytes) are no tensor-map stride.
func.func @misaligned(%a: tensor<256x320xf16>, %b: tensor<320x700xf16>) -> tensor<256x700xf32> {
  // expected-error @+1 {{'kgraph.fused' op copy = tma needs rows of 16-byte multiples (tensor-map strides), but rhs rows are 700 elements (N) of 2 bytes}}
  %0 = kgraph.fused (%a, %b) {kgraph.config = #kgraph.matmul_config<tile_m = 128, tile_n = 128, tile_k = 64, warps_m = 8, warps_n = 1, stages = 4, instruction = wgmma, instruction_shape = [64, 128, 16], load_width = 4, smem_padding = 0, copy = tma>} : (tensor<256x320xf16>, tensor<320x700xf16>) -> tensor<256x700xf32> {
  ^bb0(%x: tensor<256x320xf16>, %y: tensor<320x700xf16>):
    %r = kgraph.matmul %x, %y : tensor<256x320xf16>, tensor<320x700xf16> -> tensor<256x700xf32>
    kgraph.yield %r : tensor<256x700xf32>
  }
  return %0 : tensor<256x700xf32>
}

// -----

func.func @misaligned_lhs(%a: tensor<256x324xf16>, %b: tensor<324x256xf16>) -> tensor<256x256xf32> {
  // expected-error @+1 {{'kgraph.fused' op copy = tma needs rows of 16-byte multiples (tensor-map strides), but lhs rows are 324 elements (K) of 2 bytes}}
  %0 = kgraph.fused (%a, %b) {kgraph.config = #kgraph.matmul_config<tile_m = 128, tile_n = 128, tile_k = 64, warps_m = 8, warps_n = 1, stages = 4, instruction = wgmma, instruction_shape = [64, 128, 16], load_width = 4, smem_padding = 0, copy = tma>} : (tensor<256x324xf16>, tensor<324x256xf16>) -> tensor<256x256xf32> {
  ^bb0(%x: tensor<256x324xf16>, %y: tensor<324x256xf16>):
    %r = kgraph.matmul %x, %y : tensor<256x324xf16>, tensor<324x256xf16> -> tensor<256x256xf32>
    kgraph.yield %r : tensor<256x256xf32>
  }
  return %0 : tensor<256x256xf32>
}

// -----

// TMA copies bytes: a prologue cast cannot ride along.
func.func @prologue(%a: tensor<256x256xf32>, %b: tensor<256x256xf16>) -> tensor<256x256xf32> {
  // expected-error @+1 {{'kgraph.fused' op copy = tma cannot load an operand with a prologue (cast or scale): TMA copies bytes unchanged}}
  %0 = kgraph.fused (%a, %b) {kgraph.config = #kgraph.matmul_config<tile_m = 128, tile_n = 128, tile_k = 64, warps_m = 8, warps_n = 1, stages = 4, instruction = wgmma, instruction_shape = [64, 128, 16], load_width = 4, smem_padding = 0, copy = tma>} : (tensor<256x256xf32>, tensor<256x256xf16>) -> tensor<256x256xf32> {
  ^bb0(%x: tensor<256x256xf32>, %y: tensor<256x256xf16>):
    %c = kgraph.cast %x : tensor<256x256xf32> to tensor<256x256xf16>
    %r = kgraph.matmul %c, %y : tensor<256x256xf16>, tensor<256x256xf16> -> tensor<256x256xf32>
    kgraph.yield %r : tensor<256x256xf32>
  }
  return %0 : tensor<256x256xf32>
}

// -----

// An nchw input has no pixel of contiguous channels for im2col.
func.func @conv_nchw(%x: tensor<1x64x16x16xf16>, %w: tensor<64x64x3x3xf16>) -> tensor<1x64x16x16xf32> {
  // expected-error @+1 {{'kgraph.fused' op copy = tma loads a conv2d's input only in nhwc layout with one group (TMA's im2col mode gathers whole pixels)}}
  %0 = kgraph.fused (%x, %w) {kgraph.config = #kgraph.matmul_config<tile_m = 128, tile_n = 64, tile_k = 64, warps_m = 8, warps_n = 1, stages = 3, instruction = wgmma, instruction_shape = [64, 64, 16], load_width = 8, smem_padding = 0, copy = tma>} : (tensor<1x64x16x16xf16>, tensor<64x64x3x3xf16>) -> tensor<1x64x16x16xf32> {
  ^bb0(%a: tensor<1x64x16x16xf16>, %b: tensor<64x64x3x3xf16>):
    %r = kgraph.conv2d %a, %b layout = nchw padding = [1, 1, 1, 1] : tensor<1x64x16x16xf16>, tensor<64x64x3x3xf16> -> tensor<1x64x16x16xf32>
    kgraph.yield %r : tensor<1x64x16x16xf32>
  }
  return %0 : tensor<1x64x16x16xf32>
}

// -----

// Grouped convs are one GEMM per group over a channel slice.
func.func @conv_groups(%x: tensor<1x16x16x128xf16>, %w: tensor<64x3x3x64xf16>) -> tensor<1x16x16x64xf32> {
  // expected-error @+1 {{'kgraph.fused' op copy = tma loads a conv2d's input only in nhwc layout with one group (TMA's im2col mode gathers whole pixels)}}
  %0 = kgraph.fused (%x, %w) {kgraph.config = #kgraph.matmul_config<tile_m = 128, tile_n = 64, tile_k = 64, warps_m = 8, warps_n = 1, stages = 3, instruction = wgmma, instruction_shape = [64, 64, 16], load_width = 8, smem_padding = 0, copy = tma>} : (tensor<1x16x16x128xf16>, tensor<64x3x3x64xf16>) -> tensor<1x16x16x64xf32> {
  ^bb0(%a: tensor<1x16x16x128xf16>, %b: tensor<64x3x3x64xf16>):
    %r = kgraph.conv2d %a, %b layout = nhwc padding = [1, 1, 1, 1] groups = 2 : tensor<1x16x16x128xf16>, tensor<64x3x3x64xf16> -> tensor<1x16x16x64xf32>
    kgraph.yield %r : tensor<1x16x16x64xf32>
  }
  return %0 : tensor<1x16x16x64xf32>
}

// -----

// A k tile must lie in one filter tap.
func.func @conv_tile_k(%x: tensor<1x16x16x64xf16>, %w: tensor<64x3x3x64xf16>) -> tensor<1x16x16x64xf32> {
  // expected-error @+1 {{'kgraph.fused' op copy = tma loads a conv2d's input one filter tap at a time (TMA's im2col mode): tile_k 128 must divide its 64 channels}}
  %0 = kgraph.fused (%x, %w) {kgraph.config = #kgraph.matmul_config<tile_m = 128, tile_n = 64, tile_k = 128, warps_m = 8, warps_n = 1, stages = 3, instruction = wgmma, instruction_shape = [64, 64, 16], load_width = 8, smem_padding = 0, copy = tma>} : (tensor<1x16x16x64xf16>, tensor<64x3x3x64xf16>) -> tensor<1x16x16x64xf32> {
  ^bb0(%a: tensor<1x16x16x64xf16>, %b: tensor<64x3x3x64xf16>):
    %r = kgraph.conv2d %a, %b layout = nhwc padding = [1, 1, 1, 1] : tensor<1x16x16x64xf16>, tensor<64x3x3x64xf16> -> tensor<1x16x16x64xf32>
    kgraph.yield %r : tensor<1x16x16x64xf32>
  }
  return %0 : tensor<1x16x16x64xf32>
}

// -----

// im2col walks the input with the conv's strides, at most 8.
func.func @conv_stride(%x: tensor<1x64x64x64xf16>, %w: tensor<64x1x1x64xf16>) -> tensor<1x8x8x64xf32> {
  // expected-error @+1 {{'kgraph.fused' op copy = tma walks a conv2d's input with its strides (TMA's im2col mode), at most 8; the strides are 9x9}}
  %0 = kgraph.fused (%x, %w) {kgraph.config = #kgraph.matmul_config<tile_m = 128, tile_n = 64, tile_k = 64, warps_m = 8, warps_n = 1, stages = 3, instruction = wgmma, instruction_shape = [64, 64, 16], load_width = 8, smem_padding = 0, copy = tma>} : (tensor<1x64x64x64xf16>, tensor<64x1x1x64xf16>) -> tensor<1x8x8x64xf32> {
  ^bb0(%a: tensor<1x64x64x64xf16>, %b: tensor<64x1x1x64xf16>):
    %r = kgraph.conv2d %a, %b layout = nhwc strides = [9, 9] : tensor<1x64x64x64xf16>, tensor<64x1x1x64xf16> -> tensor<1x8x8x64xf32>
    kgraph.yield %r : tensor<1x8x8x64xf32>
  }
  return %0 : tensor<1x8x8x64xf32>
}

// -----

// The bounding box corners of a 4-D im2col map are within [-128, 127].
func.func @conv_corner(%x: tensor<1x8x8x64xf16>, %w: tensor<64x3x3x64xf16>) -> tensor<1x266x266x64xf32> {
  // expected-error @+1 {{'kgraph.fused' op copy = tma gathers a conv2d's input through an im2col tensor map, whose corners and filter offsets lie in [-128, 127]; this conv2d needs corners [-130, -130] to [128, 128] and offsets up to [2, 2]}}
  %0 = kgraph.fused (%x, %w) {kgraph.config = #kgraph.matmul_config<tile_m = 128, tile_n = 64, tile_k = 64, warps_m = 8, warps_n = 1, stages = 3, instruction = wgmma, instruction_shape = [64, 64, 16], load_width = 8, smem_padding = 0, copy = tma>} : (tensor<1x8x8x64xf16>, tensor<64x3x3x64xf16>) -> tensor<1x266x266x64xf32> {
  ^bb0(%a: tensor<1x8x8x64xf16>, %b: tensor<64x3x3x64xf16>):
    %r = kgraph.conv2d %a, %b layout = nhwc padding = [130, 130, 130, 130] : tensor<1x8x8x64xf16>, tensor<64x3x3x64xf16> -> tensor<1x266x266x64xf32>
    kgraph.yield %r : tensor<1x266x266x64xf32>
  }
  return %0 : tensor<1x266x266x64xf32>
}

// -----

// Stored A^T tiles of tile_k rows: 320 rows do not split into 256-row boxes.
func.func @box(%a: tensor<640x512xf16>, %b: tensor<640x512xf16>) -> tensor<512x512xf32> {
  // expected-error @+1 {{'kgraph.fused' op copy = tma loads boxes of at most 256 rows: stored tile rows 320 are not a multiple of it}}
  %0 = kgraph.fused (%a, %b) {kgraph.config = #kgraph.matmul_config<tile_m = 64, tile_n = 64, tile_k = 320, warps_m = 4, warps_n = 1, stages = 2, instruction = wgmma, instruction_shape = [64, 64, 16], load_width = 8, smem_padding = 0, copy = tma>} : (tensor<640x512xf16>, tensor<640x512xf16>) -> tensor<512x512xf32> {
  ^bb0(%x: tensor<640x512xf16>, %y: tensor<640x512xf16>):
    %r = kgraph.matmul %x, %y {transpose_a} : tensor<640x512xf16>, tensor<640x512xf16> -> tensor<512x512xf32>
    kgraph.yield %r : tensor<512x512xf32>
  }
  return %0 : tensor<512x512xf32>
}

// -----

// M = 2^31 rows: past a tensor map's 32-bit box coordinates. (Only the type
// system sees the shape; nothing is allocated at compile time.)
func.func @coords(%a: tensor<2147483648x64xf16>, %b: tensor<64x128xf16>) -> tensor<2147483648x128xf32> {
  // expected-error @+1 {{'kgraph.fused' op copy = tma addresses tensors with 32-bit coordinates; a dimension reaches 2^31}}
  %0 = kgraph.fused (%a, %b) {kgraph.config = #kgraph.matmul_config<tile_m = 128, tile_n = 128, tile_k = 64, warps_m = 8, warps_n = 1, stages = 4, instruction = wgmma, instruction_shape = [64, 128, 16], load_width = 8, smem_padding = 0, copy = tma>} : (tensor<2147483648x64xf16>, tensor<64x128xf16>) -> tensor<2147483648x128xf32> {
  ^bb0(%x: tensor<2147483648x64xf16>, %y: tensor<64x128xf16>):
    %r = kgraph.matmul %x, %y : tensor<2147483648x64xf16>, tensor<64x128xf16> -> tensor<2147483648x128xf32>
    kgraph.yield %r : tensor<2147483648x128xf32>
  }
  return %0 : tensor<2147483648x128xf32>
}

// -----

// A batch of 2^31 (rank-3 maps: the batch is a coordinate too).
func.func @batch_coords(%a: tensor<2147483648x64x64xf16>, %b: tensor<2147483648x64x128xf16>) -> tensor<2147483648x64x128xf32> {
  // expected-error @+1 {{'kgraph.fused' op copy = tma addresses tensors with 32-bit coordinates; a dimension reaches 2^31}}
  %0 = kgraph.fused (%a, %b) {kgraph.config = #kgraph.matmul_config<tile_m = 64, tile_n = 128, tile_k = 64, warps_m = 4, warps_n = 1, stages = 4, instruction = wgmma, instruction_shape = [64, 128, 16], load_width = 8, smem_padding = 0, copy = tma>} : (tensor<2147483648x64x64xf16>, tensor<2147483648x64x128xf16>) -> tensor<2147483648x64x128xf32> {
  ^bb0(%x: tensor<2147483648x64x64xf16>, %y: tensor<2147483648x64x128xf16>):
    %r = kgraph.matmul %x, %y : tensor<2147483648x64x64xf16>, tensor<2147483648x64x128xf16> -> tensor<2147483648x64x128xf32>
    kgraph.yield %r : tensor<2147483648x64x128xf32>
  }
  return %0 : tensor<2147483648x64x128xf32>
}

// -----

// The element-type table has no tensor-map data type for i8 (the launch plan
// names maps of f16, bf16 and f32).
func.func @tma_i8(%a: tensor<512x512xi8>, %b: tensor<512x512xi8>) -> tensor<512x512xi32> {
  // expected-error @+1 {{'kgraph.fused' op copy = tma has no tensor-map data type for 'i8' operands}}
  %0 = kgraph.fused (%a, %b) {kgraph.config = #kgraph.matmul_config<tile_m = 128, tile_n = 128, tile_k = 64, warps_m = 8, warps_n = 1, stages = 3, instruction = wgmma, instruction_shape = [64, 128, 32], load_width = 16, smem_padding = 0, copy = tma>} : (tensor<512x512xi8>, tensor<512x512xi8>) -> tensor<512x512xi32> {
  ^bb0(%x: tensor<512x512xi8>, %y: tensor<512x512xi8>):
    %r = kgraph.matmul %x, %y : tensor<512x512xi8>, tensor<512x512xi8> -> tensor<512x512xi32>
    kgraph.yield %r : tensor<512x512xi32>
  }
  return %0 : tensor<512x512xi32>
}

// -----

// Four consumer warpgroups (16 warps): 512 threads at setmaxnreg's 232
// registers and the producer's 128 at 40 need more than the 65536 registers
// of an SM; the kernel would wait forever in setmaxnreg.inc (it did on the
// H200, found by kgraph.tune).
func.func @tma_registers(%a: tensor<1024x1024xf16>, %b: tensor<1024x1024xf16>) -> tensor<1024x1024xf16> {
  // expected-error @+1 {{'kgraph.fused' op copy = tma raises each of the 512 consumer threads to 232 registers (setmaxnreg) beside the producer warpgroup's 40, more than the 65536 registers of an sm_90a SM: the block would wait forever; use at most 8 consumer warps}}
  %0 = kgraph.fused (%a, %b) {kgraph.config = #kgraph.matmul_config<tile_m = 128, tile_n = 256, tile_k = 64, warps_m = 4, warps_n = 4, stages = 4, instruction = wgmma, instruction_shape = [64, 64, 16], load_width = 8, smem_padding = 0, copy = tma>} : (tensor<1024x1024xf16>, tensor<1024x1024xf16>) -> tensor<1024x1024xf16> {
  ^bb0(%x: tensor<1024x1024xf16>, %y: tensor<1024x1024xf16>):
    %r = kgraph.matmul %x, %y : tensor<1024x1024xf16>, tensor<1024x1024xf16> -> tensor<1024x1024xf16>
    kgraph.yield %r : tensor<1024x1024xf16>
  }
  return %0 : tensor<1024x1024xf16>
}
