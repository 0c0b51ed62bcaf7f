// RUN: kgraph-opt %s --split-input-file \
// RUN:   --pass-pipeline='builtin.module(func.func(kgraph-form-kernels),kgraph-tile{target=sm_80},kgraph-lower-to-gpu,canonicalize,cse)' \
// RUN:   | FileCheck %s

// Host side: destination-passing style, intermediates allocated, one launch
// per group with the configured grid and block. Kernel side: a row operand
// stays contiguous (vector load at flat index mod 1000), a column operand is
// constant along each vector (one scalar load), booleans are stored as bytes.
// CHECK: module attributes {gpu.container_module, kgraph.target = "sm_80"}
// CHECK-LABEL: func.func @broadcasts
// CHECK-SAME: (%[[A:.*]]: memref<37x1000xf32>, %[[ROW:.*]]: memref<1000xf32>, %[[COL:.*]]: memref<37x1xf32>, %[[S:.*]]: memref<1xf32>,
// CHECK-SAME: %[[R0:.*]]: memref<37x1000xf32> {kgraph.result = 0 : i64},
// CHECK-SAME: %[[R1:.*]]: memref<37x1000xi8> {kgraph.dtype = "i1", kgraph.result = 1 : i64})
// CHECK-DAG: %[[C256:.*]] = arith.constant 256 : index
// CHECK-DAG: %[[C37:.*]] = arith.constant 37 : index
// CHECK: %[[TMP:.*]] = memref.alloc() : memref<37x1000xf32>
// CHECK: gpu.launch_func @kgraph_kernels::@broadcasts_k0 blocks in (%[[C37]], %{{.*}}, %{{.*}}) threads in (%[[C256]], %{{.*}}, %{{.*}}) args(%[[A]] : memref<37x1000xf32>, %[[ROW]] : memref<1000xf32>, %[[TMP]] : memref<37x1000xf32>)
// CHECK: gpu.launch_func @kgraph_kernels::@broadcasts_k1 {{.*}} args(%[[TMP]] : memref<37x1000xf32>, %[[COL]] : memref<37x1xf32>, %[[R0]] : memref<37x1000xf32>)
// CHECK: gpu.launch_func @kgraph_kernels::@broadcasts_k2 {{.*}} args(%[[R0]] : memref<37x1000xf32>, %[[S]] : memref<1xf32>, %[[R1]] : memref<37x1000xi8>)
// CHECK: memref.dealloc %[[TMP]]
// CHECK: gpu.module @kgraph_kernels
// CHECK: gpu.func @broadcasts_k0({{.*}}) kernel attributes {known_block_size = array<i32: 256, 1, 1>}
// CHECK: scf.for %[[IV:.*]] = %{{.*}} to %{{.*}} step
// CHECK:   %[[BASE:.*]] = arith.muli %[[IV]], %{{.*}} : index
// CHECK:   vector.load %{{.*}}[%[[BASE]]] {alignment = 16 : i64} : memref<37000xf32>, vector<4xf32>
// CHECK:   %[[RI:.*]] = arith.remui %[[BASE]], %{{.*}} : index
// CHECK:   vector.load %{{.*}}[%[[RI]]] {alignment = 16 : i64} : memref<1000xf32>, vector<4xf32>
// CHECK-COUNT-4: arith.addf
// CHECK:   vector.store %{{.*}}[%[[BASE]]] {alignment = 16 : i64} : memref<37000xf32>, vector<4xf32>
// CHECK: gpu.func @broadcasts_k1
// CHECK:   %[[CI:.*]] = arith.divui %{{.*}}, %{{.*}} : index
// CHECK:   memref.load %{{.*}}[%[[CI]]] : memref<37xf32>
// CHECK-COUNT-4: arith.mulf
// CHECK: gpu.func @broadcasts_k2
// CHECK-COUNT-4: arith.cmpf ogt
// CHECK-COUNT-4: arith.extui %{{.*}} : i1 to i8
// CHECK: vector.store %{{.*}} {alignment = 4 : i64} : memref<37000xi8>, vector<4xi8>
func.func @broadcasts(%a: tensor<37x1000xf32>, %row: tensor<1000xf32>, %col: tensor<37x1xf32>, %s: tensor<1xf32>) -> (tensor<37x1000xf32>, tensor<37x1000xi1>) {
  %0 = kgraph.add %a, %row : tensor<37x1000xf32>, tensor<1000xf32>
  %1 = kgraph.mul %0, %col : tensor<37x1000xf32>, tensor<37x1xf32>
  %2 = kgraph.compare gt, %1, %s : tensor<37x1000xf32>, tensor<1xf32>
  return %1, %2 : tensor<37x1000xf32>, tensor<37x1000xi1>
}

// -----

// A row of odd length cannot stay aligned: scalar gathers. 4097 elements is
// not a multiple of the vector width: a scalar tail loop follows.
// CHECK-LABEL: func.func @gather_and_tail
// CHECK: gpu.func @gather_and_tail_k0
// CHECK: scf.for
// CHECK: vector.load %{{.*}} : memref<12291xf16>, vector<8xf16>
// CHECK-COUNT-8: memref.load %{{.*}} : memref<4097xf16>
// CHECK: arith.truncf
// CHECK: vector.store
// CHECK: scf.for
// CHECK: memref.load %{{.*}} : memref<12291xf16>
// CHECK: memref.store %{{.*}} : memref<12291xf16>
func.func @gather_and_tail(%a: tensor<3x4097xf16>, %b: tensor<4097xf16>) -> tensor<3x4097xf16> {
  %0 = kgraph.sub %a, %b : tensor<3x4097xf16>, tensor<4097xf16>
  return %0 : tensor<3x4097xf16>
}

// -----

// Returning an input, or one value twice, copies: outputs never alias.
// CHECK-LABEL: func.func @aliasing_results
// CHECK-SAME: (%[[IN:.*]]: memref<16xi32>, %[[O0:.*]]: memref<16xi32> {kgraph.result = 0 : i64}, %[[O1:.*]]: memref<16xi32> {kgraph.result = 1 : i64}, %[[O2:.*]]: memref<16xi32> {kgraph.result = 2 : i64})
// CHECK: gpu.launch_func @kgraph_kernels::@aliasing_results_k0 {{.*}} args(%[[IN]] : memref<16xi32>, %[[O1]] : memref<16xi32>)
// CHECK: gpu.launch_func @kgraph_kernels::@aliasing_results_k1 {{.*}} args(%[[IN]] : memref<16xi32>, %[[O0]] : memref<16xi32>)
// CHECK: gpu.launch_func @kgraph_kernels::@aliasing_results_k2 {{.*}} args(%[[O1]] : memref<16xi32>, %[[O2]] : memref<16xi32>)
func.func @aliasing_results(%a: tensor<16xi32>) -> (tensor<16xi32>, tensor<16xi32>, tensor<16xi32>) {
  %0 = kgraph.abs %a : tensor<16xi32>
  return %a, %0, %0 : tensor<16xi32>, tensor<16xi32>, tensor<16xi32>
}

// -----

// A returned constant gets a group that materializes it; a function that
// only returns an input copies it.
// CHECK-LABEL: func.func @constant_result
// CHECK-SAME: (%[[IN:.*]]: memref<8xf32>, %[[O0:.*]]: memref<8xf32> {kgraph.result = 0 : i64}, %[[O1:.*]]: memref<8xf32> {kgraph.result = 1 : i64})
// CHECK: gpu.launch_func @kgraph_kernels::@constant_result_k0 {{.*}} args(%[[O0]] : memref<8xf32>)
// CHECK: gpu.launch_func @kgraph_kernels::@constant_result_k1 {{.*}} args(%[[IN]] : memref<8xf32>, %[[O1]] : memref<8xf32>)
// CHECK: gpu.func @constant_result_k0(%[[OUT:.*]]: memref<8xf32>)
// CHECK: %[[CST:.*]] = arith.constant dense<2.500000e+00> : vector<4xf32>
// CHECK: vector.store %[[CST]]
func.func @constant_result(%a: tensor<8xf32>) -> (tensor<8xf32>, tensor<8xf32>) {
  %c = arith.constant dense<2.5> : tensor<8xf32>
  return %c, %a : tensor<8xf32>, tensor<8xf32>
}
