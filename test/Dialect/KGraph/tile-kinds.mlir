// RUN: kgraph-opt %s --split-input-file --verify-diagnostics --kgraph-tile=target=sm_80 | FileCheck %s

// kgraph-tile records the kind of a hand-written group it classifies.
// CHECK-LABEL: func @classified
// CHECK: kgraph.fused elementwise (%{{.*}}) {kgraph.config = #kgraph.elementwise_config<
func.func @classified(%a: tensor<1000xf32>) -> tensor<1000xf32> {
  %0 = kgraph.fused (%a) : (tensor<1000xf32>) -> tensor<1000xf32> {
  ^bb0(%x: tensor<1000xf32>):
    %r = kgraph.relu %x : tensor<1000xf32>
    kgraph.yield %r : tensor<1000xf32>
  }
  return %0 : tensor<1000xf32>
}

// -----

// A small conv2d is a stencil op; recorded as a gemm group, it gets the GEMM
// kernel, and without a kind the stencil kernel.
// CHECK-LABEL: func @conv_kinds
// CHECK: kgraph.fused gemm (%{{.*}}, %{{.*}}) {kgraph.config = #kgraph.matmul_config<
// CHECK: kgraph.fused stencil (%{{.*}}, %{{.*}}) {kgraph.config = #kgraph.stencil_config<
func.func @conv_kinds(%img: tensor<1x1x16x16xf32>, %w: tensor<1x1x3x3xf32>) -> (tensor<1x1x16x16xf32>, tensor<1x1x16x16xf32>) {
  %0 = kgraph.fused gemm (%img, %w) : (tensor<1x1x16x16xf32>, tensor<1x1x3x3xf32>) -> tensor<1x1x16x16xf32> {
  ^bb0(%x: tensor<1x1x16x16xf32>, %f: tensor<1x1x3x3xf32>):
    %r = kgraph.conv2d %x, %f padding = [1, 1, 1, 1] : tensor<1x1x16x16xf32>, tensor<1x1x3x3xf32> -> tensor<1x1x16x16xf32>
    kgraph.yield %r : tensor<1x1x16x16xf32>
  }
  %1 = kgraph.fused (%img, %w) : (tensor<1x1x16x16xf32>, tensor<1x1x3x3xf32>) -> tensor<1x1x16x16xf32> {
  ^bb0(%x: tensor<1x1x16x16xf32>, %f: tensor<1x1x3x3xf32>):
    %r = kgraph.conv2d %x, %f padding = [1, 1, 1, 1] : tensor<1x1x16x16xf32>, tensor<1x1x3x3xf32> -> tensor<1x1x16x16xf32>
    kgraph.yield %r : tensor<1x1x16x16xf32>
  }
  return %0, %1 : tensor<1x1x16x16xf32>, tensor<1x1x16x16xf32>
}

// -----

func.func @kind_config_mismatch(%a: tensor<1000xf32>) -> tensor<1000xf32> {
  // expected-error @+1 {{'kgraph.fused' op is of kind 'elementwise' but its 'kgraph.config' is for reduce kernels: #kgraph.reduce_config<threads_per_row = 32, rows_per_block = 8, vector_width = 4, grid_size = 2>}}
  %0 = kgraph.fused elementwise (%a) {kgraph.config = #kgraph.reduce_config<threads_per_row = 32, rows_per_block = 8, vector_width = 4, grid_size = 2>} : (tensor<1000xf32>) -> tensor<1000xf32> {
  ^bb0(%x: tensor<1000xf32>):
    %r = kgraph.relu %x : tensor<1000xf32>
    kgraph.yield %r : tensor<1000xf32>
  }
  return %0 : tensor<1000xf32>
}

// -----

func.func @not_a_config(%a: tensor<1000xf32>) -> tensor<1000xf32> {
  // expected-error @+1 {{'kgraph.fused' op has a 'kgraph.config' that is not a kernel configuration (or the kernel-config models are not registered: kgraph::registerKernelConfigModels): 7 : i32}}
  %0 = kgraph.fused (%a) {kgraph.config = 7 : i32} : (tensor<1000xf32>) -> tensor<1000xf32> {
  ^bb0(%x: tensor<1000xf32>):
    %r = kgraph.relu %x : tensor<1000xf32>
    kgraph.yield %r : tensor<1000xf32>
  }
  return %0 : tensor<1000xf32>
}

// -----

func.func @copy_group(%a: tensor<4x8xf32>) -> tensor<8x4xf32> {
  %0 = kgraph.fused copy (%a) : (tensor<4x8xf32>) -> tensor<8x4xf32> {
  ^bb0(%x: tensor<4x8xf32>):
    // expected-error @+1 {{'kgraph.transpose' op has no code generation for sm_80 yet: kgraph lowers elementwise, matmul, conv2d, pool2d, reduce and transpose groups}}
    %r = kgraph.transpose %x, permutation = [1, 0] : tensor<4x8xf32>
    kgraph.yield %r : tensor<8x4xf32>
  }
  return %0 : tensor<8x4xf32>
}
