// RUN: kgraph-opt %s --split-input-file \
// RUN:   --pass-pipeline='builtin.module(func.func(kgraph-form-kernels),kgraph-tile{target=sm_80},kgraph-lower-to-gpu,canonicalize,cse)' \
// RUN:   | FileCheck %s

// Host side: destination-passing style, intermediates allocated, one launch
// per group with the configured grid and block. Kernel side: a row operand
// stays contiguous (vector load at flat index mod 1000), a column operand is
// constant along each vector (one scalar load at flat index / 1000), a
// one-element operand is one scalar load at 0, booleans are stored as bytes.
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
// CHECK:   %[[BASE:.*]] = arith.muli %[[IV]], %c4 : index
// CHECK:   vector.load %{{.*}}[%[[BASE]]] {alignment = 16 : i64} : memref<37000xf32>, vector<4xf32>
// CHECK:   %[[RI:.*]] = arith.remui %[[BASE]], %c1000 : index
// CHECK:   vector.load %{{.*}}[%[[RI]]] {alignment = 16 : i64} : memref<1000xf32>, vector<4xf32>
// CHECK-COUNT-4: arith.addf
// CHECK:   vector.store %{{.*}}[%[[BASE]]] {alignment = 16 : i64} : memref<37000xf32>, vector<4xf32>
// CHECK: gpu.func @broadcasts_k1
// CHECK:   %[[BASE1:.*]] = arith.muli %{{.*}}, %c4 : index
// CHECK:   %[[CI:.*]] = arith.divui %[[BASE1]], %c1000 : index
// CHECK:   %[[CV:.*]] = memref.load %{{.*}}[%[[CI]]] : memref<37xf32>
// CHECK-COUNT-4: arith.mulf %{{.*}}, %[[CV]] : f32
// CHECK: gpu.func @broadcasts_k2
// CHECK:   %[[SV:.*]] = memref.load %{{.*}}[%c0] : memref<1xf32>
// CHECK-COUNT-4: arith.cmpf ogt, %{{.*}}, %[[SV]] : f32
// CHECK-COUNT-4: arith.extui %{{.*}} : i1 to i8
// CHECK: vector.store %{{.*}} {alignment = 4 : i64} : memref<37000xi8>, vector<4xi8>
func.func @broadcasts(%a: tensor<37x1000xf32>, %row: tensor<1000xf32>, %col: tensor<37x1xf32>, %s: tensor<1xf32>) -> (tensor<37x1000xf32>, tensor<37x1000xi1>) {
  %0 = kgraph.add %a, %row : tensor<37x1000xf32>, tensor<1000xf32>
  %1 = kgraph.mul %0, %col : tensor<37x1000xf32>, tensor<37x1xf32>
  %2 = kgraph.compare gt, %1, %s : tensor<37x1000xf32>, tensor<1xf32>
  return %1, %2 : tensor<37x1000xf32>, tensor<37x1000xi1>
}

// -----

// A row of odd length cannot stay aligned: scalar gathers, lane l of the
// vector at flat index i reads b[(i + l) mod 4097] and subtracts it from
// a[i + l]. 4097 elements is not a multiple of the vector width: a scalar
// tail loop follows.
// CHECK-LABEL: func.func @gather_and_tail
// CHECK: gpu.func @gather_and_tail_k0
// CHECK: scf.for
// CHECK:   %[[BASE:.*]] = arith.muli %{{.*}}, %c8 : index
// CHECK:   %[[AV:.*]] = vector.load %{{.*}}[%[[BASE]]] {alignment = 16 : i64} : memref<12291xf16>, vector<8xf16>
// CHECK:   %[[A0:.*]] = vector.extract %[[AV]][0] : f16 from vector<8xf16>
// CHECK:   %[[A1:.*]] = vector.extract %[[AV]][1] : f16 from vector<8xf16>
// CHECK:   %[[A2:.*]] = vector.extract %[[AV]][2] : f16 from vector<8xf16>
// CHECK:   %[[A3:.*]] = vector.extract %[[AV]][3] : f16 from vector<8xf16>
// CHECK:   %[[A4:.*]] = vector.extract %[[AV]][4] : f16 from vector<8xf16>
// CHECK:   %[[A5:.*]] = vector.extract %[[AV]][5] : f16 from vector<8xf16>
// CHECK:   %[[A6:.*]] = vector.extract %[[AV]][6] : f16 from vector<8xf16>
// CHECK:   %[[A7:.*]] = vector.extract %[[AV]][7] : f16 from vector<8xf16>
// CHECK:   %[[EA0:.*]] = arith.extf %[[A0]] : f16 to f32
// CHECK:   %[[EA1:.*]] = arith.extf %[[A1]] : f16 to f32
// CHECK:   %[[EA2:.*]] = arith.extf %[[A2]] : f16 to f32
// CHECK:   %[[EA3:.*]] = arith.extf %[[A3]] : f16 to f32
// CHECK:   %[[EA4:.*]] = arith.extf %[[A4]] : f16 to f32
// CHECK:   %[[EA5:.*]] = arith.extf %[[A5]] : f16 to f32
// CHECK:   %[[EA6:.*]] = arith.extf %[[A6]] : f16 to f32
// CHECK:   %[[EA7:.*]] = arith.extf %[[A7]] : f16 to f32
// CHECK:   %[[J0:.*]] = arith.remui %[[BASE]], %c4097 : index
// CHECK:   %[[I1:.*]] = arith.addi %[[BASE]], %c1 : index
// CHECK:   %[[J1:.*]] = arith.remui %[[I1]], %c4097 : index
// CHECK:   %[[I2:.*]] = arith.addi %[[BASE]], %c2 : index
// CHECK:   %[[J2:.*]] = arith.remui %[[I2]], %c4097 : index
// CHECK:   %[[I3:.*]] = arith.addi %[[BASE]], %c3 : index
// CHECK:   %[[J3:.*]] = arith.remui %[[I3]], %c4097 : index
// CHECK:   %[[I4:.*]] = arith.addi %[[BASE]], %c4 : index
// CHECK:   %[[J4:.*]] = arith.remui %[[I4]], %c4097 : index
// CHECK:   %[[I5:.*]] = arith.addi %[[BASE]], %c5 : index
// CHECK:   %[[J5:.*]] = arith.remui %[[I5]], %c4097 : index
// CHECK:   %[[I6:.*]] = arith.addi %[[BASE]], %c6 : index
// CHECK:   %[[J6:.*]] = arith.remui %[[I6]], %c4097 : index
// CHECK:   %[[I7:.*]] = arith.addi %[[BASE]], %c7 : index
// CHECK:   %[[J7:.*]] = arith.remui %[[I7]], %c4097 : index
// CHECK:   %[[B0:.*]] = memref.load %{{.*}}[%[[J0]]] : memref<4097xf16>
// CHECK:   %[[B1:.*]] = memref.load %{{.*}}[%[[J1]]] : memref<4097xf16>
// CHECK:   %[[B2:.*]] = memref.load %{{.*}}[%[[J2]]] : memref<4097xf16>
// CHECK:   %[[B3:.*]] = memref.load %{{.*}}[%[[J3]]] : memref<4097xf16>
// CHECK:   %[[B4:.*]] = memref.load %{{.*}}[%[[J4]]] : memref<4097xf16>
// CHECK:   %[[B5:.*]] = memref.load %{{.*}}[%[[J5]]] : memref<4097xf16>
// CHECK:   %[[B6:.*]] = memref.load %{{.*}}[%[[J6]]] : memref<4097xf16>
// CHECK:   %[[B7:.*]] = memref.load %{{.*}}[%[[J7]]] : memref<4097xf16>
// CHECK:   %[[EB0:.*]] = arith.extf %[[B0]] : f16 to f32
// CHECK:   %[[EB1:.*]] = arith.extf %[[B1]] : f16 to f32
// CHECK:   %[[EB2:.*]] = arith.extf %[[B2]] : f16 to f32
// CHECK:   %[[EB3:.*]] = arith.extf %[[B3]] : f16 to f32
// CHECK:   %[[EB4:.*]] = arith.extf %[[B4]] : f16 to f32
// CHECK:   %[[EB5:.*]] = arith.extf %[[B5]] : f16 to f32
// CHECK:   %[[EB6:.*]] = arith.extf %[[B6]] : f16 to f32
// CHECK:   %[[EB7:.*]] = arith.extf %[[B7]] : f16 to f32
// CHECK:   %[[D0:.*]] = arith.subf %[[EA0]], %[[EB0]] : f32
// CHECK:   %[[T0:.*]] = arith.truncf %[[D0]] : f32 to f16
// CHECK:   %[[D1:.*]] = arith.subf %[[EA1]], %[[EB1]] : f32
// CHECK:   %[[T1:.*]] = arith.truncf %[[D1]] : f32 to f16
// CHECK:   %[[D2:.*]] = arith.subf %[[EA2]], %[[EB2]] : f32
// CHECK:   %[[T2:.*]] = arith.truncf %[[D2]] : f32 to f16
// CHECK:   %[[D3:.*]] = arith.subf %[[EA3]], %[[EB3]] : f32
// CHECK:   %[[T3:.*]] = arith.truncf %[[D3]] : f32 to f16
// CHECK:   %[[D4:.*]] = arith.subf %[[EA4]], %[[EB4]] : f32
// CHECK:   %[[T4:.*]] = arith.truncf %[[D4]] : f32 to f16
// CHECK:   %[[D5:.*]] = arith.subf %[[EA5]], %[[EB5]] : f32
// CHECK:   %[[T5:.*]] = arith.truncf %[[D5]] : f32 to f16
// CHECK:   %[[D6:.*]] = arith.subf %[[EA6]], %[[EB6]] : f32
// CHECK:   %[[T6:.*]] = arith.truncf %[[D6]] : f32 to f16
// CHECK:   %[[D7:.*]] = arith.subf %[[EA7]], %[[EB7]] : f32
// CHECK:   %[[T7:.*]] = arith.truncf %[[D7]] : f32 to f16
// CHECK:   %[[R:.*]] = vector.from_elements %[[T0]], %[[T1]], %[[T2]], %[[T3]], %[[T4]], %[[T5]], %[[T6]], %[[T7]] : vector<8xf16>
// CHECK:   vector.store %[[R]], %{{.*}}[%[[BASE]]] {alignment = 16 : i64} : memref<12291xf16>, vector<8xf16>
// CHECK: scf.for %[[TI:.*]] = 
// CHECK:   memref.load %{{.*}}[%[[TI]]] : memref<12291xf16>
// CHECK:   %[[TJ:.*]] = arith.remui %[[TI]], %c4097 : index
// CHECK:   %[[TB:.*]] = memref.load %{{.*}}[%[[TJ]]] : memref<4097xf16>
// CHECK:   %[[TEB:.*]] = arith.extf %[[TB]] : f16 to f32
// CHECK:   arith.subf %{{.*}}, %[[TEB]] : f32
// CHECK:   memref.store %{{.*}}, %{{.*}}[%[[TI]]] : memref<12291xf16>
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
