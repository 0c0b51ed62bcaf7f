//===- DataMovementOps.cpp - reshape, transpose, slice, concat, ... -------===//
//
// Verifiers, result type inference and folds of the data-movement ops.
//
// transpose, slice and concat infer their result type. inferReturnTypes also
// runs while the custom form is parsed, before any verifier, so it checks
// operand types and attributes itself and reports errors in the same words
// as a verifier would.
//
//===----------------------------------------------------------------------===//

#include "kgraph/Dialect/KGraph/IR/KGraphOps.h"
#include "OpHelpers.h"

#include "mlir/IR/BuiltinAttributes.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/CheckedArithmetic.h"
#include "llvm/Support/raw_ostream.h"

using namespace mlir;
using namespace kgraph;
using namespace kgraph::detail;

//===----------------------------------------------------------------------===//
// Shared helpers
//===----------------------------------------------------------------------===//

/// Returns a splat constant of `type` when `operand` is a splat constant,
/// for the ops that only move elements around.
static OpFoldResult foldSplat(Attribute operand, Type type) {
  auto splat = llvm::dyn_cast_if_present<SplatElementsAttr>(operand);
  auto shapedType = llvm::dyn_cast<ShapedType>(type);
  if (!splat || !shapedType ||
      splat.getElementType() != shapedType.getElementType())
    return {};
  return DenseElementsAttr::get(shapedType, splat.getSplatValue<Attribute>());
}

//===----------------------------------------------------------------------===//
// ReshapeOp
//===----------------------------------------------------------------------===//

LogicalResult ReshapeOp::verify() {
  auto inputType = llvm::cast<RankedTensorType>(getInput().getType());
  auto resultType = llvm::cast<RankedTensorType>(getType());
  if (inputType.getElementType() != resultType.getElementType())
    return emitOpError("result element type ")
           << resultType.getElementType() << " differs from input element type "
           << inputType.getElementType();
  if (inputType.getNumElements() != resultType.getNumElements())
    return emitOpError("input has ")
           << inputType.getNumElements() << " elements but the result has "
           << resultType.getNumElements();
  return success();
}

OpFoldResult ReshapeOp::fold(FoldAdaptor adaptor) {
  if (getInput().getType() == getType())
    return getInput();
  if (OpFoldResult splat = foldSplat(adaptor.getInput(), getType()))
    return splat;
  // reshape(reshape(x)) reshapes x directly: only the element order matters,
  // and every reshape keeps it.
  if (auto producer = getInput().getDefiningOp<ReshapeOp>()) {
    getInputMutable().assign(producer.getInput());
    return getResult();
  }
  return {};
}

//===----------------------------------------------------------------------===//
// TransposeOp
//===----------------------------------------------------------------------===//

LogicalResult TransposeOp::inferReturnTypes(
    MLIRContext *context, std::optional<Location> location,
    TransposeOp::Adaptor adaptor, SmallVectorImpl<Type> &inferredReturnTypes) {
  auto emitError = makeInferErrorEmitter<TransposeOp>(location);
  RankedTensorType inputType =
      getStaticTensorType(adaptor.getInput().getType(), "input", emitError);
  if (!inputType)
    return failure();

  ArrayRef<int64_t> permutation = adaptor.getPermutation();
  int64_t rank = inputType.getRank();
  if (static_cast<int64_t>(permutation.size()) != rank)
    return emitError() << "permutation " << formatList(permutation) << " has "
                       << permutation.size()
                       << " values but the input has rank " << rank;
  SmallVector<bool> seen(rank, false);
  for (int64_t value : permutation) {
    if (value < 0 || value >= rank)
      return emitError() << "permutation " << formatList(permutation)
                         << " is not a permutation: value " << value
                         << " is out of range for rank " << rank;
    if (seen[value])
      return emitError() << "permutation " << formatList(permutation)
                         << " is not a permutation: value " << value
                         << " is repeated";
    seen[value] = true;
  }

  SmallVector<int64_t> shape;
  for (int64_t value : permutation)
    shape.push_back(inputType.getDimSize(value));
  inferredReturnTypes.push_back(
      RankedTensorType::get(shape, inputType.getElementType()));
  return success();
}

/// Returns true if `permutation` is 0, 1, ..., n-1.
static bool isIdentityPermutation(ArrayRef<int64_t> permutation) {
  for (auto [i, value] : llvm::enumerate(permutation))
    if (value != static_cast<int64_t>(i))
      return false;
  return true;
}

OpFoldResult TransposeOp::fold(FoldAdaptor adaptor) {
  if (isIdentityPermutation(getPermutation()))
    return getInput();
  if (OpFoldResult splat = foldSplat(adaptor.getInput(), getType()))
    return splat;
  // transpose(transpose(x, inner), outer) = transpose(x, composed) with
  // composed[i] = inner[outer[i]].
  if (auto producer = getInput().getDefiningOp<TransposeOp>()) {
    ArrayRef<int64_t> inner = producer.getPermutation();
    SmallVector<int64_t> composed;
    for (int64_t value : getPermutation())
      composed.push_back(inner[value]);
    if (isIdentityPermutation(composed))
      return producer.getInput();
    getInputMutable().assign(producer.getInput());
    setPermutation(composed);
    return getResult();
  }
  return {};
}

//===----------------------------------------------------------------------===//
// SliceOp
//===----------------------------------------------------------------------===//

LogicalResult SliceOp::inferReturnTypes(
    MLIRContext *context, std::optional<Location> location,
    SliceOp::Adaptor adaptor, SmallVectorImpl<Type> &inferredReturnTypes) {
  auto emitError = makeInferErrorEmitter<SliceOp>(location);
  RankedTensorType inputType =
      getStaticTensorType(adaptor.getInput().getType(), "input", emitError);
  if (!inputType)
    return failure();

  ArrayRef<int64_t> offsets = adaptor.getOffsets();
  ArrayRef<int64_t> sizes = adaptor.getSizes();
  ArrayRef<int64_t> strides = adaptor.getStrides();
  int64_t rank = inputType.getRank();
  struct ListCheck {
    StringRef name;
    ArrayRef<int64_t> values;
    bool allowZero;
  };
  for (const ListCheck &list :
       {ListCheck{"offsets", offsets, true}, ListCheck{"sizes", sizes, false},
        ListCheck{"strides", strides, false}}) {
    if (static_cast<int64_t>(list.values.size()) != rank)
      return emitError() << list.name << " " << formatList(list.values)
                         << " has " << list.values.size()
                         << " values but the input has rank " << rank;
    for (int64_t value : list.values)
      if (list.allowZero ? value < 0 : value <= 0)
        return emitError() << list.name << " must be "
                           << (list.allowZero ? "non-negative" : "positive")
                           << ", got " << formatList(list.values);
  }

  for (int64_t dim = 0; dim < rank; ++dim) {
    // Attributes are unbounded, so the last index is computed with checks.
    std::optional<int64_t> last = llvm::checkedMulAdd<int64_t>(
        sizes[dim] - 1, strides[dim], offsets[dim]);
    int64_t dimSize = inputType.getDimSize(dim);
    if (last && *last < dimSize)
      continue;
    InFlightDiagnostic diag = emitError();
    diag << "slice of dim " << dim << " is out of bounds: last index offset "
         << offsets[dim] << " + (size " << sizes[dim] << " - 1) * stride "
         << strides[dim];
    if (last)
      diag << " = " << *last << " is not below the dim size " << dimSize;
    else
      diag << " is out of int64 range (dim size " << dimSize << ")";
    return failure();
  }

  inferredReturnTypes.push_back(
      RankedTensorType::get(sizes, inputType.getElementType()));
  return success();
}

OpFoldResult SliceOp::fold(FoldAdaptor adaptor) {
  // The whole input: same shape, zero offsets, and unit strides (any stride
  // takes the only element of a size-1 dim).
  bool whole = getInput().getType() == getType();
  for (auto [offset, size, stride] :
       llvm::zip_equal(getOffsets(), getSizes(), getStrides()))
    whole &= offset == 0 && (stride == 1 || size == 1);
  if (whole)
    return getInput();
  return foldSplat(adaptor.getInput(), getType());
}

//===----------------------------------------------------------------------===//
// ConcatOp
//===----------------------------------------------------------------------===//

LogicalResult ConcatOp::inferReturnTypes(
    MLIRContext *context, std::optional<Location> location,
    ConcatOp::Adaptor adaptor, SmallVectorImpl<Type> &inferredReturnTypes) {
  auto emitError = makeInferErrorEmitter<ConcatOp>(location);
  ValueRange inputs = adaptor.getInputs();
  if (inputs.empty())
    return emitError() << "requires at least one input";

  SmallVector<RankedTensorType> types;
  for (auto [i, input] : llvm::enumerate(inputs)) {
    RankedTensorType type =
        getStaticTensorType(input.getType(), "input #" + Twine(i), emitError);
    if (!type)
      return failure();
    types.push_back(type);
  }

  RankedTensorType first = types.front();
  int64_t rank = first.getRank();
  int64_t axis = adaptor.getAxis();
  if (axis < 0 || axis >= rank)
    return emitError() << "axis " << axis << " is out of range for rank "
                       << rank;

  SmallVector<int64_t> shape(first.getShape());
  for (auto [i, type] : llvm::enumerate(types)) {
    if (i == 0)
      continue;
    if (type.getRank() != rank)
      return emitError() << "input #" << i << " has rank " << type.getRank()
                         << " but input #0 has rank " << rank;
    if (type.getElementType() != first.getElementType())
      return emitError() << "input #" << i << " has element type "
                         << type.getElementType()
                         << " but input #0 has element type "
                         << first.getElementType();
    for (int64_t dim = 0; dim < rank; ++dim) {
      if (dim == axis)
        continue;
      if (type.getDimSize(dim) != first.getDimSize(dim))
        return emitError() << "input #" << i << " dim " << dim << " is "
                           << type.getDimSize(dim) << " but input #0 dim "
                           << dim << " is " << first.getDimSize(dim)
                           << "; only the concat axis " << axis
                           << " may differ";
    }
    shape[axis] += type.getDimSize(axis);
  }

  inferredReturnTypes.push_back(
      RankedTensorType::get(shape, first.getElementType()));
  return success();
}

OpFoldResult ConcatOp::fold(FoldAdaptor adaptor) {
  if (getInputs().size() == 1 && getInputs().front().getType() == getType())
    return getInputs().front();
  return {};
}

//===----------------------------------------------------------------------===//
// BroadcastToOp
//===----------------------------------------------------------------------===//

LogicalResult BroadcastToOp::verify() {
  auto inputType = llvm::cast<RankedTensorType>(getInput().getType());
  auto resultType = llvm::cast<RankedTensorType>(getType());
  if (inputType.getElementType() != resultType.getElementType())
    return emitOpError("result element type ")
           << resultType.getElementType() << " differs from input element type "
           << inputType.getElementType();
  int64_t inputRank = inputType.getRank();
  int64_t resultRank = resultType.getRank();
  if (inputRank > resultRank)
    return emitOpError("input rank ")
           << inputRank << " exceeds result rank " << resultRank
           << "; broadcasting can only add leading dims";
  // numpy rules: align the trailing dims; an input dim matches or is 1.
  int64_t offset = resultRank - inputRank;
  for (int64_t dim = 0; dim < inputRank; ++dim) {
    int64_t inputSize = inputType.getDimSize(dim);
    int64_t resultSize = resultType.getDimSize(dim + offset);
    if (inputSize != resultSize && inputSize != 1)
      return emitOpError("input dim ")
             << dim << " (size " << inputSize
             << ") cannot broadcast to result dim " << dim + offset << " (size "
             << resultSize << "): sizes must match or the input size must be 1";
  }
  return success();
}

OpFoldResult BroadcastToOp::fold(FoldAdaptor adaptor) {
  if (getInput().getType() == getType())
    return getInput();
  if (OpFoldResult splat = foldSplat(adaptor.getInput(), getType()))
    return splat;
  // Broadcasts compose: if x broadcasts to y's shape and y to ours, x
  // broadcasts to ours.
  if (auto producer = getInput().getDefiningOp<BroadcastToOp>()) {
    getInputMutable().assign(producer.getInput());
    return getResult();
  }
  return {};
}

//===----------------------------------------------------------------------===//
// BufferViewOp
//===----------------------------------------------------------------------===//

LogicalResult BufferViewOp::verify() {
  auto sourceType = llvm::cast<MemRefType>(getSource().getType());
  auto resultType = llvm::cast<MemRefType>(getType());
  for (auto [what, type] : {std::pair<StringRef, MemRefType>{"source", sourceType},
                            {"result", resultType}})
    if (!type.getLayout().isIdentity())
      return emitOpError(what) << " " << type
                               << " does not have the identity layout";
  if (sourceType.getElementType() != resultType.getElementType())
    return emitOpError("result element type ")
           << resultType.getElementType()
           << " differs from source element type "
           << sourceType.getElementType();
  Type element = sourceType.getElementType();
  if (!element.isIntOrFloat())
    return emitOpError("has elements of type ")
           << element << ", which have no size in bytes";
  int64_t elementBytes = (element.getIntOrFloatBitWidth() + 7) / 8;
  int64_t offset = getByteOffset();
  int64_t sourceBytes = sourceType.getNumElements() * elementBytes;
  int64_t resultBytes = resultType.getNumElements() * elementBytes;
  if (offset < 0 || offset % elementBytes != 0)
    return emitOpError("byte_offset ")
           << offset << " is not a non-negative multiple of the element size "
           << elementBytes;
  if (offset > sourceBytes - resultBytes)
    return emitOpError("views bytes [")
           << offset << ", " << offset + resultBytes
           << ") of a source of " << sourceBytes << " bytes";
  return success();
}
