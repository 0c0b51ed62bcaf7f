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
  func.func @not_elementwise(%a: tensor<2x3xf32>) -> tensor<3x2xf32> {
    %0 = kgraph.fused (%a) {kgraph.config = #kgraph.elementwise_config<block_size = 256, vector_width = 4, unroll = 1, grid_size = 1>} : (tensor<2x3xf32>) -> tensor<3x2xf32> {
    ^bb0(%x: tensor<2x3xf32>):
      // expected-error @+1 {{'kgraph.transpose' op is not elementwise and cannot be lowered in an elementwise kernel}}
      %r = kgraph.transpose %x, permutation = [1, 0] : tensor<2x3xf32>
      kgraph.yield %r : tensor<3x2xf32>
    }
    return %0 : tensor<3x2xf32>
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
