//===- KGraphElementwiseOps.td - elementwise ops -----------*- tablegen -*-===//

#ifndef KGRAPH_DIALECT_KGRAPH_IR_KGRAPHELEMENTWISEOPS_TD
#define KGRAPH_DIALECT_KGRAPH_IR_KGRAPHELEMENTWISEOPS_TD

include "kgraph/Dialect/KGraph/IR/KGraphBase.td"
include "mlir/Interfaces/SideEffectInterfaces.td"
include "mlir/Interfaces/InferTypeOpInterface.td"

class KGraph_BinaryOp<string mnemonic, list<Trait> traits = []>
    : KGraph_Op<mnemonic, !listconcat(traits, [Pure,
        InferTypeOpAdaptor])> {
  let arguments = (ins KGraph_Tensor:$lhs, KGraph_Tensor:$rhs);
  let results = (outs KGraph_Tensor:$result);
  let assemblyFormat =
      "$lhs `,` $rhs attr-dict `:` type($lhs) `,` type($rhs)";
}

def KGraph_AddOp : KGraph_BinaryOp<"add", [Commutative]> {
  let summary = "elementwise addition with numpy broadcasting";
  let description = [{
    Example:
    ```mlir
    %0 = kgraph.add %a, %b : tensor<4x8xf32>, tensor<8xf32>
    ```
  }];
}

#endif // KGRAPH_DIALECT_KGRAPH_IR_KGRAPHELEMENTWISEOPS_TD
