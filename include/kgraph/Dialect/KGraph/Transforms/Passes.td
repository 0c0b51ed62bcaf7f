//===- Passes.td - kgraph dialect transforms ---------------*- tablegen -*-===//

#ifndef KGRAPH_DIALECT_KGRAPH_TRANSFORMS_PASSES_TD
#define KGRAPH_DIALECT_KGRAPH_TRANSFORMS_PASSES_TD

include "mlir/Pass/PassBase.td"

def KGraphFormKernels : Pass<"kgraph-form-kernels", "::mlir::func::FuncOp"> {
  let summary = "Wrap every compute op that is not yet in a group into its own kgraph.fused";
  let description = [{
    Kernel formation without fusion: every kgraph compute op outside a
    `kgraph.fused` region becomes a one-op `kgraph.fused` group, so that
    tiling and lowering only ever deal with groups (one group = one kernel).
    Ops already grouped (by `kgraph-fuse`) are left alone. Pure data-layout
    ops whose result is a view of their operand (`kgraph.reshape`) are not
    wrapped.

    Before:
    ```mlir
    %0 = kgraph.add %a, %b : tensor<8xf32>, tensor<8xf32>
    ```
    After:
    ```mlir
    %0 = kgraph.fused (%a, %b) : (tensor<8xf32>, tensor<8xf32>) -> tensor<8xf32> {
    ^bb0(%x: tensor<8xf32>, %y: tensor<8xf32>):
      %1 = kgraph.add %x, %y : tensor<8xf32>, tensor<8xf32>
      kgraph.yield %1 : tensor<8xf32>
    }
    ```
  }];
  let dependentDialects = ["::kgraph::KGraphDialect"];
}

#endif // KGRAPH_DIALECT_KGRAPH_TRANSFORMS_PASSES_TD
