//===- ScalarOps.h - one element of an elementwise op -----------*- C++ -*-===//
//
// Private to lib/Conversion/KGraphToGPU: the scalar arithmetic of kgraph's
// elementwise ops, shared by every emitter that evaluates them (elementwise
// kernels, GEMM epilogues and prologues). Values are computed in f32 for
// floats, i32 for integers and i1 for booleans, and rounded to each op's
// declared element type, so a fused kernel computes exactly what the ops
// compute one at a time.
//
//===----------------------------------------------------------------------===//

#ifndef KGRAPH_LIB_CONVERSION_KGRAPHTOGPU_SCALAROPS_H
#define KGRAPH_LIB_CONVERSION_KGRAPHTOGPU_SCALAROPS_H

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/IR/Builders.h"

namespace kgraph::detail {

/// The element type of a shaped value (a tensor or memref operand).
inline mlir::Type getElementType(mlir::Value v) {
  return llvm::cast<mlir::ShapedType>(v.getType()).getElementType();
}

/// Scalar type a kgraph element type is computed in: f32 for floats, i1 for
/// booleans, i32 for other integers.
mlir::Type getComputeType(mlir::Type elementType);

/// A value loaded in the storage type of `elementType`, in compute type.
mlir::Value toComputeType(mlir::OpBuilder &b, mlir::Location loc,
                          mlir::Value stored, mlir::Type elementType);

/// A computed value in the storage type of `elementType` (rounded, or
/// wrapped for integers; i1 as a byte).
mlir::Value toStorageType(mlir::OpBuilder &b, mlir::Location loc,
                          mlir::Value computed, mlir::Type elementType);

/// A computed value rounded to `elementType` and back to compute type.
mlir::Value roundToType(mlir::OpBuilder &b, mlir::Location loc,
                        mlir::Value computed, mlir::Type elementType);

/// The value of a splat `arith.constant` of element type `elementType`, in
/// compute type; failure, with a diagnostic on `cst`, for a constant that is
/// not a splat dense tensor (the only constants a kernel clones per lane).
mlir::FailureOr<mlir::Value> emitSplatConstant(mlir::OpBuilder &b,
                                               mlir::Location loc,
                                               mlir::arith::ConstantOp cst);

/// One element of the elementwise kgraph op `op` from its operands' elements
/// `x` (compute type), before rounding to the result type; failure (with a
/// diagnostic on `op`) for an op with no scalar lowering.
mlir::FailureOr<mlir::Value> emitScalarOp(mlir::OpBuilder &b,
                                          mlir::Location loc,
                                          mlir::Operation *op,
                                          llvm::ArrayRef<mlir::Value> x);

/// `emitScalarOp` on each of `numLanes` lanes: lane l of every operand is
/// `operandLanes[operand][l]`; each result is rounded to the element type of
/// `op`'s result.
mlir::FailureOr<llvm::SmallVector<mlir::Value>>
emitScalarOpLanes(mlir::OpBuilder &b, mlir::Location loc, mlir::Operation *op,
                  llvm::ArrayRef<llvm::SmallVector<mlir::Value>> operandLanes,
                  int64_t numLanes);

} // namespace kgraph::detail

#endif // KGRAPH_LIB_CONVERSION_KGRAPHTOGPU_SCALAROPS_H
