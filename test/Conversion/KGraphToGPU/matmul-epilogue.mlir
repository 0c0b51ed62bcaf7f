// RUN: kgraph-opt %s --split-input-file \
// RUN:   --pass-pipeline='builtin.module(kgraph-tile{target=sm_80},kgraph-lower-to-gpu,canonicalize,cse)' \
// RUN:   | FileCheck %s

// matmul + bias + relu in f16 with a pinned configuration that does not
// divide M = 100, N = 200. Kernel arguments: the group's inputs, then the
// result. The epilogue is staged through shared memory: the accumulators
// rounded to f16 (the matmul's result type) are written over the operand
// tiles as a [64][64 + 8] tile, and after a barrier each thread reads back
// runs of 8 consecutive columns; the bias add and relu compute in f32 and
// round to f16: the values the ops compute one at a time. Inside C the
// bias run is one vector load and the result run one vector store; at the
// edges every element is checked.
// CHECK-LABEL: gpu.func @bias_relu_f16_k0(
// CHECK-SAME: %{{.*}}: memref<100x72xf16>, %{{.*}}: memref<72x200xf16>, %{{.*}}: memref<200xf16>, %{{.*}}: memref<100x200xf16>)
// CHECK: scf.for
// CHECK: nvgpu.mma.sync
// CHECK: %[[STAGE:.*]] = memref.view {{.*}} to memref<64x72xf16, #gpu.address_space<workgroup>>
// CHECK-NEXT: gpu.barrier
// CHECK: %[[ACC:.*]] = vector.extract %{{.*}}[0, 0] : f32 from vector<2x2xf32>
// CHECK-NEXT: %[[ACC16:.*]] = arith.truncf %[[ACC]] : f32 to f16
// CHECK: vector.store %{{.*}}, %[[STAGE]][%{{.*}}, %{{.*}}] {alignment = 4 : i64} : memref<64x72xf16, #gpu.address_space<workgroup>>, vector<2xf16>
// CHECK: gpu.barrier
// CHECK: scf.if
// CHECK: %[[ROW8:.*]] = vector.load %[[STAGE]][%{{.*}}, %{{.*}}] {alignment = 16 : i64} : memref<64x72xf16, #gpu.address_space<workgroup>>, vector<8xf16>
// CHECK: %[[R0:.*]] = vector.extract %[[ROW8]][0] : f16 from vector<8xf16>
// CHECK: %[[ACC32:.*]] = arith.extf %[[R0]] : f16 to f32
// CHECK: %[[BIAS:.*]] = vector.load %{{.*}}[%{{.*}}] {alignment = 16 : i64} : memref<200xf16>, vector<8xf16>
// CHECK: %[[B0:.*]] = vector.extract %[[BIAS]][0] : f16 from vector<8xf16>
// CHECK: %[[B32:.*]] = arith.extf %[[B0]] : f16 to f32
// CHECK: %[[SUM:.*]] = arith.addf %[[ACC32]], %[[B32]] : f32
// CHECK: %[[SUM16:.*]] = arith.truncf %[[SUM]] : f32 to f16
// CHECK: %[[S32:.*]] = arith.extf %[[SUM16]] : f16 to f32
// CHECK: %[[NEG:.*]] = arith.cmpf olt, %[[S32]], %{{.*}} : f32
// CHECK: arith.select %[[NEG]], %{{.*}}, %[[S32]] : f32
// CHECK: vector.store %{{.*}} {alignment = 16 : i64} : memref<20000xf16>, vector<8xf16>
// CHECK: } else {
// CHECK: vector.load %[[STAGE]]
// CHECK: memref.load %{{.*}} : memref<200xf16>
// CHECK: scf.if
// CHECK: memref.store %{{.*}} : memref<20000xf16>
func.func @bias_relu_f16(%a: tensor<100x72xf16>, %b: tensor<72x200xf16>, %bias: tensor<200xf16>) -> tensor<100x200xf16> {
  %0 = kgraph.fused (%a, %b, %bias) {kgraph.config = #kgraph.matmul_config<tile_m = 64, tile_n = 64, tile_k = 32, warps_m = 2, warps_n = 2, stages = 3, instruction = mma_sync, instruction_shape = [16, 8, 16], load_width = 8, smem_padding = 8>} : (tensor<100x72xf16>, tensor<72x200xf16>, tensor<200xf16>) -> tensor<100x200xf16> {
  ^bb0(%x: tensor<100x72xf16>, %y: tensor<72x200xf16>, %c: tensor<200xf16>):
    %m = kgraph.matmul %x, %y : tensor<100x72xf16>, tensor<72x200xf16> -> tensor<100x200xf16>
    %s = kgraph.add %m, %c : tensor<100x200xf16>, tensor<200xf16>
    %r = kgraph.relu %s : tensor<100x200xf16>
    kgraph.yield %r : tensor<100x200xf16>
  }
  return %0 : tensor<100x200xf16>
}

// -----

// nchw conv2d with a per-channel [1, F, 1, 1] bias: GEMM row m is pixel
// m % (OH*OW) of image m / (OH*OW) and column n is channel n, so the bias
// element is the column itself; the channels of the output are OH*OW = 121
// apart, so pairs are stored one element at a time.
// CHECK-LABEL: gpu.func @nchw_bias_k0(
// CHECK-SAME: %{{.*}}: memref<2x16x13x13xf16>, %{{.*}}: memref<24x16x3x3xf16>, %[[BIAS:.*]]: memref<1x24x1x1xf16>, %{{.*}}: memref<2x24x11x11xf16>)
// CHECK: %[[FLAT:.*]] = memref.reinterpret_cast %[[BIAS]] to offset: [0], sizes: [24], strides: [1]
// CHECK: vector.extract %{{.*}}[0, 0] : f32 from vector<2x2xf32>
// CHECK: memref.load %[[FLAT]][%[[COL:.*]]] : memref<24xf16>
// CHECK: %[[COL1:.*]] = arith.addi %[[COL]], %c1 : index
// CHECK: memref.load %[[FLAT]][%[[COL1]]] : memref<24xf16>
// CHECK: arith.addf
// CHECK: arith.cmpf olt
// CHECK: memref.store %{{.*}}, %{{.*}}[%[[AT:.*]]] : memref<5808xf16>
// CHECK: %[[AT1:.*]] = arith.addi %[[AT]], %c121 : index
// CHECK: memref.store %{{.*}}, %{{.*}}[%[[AT1]]] : memref<5808xf16>
func.func @nchw_bias(%x: tensor<2x16x13x13xf16>, %w: tensor<24x16x3x3xf16>, %bias: tensor<1x24x1x1xf16>) -> tensor<2x24x11x11xf16> {
  %0 = kgraph.fused (%x, %w, %bias) : (tensor<2x16x13x13xf16>, tensor<24x16x3x3xf16>, tensor<1x24x1x1xf16>) -> tensor<2x24x11x11xf16> {
  ^bb0(%i: tensor<2x16x13x13xf16>, %f: tensor<24x16x3x3xf16>, %b: tensor<1x24x1x1xf16>):
    %c = kgraph.conv2d %i, %f : tensor<2x16x13x13xf16>, tensor<24x16x3x3xf16> -> tensor<2x24x11x11xf16>
    %s = kgraph.add %c, %b : tensor<2x24x11x11xf16>, tensor<1x24x1x1xf16>
    %r = kgraph.relu %s : tensor<2x24x11x11xf16>
    kgraph.yield %r : tensor<2x24x11x11xf16>
  }
  return %0 : tensor<2x24x11x11xf16>
}

// -----

// nhwc conv2d + bias + residual + relu: the residual has the output's shape
// and is read at the output's own index (row * F + channel), 8 channels
// per vector load like the bias (the staged epilogue's runs); the sum of
// three ops rounds to f16 after each.
// CHECK-LABEL: gpu.func @nhwc_bias_residual_k0(
// CHECK-SAME: %[[BIAS:[^:]*]]: memref<64xf16>, %[[RES:[^:]*]]: memref<3x10x10x64xf16>, %{{.*}}: memref<3x10x10x64xf16>)
// CHECK: %[[FRES:.*]] = memref.reinterpret_cast %[[RES]] to offset: [0], sizes: [19200], strides: [1]
// CHECK: nvvm.cp.async.wait.group 0
// CHECK: %[[STAGE:.*]] = memref.view {{.*}} to memref<32x40xf16, #gpu.address_space<workgroup>>
// CHECK: gpu.barrier
// CHECK: vector.load %[[STAGE]][{{.*}}] {alignment = 16 : i64} : memref<32x40xf16, #gpu.address_space<workgroup>>, vector<8xf16>
// CHECK: vector.load %[[BIAS]][%[[COL:.*]]] {alignment = 16 : i64} : memref<64xf16>, vector<8xf16>
// CHECK: arith.addf
// CHECK: %[[ROWOFF:.*]] = arith.muli %{{.*}}, %c64 : index
// CHECK: %[[AT:.*]] = arith.addi %[[ROWOFF]], %[[COL]] : index
// CHECK: vector.load %[[FRES]][%[[AT]]] {alignment = 16 : i64} : memref<19200xf16>, vector<8xf16>
// CHECK: arith.addf
// CHECK: arith.cmpf olt
// CHECK: vector.store %{{.*}} {alignment = 16 : i64} : memref<19200xf16>, vector<8xf16>
func.func @nhwc_bias_residual(%x: tensor<3x10x10x64xf16>, %w: tensor<64x3x3x64xf16>, %bias: tensor<64xf16>, %res: tensor<3x10x10x64xf16>) -> tensor<3x10x10x64xf16> {
  %0 = kgraph.fused (%x, %w, %bias, %res) : (tensor<3x10x10x64xf16>, tensor<64x3x3x64xf16>, tensor<64xf16>, tensor<3x10x10x64xf16>) -> tensor<3x10x10x64xf16> {
  ^bb0(%i: tensor<3x10x10x64xf16>, %f: tensor<64x3x3x64xf16>, %b: tensor<64xf16>, %r0: tensor<3x10x10x64xf16>):
    %c = kgraph.conv2d %i, %f layout = nhwc padding = [1, 1, 1, 1] : tensor<3x10x10x64xf16>, tensor<64x3x3x64xf16> -> tensor<3x10x10x64xf16>
    %s = kgraph.add %c, %b : tensor<3x10x10x64xf16>, tensor<64xf16>
    %q = kgraph.add %s, %r0 : tensor<3x10x10x64xf16>, tensor<3x10x10x64xf16>
    %r = kgraph.relu %q : tensor<3x10x10x64xf16>
    kgraph.yield %r : tensor<3x10x10x64xf16>
  }
  return %0 : tensor<3x10x10x64xf16>
}

// -----

// f32 matmul (SIMT fma) with an epilogue cast to f16: the stored type is
// the yielded value's; the f32 sum is rounded once, by the cast.
// CHECK-LABEL: gpu.func @cast_f16_k0(
// CHECK-SAME: %{{.*}}: memref<100x200xf16>)
// CHECK: arith.addf
// CHECK-NOT: arith.extf
// CHECK: arith.truncf %{{.*}} : f32 to f16
// CHECK: memref<20000xf16>
func.func @cast_f16(%a: tensor<100x72xf32>, %b: tensor<72x200xf32>, %bias: tensor<200xf32>) -> tensor<100x200xf16> {
  %0 = kgraph.fused (%a, %b, %bias) : (tensor<100x72xf32>, tensor<72x200xf32>, tensor<200xf32>) -> tensor<100x200xf16> {
  ^bb0(%x: tensor<100x72xf32>, %y: tensor<72x200xf32>, %c: tensor<200xf32>):
    %m = kgraph.matmul %x, %y : tensor<100x72xf32>, tensor<72x200xf32> -> tensor<100x200xf32>
    %s = kgraph.add %m, %c : tensor<100x200xf32>, tensor<200xf32>
    %r = kgraph.cast %s : tensor<100x200xf32> to tensor<100x200xf16>
    kgraph.yield %r : tensor<100x200xf16>
  }
  return %0 : tensor<100x200xf16>
}

// -----

// f32 epilogues share the elementwise emitter's scalar lowering: gelu
// (erfc form), sigmoid (1 / (1 + exp(-x))), tanh, clamp (max then min).
// CHECK-LABEL: gpu.func @activations_k0(
// CHECK: math.erfc
// CHECK: math.exp
// CHECK: arith.divf
// CHECK: math.tanh
// CHECK: arith.maximumf
// CHECK: arith.minimumf
// CHECK: memref<20000xf32>
func.func @activations(%a: tensor<100x72xf32>, %b: tensor<72x200xf32>) -> tensor<100x200xf32> {
  %0 = kgraph.fused (%a, %b) : (tensor<100x72xf32>, tensor<72x200xf32>) -> tensor<100x200xf32> {
  ^bb0(%x: tensor<100x72xf32>, %y: tensor<72x200xf32>):
    %m = kgraph.matmul %x, %y : tensor<100x72xf32>, tensor<72x200xf32> -> tensor<100x200xf32>
    %g = kgraph.gelu %m : tensor<100x200xf32>
    %s = kgraph.sigmoid %g : tensor<100x200xf32>
    %t = kgraph.tanh %s : tensor<100x200xf32>
    %r = kgraph.clamp %t {max = 5.000000e-01 : f64, min = -5.000000e-01 : f64} : tensor<100x200xf32>
    kgraph.yield %r : tensor<100x200xf32>
  }
  return %0 : tensor<100x200xf32>
}

// -----

// Prologue: A is f32 cast to f16, B is f16 scaled by 0.5. Neither can be
// copied byte for byte, so both are staged synchronously: a global load,
// the cast (f32 -> f16) or the scale (in f32, rounded to f16), a store to
// the f16 tile. No cp.async remains.
// CHECK-LABEL: gpu.func @prologue_k0(
// CHECK-SAME: %[[A:.*]]: memref<128x64xf32>, %[[B:.*]]: memref<64x128xf16>, %{{.*}}: memref<128x128xf32>)
// CHECK-DAG: %[[HALF:.*]] = arith.constant 5.000000e-01 : f32
// CHECK-NOT: nvgpu.device_async_copy
// CHECK: vector.load %{{.*}} {alignment = 32 : i64} : memref<8192xf32>, vector<8xf32>
// CHECK: arith.truncf %{{.*}} : f32 to f16
// CHECK: memref.store %{{.*}} : memref<{{.*}}xf16, #gpu.address_space<workgroup>>
// CHECK: vector.load %{{.*}} {alignment = 16 : i64} : memref<8192xf16>, vector<8xf16>
// CHECK: %[[Y:.*]] = arith.extf %{{.*}} : f16 to f32
// CHECK: arith.mulf %[[Y]], %[[HALF]] : f32
// CHECK: arith.truncf %{{.*}} : f32 to f16
// CHECK: memref.store %{{.*}} : memref<{{.*}}xf16, #gpu.address_space<workgroup>>
// CHECK-NOT: nvgpu.device_async_copy
// CHECK: nvgpu.mma.sync
func.func @prologue(%a: tensor<128x64xf32>, %b: tensor<64x128xf16>) -> tensor<128x128xf32> {
  %0 = kgraph.fused (%a, %b) : (tensor<128x64xf32>, tensor<64x128xf16>) -> tensor<128x128xf32> {
  ^bb0(%x: tensor<128x64xf32>, %y: tensor<64x128xf16>):
    %h = arith.constant dense<5.000000e-01> : tensor<f16>
    %xh = kgraph.cast %x : tensor<128x64xf32> to tensor<128x64xf16>
    %ys = kgraph.mul %h, %y : tensor<f16>, tensor<64x128xf16>
    %m = kgraph.matmul %xh, %ys : tensor<128x64xf16>, tensor<64x128xf16> -> tensor<128x128xf32>
    kgraph.yield %m : tensor<128x128xf32>
  }
  return %0 : tensor<128x128xf32>
}
