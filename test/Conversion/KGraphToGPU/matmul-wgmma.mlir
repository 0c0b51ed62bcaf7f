// RUN: kgraph-opt %s --split-input-file \
// RUN:   --pass-pipeline='builtin.module(func.func(kgraph-form-kernels),kgraph-tile{target=sm_90a},kgraph-lower-to-gpu,canonicalize,cse)' \
// RUN:   | FileCheck %s

// wgmma with pinned configurations, one per operand layout. A block of 2
// warpgroups (warps_m = 8) computes 128 x 128: each warpgroup one 64-row
// slab by one m64n128k16 per k16 step, both operands through 128-byte
// swizzled descriptors. The tiles are [stages][rows of 64 elements][64] (no
// padding) 1024-byte aligned inside the dynamic shared memory; each k tile is
// fence.proxy.async (the copies landed), barrier, wgmma.fence, 4 wgmmas,
// commit, wait_group 1 (4 stages: 2 tiles loaded ahead).

// A [m][k] and B [k][n]: A K-major (layout row), B N-major (layout row,
// i.e. transposed for wgmma).
// CHECK-LABEL: func.func @nn
// CHECK: gpu.func @nn_k0
// CHECK: %[[SMEM:.*]] = gpu.dynamic_shared_memory
// CHECK: memref.extract_aligned_pointer_as_index %[[SMEM]]
// CHECK-DAG: %[[A:.*]] = memref.view %[[SMEM]]{{.*}} to memref<4x128x64xf16, #gpu.address_space<workgroup>>
// CHECK-DAG: %[[B:.*]] = memref.view %[[SMEM]]{{.*}} to memref<4x128x64xf16, #gpu.address_space<workgroup>>
// CHECK: nvgpu.device_async_copy {{.*}} : memref<{{.*}}xf16> to memref<4x128x64xf16, #gpu.address_space<workgroup>>
// CHECK: scf.for {{.*}} iter_args(%[[ACC:.*]] = %{{.*}}) -> (!llvm.struct<(f32, {{.*}})>)
// CHECK: nvvm.cp.async.wait.group 1
// CHECK-NEXT: nvvm.fence.proxy {kind = #nvvm.proxy_kind<async.shared>, space = #nvvm.shared_space<cta>}
// CHECK-NEXT: gpu.barrier
// CHECK: nvvm.wgmma.fence.aligned
// CHECK: %[[D0:.*]] = nvvm.wgmma.mma_async %{{.*}}, %{{.*}}, %[[ACC]], <m = 64, n = 128, k = 16>, D[<f32>, <one>], A[<f16>, <one>, <row>], B[<f16>, <one>, <row>]
// CHECK: %[[D1:.*]] = nvvm.wgmma.mma_async %{{.*}}, %{{.*}}, %[[D0]], <m = 64, n = 128, k = 16>
// CHECK: %[[D2:.*]] = nvvm.wgmma.mma_async %{{.*}}, %{{.*}}, %[[D1]], <m = 64, n = 128, k = 16>
// CHECK: %[[D3:.*]] = nvvm.wgmma.mma_async %{{.*}}, %{{.*}}, %[[D2]], <m = 64, n = 128, k = 16>
// CHECK-NEXT: nvvm.wgmma.commit.group.sync.aligned
// CHECK-NEXT: nvvm.wgmma.wait.group.sync.aligned 1
// CHECK-NEXT: scf.yield %[[D3]]
// CHECK: nvvm.wgmma.wait.group.sync.aligned 0
// CHECK: llvm.extractvalue
// CHECK: vector.store {{.*}} : memref<{{.*}}xf32>, vector<4xf32>
func.func @nn(%a: tensor<256x512xf16>, %b: tensor<512x256xf16>) -> tensor<256x256xf32> {
  %0 = kgraph.fused (%a, %b) {kgraph.config = #kgraph.matmul_config<tile_m = 128, tile_n = 128, tile_k = 64, warps_m = 8, warps_n = 1, stages = 4, instruction = wgmma, instruction_shape = [64, 128, 16], load_width = 8, smem_padding = 0>} : (tensor<256x512xf16>, tensor<512x256xf16>) -> tensor<256x256xf32> {
  ^bb0(%x: tensor<256x512xf16>, %y: tensor<512x256xf16>):
    %r = kgraph.matmul %x, %y : tensor<256x512xf16>, tensor<512x256xf16> -> tensor<256x256xf32>
    kgraph.yield %r : tensor<256x256xf32>
  }
  return %0 : tensor<256x256xf32>
}

// -----

// B^T [n][k]: both operands K-major (layouts row, col: no transposes); bf16
// result; 3 stages.
// CHECK-LABEL: func.func @nt
// CHECK: gpu.func @nt_k0
// CHECK: scf.for
// CHECK: nvvm.wgmma.fence.aligned
// CHECK: nvvm.wgmma.mma_async {{.*}}, <m = 64, n = 128, k = 16>, D[<f32>, <one>], A[<bf16>, <one>, <row>], B[<bf16>, <one>, <col>]
// CHECK: nvvm.wgmma.wait.group.sync.aligned 1
// CHECK: nvvm.wgmma.wait.group.sync.aligned 0
// CHECK: arith.truncf {{.*}} : f32 to bf16
func.func @nt(%a: tensor<256x512xbf16>, %b: tensor<256x512xbf16>) -> tensor<256x256xbf16> {
  %0 = kgraph.fused (%a, %b) {kgraph.config = #kgraph.matmul_config<tile_m = 128, tile_n = 128, tile_k = 64, warps_m = 8, warps_n = 1, stages = 3, instruction = wgmma, instruction_shape = [64, 128, 16], load_width = 8, smem_padding = 0>} : (tensor<256x512xbf16>, tensor<256x512xbf16>) -> tensor<256x256xbf16> {
  ^bb0(%x: tensor<256x512xbf16>, %y: tensor<256x512xbf16>):
    %r = kgraph.matmul %x, %y {transpose_b} : tensor<256x512xbf16>, tensor<256x512xbf16> -> tensor<256x256xbf16>
    kgraph.yield %r : tensor<256x256xbf16>
  }
  return %0 : tensor<256x256xbf16>
}

// -----

// A^T [k][m] and B [k][n]: both MN-major (layouts col, row); 2 stages wait
// with wait_group 0 (no stage to spare); a 2 x 2 warpgroup grid of 64 x 64
// warpgroup tiles; f16 result.
// CHECK-LABEL: func.func @tn
// CHECK: gpu.func @tn_k0
// CHECK-DAG: memref.view {{.*}} to memref<2x128x64xf16, #gpu.address_space<workgroup>>
// CHECK-DAG: memref.view {{.*}} to memref<2x128x64xf16, #gpu.address_space<workgroup>>
// CHECK: scf.for
// CHECK: nvvm.wgmma.mma_async {{.*}}, <m = 64, n = 64, k = 16>, D[<f32>, <one>], A[<f16>, <one>, <col>], B[<f16>, <one>, <row>]
// CHECK: nvvm.wgmma.commit.group.sync.aligned
// CHECK-NEXT: nvvm.wgmma.wait.group.sync.aligned 0
// CHECK: arith.truncf {{.*}} : f32 to f16
func.func @tn(%a: tensor<512x256xf16>, %b: tensor<512x256xf16>) -> tensor<256x256xf16> {
  %0 = kgraph.fused (%a, %b) {kgraph.config = #kgraph.matmul_config<tile_m = 128, tile_n = 128, tile_k = 64, warps_m = 8, warps_n = 2, stages = 2, instruction = wgmma, instruction_shape = [64, 64, 16], load_width = 8, smem_padding = 0>} : (tensor<512x256xf16>, tensor<512x256xf16>) -> tensor<256x256xf16> {
  ^bb0(%x: tensor<512x256xf16>, %y: tensor<512x256xf16>):
    %r = kgraph.matmul %x, %y {transpose_a} : tensor<512x256xf16>, tensor<512x256xf16> -> tensor<256x256xf16>
    kgraph.yield %r : tensor<256x256xf16>
  }
  return %0 : tensor<256x256xf16>
}

// -----

// A^T and B^T: A MN-major, B K-major (layouts col, col); one warpgroup with
// two 64-row slabs (warps_m = 4, tile_m = 128): 2 wgmmas per k16 step, each
// m64n96k16; batched with odd shapes (bounds-checked copies and epilogue,
// 2-element runs).
// CHECK-LABEL: func.func @tt_batched
// CHECK: gpu.func @tt_batched_k0
// CHECK: gpu.block_id z
// CHECK: scf.for
// CHECK: nvvm.wgmma.mma_async {{.*}}, <m = 64, n = 96, k = 16>, D[<f32>, <one>], A[<f16>, <one>, <col>], B[<f16>, <one>, <col>]
// CHECK: nvvm.wgmma.mma_async {{.*}}, <m = 64, n = 96, k = 16>, D[<f32>, <one>], A[<f16>, <one>, <col>], B[<f16>, <one>, <col>]
// CHECK: nvvm.wgmma.wait.group.sync.aligned 1
// CHECK: scf.if
func.func @tt_batched(%a: tensor<2x130x100xf16>, %b: tensor<2x90x130xf16>) -> tensor<2x100x90xf32> {
  %0 = kgraph.fused (%a, %b) {kgraph.config = #kgraph.matmul_config<tile_m = 128, tile_n = 96, tile_k = 64, warps_m = 4, warps_n = 1, stages = 3, instruction = wgmma, instruction_shape = [64, 96, 16], load_width = 2, smem_padding = 0>} : (tensor<2x130x100xf16>, tensor<2x90x130xf16>) -> tensor<2x100x90xf32> {
  ^bb0(%x: tensor<2x130x100xf16>, %y: tensor<2x90x130xf16>):
    %r = kgraph.matmul %x, %y {transpose_a, transpose_b} : tensor<2x130x100xf16>, tensor<2x90x130xf16> -> tensor<2x100x90xf32>
    kgraph.yield %r : tensor<2x100x90xf32>
  }
  return %0 : tensor<2x100x90xf32>
}

// -----

// conv2d (implicit GEMM: the im2col A and the filter as B^T, both K-major).
// CHECK-LABEL: func.func @conv
// CHECK: gpu.func @conv_k0
// CHECK: scf.for
// CHECK: nvvm.wgmma.mma_async {{.*}}, <m = 64, n = 64, k = 16>, D[<f32>, <one>], A[<f16>, <one>, <row>], B[<f16>, <one>, <col>]
func.func @conv(%x: tensor<2x14x14x64xf16>, %w: tensor<64x3x3x64xf16>) -> tensor<2x14x14x64xf16> {
  %0 = kgraph.fused (%x, %w) {kgraph.config = #kgraph.matmul_config<tile_m = 128, tile_n = 64, tile_k = 64, warps_m = 8, warps_n = 1, stages = 4, instruction = wgmma, instruction_shape = [64, 64, 16], load_width = 8, smem_padding = 0>} : (tensor<2x14x14x64xf16>, tensor<64x3x3x64xf16>) -> tensor<2x14x14x64xf16> {
  ^bb0(%i: tensor<2x14x14x64xf16>, %f: tensor<64x3x3x64xf16>):
    %r = kgraph.conv2d %i, %f layout = nhwc padding = [1, 1, 1, 1] : tensor<2x14x14x64xf16>, tensor<64x3x3x64xf16> -> tensor<2x14x14x64xf16>
    kgraph.yield %r : tensor<2x14x14x64xf16>
  }
  return %0 : tensor<2x14x14x64xf16>
}
