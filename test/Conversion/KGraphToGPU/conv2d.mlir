// RUN: kgraph-opt %s --split-input-file \
// RUN:   --pass-pipeline='builtin.module(func.func(kgraph-form-kernels),kgraph-tile{target=sm_80},kgraph-lower-to-gpu,canonicalize,cse)' \
// RUN:   | FileCheck %s

// conv2d through the GEMM kernel as an implicit GEMM. NHWC, stride 2,
// padding 1, two groups: M = 2*5*5 = 50 output pixels, N = 64/2 = 32
// filters per group, K = 3*3*16 = 144. The grid is 1 x 1 x groups; the
// shared memory 3 x (64 x 40 + 32 x 40) x 2 bytes.
// CHECK-LABEL: func.func @nhwc_pad_groups
// CHECK-DAG: %[[SMEM:.*]] = arith.constant 23040 : i32
// CHECK-DAG: %[[C1:.*]] = arith.constant 1 : index
// CHECK-DAG: %[[C2:.*]] = arith.constant 2 : index
// CHECK: gpu.launch_func @kgraph_kernels::@nhwc_pad_groups_k0 blocks in (%[[C1]], %[[C1]], %[[C2]]) threads in ({{.*}}) dynamic_shared_memory_size %[[SMEM]]
// CHECK: gpu.func @nhwc_pad_groups_k0(%{{.*}}: memref<2x9x9x32xf16>, %{{.*}}: memref<64x3x3x16xf16>, %{{.*}}: memref<2x5x5x64xf16>)
// CHECK-DAG: memref.view {{.*}} to memref<3x64x40xf16, #gpu.address_space<workgroup>>
// CHECK-DAG: memref.view {{.*}} to memref<3x32x40xf16, #gpu.address_space<workgroup>>
// The A gather: row m -> (image m / 25, pixel (m % 25) / 5, (m % 25) % 5),
// column k -> (k / 48, (k / 16) % 3, k % 16); taps outside the 9x9 image
// (after removing the padding of 1) and rows/columns past M and K copy 0
// elements; group g reads channels 16 g ...
// CHECK: %[[GROUP:.*]] = gpu.block_id z
// CHECK: arith.divui %{{.*}}, %c25 : index
// CHECK: arith.remui %{{.*}}, %c25 : index
// CHECK: arith.divui %{{.*}}, %c48 : index
// CHECK: arith.remui %{{.*}}, %c16 : index
// CHECK: arith.cmpi ult, %{{.*}}, %c50 : index
// CHECK: arith.cmpi ult, %{{.*}}, %c144 : index
// CHECK: %[[IH:.*]] = arith.subi %{{.*}}, %c1 : index
// CHECK: arith.cmpi ult, %[[IH]], %c9 : index
// CHECK: arith.muli %[[GROUP]], %c16 : index
// CHECK: nvgpu.device_async_copy {{.*}}, 8, %{{.*}} {bypassL1} : memref<5184xf16> to memref<3x64x40xf16, #gpu.address_space<workgroup>>
// ... and the filter rows of group g, as B^T (ldmatrix without transpose).
// CHECK: arith.muli %[[GROUP]], %c4608 : index
// CHECK: nvgpu.device_async_copy {{.*}} : memref<9216xf16> to memref<3x32x40xf16, #gpu.address_space<workgroup>>
// CHECK: scf.for
// CHECK: nvgpu.ldmatrix {{.*}} {numTiles = 4 : i32, transpose = false} : memref<3x64x40xf16, #gpu.address_space<workgroup>> -> vector<4x2xf16>
// CHECK: nvgpu.ldmatrix {{.*}} transpose = false} : memref<3x32x40xf16, #gpu.address_space<workgroup>>
// CHECK: nvgpu.mma.sync
// The epilogue is staged over the operand tiles: the fragments' channel
// pairs into a [64][32 + 8] tile, a barrier, then runs of 8 channels read
// back per thread. The NHWC result is [M][F] with group g's channels from
// 32 g on: each run is one 16-byte store.
// CHECK: %[[STAGE:.*]] = memref.view {{.*}} to memref<64x40xf16, #gpu.address_space<workgroup>>
// CHECK-NEXT: gpu.barrier
// CHECK: vector.store {{.*}}, %[[STAGE]][{{.*}}] {alignment = 4 : i64} : memref<64x40xf16, #gpu.address_space<workgroup>>, vector<2xf16>
// CHECK: gpu.barrier
// CHECK: vector.load %[[STAGE]][{{.*}}] {alignment = 16 : i64} : memref<64x40xf16, #gpu.address_space<workgroup>>, vector<8xf16>
// CHECK: arith.muli %[[GROUP]], %c32 : index
// CHECK: vector.store {{.*}} {alignment = 16 : i64} : memref<3200xf16>, vector<8xf16>
func.func @nhwc_pad_groups(%a: tensor<2x9x9x32xf16>, %b: tensor<64x3x3x16xf16>) -> tensor<2x5x5x64xf16> {
  %0 = kgraph.fused (%a, %b) {kgraph.config = #kgraph.matmul_config<tile_m = 64, tile_n = 32, tile_k = 32, warps_m = 2, warps_n = 1, stages = 3, instruction = mma_sync, instruction_shape = [16, 8, 16], load_width = 8, smem_padding = 8>} : (tensor<2x9x9x32xf16>, tensor<64x3x3x16xf16>) -> tensor<2x5x5x64xf16> {
  ^bb0(%x: tensor<2x9x9x32xf16>, %w: tensor<64x3x3x16xf16>):
    %r = kgraph.conv2d %x, %w layout = nhwc strides = [2, 2] padding = [1, 1, 1, 1] groups = 2 : tensor<2x9x9x32xf16>, tensor<64x3x3x16xf16> -> tensor<2x5x5x64xf16>
    kgraph.yield %r : tensor<2x5x5x64xf16>
  }
  return %0 : tensor<2x5x5x64xf16>
}

// -----

// NCHW: the gather has no contiguous run (load_width 1: f16 elements are
// copied synchronously); the K order is (c, kh, kw), the filter's own. The
// result channels are OH*OW = 25 elements apart: scalar stores.
// CHECK-LABEL: func.func @nchw
// CHECK: gpu.func @nchw_k0
// CHECK-NOT: nvgpu.device_async_copy
// CHECK: arith.divui %{{.*}}, %c9 : index
// CHECK: arith.divui %{{.*}}, %c3 : index
// CHECK: memref.store {{.*}} : memref<3x64x40xf16, #gpu.address_space<workgroup>>
// CHECK: nvgpu.mma.sync
// CHECK-NOT: vector.store
// CHECK: memref.store {{.*}} : memref<800xf32>
// CHECK: gpu.return
func.func @nchw(%a: tensor<2x8x7x7xf16>, %b: tensor<16x8x3x3xf16>) -> tensor<2x16x5x5xf32> {
  %0 = kgraph.conv2d %a, %b : tensor<2x8x7x7xf16>, tensor<16x8x3x3xf16> -> tensor<2x16x5x5xf32>
  return %0 : tensor<2x16x5x5xf32>
}

// -----

// A 1x1, stride-1, unpadded NHWC conv2d is the plain GEMM
// [N*H*W, C] x [F, C]^T: no im2col arithmetic, 16-byte copies.
// CHECK-LABEL: func.func @one_by_one
// CHECK: gpu.launch_func @kgraph_kernels::@one_by_one_k0 blocks in (%c1, %c4, %c1)
// CHECK: gpu.func @one_by_one_k0
// CHECK-NOT: arith.divui %{{.*}}, %c49
// CHECK: nvgpu.device_async_copy {{.*}}, 8, %{{.*}} {bypassL1} : memref<6272xf16>
// CHECK: nvgpu.device_async_copy {{.*}}, 8 {bypassL1} : memref<2048xf16>
// CHECK: nvgpu.mma.sync
// CHECK: vector.store {{.*}} : memref<3136xf16>, vector<8xf16>
func.func @one_by_one(%a: tensor<2x7x7x64xf16>, %b: tensor<32x1x1x64xf16>) -> tensor<2x7x7x32xf16> {
  %0 = kgraph.conv2d %a, %b layout = nhwc : tensor<2x7x7x64xf16>, tensor<32x1x1x64xf16> -> tensor<2x7x7x32xf16>
  return %0 : tensor<2x7x7x32xf16>
}
