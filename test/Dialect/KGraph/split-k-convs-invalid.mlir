// RUN: kgraph-opt %s --verify-diagnostics --pass-pipeline='builtin.module(func.func(kgraph-split-k-convs{target=sm_99}))'
// RUN: not kgraph-opt %s --pass-pipeline='builtin.module(func.func(kgraph-split-k-convs{target=sm_90a min-gain=0.9}))' 2>&1 | FileCheck %s --check-prefix=GAIN

// GAIN: error: kgraph-split-k-convs: min-gain must be at least 1, got 0.9{{$}}
// expected-error @+1 {{kgraph-split-k-convs: unknown target 'sm_99' (known: sm_70}}
func.func @bad_target(%x: tensor<1x7x7x512xf16>, %w: tensor<512x3x3x512xf16>) -> tensor<1x7x7x512xf16> {
  %0 = kgraph.conv2d %x, %w layout = nhwc padding = [1, 1, 1, 1] : tensor<1x7x7x512xf16>, tensor<512x3x3x512xf16> -> tensor<1x7x7x512xf16>
  return %0 : tensor<1x7x7x512xf16>
}
