// RUN: kgraph-opt %s --split-input-file --verify-diagnostics

// One test per message of MatmulConfigAttr::verify (ElementwiseConfigAttr's
// messages are covered in invalid_fused.mlir).

// expected-error @+1 {{tile sizes must be positive, got [128, 128, 0]}}
func.func @tile_sizes() attributes {kgraph.config = #kgraph.matmul_config<tile_m = 128, tile_n = 128, tile_k = 0, warps_m = 2, warps_n = 2, stages = 4, instruction = mma_sync, instruction_shape = [16, 8, 16], load_width = 8, smem_padding = 8>} {
  return
}

// -----

// expected-error @+1 {{warps_m x warps_n must be in [1, 32], got 8 x 8}}
func.func @warps() attributes {kgraph.config = #kgraph.matmul_config<tile_m = 128, tile_n = 128, tile_k = 32, warps_m = 8, warps_n = 8, stages = 4, instruction = mma_sync, instruction_shape = [16, 8, 16], load_width = 8, smem_padding = 8>} {
  return
}

// -----

// expected-error @+1 {{warps_m x warps_n must be in [1, 32], got 0 x 2}}
func.func @warps_zero() attributes {kgraph.config = #kgraph.matmul_config<tile_m = 128, tile_n = 128, tile_k = 32, warps_m = 0, warps_n = 2, stages = 4, instruction = mma_sync, instruction_shape = [16, 8, 16], load_width = 8, smem_padding = 8>} {
  return
}

// -----

// expected-error @+1 {{tile 128x128 does not split evenly over 2x3 warps}}
func.func @uneven() attributes {kgraph.config = #kgraph.matmul_config<tile_m = 128, tile_n = 128, tile_k = 32, warps_m = 2, warps_n = 3, stages = 4, instruction = mma_sync, instruction_shape = [16, 8, 16], load_width = 8, smem_padding = 8>} {
  return
}

// -----

// expected-error @+1 {{stages must be in [1, 8], got 9}}
func.func @stages() attributes {kgraph.config = #kgraph.matmul_config<tile_m = 128, tile_n = 128, tile_k = 32, warps_m = 2, warps_n = 2, stages = 9, instruction = mma_sync, instruction_shape = [16, 8, 16], load_width = 8, smem_padding = 8>} {
  return
}

// -----

// expected-error @+1 {{instruction_shape must be three positive sizes [m, n, k]}}
func.func @shape_rank() attributes {kgraph.config = #kgraph.matmul_config<tile_m = 128, tile_n = 128, tile_k = 32, warps_m = 2, warps_n = 2, stages = 4, instruction = mma_sync, instruction_shape = [16, 8], load_width = 8, smem_padding = 8>} {
  return
}

// -----

// expected-error @+1 {{instruction_shape must be three positive sizes [m, n, k]}}
func.func @shape_positive() attributes {kgraph.config = #kgraph.matmul_config<tile_m = 128, tile_n = 128, tile_k = 32, warps_m = 2, warps_n = 2, stages = 4, instruction = mma_sync, instruction_shape = [16, 0, 16], load_width = 8, smem_padding = 8>} {
  return
}

// -----

// expected-error @+1 {{warp tile 16x64x32 is not a multiple of the instruction shape [32, 8, 16]}}
func.func @warp_tile() attributes {kgraph.config = #kgraph.matmul_config<tile_m = 32, tile_n = 128, tile_k = 32, warps_m = 2, warps_n = 2, stages = 4, instruction = mma_sync, instruction_shape = [32, 8, 16], load_width = 8, smem_padding = 8>} {
  return
}

// -----

// expected-error @+1 {{fma takes instruction_shape [1, 1, 1]}}
func.func @fma_shape() attributes {kgraph.config = #kgraph.matmul_config<tile_m = 128, tile_n = 128, tile_k = 32, warps_m = 2, warps_n = 2, stages = 4, instruction = fma, instruction_shape = [16, 8, 16], load_width = 8, smem_padding = 8>} {
  return
}

// -----

// expected-error @+1 {{load_width must be a power of two in [1, 16], got 3}}
func.func @load_width() attributes {kgraph.config = #kgraph.matmul_config<tile_m = 128, tile_n = 128, tile_k = 32, warps_m = 2, warps_n = 2, stages = 4, instruction = mma_sync, instruction_shape = [16, 8, 16], load_width = 3, smem_padding = 8>} {
  return
}

// -----

// expected-error @+1 {{smem_padding must be non-negative, got -8}}
func.func @smem_padding() attributes {kgraph.config = #kgraph.matmul_config<tile_m = 128, tile_n = 128, tile_k = 32, warps_m = 2, warps_n = 2, stages = 4, instruction = mma_sync, instruction_shape = [16, 8, 16], load_width = 8, smem_padding = -8>} {
  return
}

// -----

// expected-error @+1 {{wgmma needs warps_m to be a multiple of 4 (a warpgroup is 4 warps along M), got 2}}
func.func @wgmma_warps() attributes {kgraph.config = #kgraph.matmul_config<tile_m = 128, tile_n = 128, tile_k = 64, warps_m = 2, warps_n = 1, stages = 3, instruction = wgmma, instruction_shape = [64, 128, 16], load_width = 8, smem_padding = 0>} {
  return
}

// -----

// expected-error @+1 {{threads_per_row must be a power of two in [1, 1024], got 48}}
func.func @reduce_threads() attributes {kgraph.config = #kgraph.reduce_config<threads_per_row = 48, rows_per_block = 2, vector_width = 1, grid_size = 1>} {
  return
}

// -----

// expected-error @+1 {{warpgroup tile 64x128x64 is not a multiple of the instruction shape [64, 256, 16]}}
func.func @wgmma_tile() attributes {kgraph.config = #kgraph.matmul_config<tile_m = 128, tile_n = 128, tile_k = 64, warps_m = 8, warps_n = 1, stages = 3, instruction = wgmma, instruction_shape = [64, 256, 16], load_width = 8, smem_padding = 0>} {
  return
}

// -----

// expected-error @+1 {{rows_per_block must be in [1, 1024], got 0}}
func.func @reduce_rows() attributes {kgraph.config = #kgraph.reduce_config<threads_per_row = 32, rows_per_block = 0, vector_width = 1, grid_size = 1>} {
  return
}

// -----

// expected-error @+1 {{threads_per_row x rows_per_block must be a multiple of 32 in [32, 1024], got 16 x 3}}
func.func @reduce_block() attributes {kgraph.config = #kgraph.reduce_config<threads_per_row = 16, rows_per_block = 3, vector_width = 1, grid_size = 1>} {
  return
}

// -----

// expected-error @+1 {{threads_per_row x rows_per_block must be a multiple of 32 in [32, 1024], got 256 x 8}}
func.func @reduce_block_big() attributes {kgraph.config = #kgraph.reduce_config<threads_per_row = 256, rows_per_block = 8, vector_width = 1, grid_size = 1>} {
  return
}

// -----

// expected-error @+1 {{vector_width must be a power of two in [1, 16], got 6}}
func.func @reduce_width() attributes {kgraph.config = #kgraph.reduce_config<threads_per_row = 32, rows_per_block = 8, vector_width = 6, grid_size = 1>} {
  return
}

// -----

// expected-error @+1 {{grid_size must be in [1, 2^31 - 1], got 0}}
func.func @reduce_grid() attributes {kgraph.config = #kgraph.reduce_config<threads_per_row = 32, rows_per_block = 8, vector_width = 4, grid_size = 0>} {
  return
}

// -----

// expected-error @+1 {{row_vectors must be non-negative, got -1}}
func.func @reduce_row_vectors() attributes {kgraph.config = #kgraph.reduce_config<threads_per_row = 32, rows_per_block = 8, vector_width = 4, grid_size = 1, row_vectors = -1>} {
  return
}

// -----

// One test per message of StencilConfigAttr::verify.

// expected-error @+1 {{tile_h and tile_w must be positive, got 0 x 32}}
func.func @stencil_tile() attributes {kgraph.config = #kgraph.stencil_config<tile_h = 0, tile_w = 32, block_x = 32, block_y = 8, rows_per_thread = 4>} {
  return
}

// -----

// expected-error @+1 {{block_x and block_y must be positive, got 32 x 0}}
func.func @stencil_block() attributes {kgraph.config = #kgraph.stencil_config<tile_h = 32, tile_w = 32, block_x = 32, block_y = 0, rows_per_thread = 4>} {
  return
}

// -----

// expected-error @+1 {{block_x * block_y must be a multiple of 32 in [32, 1024], got 48}}
func.func @stencil_threads() attributes {kgraph.config = #kgraph.stencil_config<tile_h = 32, tile_w = 32, block_x = 16, block_y = 3, rows_per_thread = 4>} {
  return
}

// -----

// expected-error @+1 {{rows_per_thread must be in [1, 8], got 9}}
func.func @stencil_rows() attributes {kgraph.config = #kgraph.stencil_config<tile_h = 36, tile_w = 32, block_x = 32, block_y = 8, rows_per_thread = 9>} {
  return
}

// -----

// expected-error @+1 {{rows_per_thread (4) must divide tile_h (30)}}
func.func @stencil_rows_divide() attributes {kgraph.config = #kgraph.stencil_config<tile_h = 30, tile_w = 32, block_x = 32, block_y = 8, rows_per_thread = 4>} {
  return
}

// -----

// expected-error @+1 {{cols_per_thread must be 1, 2 or 4, got 3}}
func.func @stencil_cols() attributes {kgraph.config = #kgraph.stencil_config<tile_h = 32, tile_w = 48, block_x = 16, block_y = 8, rows_per_thread = 4, cols_per_thread = 3>} {
  return
}

// -----

// expected-error @+1 {{cols_per_thread (4) must divide tile_w (30)}}
func.func @stencil_cols_divide() attributes {kgraph.config = #kgraph.stencil_config<tile_h = 32, tile_w = 30, block_x = 32, block_y = 8, rows_per_thread = 4, cols_per_thread = 4>} {
  return
}

// -----

// expected-error @+1 {{group_m must be positive, got 0}}
func.func @group_m_zero() attributes {kgraph.config = #kgraph.matmul_config<tile_m = 128, tile_n = 128, tile_k = 32, warps_m = 2, warps_n = 2, stages = 3, instruction = mma_sync, instruction_shape = [16, 8, 16], load_width = 8, smem_padding = 8, group_m = 0>} {
  return
}

// -----

// expected-error @+1 {{copy = tma needs instruction = wgmma, got mma_sync}}
func.func @tma_mma_sync() attributes {kgraph.config = #kgraph.matmul_config<tile_m = 128, tile_n = 128, tile_k = 32, warps_m = 2, warps_n = 2, stages = 3, instruction = mma_sync, instruction_shape = [16, 8, 16], load_width = 8, smem_padding = 8, copy = tma>} {
  return
}

// -----

// expected-error @+1 {{expected copy = cp_async or tma, got bulk}}
func.func @copy_unknown() attributes {kgraph.config = #kgraph.matmul_config<tile_m = 128, tile_n = 128, tile_k = 32, warps_m = 2, warps_n = 2, stages = 3, instruction = mma_sync, instruction_shape = [16, 8, 16], load_width = 8, smem_padding = 8, copy = bulk>} {
  return
}

// -----

// expected-error @+1 {{stream_k needs copy = tma (the persistent warp-specialized main loop)}}
func.func @stream_k_cp_async() attributes {kgraph.config = #kgraph.matmul_config<tile_m = 128, tile_n = 128, tile_k = 64, warps_m = 4, warps_n = 1, stages = 3, instruction = wgmma, instruction_shape = [64, 128, 16], load_width = 8, smem_padding = 0, stream_k = 132>} {
  return
}

// -----

// expected-error @+1 {{stream_k must be in [0, 8192] blocks, got -1}}
func.func @stream_k_negative() attributes {kgraph.config = #kgraph.matmul_config<tile_m = 128, tile_n = 128, tile_k = 64, warps_m = 4, warps_n = 1, stages = 3, instruction = wgmma, instruction_shape = [64, 128, 16], load_width = 8, smem_padding = 0, copy = tma, stream_k = -1>} {
  return
}

// -----

// expected-error @+1 {{stream_k must be in [0, 8192] blocks, got 8193}}
func.func @stream_k_too_many() attributes {kgraph.config = #kgraph.matmul_config<tile_m = 128, tile_n = 128, tile_k = 64, warps_m = 4, warps_n = 1, stages = 3, instruction = wgmma, instruction_shape = [64, 128, 16], load_width = 8, smem_padding = 0, copy = tma, stream_k = 8193>} {
  return
}

// -----

// expected-error @+1 {{stream_k walks the tiles in row-major order; group_m must be 1, got 8}}
func.func @stream_k_group_m() attributes {kgraph.config = #kgraph.matmul_config<tile_m = 128, tile_n = 128, tile_k = 64, warps_m = 4, warps_n = 1, stages = 3, instruction = wgmma, instruction_shape = [64, 128, 16], load_width = 8, smem_padding = 0, group_m = 8, copy = tma, stream_k = 132>} {
  return
}

// -----

// expected-error @+1 {{expected 'group_m', 'copy' or 'stream_k', got 'swizzle'}}
func.func @tail_unknown() attributes {kgraph.config = #kgraph.matmul_config<tile_m = 128, tile_n = 128, tile_k = 32, warps_m = 2, warps_n = 2, stages = 3, instruction = mma_sync, instruction_shape = [16, 8, 16], load_width = 8, smem_padding = 8, swizzle = 1>} {
  return
}

// -----

// expected-error @+1 {{vector_width must be a power of two in [1, 16], got 3}}
func.func @window_width() attributes {kgraph.config = #kgraph.window_config<vector_width = 3, block_x = 8, block_y = 32, grid_size = 1>} {
  return
}

// -----

// expected-error @+1 {{block_x and block_y must be positive, got 8 x 0}}
func.func @window_block() attributes {kgraph.config = #kgraph.window_config<vector_width = 8, block_x = 8, block_y = 0, grid_size = 1>} {
  return
}

// -----

// expected-error @+1 {{block_x * block_y must be a multiple of 32 in [32, 1024], got 24}}
func.func @window_threads() attributes {kgraph.config = #kgraph.window_config<vector_width = 8, block_x = 8, block_y = 3, grid_size = 1>} {
  return
}

// -----

// expected-error @+1 {{grid_size must be in [1, 2^31 - 1], got 0}}
func.func @window_grid() attributes {kgraph.config = #kgraph.window_config<vector_width = 8, block_x = 8, block_y = 32, grid_size = 0>} {
  return
}

// -----

// expected-error @+1 {{strip must be in [1, 16], got 17}}
func.func @window_strip() attributes {kgraph.config = #kgraph.window_config<vector_width = 8, block_x = 8, block_y = 32, grid_size = 1, strip = 17>} {
  return
}
