// RUN: kgraph-opt %s --split-input-file \
// RUN:   --pass-pipeline='builtin.module(func.func(kgraph-form-kernels),kgraph-tile{target=sm_80},kgraph-lower-to-gpu,canonicalize,cse)' \
// RUN:   | FileCheck %s

// Sum over the last axis, odd row (scalar loads), 128 threads per row: lanes
// stride over the row, shuffle within the warp, then the 4 warp partials of
// each of the 2 rows of the block meet in shared memory. Threads of a row
// past the end reduce row 36 again and do not store. The accumulator starts
// at 0, and so do the lanes past the 4 partials of the shared-memory stage.
// CHECK-LABEL: func.func @sum_last
// CHECK: gpu.launch_func @kgraph_kernels::@sum_last_k0 blocks in (%{{.*}}, %{{.*}}, %{{.*}}) threads in (%[[C256:.*]], %{{.*}}, %{{.*}})
// CHECK: gpu.func @sum_last_k0(%[[X:.*]]: memref<37x1001xf32>, %[[OUT:.*]]: memref<37xf32>) workgroup(%[[SMEM:.*]] : memref<8xf32, #gpu.address_space<workgroup>>) kernel
// CHECK-DAG: %[[ZERO:[^ ]+]] = arith.constant 0.000000e+00 : f32
// CHECK:   %[[FLAT:.*]] = memref.reinterpret_cast %[[X]]
// CHECK:   %[[LANE:.*]] = arith.remui %{{.*}}, %c128
// CHECK:   %[[RIB:.*]] = arith.divui %{{.*}}, %c128
// CHECK:   scf.for %[[RG:.*]] = %{{.*}} to %c19 step %c19 {
// CHECK:     %[[ROW:.*]] = arith.addi %{{.*}}, %[[RIB]]
// CHECK:     %[[CL:.*]] = arith.minui %[[ROW]], %c36
// CHECK:     %[[BASE:.*]] = arith.muli %[[CL]], %c1001
// CHECK:     %[[ACC:.*]] = scf.for %[[K:.*]] = %[[LANE]] to %c1001 step %c128 iter_args(%[[A:.*]] = %[[ZERO]]) -> (f32) {
// CHECK:       %[[OFF:.*]] = arith.addi %[[BASE]], %[[K]]
// CHECK:       %[[V:.*]] = memref.load %[[FLAT]][%[[OFF]]]
// CHECK:       arith.addf %[[A]], %[[V]]
// CHECK-COUNT-5: gpu.shuffle  xor
// CHECK:     gpu.barrier
// CHECK:     memref.store %{{.*}}, %[[SMEM]]
// CHECK:     gpu.barrier
// CHECK:     %[[P:.*]] = memref.load %[[SMEM]]
// CHECK:     arith.select %{{.*}}, %[[P]], %[[ZERO]] : f32
// CHECK-COUNT-2: gpu.shuffle  xor
// CHECK:     %[[IN:.*]] = arith.cmpi ult, %[[ROW]], %c37
// CHECK:     scf.if
// CHECK:       memref.store %{{.*}}, %[[OUT]][%[[ROW]]] : memref<37xf32>
func.func @sum_last(%x: tensor<37x1001xf32>) -> tensor<37xf32> {
  %0 = kgraph.reduce sum %x axes = [1] : tensor<37x1001xf32>
  return %0 : tensor<37xf32>
}

// -----

// Max over axis 0 with a thread per 8 outputs: one 16-byte load per reduced
// index, 8 f32 accumulators from -inf, one 16-byte store. No shuffles, no
// barriers.
// CHECK-LABEL: func.func @max_axis0
// CHECK: gpu.func @max_axis0_k0
// CHECK-DAG: %[[NINF:[^ ]+]] = arith.constant 0xFF800000 : f32
// CHECK-NOT: gpu.barrier
// CHECK:   scf.for %[[G:.*]] = %{{.*}} to %c128 step %c128 {
// CHECK:     %[[O:.*]] = arith.muli %[[G]], %c8
// CHECK:     scf.for %[[K:.*]] = %c0 to %c64 step %c1 iter_args(%{{[^ ]+}} = %[[NINF]], %{{[^ ]+}} = %[[NINF]], %{{[^ ]+}} = %[[NINF]], %{{[^ ]+}} = %[[NINF]], %{{[^ ]+}} = %[[NINF]], %{{[^ ]+}} = %[[NINF]], %{{[^ ]+}} = %[[NINF]], %{{[^ ]+}} = %[[NINF]]) -> (f32, f32, f32, f32, f32, f32, f32, f32) {
// CHECK:       %[[S:.*]] = arith.muli %[[K]], %c1024
// CHECK:       %[[OFF:.*]] = arith.addi %[[O]], %[[S]]
// CHECK:       vector.load %{{.*}}[%[[OFF]]] {alignment = 16 : i64} : memref<65536xf16>, vector<8xf16>
// CHECK-COUNT-8: arith.maximumf
// CHECK-COUNT-8: arith.truncf
// CHECK:     vector.store %{{.*}}[%[[O]]] {alignment = 16 : i64} : memref<1024xf16>, vector<8xf16>
// CHECK-NOT: gpu.shuffle
// CHECK: gpu.return
func.func @max_axis0(%x: tensor<64x1024xf16>) -> tensor<1024xf16> {
  %0 = kgraph.fused (%x) {kgraph.config = #kgraph.reduce_config<threads_per_row = 1, rows_per_block = 128, vector_width = 8, grid_size = 1>} : (tensor<64x1024xf16>) -> tensor<1024xf16> {
  ^bb0(%a: tensor<64x1024xf16>):
    %s = kgraph.reduce max %a axes = [0] : tensor<64x1024xf16>
    kgraph.yield %s : tensor<1024xf16>
  }
  return %0 : tensor<1024xf16>
}

// -----

// Mean over the middle axis with keep_dims: kept runs 3 (stride 35) and 7
// (stride 1), reduced run 5 (stride 7); the f32 sum from 0 is divided by 5.
// A thread per output (pinned: the model gives 21 outputs threads that share
// their rows).
// CHECK-LABEL: func.func @mean_middle
// CHECK-DAG: %[[FIVE:[^ ]+]] = arith.constant 5.000000e+00 : f32
// CHECK-DAG: %[[ZERO:[^ ]+]] = arith.constant 0.000000e+00 : f32
// CHECK: scf.for %[[O:.*]] = %{{.*}} to %c21 step %c256 {
// CHECK:   %[[IN:.*]] = arith.remui %[[O]], %c7
// CHECK:   %[[OUTER:.*]] = arith.divui %[[O]], %c7
// CHECK:   %[[OS:.*]] = arith.muli %[[OUTER]], %c35
// CHECK:   %[[BASE:.*]] = arith.addi %[[IN]], %[[OS]]
// CHECK:   %[[SUM:.*]] = scf.for %[[K:.*]] = %c0 to %c5 step %c1 iter_args(%{{[^ ]+}} = %[[ZERO]]) -> (f32) {
// CHECK:     arith.muli %[[K]], %c7
// CHECK:   %[[MEAN:.*]] = arith.divf %[[SUM]], %[[FIVE]]
// CHECK:   memref.store %[[MEAN]], %{{.*}}[%[[O]]] : memref<21xf32>
func.func @mean_middle(%x: tensor<3x5x7xf32>) -> tensor<3x1x7xf32> {
  %0 = kgraph.fused (%x) {kgraph.config = #kgraph.reduce_config<threads_per_row = 1, rows_per_block = 256, vector_width = 1, grid_size = 1>} : (tensor<3x5x7xf32>) -> tensor<3x1x7xf32> {
  ^bb0(%a: tensor<3x5x7xf32>):
    %m = kgraph.reduce mean %a axes = [1] keep_dims : tensor<3x5x7xf32>
    kgraph.yield %m : tensor<3x1x7xf32>
  }
  return %0 : tensor<3x1x7xf32>
}

// -----

// Mean over two inner axes of bf16: one row of 5 * 1024, 16-byte loads,
// rounded to bf16 once at the end. 8 f32 accumulators from 0.
// CHECK-LABEL: func.func @mean_inner2
// CHECK-DAG: %[[ZERO:[^ ]+]] = arith.constant 0.000000e+00 : f32
// CHECK: scf.for {{.*}} iter_args(%{{[^ ]+}} = %[[ZERO]], %{{[^ ]+}} = %[[ZERO]], %{{[^ ]+}} = %[[ZERO]], %{{[^ ]+}} = %[[ZERO]], %{{[^ ]+}} = %[[ZERO]], %{{[^ ]+}} = %[[ZERO]], %{{[^ ]+}} = %[[ZERO]], %{{[^ ]+}} = %[[ZERO]]) -> (f32, f32, f32, f32, f32, f32, f32, f32) {
// CHECK: vector.load %{{.*}} {alignment = 16 : i64} : memref<15360xbf16>, vector<8xbf16>
// CHECK: gpu.shuffle
// CHECK: arith.divf
// CHECK: arith.truncf %{{.*}} : f32 to bf16
func.func @mean_inner2(%x: tensor<3x5x1024xbf16>) -> tensor<3x1x1xbf16> {
  %0 = kgraph.reduce mean %x axes = [1, 2] keep_dims : tensor<3x5x1024xbf16>
  return %0 : tensor<3x1x1xbf16>
}

// -----

// Producers on the fly: exp(x - m) reads x once (16-byte loads) and m once
// per vector (a uniform scalar load, m is broadcast along the row) at the
// row's index, known outside the loop (no division of the flat index); the
// consumer 1 / s runs on the final sum before the single store. One kernel.
// CHECK-LABEL: func.func @softmax_denominator
// CHECK-COUNT-1: gpu.launch_func
// CHECK: gpu.func @softmax_denominator_k0(%[[X:.*]]: memref<64x4096xf32>, %[[M:.*]]: memref<64x1xf32>, %[[OUT:.*]]: memref<64x1xf32>)
// CHECK-DAG: %[[ZERO:[^ ]+]] = arith.constant 0.000000e+00 : f32
// CHECK:   %[[ROW:.*]] = arith.minui %{{.*}}, %c63
// CHECK:   scf.for {{.*}} iter_args(%{{[^ ]+}} = %[[ZERO]], %{{[^ ]+}} = %[[ZERO]], %{{[^ ]+}} = %[[ZERO]], %{{[^ ]+}} = %[[ZERO]]) -> (f32, f32, f32, f32) {
// CHECK:     vector.load %{{.*}} : memref<262144xf32>, vector<4xf32>
// CHECK-NOT: arith.divui
// CHECK:     memref.load %{{.*}}[%[[ROW]]] : memref<64xf32>
// CHECK-COUNT-4: arith.subf
// CHECK-COUNT-4: math.exp
// CHECK-COUNT-4: arith.addf
// CHECK: gpu.shuffle
// CHECK: scf.if
// CHECK:   %[[R:.*]] = arith.divf %{{.*}}, %{{.*}} : f32
// CHECK:   memref.store %[[R]], %{{.*}} : memref<64xf32>
func.func @softmax_denominator(%x: tensor<64x4096xf32>, %m: tensor<64x1xf32>) -> tensor<64x1xf32> {
  %0 = kgraph.fused (%x, %m) : (tensor<64x4096xf32>, tensor<64x1xf32>) -> tensor<64x1xf32> {
  ^bb0(%a: tensor<64x4096xf32>, %b: tensor<64x1xf32>):
    %d = kgraph.sub %a, %b : tensor<64x4096xf32>, tensor<64x1xf32>
    %e = kgraph.exp %d : tensor<64x4096xf32>
    %s = kgraph.reduce sum %e axes = [1] keep_dims : tensor<64x4096xf32>
    %one = arith.constant dense<1.0> : tensor<f32>
    %r = kgraph.div %one, %s : tensor<f32>, tensor<64x1xf32>
    kgraph.yield %r : tensor<64x1xf32>
  }
  return %0 : tensor<64x1xf32>
}

// -----

// i8 sum with 16 threads per row: i32 accumulators, shuffles over 16 lanes,
// the result wraps to i8 before the consumer adds the per-row operand.
// CHECK-LABEL: func.func @i8_rows
// CHECK-DAG: %[[ZERO:[^ ]+]] = arith.constant 0 : i32
// CHECK: scf.for {{.*}} iter_args(%{{[^ ]+}} = %[[ZERO]], %{{[^ ]+}} = %[[ZERO]], %{{[^ ]+}} = %[[ZERO]], %{{[^ ]+}} = %[[ZERO]], %{{[^ ]+}} = %[[ZERO]], %{{[^ ]+}} = %[[ZERO]], %{{[^ ]+}} = %[[ZERO]], %{{[^ ]+}} = %[[ZERO]]) -> (i32, i32, i32, i32, i32, i32, i32, i32) {
// CHECK: vector.load %{{.*}} {alignment = 8 : i64} : memref<12800xi8>, vector<8xi8>
// CHECK-COUNT-8: arith.extsi %{{.*}} : i8 to i32
// CHECK-NOT: gpu.barrier
// CHECK: gpu.shuffle  xor %{{.*}}, %c8_i32, %c32_i32 : i32
// CHECK: gpu.shuffle  xor %{{.*}}, %c1_i32, %c32_i32 : i32
// CHECK: scf.if
// CHECK:   %[[T:.*]] = arith.trunci %{{.*}} : i32 to i8
// CHECK:   %[[S:.*]] = arith.extsi %[[T]] : i8 to i32
// CHECK:   %[[B:.*]] = memref.load %{{.*}} : memref<100xi8>
// CHECK:   %[[BE:.*]] = arith.extsi %[[B]] : i8 to i32
// CHECK:   %[[SUM:.*]] = arith.addi %[[S]], %[[BE]] : i32
// CHECK:   %[[ST:.*]] = arith.trunci %[[SUM]] : i32 to i8
// CHECK:   memref.store %[[ST]]
func.func @i8_rows(%x: tensor<100x128xi8>, %b: tensor<100xi8>) -> tensor<100xi8> {
  %0 = kgraph.fused (%x, %b) {kgraph.config = #kgraph.reduce_config<threads_per_row = 16, rows_per_block = 2, vector_width = 8, grid_size = 50>} : (tensor<100x128xi8>, tensor<100xi8>) -> tensor<100xi8> {
  ^bb0(%a: tensor<100x128xi8>, %c: tensor<100xi8>):
    %s = kgraph.reduce sum %a axes = [1] : tensor<100x128xi8>
    %r = kgraph.add %s, %c : tensor<100xi8>, tensor<100xi8>
    kgraph.yield %r : tensor<100xi8>
  }
  return %0 : tensor<100xi8>
}

// -----

// Reducing axes 0 and 2 of [4, 6, 8] (not adjacent): two reduced runs, the
// reduced index is split with a division by 8. The accumulator starts at
// -inf.
// CHECK-LABEL: func.func @outer_and_inner
// CHECK-DAG: %[[NINF:[^ ]+]] = arith.constant 0xFF800000 : f32
// CHECK: scf.for %[[K:.*]] = %{{.*}} to %c32 step %c32 iter_args(%{{[^ ]+}} = %[[NINF]]) -> (f32) {
// CHECK-DAG:   arith.remui %[[K]], %c8
// CHECK-DAG:   %[[HI:.*]] = arith.divui %[[K]], %c8
// CHECK:   arith.muli %[[HI]], %c48
func.func @outer_and_inner(%x: tensor<4x6x8xf32>) -> tensor<6xf32> {
  %0 = kgraph.fused (%x) {kgraph.config = #kgraph.reduce_config<threads_per_row = 32, rows_per_block = 1, vector_width = 1, grid_size = 6>} : (tensor<4x6x8xf32>) -> tensor<6xf32> {
  ^bb0(%a: tensor<4x6x8xf32>):
    %s = kgraph.reduce max %a axes = [0, 2] : tensor<4x6x8xf32>
    kgraph.yield %s : tensor<6xf32>
  }
  return %0 : tensor<6xf32>
}

// -----

// Max of i32 rows through shared memory: 4 accumulators per thread and the
// lanes past the 4 warp partials start at the smallest i32.
// CHECK-LABEL: func.func @max_rows_i32
// CHECK: gpu.func @max_rows_i32_k0
// CHECK-DAG: %[[MIN:[^ ]+]] = arith.constant -2147483648 : i32
// CHECK: scf.for {{.*}} iter_args(%{{[^ ]+}} = %[[MIN]], %{{[^ ]+}} = %[[MIN]], %{{[^ ]+}} = %[[MIN]], %{{[^ ]+}} = %[[MIN]]) -> (i32, i32, i32, i32) {
// CHECK-COUNT-4: arith.maxsi
// CHECK: gpu.barrier
// CHECK: gpu.barrier
// CHECK: %[[P:.*]] = memref.load %{{.*}} : memref<8xi32, #gpu.address_space<workgroup>>
// CHECK: arith.select %{{.*}}, %[[P]], %[[MIN]] : i32
func.func @max_rows_i32(%x: tensor<4x1000xi32>) -> tensor<4xi32> {
  %0 = kgraph.fused (%x) {kgraph.config = #kgraph.reduce_config<threads_per_row = 128, rows_per_block = 2, vector_width = 4, grid_size = 2>} : (tensor<4x1000xi32>) -> tensor<4xi32> {
  ^bb0(%a: tensor<4x1000xi32>):
    %s = kgraph.reduce max %a axes = [1] : tensor<4x1000xi32>
    kgraph.yield %s : tensor<4xi32>
  }
  return %0 : tensor<4xi32>
}

// -----

// Max of f32 rows through shared memory: the accumulators and the lanes past
// the 2 warp partials start at -inf.
// CHECK-LABEL: func.func @max_rows_f32
// CHECK: gpu.func @max_rows_f32_k0
// CHECK-DAG: %[[NINF:[^ ]+]] = arith.constant 0xFF800000 : f32
// CHECK: scf.for {{.*}} iter_args(%{{[^ ]+}} = %[[NINF]], %{{[^ ]+}} = %[[NINF]], %{{[^ ]+}} = %[[NINF]], %{{[^ ]+}} = %[[NINF]]) -> (f32, f32, f32, f32) {
// CHECK-COUNT-4: arith.maximumf
// CHECK: gpu.barrier
// CHECK: gpu.barrier
// CHECK: %[[P:.*]] = memref.load %{{.*}} : memref<4xf32, #gpu.address_space<workgroup>>
// CHECK: arith.select %{{.*}}, %[[P]], %[[NINF]] : f32
func.func @max_rows_f32(%x: tensor<4x1000xf32>) -> tensor<4xf32> {
  %0 = kgraph.fused (%x) {kgraph.config = #kgraph.reduce_config<threads_per_row = 64, rows_per_block = 2, vector_width = 4, grid_size = 2>} : (tensor<4x1000xf32>) -> tensor<4xf32> {
  ^bb0(%a: tensor<4x1000xf32>):
    %s = kgraph.reduce max %a axes = [1] : tensor<4x1000xf32>
    kgraph.yield %s : tensor<4xf32>
  }
  return %0 : tensor<4xf32>
}
