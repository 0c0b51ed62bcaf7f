// RUN: kgraph-opt %s --pass-pipeline='builtin.module(func.func(kgraph-fuse{report=true}))' --split-input-file --verify-diagnostics

// A group's remark lists its ops by name and line:column.
func.func @gemm_group(%a: tensor<64x32xf16>, %b: tensor<32x128xf16>, %bias: tensor<128xf32>) -> tensor<64x128xf32> {
  // expected-remark @below {{fused 3 ops into a gemm group with 1 result: kgraph.matmul at 6:8, kgraph.add at 7:8, kgraph.relu at 8:8}}
  %0 = kgraph.matmul %a, %b : tensor<64x32xf16>, tensor<32x128xf16> -> tensor<64x128xf32>
  %1 = kgraph.add %0, %bias : tensor<64x128xf32>, tensor<128xf32>
  %2 = kgraph.relu %1 : tensor<64x128xf32>
  return %2 : tensor<64x128xf32>
}

// -----

// The matmul result is also a function result: no epilogue.
func.func @two_users(%a: tensor<64x32xf16>, %b: tensor<32x128xf16>) -> (tensor<64x128xf32>, tensor<64x128xf32>) {
  // expected-remark @below {{not fused: no epilogue fused: its result has 2 users}}
  %0 = kgraph.matmul %a, %b : tensor<64x32xf16>, tensor<32x128xf16> -> tensor<64x128xf32>
  // expected-remark @below {{not fused: not fused into the kgraph.matmul epilogue: its operand has 2 users}}
  %1 = kgraph.relu %0 : tensor<64x128xf32>
  return %0, %1 : tensor<64x128xf32>, tensor<64x128xf32>
}

// -----

// A 64-channel conv2d is no stencil op, and a strided pool2d neither; the
// pool is no epilogue.
func.func @not_stencil(%x: tensor<1x64x16x16xf32>, %w: tensor<64x64x3x3xf32>) -> tensor<1x64x7x7xf32> {
  // expected-remark @below {{not fused: conv2d is not a stencil op: 64 input channels; no epilogue fused: its user 'kgraph.pool2d' is not an elementwise op of the result's shape}}
  %0 = kgraph.conv2d %x, %w padding = [1, 1, 1, 1] : tensor<1x64x16x16xf32>, tensor<64x64x3x3xf32> -> tensor<1x64x16x16xf32>
  // expected-remark @below {{not fused: pool2d is not a stencil op: pool2d has strides other than 1}}
  %1 = kgraph.pool2d max %0 kernel = [3, 3] strides = [2, 2] : tensor<1x64x16x16xf32>
  return %1 : tensor<1x64x7x7xf32>
}

// -----

// The epilogue ends where a second result would be needed.
func.func @second_result(%a: tensor<64x32xf32>, %b: tensor<32x128xf32>, %bias: tensor<128xf32>) -> (tensor<64x128xf32>, tensor<64x128xf32>) {
  // expected-remark @below {{fused 2 ops into a gemm group with 1 result: kgraph.matmul at 40:8, kgraph.add at 41:8}}
  %0 = kgraph.matmul %a, %b : tensor<64x32xf32>, tensor<32x128xf32> -> tensor<64x128xf32>
  %1 = kgraph.add %0, %bias : tensor<64x128xf32>, tensor<128xf32>
  // expected-remark @below {{not fused: not fused into the kgraph.matmul group: the group would yield more than one value}}
  %2 = kgraph.relu %1 : tensor<64x128xf32>
  return %1, %2 : tensor<64x128xf32>, tensor<64x128xf32>
}

// -----

// Elementwise and stencil groups.
func.func @kinds(%x: tensor<1x2x8x8xf32>, %w: tensor<2x2x3x3xf32>) -> (tensor<1x2x8x8xf32>, tensor<1x2x8x8xf32>) {
  // expected-remark @below {{fused 2 ops into a stencil group with 1 result: kgraph.conv2d at 52:8, kgraph.relu at 53:8}}
  %0 = kgraph.conv2d %x, %w padding = [1, 1, 1, 1] : tensor<1x2x8x8xf32>, tensor<2x2x3x3xf32> -> tensor<1x2x8x8xf32>
  %1 = kgraph.relu %0 : tensor<1x2x8x8xf32>
  // expected-remark @below {{fused 2 ops into an elementwise group with 1 result: kgraph.exp at 55:8, kgraph.neg at 56:8}}
  %2 = kgraph.exp %x : tensor<1x2x8x8xf32>
  %3 = kgraph.neg %2 : tensor<1x2x8x8xf32>
  return %1, %3 : tensor<1x2x8x8xf32>, tensor<1x2x8x8xf32>
}

// -----

// A lone reduce.
func.func @lone_reduce(%x: tensor<4x8xf32>) -> tensor<4xf32> {
  // expected-remark @below {{not fused: reduce with no elementwise producer or consumer to fuse}}
  %0 = kgraph.reduce max %x axes = [1] : tensor<4x8xf32>
  return %0 : tensor<4xf32>
}

// -----

// A recomputed op is marked in the group's list; its original is reported
// where it stays.
func.func @recomputed(%x: tensor<64x64xf32>, %w: tensor<64x64xf32>) -> (tensor<64x64xf32>, tensor<64x64xf32>) {
  // expected-remark @below {{not fused: no producer or consumer it can be fused with}}
  %a = kgraph.neg %x : tensor<64x64xf32>
  // expected-remark @below {{not fused: no epilogue fused: its result has 2 users}}
  %m = kgraph.matmul %a, %w : tensor<64x64xf32>, tensor<64x64xf32> -> tensor<64x64xf32>
  // expected-remark @below {{fused 2 ops into an elementwise group with 1 result: kgraph.neg at 75:8 (recomputed), kgraph.add at 79:8}}
  %c = kgraph.add %a, %m : tensor<64x64xf32>, tensor<64x64xf32>
  return %c, %m : tensor<64x64xf32>, tensor<64x64xf32>
}

// -----

// A stencil op with nothing on its grid to fuse.
func.func @lone_stencil(%x: tensor<1x8x8x2xf32>) -> tensor<1x4x4x2xf32> {
  // expected-remark @below {{not fused: stencil op with no fusible neighbour}}
  %0 = kgraph.pool2d max %x kernel = [3, 3] padding = [1, 1, 1, 1] layout = nhwc : tensor<1x8x8x2xf32>
  // expected-remark @below {{not fused: pool2d is not a stencil op: pool2d has strides other than 1}}
  %1 = kgraph.pool2d avg %0 kernel = [2, 2] strides = [2, 2] layout = nhwc : tensor<1x8x8x2xf32>
  return %1 : tensor<1x4x4x2xf32>
}

// -----

// A softmax is one reduction group, whose result the matmul reads.
func.func @softmax_group(%x: tensor<8x64xf32>, %w: tensor<64x16xf32>) -> tensor<8x16xf32> {
  // expected-remark @below {{fused 5 ops into a reduction group with 1 result: kgraph.reduce at 99:8, kgraph.sub at 100:8, kgraph.exp at 101:8, kgraph.reduce at 102:8, kgraph.div at 103:8}}
  %m = kgraph.reduce max %x axes = [1] keep_dims : tensor<8x64xf32>
  %d = kgraph.sub %x, %m : tensor<8x64xf32>, tensor<8x1xf32>
  %e = kgraph.exp %d : tensor<8x64xf32>
  %s = kgraph.reduce sum %e axes = [1] keep_dims : tensor<8x64xf32>
  %p = kgraph.div %e, %s : tensor<8x64xf32>, tensor<8x1xf32>
  // expected-remark @below {{not fused: no epilogue fused: its user 'func.return' is not an elementwise op of the result's shape}}
  %y = kgraph.matmul %p, %w : tensor<8x64xf32>, tensor<64x16xf32> -> tensor<8x16xf32>
  return %y : tensor<8x16xf32>
}
