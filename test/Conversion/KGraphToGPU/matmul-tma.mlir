// RUN: kgraph-opt %s \
// RUN:   --pass-pipeline='builtin.module(func.func(kgraph-form-kernels),kgraph-tile{target=sm_90a},kgraph-lower-to-gpu,canonicalize,cse)' \
// RUN:   | FileCheck %s

// copy = tma (TmaPipeline.cpp) at the IR level. The host allocates one
// 128-byte CUtensorMap per operand (memref<2x128xi8>) whose fields the
// kgraph.tensor_maps attribute describes for the launch plan (dims, box and
// strides innermost first: A [256][320] in boxes of 64 x 128 rows, B
// [320][256] in boxes of 64 x 64 rows), and passes it as the kernel's last
// argument. The block is 2 consumer warpgroups (warps_m = 8: 256 threads)
// plus one producer warpgroup: 32 * 8 + 128 = 384 threads. Thread 0 inits
// the full (count 1) and empty (count 256) mbarrier of each of the 4 stages;
// consumers raise their registers, wait on full[s] (try_wait.parity), run
// the wgmmas and arrive on empty[s]; the producer lowers its registers and
// one thread waits on empty[s] (phase flipped), arms full[s] with the
// stage's bytes (128x64 + 64x128 f16 = 32768) and issues one TMA load of A
// and two of B (two 64-column swizzle blocks of tile_n = 128).

// CHECK-LABEL: func.func @tma(
// CHECK-SAME: %[[A:.*]]: memref<256x320xf16>, %[[B:.*]]: memref<320x256xf16>, %[[C:.*]]: memref<256x256xf32> {kgraph.result = 0 : i64})
// CHECK: %[[T384:.*]] = arith.constant 384 : index
// CHECK: %[[MAPS:.*]] = memref.alloc() {kgraph.tensor_maps = [
// CHECK-SAME: {arg = 0 : i64, box = [64, 128], dims = [320, 256], dtype = "f16", interleave = "none", l2_promotion = "256B", oob_fill = "zero", strides = [640], swizzle = "128B"},
// CHECK-SAME: {arg = 1 : i64, box = [64, 64], dims = [256, 320], dtype = "f16", interleave = "none", l2_promotion = "256B", oob_fill = "zero", strides = [512], swizzle = "128B"}]}
// CHECK-SAME: : memref<2x128xi8>
// CHECK: gpu.launch_func @kgraph_kernels::@tma_k0 blocks in ({{[^)]*}}) threads in (%[[T384]], {{[^)]*}})
// CHECK-SAME: args(%[[A]] : memref<256x320xf16>, %[[B]] : memref<320x256xf16>, %[[C]] : memref<256x256xf32>, %[[MAPS]] : memref<2x128xi8>)

// CHECK: gpu.func @tma_k0(%{{.*}}: memref<256x320xf16>, %{{.*}}: memref<320x256xf16>, %{{.*}}: memref<256x256xf32>, %[[KMAPS:.*]]: memref<2x128xi8>) kernel
// CHECK-SAME: known_block_size = array<i32: 384, 1, 1>
// CHECK-SAME: nvvm.maxntid = array<i32: 384, 1, 1>
// CHECK-COUNT-4: nvvm.mbarrier.init %{{.*}}, %c1_i32 : !llvm.ptr<3>, i32
// CHECK-NEXT: %{{.*}} = arith.addi
// CHECK-NEXT: %{{.*}} = arith.index_castui
// CHECK-NEXT: %{{.*}} = llvm.inttoptr
// CHECK-NEXT: nvvm.mbarrier.init %{{.*}}, %c256_i32 : !llvm.ptr<3>, i32
// CHECK: gpu.barrier
// CHECK: %[[CONSUMER:.*]] = arith.cmpi ult, %{{.*}}, %c256 : index
// CHECK-NEXT: scf.if %[[CONSUMER]] {
// CHECK-NEXT: nvvm.setmaxregister  increase 232
// CHECK: scf.for
// CHECK: nvvm.mbarrier.try_wait.parity %{{.*}}, %{{.*}}, %c0_i32 : !llvm.ptr<3>, i32, i32
// CHECK-NEXT: nvvm.wgmma.fence.aligned
// CHECK: nvvm.wgmma.mma_async {{.*}}, <m = 64, n = 128, k = 16>, D[<f32>, <one>], A[<f16>, <one>, <row>], B[<f16>, <one>, <row>]
// CHECK: nvvm.mbarrier.arrive %{{.*}} : !llvm.ptr<3>
// CHECK: } else {
// CHECK-NEXT: nvvm.setmaxregister  decrease 40
// CHECK-NEXT: %[[PRODUCER:.*]] = arith.cmpi eq, %{{.*}}, %c256 : index
// CHECK-NEXT: scf.if %[[PRODUCER]] {
// CHECK-NEXT: %[[MAPADDR:.*]] = memref.extract_aligned_pointer_as_index %[[KMAPS]] : memref<2x128xi8> -> index
// CHECK: scf.for
// CHECK: %[[FLIP:.*]] = arith.xori %{{.*}}, %c1_i32 : i32
// CHECK: nvvm.mbarrier.try_wait.parity %{{.*}}, %[[FLIP]], %c0_i32 : !llvm.ptr<3>, i32, i32
// CHECK: nvvm.mbarrier.arrive.expect_tx %[[FULL:.*]], %c32768_i32 : !llvm.ptr<3>, i32
// CHECK-COUNT-3: nvvm.cp.async.bulk.tensor.shared.cluster.global %{{.*}}, %{{.*}}, %[[FULL]], box[%{{.*}}, %{{.*}}] : !llvm.ptr<7>, !llvm.ptr
// CHECK-NOT: nvvm.cp.async.bulk.tensor
// CHECK: gpu.return
func.func @tma(%a: tensor<256x320xf16>, %b: tensor<320x256xf16>) -> tensor<256x256xf32> {
  %0 = kgraph.fused (%a, %b) {kgraph.config = #kgraph.matmul_config<tile_m = 128, tile_n = 128, tile_k = 64, warps_m = 8, warps_n = 1, stages = 4, instruction = wgmma, instruction_shape = [64, 128, 16], load_width = 8, smem_padding = 0, copy = tma>} : (tensor<256x320xf16>, tensor<320x256xf16>) -> tensor<256x256xf32> {
  ^bb0(%x: tensor<256x320xf16>, %y: tensor<320x256xf16>):
    %r = kgraph.matmul %x, %y : tensor<256x320xf16>, tensor<320x256xf16> -> tensor<256x256xf32>
    kgraph.yield %r : tensor<256x256xf32>
  }
  return %0 : tensor<256x256xf32>
}
