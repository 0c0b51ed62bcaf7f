// RUN: kgraph-opt --kgraph-split-kernel-modules --split-input-file %s | FileCheck %s

// Every kernel but the first moves into a module of its own, with the
// module's targets; the launches follow their kernels.
// CHECK-LABEL: func.func @three
// CHECK: gpu.launch_func @kgraph_kernels::@k0
// CHECK: gpu.launch_func @kgraph_kernels_k1::@k1
// CHECK: gpu.launch_func @kgraph_kernels_k2::@k2
// CHECK: gpu.module @kgraph_kernels [#nvvm.target<chip = "sm_80">] {
// CHECK-NEXT: gpu.func @k0
// CHECK: gpu.module @kgraph_kernels_k1 [#nvvm.target<chip = "sm_80">] attributes {kgraph.split_from = "kgraph_kernels"} {
// CHECK-NEXT: gpu.func @k1
// CHECK: gpu.module @kgraph_kernels_k2 [#nvvm.target<chip = "sm_80">] attributes {kgraph.split_from = "kgraph_kernels"} {
// CHECK-NEXT: gpu.func @k2
module attributes {gpu.container_module} {
  func.func @three(%a: memref<4xf32>) {
    %c1 = arith.constant 1 : index
    gpu.launch_func @kgraph_kernels::@k0 blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1) args(%a : memref<4xf32>)
    gpu.launch_func @kgraph_kernels::@k1 blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1) args(%a : memref<4xf32>)
    gpu.launch_func @kgraph_kernels::@k2 blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1) args(%a : memref<4xf32>)
    return
  }
  gpu.module @kgraph_kernels [#nvvm.target<chip = "sm_80">] {
    gpu.func @k0(%a: memref<4xf32>) kernel { gpu.return }
    gpu.func @k1(%a: memref<4xf32>) kernel { gpu.return }
    gpu.func @k2(%a: memref<4xf32>) kernel { gpu.return }
  }
}

// -----

// A piece's name that is taken gets a unique one.
// CHECK-LABEL: func.func @taken
// CHECK: gpu.launch_func @m::@k0
// CHECK: gpu.launch_func @[[PIECE:m_k1_[0-9]+]]::@k1
// CHECK: gpu.module @m {
// CHECK: gpu.module @[[PIECE]] attributes {kgraph.split_from = "m"}
// CHECK: gpu.module @m_k1 {
// CHECK-NEXT: gpu.func @other
module attributes {gpu.container_module} {
  func.func @taken(%a: memref<4xf32>) {
    %c1 = arith.constant 1 : index
    gpu.launch_func @m::@k0 blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1) args(%a : memref<4xf32>)
    gpu.launch_func @m::@k1 blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1) args(%a : memref<4xf32>)
    return
  }
  gpu.module @m {
    gpu.func @k0(%a: memref<4xf32>) kernel { gpu.return }
    gpu.func @k1(%a: memref<4xf32>) kernel { gpu.return }
  }
  gpu.module @m_k1 {
    gpu.func @other(%a: memref<4xf32>) kernel { gpu.return }
  }
}

// -----

// A module with a device function or a global its kernels may share stays
// whole, as does a module with one kernel.
// CHECK-LABEL: func.func @shared
// CHECK: gpu.launch_func @helpers::@k0
// CHECK: gpu.launch_func @helpers::@k1
// CHECK: gpu.launch_func @globals::@k2
// CHECK: gpu.launch_func @globals::@k3
// CHECK: gpu.launch_func @single::@k4
// CHECK-NOT: kgraph.split_from
module attributes {gpu.container_module} {
  func.func @shared(%a: memref<4xf32>) {
    %c1 = arith.constant 1 : index
    gpu.launch_func @helpers::@k0 blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1) args(%a : memref<4xf32>)
    gpu.launch_func @helpers::@k1 blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1) args(%a : memref<4xf32>)
    gpu.launch_func @globals::@k2 blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1) args(%a : memref<4xf32>)
    gpu.launch_func @globals::@k3 blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1) args(%a : memref<4xf32>)
    gpu.launch_func @single::@k4 blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1) args(%a : memref<4xf32>)
    return
  }
  gpu.module @helpers {
    gpu.func @helper() { gpu.return }
    gpu.func @k0(%a: memref<4xf32>) kernel { gpu.return }
    gpu.func @k1(%a: memref<4xf32>) kernel { gpu.return }
  }
  gpu.module @globals {
    memref.global "private" @table : memref<4xf32> = dense<1.0>
    gpu.func @k2(%a: memref<4xf32>) kernel { gpu.return }
    gpu.func @k3(%a: memref<4xf32>) kernel { gpu.return }
  }
  gpu.module @single {
    gpu.func @k4(%a: memref<4xf32>) kernel { gpu.return }
  }
}
