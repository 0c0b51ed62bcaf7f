// RUN: kgraph-opt %s --split-input-file --verify-diagnostics --kgraph-lower-to-gpu

// expected-error @+1 {{module has no known 'kgraph.target' (run kgraph-tile first)}}
module {
  func.func @no_target(%a: tensor<8xf32>) -> tensor<8xf32> {
    %0 = kgraph.exp %a : tensor<8xf32>
    return %0 : tensor<8xf32>
  }
}

// -----

module attributes {kgraph.target = "sm_80"} {
  func.func @ungrouped(%a: tensor<8xf32>) -> tensor<8xf32> {
    // expected-error @+1 {{'kgraph.exp' op must be grouped into kgraph.fused before lowering (run kgraph-form-kernels or kgraph-fuse)}}
    %0 = kgraph.exp %a : tensor<8xf32>
    return %0 : tensor<8xf32>
  }
}

// -----

module attributes {kgraph.target = "sm_80"} {
  func.func @no_config(%a: tensor<8xf32>) -> tensor<8xf32> {
    // expected-error @+1 {{'kgraph.fused' op has no 'kgraph.config' configuration (run kgraph-tile first)}}
    %0 = kgraph.fused (%a) : (tensor<8xf32>) -> tensor<8xf32> {
    ^bb0(%x: tensor<8xf32>):
      %r = kgraph.exp %x : tensor<8xf32>
      kgraph.yield %r : tensor<8xf32>
    }
    return %0 : tensor<8xf32>
  }
}

// -----

module attributes {kgraph.target = "sm_80"} {
  // expected-error @+1 {{'func.func' op graph function arguments and results must be statically shaped tensors, got 'f32'}}
  func.func @scalar_arg(%a: f32, %b: tensor<8xf32>) -> tensor<8xf32> {
    %0 = kgraph.fused (%b) {kgraph.config = #kgraph.elementwise_config<block_size = 256, vector_width = 4, unroll = 1, grid_size = 1>} : (tensor<8xf32>) -> tensor<8xf32> {
    ^bb0(%x: tensor<8xf32>):
      %r = kgraph.exp %x : tensor<8xf32>
      kgraph.yield %r : tensor<8xf32>
    }
    return %0 : tensor<8xf32>
  }
}

// -----

module attributes {kgraph.target = "sm_80"} {
  func.func @dense_constant(%a: tensor<2xf32>) -> tensor<2xf32> {
    %0 = kgraph.fused (%a) {kgraph.config = #kgraph.elementwise_config<block_size = 256, vector_width = 4, unroll = 1, grid_size = 1>} : (tensor<2xf32>) -> tensor<2xf32> {
    ^bb0(%x: tensor<2xf32>):
      // expected-error @+1 {{'arith.constant' op only splat tensor constants can be used inside a kernel group}}
      %c = arith.constant dense<[1.0, 2.0]> : tensor<2xf32>
      %r = kgraph.add %x, %c : tensor<2xf32>, tensor<2xf32>
      kgraph.yield %r : tensor<2xf32>
    }
    return %0 : tensor<2xf32>
  }
}

// -----

module attributes {kgraph.target = "sm_80"} {
  func.func @not_elementwise(%a: tensor<2x3xf32>) -> tensor<6xf32> {
    %0 = kgraph.fused (%a) {kgraph.config = #kgraph.elementwise_config<block_size = 256, vector_width = 4, unroll = 1, grid_size = 1>} : (tensor<2x3xf32>) -> tensor<6xf32> {
    ^bb0(%x: tensor<2x3xf32>):
      // expected-error @+1 {{'kgraph.reshape' op is not elementwise and cannot be lowered in an elementwise kernel}}
      %r = kgraph.reshape %x : tensor<2x3xf32> to tensor<6xf32>
      kgraph.yield %r : tensor<6xf32>
    }
    return %0 : tensor<6xf32>
  }
}

// -----

module attributes {kgraph.target = "sm_80"} {
  func.func @mixed_result_shapes(%a: tensor<4xf32>, %b: tensor<2x4xf32>) -> (tensor<4xf32>, tensor<2x4xf32>) {
    // expected-error @+1 {{'kgraph.fused' op elementwise group results must share one shape, got 'tensor<4xf32>' and 'tensor<2x4xf32>'}}
    %0:2 = kgraph.fused (%a, %b) {kgraph.config = #kgraph.elementwise_config<block_size = 256, vector_width = 4, unroll = 1, grid_size = 1>} : (tensor<4xf32>, tensor<2x4xf32>) -> (tensor<4xf32>, tensor<2x4xf32>) {
    ^bb0(%x: tensor<4xf32>, %y: tensor<2x4xf32>):
      %r = kgraph.neg %x : tensor<4xf32>
      %s = kgraph.add %y, %r : tensor<2x4xf32>, tensor<4xf32>
      kgraph.yield %r, %s : tensor<4xf32>, tensor<2x4xf32>
    }
    return %0#0, %0#1 : tensor<4xf32>, tensor<2x4xf32>
  }
}

// -----

module attributes {kgraph.target = "sm_80"} {
  // expected-error @+1 {{'func.func' op graph functions must have a single block}}
  func.func @two_blocks(%a: tensor<8xf32>) -> tensor<8xf32> {
    cf.br ^bb1
  ^bb1:
    return %a : tensor<8xf32>
  }
}

// -----

module attributes {kgraph.target = "sm_80"} {
  func.func @foreign_op(%a: tensor<8xf32>) -> tensor<8xf32> {
    // expected-error @+1 {{'tensor.empty' op is not supported in a kgraph graph function}}
    %e = tensor.empty() : tensor<8xf32>
    return %e : tensor<8xf32>
  }
}

// -----

module attributes {kgraph.target = "sm_80"} {
  func.func @no_results(%a: tensor<8xf32>) -> tensor<8xf32> {
    // expected-error @+1 {{'kgraph.fused' op has no results to compute}}
    kgraph.fused (%a) {kgraph.config = #kgraph.elementwise_config<block_size = 256, vector_width = 4, unroll = 1, grid_size = 1>} : (tensor<8xf32>) -> () {
    ^bb0(%x: tensor<8xf32>):
      kgraph.yield
    }
    return %a : tensor<8xf32>
  }
}

// -----

module attributes {kgraph.target = "sm_80"} {
  func.func @matmul_yielded_with_epilogue(%a: tensor<64x64xf16>, %b: tensor<64x64xf16>) -> tensor<64x64xf32> {
    %0 = kgraph.fused (%a, %b) {kgraph.config = #kgraph.matmul_config<tile_m = 64, tile_n = 64, tile_k = 32, warps_m = 2, warps_n = 2, stages = 2, instruction = mma_sync, instruction_shape = [16, 8, 16], load_width = 8, smem_padding = 8>} : (tensor<64x64xf16>, tensor<64x64xf16>) -> tensor<64x64xf32> {
    ^bb0(%x: tensor<64x64xf16>, %y: tensor<64x64xf16>):
      // expected-error @+1 {{'kgraph.matmul' op result is yielded although the group has an epilogue}}
      %m = kgraph.matmul %x, %y : tensor<64x64xf16>, tensor<64x64xf16> -> tensor<64x64xf32>
      %r = kgraph.relu %m : tensor<64x64xf32>
      kgraph.yield %m : tensor<64x64xf32>
    }
    return %0 : tensor<64x64xf32>
  }
}

// -----

module attributes {kgraph.target = "sm_80"} {
  func.func @matmul_config_without_matmul(%a: tensor<64x64xf32>) -> tensor<64x64xf32> {
    // expected-error @+1 {{'kgraph.fused' op holds no kgraph.matmul or kgraph.conv2d}}
    %0 = kgraph.fused (%a) {kgraph.config = #kgraph.matmul_config<tile_m = 64, tile_n = 64, tile_k = 32, warps_m = 2, warps_n = 2, stages = 2, instruction = fma, instruction_shape = [1, 1, 1], load_width = 4, smem_padding = 0>} : (tensor<64x64xf32>) -> tensor<64x64xf32> {
    ^bb0(%x: tensor<64x64xf32>):
      %r = kgraph.relu %x : tensor<64x64xf32>
      kgraph.yield %r : tensor<64x64xf32>
    }
    return %0 : tensor<64x64xf32>
  }
}

// -----

module attributes {kgraph.target = "sm_80"} {
  func.func @kind_mismatch(%a: tensor<8xf32>) -> tensor<f32> {
    // expected-error @+1 {{'kgraph.fused' op is of kind 'reduce' but its 'kgraph.config' is for elementwise kernels: #kgraph.elementwise_config<block_size = 256, vector_width = 4, unroll = 1, grid_size = 1>}}
    %0 = kgraph.fused (%a) {kind = #kgraph<group_kind reduce>, kgraph.config = #kgraph.elementwise_config<block_size = 256, vector_width = 4, unroll = 1, grid_size = 1>} : (tensor<8xf32>) -> tensor<f32> {
    ^bb0(%x: tensor<8xf32>):
      %r = kgraph.reduce sum %x axes = [0] : tensor<8xf32>
      kgraph.yield %r : tensor<f32>
    }
    return %0 : tensor<f32>
  }
}

// -----

module attributes {kgraph.target = "sm_80"} {
  func.func @not_a_kernel_config(%a: tensor<8xf32>) -> tensor<8xf32> {
    // expected-error @+1 {{'kgraph.fused' op has a 'kgraph.config' that is not a kernel configuration (or the kernel-config models are not registered: kgraph::registerKernelConfigModels): "fast"}}
    %0 = kgraph.fused (%a) {kgraph.config = "fast"} : (tensor<8xf32>) -> tensor<8xf32> {
    ^bb0(%x: tensor<8xf32>):
      %r = kgraph.exp %x : tensor<8xf32>
      kgraph.yield %r : tensor<8xf32>
    }
    return %0 : tensor<8xf32>
  }
}
