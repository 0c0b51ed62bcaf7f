// RUN: kgraph-opt %s --split-input-file --kgraph-tile=target=sm_90a | FileCheck %s
// RUN: kgraph-opt %s --split-input-file --kgraph-tile="target=sm_80 report=true" 2>&1 | FileCheck %s --check-prefix=REPORT

// A GEMM group (anchor + epilogue + prologue) is tiled on its anchor's
// problem plus the epilogue's global traffic: a bias and relu add none
// worth counting, so matmul + bias + relu gets the configuration of the
// matmul alone.
// CHECK-LABEL: func.func @matmul_bias_relu_f16
// CHECK: kgraph.fused{{.*}}{kgraph.config = [[CFG:#kgraph.matmul_config<.*>]]}
// CHECK: kgraph.fused{{.*}}{kgraph.config = [[CFG]]}
func.func @matmul_bias_relu_f16(%a: tensor<4096x4096xf16>, %b: tensor<4096x4096xf16>, %bias: tensor<4096xf16>) -> (tensor<4096x4096xf16>, tensor<4096x4096xf16>) {
  %0 = kgraph.fused (%a, %b) : (tensor<4096x4096xf16>, tensor<4096x4096xf16>) -> tensor<4096x4096xf16> {
  ^bb0(%x: tensor<4096x4096xf16>, %y: tensor<4096x4096xf16>):
    %m = kgraph.matmul %x, %y : tensor<4096x4096xf16>, tensor<4096x4096xf16> -> tensor<4096x4096xf16>
    kgraph.yield %m : tensor<4096x4096xf16>
  }
  %1 = kgraph.fused (%a, %b, %bias) : (tensor<4096x4096xf16>, tensor<4096x4096xf16>, tensor<4096xf16>) -> tensor<4096x4096xf16> {
  ^bb0(%x: tensor<4096x4096xf16>, %y: tensor<4096x4096xf16>, %c: tensor<4096xf16>):
    %m = kgraph.matmul %x, %y : tensor<4096x4096xf16>, tensor<4096x4096xf16> -> tensor<4096x4096xf16>
    %s = kgraph.add %m, %c : tensor<4096x4096xf16>, tensor<4096xf16>
    %r = kgraph.relu %s : tensor<4096x4096xf16>
    kgraph.yield %r : tensor<4096x4096xf16>
  }
  return %0, %1 : tensor<4096x4096xf16>, tensor<4096x4096xf16>
}

// -----

// conv2d + bias + residual + relu, and an nchw conv2d with a per-channel
// [1, F, 1, 1] bias. A bias is read once per block: tiled as the implicit
// GEMM of the conv2d alone. The residual doubles the epilogue's global
// traffic, which the model costs (MatmulModel.cpp): with this short main
// loop (K = 576) it picks more warps for the same 64x64 tile.
// CHECK-LABEL: func.func @conv_epilogues
// CHECK: kgraph.fused{{.*}}{kgraph.config = #kgraph.matmul_config<tile_m = 64, tile_n = 64, tile_k = 64, warps_m = 4, warps_n = 1, {{.*}}instruction = wgmma
// CHECK: kgraph.fused{{.*}}{kgraph.config = #kgraph.matmul_config<tile_m = 64, tile_n = 64, tile_k = 64, warps_m = 4, warps_n = 2, {{.*}}instruction = wgmma
// CHECK: kgraph.fused{{.*}}{kgraph.config = [[NCHW:#kgraph.matmul_config<.*>]]}
// CHECK: kgraph.fused{{.*}}{kgraph.config = [[NCHW]]}
func.func @conv_epilogues(%x: tensor<8x28x28x64xf16>, %w: tensor<64x3x3x64xf16>, %bias: tensor<64xf16>, %res: tensor<8x28x28x64xf16>,
                          %xn: tensor<8x64x28x28xf16>, %wn: tensor<64x64x3x3xf16>, %bn: tensor<1x64x1x1xf16>)
    -> (tensor<8x28x28x64xf16>, tensor<8x28x28x64xf16>, tensor<8x64x28x28xf16>, tensor<8x64x28x28xf16>) {
  %0 = kgraph.fused (%x, %w) : (tensor<8x28x28x64xf16>, tensor<64x3x3x64xf16>) -> tensor<8x28x28x64xf16> {
  ^bb0(%i: tensor<8x28x28x64xf16>, %f: tensor<64x3x3x64xf16>):
    %c = kgraph.conv2d %i, %f layout = nhwc padding = [1, 1, 1, 1] : tensor<8x28x28x64xf16>, tensor<64x3x3x64xf16> -> tensor<8x28x28x64xf16>
    kgraph.yield %c : tensor<8x28x28x64xf16>
  }
  %1 = kgraph.fused (%x, %w, %bias, %res) : (tensor<8x28x28x64xf16>, tensor<64x3x3x64xf16>, tensor<64xf16>, tensor<8x28x28x64xf16>) -> tensor<8x28x28x64xf16> {
  ^bb0(%i: tensor<8x28x28x64xf16>, %f: tensor<64x3x3x64xf16>, %bb: tensor<64xf16>, %r: tensor<8x28x28x64xf16>):
    %c = kgraph.conv2d %i, %f layout = nhwc padding = [1, 1, 1, 1] : tensor<8x28x28x64xf16>, tensor<64x3x3x64xf16> -> tensor<8x28x28x64xf16>
    %s = kgraph.add %c, %bb : tensor<8x28x28x64xf16>, tensor<64xf16>
    %t = kgraph.add %s, %r : tensor<8x28x28x64xf16>, tensor<8x28x28x64xf16>
    %u = kgraph.relu %t : tensor<8x28x28x64xf16>
    kgraph.yield %u : tensor<8x28x28x64xf16>
  }
  %2 = kgraph.fused (%xn, %wn) : (tensor<8x64x28x28xf16>, tensor<64x64x3x3xf16>) -> tensor<8x64x28x28xf16> {
  ^bb0(%i: tensor<8x64x28x28xf16>, %f: tensor<64x64x3x3xf16>):
    %c = kgraph.conv2d %i, %f padding = [1, 1, 1, 1] : tensor<8x64x28x28xf16>, tensor<64x64x3x3xf16> -> tensor<8x64x28x28xf16>
    kgraph.yield %c : tensor<8x64x28x28xf16>
  }
  %3 = kgraph.fused (%xn, %wn, %bn) : (tensor<8x64x28x28xf16>, tensor<64x64x3x3xf16>, tensor<1x64x1x1xf16>) -> tensor<8x64x28x28xf16> {
  ^bb0(%i: tensor<8x64x28x28xf16>, %f: tensor<64x64x3x3xf16>, %bb: tensor<1x64x1x1xf16>):
    %c = kgraph.conv2d %i, %f padding = [1, 1, 1, 1] : tensor<8x64x28x28xf16>, tensor<64x64x3x3xf16> -> tensor<8x64x28x28xf16>
    %s = kgraph.add %c, %bb : tensor<8x64x28x28xf16>, tensor<1x64x1x1xf16>
    %u = kgraph.relu %s : tensor<8x64x28x28xf16>
    kgraph.yield %u : tensor<8x64x28x28xf16>
  }
  return %0, %1, %2, %3 : tensor<8x28x28x64xf16>, tensor<8x28x28x64xf16>, tensor<8x64x28x28xf16>, tensor<8x64x28x28xf16>
}

// -----

// A prologue (cast f32 -> f16 on A, scale by a splat on B) makes the
// problem the f16 matmul's: shared memory holds f16 tiles, and A is staged
// through registers (the model counts staging registers: the report shows
// more registers than for the plain f16 matmul). On sm_90a the staged tile
// is written in wgmma's swizzled layout like a copied one.
// CHECK-LABEL: func.func @prologue
// CHECK: kgraph.fused{{.*}}{kgraph.config = #kgraph.matmul_config<{{.*}}instruction = wgmma, instruction_shape = [64, {{[0-9]+}}, 16]{{.*}}>}
// REPORT: remark: matmul smem 75776 B, 112 regs/thread (acc 32, frag 32, staging 8, addresses 0)
// REPORT: remark: matmul smem 75776 B, 104 regs/thread (acc 32, frag 32, staging 0, addresses 0)
func.func @prologue(%a: tensor<1024x1024xf32>, %b: tensor<1024x1024xf16>, %ah: tensor<1024x1024xf16>) -> (tensor<1024x1024xf32>, tensor<1024x1024xf32>) {
  %0 = kgraph.fused (%a, %b) : (tensor<1024x1024xf32>, tensor<1024x1024xf16>) -> tensor<1024x1024xf32> {
  ^bb0(%x: tensor<1024x1024xf32>, %y: tensor<1024x1024xf16>):
    %s = arith.constant dense<5.000000e-01> : tensor<f16>
    %xh = kgraph.cast %x : tensor<1024x1024xf32> to tensor<1024x1024xf16>
    %ys = kgraph.mul %y, %s : tensor<1024x1024xf16>, tensor<f16>
    %m = kgraph.matmul %xh, %ys : tensor<1024x1024xf16>, tensor<1024x1024xf16> -> tensor<1024x1024xf32>
    kgraph.yield %m : tensor<1024x1024xf32>
  }
  %1 = kgraph.fused (%ah, %b) : (tensor<1024x1024xf16>, tensor<1024x1024xf16>) -> tensor<1024x1024xf32> {
  ^bb0(%x: tensor<1024x1024xf16>, %y: tensor<1024x1024xf16>):
    %m = kgraph.matmul %x, %y : tensor<1024x1024xf16>, tensor<1024x1024xf16> -> tensor<1024x1024xf32>
    kgraph.yield %m : tensor<1024x1024xf32>
  }
  return %0, %1 : tensor<1024x1024xf32>, tensor<1024x1024xf32>
}
