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
