// RUN: kgraph-opt %s --split-input-file \
// RUN:   --pass-pipeline='builtin.module(func.func(kgraph-form-kernels),kgraph-tile{target=sm_80},kgraph-lower-to-gpu,canonicalize,cse)' \
// RUN:   | FileCheck %s

// A pinned f16 configuration: 4 warps, 3 stages, 128x128x32 tiles. The
// launch covers the output with ceil(300/128) x ceil(200/128) blocks and the
// dynamic shared memory is 3 x (128 x 40 + 32 x 136) x 2 bytes.
// CHECK-LABEL: func.func @pinned
// CHECK-DAG: %[[SMEM:.*]] = arith.constant 56832 : i32
// CHECK-DAG: %[[C2:.*]] = arith.constant 2 : index
// CHECK-DAG: %[[C3:.*]] = arith.constant 3 : index
// CHECK-DAG: %[[C128:.*]] = arith.constant 128 : index
// CHECK: gpu.launch_func @kgraph_kernels::@pinned_k0 blocks in (%[[C2]], %[[C3]], %{{.*}}) threads in (%[[C128]], %{{.*}}, %{{.*}}) dynamic_shared_memory_size %[[SMEM]]
// CHECK: gpu.func @pinned_k0(%{{.*}}: memref<300x64xf16>, %{{.*}}: memref<64x200xf16>, %{{.*}}: memref<300x200xf32>) kernel attributes {known_block_size = array<i32: 128, 1, 1>}
// CHECK: gpu.dynamic_shared_memory : memref<?xi8, #gpu.address_space<workgroup>>
// CHECK: memref.view {{.*}} to memref<3x128x40xf16, #gpu.address_space<workgroup>>
// CHECK: memref.view {{.*}} to memref<3x32x136xf16, #gpu.address_space<workgroup>>
// The prologue puts stages - 1 tiles in flight, zero-filling outside the
// matrix (the tiles do not divide M = 300 and N = 200).
// CHECK: nvgpu.device_async_copy {{.*}}, 8, %{{.*}} {bypassL1} : memref<19200xf16> to memref<3x128x40xf16, #gpu.address_space<workgroup>>
// CHECK: nvvm.cp.async.commit.group
// CHECK: scf.for {{.*}} iter_args
// CHECK:   nvvm.cp.async.wait.group 1
// CHECK:   gpu.barrier
// CHECK:   nvgpu.ldmatrix {{.*}} {numTiles = 4 : i32, transpose = false} : memref<3x128x40xf16, #gpu.address_space<workgroup>> -> vector<4x2xf16>
// CHECK:   nvgpu.ldmatrix {{.*}} {numTiles = 4 : i32, transpose = true} : memref<3x32x136xf16, #gpu.address_space<workgroup>> -> vector<4x2xf16>
// CHECK:   nvgpu.mma.sync({{.*}}) {mmaShape = [16, 8, 16]} : (vector<4x2xf16>, vector<2x2xf16>, vector<2x2xf32>) -> vector<2x2xf32>
// The epilogue stores pairs when the block tile is inside C, and checks
// every element otherwise.
// CHECK: scf.if
// CHECK:   vector.store {{.*}} : memref<60000xf32>, vector<2xf32>
// CHECK: } else {
// CHECK:   scf.if
// CHECK:     memref.store {{.*}} : memref<60000xf32>
func.func @pinned(%a: tensor<300x64xf16>, %b: tensor<64x200xf16>) -> tensor<300x200xf32> {
  %0 = kgraph.fused (%a, %b) {kgraph.config = #kgraph.matmul_config<tile_m = 128, tile_n = 128, tile_k = 32, warps_m = 2, warps_n = 2, stages = 3, instruction = mma_sync, instruction_shape = [16, 8, 16], load_width = 8, smem_padding = 8>} : (tensor<300x64xf16>, tensor<64x200xf16>) -> tensor<300x200xf32> {
  ^bb0(%x: tensor<300x64xf16>, %y: tensor<64x200xf16>):
    %r = kgraph.matmul %x, %y : tensor<300x64xf16>, tensor<64x200xf16> -> tensor<300x200xf32>
    kgraph.yield %r : tensor<300x200xf32>
  }
  return %0 : tensor<300x200xf32>
}

// -----

// Transposed operands swap which side ldmatrix transposes; bf16 goes through
// nvvm.mma.sync (nvgpu's lowering has no bf16); the batch is grid z.
// CHECK-LABEL: func.func @transposed_bf16_batched
// CHECK: gpu.launch_func @kgraph_kernels::@transposed_bf16_batched_k0 blocks in (%{{.*}}, %{{.*}}, %[[B:.*]])
// CHECK: gpu.func @transposed_bf16_batched_k0
// CHECK: gpu.block_id z
// CHECK: nvgpu.ldmatrix {{.*}} {numTiles = 4 : i32, transpose = true} : memref<{{.*}}xbf16
// CHECK: nvgpu.ldmatrix {{.*}} {numTiles = {{[24]}} : i32, transpose = false} : memref<{{.*}}xbf16
// CHECK: nvvm.mma.sync {{.*}} {layoutA = #nvvm.mma_layout<row>, layoutB = #nvvm.mma_layout<col>, multiplicandAPtxType = #nvvm.mma_type<bf16>, multiplicandBPtxType = #nvvm.mma_type<bf16>, shape = #nvvm.shape<m = 16, n = 8, k = 16>}
// CHECK: arith.truncf {{.*}} : f32 to bf16
func.func @transposed_bf16_batched(%a: tensor<4x64x96xbf16>, %b: tensor<4x80x64xbf16>) -> tensor<4x96x80xbf16> {
  %0 = kgraph.matmul %a, %b {transpose_a, transpose_b} : tensor<4x64x96xbf16>, tensor<4x80x64xbf16> -> tensor<4x96x80xbf16>
  return %0 : tensor<4x96x80xbf16>
}

// -----

// Rows that are not 16-byte aligned (N = 129) cannot use cp.async: the
// tiles are copied element by element.
// CHECK-LABEL: func.func @unaligned
// CHECK: gpu.func @unaligned_k0
// CHECK-NOT: nvgpu.device_async_copy
// CHECK: memref.store {{.*}} #gpu.address_space<workgroup>>
// CHECK: nvgpu.mma.sync
func.func @unaligned(%a: tensor<33x72xf16>, %b: tensor<72x129xf16>) -> tensor<33x129xf32> {
  %0 = kgraph.matmul %a, %b : tensor<33x72xf16>, tensor<72x129xf16> -> tensor<33x129xf32>
  return %0 : tensor<33x129xf32>
}

// -----

// More than 65535 M tiles: grid y cannot hold them, so the (N tile, M tile)
// pairs are linearized over grid x (2 N tiles x 68750 M tiles).
// CHECK-LABEL: func.func @tall
// CHECK-DAG: %[[C137500:.*]] = arith.constant 137500 : index
// CHECK-DAG: %[[C1:.*]] = arith.constant 1 : index
// CHECK: gpu.launch_func @kgraph_kernels::@tall_k0 blocks in (%[[C137500]], %[[C1]], %[[C1]])
// CHECK: gpu.func @tall_k0
// CHECK: %[[BX:.*]] = gpu.block_id x
// CHECK-DAG: arith.remui %[[BX]], %{{.*}} : index
// CHECK-DAG: arith.divui %[[BX]], %{{.*}} : index
// CHECK-NOT: gpu.block_id y
func.func @tall(%a: tensor<2200000x32xf16>, %b: tensor<32x16xf16>) -> tensor<2200000x16xf32> {
  %0 = kgraph.fused (%a, %b) {kgraph.config = #kgraph.matmul_config<tile_m = 32, tile_n = 8, tile_k = 32, warps_m = 2, warps_n = 1, stages = 3, instruction = mma_sync, instruction_shape = [16, 8, 16], load_width = 8, smem_padding = 8>} : (tensor<2200000x32xf16>, tensor<32x16xf16>) -> tensor<2200000x16xf32> {
  ^bb0(%x: tensor<2200000x32xf16>, %y: tensor<32x16xf16>):
    %r = kgraph.matmul %x, %y : tensor<2200000x32xf16>, tensor<32x16xf16> -> tensor<2200000x16xf32>
    kgraph.yield %r : tensor<2200000x16xf32>
  }
  return %0 : tensor<2200000x16xf32>
}

// -----

// Grouped rasterization: group_m = 3 over 8 M tiles x 2 N tiles: a linear
// grid of 16 blocks; band = b / 6, the last band holds min(8 - 3 band, 3) M
// tiles, and the M tile varies fastest inside a band.
// CHECK-LABEL: func.func @grouped
// CHECK-DAG: %[[C16:.*]] = arith.constant 16 : index
// CHECK: gpu.launch_func @kgraph_kernels::@grouped_k0 blocks in (%[[C16]], %{{.*}}, %{{.*}})
// CHECK: gpu.func @grouped_k0
// CHECK: %[[BX:.*]] = gpu.block_id x
// CHECK-DAG: %[[BAND:.*]] = arith.divui %[[BX]], %{{.*}} : index
// CHECK-DAG: %[[IN:.*]] = arith.remui %[[BX]], %{{.*}} : index
// CHECK: %[[ROWS:.*]] = arith.minui
// CHECK-DAG: arith.remui %[[IN]], %[[ROWS]] : index
// CHECK-DAG: arith.divui %[[IN]], %[[ROWS]] : index
// CHECK-NOT: gpu.block_id y
func.func @grouped(%a: tensor<1000x64xf16>, %b: tensor<64x256xf16>) -> tensor<1000x256xf32> {
  %0 = kgraph.fused (%a, %b) {kgraph.config = #kgraph.matmul_config<tile_m = 128, tile_n = 128, tile_k = 32, warps_m = 2, warps_n = 2, stages = 3, instruction = mma_sync, instruction_shape = [16, 8, 16], load_width = 8, smem_padding = 8, group_m = 3>} : (tensor<1000x64xf16>, tensor<64x256xf16>) -> tensor<1000x256xf32> {
  ^bb0(%x: tensor<1000x64xf16>, %y: tensor<64x256xf16>):
    %r = kgraph.matmul %x, %y : tensor<1000x64xf16>, tensor<64x256xf16> -> tensor<1000x256xf32>
    kgraph.yield %r : tensor<1000x256xf32>
  }
  return %0 : tensor<1000x256xf32>
}
