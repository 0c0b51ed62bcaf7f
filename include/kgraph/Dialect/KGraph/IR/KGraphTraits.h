//===- KGraphTraits.h - kgraph op traits ------------------------*- C++ -*-===//
//
// Op traits that give precise diagnostics for malformed generic-form IR.
//
// MLIR verifies an op's traits in the order they are listed, but runs the
// InferTypeOpInterface check (does the written result type match the
// inferred one?) and the op's own verifier only after all of them. Upstream
// traits such as `Elementwise` or `ResultsBroadcastableShape` would therefore
// reject a bad op first with a vague message ("operands don't have
// broadcast-compatible shapes"). Listing one of these traits before them
// makes the precise check run first.
//
//===----------------------------------------------------------------------===//

#ifndef KGRAPH_DIALECT_KGRAPH_IR_KGRAPHTRAITS_H
#define KGRAPH_DIALECT_KGRAPH_IR_KGRAPHTRAITS_H

#include "mlir/Dialect/Traits.h"
#include "mlir/IR/OpDefinition.h"

namespace kgraph {
namespace detail {
/// Requires the result types of `op` to equal `inferred`, naming the first
/// result that differs.
llvm::LogicalResult verifyResultTypesMatch(mlir::Operation *op,
                                           mlir::TypeRange inferred);

/// Requires every operand and result to be a ranked tensor of the shape of
/// operand 0; names the first dimension that differs.
llvm::LogicalResult verifyIdenticalShapes(mlir::Operation *op);
} // namespace detail

namespace OpTrait {
/// Verifies, ahead of the traits listed after it, that the result types are
/// the ones the op's `inferReturnTypes` infers (whose own diagnostics name
/// what is wrong with the operands).
template <typename ConcreteType>
class VerifyInferredTypesFirst
    : public mlir::OpTrait::TraitBase<ConcreteType, VerifyInferredTypesFirst> {
public:
  static llvm::LogicalResult verifyTrait(mlir::Operation *op) {
    llvm::SmallVector<mlir::Type> inferred;
    if (mlir::failed(ConcreteType::inferReturnTypes(
            op->getContext(), op->getLoc(), op->getOperands(),
            op->getRawDictionaryAttrs(), op->getPropertiesStorage(),
            op->getRegions(), inferred)))
      return mlir::failure();
    return detail::verifyResultTypesMatch(op, inferred);
  }
};

/// Verifies, ahead of the traits listed after it, that all operands and
/// results have one shape.
template <typename ConcreteType>
class VerifyIdenticalShapesFirst
    : public mlir::OpTrait::TraitBase<ConcreteType,
                                      VerifyIdenticalShapesFirst> {
public:
  static llvm::LogicalResult verifyTrait(mlir::Operation *op) {
    return detail::verifyIdenticalShapes(op);
  }
};
} // namespace OpTrait
} // namespace kgraph

#endif // KGRAPH_DIALECT_KGRAPH_IR_KGRAPHTRAITS_H
