// RUN: kgraph-opt %s --split-input-file --verify-diagnostics

func.func @arg_count(%a: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'kgraph.fused' op body has 2 arguments but the op has 1 inputs}}
  %0 = kgraph.fused (%a) : (tensor<4xf32>) -> tensor<4xf32> {
  ^bb0(%x: tensor<4xf32>, %y: tensor<4xf32>):
    kgraph.yield %x : tensor<4xf32>
  }
  return %0 : tensor<4xf32>
}

// -----

func.func @arg_type(%a: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'kgraph.fused' op body argument #0 has type 'tensor<4xf16>' but input #0 has type 'tensor<4xf32>'}}
  %0 = kgraph.fused (%a) : (tensor<4xf32>) -> tensor<4xf32> {
  ^bb0(%x: tensor<4xf16>):
    %c = kgraph.cast %x : tensor<4xf16> to tensor<4xf32>
    kgraph.yield %c : tensor<4xf32>
  }
  return %0 : tensor<4xf32>
}

// -----

func.func @yield_count(%a: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'kgraph.fused' op yields 2 values but the op has 1 results}}
  %0 = kgraph.fused (%a) : (tensor<4xf32>) -> tensor<4xf32> {
  ^bb0(%x: tensor<4xf32>):
    kgraph.yield %x, %x : tensor<4xf32>, tensor<4xf32>
  }
  return %0 : tensor<4xf32>
}

// -----

func.func @yield_type(%a: tensor<4xf32>) -> tensor<4xf16> {
  // expected-error @+1 {{'kgraph.fused' op yielded value #0 has type 'tensor<4xf32>' but result #0 has type 'tensor<4xf16>'}}
  %0 = kgraph.fused (%a) : (tensor<4xf32>) -> tensor<4xf16> {
  ^bb0(%x: tensor<4xf32>):
    kgraph.yield %x : tensor<4xf32>
  }
  return %0 : tensor<4xf16>
}

// -----

func.func @nested(%a: tensor<4xf32>) -> tensor<4xf32> {
  %0 = kgraph.fused (%a) : (tensor<4xf32>) -> tensor<4xf32> {
  ^bb0(%x: tensor<4xf32>):
    // expected-error @+1 {{'kgraph.fused' op cannot be nested in another kgraph.fused}}
    %1 = kgraph.fused (%x) : (tensor<4xf32>) -> tensor<4xf32> {
    ^bb0(%y: tensor<4xf32>):
      kgraph.yield %y : tensor<4xf32>
    }
    kgraph.yield %1 : tensor<4xf32>
  }
  return %0 : tensor<4xf32>
}

// -----

func.func @foreign_op(%a: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'kgraph.fused' op body may only hold kgraph ops and arith.constant, found 'tensor.empty'}}
  %0 = kgraph.fused (%a) : (tensor<4xf32>) -> tensor<4xf32> {
  ^bb0(%x: tensor<4xf32>):
    %e = tensor.empty() : tensor<4xf32>
    kgraph.yield %e : tensor<4xf32>
  }
  return %0 : tensor<4xf32>
}

// -----

func.func @captures(%a: tensor<4xf32>) -> tensor<4xf32> {
  // expected-note @+1 {{required by region isolation constraints}}
  %0 = kgraph.fused () : () -> tensor<4xf32> {
    // expected-error @+1 {{'kgraph.relu' op using value defined outside the region}}
    %r = kgraph.relu %a : tensor<4xf32>
    kgraph.yield %r : tensor<4xf32>
  }
  return %0 : tensor<4xf32>
}

// -----

func.func @yield_outside(%a: tensor<4xf32>) {
  // expected-error @+1 {{'kgraph.yield' op expects parent op 'kgraph.fused'}}
  kgraph.yield %a : tensor<4xf32>
}

// -----

// expected-error @+1 {{block_size must be a multiple of 32 in [32, 1024], got 100}}
func.func @bad_block() attributes {c = #kgraph.elementwise_config<block_size = 100, vector_width = 4, unroll = 1, grid_size = 1>} {
  return
}

// -----

// expected-error @+1 {{vector_width must be a power of two in [1, 16], got 3}}
func.func @bad_width() attributes {c = #kgraph.elementwise_config<block_size = 128, vector_width = 3, unroll = 1, grid_size = 1>} {
  return
}

// -----

// expected-error @+1 {{unroll must be in [1, 16], got 0}}
func.func @bad_unroll() attributes {c = #kgraph.elementwise_config<block_size = 128, vector_width = 4, unroll = 0, grid_size = 1>} {
  return
}

// -----

// expected-error @+1 {{grid_size must be in [1, 2^31 - 1], got 0}}
func.func @bad_grid() attributes {c = #kgraph.elementwise_config<block_size = 128, vector_width = 4, unroll = 1, grid_size = 0>} {
  return
}

// -----

func.func @kind_gemm_without_matmul(%a: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'kgraph.fused' op of kind 'gemm' needs exactly one kgraph.matmul or kgraph.conv2d, found 0}}
  %0 = kgraph.fused gemm (%a) : (tensor<4xf32>) -> tensor<4xf32> {
  ^bb0(%x: tensor<4xf32>):
    %r = kgraph.relu %x : tensor<4xf32>
    kgraph.yield %r : tensor<4xf32>
  }
  return %0 : tensor<4xf32>
}

// -----

func.func @kind_elementwise_with_reduce(%a: tensor<4xf32>) -> tensor<f32> {
  // expected-error @+1 {{'kgraph.fused' op of kind 'elementwise' holds 'kgraph.reduce', which elementwise kernels cannot compute}}
  %0 = kgraph.fused elementwise (%a) : (tensor<4xf32>) -> tensor<f32> {
  ^bb0(%x: tensor<4xf32>):
    %r = kgraph.reduce sum %x axes = [0] : tensor<4xf32>
    kgraph.yield %r : tensor<f32>
  }
  return %0 : tensor<f32>
}

// -----

func.func @kind_reduce_without_reduce(%a: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'kgraph.fused' op of kind 'reduce' has no kgraph.reduce}}
  %0 = kgraph.fused reduce (%a) : (tensor<4xf32>) -> tensor<4xf32> {
  ^bb0(%x: tensor<4xf32>):
    %r = kgraph.relu %x : tensor<4xf32>
    kgraph.yield %r : tensor<4xf32>
  }
  return %0 : tensor<4xf32>
}

// -----

func.func @kind_stencil_without_window(%a: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'kgraph.fused' op of kind 'stencil' has no kgraph.conv2d or kgraph.pool2d}}
  %0 = kgraph.fused stencil (%a) : (tensor<4xf32>) -> tensor<4xf32> {
  ^bb0(%x: tensor<4xf32>):
    %r = kgraph.relu %x : tensor<4xf32>
    kgraph.yield %r : tensor<4xf32>
  }
  return %0 : tensor<4xf32>
}

// -----

func.func @kind_gemm_with_two_matmuls(%a: tensor<4x4xf32>) -> tensor<4x4xf32> {
  // expected-error @+1 {{'kgraph.fused' op of kind 'gemm' needs exactly one kgraph.matmul or kgraph.conv2d, found 2}}
  %0 = kgraph.fused gemm (%a) : (tensor<4x4xf32>) -> tensor<4x4xf32> {
  ^bb0(%x: tensor<4x4xf32>):
    %m = kgraph.matmul %x, %x : tensor<4x4xf32>, tensor<4x4xf32> -> tensor<4x4xf32>
    %n = kgraph.matmul %m, %x : tensor<4x4xf32>, tensor<4x4xf32> -> tensor<4x4xf32>
    kgraph.yield %n : tensor<4x4xf32>
  }
  return %0 : tensor<4x4xf32>
}

// -----

func.func @kind_copy_without_data_movement(%a: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'kgraph.fused' op of kind 'copy' has no data-movement op}}
  %0 = kgraph.fused copy (%a) : (tensor<4xf32>) -> tensor<4xf32> {
  ^bb0(%x: tensor<4xf32>):
    %r = kgraph.relu %x : tensor<4xf32>
    kgraph.yield %r : tensor<4xf32>
  }
  return %0 : tensor<4xf32>
}
