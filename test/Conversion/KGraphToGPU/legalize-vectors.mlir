// RUN: kgraph-opt %s --kgraph-legalize-vectors | FileCheck %s

// n-D broadcast and shape_cast become row moves on 1-D vectors.
// CHECK-LABEL: func @broadcast_row
// CHECK-SAME: (%[[ROW:.*]]: vector<2xf16>)
// CHECK-NOT: vector.broadcast
// CHECK: %[[P:.*]] = ub.poison : vector<1x2xf16>
// CHECK: %[[R:.*]] = vector.insert %[[ROW]], %[[P]] [0] : vector<2xf16> into vector<1x2xf16>
// CHECK: return %[[R]]
func.func @broadcast_row(%row: vector<2xf16>) -> vector<1x2xf16> {
  %b = vector.broadcast %row : vector<2xf16> to vector<1x2xf16>
  return %b : vector<1x2xf16>
}

// CHECK-LABEL: func @shape_cast
// CHECK-NOT: vector.shape_cast
// CHECK: %[[LO:.*]] = vector.shuffle %{{.*}}, %{{.*}} [0, 1]
// CHECK: %[[A:.*]] = vector.insert %[[LO]], %{{.*}} [0] : vector<2xf32> into vector<2x2xf32>
// CHECK: %[[HI:.*]] = vector.shuffle %{{.*}}, %{{.*}} [2, 3]
// CHECK: vector.insert %[[HI]], %[[A]] [1] : vector<2xf32> into vector<2x2xf32>
func.func @shape_cast(%v: vector<4xf32>) -> vector<2x2xf32> {
  %s = vector.shape_cast %v : vector<4xf32> to vector<2x2xf32>
  return %s : vector<2x2xf32>
}

// 1-D ops are left alone.
// CHECK-LABEL: func @one_d
// CHECK: vector.broadcast %{{.*}} : f32 to vector<4xf32>
func.func @one_d(%x: f32) -> vector<4xf32> {
  %b = vector.broadcast %x : f32 to vector<4xf32>
  return %b : vector<4xf32>
}
