//===- KGraphOps.td - kgraph op definitions ----------------*- tablegen -*-===//
//
// Entry point for the kgraph ops; each family lives in its own file.
//
//===----------------------------------------------------------------------===//

#ifndef KGRAPH_DIALECT_KGRAPH_IR_KGRAPHOPS_TD
#define KGRAPH_DIALECT_KGRAPH_IR_KGRAPHOPS_TD

include "kgraph/Dialect/KGraph/IR/KGraphBase.td"
include "kgraph/Dialect/KGraph/IR/KGraphAttrs.td"
include "kgraph/Dialect/KGraph/IR/KGraphElementwiseOps.td"
include "kgraph/Dialect/KGraph/IR/KGraphStructuredOps.td"
include "kgraph/Dialect/KGraph/IR/KGraphWinogradOps.td"
include "kgraph/Dialect/KGraph/IR/KGraphDataMovementOps.td"
include "kgraph/Dialect/KGraph/IR/KGraphRegionOps.td"
include "kgraph/Dialect/KGraph/IR/KGraphHostOps.td"

#endif // KGRAPH_DIALECT_KGRAPH_IR_KGRAPHOPS_TD
