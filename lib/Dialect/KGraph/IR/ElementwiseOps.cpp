//===- ElementwiseOps.cpp - elementwise op verifiers, folds, inference ----===//

#include "kgraph/Dialect/KGraph/IR/KGraphOps.h"

#include "mlir/Dialect/Traits.h"

using namespace mlir;
using namespace kgraph;

/// Infers the numpy-broadcast result type of a binary op.
LogicalResult AddOp::inferReturnTypes(
    MLIRContext *context, std::optional<Location> location,
    AddOp::Adaptor adaptor, SmallVectorImpl<Type> &inferredReturnTypes) {
  auto lhs = llvm::cast<RankedTensorType>(adaptor.getLhs().getType());
  auto rhs = llvm::cast<RankedTensorType>(adaptor.getRhs().getType());
  SmallVector<int64_t> shape;
  if (!OpTrait::util::getBroadcastedShape(lhs.getShape(), rhs.getShape(),
                                          shape))
    return emitOptionalError(location, "operands are not broadcast compatible");
  inferredReturnTypes.push_back(
      RankedTensorType::get(shape, lhs.getElementType()));
  return success();
}
