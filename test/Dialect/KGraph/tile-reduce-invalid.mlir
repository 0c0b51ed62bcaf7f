// RUN: kgraph-opt %s --split-input-file --verify-diagnostics --kgraph-tile=target=sm_80

// A reduction of 16 elements per row (more than an inline reduction
// evaluates: fuse-nested-reduce.mlir) read by a reduction of other rows.
func.func @two_reduces(%x: tensor<4x16xf32>) -> tensor<f32> {
  %0 = kgraph.fused (%x) : (tensor<4x16xf32>) -> tensor<f32> {
  ^bb0(%a: tensor<4x16xf32>):
    %s = kgraph.reduce sum %a axes = [1] : tensor<4x16xf32>
    // expected-error @+1 {{'kgraph.reduce' op does not reduce the rows of the group's first kgraph.reduce ('tensor<4x16xf32>' over axes [1]); the reductions of one group share their rows}}
    %t = kgraph.reduce max %s axes = [0] : tensor<4xf32>
    kgraph.yield %t : tensor<f32>
  }
  return %0 : tensor<f32>
}

// -----

func.func @not_elementwise(%x: tensor<8x4xf32>) -> tensor<4xf32> {
  %0 = kgraph.fused (%x) : (tensor<8x4xf32>) -> tensor<4xf32> {
  ^bb0(%a: tensor<8x4xf32>):
    // expected-error @+1 {{'kgraph.transpose' op cannot be part of a reduction group: only elementwise ops and splat constants can join a kgraph.reduce}}
    %m = kgraph.transpose %a, permutation = [1, 0] : tensor<8x4xf32>
    %s = kgraph.reduce sum %m axes = [1] : tensor<4x8xf32>
    kgraph.yield %s : tensor<4xf32>
  }
  return %0 : tensor<4xf32>
}

// -----

// A matmul makes a group a GEMM group, whose epilogue takes elementwise ops
// only.
func.func @reduce_after_matmul(%x: tensor<4x8xf32>, %w: tensor<8x8xf32>) -> tensor<4xf32> {
  %0 = kgraph.fused (%x, %w) : (tensor<4x8xf32>, tensor<8x8xf32>) -> tensor<4xf32> {
  ^bb0(%a: tensor<4x8xf32>, %b: tensor<8x8xf32>):
    %m = kgraph.matmul %a, %b : tensor<4x8xf32>, tensor<8x8xf32> -> tensor<4x8xf32>
    // expected-error @+1 {{'kgraph.reduce' op cannot be fused into the epilogue of a GEMM kernel group: only elementwise ops and transposes, broadcasts and slices of group inputs can}}
    %s = kgraph.reduce sum %m axes = [1] : tensor<4x8xf32>
    kgraph.yield %s : tensor<4xf32>
  }
  return %0 : tensor<4xf32>
}

// -----

func.func @dense_constant(%x: tensor<2x2xf32>) -> tensor<2xf32> {
  %0 = kgraph.fused (%x) : (tensor<2x2xf32>) -> tensor<2xf32> {
  ^bb0(%a: tensor<2x2xf32>):
    // expected-error @+1 {{'arith.constant' op only splat tensor constants can be used inside a kernel group}}
    %c = arith.constant dense<[[1.0, 2.0], [3.0, 4.0]]> : tensor<2x2xf32>
    %m = kgraph.mul %a, %c : tensor<2x2xf32>, tensor<2x2xf32>
    %s = kgraph.reduce sum %m axes = [1] : tensor<2x2xf32>
    kgraph.yield %s : tensor<2xf32>
  }
  return %0 : tensor<2xf32>
}

// -----

// A value of the reduced shape without keep_dims, [4], broadcasts along the
// last dim of [4, 4], not along the rows.
func.func @not_along_rows(%x: tensor<4x4xf32>) -> tensor<4x4xf32> {
  %0 = kgraph.fused (%x) : (tensor<4x4xf32>) -> tensor<4x4xf32> {
  ^bb0(%a: tensor<4x4xf32>):
    %s = kgraph.reduce max %a axes = [1] : tensor<4x4xf32>
    // expected-error @+1 {{'kgraph.sub' op reads the per-row value 'tensor<4xf32>' along the rows of 'tensor<4x4xf32>', but it does not broadcast along them (it needs the shape 'tensor<4x1xf32>')}}
    %d = kgraph.sub %a, %s : tensor<4x4xf32>, tensor<4xf32>
    kgraph.yield %d : tensor<4x4xf32>
  }
  return %0 : tensor<4x4xf32>
}

// -----

// After a reduction, values hold one value per row or span the rows.
func.func @other_shape_after_reduce(%x: tensor<4x8xf32>, %y: tensor<3x4x1xf32>) -> tensor<3x4x1xf32> {
  %0 = kgraph.fused (%x, %y) : (tensor<4x8xf32>, tensor<3x4x1xf32>) -> tensor<3x4x1xf32> {
  ^bb0(%a: tensor<4x8xf32>, %b: tensor<3x4x1xf32>):
    %s = kgraph.reduce sum %a axes = [1] keep_dims : tensor<4x8xf32>
    // expected-error @+1 {{'kgraph.add' op uses a kgraph.reduce result but has shape 'tensor<3x4x1xf32>'; values after a reduction hold one value per row ('tensor<4x1xf32>') or span the rows ('tensor<4x8xf32>')}}
    %t = kgraph.add %s, %b : tensor<4x1xf32>, tensor<3x4x1xf32>
    kgraph.yield %t : tensor<3x4x1xf32>
  }
  return %0 : tensor<3x4x1xf32>
}

// -----

func.func @yields_other_shape(%x: tensor<4x8xf32>, %g: tensor<8xf32>) -> (tensor<4xf32>, tensor<8xf32>) {
  // expected-error @+1 {{'kgraph.fused' op yields a value of shape 'tensor<8xf32>'; a reduction group yields values that span its rows ('tensor<4x8xf32>') or hold one value per row ('tensor<4x1xf32>')}}
  %0:2 = kgraph.fused (%x, %g) : (tensor<4x8xf32>, tensor<8xf32>) -> (tensor<4xf32>, tensor<8xf32>) {
  ^bb0(%a: tensor<4x8xf32>, %b: tensor<8xf32>):
    %s = kgraph.reduce sum %a axes = [1] : tensor<4x8xf32>
    %e = kgraph.exp %b : tensor<8xf32>
    kgraph.yield %s, %e : tensor<4xf32>, tensor<8xf32>
  }
  return %0#0, %0#1 : tensor<4xf32>, tensor<8xf32>
}

// -----

func.func @independent_yield(%x: tensor<4x8xf32>, %y: tensor<4xf32>) -> tensor<4xf32> {
  %0 = kgraph.fused (%x, %y) : (tensor<4x8xf32>, tensor<4xf32>) -> tensor<4xf32> {
  ^bb0(%a: tensor<4x8xf32>, %b: tensor<4xf32>):
    // expected-error @+1 {{'kgraph.reduce' op feeds no value its group yields}}
    %s = kgraph.reduce sum %a axes = [1] : tensor<4x8xf32>
    %e = kgraph.exp %b : tensor<4xf32>
    kgraph.yield %e : tensor<4xf32>
  }
  return %0 : tensor<4xf32>
}

// -----

func.func @empty(%x: tensor<4x0xf32>) -> tensor<4xf32> {
  %0 = kgraph.fused (%x) : (tensor<4x0xf32>) -> tensor<4xf32> {
  ^bb0(%a: tensor<4x0xf32>):
    // expected-error @+1 {{'kgraph.reduce' op reduces an empty tensor 'tensor<4x0xf32>'}}
    %s = kgraph.reduce sum %a axes = [1] : tensor<4x0xf32>
    kgraph.yield %s : tensor<4xf32>
  }
  return %0 : tensor<4xf32>
}

// -----

func.func @wrong_config(%x: tensor<4x8xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'kgraph.fused' op has a 'kgraph.config' for elementwise kernels but holds 'kgraph.reduce', which elementwise kernels cannot compute: #kgraph.elementwise_config<block_size = 256, vector_width = 4, unroll = 1, grid_size = 1>}}
  %0 = kgraph.fused (%x) {kgraph.config = #kgraph.elementwise_config<block_size = 256, vector_width = 4, unroll = 1, grid_size = 1>} : (tensor<4x8xf32>) -> tensor<4xf32> {
  ^bb0(%a: tensor<4x8xf32>):
    %s = kgraph.reduce sum %a axes = [1] : tensor<4x8xf32>
    kgraph.yield %s : tensor<4xf32>
  }
  return %0 : tensor<4xf32>
}

// -----

func.func @config_without_reduce(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  // expected-error @+1 {{'kgraph.fused' op has a 'kgraph.config' for reduce kernels but has no kgraph.reduce: #kgraph.reduce_config<threads_per_row = 32, rows_per_block = 1, vector_width = 1, grid_size = 1>}}
  %0 = kgraph.fused (%x) {kgraph.config = #kgraph.reduce_config<threads_per_row = 32, rows_per_block = 1, vector_width = 1, grid_size = 1>} : (tensor<4x8xf32>) -> tensor<4x8xf32> {
  ^bb0(%a: tensor<4x8xf32>):
    %e = kgraph.exp %a : tensor<4x8xf32>
    kgraph.yield %e : tensor<4x8xf32>
  }
  return %0 : tensor<4x8xf32>
}

// -----

func.func @too_wide(%x: tensor<4x64xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'kgraph.fused' op vector_width 8 makes 32-byte accesses; at most 16 bytes are allowed}}
  %0 = kgraph.fused (%x) {kgraph.config = #kgraph.reduce_config<threads_per_row = 32, rows_per_block = 1, vector_width = 8, grid_size = 1>} : (tensor<4x64xf32>) -> tensor<4xf32> {
  ^bb0(%a: tensor<4x64xf32>):
    %s = kgraph.reduce sum %a axes = [1] : tensor<4x64xf32>
    kgraph.yield %s : tensor<4xf32>
  }
  return %0 : tensor<4xf32>
}

// -----

func.func @rows_not_inner(%x: tensor<64x4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'kgraph.fused' op vector_width 4 with threads_per_row > 1 needs the innermost input dimension to be reduced}}
  %0 = kgraph.fused (%x) {kgraph.config = #kgraph.reduce_config<threads_per_row = 32, rows_per_block = 1, vector_width = 4, grid_size = 1>} : (tensor<64x4xf32>) -> tensor<4xf32> {
  ^bb0(%a: tensor<64x4xf32>):
    %s = kgraph.reduce sum %a axes = [0] : tensor<64x4xf32>
    kgraph.yield %s : tensor<4xf32>
  }
  return %0 : tensor<4xf32>
}

// -----

func.func @rows_not_divisible(%x: tensor<4x1001xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'kgraph.fused' op vector_width 4 does not divide the innermost reduced extent 1001}}
  %0 = kgraph.fused (%x) {kgraph.config = #kgraph.reduce_config<threads_per_row = 32, rows_per_block = 1, vector_width = 4, grid_size = 1>} : (tensor<4x1001xf32>) -> tensor<4xf32> {
  ^bb0(%a: tensor<4x1001xf32>):
    %s = kgraph.reduce sum %a axes = [1] : tensor<4x1001xf32>
    kgraph.yield %s : tensor<4xf32>
  }
  return %0 : tensor<4xf32>
}

// -----

func.func @columns_not_inner(%x: tensor<4x64xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'kgraph.fused' op vector_width 4 with threads_per_row = 1 needs the innermost input dimension to be kept}}
  %0 = kgraph.fused (%x) {kgraph.config = #kgraph.reduce_config<threads_per_row = 1, rows_per_block = 32, vector_width = 4, grid_size = 1>} : (tensor<4x64xf32>) -> tensor<4xf32> {
  ^bb0(%a: tensor<4x64xf32>):
    %s = kgraph.reduce sum %a axes = [1] : tensor<4x64xf32>
    kgraph.yield %s : tensor<4xf32>
  }
  return %0 : tensor<4xf32>
}

// -----

func.func @columns_not_divisible(%x: tensor<64x6xf16>) -> tensor<6xf16> {
  // expected-error @+1 {{'kgraph.fused' op vector_width 4 does not divide the innermost kept extent 6}}
  %0 = kgraph.fused (%x) {kgraph.config = #kgraph.reduce_config<threads_per_row = 1, rows_per_block = 32, vector_width = 4, grid_size = 1>} : (tensor<64x6xf16>) -> tensor<6xf16> {
  ^bb0(%a: tensor<64x6xf16>):
    %s = kgraph.reduce sum %a axes = [0] : tensor<64x6xf16>
    kgraph.yield %s : tensor<6xf16>
  }
  return %0 : tensor<6xf16>
}

// -----

// row_vectors: only where the rows are read more than once, covering the
// row, within the register budget; multi-reduction groups vectorize along
// the reduced dim whatever threads_per_row is.
func.func @held_single_pass(%x: tensor<4x64xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'kgraph.fused' op row_vectors 2 holds rows in registers, but the group reads each row once (a single reduction with per-row consumers): row_vectors must be 0}}
  %0 = kgraph.fused (%x) {kgraph.config = #kgraph.reduce_config<threads_per_row = 32, rows_per_block = 1, vector_width = 1, grid_size = 1, row_vectors = 2>} : (tensor<4x64xf32>) -> tensor<4xf32> {
  ^bb0(%a: tensor<4x64xf32>):
    %s = kgraph.reduce sum %a axes = [1] : tensor<4x64xf32>
    kgraph.yield %s : tensor<4xf32>
  }
  return %0 : tensor<4xf32>
}

// -----

func.func @held_too_short(%x: tensor<4x1000xf32>) -> tensor<4x1000xf32> {
  // expected-error @+1 {{'kgraph.fused' op row_vectors 2 holds 2 x 32 x 4 = 256 elements of each row, fewer than its 1000}}
  %0 = kgraph.fused (%x) {kgraph.config = #kgraph.reduce_config<threads_per_row = 32, rows_per_block = 1, vector_width = 4, grid_size = 1, row_vectors = 2>} : (tensor<4x1000xf32>) -> tensor<4x1000xf32> {
  ^bb0(%a: tensor<4x1000xf32>):
    %m = kgraph.reduce max %a axes = [1] keep_dims : tensor<4x1000xf32>
    %d = kgraph.sub %a, %m : tensor<4x1000xf32>, tensor<4x1xf32>
    kgraph.yield %d : tensor<4x1000xf32>
  }
  return %0 : tensor<4x1000xf32>
}

// -----

func.func @held_too_many(%x: tensor<4x1024xf32>) -> tensor<4x1024xf32> {
  // expected-error @+1 {{'kgraph.fused' op row_vectors 32 keeps 128 elements per thread in registers; at most 64 are allowed}}
  %0 = kgraph.fused (%x) {kgraph.config = #kgraph.reduce_config<threads_per_row = 32, rows_per_block = 1, vector_width = 4, grid_size = 1, row_vectors = 32>} : (tensor<4x1024xf32>) -> tensor<4x1024xf32> {
  ^bb0(%a: tensor<4x1024xf32>):
    %m = kgraph.reduce max %a axes = [1] keep_dims : tensor<4x1024xf32>
    %d = kgraph.sub %a, %m : tensor<4x1024xf32>, tensor<4x1xf32>
    kgraph.yield %d : tensor<4x1024xf32>
  }
  return %0 : tensor<4x1024xf32>
}

// -----

func.func @multi_columns_vector(%x: tensor<64x4xf32>) -> tensor<64x4xf32> {
  // expected-error @+1 {{'kgraph.fused' op vector_width 4 in a multi-reduction group needs the innermost input dimension to be reduced}}
  %0 = kgraph.fused (%x) {kgraph.config = #kgraph.reduce_config<threads_per_row = 1, rows_per_block = 32, vector_width = 4, grid_size = 1>} : (tensor<64x4xf32>) -> tensor<64x4xf32> {
  ^bb0(%a: tensor<64x4xf32>):
    %s = kgraph.reduce sum %a axes = [0] keep_dims : tensor<64x4xf32>
    %d = kgraph.div %a, %s : tensor<64x4xf32>, tensor<1x4xf32>
    kgraph.yield %d : tensor<64x4xf32>
  }
  return %0 : tensor<64x4xf32>
}

// -----

// An inline reduction (the max over 4 rows, read by the sum over columns)
// that reads a value computed from the group's first reduction: the sums
// would be needed before the rows they come from are done.
func.func @inline_after_reduce(%x: tensor<4x16xf32>) -> tensor<4xf32> {
  %0 = kgraph.fused (%x) : (tensor<4x16xf32>) -> tensor<4xf32> {
  ^bb0(%a: tensor<4x16xf32>):
    %r = kgraph.reduce sum %a axes = [1] keep_dims : tensor<4x16xf32>
    %y = kgraph.add %a, %r : tensor<4x16xf32>, tensor<4x1xf32>
    // expected-error @+1 {{'kgraph.reduce' op is evaluated inline but reads a reduction result of its group; an inline reduction reads only values computed before the group's first reduction}}
    %z = kgraph.reduce max %y axes = [0] keep_dims : tensor<4x16xf32>
    %t = kgraph.mul %a, %z : tensor<4x16xf32>, tensor<1x16xf32>
    %u = kgraph.reduce sum %t axes = [1] : tensor<4x16xf32>
    kgraph.yield %u : tensor<4xf32>
  }
  return %0 : tensor<4xf32>
}
