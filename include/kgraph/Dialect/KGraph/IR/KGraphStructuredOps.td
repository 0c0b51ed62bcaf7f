//===- KGraphStructuredOps.td - matmul, conv, pool, reduce, fused -*- tablegen -*-===//

#ifndef KGRAPH_DIALECT_KGRAPH_IR_KGRAPHSTRUCTUREDOPS_TD
#define KGRAPH_DIALECT_KGRAPH_IR_KGRAPHSTRUCTUREDOPS_TD

include "kgraph/Dialect/KGraph/IR/KGraphBase.td"
include "kgraph/Dialect/KGraph/IR/KGraphAttrs.td"
include "mlir/Interfaces/SideEffectInterfaces.td"

#endif // KGRAPH_DIALECT_KGRAPH_IR_KGRAPHSTRUCTUREDOPS_TD
