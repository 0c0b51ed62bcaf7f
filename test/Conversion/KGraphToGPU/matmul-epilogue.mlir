// RUN: kgraph-opt %s --split-input-file \
// RUN:   --pass-pipeline='builtin.module(kgraph-tile{target=sm_80},kgraph-lower-to-gpu,canonicalize,cse)' \
// RUN:   | FileCheck %s

// matmul + bias + relu in f16 with a pinned configuration that does not
// divide M = 100, N = 200. Kernel arguments: the group's inputs, then the
// result. The accumulator is rounded to f16 (the matmul's result type),
// then the bias add and relu compute in f32 and round to f16: the values
// the ops compute one at a time. Inside C the bias pair is one vector load
// and the result pair one vector store; at the edges every element is
// checked.
// CHECK-LABEL: gpu.func @bias_relu_f16_k0(
// CHECK-SAME: %{{.*}}: memref<100x72xf16>, %{{.*}}: memref<72x200xf16>, %{{.*}}: memref<200xf16>, %{{.*}}: memref<100x200xf16>)
// CHECK: scf.for
// CHECK: nvgpu.mma.sync
// CHECK: scf.if
// CHECK: %[[ACC:.*]] = vector.extract %{{.*}}[0, 0] : f32 from vector<2x2xf32>
// CHECK: %[[ACC16:.*]] = arith.truncf %[[ACC]] : f32 to f16
// CHECK: %[[ACC32:.*]] = arith.extf %[[ACC16]] : f16 to f32
// CHECK: %[[BIAS:.*]] = vector.load %{{.*}}[%{{.*}}] {alignment = 4 : i64} : memref<200xf16>, vector<2xf16>
// CHECK: %[[B0:.*]] = vector.extract %[[BIAS]][0] : f16 from vector<2xf16>
// CHECK: %[[B32:.*]] = arith.extf %[[B0]] : f16 to f32
// CHECK: %[[SUM:.*]] = arith.addf %[[ACC32]], %[[B32]] : f32
// CHECK: %[[SUM16:.*]] = arith.truncf %[[SUM]] : f32 to f16
// CHECK: %[[S32:.*]] = arith.extf %[[SUM16]] : f16 to f32
// CHECK: %[[NEG:.*]] = arith.cmpf olt, %[[S32]], %{{.*}} : f32
// CHECK: arith.select %[[NEG]], %{{.*}}, %[[S32]] : f32
// CHECK: vector.store %{{.*}} {alignment = 4 : i64} : memref<20000xf16>, vector<2xf16>
// CHECK: } else {
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
