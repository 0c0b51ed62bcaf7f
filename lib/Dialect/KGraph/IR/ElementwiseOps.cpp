//===- ElementwiseOps.cpp - elementwise op verifiers, folds, inference ----===//
//
// Result type inference, verifiers and folders of the elementwise ops.
//
// Inference doubles as verification: in the custom assembly form it runs
// while parsing, before the ODS type constraints are checked, so it must
// reject (never cast blindly) unranked, dynamically shaped or unsupported
// operand types, and say precisely what is wrong.
//
//===----------------------------------------------------------------------===//

#include "kgraph/Dialect/KGraph/IR/KGraphOps.h"

#include "mlir/IR/Diagnostics.h"

using namespace mlir;
using namespace kgraph;

//===----------------------------------------------------------------------===//
// Operand checks shared by the inference functions
//===----------------------------------------------------------------------===//

namespace {
/// Which element types an operand may have.
enum class ElementKind {
  /// f32, f16, bf16, i8, i32.
  Numeric,
  /// f32, f16, bf16.
  Float,
  /// i1.
  Bool,
};

/// An operand under inspection, named as diagnostics should call it.
struct NamedOperand {
  StringRef name;
  Type type;
};

/// A checked operand: a statically shaped ranked tensor.
struct NamedTensor {
  StringRef name;
  RankedTensorType type;
};
} // namespace

static bool isFloatElement(Type type) {
  return type.isF32() || type.isF16() || type.isBF16();
}

static bool isElementOfKind(Type type, ElementKind kind) {
  switch (kind) {
  case ElementKind::Numeric:
    return isFloatElement(type) || type.isSignlessInteger(8) ||
           type.isSignlessInteger(32);
  case ElementKind::Float:
    return isFloatElement(type);
  case ElementKind::Bool:
    return type.isSignlessInteger(1);
  }
  return false;
}

static StringRef describeKind(ElementKind kind) {
  switch (kind) {
  case ElementKind::Numeric:
    return "f32, f16, bf16, i8 or i32";
  case ElementKind::Float:
    return "f32, f16 or bf16";
  case ElementKind::Bool:
    return "i1";
  }
  return "";
}

/// Checks that `operand` is a statically shaped ranked tensor whose element
/// type is of `kind`; emits an error prefixed with the op name otherwise.
static FailureOr<NamedTensor> checkOperand(std::optional<Location> loc,
                                           StringRef opName,
                                           NamedOperand operand,
                                           ElementKind kind) {
  auto tensor = llvm::dyn_cast<RankedTensorType>(operand.type);
  if (!tensor || !tensor.hasStaticShape())
    return emitOptionalError(loc, "'", opName, "' op ", operand.name,
                             " must be a statically shaped tensor, but got ",
                             operand.type);
  if (!isElementOfKind(tensor.getElementType(), kind))
    return emitOptionalError(loc, "'", opName, "' op ", operand.name,
                             " element type ", tensor.getElementType(),
                             " is not supported; expected ",
                             describeKind(kind));
  return NamedTensor{operand.name, tensor};
}

/// Requires `a` and `b` to have the same element type.
static LogicalResult checkSameElementType(std::optional<Location> loc,
                                          StringRef opName,
                                          const NamedTensor &a,
                                          const NamedTensor &b) {
  if (a.type.getElementType() == b.type.getElementType())
    return success();
  return emitOptionalError(loc, "'", opName, "' op ", a.name, " and ", b.name,
                           " must have the same element type, but ", a.name,
                           " has ", a.type.getElementType(), " and ", b.name,
                           " has ", b.type.getElementType());
}

/// Computes the numpy broadcast of the operand shapes: shapes are aligned at
/// their trailing dimension, and along each dimension all sizes other than 1
/// must agree. On failure names the first two conflicting dimensions.
static LogicalResult broadcastShapes(std::optional<Location> loc,
                                     StringRef opName,
                                     ArrayRef<NamedTensor> operands,
                                     SmallVectorImpl<int64_t> &shape) {
  int64_t rank = 0;
  for (const NamedTensor &operand : operands)
    rank = std::max(rank, operand.type.getRank());
  shape.assign(rank, 1);
  for (int64_t dim = 0; dim < rank; ++dim) {
    // The operand (and its own dimension index) that fixed this size.
    const NamedTensor *owner = nullptr;
    int64_t ownerDim = 0;
    for (const NamedTensor &operand : operands) {
      int64_t offset = rank - operand.type.getRank();
      if (dim < offset)
        continue;
      int64_t operandDim = dim - offset;
      int64_t size = operand.type.getDimSize(operandDim);
      if (size == 1)
        continue;
      if (!owner) {
        owner = &operand;
        ownerDim = operandDim;
        shape[dim] = size;
        continue;
      }
      if (size != shape[dim])
        return emitOptionalError(
            loc, "'", opName,
            "' op operands are not broadcast compatible: dimension ", ownerDim,
            " of ", owner->name, " ", owner->type, " is ", shape[dim],
            " but dimension ", operandDim, " of ", operand.name, " ",
            operand.type, " is ", size);
    }
  }
  return success();
}

//===----------------------------------------------------------------------===//
// Early verification traits (KGraphTraits.h)
//===----------------------------------------------------------------------===//

LogicalResult kgraph::detail::verifyResultTypesMatch(Operation *op,
                                                     TypeRange inferred) {
  for (auto [index, written] : llvm::enumerate(op->getResultTypes())) {
    Type expected = index < inferred.size() ? inferred[index] : Type();
    if (written != expected)
      return op->emitOpError() << "result #" << index << " has type " << written
                               << " but the operands imply " << expected;
  }
  return success();
}

LogicalResult kgraph::detail::verifyIdenticalShapes(Operation *op) {
  if (op->getNumOperands() == 0)
    return success();
  auto reference =
      llvm::dyn_cast<RankedTensorType>(op->getOperand(0).getType());
  // The ODS type constraints (verified before) report non-tensors.
  if (!reference)
    return success();
  auto check = [&](Type type, StringRef what, unsigned index) -> LogicalResult {
    auto tensor = llvm::dyn_cast<RankedTensorType>(type);
    if (!tensor)
      return success();
    if (tensor.getRank() != reference.getRank())
      return op->emitOpError()
             << "requires all operands and results to have the same shape, "
                "but operand #0 "
             << reference << " has rank " << reference.getRank() << " while "
             << what << " #" << index << " " << tensor << " has rank "
             << tensor.getRank();
    for (int64_t dim = 0, e = tensor.getRank(); dim < e; ++dim)
      if (tensor.getDimSize(dim) != reference.getDimSize(dim))
        return op->emitOpError()
               << "requires all operands and results to have the same "
                  "shape, but dimension "
               << dim << " of operand #0 " << reference << " is "
               << reference.getDimSize(dim) << " while dimension " << dim
               << " of " << what << " #" << index << " " << tensor << " is "
               << tensor.getDimSize(dim);
    return success();
  };
  for (auto [index, type] : llvm::enumerate(op->getOperandTypes()))
    if (failed(check(type, "operand", index)))
      return failure();
  for (auto [index, type] : llvm::enumerate(op->getResultTypes()))
    if (failed(check(type, "result", index)))
      return failure();
  return success();
}

//===----------------------------------------------------------------------===//
// Binary ops
//===----------------------------------------------------------------------===//

/// Infers the result of a broadcasting binary op: the broadcast shape with
/// the operands' common element type (`i1` when `boolResult` is set).
static LogicalResult
inferBinaryType(MLIRContext *context, std::optional<Location> loc,
                StringRef opName, Type lhsType, Type rhsType, ElementKind kind,
                bool boolResult, SmallVectorImpl<Type> &inferred) {
  FailureOr<NamedTensor> lhs =
      checkOperand(loc, opName, {"lhs", lhsType}, kind);
  if (failed(lhs))
    return failure();
  FailureOr<NamedTensor> rhs =
      checkOperand(loc, opName, {"rhs", rhsType}, kind);
  if (failed(rhs))
    return failure();
  if (failed(checkSameElementType(loc, opName, *lhs, *rhs)))
    return failure();
  SmallVector<int64_t> shape;
  if (failed(broadcastShapes(loc, opName, {*lhs, *rhs}, shape)))
    return failure();
  Type elementType =
      boolResult ? IntegerType::get(context, 1) : lhs->type.getElementType();
  inferred.push_back(RankedTensorType::get(shape, elementType));
  return success();
}

#define KGRAPH_DEFINE_BINARY_INFERENCE(OP, KIND)                               \
  LogicalResult OP::inferReturnTypes(                                          \
      MLIRContext *context, std::optional<Location> location,                  \
      OP::Adaptor adaptor, SmallVectorImpl<Type> &inferredReturnTypes) {       \
    return inferBinaryType(context, location, OP::getOperationName(),          \
                           adaptor.getLhs().getType(),                         \
                           adaptor.getRhs().getType(), KIND,                   \
                           /*boolResult=*/false, inferredReturnTypes);         \
  }

KGRAPH_DEFINE_BINARY_INFERENCE(AddOp, ElementKind::Numeric)
KGRAPH_DEFINE_BINARY_INFERENCE(SubOp, ElementKind::Numeric)
KGRAPH_DEFINE_BINARY_INFERENCE(MulOp, ElementKind::Numeric)
KGRAPH_DEFINE_BINARY_INFERENCE(DivOp, ElementKind::Numeric)
KGRAPH_DEFINE_BINARY_INFERENCE(MaxOp, ElementKind::Numeric)
KGRAPH_DEFINE_BINARY_INFERENCE(MinOp, ElementKind::Numeric)
KGRAPH_DEFINE_BINARY_INFERENCE(PowOp, ElementKind::Float)

#undef KGRAPH_DEFINE_BINARY_INFERENCE

/// Returns true if `attr` is a splat constant whose every element equals
/// `value` (0 or 1). Both +0.0 and -0.0 count as zero.
static bool isSplatOf(Attribute attr, int64_t value) {
  auto splat = llvm::dyn_cast_if_present<SplatElementsAttr>(attr);
  if (!splat)
    return false;
  Type elementType = splat.getElementType();
  if (llvm::isa<FloatType>(elementType)) {
    APFloat element = splat.getSplatValue<APFloat>();
    return value == 0 ? element.isZero()
                      : element.isExactlyValue(static_cast<double>(value));
  }
  if (llvm::isa<IntegerType>(elementType))
    return splat.getSplatValue<APInt>().getSExtValue() == value;
  return false;
}

/// Folds `op(x, c)` to `x` when `c` is a splat of `identity` and `x` already
/// has the result type (so the broadcast did not change its shape). With
/// `commutative`, the constant may also be on the left.
template <typename OpTy>
static OpFoldResult foldIdentityOperand(OpTy op,
                                        typename OpTy::FoldAdaptor adaptor,
                                        int64_t identity, bool commutative) {
  Type resultType = op.getType();
  if (isSplatOf(adaptor.getRhs(), identity) &&
      op.getLhs().getType() == resultType)
    return op.getLhs();
  if (commutative && isSplatOf(adaptor.getLhs(), identity) &&
      op.getRhs().getType() == resultType)
    return op.getRhs();
  return {};
}

OpFoldResult AddOp::fold(FoldAdaptor adaptor) {
  return foldIdentityOperand(*this, adaptor, /*identity=*/0,
                             /*commutative=*/true);
}

OpFoldResult SubOp::fold(FoldAdaptor adaptor) {
  return foldIdentityOperand(*this, adaptor, /*identity=*/0,
                             /*commutative=*/false);
}

OpFoldResult MulOp::fold(FoldAdaptor adaptor) {
  return foldIdentityOperand(*this, adaptor, /*identity=*/1,
                             /*commutative=*/true);
}

OpFoldResult DivOp::fold(FoldAdaptor adaptor) {
  return foldIdentityOperand(*this, adaptor, /*identity=*/1,
                             /*commutative=*/false);
}

//===----------------------------------------------------------------------===//
// Unary ops and clamp
//===----------------------------------------------------------------------===//

/// Infers the result of a unary op: exactly the operand type, once checked.
static LogicalResult inferUnaryType(std::optional<Location> loc,
                                    StringRef opName, Type inputType,
                                    ElementKind kind,
                                    SmallVectorImpl<Type> &inferred) {
  FailureOr<NamedTensor> input =
      checkOperand(loc, opName, {"input", inputType}, kind);
  if (failed(input))
    return failure();
  inferred.push_back(input->type);
  return success();
}

#define KGRAPH_DEFINE_UNARY_INFERENCE(OP, KIND)                                \
  LogicalResult OP::inferReturnTypes(                                          \
      MLIRContext *, std::optional<Location> location, OP::Adaptor adaptor,    \
      SmallVectorImpl<Type> &inferredReturnTypes) {                            \
    return inferUnaryType(location, OP::getOperationName(),                    \
                          adaptor.getInput().getType(), KIND,                  \
                          inferredReturnTypes);                                \
  }

KGRAPH_DEFINE_UNARY_INFERENCE(NegOp, ElementKind::Numeric)
KGRAPH_DEFINE_UNARY_INFERENCE(AbsOp, ElementKind::Numeric)
KGRAPH_DEFINE_UNARY_INFERENCE(ReluOp, ElementKind::Numeric)
KGRAPH_DEFINE_UNARY_INFERENCE(ClampOp, ElementKind::Numeric)
KGRAPH_DEFINE_UNARY_INFERENCE(ExpOp, ElementKind::Float)
KGRAPH_DEFINE_UNARY_INFERENCE(LogOp, ElementKind::Float)
KGRAPH_DEFINE_UNARY_INFERENCE(SqrtOp, ElementKind::Float)
KGRAPH_DEFINE_UNARY_INFERENCE(RsqrtOp, ElementKind::Float)
KGRAPH_DEFINE_UNARY_INFERENCE(TanhOp, ElementKind::Float)
KGRAPH_DEFINE_UNARY_INFERENCE(SigmoidOp, ElementKind::Float)
KGRAPH_DEFINE_UNARY_INFERENCE(GeluOp, ElementKind::Float)

#undef KGRAPH_DEFINE_UNARY_INFERENCE

/// neg(neg(x)) -> x.
OpFoldResult NegOp::fold(FoldAdaptor) {
  if (auto inner = getInput().getDefiningOp<NegOp>())
    return inner.getInput();
  return {};
}

/// abs(abs(x)) -> abs(x): abs is idempotent, also for the wrapping integer
/// minimum (abs(INT_MIN) == INT_MIN).
OpFoldResult AbsOp::fold(FoldAdaptor) {
  if (getInput().getDefiningOp<AbsOp>())
    return getInput();
  return {};
}

/// relu(relu(x)) -> relu(x).
OpFoldResult ReluOp::fold(FoldAdaptor) {
  if (getInput().getDefiningOp<ReluOp>())
    return getInput();
  return {};
}

LogicalResult ClampOp::verify() {
  double min = getMin().convertToDouble();
  double max = getMax().convertToDouble();
  if (std::isnan(min) || std::isnan(max))
    return emitOpError() << "requires non-NaN bounds, but got min = " << min
                         << " and max = " << max;
  if (min > max)
    return emitOpError() << "requires min <= max, but got min = " << min
                         << " and max = " << max;
  return success();
}

//===----------------------------------------------------------------------===//
// Cast
//===----------------------------------------------------------------------===//

/// A cast to the same type is the identity.
OpFoldResult CastOp::fold(FoldAdaptor) {
  if (getInput().getType() == getType())
    return getInput();
  return {};
}

//===----------------------------------------------------------------------===//
// Compare and select
//===----------------------------------------------------------------------===//

LogicalResult CompareOp::inferReturnTypes(
    MLIRContext *context, std::optional<Location> location,
    CompareOp::Adaptor adaptor, SmallVectorImpl<Type> &inferredReturnTypes) {
  return inferBinaryType(context, location, getOperationName(),
                         adaptor.getLhs().getType(), adaptor.getRhs().getType(),
                         ElementKind::Numeric,
                         /*boolResult=*/true, inferredReturnTypes);
}

LogicalResult
SelectOp::inferReturnTypes(MLIRContext *, std::optional<Location> location,
                           SelectOp::Adaptor adaptor,
                           SmallVectorImpl<Type> &inferredReturnTypes) {
  StringRef opName = getOperationName();
  FailureOr<NamedTensor> condition = checkOperand(
      location, opName, {"condition", adaptor.getCondition().getType()},
      ElementKind::Bool);
  if (failed(condition))
    return failure();
  FailureOr<NamedTensor> trueValue = checkOperand(
      location, opName, {"true_value", adaptor.getTrueValue().getType()},
      ElementKind::Numeric);
  if (failed(trueValue))
    return failure();
  FailureOr<NamedTensor> falseValue = checkOperand(
      location, opName, {"false_value", adaptor.getFalseValue().getType()},
      ElementKind::Numeric);
  if (failed(falseValue))
    return failure();
  if (failed(checkSameElementType(location, opName, *trueValue, *falseValue)))
    return failure();
  SmallVector<int64_t> shape;
  if (failed(broadcastShapes(location, opName,
                             {*condition, *trueValue, *falseValue}, shape)))
    return failure();
  inferredReturnTypes.push_back(
      RankedTensorType::get(shape, trueValue->type.getElementType()));
  return success();
}
