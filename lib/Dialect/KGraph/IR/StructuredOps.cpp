//===- StructuredOps.cpp - matmul, conv2d, pool2d, reduce -----------------===//
//
// Verifiers, result type inference and folds of the structured ops.
//
// pool2d and reduce infer their result type. inferReturnTypes also runs
// while the custom form is parsed, before any verifier, so it checks the
// operand type and every attribute itself before computing a shape, and
// reports errors in the same words as a verifier would.
//
//===----------------------------------------------------------------------===//

#include "kgraph/Dialect/KGraph/IR/AccessMap.h"
#include "kgraph/Dialect/KGraph/IR/KGraphOps.h"
#include "OpHelpers.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/CheckedArithmetic.h"
#include "llvm/Support/MathExtras.h"
#include "llvm/Support/raw_ostream.h"

using namespace mlir;
using namespace kgraph;
using namespace kgraph::detail;

//===----------------------------------------------------------------------===//
// Shared helpers
//===----------------------------------------------------------------------===//

/// Checks the length of an integer list attribute and the sign of its
/// values: positive, or non-negative when `allowZero` is set.
static LogicalResult
verifyIntList(ArrayRef<int64_t> values, StringRef name, size_t expectedSize,
              bool allowZero,
              llvm::function_ref<InFlightDiagnostic()> emitError) {
  if (values.size() != expectedSize)
    return emitError() << name << " must have " << expectedSize
                       << " values, got " << values.size();
  for (int64_t value : values) {
    if (allowZero ? value < 0 : value <= 0)
      return emitError() << name << " must be "
                         << (allowZero ? "non-negative" : "positive")
                         << ", got " << formatList(values);
  }
  return success();
}

/// Checks that operands of element type `operand` may accumulate into
/// `result` (f32 -> f32, f16 -> f16/f32, bf16 -> bf16/f32, i8 -> i32), and
/// that tf32 precision is only asked of f32 operands.
static LogicalResult verifyAccumulation(Operation *op, Type operand,
                                        Type result,
                                        std::optional<Precision> precision) {
  bool allowed = false;
  if (operand.isF32())
    allowed = result.isF32();
  else if (operand.isF16())
    allowed = result.isF16() || result.isF32();
  else if (operand.isBF16())
    allowed = result.isBF16() || result.isF32();
  else if (operand.isInteger(8))
    allowed = result.isInteger(32);
  if (!allowed)
    return op->emitOpError()
           << operand << " operands cannot accumulate into " << result;
  if (precision == Precision::tf32 && !operand.isF32())
    return op->emitOpError("precision tf32 requires f32 operands, got ")
           << operand;
  return success();
}

namespace {
/// One spatial dim of a windowed op (conv2d, pool2d): the input size, the
/// padding before and after, the window (kernel) size, stride and dilation,
/// and names for diagnostics ("height", "H", "top", "bottom").
struct WindowDim {
  StringRef name, letter, loName, hiName;
  int64_t size, padLo, padHi, kernel, stride, dilation;
};
} // namespace

/// Returns the output size of a window sliding along `dim`,
/// floor((size + padLo + padHi - dilation * (kernel - 1) - 1) / stride) + 1,
/// or emits an error when it is not positive or does not fit in int64.
/// Attributes are unbounded, so the arithmetic is checked.
static FailureOr<int64_t>
computeWindowOutputSize(const WindowDim &dim, bool showDilation,
                        llvm::function_ref<InFlightDiagnostic()> emitError) {
  auto printFormula = [&](InFlightDiagnostic &diag) {
    diag << "floor((" << dim.letter << " " << dim.size << " + padding "
         << dim.padLo << " + " << dim.padHi << " - ";
    if (showDilation)
      diag << "dilation " << dim.dilation << " * (K" << dim.letter << " "
           << dim.kernel << " - 1) - 1";
    else
      diag << "K" << dim.letter << " " << dim.kernel;
    diag << ") / stride " << dim.stride << ") + 1";
  };
  std::optional<int64_t> span =
      llvm::checkedMulAdd<int64_t>(dim.dilation, dim.kernel - 1, 1);
  std::optional<int64_t> padded = llvm::checkedAdd(dim.size, dim.padLo);
  if (padded)
    padded = llvm::checkedAdd(*padded, dim.padHi);
  std::optional<int64_t> numerator;
  if (span && padded)
    numerator = llvm::checkedSub(*padded, *span);
  if (!numerator) {
    InFlightDiagnostic diag = emitError();
    diag << "output " << dim.name << " is out of int64 range: ";
    printFormula(diag);
    return failure();
  }
  int64_t size = llvm::divideFloorSigned(*numerator, dim.stride) + 1;
  if (size <= 0) {
    InFlightDiagnostic diag = emitError();
    diag << "output " << dim.name << " is non-positive: ";
    printFormula(diag);
    diag << " = " << size;
    return failure();
  }
  return size;
}

//===----------------------------------------------------------------------===//
// MatmulOp
//===----------------------------------------------------------------------===//

LogicalResult MatmulOp::verify() {
  auto lhsType = llvm::cast<RankedTensorType>(getLhs().getType());
  auto rhsType = llvm::cast<RankedTensorType>(getRhs().getType());
  auto resultType = llvm::cast<RankedTensorType>(getResult().getType());
  int64_t rank = lhsType.getRank();
  if (rank != 2 && rank != 3)
    return emitOpError("lhs must have rank 2 or 3, got rank ") << rank;
  if (rhsType.getRank() != rank)
    return emitOpError("lhs has rank ")
           << rank << " but rhs has rank " << rhsType.getRank();
  if (lhsType.getElementType() != rhsType.getElementType())
    return emitOpError("lhs element type ")
           << lhsType.getElementType() << " differs from rhs element type "
           << rhsType.getElementType();

  ArrayRef<int64_t> lhs = lhsType.getShape();
  ArrayRef<int64_t> rhs = rhsType.getShape();
  if (rank == 3 && lhs[0] != rhs[0])
    return emitOpError("batch dimensions differ: lhs dim 0 is ")
           << lhs[0] << ", rhs dim 0 is " << rhs[0];

  // Rows/columns are the last two dims, swapped for a transposed operand.
  int64_t row = rank - 2, col = rank - 1;
  int64_t lhsM = getTransposeA() ? col : row;
  int64_t lhsK = getTransposeA() ? row : col;
  int64_t rhsK = getTransposeB() ? col : row;
  int64_t rhsN = getTransposeB() ? row : col;
  if (lhs[lhsK] != rhs[rhsK])
    return emitOpError("contracting dimensions differ: lhs dim ")
           << lhsK << " is " << lhs[lhsK] << ", rhs dim " << rhsK << " is "
           << rhs[rhsK];

  SmallVector<int64_t> expected;
  if (rank == 3)
    expected.push_back(lhs[0]);
  expected.push_back(lhs[lhsM]);
  expected.push_back(rhs[rhsN]);
  if (resultType.getShape() != ArrayRef<int64_t>(expected))
    return emitOpError("result shape ")
           << formatList(resultType.getShape()) << " does not match "
           << formatList(expected) << " computed from the operands";

  return verifyAccumulation(*this, lhsType.getElementType(),
                            resultType.getElementType(), getPrecision());
}

//===----------------------------------------------------------------------===//
// Conv2dOp
//===----------------------------------------------------------------------===//

LogicalResult Conv2dOp::verify() {
  auto inputType = llvm::cast<RankedTensorType>(getInput().getType());
  auto filterType = llvm::cast<RankedTensorType>(getFilter().getType());
  auto resultType = llvm::cast<RankedTensorType>(getResult().getType());
  if (inputType.getRank() != 4)
    return emitOpError("input must have rank 4, got rank ")
           << inputType.getRank();
  if (filterType.getRank() != 4)
    return emitOpError("filter must have rank 4, got rank ")
           << filterType.getRank();
  if (inputType.getElementType() != filterType.getElementType())
    return emitOpError("input element type ")
           << inputType.getElementType() << " differs from filter element type "
           << filterType.getElementType();

  auto emitError = [&]() { return emitOpError(); };
  ArrayRef<int64_t> strides = getStrides();
  ArrayRef<int64_t> padding = getPadding();
  ArrayRef<int64_t> dilations = getDilations();
  if (failed(verifyIntList(strides, "strides", 2, /*allowZero=*/false,
                           emitError)) ||
      failed(verifyIntList(padding, "padding", 4, /*allowZero=*/true,
                           emitError)) ||
      failed(verifyIntList(dilations, "dilations", 2, /*allowZero=*/false,
                           emitError)))
    return failure();
  int64_t groups = getGroups();
  if (groups <= 0)
    return emitOpError("groups must be positive, got ") << groups;

  bool nhwc = getLayout() == Layout::nhwc;
  ActivationAxes dims = getActivationAxes(getLayout());
  ArrayRef<int64_t> input = inputType.getShape();
  ArrayRef<int64_t> filter = filterType.getShape();
  int64_t channels = input[dims.c];
  int64_t filters = filter[0];
  // The filter is [F, C/groups, KH, KW] for nchw, [F, KH, KW, C/groups] for
  // nhwc.
  int64_t filterChannels = nhwc ? filter[3] : filter[1];
  int64_t kernelH = nhwc ? filter[1] : filter[2];
  int64_t kernelW = nhwc ? filter[2] : filter[3];

  if (channels % groups != 0)
    return emitOpError("groups ") << groups << " does not divide the "
                                  << channels << " input channels";
  if (filters % groups != 0)
    return emitOpError("groups ") << groups << " does not divide the "
                                  << filters << " output channels (filters)";
  if (filterChannels != channels / groups)
    return emitOpError("filter has ")
           << filterChannels << " channels per group but the input has "
           << channels << " channels in " << groups << " groups (expected "
           << channels / groups << ")";
  if (kernelH <= 0 || kernelW <= 0)
    return emitOpError("filter kernel must be non-empty, got ")
           << kernelH << "x" << kernelW;

  WindowDim spatial[2] = {
      {"height", "H", "top", "bottom", input[dims.h], padding[0],
       padding[1], kernelH, strides[0], dilations[0]},
      {"width", "W", "left", "right", input[dims.w], padding[2], padding[3],
       kernelW, strides[1], dilations[1]}};
  int64_t outSizes[2];
  for (auto [i, dim] : llvm::enumerate(spatial)) {
    FailureOr<int64_t> size =
        computeWindowOutputSize(dim, /*showDilation=*/true, emitError);
    if (failed(size))
      return failure();
    outSizes[i] = *size;
  }

  SmallVector<int64_t> expected =
      nhwc ? SmallVector<int64_t>{input[0], outSizes[0], outSizes[1], filters}
           : SmallVector<int64_t>{input[0], filters, outSizes[0], outSizes[1]};
  if (resultType.getShape() != ArrayRef<int64_t>(expected))
    return emitOpError("result shape ")
           << formatList(resultType.getShape()) << " does not match "
           << formatList(expected) << " computed from the operands";

  return verifyAccumulation(*this, inputType.getElementType(),
                            resultType.getElementType(), getPrecision());
}

//===----------------------------------------------------------------------===//
// Pool2dOp
//===----------------------------------------------------------------------===//

LogicalResult Pool2dOp::inferReturnTypes(
    MLIRContext *context, std::optional<Location> location,
    Pool2dOp::Adaptor adaptor, SmallVectorImpl<Type> &inferredReturnTypes) {
  auto emitError = makeInferErrorEmitter<Pool2dOp>(location);
  RankedTensorType inputType =
      getStaticTensorType(adaptor.getInput().getType(), "input", emitError);
  if (!inputType)
    return failure();
  if (inputType.getRank() != 4)
    return emitError() << "input must have rank 4, got rank "
                       << inputType.getRank();

  // Attributes left out of the custom form are not yet set to their defaults
  // while it is parsed, and the adaptor does not fill them in.
  static constexpr int64_t kDefaultStrides[] = {1, 1};
  static constexpr int64_t kDefaultPadding[] = {0, 0, 0, 0};
  ArrayRef<int64_t> kernel = adaptor.getKernel();
  ArrayRef<int64_t> strides = adaptor.getStridesAttr()
                                  ? adaptor.getStrides()
                                  : ArrayRef<int64_t>(kDefaultStrides);
  ArrayRef<int64_t> padding = adaptor.getPaddingAttr()
                                  ? adaptor.getPadding()
                                  : ArrayRef<int64_t>(kDefaultPadding);
  Layout layout = adaptor.getLayoutAttr() ? adaptor.getLayout() : Layout::nchw;
  if (failed(
          verifyIntList(kernel, "kernel", 2, /*allowZero=*/false, emitError)) ||
      failed(verifyIntList(strides, "strides", 2, /*allowZero=*/false,
                           emitError)) ||
      failed(
          verifyIntList(padding, "padding", 4, /*allowZero=*/true, emitError)))
    return failure();

  Type elementType = inputType.getElementType();
  if (adaptor.getKind() == PoolKind::avg && !llvm::isa<FloatType>(elementType))
    return emitError() << "avg pooling requires a float element type, got "
                       << elementType;

  ActivationAxes dims = getActivationAxes(layout);
  ArrayRef<int64_t> input = inputType.getShape();
  WindowDim spatial[2] = {{"height", "H", "top", "bottom", input[dims.h],
                           padding[0], padding[1], kernel[0], strides[0],
                           /*dilation=*/1},
                          {"width", "W", "left", "right", input[dims.w],
                           padding[2], padding[3], kernel[1], strides[1],
                           /*dilation=*/1}};
  int64_t outSizes[2];
  for (auto [i, dim] : llvm::enumerate(spatial)) {
    // A window wholly inside the padding would have no element to reduce.
    for (auto [side, pad] :
         {std::pair(dim.loName, dim.padLo), std::pair(dim.hiName, dim.padHi)}) {
      if (pad >= dim.kernel)
        return emitError() << "padding " << pad << " on the " << side
                           << " must be smaller than the kernel " << dim.name
                           << " " << dim.kernel;
    }
    FailureOr<int64_t> size =
        computeWindowOutputSize(dim, /*showDilation=*/false, emitError);
    if (failed(size))
      return failure();
    outSizes[i] = *size;
  }

  SmallVector<int64_t> shape(input);
  shape[dims.h] = outSizes[0];
  shape[dims.w] = outSizes[1];
  inferredReturnTypes.push_back(RankedTensorType::get(shape, elementType));
  return success();
}

//===----------------------------------------------------------------------===//
// ReduceOp
//===----------------------------------------------------------------------===//

LogicalResult ReduceOp::inferReturnTypes(
    MLIRContext *context, std::optional<Location> location,
    ReduceOp::Adaptor adaptor, SmallVectorImpl<Type> &inferredReturnTypes) {
  auto emitError = makeInferErrorEmitter<ReduceOp>(location);
  RankedTensorType inputType =
      getStaticTensorType(adaptor.getInput().getType(), "input", emitError);
  if (!inputType)
    return failure();

  int64_t rank = inputType.getRank();
  SmallVector<bool> reduced(rank, false);
  for (int64_t axis : adaptor.getAxes()) {
    if (axis < 0 || axis >= rank)
      return emitError() << "axis " << axis << " is out of range for rank "
                         << rank;
    if (reduced[axis])
      return emitError() << "axis " << axis << " is repeated";
    reduced[axis] = true;
  }

  Type elementType = inputType.getElementType();
  if (adaptor.getKind() == ReduceKind::mean &&
      !llvm::isa<FloatType>(elementType))
    return emitError() << "mean reduction requires a float element type, got "
                       << elementType;

  SmallVector<int64_t> shape;
  for (auto [dim, size] : llvm::enumerate(inputType.getShape())) {
    if (!reduced[dim])
      shape.push_back(size);
    else if (adaptor.getKeepDims())
      shape.push_back(1);
  }
  inferredReturnTypes.push_back(RankedTensorType::get(shape, elementType));
  return success();
}

OpFoldResult ReduceOp::fold(FoldAdaptor adaptor) {
  // Reducing over no axis is the identity.
  if (getAxes().empty() && getInput().getType() == getType())
    return getInput();
  return {};
}
