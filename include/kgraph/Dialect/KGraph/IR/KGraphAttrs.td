//===- KGraphAttrs.td - kgraph enums and attributes --------*- tablegen -*-===//

#ifndef KGRAPH_DIALECT_KGRAPH_IR_KGRAPHATTRS_TD
#define KGRAPH_DIALECT_KGRAPH_IR_KGRAPHATTRS_TD

include "kgraph/Dialect/KGraph/IR/KGraphBase.td"
include "mlir/IR/EnumAttr.td"

// Enums shared by several op families are declared here.

#endif // KGRAPH_DIALECT_KGRAPH_IR_KGRAPHATTRS_TD
