//===- KGraphRegionOps.td - kgraph.fused and kgraph.yield --*- tablegen -*-===//

#ifndef KGRAPH_DIALECT_KGRAPH_IR_KGRAPHREGIONOPS_TD
#define KGRAPH_DIALECT_KGRAPH_IR_KGRAPHREGIONOPS_TD

include "kgraph/Dialect/KGraph/IR/KGraphBase.td"
include "mlir/Interfaces/ControlFlowInterfaces.td"
include "mlir/Interfaces/SideEffectInterfaces.td"

def KGraph_FusedOp : KGraph_Op<"fused", [IsolatedFromAbove, SingleBlock,
    RecursiveMemoryEffects, RecursivelySpeculatable]> {
  let summary = "a group of kgraph ops compiled as one GPU kernel";
  let description = [{
    `kgraph.fused` holds a group of kgraph ops that tiling and lowering
    compile as a single kernel. The region is isolated from above: every
    value it reads enters as an operand and is bound to the matching entry
    block argument; `kgraph.yield` returns the group's results. Only kgraph
    ops and `arith.constant` may appear in the body.

    Groups are formed by `kgraph-form-kernels` (one op per group) and by
    fusion (several ops per group); later passes attach their decisions
    (target, tile configuration) to this op as attributes.

    Example:
    ```mlir
    %r = kgraph.fused (%a, %b) : (tensor<8xf32>, tensor<8xf32>) -> tensor<8xf32> {
    ^bb0(%x: tensor<8xf32>, %y: tensor<8xf32>):
      %s = kgraph.add %x, %y : tensor<8xf32>, tensor<8xf32>
      %t = kgraph.relu %s : tensor<8xf32>
      kgraph.yield %t : tensor<8xf32>
    }
    ```
  }];
  let arguments = (ins Variadic<KGraph_AnyTensor>:$inputs);
  let results = (outs Variadic<KGraph_AnyTensor>:$results);
  let regions = (region SizedRegion<1>:$body);
  let assemblyFormat = [{
    `(` $inputs `)` attr-dict `:` functional-type($inputs, $results) $body
  }];
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    /// The terminator of the body.
    YieldOp getYield();
  }];
}

def KGraph_YieldOp : KGraph_Op<"yield", [Pure, Terminator, ReturnLike,
    HasParent<"FusedOp">]> {
  let summary = "returns the results of a kgraph.fused group";
  let description = [{
    Terminates the body of `kgraph.fused`; its operands become the group's
    results and must match their types.

    Example:
    ```mlir
    kgraph.yield %t : tensor<8xf32>
    ```
  }];
  let arguments = (ins Variadic<KGraph_AnyTensor>:$values);
  let assemblyFormat = "($values^ `:` type($values))? attr-dict";
}

#endif // KGRAPH_DIALECT_KGRAPH_IR_KGRAPHREGIONOPS_TD
