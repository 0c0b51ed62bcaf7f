// RUN: kgraph-opt %s --split-input-file --verify-diagnostics \
// RUN:   --pass-pipeline='builtin.module(func.func(kgraph-form-kernels),kgraph-tile{target=sm_80})' | FileCheck %s
// RUN: kgraph-opt %s --split-input-file --verify-diagnostics \
// RUN:   --pass-pipeline='builtin.module(func.func(kgraph-form-kernels),kgraph-tile{target=sm_90a})' | FileCheck %s --check-prefix=H200

// Long contiguous rows. The H200 has more warp slots (132 * 2048 / 32 =
// 8448) than rows: a block per row; 8192 f32 per row in 16-byte loads is
// 2048 loads, 8 per thread: 256 threads. The A100 has fewer (6912): a warp
// per row, 8 rows per block.
// CHECK-LABEL: func @sum_squares
// CHECK: #kgraph.reduce_config<threads_per_row = 32, rows_per_block = 8, vector_width = 4, grid_size = 1024>
// H200-LABEL: func @sum_squares
// H200: #kgraph.reduce_config<threads_per_row = 256, rows_per_block = 1, vector_width = 4, grid_size = 8192>
func.func @sum_squares(%x: tensor<8192x8192xf32>) -> tensor<8192xf32> {
  %0 = kgraph.fused (%x) : (tensor<8192x8192xf32>) -> tensor<8192xf32> {
  ^bb0(%a: tensor<8192x8192xf32>):
    %sq = kgraph.mul %a, %a : tensor<8192x8192xf32>, tensor<8192x8192xf32>
    %s = kgraph.reduce sum %sq axes = [1] : tensor<8192x8192xf32>
    kgraph.yield %s : tensor<8192xf32>
  }
  return %0 : tensor<8192xf32>
}

// -----

// Enough rows to give every warp slot its own (sm_80: 108 * 2048 / 32 =
// 6912): at most a warp per row, 8 rows per 256-thread block.
// CHECK-LABEL: func @many_rows
// CHECK: #kgraph.reduce_config<threads_per_row = 32, rows_per_block = 8, vector_width = 4, grid_size = 1024>
func.func @many_rows(%x: tensor<8192x4096xf32>) -> tensor<8192xf32> {
  %0 = kgraph.reduce sum %x axes = [1] : tensor<8192x4096xf32>
  return %0 : tensor<8192xf32>
}

// -----

// An odd row length gets scalar loads: 1001 / 8 loads -> 128 threads.
// CHECK-LABEL: func @odd_rows
// CHECK: #kgraph.reduce_config<threads_per_row = 128, rows_per_block = 2, vector_width = 1, grid_size = 19>
func.func @odd_rows(%x: tensor<37x1001xf32>) -> tensor<37xf32> {
  %0 = kgraph.reduce sum %x axes = [1] : tensor<37x1001xf32>
  return %0 : tensor<37xf32>
}

// -----

// Short rows: a few threads per row (16 f16 in 2 loads -> 2 threads).
// CHECK-LABEL: func @short_rows
// CHECK: #kgraph.reduce_config<threads_per_row = 2, rows_per_block = 128, vector_width = 8, grid_size = 16>
func.func @short_rows(%x: tensor<2048x16xf16>) -> tensor<2048xf16> {
  %0 = kgraph.reduce max %x axes = [1] : tensor<2048x16xf16>
  return %0 : tensor<2048xf16>
}

// -----

// A strided reduction (axis 0) with short columns: a thread per output
// where its threads (an output each, 9001 odd: no vectors) fill two warps
// per SM (108 * 64 on sm_80)...
// CHECK-LABEL: func @columns
// CHECK: #kgraph.reduce_config<threads_per_row = 1, rows_per_block = 256, vector_width = 1, grid_size = 36>
func.func @columns(%x: tensor<37x9001xf16>) -> tensor<9001xf16> {
  %0 = kgraph.reduce max %x axes = [0] : tensor<37x9001xf16>
  return %0 : tensor<9001xf16>
}

// -----

// ... else threads share each output's column (8 threads for 37 elements),
// so more than 1001 threads load at once.
// CHECK-LABEL: func @few_columns
// CHECK: #kgraph.reduce_config<threads_per_row = 8, rows_per_block = 32, vector_width = 1, grid_size = 32>
func.func @few_columns(%x: tensor<37x1001xf16>) -> tensor<1001xf16> {
  %0 = kgraph.reduce max %x axes = [0] : tensor<37x1001xf16>
  return %0 : tensor<1001xf16>
}

// -----

// A batch-1 CNN's global average pool (2048 outputs over 7 x 7 pixels): 8
// threads per output, 64 blocks, not one block of 256 threads walking 49
// pixels each.
// CHECK-LABEL: func @global_average_pool_b1
// CHECK: #kgraph.reduce_config<threads_per_row = 8, rows_per_block = 32, vector_width = 1, grid_size = 64>
func.func @global_average_pool_b1(%x: tensor<1x7x7x2048xf16>) -> tensor<1x2048xf16> {
  %0 = kgraph.reduce mean %x axes = [1, 2] : tensor<1x7x7x2048xf16>
  return %0 : tensor<1x2048xf16>
}

// -----

// Many outputs, innermost extent divisible by 4: W = 4 outputs per thread.
// 65536 / 4 / 256 = 64 blocks.
// CHECK-LABEL: func @wide_columns
// CHECK: #kgraph.reduce_config<threads_per_row = 1, rows_per_block = 256, vector_width = 4, grid_size = 64>
func.func @wide_columns(%x: tensor<512x65536xf32>) -> tensor<65536xf32> {
  %0 = kgraph.reduce sum %x axes = [0] : tensor<512x65536xf32>
  return %0 : tensor<65536xf32>
}

// -----

// Few outputs with long strided columns: threads share a column (scalar
// loads, no vectors across a strided row).
// CHECK-LABEL: func @long_columns
// CHECK: #kgraph.reduce_config<threads_per_row = 256, rows_per_block = 1, vector_width = 1, grid_size = 3>
func.func @long_columns(%x: tensor<2048x3xi32>) -> tensor<3xi32> {
  %0 = kgraph.reduce sum %x axes = [0] : tensor<2048x3xi32>
  return %0 : tensor<3xi32>
}

// -----

// Two inner axes merge into one row of 5 * 1024 bf16 (W = 8); keep_dims
// does not change the mapping.
// CHECK-LABEL: func @mean_inner
// CHECK: #kgraph.reduce_config<threads_per_row = 128, rows_per_block = 2, vector_width = 8, grid_size = 2>
func.func @mean_inner(%x: tensor<3x5x1024xbf16>) -> tensor<3x1x1xbf16> {
  %0 = kgraph.reduce mean %x axes = [1, 2] keep_dims : tensor<3x5x1024xbf16>
  return %0 : tensor<3x1x1xbf16>
}

// -----

// Everything into one value: one block of 1024 threads.
// CHECK-LABEL: func @all
// CHECK: #kgraph.reduce_config<threads_per_row = 1024, rows_per_block = 1, vector_width = 1, grid_size = 1>
func.func @all(%x: tensor<4097xi32>) -> tensor<i32> {
  %0 = kgraph.reduce sum %x axes = [0] : tensor<4097xi32>
  return %0 : tensor<i32>
}

// -----

// A pinned configuration is kept.
// CHECK-LABEL: func @pinned
// CHECK: #kgraph.reduce_config<threads_per_row = 32, rows_per_block = 1, vector_width = 2, grid_size = 7>
func.func @pinned(%x: tensor<16x64xf32>) -> tensor<16xf32> {
  %0 = kgraph.fused (%x) {kgraph.config = #kgraph.reduce_config<threads_per_row = 32, rows_per_block = 1, vector_width = 2, grid_size = 7>} : (tensor<16x64xf32>) -> tensor<16xf32> {
  ^bb0(%a: tensor<16x64xf32>):
    %s = kgraph.reduce sum %a axes = [1] : tensor<16x64xf32>
    kgraph.yield %s : tensor<16xf32>
  }
  return %0 : tensor<16xf32>
}

// -----

// Multi-reduction groups hold their rows in registers: about 16 elements
// per thread, a warp per row (up to 32 elements) when the rows fill half
// the warp slots. A softmax over 4096 f32: 4096 rows fill half of the
// A100's 6912 slots (128 threads of 8 vectors of 4) but not of the H200's
// 8448 (256 threads of 4 vectors).
// CHECK-LABEL: func @softmax_rows
// CHECK: #kgraph.reduce_config<threads_per_row = 128, rows_per_block = 2, vector_width = 4, grid_size = 2048, row_vectors = 8>
// H200-LABEL: func @softmax_rows
// H200: #kgraph.reduce_config<threads_per_row = 256, rows_per_block = 1, vector_width = 4, grid_size = 4096, row_vectors = 4>
func.func @softmax_rows(%x: tensor<4096x4096xf32>) -> tensor<4096x4096xf32> {
  %0 = kgraph.fused (%x) : (tensor<4096x4096xf32>) -> tensor<4096x4096xf32> {
  ^bb0(%a: tensor<4096x4096xf32>):
    %m = kgraph.reduce max %a axes = [1] keep_dims : tensor<4096x4096xf32>
    %d = kgraph.sub %a, %m : tensor<4096x4096xf32>, tensor<4096x1xf32>
    %e = kgraph.exp %d : tensor<4096x4096xf32>
    %s = kgraph.reduce sum %e axes = [1] keep_dims : tensor<4096x4096xf32>
    %o = kgraph.div %e, %s : tensor<4096x4096xf32>, tensor<4096x1xf32>
    kgraph.yield %o : tensor<4096x4096xf32>
  }
  return %0 : tensor<4096x4096xf32>
}

// -----

// A layer norm over 8192 rows of 1024 f32: a warp per row, 8 vectors of 4
// per thread, on both.
// CHECK-LABEL: func @layer_norm_rows
// CHECK: #kgraph.reduce_config<threads_per_row = 32, rows_per_block = 8, vector_width = 4, grid_size = 1024, row_vectors = 8>
// H200-LABEL: func @layer_norm_rows
// H200: #kgraph.reduce_config<threads_per_row = 32, rows_per_block = 8, vector_width = 4, grid_size = 1024, row_vectors = 8>
func.func @layer_norm_rows(%x: tensor<8192x1024xf32>, %g: tensor<1024xf32>) -> tensor<8192x1024xf32> {
  %0 = kgraph.fused (%x, %g) : (tensor<8192x1024xf32>, tensor<1024xf32>) -> tensor<8192x1024xf32> {
  ^bb0(%a: tensor<8192x1024xf32>, %b: tensor<1024xf32>):
    %eps = arith.constant dense<1.0e-5> : tensor<f32>
    %mu = kgraph.reduce mean %a axes = [1] keep_dims : tensor<8192x1024xf32>
    %d = kgraph.sub %a, %mu : tensor<8192x1024xf32>, tensor<8192x1xf32>
    %sq = kgraph.mul %d, %d : tensor<8192x1024xf32>, tensor<8192x1024xf32>
    %v = kgraph.reduce mean %sq axes = [1] keep_dims : tensor<8192x1024xf32>
    %ve = kgraph.add %v, %eps : tensor<8192x1xf32>, tensor<f32>
    %r = kgraph.rsqrt %ve : tensor<8192x1xf32>
    %y = kgraph.mul %d, %r : tensor<8192x1024xf32>, tensor<8192x1xf32>
    %yg = kgraph.mul %y, %b : tensor<8192x1024xf32>, tensor<1024xf32>
    kgraph.yield %yg : tensor<8192x1024xf32>
  }
  return %0 : tensor<8192x1024xf32>
}

// -----

// Rows too long for registers even with 1024 threads (131072 f32 is 128
// elements per thread): not held (row_vectors = 0, not printed); each
// reduction re-reads the row with the single-pass mapping.
// CHECK-LABEL: func @long_rows
// CHECK: #kgraph.reduce_config<threads_per_row = 1024, rows_per_block = 1, vector_width = 4, grid_size = 8>
func.func @long_rows(%x: tensor<8x131072xf32>) -> tensor<8x131072xf32> {
  %0 = kgraph.fused (%x) : (tensor<8x131072xf32>) -> tensor<8x131072xf32> {
  ^bb0(%a: tensor<8x131072xf32>):
    %m = kgraph.reduce max %a axes = [1] keep_dims : tensor<8x131072xf32>
    %d = kgraph.sub %a, %m : tensor<8x131072xf32>, tensor<8x1xf32>
    kgraph.yield %d : tensor<8x131072xf32>
  }
  return %0 : tensor<8x131072xf32>
}

// -----

// Strided rows (down the columns): scalar elements, 4 threads per column of
// 37, 10 each.
// CHECK-LABEL: func @column_rows
// CHECK: #kgraph.reduce_config<threads_per_row = 4, rows_per_block = 64, vector_width = 1, grid_size = 16, row_vectors = 10>
func.func @column_rows(%x: tensor<37x1001xf32>) -> tensor<37x1001xf32> {
  %0 = kgraph.fused (%x) : (tensor<37x1001xf32>) -> tensor<37x1001xf32> {
  ^bb0(%a: tensor<37x1001xf32>):
    %m = kgraph.reduce max %a axes = [0] keep_dims : tensor<37x1001xf32>
    %d = kgraph.sub %a, %m : tensor<37x1001xf32>, tensor<1x1001xf32>
    kgraph.yield %d : tensor<37x1001xf32>
  }
  return %0 : tensor<37x1001xf32>
}

// -----

// Rows of 16 f16: a thread holds a whole row (two vectors of 8). Two
// results, one per row and one over the rows.
// CHECK-LABEL: func @short_rows_two_results
// CHECK: #kgraph.reduce_config<threads_per_row = 1, rows_per_block = 256, vector_width = 8, grid_size = 16, row_vectors = 2>
func.func @short_rows_two_results(%x: tensor<4096x16xf16>) -> (tensor<4096x1xf16>, tensor<4096x16xf16>) {
  %0:2 = kgraph.fused (%x) : (tensor<4096x16xf16>) -> (tensor<4096x1xf16>, tensor<4096x16xf16>) {
  ^bb0(%a: tensor<4096x16xf16>):
    %m = kgraph.reduce max %a axes = [1] keep_dims : tensor<4096x16xf16>
    %d = kgraph.sub %a, %m : tensor<4096x16xf16>, tensor<4096x1xf16>
    kgraph.yield %m, %d : tensor<4096x1xf16>, tensor<4096x16xf16>
  }
  return %0#0, %0#1 : tensor<4096x1xf16>, tensor<4096x16xf16>
}

// -----

// A producer yielded beside the reduction is a second result: the rows are
// needed again to store it, so this is a multi-reduction group.
// CHECK-LABEL: func @producer_result
// CHECK: kgraph.fused reduce
// CHECK-SAME: #kgraph.reduce_config<threads_per_row = 1, rows_per_block = 256, vector_width = 4, grid_size = 1, row_vectors = 2>
func.func @producer_result(%x: tensor<4x8xf32>) -> (tensor<4xf32>, tensor<4x8xf32>) {
  %0:2 = kgraph.fused (%x) : (tensor<4x8xf32>) -> (tensor<4xf32>, tensor<4x8xf32>) {
  ^bb0(%a: tensor<4x8xf32>):
    %e = kgraph.exp %a : tensor<4x8xf32>
    %s = kgraph.reduce sum %e axes = [1] : tensor<4x8xf32>
    kgraph.yield %s, %e : tensor<4xf32>, tensor<4x8xf32>
  }
  return %0#0, %0#1 : tensor<4xf32>, tensor<4x8xf32>
}

// -----

// A pinned multi-reduction configuration is kept (row_vectors = 0 is the
// default, not printed).
// CHECK-LABEL: func @pinned_rows
// CHECK: #kgraph.reduce_config<threads_per_row = 64, rows_per_block = 2, vector_width = 2, grid_size = 2>
func.func @pinned_rows(%x: tensor<3x300xf32>) -> tensor<3x300xf32> {
  %0 = kgraph.fused (%x) {kgraph.config = #kgraph.reduce_config<threads_per_row = 64, rows_per_block = 2, vector_width = 2, grid_size = 2, row_vectors = 0>} : (tensor<3x300xf32>) -> tensor<3x300xf32> {
  ^bb0(%a: tensor<3x300xf32>):
    %m = kgraph.reduce max %a axes = [1] keep_dims : tensor<3x300xf32>
    %d = kgraph.sub %a, %m : tensor<3x300xf32>, tensor<3x1xf32>
    kgraph.yield %d : tensor<3x300xf32>
  }
  return %0 : tensor<3x300xf32>
}
