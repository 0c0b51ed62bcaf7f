//===- KGraphDataMovementOps.td - reshape, transpose, slice, ... -*- tablegen -*-===//

#ifndef KGRAPH_DIALECT_KGRAPH_IR_KGRAPHDATAMOVEMENTOPS_TD
#define KGRAPH_DIALECT_KGRAPH_IR_KGRAPHDATAMOVEMENTOPS_TD

include "kgraph/Dialect/KGraph/IR/KGraphBase.td"
include "mlir/Interfaces/SideEffectInterfaces.td"

#endif // KGRAPH_DIALECT_KGRAPH_IR_KGRAPHDATAMOVEMENTOPS_TD
