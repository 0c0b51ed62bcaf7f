//===- KGraphRegionOps.td - kgraph.fused and kgraph.yield --*- tablegen -*-===//

#ifndef KGRAPH_DIALECT_KGRAPH_IR_KGRAPHREGIONOPS_TD
#define KGRAPH_DIALECT_KGRAPH_IR_KGRAPHREGIONOPS_TD

include "kgraph/Dialect/KGraph/IR/KGraphBase.td"
include "kgraph/Dialect/KGraph/IR/KGraphAttrs.td"
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
    fusion (several ops per group), which record the group's kernel family
    as `kind` (printed right after the op name): `elementwise`, `gemm`,
    `reduce`, `stencil` (`copy` is reserved for data-movement kernels). The
    verifier checks that the body can be of that kind; without a kind (IR
    written by hand), `kgraph-tile` classifies the group. Later passes attach
    their decisions (target, tile configuration) to this op as attributes.

    Example:
    ```mlir
    %r = kgraph.fused elementwise (%a, %b) : (tensor<8xf32>, tensor<8xf32>) -> tensor<8xf32> {
    ^bb0(%x: tensor<8xf32>, %y: tensor<8xf32>):
      %s = kgraph.add %x, %y : tensor<8xf32>, tensor<8xf32>
      %t = kgraph.relu %s : tensor<8xf32>
      kgraph.yield %t : tensor<8xf32>
    }
    ```
  }];
  let arguments = (ins Variadic<KGraph_AnyTensor>:$inputs,
                       OptionalAttr<KGraph_GroupKindAttr>:$kind);
  let results = (outs Variadic<KGraph_AnyTensor>:$results);
  let regions = (region SizedRegion<1>:$body);
  let assemblyFormat = [{
    custom<GroupKind>($kind) `(` $inputs `)` attr-dict `:`
    functional-type($inputs, $results) $body
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
