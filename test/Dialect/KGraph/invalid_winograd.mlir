// RUN: kgraph-opt %s --split-input-file --verify-diagnostics

func.func @filter_tile(%w: tensor<8x4x3x3xf32>) {
  // expected-error@+1 {{'kgraph.winograd_filter' op output_tile must be 2 or 4, got 3}}
  %0 = kgraph.winograd_filter %w output_tile = 3 : tensor<8x4x3x3xf32> -> tensor<25x8x4xf32>
  return
}

// -----

func.func @filter_rank(%w: tensor<8x4x3xf32>) {
  // expected-error@+1 {{'kgraph.winograd_filter' op filter must have rank 4, got rank 3}}
  %0 = kgraph.winograd_filter %w : tensor<8x4x3xf32> -> tensor<36x8x4xf32>
  return
}

// -----

func.func @filter_size(%w: tensor<8x4x5x5xf32>) {
  // expected-error@+1 {{'kgraph.winograd_filter' op needs a 3x3 filter, got 5x5}}
  %0 = kgraph.winograd_filter %w : tensor<8x4x5x5xf32> -> tensor<36x8x4xf32>
  return
}

// -----

func.func @filter_shape(%w: tensor<8x4x3x3xf32>) {
  // expected-error@+1 {{'kgraph.winograd_filter' op result shape must be [36, 8, 4], got 'tensor<36x4x8xf32>'}}
  %0 = kgraph.winograd_filter %w : tensor<8x4x3x3xf32> -> tensor<36x4x8xf32>
  return
}

// -----

func.func @filter_type(%w: tensor<8x4x3x3xf32>) {
  // expected-error@+1 {{'kgraph.winograd_filter' op result element type 'f16' differs from the operand's 'f32'}}
  %0 = kgraph.winograd_filter %w : tensor<8x4x3x3xf32> -> tensor<36x8x4xf16>
  return
}

// -----

func.func @input_rank(%x: tensor<4x10x10xf32>) {
  // expected-error@+1 {{'kgraph.winograd_input' op input must have rank 4, got rank 3}}
  %0 = kgraph.winograd_input %x : tensor<4x10x10xf32> -> tensor<36x4x4xf32>
  return
}

// -----

func.func @input_padding_count(%x: tensor<1x4x10x10xf32>) {
  // expected-error@+1 {{'kgraph.winograd_input' op padding must have 4 values, got 2}}
  %0 = kgraph.winograd_input %x padding = [1, 1] : tensor<1x4x10x10xf32> -> tensor<36x4x9xf32>
  return
}

// -----

func.func @input_padding_sign(%x: tensor<1x4x10x10xf32>) {
  // expected-error@+1 {{'kgraph.winograd_input' op padding must be non-negative}}
  %0 = kgraph.winograd_input %x padding = [1, -1, 1, 1] : tensor<1x4x10x10xf32> -> tensor<36x4x9xf32>
  return
}

// -----

func.func @input_empty(%x: tensor<1x4x2x10xf32>) {
  // expected-error@+1 {{'kgraph.winograd_input' op the 3x3 conv's output is empty: 0x8 pixels}}
  %0 = kgraph.winograd_input %x : tensor<1x4x2x10xf32> -> tensor<36x4x2xf32>
  return
}

// -----

func.func @input_shape(%x: tensor<1x4x10x10xf32>) {
  // expected-error@+1 {{'kgraph.winograd_input' op result shape must be [36, 4, 4], got 'tensor<36x4x9xf32>'}}
  %0 = kgraph.winograd_input %x : tensor<1x4x10x10xf32> -> tensor<36x4x9xf32>
  return
}

// -----

func.func @output_rank(%m: tensor<36x8xf32>) {
  // expected-error@+1 {{'kgraph.winograd_output' op input must have rank 3, got rank 2}}
  %0 = kgraph.winograd_output %m : tensor<36x8xf32> -> tensor<1x8x4x4xf32>
  return
}

// -----

func.func @output_result_rank(%m: tensor<36x8x1xf32>) {
  // expected-error@+1 {{'kgraph.winograd_output' op result must have rank 4, got rank 3}}
  %0 = kgraph.winograd_output %m : tensor<36x8x1xf32> -> tensor<8x4x4xf32>
  return
}

// -----

func.func @output_shape(%m: tensor<36x8x2xf32>) {
  // expected-error@+1 {{'kgraph.winograd_output' op input shape must be [36, 8, 4] for the result 'tensor<1x8x8x8xf32>', got 'tensor<36x8x2xf32>'}}
  %0 = kgraph.winograd_output %m : tensor<36x8x2xf32> -> tensor<1x8x8x8xf32>
  return
}

// -----

func.func @output_type(%m: tensor<36x8x4xf32>) {
  // expected-error@+1 {{'kgraph.winograd_output' op result element type 'f16' differs from the operand's 'f32'}}
  %0 = kgraph.winograd_output %m : tensor<36x8x4xf32> -> tensor<1x8x8x8xf16>
  return
}

// -----

func.func @output_tile(%m: tensor<36x8x4xf32>) {
  // expected-error@+1 {{'kgraph.winograd_output' op output_tile must be 2 or 4, got 8}}
  %0 = kgraph.winograd_output %m output_tile = 8 : tensor<36x8x4xf32> -> tensor<1x8x8x8xf32>
  return
}
