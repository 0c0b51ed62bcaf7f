// RUN: kgraph-opt %s --split-input-file --kgraph-lower-to-gpu --canonicalize --cse | FileCheck %s

// Multi-reduction groups (MultiReduceEmitter.cpp): the reductions run one
// after the other over each row, every thread of a row gets each total, and
// the results are stored once.

// Softmax over rows of 300 f32, held in registers: 64 threads per row, two
// vectors of 4 per thread (the second past the row's end for lanes >= 11:
// it reads the row's last vector and is left out). Each input vector is
// loaded once; the max starts at -inf, the sum at 0; past a warp, the
// partial results meet in shared memory and all 32 lanes reduce them again
// (xor 16 ... 1), so every thread has the row's max and sum.
module attributes {kgraph.target = "sm_80"} {
  // CHECK-LABEL: gpu.func @softmax_k0
  // CHECK-SAME: workgroup(%[[SMEM:.*]] : memref<4xf32, #gpu.address_space<workgroup>>)
  // CHECK-DAG: %[[ZERO:.*]] = arith.constant 0.000000e+00 : f32
  // CHECK-DAG: %[[NEGINF:.*]] = arith.constant 0xFF800000 : f32
  // CHECK: %[[LANE:.*]] = arith.remui %thread_id_x, %c64
  // CHECK: %[[ROW:.*]] = arith.minui %{{.*}}, %c2 : index
  // CHECK: %[[BASE:.*]] = arith.muli %[[ROW]], %c300 : index
  // CHECK: %[[K0:.*]] = arith.muli %[[LANE]], %c4 : index
  // CHECK: %[[OFF0:.*]] = arith.addi %[[BASE]], %[[K0]] : index
  // CHECK: %[[K1:.*]] = arith.addi %[[K0]], %c256 : index
  // CHECK: %[[IN1:.*]] = arith.cmpi ult, %[[K1]], %c300 : index
  // CHECK: %[[K1C:.*]] = arith.minui %[[K1]], %c296 : index
  // CHECK: %[[OFF1:.*]] = arith.addi %[[BASE]], %[[K1C]] : index
  // CHECK: vector.load %{{.*}}[%[[OFF0]]] {alignment = 16 : i64} : memref<900xf32>, vector<4xf32>
  // CHECK: %[[X1:.*]] = vector.load %{{.*}}[%[[OFF1]]] {alignment = 16 : i64} : memref<900xf32>, vector<4xf32>
  // CHECK: %[[X10:.*]] = vector.extract %[[X1]][0]
  // CHECK: arith.select %[[IN1]], %[[X10]], %[[NEGINF]] : f32
  // CHECK: gpu.shuffle  xor %{{.*}}, %c16_i32, %c32_i32 : f32
  // CHECK: gpu.barrier
  // CHECK: memref.store %{{.*}}, %[[SMEM]]
  // CHECK: gpu.barrier
  // CHECK: %[[P:.*]] = memref.load %[[SMEM]]
  // CHECK: arith.select %{{.*}}, %[[P]], %[[NEGINF]] : f32
  // CHECK-COUNT-5: gpu.shuffle  xor
  // CHECK-NOT: vector.load
  // CHECK: math.exp
  // CHECK: arith.addf %{{.*}}, %[[ZERO]] : f32
  // CHECK-NOT: vector.load
  // CHECK: arith.select %[[IN1]], %{{.*}}, %[[ZERO]] : f32
  // CHECK: gpu.barrier
  // CHECK: gpu.barrier
  // CHECK: arith.select %{{.*}}, %{{.*}}, %[[ZERO]] : f32
  // CHECK-COUNT-5: gpu.shuffle  xor
  // CHECK: %[[SUM:.*]] = arith.addf
  // CHECK: arith.divf %{{.*}}, %[[SUM]] : f32
  // CHECK: scf.if %[[INROW:.*]] {
  // CHECK: vector.store %{{.*}}, %{{.*}}[%[[OFF0]]] {alignment = 16 : i64}
  // CHECK: %[[STORE1:.*]] = arith.andi %[[IN1]], %[[INROW]] : i1
  // CHECK: scf.if %[[STORE1]] {
  // CHECK: vector.store %{{.*}}, %{{.*}}[%[[OFF1]]] {alignment = 16 : i64}
  // CHECK-NOT: vector.load
  // CHECK: gpu.return
  func.func @softmax(%x: tensor<3x300xf32>) -> tensor<3x300xf32> {
    %0 = kgraph.fused reduce (%x) {kgraph.config = #kgraph.reduce_config<threads_per_row = 64, rows_per_block = 2, vector_width = 4, grid_size = 2, row_vectors = 2>} : (tensor<3x300xf32>) -> tensor<3x300xf32> {
    ^bb0(%a: tensor<3x300xf32>):
      %m = kgraph.reduce max %a axes = [1] keep_dims : tensor<3x300xf32>
      %d = kgraph.sub %a, %m : tensor<3x300xf32>, tensor<3x1xf32>
      %e = kgraph.exp %d : tensor<3x300xf32>
      %s = kgraph.reduce sum %e axes = [1] keep_dims : tensor<3x300xf32>
      %o = kgraph.div %e, %s : tensor<3x300xf32>, tensor<3x1xf32>
      kgraph.yield %o : tensor<3x300xf32>
    }
    return %0 : tensor<3x300xf32>
  }
}

// -----

// A layer norm in f16 held in registers (4 threads per row, two vectors of
// 8): both means divide the f32 sum by the row size 64 and round to f16; eps
// is the f16 value of 1e-5; the rsqrt runs once per row, and x - mean is
// computed once and reused by the second reduction and the output; gamma
// is read for both vectors before either is stored.
module attributes {kgraph.target = "sm_80"} {
  // CHECK-LABEL: gpu.func @layer_norm_k0
  // CHECK-DAG: %[[EPS:.*]] = arith.constant 1.00135803E-5 : f32
  // CHECK-DAG: %[[N:.*]] = arith.constant 6.400000e+01 : f32
  // CHECK-COUNT-2: vector.load %{{.*}} : memref<320xf16>, vector<8xf16>
  // CHECK-NOT: vector.load
  // CHECK: gpu.shuffle  xor %{{.*}}, %c2_i32, %c32_i32
  // CHECK: gpu.shuffle  xor %{{.*}}, %c1_i32, %c32_i32
  // CHECK: %[[SUM1:.*]] = arith.addf
  // CHECK: %[[MEAN:.*]] = arith.divf %[[SUM1]], %[[N]] : f32
  // CHECK: %[[MEAN16:.*]] = arith.truncf %[[MEAN]] : f32 to f16
  // CHECK: %[[MEANR:.*]] = arith.extf %[[MEAN16]]
  // CHECK: %[[D0:.*]] = arith.subf %{{.*}}, %[[MEANR]] : f32
  // CHECK: %[[D0H:.*]] = arith.truncf %[[D0]] : f32 to f16
  // CHECK: %[[D0R:.*]] = arith.extf %[[D0H]]
  // CHECK-NOT: vector.load
  // CHECK: gpu.shuffle  xor %{{.*}}, %c2_i32, %c32_i32
  // CHECK: gpu.shuffle  xor %{{.*}}, %c1_i32, %c32_i32
  // CHECK: %[[SUM2:.*]] = arith.addf
  // CHECK-NEXT: %[[VAR:.*]] = arith.divf %[[SUM2]], %[[N]] : f32
  // CHECK: arith.addf %{{.*}}, %[[EPS]] : f32
  // CHECK: %[[R:.*]] = math.rsqrt
  // CHECK-NOT: math.rsqrt
  // CHECK: %[[RH:.*]] = arith.truncf %[[R]] : f32 to f16
  // CHECK: %[[RR:.*]] = arith.extf %[[RH]]
  // CHECK: arith.mulf %[[D0R]], %[[RR]] : f32
  // CHECK-COUNT-2: vector.load %arg1[%{{.*}}] {alignment = 16 : i64} : memref<64xf16>, vector<8xf16>
  // CHECK-NOT: math.rsqrt
  // CHECK-NOT: vector.load
  // CHECK-COUNT-2: vector.store %{{.*}} : memref<320xf16>, vector<8xf16>
  func.func @layer_norm(%x: tensor<5x64xf16>, %g: tensor<64xf16>) -> tensor<5x64xf16> {
    %0 = kgraph.fused reduce (%x, %g) {kgraph.config = #kgraph.reduce_config<threads_per_row = 4, rows_per_block = 8, vector_width = 8, grid_size = 1, row_vectors = 2>} : (tensor<5x64xf16>, tensor<64xf16>) -> tensor<5x64xf16> {
    ^bb0(%a: tensor<5x64xf16>, %b: tensor<64xf16>):
      %eps = arith.constant dense<1.0e-5> : tensor<f16>
      %mu = kgraph.reduce mean %a axes = [1] keep_dims : tensor<5x64xf16>
      %d = kgraph.sub %a, %mu : tensor<5x64xf16>, tensor<5x1xf16>
      %sq = kgraph.mul %d, %d : tensor<5x64xf16>, tensor<5x64xf16>
      %v = kgraph.reduce mean %sq axes = [1] keep_dims : tensor<5x64xf16>
      %ve = kgraph.add %v, %eps : tensor<5x1xf16>, tensor<f16>
      %r = kgraph.rsqrt %ve : tensor<5x1xf16>
      %y = kgraph.mul %d, %r : tensor<5x64xf16>, tensor<5x1xf16>
      %yg = kgraph.mul %y, %b : tensor<5x64xf16>, tensor<64xf16>
      kgraph.yield %yg : tensor<5x64xf16>
    }
    return %0 : tensor<5x64xf16>
  }
}

// -----

// A variance over rows not held (row_vectors = 0): each reduction is a loop
// over the thread's vectors that loads them again, with four accumulators
// from 0; the mean divides by 1000; the per-row result is stored by lane 0
// of a row in range.
module attributes {kgraph.target = "sm_80"} {
  // CHECK-LABEL: gpu.func @variance_stream_k0
  // CHECK-DAG: %[[ZERO:.*]] = arith.constant 0.000000e+00 : f32
  // CHECK-DAG: %[[N:.*]] = arith.constant 1.000000e+03 : f32
  // CHECK: %[[LANE:.*]] = arith.remui %thread_id_x, %c32
  // CHECK: %[[INROW:.*]] = arith.cmpi ult, %{{.*}}, %c3 : index
  // CHECK: %[[ROW:.*]] = arith.minui
  // CHECK: scf.for %{{.*}} = %{{.*}} to %c1000 step %c128 iter_args(%{{.*}} = %[[ZERO]], %{{.*}} = %[[ZERO]], %{{.*}} = %[[ZERO]], %{{.*}} = %[[ZERO]])
  // CHECK: vector.load
  // CHECK: scf.yield
  // CHECK-COUNT-5: gpu.shuffle  xor
  // CHECK: %[[MEAN:.*]] = arith.divf %{{.*}}, %[[N]] : f32
  // CHECK: scf.for %{{.*}} = %{{.*}} to %c1000 step %c128 iter_args(%{{.*}} = %[[ZERO]], %{{.*}} = %[[ZERO]], %{{.*}} = %[[ZERO]], %{{.*}} = %[[ZERO]])
  // CHECK: vector.load
  // CHECK: arith.subf %{{.*}}, %[[MEAN]] : f32
  // CHECK: scf.yield
  // CHECK-COUNT-5: gpu.shuffle  xor
  // CHECK: %[[VAR:.*]] = arith.divf %{{.*}}, %[[N]] : f32
  // CHECK: %[[LANE0:.*]] = arith.cmpi eq, %[[LANE]], %c0 : index
  // CHECK: %[[STORE:.*]] = arith.andi %[[INROW]], %[[LANE0]] : i1
  // CHECK: scf.if %[[STORE]] {
  // CHECK-NEXT: memref.store %[[VAR]], %arg1[%[[ROW]]] : memref<3xf32>
  func.func @variance_stream(%x: tensor<3x1000xf32>) -> tensor<3xf32> {
    %0 = kgraph.fused reduce (%x) {kgraph.config = #kgraph.reduce_config<threads_per_row = 32, rows_per_block = 1, vector_width = 4, grid_size = 3, row_vectors = 0>} : (tensor<3x1000xf32>) -> tensor<3xf32> {
    ^bb0(%a: tensor<3x1000xf32>):
      %mu = kgraph.reduce mean %a axes = [1] keep_dims : tensor<3x1000xf32>
      %d = kgraph.sub %a, %mu : tensor<3x1000xf32>, tensor<3x1xf32>
      %sq = kgraph.mul %d, %d : tensor<3x1000xf32>, tensor<3x1000xf32>
      %v = kgraph.reduce mean %sq axes = [1] : tensor<3x1000xf32>
      kgraph.yield %v : tensor<3xf32>
    }
    return %0 : tensor<3xf32>
  }
}
