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
    Ops already grouped (by `kgraph-fuse`) are left alone. Constant operands
    are cloned into the group rather than passed in.

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

def KGraphTile : Pass<"kgraph-tile", "::mlir::ModuleOp"> {
  let summary = "Choose the launch configuration of every kernel group for an SM target";
  let description = [{
    Validates `target` against the SM target table, records it on the module
    as `kgraph.target`, and writes a configuration attribute (`kgraph.config`)
    on every `kgraph.fused` group that has none yet. A configuration already
    present is kept, so tests, users and tuners can pin one.

    Elementwise groups get `#kgraph.elementwise_config`: 16-byte vectors for
    the widest element type the group touches, 256-thread blocks, one vector
    per thread while the grid stays within 64 waves of resident blocks over
    the target's SM count, and a grid-stride loop past that.

    Groups whose body is one `kgraph.matmul` get `#kgraph.matmul_config`:
    block tile, warp grid, pipeline stages, instruction and its shape, load
    width and shared-memory padding, chosen by the resource, occupancy and
    cost model of `MatmulTiling.h` (candidates that exceed the target's
    shared memory, registers or threads are discarded; the rest are ranked
    by estimated time). A pinned `#kgraph.matmul_config` is checked against
    the target: the instruction shape must be one the SM table offers for
    the operand type, and shared memory and threads must fit. With
    `report=true` every matmul group gets a remark with the model's
    estimate (shared memory, registers, blocks per SM, waves, cycles).

    Stencil groups (stride-1 "same" conv2d with <= 4 channels, pool2d and
    elementwise ops on one image grid) and lone pool2d ops get
    `#kgraph.stencil_config`: the output tile per block, the thread block
    and the rows per thread, chosen by the halo and shared-memory model of
    `StencilTiling.h`; a pinned one is checked against the target's shared
    memory. `report=true` remarks the plan (shared memory, grid, global
    bytes per pixel, halo overhead).

    Before:
    ```mlir
    %0 = kgraph.fused (%a, %b) : (tensor<1000xf32>, tensor<1000xf32>) -> tensor<1000xf32> {...}
    ```
    After (`--kgraph-tile=target=sm_80`):
    ```mlir
    module attributes {kgraph.target = "sm_80"} {
      %0 = kgraph.fused (%a, %b) {kgraph.config = #kgraph.elementwise_config<
          block_size = 256, vector_width = 4, unroll = 1, grid_size = 1>} ...
    }
    ```
  }];
  let options = [
    Option<"target", "target", "std::string", /*default=*/"\"sm_80\"",
           "SM target from the table (sm_70 ... sm_90a)">,
    Option<"report", "report", "bool", /*default=*/"false",
           "Emit a remark per matmul group with the cost model's estimate">,
  ];
  let dependentDialects = ["::kgraph::KGraphDialect"];
}

#endif // KGRAPH_DIALECT_KGRAPH_TRANSFORMS_PASSES_TD
