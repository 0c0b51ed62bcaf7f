//===- KGraphDialect.cpp - kgraph dialect ---------------------------------===//

#include "kgraph/Dialect/KGraph/IR/KGraphDialect.h"
#include "kgraph/Dialect/KGraph/IR/KGraphOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/IR/DialectImplementation.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace kgraph;

#include "kgraph/Dialect/KGraph/IR/KGraphDialect.cpp.inc"
#include "kgraph/Dialect/KGraph/IR/KGraphEnums.cpp.inc"

#define GET_ATTRDEF_CLASSES
#include "kgraph/Dialect/KGraph/IR/KGraphAttrs.cpp.inc"

void KGraphDialect::initialize() {
  addOperations<
#define GET_OP_LIST
#include "kgraph/Dialect/KGraph/IR/KGraphOps.cpp.inc"
      >();
  addAttributes<
#define GET_ATTRDEF_LIST
#include "kgraph/Dialect/KGraph/IR/KGraphAttrs.cpp.inc"
      >();
}

/// Folds produce splat constants (e.g. x - x); they are materialized as
/// arith.constant so the graph stays in upstream form.
Operation *KGraphDialect::materializeConstant(OpBuilder &builder,
                                              Attribute value, Type type,
                                              Location loc) {
  if (auto typed = llvm::dyn_cast<TypedAttr>(value))
    if (arith::ConstantOp::isBuildableWith(typed, type))
      return arith::ConstantOp::create(builder, loc, type, typed);
  return nullptr;
}

LogicalResult ElementwiseConfigAttr::verify(
    function_ref<InFlightDiagnostic()> emitError, int64_t blockSize,
    int64_t vectorWidth, int64_t unroll, int64_t gridSize) {
  if (blockSize <= 0 || blockSize > 1024 || blockSize % 32 != 0)
    return emitError() << "block_size must be a multiple of 32 in [32, 1024], "
                          "got "
                       << blockSize;
  if (vectorWidth <= 0 || vectorWidth > 16 ||
      (vectorWidth & (vectorWidth - 1)) != 0)
    return emitError() << "vector_width must be a power of two in [1, 16], got "
                       << vectorWidth;
  if (unroll <= 0 || unroll > 16)
    return emitError() << "unroll must be in [1, 16], got " << unroll;
  if (gridSize <= 0 || gridSize > 2147483647)
    return emitError() << "grid_size must be in [1, 2^31 - 1], got "
                       << gridSize;
  return success();
}
