// RUN: kgraph-opt %s --split-input-file \
// RUN:   --pass-pipeline='builtin.module(func.func(kgraph-form-kernels),kgraph-tile{target=sm_80},kgraph-lower-to-gpu,canonicalize,cse)' \
// RUN:   | FileCheck %s

// kgraph.reshape is a view: no kernel; its result is a
// memref.reinterpret_cast of its input's buffer, which the kernels that read
// it take as their operand (docs/architecture.md, "Views").

// The NCHW bias idiom: the [C] parameter is read as [C, 1, 1].
// CHECK-LABEL: func.func @bias_nchw
// CHECK-SAME: (%[[X:.*]]: memref<2x5x7x9xf32>, %[[B:.*]]: memref<5xf32>, %[[R:.*]]: memref<2x5x7x9xf32> {kgraph.result = 0 : i64})
// CHECK: %[[V:.*]] = memref.reinterpret_cast %[[B]] to offset: [0], sizes: [5, 1, 1], strides: [1, 1, 1] : memref<5xf32> to memref<5x1x1xf32>
// CHECK: gpu.launch_func @kgraph_kernels::@bias_nchw_k0 {{.*}} args(%[[X]] : memref<2x5x7x9xf32>, %[[V]] : memref<5x1x1xf32>, %[[T:.*]] : memref<2x5x7x9xf32>)
// CHECK: gpu.launch_func @kgraph_kernels::@bias_nchw_k1 {{.*}} args(%[[T]] : memref<2x5x7x9xf32>, %[[R]] : memref<2x5x7x9xf32>)
// CHECK-NOT: gpu.launch_func
// CHECK: gpu.func @bias_nchw_k0(%{{.*}}: memref<2x5x7x9xf32>, %{{.*}}: memref<5x1x1xf32>, %{{.*}}: memref<2x5x7x9xf32>) kernel
// CHECK-NOT: gpu.func @bias_nchw_k2
func.func @bias_nchw(%x: tensor<2x5x7x9xf32>, %b: tensor<5xf32>) -> tensor<2x5x7x9xf32> {
  %v = kgraph.reshape %b : tensor<5xf32> to tensor<5x1x1xf32>
  %s = kgraph.add %x, %v : tensor<2x5x7x9xf32>, tensor<5x1x1xf32>
  %r = kgraph.relu %s : tensor<2x5x7x9xf32>
  return %r : tensor<2x5x7x9xf32>
}

// -----

// Flatten [N, C, 1, 1] -> [N, C] of a reduce result feeding a matmul: the
// matmul reads the reduce's output buffer.
// CHECK-LABEL: func.func @flatten_matmul
// CHECK: %[[P:.*]] = memref.alloc() : memref<5x37x1x1xf32>
// CHECK: gpu.launch_func @kgraph_kernels::@flatten_matmul_k0 {{.*}} args(%{{.*}} : memref<5x37x3x3xf32>, %[[P]] : memref<5x37x1x1xf32>)
// CHECK: %[[F:.*]] = memref.reinterpret_cast %[[P]] to offset: [0], sizes: [5, 37], strides: [37, 1] : memref<5x37x1x1xf32> to memref<5x37xf32>
// CHECK: gpu.launch_func @kgraph_kernels::@flatten_matmul_k1 {{.*}} args(%[[F]] : memref<5x37xf32>, %{{.*}} : memref<37x19xf32>, %{{.*}} : memref<5x19xf32>)
// CHECK-NOT: gpu.launch_func
func.func @flatten_matmul(%x: tensor<5x37x3x3xf32>, %w: tensor<37x19xf32>) -> tensor<5x19xf32> {
  %p = kgraph.reduce mean %x axes = [2, 3] keep_dims : tensor<5x37x3x3xf32>
  %f = kgraph.reshape %p : tensor<5x37x1x1xf32> to tensor<5x37xf32>
  %m = kgraph.matmul %f, %w : tensor<5x37xf32>, tensor<37x19xf32> -> tensor<5x19xf32>
  return %m : tensor<5x19xf32>
}

// -----

// A chain of reshapes of an i1 mask (stored as bytes): one view of the
// compare's output.
// CHECK-LABEL: func.func @chain_i1
// CHECK: %[[M:.*]] = memref.alloc() {kgraph.dtype = "i1"} : memref<4x15xi8>
// CHECK: gpu.launch_func @kgraph_kernels::@chain_i1_k0 {{.*}} %[[M]] : memref<4x15xi8>)
// CHECK: %[[G:.*]] = memref.reinterpret_cast %[[M]] to offset: [0], sizes: [3, 20], strides: [20, 1] : memref<4x15xi8> to memref<3x20xi8>
// CHECK: gpu.launch_func @kgraph_kernels::@chain_i1_k1 {{.*}} args(%[[G]] : memref<3x20xi8>,
// CHECK-NOT: gpu.launch_func
func.func @chain_i1(%x: tensor<4x15xf32>, %y: tensor<4x15xf32>, %a: tensor<3x20xf32>, %b: tensor<3x20xf32>) -> tensor<3x20xf32> {
  %m = kgraph.compare gt, %x, %y : tensor<4x15xf32>, tensor<4x15xf32>
  %f = kgraph.reshape %m : tensor<4x15xi1> to tensor<60xi1>
  %g = kgraph.reshape %f : tensor<60xi1> to tensor<3x20xi1>
  %r = kgraph.select %g, %a, %b : tensor<3x20xi1>, tensor<3x20xf32>, tensor<3x20xf32>
  return %r : tensor<3x20xf32>
}

// -----

// A returned reshape of a group result whose only use it is: the group
// writes the output buffer through a view of it (no copy kernel).
// CHECK-LABEL: func.func @reshape_result
// CHECK-SAME: (%[[X:.*]]: memref<6x35xf32>, %[[R:.*]]: memref<210xf32> {kgraph.result = 0 : i64})
// CHECK: %[[V:.*]] = memref.reinterpret_cast %[[R]] to offset: [0], sizes: [6, 35], strides: [35, 1] : memref<210xf32> to memref<6x35xf32>
// CHECK-NOT: memref.alloc
// CHECK: gpu.launch_func @kgraph_kernels::@reshape_result_k0 {{.*}} args(%[[X]] : memref<6x35xf32>, %[[V]] : memref<6x35xf32>)
// CHECK-NOT: gpu.launch_func
func.func @reshape_result(%x: tensor<6x35xf32>) -> tensor<210xf32> {
  %t = kgraph.tanh %x : tensor<6x35xf32>
  %r = kgraph.reshape %t : tensor<6x35xf32> to tensor<210xf32>
  return %r : tensor<210xf32>
}

// -----

// A returned reshape of an input: a copy kernel reads the view (an output
// never aliases an input).
// CHECK-LABEL: func.func @reshape_input_result
// CHECK-SAME: (%[[X:.*]]: memref<15x14xbf16>, %[[R:.*]]: memref<5x3x14xbf16> {kgraph.result = 0 : i64})
// CHECK: %[[V:.*]] = memref.reinterpret_cast %[[X]] to offset: [0], sizes: [5, 3, 14], strides: [42, 14, 1] : memref<15x14xbf16> to memref<5x3x14xbf16>
// CHECK: gpu.launch_func @kgraph_kernels::@reshape_input_result_k0 {{.*}} args(%[[V]] : memref<5x3x14xbf16>, %[[R]] : memref<5x3x14xbf16>)
// CHECK-NOT: gpu.launch_func
func.func @reshape_input_result(%x: tensor<15x14xbf16>) -> tensor<5x3x14xbf16> {
  %r = kgraph.reshape %x : tensor<15x14xbf16> to tensor<5x3x14xbf16>
  return %r : tensor<5x3x14xbf16>
}

// -----

// A reshape of a value that is also returned: the view's base is that
// output buffer.
// CHECK-LABEL: func.func @returned_base
// CHECK-SAME: %[[R0:[^:]*]]: memref<7x10x3xf32> {kgraph.result = 0 : i64}, %[[R1:[^:]*]]: memref<10x21xf32> {kgraph.result = 1 : i64})
// CHECK: gpu.launch_func @kgraph_kernels::@returned_base_k0 {{.*}} %[[R1]] : memref<10x21xf32>)
// CHECK: %[[V:.*]] = memref.reinterpret_cast %[[R1]] to offset: [0], sizes: [7, 10, 3], strides: [30, 3, 1]
// CHECK: gpu.launch_func @kgraph_kernels::@returned_base_k1 {{.*}} args(%[[V]] : memref<7x10x3xf32>, %[[R0]] : memref<7x10x3xf32>)
func.func @returned_base(%x: tensor<10x21xf32>) -> (tensor<7x10x3xf32>, tensor<10x21xf32>) {
  %s = kgraph.sigmoid %x : tensor<10x21xf32>
  %v = kgraph.reshape %s : tensor<10x21xf32> to tensor<7x10x3xf32>
  %one = arith.constant dense<1.0> : tensor<f32>
  %r = kgraph.add %v, %one : tensor<7x10x3xf32>, tensor<f32>
  return %r, %s : tensor<7x10x3xf32>, tensor<10x21xf32>
}

// -----

// A contiguous kgraph.slice (leading dims, or the outermost non-unit dim)
// starting a multiple of 16 bytes in is a view: a kgraph.buffer_view of its
// input at the byte offset of its first element. (A slice of a view is a
// view of the root.)
// CHECK-LABEL: func.func @slice_views
// CHECK-SAME: (%[[X:[^:]*]]: memref<8x10x3xf32>, %[[Y:[^:]*]]: memref<1x8x4xf16>,
// CHECK: %[[A:.*]] = kgraph.buffer_view %[[X]] byte_offset = 240 : memref<8x10x3xf32> to memref<3x10x3xf32>
// CHECK: gpu.launch_func @kgraph_kernels::@slice_views_k0 {{.*}} args(%[[A]] : memref<3x10x3xf32>,
// CHECK: %[[B:.*]] = kgraph.buffer_view %[[Y]] byte_offset = 32 : memref<1x8x4xf16> to memref<1x4x4xf16>
// CHECK: %[[C:.*]] = memref.reinterpret_cast %[[B]] to offset: [0], sizes: [16], strides: [1] : memref<1x4x4xf16> to memref<16xf16>
// CHECK: %[[D:.*]] = kgraph.buffer_view %[[C]] byte_offset = 16 : memref<16xf16> to memref<8xf16>
// CHECK: gpu.launch_func @kgraph_kernels::@slice_views_k1 {{.*}} args(%[[D]] : memref<8xf16>,
// CHECK-NOT: gpu.launch_func
func.func @slice_views(%x: tensor<8x10x3xf32>, %y: tensor<1x8x4xf16>) -> (tensor<3x10x3xf32>, tensor<8xf16>) {
  %a = kgraph.slice %x offsets = [2, 0, 0] sizes = [3, 10, 3] strides = [1, 1, 1] : tensor<8x10x3xf32>
  %n = kgraph.neg %a : tensor<3x10x3xf32>
  %b = kgraph.slice %y offsets = [0, 4, 0] sizes = [1, 4, 4] strides = [1, 1, 1] : tensor<1x8x4xf16>
  %c = kgraph.reshape %b : tensor<1x4x4xf16> to tensor<16xf16>
  %d = kgraph.slice %c offsets = [8] sizes = [8] strides = [1] : tensor<16xf16>
  %e = kgraph.exp %d : tensor<8xf16>
  return %n, %e : tensor<3x10x3xf32>, tensor<8xf16>
}

// -----

// A kgraph.concat whose inputs are contiguous, 16-byte aligned runs of its
// result (all dims before the axis are 1) has no kernel: each input's group
// writes a view of the concat's buffer (here the output); an input that is
// not a group result of its own (%z, a function input) gets a copy kernel.
// CHECK-LABEL: func.func @concat_in_place
// CHECK-SAME: (%[[X:[^:]*]]: memref<6x8xf32>, %[[Y:[^:]*]]: memref<10x8xf32>, %[[Z:[^:]*]]: memref<4x8xf32>, %[[R:[^:]*]]: memref<20x8xf32> {kgraph.result = 0 : i64})
// CHECK-DAG: %[[V0:.*]] = memref.reinterpret_cast %[[R]] to offset: [0], sizes: [6, 8], strides: [8, 1] : memref<20x8xf32> to memref<6x8xf32>
// CHECK-DAG: %[[V1:.*]] = kgraph.buffer_view %[[R]] byte_offset = 192 : memref<20x8xf32> to memref<10x8xf32>
// CHECK-DAG: %[[V2:.*]] = kgraph.buffer_view %[[R]] byte_offset = 512 : memref<20x8xf32> to memref<4x8xf32>
// CHECK: gpu.launch_func @kgraph_kernels::@concat_in_place_k0 {{.*}} args(%[[X]] : memref<6x8xf32>, %[[V0]] : memref<6x8xf32>)
// CHECK: gpu.launch_func @kgraph_kernels::@concat_in_place_k1 {{.*}} args(%[[Y]] : memref<10x8xf32>, %[[V1]] : memref<10x8xf32>)
// CHECK: gpu.launch_func @kgraph_kernels::@concat_in_place_k2 {{.*}} args(%[[Z]] : memref<4x8xf32>, %[[V2]] : memref<4x8xf32>)
// CHECK-NOT: gpu.launch_func
func.func @concat_in_place(%x: tensor<6x8xf32>, %y: tensor<10x8xf32>, %z: tensor<4x8xf32>) -> tensor<20x8xf32> {
  %a = kgraph.neg %x : tensor<6x8xf32>
  %b = kgraph.exp %y : tensor<10x8xf32>
  %c = kgraph.concat %a, %b, %z axis = 0 : tensor<6x8xf32>, tensor<10x8xf32>, tensor<4x8xf32>
  return %c : tensor<20x8xf32>
}

// -----

// Along the outermost non-unit dim (NCHW channels at batch 1) into an
// intermediate; an input with another use is copied.
// CHECK-LABEL: func.func @concat_channels
// CHECK: %[[C:.*]] = memref.alloc() : memref<1x13x5x7xf16>
// CHECK-DAG: %[[V0:.*]] = memref.reinterpret_cast %[[C]] to offset: [0], sizes: [1, 8, 5, 7], strides: [280, 35, 7, 1] : memref<1x13x5x7xf16> to memref<1x8x5x7xf16>
// CHECK-DAG: %[[V1:.*]] = kgraph.buffer_view %[[C]] byte_offset = 560 : memref<1x13x5x7xf16> to memref<1x5x5x7xf16>
// CHECK: gpu.launch_func @kgraph_kernels::@concat_channels_k0 {{.*}} args(%{{.*}} : memref<1x8x5x7xf16>, %[[A:.*]] : memref<1x8x5x7xf16>)
// CHECK: gpu.launch_func @kgraph_kernels::@concat_channels_k1 {{.*}} args(%[[A]] : memref<1x8x5x7xf16>, %[[V0]] : memref<1x8x5x7xf16>)
// CHECK: gpu.launch_func @kgraph_kernels::@concat_channels_k2 {{.*}} args(%{{.*}} : memref<1x5x5x7xf16>, %[[V1]] : memref<1x5x5x7xf16>)
// CHECK: gpu.launch_func @kgraph_kernels::@concat_channels_k3 {{.*}} args(%[[C]] : memref<1x13x5x7xf16>,
// CHECK-NOT: gpu.launch_func
func.func @concat_channels(%x: tensor<1x8x5x7xf16>, %y: tensor<1x5x5x7xf16>) -> (tensor<1x13x5x7xf16>, tensor<1x8x5x7xf16>) {
  %a = kgraph.relu %x : tensor<1x8x5x7xf16>
  %c = kgraph.concat %a, %y axis = 1 : tensor<1x8x5x7xf16>, tensor<1x5x5x7xf16>
  %r = kgraph.sigmoid %c : tensor<1x13x5x7xf16>
  return %r, %a : tensor<1x13x5x7xf16>, tensor<1x8x5x7xf16>
}
