// RUN: kgraph-opt %s --split-input-file \
// RUN:   --pass-pipeline='builtin.module(func.func(kgraph-fuse,kgraph-form-kernels),kgraph-tile{target=sm_80},kgraph-lower-to-gpu,canonicalize,cse)' \
// RUN:   | FileCheck %s

// A kgraph.concat that is not written in place is an elementwise kernel over
// its result: a branch on the axis coordinate of the step's flat index reads
// the input whose segment holds it through AccessMap::concatInput (the axis
// shifted back by the segment's offset), so no other input's address is
// formed. The CPU interpreter runs these kernels in concat-interp.test.

// NCHW channels at batch 2, f16: each segment is 48 or 80 elements per batch,
// multiples of the vector width 8, so one branch serves all 8 lanes with one
// vector load of one input. Axis coordinate: (f / 16) % 8; input #1 is read
// at (f / 128) * 80 + c * 16 + (f / 4 % 4) * 4 + f % 4 - 3 * 16.
// CHECK-LABEL: gpu.func @mid_vec_k0
// CHECK-SAME: (%[[X:.*]]: memref<2x3x4x4xf16>, %[[Y:.*]]: memref<2x5x4x4xf16>, %[[OUT:.*]]: memref<2x8x4x4xf16>)
// CHECK-DAG: %[[FX:.*]] = memref.reinterpret_cast %[[X]] {{.*}} to memref<96xf16>
// CHECK-DAG: %[[FY:.*]] = memref.reinterpret_cast %[[Y]] {{.*}} to memref<160xf16>
// CHECK: scf.for
// CHECK: %[[F:.*]] = arith.muli %{{.*}}, %c8 : index
// CHECK: %[[Q:.*]] = arith.divui %[[F]], %c16 : index
// CHECK: %[[AX:.*]] = arith.remui %[[Q]], %c8 : index
// CHECK: %[[IN0:.*]] = arith.cmpi ult, %[[AX]], %c3 : index
// CHECK: %{{.*}}:8 = scf.if %[[IN0]] -> (f32, f32, f32, f32, f32, f32, f32, f32) {
// CHECK: vector.load %[[FX]][%{{.*}}] {alignment = 16 : i64} : memref<96xf16>, vector<8xf16>
// CHECK: } else {
// CHECK: arith.muli %{{.*}}, %c80 : index
// CHECK: %[[I1:.*]] = arith.addi %{{.*}}, %c-48 : index
// CHECK: vector.load %[[FY]][%[[I1]]] {alignment = 16 : i64} : memref<160xf16>, vector<8xf16>
// CHECK: }
// CHECK: vector.store %{{.*}}, %{{.*}}[%[[F]]] {alignment = 16 : i64} : memref<256xf16>, vector<8xf16>
func.func @mid_vec(%x: tensor<2x3x4x4xf16>, %y: tensor<2x5x4x4xf16>) -> tensor<2x8x4x4xf16> {
  %c = kgraph.concat %x, %y axis = 1 : tensor<2x3x4x4xf16>, tensor<2x5x4x4xf16>
  return %c : tensor<2x8x4x4xf16>
}

// -----

// Three inputs on the last axis (segments [0, 8), [8, 12), [12, 24), all
// multiples of 4 f32): a balanced tree of branches, c < 8 first, then c < 12.
// CHECK-LABEL: gpu.func @three_k0
// CHECK: %[[F:.*]] = arith.muli %{{.*}}, %c4 : index
// CHECK: %[[AX:.*]] = arith.remui %[[F]], %c24 : index
// CHECK: %[[B0:.*]] = arith.cmpi ult, %[[AX]], %c8 : index
// CHECK: scf.if %[[B0]] -> (f32, f32, f32, f32) {
// CHECK: vector.load %{{.*}} : memref<24xf32>, vector<4xf32>
// CHECK: } else {
// CHECK: %[[B1:.*]] = arith.cmpi ult, %[[AX]], %c12 : index
// CHECK: scf.if %[[B1]] -> (f32, f32, f32, f32) {
// CHECK: arith.addi %{{.*}}, %c-8 : index
// CHECK: vector.load %{{.*}} : memref<12xf32>, vector<4xf32>
// CHECK: } else {
// CHECK: arith.addi %{{.*}}, %c-12 : index
// CHECK: vector.load %{{.*}} : memref<36xf32>, vector<4xf32>
func.func @three(%x: tensor<3x8xf32>, %y: tensor<3x4xf32>, %z: tensor<3x12xf32>) -> tensor<3x24xf32> {
  %c = kgraph.concat %x, %y, %z axis = 1 : tensor<3x8xf32>, tensor<3x4xf32>, tensor<3x12xf32>
  return %c : tensor<3x24xf32>
}

// -----

// Odd segments (3 and 5 on the last axis): lane by lane, each lane's own
// branch and scalar load; the four lanes are stored as one vector.
// CHECK-LABEL: gpu.func @last_odd_k0
// CHECK: %[[F:.*]] = arith.muli %{{.*}}, %c4 : index
// CHECK: %[[A0:.*]] = arith.remui %[[F]], %c8 : index
// CHECK: %[[B0:.*]] = arith.cmpi ult, %[[A0]], %c3 : index
// CHECK: %[[L0:.*]] = scf.if %[[B0]] -> (f32) {
// CHECK: memref.load %{{.*}} : memref<12xf32>
// CHECK: } else {
// CHECK: memref.load %{{.*}} : memref<20xf32>
// CHECK: %[[F1:.*]] = arith.addi %[[F]], %c1 : index
// CHECK: %[[A1:.*]] = arith.remui %[[F1]], %c8 : index
// CHECK: %[[B1:.*]] = arith.cmpi ult, %[[A1]], %c3 : index
// CHECK: %[[L1:.*]] = scf.if %[[B1]] -> (f32) {
// CHECK: %[[L2:.*]] = scf.if %{{.*}} -> (f32) {
// CHECK: %[[L3:.*]] = scf.if %{{.*}} -> (f32) {
// CHECK: vector.from_elements %[[L0]], %[[L1]], %[[L2]], %[[L3]] : vector<4xf32>
// CHECK-NOT: scf.if
// CHECK: gpu.return
func.func @last_odd(%x: tensor<4x3xf32>, %y: tensor<4x5xf32>) -> tensor<4x8xf32> {
  %c = kgraph.concat %x, %y axis = 1 : tensor<4x3xf32>, tensor<4x5xf32>
  return %c : tensor<4x8xf32>
}

// -----

// A [2, 5, 1] concat broadcast along the last dim of its add consumer (one
// kernel under kgraph-fuse): the four lanes read one element, so one branch
// and one scalar load serve them all.
// CHECK-LABEL: func.func @uniform
// CHECK: gpu.launch_func @kgraph_kernels::@uniform_k0
// CHECK-NOT: gpu.launch_func
// CHECK-LABEL: gpu.func @uniform_k0
// CHECK: %[[C:.*]] = scf.if %{{.*}} -> (f32) {
// CHECK: memref.load %{{.*}} : memref<6xf32>
// CHECK: } else {
// CHECK: memref.load %{{.*}} : memref<4xf32>
// CHECK: }
// CHECK: arith.addf %[[C]]
// CHECK: arith.addf %[[C]]
// CHECK: arith.addf %[[C]]
// CHECK: arith.addf %[[C]]
func.func @uniform(%x: tensor<2x3x1xf32>, %y: tensor<2x2x1xf32>, %z: tensor<2x5x8xf32>) -> tensor<2x5x8xf32> {
  %c = kgraph.concat %x, %y axis = 1 : tensor<2x3x1xf32>, tensor<2x2x1xf32>
  %r = kgraph.add %c, %z : tensor<2x5x1xf32>, tensor<2x5x8xf32>
  return %r : tensor<2x5x8xf32>
}

// -----

// i1 (stored as bytes) along a middle axis with a segment of size 1.
// CHECK-LABEL: gpu.func @mask_k0
// CHECK-SAME: memref<2x2x3xi8>, %{{.*}}: memref<2x1x3xi8>, %{{.*}}: memref<2x3x3xi8>
// CHECK: scf.if %{{.*}} -> (i1) {
// CHECK: memref.load %{{.*}} : memref<12xi8>
// CHECK: arith.cmpi ne
func.func @mask(%x: tensor<2x2x3xi1>, %y: tensor<2x1x3xi1>) -> tensor<2x3x3xi1> {
  %c = kgraph.concat %x, %y axis = 1 : tensor<2x2x3xi1>, tensor<2x1x3xi1>
  return %c : tensor<2x3x3xi1>
}
