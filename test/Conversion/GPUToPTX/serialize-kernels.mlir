// RUN: kgraph-opt --kgraph-serialize-kernels --split-input-file --verify-diagnostics %s | FileCheck %s
// RUN: kgraph-opt --kgraph-serialize-kernels --split-input-file --verify-diagnostics --mlir-disable-threading %s | FileCheck %s

// The pieces split from @kgraph_kernels become one gpu.binary named after
// it, the launches follow. Their PTX is joined: one header, the identical
// @helper once, the second piece's module-local @g (another initial value)
// renamed. No compile timings in the object.
// CHECK-LABEL: func.func @main
// CHECK: gpu.launch_func @kgraph_kernels::@k0
// CHECK: gpu.launch_func @kgraph_kernels::@k1
// CHECK-NOT: gpu.binary
// CHECK: gpu.binary @kgraph_kernels [#gpu.object<#nvvm.target<chip = "sm_80">, properties = {O = 2 : i32}, assembly = "
// CHECK-SAME: .target sm_80
// CHECK-NOT: .target
// CHECK-SAME: .u32 g = 1;
// CHECK-SAME: helper(
// CHECK-SAME: .entry k0(
// CHECK-SAME: [g]
// CHECK-SAME: .u32 g_1 = 2;
// CHECK-NOT: helper(
// CHECK-SAME: .entry k1(
// CHECK-SAME: [g_1]
// CHECK-SAME: call.uni (retval0), helper,
// CHECK-NOT: gpu.binary
// CHECK-NOT: gpu.module
module attributes {gpu.container_module} {
  func.func @main(%a: memref<4xi32>) {
    %c1 = arith.constant 1 : index
    gpu.launch_func @kgraph_kernels::@k0 blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1) args(%a : memref<4xi32>)
    gpu.launch_func @kgraph_kernels_k1::@k1 blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1) args(%a : memref<4xi32>)
    return
  }
  gpu.module @kgraph_kernels [#nvvm.target<chip = "sm_80">] {
    llvm.mlir.global internal @g(1 : i32) {addr_space = 1 : i32} : i32
    llvm.func internal @helper(%x: i32) -> i32 attributes {no_inline} {
      %c = llvm.mlir.constant(3 : i32) : i32
      %y = llvm.mul %x, %c : i32
      llvm.return %y : i32
    }
    llvm.func @k0(%p: !llvm.ptr) attributes {gpu.kernel, nvvm.kernel} {
      %a = llvm.mlir.addressof @g : !llvm.ptr<1>
      %v = llvm.load volatile %a : !llvm.ptr<1> -> i32
      %w = llvm.call @helper(%v) : (i32) -> i32
      llvm.store %w, %p : i32, !llvm.ptr
      llvm.return
    }
  }
  gpu.module @kgraph_kernels_k1 [#nvvm.target<chip = "sm_80">] attributes {kgraph.split_from = "kgraph_kernels"} {
    llvm.mlir.global internal @g(2 : i32) {addr_space = 1 : i32} : i32
    llvm.func internal @helper(%x: i32) -> i32 attributes {no_inline} {
      %c = llvm.mlir.constant(3 : i32) : i32
      %y = llvm.mul %x, %c : i32
      llvm.return %y : i32
    }
    llvm.func @k1(%p: !llvm.ptr) attributes {gpu.kernel, nvvm.kernel} {
      %a = llvm.mlir.addressof @g : !llvm.ptr<1>
      %v = llvm.load volatile %a : !llvm.ptr<1> -> i32
      %w = llvm.call @helper(%v) : (i32) -> i32
      llvm.store %w, %p : i32, !llvm.ptr
      llvm.return
    }
  }
}

// -----

// A module of its own keeps its name.
// CHECK-LABEL: func.func @alone
// CHECK: gpu.launch_func @solo::@k
// CHECK: gpu.binary @solo
module attributes {gpu.container_module} {
  func.func @alone(%a: memref<4xi32>) {
    %c1 = arith.constant 1 : index
    gpu.launch_func @solo::@k blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1) args(%a : memref<4xi32>)
    return
  }
  gpu.module @solo [#nvvm.target<chip = "sm_90a">] {
    llvm.func @k(%p: !llvm.ptr) attributes {gpu.kernel, nvvm.kernel} {
      llvm.return
    }
  }
}

// -----

module attributes {gpu.container_module} {
  // expected-error @+1 {{gpu.module 'bare' has no target attributes to compile it for (run kgraph-gpu-to-nvvm or gpu-nvvm-attach-target first)}}
  gpu.module @bare {
    llvm.func @k() attributes {gpu.kernel, nvvm.kernel} {
      llvm.return
    }
  }
}

// -----

module attributes {gpu.container_module} {
  gpu.module @m [#nvvm.target<chip = "sm_80">] {
    llvm.func @k0() attributes {gpu.kernel, nvvm.kernel} {
      llvm.return
    }
  }
  // expected-error @+1 {{gpu.module 'm_k1' was split from 'm' but has other targets than 'm'}}
  gpu.module @m_k1 [#nvvm.target<chip = "sm_90a">] attributes {kgraph.split_from = "m"} {
    llvm.func @k1() attributes {gpu.kernel, nvvm.kernel} {
      llvm.return
    }
  }
}
