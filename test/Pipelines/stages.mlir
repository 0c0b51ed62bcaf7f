// --emit stops after a stage and prints the IR; each stage is also a
// pipeline or pass that runs alone.
// RUN: kgraph-opt --tile=sm_80 --emit=tiled %s | FileCheck %s --check-prefix=TILED
// RUN: kgraph-opt --tile=sm_80 --emit=gpu %s | FileCheck %s --check-prefix=GPU
// RUN: kgraph-opt --tile=sm_80 --emit=nvvm %s | FileCheck %s --check-prefix=NVVM
// RUN: kgraph-opt %s --pass-pipeline='builtin.module(kgraph-compile{target=sm_90a stop-after=gpu})' | FileCheck %s --check-prefix=GPU
// RUN: kgraph-opt --tile=sm_80 --emit=gpu %s | kgraph-opt --pass-pipeline='builtin.module(kgraph-gpu-to-nvvm{target=sm_80})' | FileCheck %s --check-prefix=NVVM
// RUN: kgraph-opt %s --pass-pipeline='builtin.module(kgraph-compile{target=sm_80})' | FileCheck %s --check-prefix=BIN

// TILED: module attributes {kgraph.target = "sm_80"}
// TILED: kgraph.fused{{.*}}kgraph.config = #kgraph.elementwise_config<block_size = 256, vector_width = 4, unroll = 1, grid_size = 2>
// TILED: kgraph.sigmoid

// GPU: gpu.container_module
// GPU: func.func @main(%{{.*}}: memref<2000xf32>, %{{.*}}: memref<2000xf32> {kgraph.result = 0 : i64})
// GPU: gpu.launch_func @kgraph_kernels::@main_k0
// GPU: gpu.func @main_k0
// GPU: math.exp

// NVVM: gpu.module @kgraph_kernels [#nvvm.target<O = 3, chip = "sm_80", features = "+ptx70">]
// NVVM: llvm.func @main_k0(%{{.*}}: !llvm.ptr, %{{.*}}: !llvm.ptr) attributes {gpu.kernel
// NVVM: nvvm.read.ptx.sreg.tid.x
// NVVM: llvm.call @__nv_expf

// BIN: gpu.binary @kgraph_kernels
// BIN-SAME: assembly = "
func.func @main(%a: tensor<2000xf32>) -> tensor<2000xf32> {
  %0 = kgraph.sigmoid %a : tensor<2000xf32>
  return %0 : tensor<2000xf32>
}
