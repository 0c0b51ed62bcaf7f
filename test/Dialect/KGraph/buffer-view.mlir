// RUN: kgraph-opt %s --split-input-file --verify-diagnostics | FileCheck %s

// kgraph.buffer_view: the host-side view of a buffer at a byte offset
// (kgraph-lower-to-gpu writes it for a contiguous kgraph.slice).
// CHECK-LABEL: func.func @valid
// CHECK: kgraph.buffer_view %{{.*}} byte_offset = 64 : memref<16x8xf32> to memref<4x8xf32>
// CHECK: kgraph.buffer_view %{{.*}} byte_offset = 384 : memref<16x8xf32> to memref<32xf32>
func.func @valid(%b: memref<16x8xf32>) -> (memref<4x8xf32>, memref<32xf32>) {
  %0 = kgraph.buffer_view %b byte_offset = 64 : memref<16x8xf32> to memref<4x8xf32>
  %1 = kgraph.buffer_view %b byte_offset = 384 : memref<16x8xf32> to memref<32xf32>
  return %0, %1 : memref<4x8xf32>, memref<32xf32>
}

// -----

func.func @past_the_end(%b: memref<16x8xf32>) -> memref<4x8xf32> {
  // expected-error @+1 {{'kgraph.buffer_view' op views bytes [400, 528) of a source of 512 bytes}}
  %0 = kgraph.buffer_view %b byte_offset = 400 : memref<16x8xf32> to memref<4x8xf32>
  return %0 : memref<4x8xf32>
}

// -----

func.func @misaligned(%b: memref<16x8xf32>) -> memref<4x8xf32> {
  // expected-error @+1 {{'kgraph.buffer_view' op byte_offset 6 is not a non-negative multiple of the element size 4}}
  %0 = kgraph.buffer_view %b byte_offset = 6 : memref<16x8xf32> to memref<4x8xf32>
  return %0 : memref<4x8xf32>
}

// -----

func.func @element_type(%b: memref<16x8xf32>) -> memref<4x8xi32> {
  // expected-error @+1 {{'kgraph.buffer_view' op result element type 'i32' differs from source element type 'f32'}}
  %0 = kgraph.buffer_view %b byte_offset = 0 : memref<16x8xf32> to memref<4x8xi32>
  return %0 : memref<4x8xi32>
}

// -----

func.func @layout(%b: memref<16x8xf32>) -> memref<4x8xf32, strided<[8, 1], offset: 16>> {
  // expected-error @+1 {{'kgraph.buffer_view' op result 'memref<4x8xf32, strided<[8, 1], offset: 16>>' does not have the identity layout}}
  %0 = kgraph.buffer_view %b byte_offset = 0 : memref<16x8xf32> to memref<4x8xf32, strided<[8, 1], offset: 16>>
  return %0 : memref<4x8xf32, strided<[8, 1], offset: 16>>
}
