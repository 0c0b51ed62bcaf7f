//===- KGraphClassify.h - op families for kernel formation ------*- C++ -*-===//

#ifndef KGRAPH_DIALECT_KGRAPH_IR_KGRAPHCLASSIFY_H
#define KGRAPH_DIALECT_KGRAPH_IR_KGRAPHCLASSIFY_H

namespace mlir {
class Operation;
} // namespace mlir

namespace kgraph {

/// True for ops computed one output element at a time from the broadcast
/// operands at the same coordinates (unary, binary, cast, compare, select,
/// clamp).
bool isElementwiseOp(mlir::Operation *op);

/// True for kgraph ops that compute something and therefore belong in a
/// kernel: everything in the dialect except kgraph.fused and kgraph.yield.
bool isKernelOp(mlir::Operation *op);

} // namespace kgraph

#endif // KGRAPH_DIALECT_KGRAPH_IR_KGRAPHCLASSIFY_H
