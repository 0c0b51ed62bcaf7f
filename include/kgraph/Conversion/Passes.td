//===- Passes.td - kgraph conversion passes ----------------*- tablegen -*-===//

#ifndef KGRAPH_CONVERSION_PASSES_TD
#define KGRAPH_CONVERSION_PASSES_TD

include "mlir/Pass/PassBase.td"

def KGraphLowerToGPU : Pass<"kgraph-lower-to-gpu", "::mlir::ModuleOp"> {
  let summary = "Lower kgraph.fused groups to gpu.func kernels and graph functions to launch sequences";
  let description = [{
    Every `func.func` holding a kgraph graph (all compute ops grouped in
    `kgraph.fused`, each with a `kgraph.config` from `kgraph-tile`) becomes a
    host function on memrefs in destination-passing style: the graph's inputs
    first, then one argument per result (marked `kgraph.result = i`). Each
    group becomes a `gpu.func` kernel in `gpu.module @kgraph_kernels` and a
    `gpu.launch_func` with the configured grid and block; intermediates are
    `memref.alloc`ed. This host function is what `kgraph-opt` turns into the
    launch plan.

    Elementwise kernels are grid-stride loops over the flattened output:
    `vector_width` consecutive elements per step through 16-byte vector loads
    and stores where the operand's broadcast pattern keeps them contiguous
    and aligned, a single load for operands constant along the vector, and
    scalar gathers otherwise; a scalar loop finishes the tail. 16-bit floats
    are computed in f32 and rounded to their type after every op, so a group
    computes exactly what its ops would compute one by one.

    Before:
    ```mlir
    func.func @main(%a: tensor<1000xf32>) -> tensor<1000xf32> {
      %0 = kgraph.fused (%a) {kgraph.config = #kgraph.elementwise_config<...>} ...
      return %0 : tensor<1000xf32>
    }
    ```
    After:
    ```mlir
    func.func @main(%a: memref<1000xf32>, %r: memref<1000xf32> {kgraph.result = 0 : i64}) {
      gpu.launch_func @kgraph_kernels::@main_k0 blocks in (...) threads in (...)
          args(%a : memref<1000xf32>, %r : memref<1000xf32>)
      return
    }
    gpu.module @kgraph_kernels { gpu.func @main_k0(...) kernel {...} }
    ```

    A group whose inputs all come from the function's parameters
    (`kgraph.param` arguments, views of them, results of other such groups),
    such as the filter rearrangement of a split-K or space-to-depth conv, and
    whose results are not the function's, computes the same thing on every
    call: its launch is marked `kgraph.once` and its result buffers
    `kgraph.derived`, and the launch plan has the runtime run it once per
    device after the parameter upload (`hoist-parameter-kernels=false`
    keeps it in every call).
  }];
  let options = [
    Option<"hoistParameterKernels", "hoist-parameter-kernels", "bool",
           /*default=*/"true",
           "mark kernels that compute only from parameters kgraph.once (run "
           "once at load, not per call)">
  ];
  let dependentDialects = [
    "::mlir::arith::ArithDialect", "::mlir::gpu::GPUDialect",
    "::mlir::math::MathDialect", "::mlir::memref::MemRefDialect",
    "::mlir::nvgpu::NVGPUDialect", "::mlir::NVVM::NVVMDialect",
    "::mlir::ub::UBDialect",
    "::mlir::scf::SCFDialect", "::mlir::vector::VectorDialect"
  ];
}

def KGraphLegalizeVectors : Pass<"kgraph-legalize-vectors"> {
  let summary = "Lower n-D vector shape ops in kernels to what the LLVM conversion handles";
  let description = [{
    Kernels keep mma fragments in 2-D vectors. Canonicalization turns some of
    the row moves on them into `vector.broadcast` and `vector.shape_cast`,
    which the vector-to-LLVM conversion run by `convert-gpu-to-nvvm` does not
    lower on n-D types. This pass applies the upstream progressive lowering
    patterns for broadcast, shape_cast, strided slices, bitcast and
    transpose, so only 1-D vectors and arrays of them reach the conversion.
    `kgraph-gpu-to-nvvm` runs it on `gpu.module` first.

    Before:
    ```mlir
    %b = vector.broadcast %row : vector<2xf16> to vector<1x2xf16>
    ```
    After:
    ```mlir
    %p = ub.poison : vector<1x2xf16>
    %b = vector.insert %row, %p [0] : vector<2xf16> into vector<1x2xf16>
    ```
  }];
  let dependentDialects = ["::mlir::vector::VectorDialect", "::mlir::ub::UBDialect"];
}

def KGraphSplitKernelModules
    : Pass<"kgraph-split-kernel-modules", "::mlir::ModuleOp"> {
  let summary = "Move every kernel of a gpu.module into a module of its own";
  let description = [{
    Passes nested on `gpu.module` run on all modules in parallel, and
    `kgraph-serialize-kernels` compiles modules in parallel: one module per
    kernel lets the nvvm and binary stages use every core (LLVM's NVPTX code
    generation is most of a large model's compile time). The first kernel
    stays in its module; each other one moves into a new module after it
    (named `<module>_<kernel>`, with the module's attributes and
    `kgraph.split_from = "<module>"`), and every reference to it
    (`gpu.launch_func`) follows. A module holding anything but kernels
    (device functions, globals its kernels may share) stays whole.
    `kgraph-gpu-to-nvvm` runs it first.

    Before:
    ```mlir
    gpu.launch_func @kgraph_kernels::@main_k1 ...
    gpu.module @kgraph_kernels {
      gpu.func @main_k0() kernel { gpu.return }
      gpu.func @main_k1() kernel { gpu.return }
    }
    ```
    After:
    ```mlir
    gpu.launch_func @kgraph_kernels_main_k1::@main_k1 ...
    gpu.module @kgraph_kernels { gpu.func @main_k0() kernel { gpu.return } }
    gpu.module @kgraph_kernels_main_k1 attributes {kgraph.split_from = "kgraph_kernels"} {
      gpu.func @main_k1() kernel { gpu.return }
    }
    ```
  }];
  let dependentDialects = ["::mlir::gpu::GPUDialect"];
}

def KGraphSerializeKernels
    : Pass<"kgraph-serialize-kernels", "::mlir::ModuleOp"> {
  let summary = "Compile gpu.modules to PTX in parallel, joining split modules into one gpu.binary";
  let description = [{
    `gpu-module-to-binary` for PTX (format `isa`), with the modules compiled
    in parallel, each in its own LLVM context (`--mlir-disable-threading`
    compiles them one after the other, with the same result). The modules
    `kgraph-split-kernel-modules` cut from one module become one
    `gpu.binary` named after it, whose PTX joins theirs in module order: one
    header, each top-level definition they share once, and a module-local
    symbol two pieces define differently (a global with another initializer)
    renamed in the later piece. Kernel
    references follow the binary. The PTX does not depend on the number of
    threads.
  }];
  let options = [
    Option<"toolkitPath", "toolkit", "std::string", /*default=*/"\"\"",
           "CUDA toolkit root whose nvvm/libdevice is linked">,
  ];
  let dependentDialects = ["::mlir::gpu::GPUDialect"];
}

#endif // KGRAPH_CONVERSION_PASSES_TD
