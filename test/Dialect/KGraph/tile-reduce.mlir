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

// A strided reduction (axis 0) with short columns: a thread per output.
// CHECK-LABEL: func @columns
// CHECK: #kgraph.reduce_config<threads_per_row = 1, rows_per_block = 256, vector_width = 1, grid_size = 4>
func.func @columns(%x: tensor<37x1001xf16>) -> tensor<1001xf16> {
  %0 = kgraph.reduce max %x axes = [0] : tensor<37x1001xf16>
  return %0 : tensor<1001xf16>
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
