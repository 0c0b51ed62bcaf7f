//===- GemmGroup.h - the parts of a GEMM kernel group -----------*- C++ -*-===//
//
// A GEMM group (kind 2 of the fused-group contract) is one anchor, a
// kgraph.matmul or kgraph.conv2d, plus
//   - an epilogue: elementwise ops that depend on the anchor result, each
//     producing exactly the anchor result's shape, whose other operands are
//     group inputs or splat constants broadcasting (numpy) to that shape;
//   - for a matmul, a prologue per operand: at most two kgraph.cast or
//     kgraph.mul-by-a-splat-constant ops between a group input and lhs/rhs.
// The group yields one value: the last epilogue value, or the anchor result
// when there is no epilogue. kgraph-tile and the GEMM emitter both read a
// group through analyzeGemmGroup, so they agree on what is accepted.
//
//===----------------------------------------------------------------------===//

#ifndef KGRAPH_DIALECT_KGRAPH_TRANSFORMS_GEMMGROUP_H
#define KGRAPH_DIALECT_KGRAPH_TRANSFORMS_GEMMGROUP_H

#include "kgraph/Dialect/KGraph/IR/KGraphOps.h"
#include "kgraph/Dialect/KGraph/Transforms/FusionRules.h"

#include "mlir/Support/LLVM.h"

namespace kgraph {

/// The parts of a GEMM group.
struct GemmGroupParts {
  /// The kgraph.matmul or kgraph.conv2d.
  mlir::Operation *anchor = nullptr;
  /// The group inputs A (matmul lhs / conv input) and B (matmul rhs / conv
  /// filter) are read from.
  mlir::BlockArgument lhsSource, rhsSource;
  /// A kgraph.slice of the input that A (B) is (isGemmOperandSlice): the
  /// kernel reads the slice in place from lhsSource (rhsSource). Null for
  /// none.
  SliceOp lhsSlice, rhsSlice;
  /// Prologue ops of A and B in order from the input to the matmul (empty
  /// for a conv2d).
  llvm::SmallVector<mlir::Operation *, 2> lhsPrologue, rhsPrologue;
  /// Epilogue ops in block order.
  llvm::SmallVector<mlir::Operation *> epilogue;
  /// The value the group yields (the anchor result without an epilogue).
  mlir::Value result;
};

/// True if the body of `group` holds a kgraph.matmul or kgraph.conv2d (the
/// anchor of a GEMM group; stencil groups are recognized before this).
bool hasGemmAnchor(FusedOp group);

/// The parts of the GEMM group `group`. Fails if the group breaks the
/// contract, with a diagnostic on the offending op when `emitErrors`.
mlir::FailureOr<GemmGroupParts> analyzeGemmGroup(FusedOp group,
                                                 bool emitErrors = true);

} // namespace kgraph

#endif // KGRAPH_DIALECT_KGRAPH_TRANSFORMS_GEMMGROUP_H
