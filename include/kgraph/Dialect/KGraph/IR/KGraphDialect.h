//===- KGraphDialect.h - kgraph dialect -------------------------*- C++ -*-===//

#ifndef KGRAPH_DIALECT_KGRAPH_IR_KGRAPHDIALECT_H
#define KGRAPH_DIALECT_KGRAPH_IR_KGRAPHDIALECT_H

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/IR/Dialect.h"

#include "kgraph/Dialect/KGraph/IR/KGraphDialect.h.inc"

namespace kgraph {

/// Argument attribute of a func.func tensor argument that is a model
/// parameter: the name (a non-empty string, unique in the function) of the
/// tensor in the module's weights file. Passes treat the argument like any
/// other; the launch plan lists it as a "parameter" buffer.
inline constexpr llvm::StringLiteral kParamAttrName = "kgraph.param";

/// Module attribute naming the weights file (safetensors layout) of the
/// module's parameters, relative to the folder of the .mlir file or absolute.
inline constexpr llvm::StringLiteral kWeightsAttrName = "kgraph.weights";

} // namespace kgraph

#endif // KGRAPH_DIALECT_KGRAPH_IR_KGRAPHDIALECT_H
