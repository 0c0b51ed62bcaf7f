//===- Passes.h - kgraph dialect transforms ---------------------*- C++ -*-===//

#ifndef KGRAPH_DIALECT_KGRAPH_TRANSFORMS_PASSES_H
#define KGRAPH_DIALECT_KGRAPH_TRANSFORMS_PASSES_H

#include "kgraph/Dialect/KGraph/IR/KGraphOps.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Pass/Pass.h"

namespace kgraph {

struct SMTarget;

/// Module attribute naming the SM target (written by kgraph-tile).
inline constexpr llvm::StringLiteral kTargetAttrName = "kgraph.target";
/// kgraph.fused attribute holding the launch configuration.
inline constexpr llvm::StringLiteral kConfigAttrName = "kgraph.config";

/// The configuration kgraph-tile picks for an elementwise group on `target`.
mlir::FailureOr<ElementwiseConfigAttr>
chooseElementwiseConfig(FusedOp group, const SMTarget &target);

#define GEN_PASS_DECL
#include "kgraph/Dialect/KGraph/Transforms/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "kgraph/Dialect/KGraph/Transforms/Passes.h.inc"

/// Moves `ops` (in program order, all in one block) into a new kgraph.fused
/// placed at the last of them. Values defined outside the group become
/// inputs, except constants, which are cloned into the body. `results` are the
/// group's results; their uses are redirected to the new op. The group's
/// kind is recorded: `kind` (the fusion decision), else classifyGroup().
/// Returns the op.
FusedOp wrapInFusedOp(mlir::OpBuilder &builder,
                      llvm::ArrayRef<mlir::Operation *> ops,
                      llvm::ArrayRef<mlir::Value> results,
                      std::optional<GroupKind> kind = std::nullopt);

} // namespace kgraph

#endif // KGRAPH_DIALECT_KGRAPH_TRANSFORMS_PASSES_H
