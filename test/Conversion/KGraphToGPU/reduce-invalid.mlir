// RUN: kgraph-opt %s --split-input-file --verify-diagnostics --kgraph-lower-to-gpu

// The lowering checks a pinned #kgraph.reduce_config and the group again
// (kgraph-tile may not have run on this IR).

module attributes {kgraph.target = "sm_80"} {
  func.func @not_divisible(%x: tensor<4x1001xf32>) -> tensor<4xf32> {
    // expected-error @+1 {{'kgraph.fused' op vector_width 4 does not divide the innermost reduced extent 1001}}
    %0 = kgraph.fused (%x) {kgraph.config = #kgraph.reduce_config<threads_per_row = 32, rows_per_block = 1, vector_width = 4, grid_size = 1>} : (tensor<4x1001xf32>) -> tensor<4xf32> {
    ^bb0(%a: tensor<4x1001xf32>):
      %s = kgraph.reduce sum %a axes = [1] : tensor<4x1001xf32>
      kgraph.yield %s : tensor<4xf32>
    }
    return %0 : tensor<4xf32>
  }
}

// -----

module attributes {kgraph.target = "sm_80"} {
  func.func @no_reduce(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
    // expected-error @+1 {{'kgraph.fused' op has no kgraph.reduce}}
    %0 = kgraph.fused (%x) {kgraph.config = #kgraph.reduce_config<threads_per_row = 32, rows_per_block = 1, vector_width = 1, grid_size = 1>} : (tensor<4x8xf32>) -> tensor<4x8xf32> {
    ^bb0(%a: tensor<4x8xf32>):
      %e = kgraph.exp %a : tensor<4x8xf32>
      kgraph.yield %e : tensor<4x8xf32>
    }
    return %0 : tensor<4x8xf32>
  }
}

// -----

module attributes {kgraph.target = "sm_80"} {
  // 16 elements per row: not an inline reduction (fuse-nested-reduce.mlir).
  func.func @two_reduces(%x: tensor<4x16xf32>) -> tensor<f32> {
    %0 = kgraph.fused (%x) {kgraph.config = #kgraph.reduce_config<threads_per_row = 32, rows_per_block = 1, vector_width = 1, grid_size = 1>} : (tensor<4x16xf32>) -> tensor<f32> {
    ^bb0(%a: tensor<4x16xf32>):
      %s = kgraph.reduce sum %a axes = [1] : tensor<4x16xf32>
      // expected-error @+1 {{'kgraph.reduce' op does not reduce the rows of the group's first kgraph.reduce ('tensor<4x16xf32>' over axes [1]); the reductions of one group share their rows}}
      %t = kgraph.reduce sum %s axes = [0] : tensor<4xf32>
      kgraph.yield %t : tensor<f32>
    }
    return %0 : tensor<f32>
  }
}

// -----

module attributes {kgraph.target = "sm_80"} {
  func.func @empty(%x: tensor<0x8xf32>) -> tensor<8xf32> {
    %0 = kgraph.fused (%x) {kgraph.config = #kgraph.reduce_config<threads_per_row = 1, rows_per_block = 32, vector_width = 1, grid_size = 1>} : (tensor<0x8xf32>) -> tensor<8xf32> {
    ^bb0(%a: tensor<0x8xf32>):
      // expected-error @+1 {{'kgraph.reduce' op reduces an empty tensor 'tensor<0x8xf32>'}}
      %s = kgraph.reduce sum %a axes = [0] : tensor<0x8xf32>
      kgraph.yield %s : tensor<8xf32>
    }
    return %0 : tensor<8xf32>
  }
}

// -----

module attributes {kgraph.target = "sm_80"} {
  func.func @columns_not_divisible(%x: tensor<64x6xf16>) -> tensor<6xf16> {
    // expected-error @+1 {{'kgraph.fused' op vector_width 4 does not divide the innermost kept extent 6}}
    %0 = kgraph.fused (%x) {kgraph.config = #kgraph.reduce_config<threads_per_row = 1, rows_per_block = 32, vector_width = 4, grid_size = 1>} : (tensor<64x6xf16>) -> tensor<6xf16> {
    ^bb0(%a: tensor<64x6xf16>):
      %s = kgraph.reduce sum %a axes = [0] : tensor<64x6xf16>
      kgraph.yield %s : tensor<6xf16>
    }
    return %0 : tensor<6xf16>
  }
}

// -----

module attributes {kgraph.target = "sm_80"} {
  func.func @held_row_too_short(%x: tensor<4x1000xf32>) -> tensor<4x1000xf32> {
    // expected-error @+1 {{'kgraph.fused' op row_vectors 1 holds 1 x 256 x 2 = 512 elements of each row, fewer than its 1000}}
    %0 = kgraph.fused (%x) {kgraph.config = #kgraph.reduce_config<threads_per_row = 256, rows_per_block = 1, vector_width = 2, grid_size = 4, row_vectors = 1>} : (tensor<4x1000xf32>) -> tensor<4x1000xf32> {
    ^bb0(%a: tensor<4x1000xf32>):
      %s = kgraph.reduce sum %a axes = [1] keep_dims : tensor<4x1000xf32>
      %d = kgraph.div %a, %s : tensor<4x1000xf32>, tensor<4x1xf32>
      kgraph.yield %d : tensor<4x1000xf32>
    }
    return %0 : tensor<4x1000xf32>
  }
}
