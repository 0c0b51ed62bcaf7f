// RUN: kgraph-opt %s --split-input-file --pass-pipeline='builtin.module(func.func(kgraph-split-k-convs{target=sm_90a}))' | FileCheck %s
// RUN: kgraph-opt %s --split-input-file --pass-pipeline='builtin.module(func.func(kgraph-split-k-convs{target=sm_90a report=true}))' -o /dev/null 2>&1 | FileCheck %s --check-prefix=REPORT
// RUN: kgraph-opt %s --split-input-file --pass-pipeline='builtin.module(func.func(kgraph-split-k-convs{target=sm_80}))' | FileCheck %s --check-prefix=SM80
// RUN: kgraph-opt %s --split-input-file --pass-pipeline='builtin.module(func.func(kgraph-split-k-convs{target=sm_90a min-gain=1.0}))' | FileCheck %s --check-prefix=GAIN1
// RUN: kgraph-opt %s --split-input-file --pass-pipeline='builtin.module(func.func(kgraph-split-k-convs{target=sm_90a hoisted-filters=false}))' | FileCheck %s --check-prefix=PERCALL

// A batch-1 ResNet-50 last-stage 3x3 conv (49 pixels, K = 4608): the
// filter's channel slices stacked along F, a grouped conv of f32 partial
// sums, their sum over the slice axis, the cast back to f16.
// REPORT: split-k-convs.mlir:[[# @LINE + 15]]:8: remark: split-K on sm_90a: split into 16 channel slices, estimated {{[0-9.]+}} us as written, {{[0-9.]+}} us split
// CHECK-LABEL: func @last_stage_3x3
// CHECK-SAME: (%[[X:.*]]: tensor<1x7x7x512xf16>, %[[W:.*]]: tensor<512x3x3x512xf16>)
// CHECK: %[[W1:.*]] = kgraph.reshape %[[W]] : tensor<512x3x3x512xf16> to tensor<512x3x3x[[S:[0-9]+]]x[[C:[0-9]+]]xf16>
// CHECK: %[[W2:.*]] = kgraph.transpose %[[W1]], permutation = [3, 0, 1, 2, 4] : tensor<512x3x3x[[S]]x[[C]]xf16>
// CHECK: %[[W3:.*]] = kgraph.reshape %[[W2]] : tensor<[[S]]x512x3x3x[[C]]xf16> to tensor<{{[0-9]+}}x3x3x[[C]]xf16>
// CHECK: %[[P:.*]] = kgraph.conv2d %[[X]], %[[W3]] layout = nhwc padding = [1, 1, 1, 1] groups = [[S]] : tensor<1x7x7x512xf16>, tensor<{{[0-9]+}}x3x3x[[C]]xf16> -> tensor<1x7x7x{{[0-9]+}}xf32>
// CHECK: %[[P1:.*]] = kgraph.reshape %[[P]] : tensor<1x7x7x{{[0-9]+}}xf32> to tensor<1x7x7x[[S]]x512xf32>
// CHECK: %[[SUM:.*]] = kgraph.reduce sum %[[P1]] axes = [3] : tensor<1x7x7x[[S]]x512xf32>
// CHECK: %[[R:.*]] = kgraph.cast %[[SUM]] : tensor<1x7x7x512xf32> to tensor<1x7x7x512xf16>
// CHECK: return %[[R]]
// SM80-LABEL: func @last_stage_3x3
// SM80: kgraph.conv2d {{.*}} groups =
// SM80: kgraph.reduce sum
func.func @last_stage_3x3(%x: tensor<1x7x7x512xf16>, %w: tensor<512x3x3x512xf16>) -> tensor<1x7x7x512xf16> {
  %0 = kgraph.conv2d %x, %w layout = nhwc padding = [1, 1, 1, 1] : tensor<1x7x7x512xf16>, tensor<512x3x3x512xf16> -> tensor<1x7x7x512xf16>
  return %0 : tensor<1x7x7x512xf16>
}

// -----

// The same layer at batch 256 fills the GPU as it is: left alone.
// CHECK-LABEL: func @batch_256
// CHECK-NOT: groups
// CHECK-NOT: kgraph.reduce
// CHECK: return
func.func @batch_256(%x: tensor<256x7x7x512xf16>, %w: tensor<512x3x3x512xf16>) -> tensor<256x7x7x512xf16> {
  %0 = kgraph.conv2d %x, %w layout = nhwc padding = [1, 1, 1, 1] : tensor<256x7x7x512xf16>, tensor<512x3x3x512xf16> -> tensor<256x7x7x512xf16>
  return %0 : tensor<256x7x7x512xf16>
}

// -----

// nchw f32 with an f32 result (no cast): the filter's channel axis is 1,
// the partials' slice axis 1. Consumers read the sum.
// REPORT: remark: split-K on sm_90a: split into
// CHECK-LABEL: func @nchw_f32
// CHECK: kgraph.reshape %{{.*}} : tensor<256x256x3x3xf32> to tensor<256x[[S:[0-9]+]]x[[C:[0-9]+]]x3x3xf32>
// CHECK: kgraph.transpose %{{.*}}, permutation = [1, 0, 2, 3, 4] : tensor<256x[[S]]x[[C]]x3x3xf32>
// CHECK: %[[P:.*]] = kgraph.conv2d %{{.*}} strides = [2, 2] padding = [1, 1, 1, 1] groups = [[S]] :
// CHECK: %[[P1:.*]] = kgraph.reshape %[[P]] : tensor<1x{{[0-9]+}}x7x7xf32> to tensor<1x[[S]]x256x7x7xf32>
// CHECK: %[[SUM:.*]] = kgraph.reduce sum %[[P1]] axes = [1] : tensor<1x[[S]]x256x7x7xf32>
// CHECK-NOT: kgraph.cast
// CHECK: kgraph.relu %[[SUM]]
func.func @nchw_f32(%x: tensor<1x256x14x14xf32>, %w: tensor<256x256x3x3xf32>) -> tensor<1x256x7x7xf32> {
  %0 = kgraph.conv2d %x, %w strides = [2, 2] padding = [1, 1, 1, 1] : tensor<1x256x14x14xf32>, tensor<256x256x3x3xf32> -> tensor<1x256x7x7xf32>
  %1 = kgraph.relu %0 : tensor<1x256x7x7xf32>
  return %1 : tensor<1x256x7x7xf32>
}

// -----

// Too little K to split (64 channels, K = 576), a grouped conv, and a conv
// already in a kernel group: left alone.
// CHECK-LABEL: func @left_alone
// CHECK-NOT: kgraph.reduce
// CHECK: return
func.func @left_alone(%x: tensor<1x7x7x64xf16>, %w: tensor<512x3x3x64xf16>, %y: tensor<1x7x7x512xf16>, %g: tensor<512x3x3x256xf16>) -> (tensor<1x7x7x512xf16>, tensor<1x7x7x512xf16>, tensor<1x7x7x512xf16>) {
  %0 = kgraph.conv2d %x, %w layout = nhwc padding = [1, 1, 1, 1] : tensor<1x7x7x64xf16>, tensor<512x3x3x64xf16> -> tensor<1x7x7x512xf16>
  %1 = kgraph.conv2d %y, %g layout = nhwc padding = [1, 1, 1, 1] groups = 2 : tensor<1x7x7x512xf16>, tensor<512x3x3x256xf16> -> tensor<1x7x7x512xf16>
  %2 = kgraph.fused (%y, %w) : (tensor<1x7x7x512xf16>, tensor<512x3x3x64xf16>) -> tensor<1x7x7x512xf16> {
  ^bb0(%a: tensor<1x7x7x512xf16>, %b: tensor<512x3x3x64xf16>):
    %c = kgraph.slice %a offsets = [0, 0, 0, 0] sizes = [1, 7, 7, 64] strides = [1, 1, 1, 1] : tensor<1x7x7x512xf16>
    %d = kgraph.conv2d %c, %b layout = nhwc padding = [1, 1, 1, 1] : tensor<1x7x7x64xf16>, tensor<512x3x3x64xf16> -> tensor<1x7x7x512xf16>
    kgraph.yield %d : tensor<1x7x7x512xf16>
  }
  return %0, %1, %2 : tensor<1x7x7x512xf16>, tensor<1x7x7x512xf16>, tensor<1x7x7x512xf16>
}

// -----

// i8 operands: i32 partials summed exactly, an i32 result (no cast).
// REPORT: remark: split-K on sm_90a: split into
// CHECK-LABEL: func @i8
// CHECK: kgraph.conv2d {{.*}} groups = {{[0-9]+}} : tensor<1x7x7x512xi8>, tensor<{{[0-9]+}}x3x3x{{[0-9]+}}xi8> -> tensor<1x7x7x{{[0-9]+}}xi32>
// CHECK: kgraph.reduce sum %{{.*}} axes = [3] : tensor<1x7x7x{{[0-9]+}}x512xi32>
// CHECK-NOT: kgraph.cast
func.func @i8(%x: tensor<1x7x7x512xi8>, %w: tensor<512x3x3x512xi8>) -> tensor<1x7x7x512xi32> {
  %0 = kgraph.conv2d %x, %w layout = nhwc padding = [1, 1, 1, 1] : tensor<1x7x7x512xi8>, tensor<512x3x3x512xi8> -> tensor<1x7x7x512xi32>
  return %0 : tensor<1x7x7x512xi32>
}

// -----

// A 1x1 conv from 1024 to 256 channels over 14x14 pixels at batch 1: the
// model's best split is estimated less than 1.25x faster, so it is kept,
// and the report says why.
// REPORT: remark: split-K on sm_90a: not split into {{[0-9]+}} channel slices, estimated {{.*}}: less than 1.25x faster
// CHECK-LABEL: func @not_enough_gain
// CHECK-NOT: kgraph.reduce
// CHECK: return
// With min-gain=1.0 any estimated gain is taken:
// GAIN1-LABEL: func @not_enough_gain
// GAIN1: kgraph.conv2d {{.*}} groups =
// GAIN1: kgraph.reduce sum
func.func @not_enough_gain(%x: tensor<1x14x14x1024xf16>, %w: tensor<256x1x1x1024xf16>) -> tensor<1x14x14x256xf16> {
  %0 = kgraph.conv2d %x, %w layout = nhwc : tensor<1x14x14x1024xf16>, tensor<256x1x1x1024xf16> -> tensor<1x14x14x256xf16>
  return %0 : tensor<1x14x14x256xf16>
}

// -----

// The same conv with the filter a model parameter: its slices are stacked
// once at load (kgraph-lower-to-gpu{hoist-parameter-kernels}), so the
// per-call estimate has neither the copy nor its launch, and the split
// pays. hoisted-filters=false prices the copy per call: kept.
// REPORT: remark: split-K on sm_90a: split into {{[0-9]+}} channel slices, estimated {{.*}} us split (grouped conv, sum; filter copied at load)
// CHECK-LABEL: func @parameter_filter
// CHECK: kgraph.transpose
// CHECK: kgraph.conv2d {{.*}} groups =
// CHECK: kgraph.reduce sum
// PERCALL-LABEL: func @parameter_filter
// PERCALL-NOT: kgraph.reduce
// PERCALL: return
func.func @parameter_filter(%x: tensor<1x14x14x1024xf16>, %w: tensor<256x1x1x1024xf16> {kgraph.param = "w"}) -> tensor<1x14x14x256xf16> {
  %0 = kgraph.conv2d %x, %w layout = nhwc : tensor<1x14x14x1024xf16>, tensor<256x1x1x1024xf16> -> tensor<1x14x14x256xf16>
  return %0 : tensor<1x14x14x256xf16>
}

// -----

// A filter computed from a parameter by ops (a cast) counts as one too.
// CHECK-LABEL: func @derived_filter
// CHECK: kgraph.reduce sum
// PERCALL-LABEL: func @derived_filter
// PERCALL-NOT: kgraph.reduce
// PERCALL: return
func.func @derived_filter(%x: tensor<1x14x14x1024xf16>, %w: tensor<256x1x1x1024xf32> {kgraph.param = "w"}) -> tensor<1x14x14x256xf16> {
  %h = kgraph.cast %w : tensor<256x1x1x1024xf32> to tensor<256x1x1x1024xf16>
  %0 = kgraph.conv2d %x, %h layout = nhwc : tensor<1x14x14x1024xf16>, tensor<256x1x1x1024xf16> -> tensor<1x14x14x256xf16>
  return %0 : tensor<1x14x14x256xf16>
}
