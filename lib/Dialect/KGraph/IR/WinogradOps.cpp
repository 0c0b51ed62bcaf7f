//===- WinogradOps.cpp - Winograd transform matrices and verifiers --------===//

#include "kgraph/Dialect/KGraph/IR/AccessMap.h"
#include "kgraph/Dialect/KGraph/IR/KGraphOps.h"
#include "kgraph/Dialect/KGraph/IR/Winograd.h"

#include "mlir/IR/TypeUtilities.h"
#include "llvm/ADT/STLExtras.h"

using namespace mlir;
using namespace kgraph;

// F(2x2, 3x3): points 0, 1, -1, inf.
static const double kBT2[] = {1, 0,  -1, 0, //
                              0, 1,  1,  0, //
                              0, -1, 1,  0, //
                              0, 1,  0,  -1};
static const double kG2[] = {1,   0,    0,   //
                             0.5, 0.5,  0.5, //
                             0.5, -0.5, 0.5, //
                             0,   0,    1};
static const double kAT2[] = {1, 1, 1,  0, //
                              0, 1, -1, -1};

// F(4x4, 3x3): points 0, 1, -1, 2, -2, inf.
static const double kBT4[] = {4, 0,  -5, 0,  1, 0, //
                              0, -4, -4, 1,  1, 0, //
                              0, 4,  -4, -1, 1, 0, //
                              0, -2, -1, 2,  1, 0, //
                              0, 2,  -1, -2, 1, 0, //
                              0, 4,  0,  -5, 0, 1};
static const double kG4[] = {1.0 / 4,  0,         0,        //
                             -1.0 / 6, -1.0 / 6,  -1.0 / 6, //
                             -1.0 / 6, 1.0 / 6,   -1.0 / 6, //
                             1.0 / 24, 1.0 / 12,  1.0 / 6,  //
                             1.0 / 24, -1.0 / 12, 1.0 / 6,  //
                             0,        0,         1};
static const double kAT4[] = {1, 1, 1,  1, 1,  0, //
                              0, 1, -1, 2, -2, 0, //
                              0, 1, 1,  4, 4,  0, //
                              0, 1, -1, 8, -8, 1};

const WinogradTransform *kgraph::lookupWinogradTransform(int64_t m) {
  static const WinogradTransform kF2{2, 4, kBT2, kG2, kAT2};
  static const WinogradTransform kF4{4, 6, kBT4, kG4, kAT4};
  if (m == 2)
    return &kF2;
  if (m == 4)
    return &kF4;
  return nullptr;
}

/// The transform named by `output_tile`, or an error.
static const WinogradTransform *getTransform(Operation *op, int64_t m) {
  const WinogradTransform *t = lookupWinogradTransform(m);
  if (!t)
    op->emitOpError("output_tile must be 2 or 4, got ") << m;
  return t;
}

/// A transform keeps its operand's element type.
static LogicalResult checkElementType(Operation *op) {
  Type result = getElementTypeOrSelf(op->getResult(0).getType());
  Type input = getElementTypeOrSelf(op->getOperand(0).getType());
  if (result != input)
    return op->emitOpError("result element type ")
           << result << " differs from the operand's " << input;
  return success();
}

static LogicalResult checkResultShape(Operation *op,
                                      ArrayRef<int64_t> expected) {
  if (failed(checkElementType(op)))
    return failure();
  auto result = llvm::cast<RankedTensorType>(op->getResult(0).getType());
  if (result.getShape() != expected) {
    auto diag = op->emitOpError("result shape must be [");
    llvm::interleave(expected, diag, ", ");
    return diag << "], got " << result;
  }
  return success();
}

LogicalResult WinogradFilterOp::verify() {
  const WinogradTransform *t = getTransform(*this, getOutputTile());
  if (!t)
    return failure();
  ArrayRef<int64_t> shape = getFilter().getType().getShape();
  if (shape.size() != 4)
    return emitOpError("filter must have rank 4, got rank ") << shape.size();
  bool nhwc = getLayout() == Layout::nhwc;
  int64_t kh = nhwc ? shape[1] : shape[2], kw = nhwc ? shape[2] : shape[3];
  if (kh != 3 || kw != 3)
    return emitOpError("needs a 3x3 filter, got ") << kh << "x" << kw;
  int64_t c = nhwc ? shape[3] : shape[1];
  return checkResultShape(*this, {t->alpha * t->alpha, shape[0], c});
}

LogicalResult WinogradInputOp::verify() {
  const WinogradTransform *t = getTransform(*this, getOutputTile());
  if (!t)
    return failure();
  ArrayRef<int64_t> shape = getInput().getType().getShape();
  if (shape.size() != 4)
    return emitOpError("input must have rank 4, got rank ") << shape.size();
  ArrayRef<int64_t> pad = getPadding();
  if (pad.size() != 4)
    return emitOpError("padding must have 4 values, got ") << pad.size();
  if (llvm::any_of(pad, [](int64_t p) { return p < 0; }))
    return emitOpError("padding must be non-negative");
  ActivationAxes axes = getActivationAxes(getLayout());
  int64_t oh = shape[axes.h] + pad[0] + pad[1] - 2;
  int64_t ow = shape[axes.w] + pad[2] + pad[3] - 2;
  if (oh <= 0 || ow <= 0)
    return emitOpError("the 3x3 conv's output is empty: ")
           << oh << "x" << ow << " pixels";
  int64_t tiles =
      shape[axes.n] * getWinogradTiles(oh, t->m) * getWinogradTiles(ow, t->m);
  int64_t points = t->alpha * t->alpha, c = shape[axes.c];
  if (getLayout() == Layout::nhwc)
    return checkResultShape(*this, {points, tiles, c});
  return checkResultShape(*this, {points, c, tiles});
}

LogicalResult WinogradOutputOp::verify() {
  const WinogradTransform *t = getTransform(*this, getOutputTile());
  if (!t)
    return failure();
  ArrayRef<int64_t> in = getInput().getType().getShape();
  ArrayRef<int64_t> out = getResult().getType().getShape();
  if (in.size() != 3)
    return emitOpError("input must have rank 3, got rank ") << in.size();
  if (out.size() != 4)
    return emitOpError("result must have rank 4, got rank ") << out.size();
  ActivationAxes axes = getActivationAxes(getLayout());
  int64_t tiles = out[axes.n] * getWinogradTiles(out[axes.h], t->m) *
                  getWinogradTiles(out[axes.w], t->m);
  int64_t points = t->alpha * t->alpha, f = out[axes.c];
  SmallVector<int64_t> expected = getLayout() == Layout::nhwc
                                      ? SmallVector<int64_t>{points, tiles, f}
                                      : SmallVector<int64_t>{points, f, tiles};
  if (failed(checkElementType(*this)))
    return failure();
  auto result = getResult().getType();
  if (in != ArrayRef<int64_t>(expected)) {
    auto diag = emitOpError("input shape must be [");
    llvm::interleave(expected, diag, ", ");
    return diag << "] for the result " << result << ", got "
                << getInput().getType();
  }
  return success();
}
