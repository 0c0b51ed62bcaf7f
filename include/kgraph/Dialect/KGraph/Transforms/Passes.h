//===- Passes.h - kgraph dialect transforms ---------------------*- C++ -*-===//

#ifndef KGRAPH_DIALECT_KGRAPH_TRANSFORMS_PASSES_H
#define KGRAPH_DIALECT_KGRAPH_TRANSFORMS_PASSES_H

#include "kgraph/Dialect/KGraph/IR/KGraphOps.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Pass/Pass.h"

namespace kgraph {

#define GEN_PASS_DECL
#include "kgraph/Dialect/KGraph/Transforms/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "kgraph/Dialect/KGraph/Transforms/Passes.h.inc"

} // namespace kgraph

#endif // KGRAPH_DIALECT_KGRAPH_TRANSFORMS_PASSES_H
