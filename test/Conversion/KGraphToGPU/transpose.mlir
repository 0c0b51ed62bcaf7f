// RUN: kgraph-opt %s --split-input-file \
// RUN:   --pass-pipeline='builtin.module(func.func(kgraph-form-kernels),kgraph-tile{target=sm_90a},kgraph-lower-to-gpu,canonicalize,cse)' \
// RUN:   | FileCheck %s

// A tiled transpose of [3, 256, 512] -> [3, 512, 256]: a 64 x 65 shared tile,
// 4 vector loads per thread into registers, then the tile, a barrier, 4
// column gathers from the tile and 4 vector stores; no masks (the tiles
// divide both extents); the batch on grid z.
// CHECK-LABEL: func.func @tiled
// CHECK-DAG: %[[C32:.*]] = arith.constant 32 : index
// CHECK-DAG: %[[C3:.*]] = arith.constant 3 : index
// CHECK-DAG: %[[C256:.*]] = arith.constant 256 : index
// CHECK: gpu.launch_func @kgraph_kernels::@tiled_k0 blocks in (%[[C32]], %{{.*}}, %[[C3]]) threads in (%[[C256]], %{{.*}}, %{{.*}})
// CHECK: gpu.func @tiled_k0(%{{.*}}: memref<3x256x512xf32>, %{{.*}}: memref<3x512x256xf32>) workgroup(%[[SMEM:.*]] : memref<64x65xf32, #gpu.address_space<workgroup>>) kernel
// CHECK-COUNT-4: vector.load %{{.*}} {alignment = 16 : i64} : memref<393216xf32>, vector<4xf32>
// CHECK-COUNT-16: memref.store %{{.*}}, %[[SMEM]]
// CHECK: gpu.barrier
// CHECK-COUNT-16: memref.load %[[SMEM]]
// CHECK-NOT: scf.if
// CHECK-COUNT-4: vector.store %{{.*}} {alignment = 16 : i64} : memref<393216xf32>, vector<4xf32>
// CHECK-NOT: gpu.barrier
// CHECK: gpu.return
func.func @tiled(%x: tensor<3x256x512xf32>) -> tensor<3x512x256xf32> {
  %0 = kgraph.transpose %x, permutation = [0, 2, 1] : tensor<3x256x512xf32>
  return %0 : tensor<3x512x256xf32>
}

// -----

// Odd extents: clamped loads (minui) and masked stores; booleans move as
// bytes.
// CHECK-LABEL: func.func @odd_mask
// CHECK: gpu.func @odd_mask_k0(%{{.*}}: memref<33x65xi8>, %{{.*}}: memref<65x33xi8>) workgroup(%[[SMEM:.*]] : memref<64x68xi8, #gpu.address_space<workgroup>>) kernel
// CHECK: arith.minui
// CHECK: memref.load %{{.*}} : memref<2145xi8>
// CHECK: gpu.barrier
// CHECK: scf.if
// CHECK: memref.store %{{.*}} : memref<2145xi8>
func.func @odd_mask(%x: tensor<33x65xi1>) -> tensor<65x33xi1> {
  %0 = kgraph.transpose %x, permutation = [1, 0] : tensor<33x65xi1>
  return %0 : tensor<65x33xi1>
}

// -----

// A batch larger than grid z allows: the kernel loops over it, with a
// barrier before the tile is reused.
// CHECK-LABEL: func.func @big_batch
// CHECK: gpu.func @big_batch_k0
// CHECK: scf.for
// CHECK: gpu.barrier
// CHECK: gpu.barrier
// CHECK: gpu.return
func.func @big_batch(%x: tensor<70000x2x3xi8>) -> tensor<70000x3x2xi8> {
  %0 = kgraph.transpose %x, permutation = [0, 2, 1] : tensor<70000x2x3xi8>
  return %0 : tensor<70000x3x2xi8>
}

// -----

// The head split is an elementwise copy: 16-byte vectors read through the
// access map (the 64 innermost elements are contiguous).
// CHECK-LABEL: func.func @heads
// CHECK: gpu.func @heads_k0
// CHECK-NOT: workgroup
// CHECK: vector.load %{{.*}} {alignment = 16 : i64} : memref<{{[0-9]+}}xf32>, vector<4xf32>
// CHECK: vector.store %{{.*}} {alignment = 16 : i64} : memref<{{[0-9]+}}xf32>, vector<4xf32>
func.func @heads(%x: tensor<2x16x3x64xf32>) -> tensor<2x3x16x64xf32> {
  %0 = kgraph.transpose %x, permutation = [0, 2, 1, 3] : tensor<2x16x3x64xf32>
  return %0 : tensor<2x3x16x64xf32>
}
