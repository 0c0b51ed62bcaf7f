//===- KGraphClassify.cpp - op families for kernel formation --------------===//

#include "kgraph/Dialect/KGraph/IR/KGraphClassify.h"
#include "kgraph/Dialect/KGraph/IR/AccessMap.h"
#include "kgraph/Dialect/KGraph/IR/KGraphOps.h"

#include "llvm/ADT/StringSet.h"

using namespace mlir;

bool kgraph::isElementwiseOp(Operation *op) {
  static const llvm::StringSet<> kNames = {
      "kgraph.add",  "kgraph.sub",     "kgraph.mul",     "kgraph.div",
      "kgraph.max",  "kgraph.min",     "kgraph.pow",     "kgraph.neg",
      "kgraph.abs",  "kgraph.exp",     "kgraph.log",     "kgraph.sqrt",
      "kgraph.rsqrt", "kgraph.tanh",   "kgraph.sigmoid", "kgraph.relu",
      "kgraph.gelu", "kgraph.clamp",   "kgraph.cast",    "kgraph.compare",
      "kgraph.select"};
  return kNames.contains(op->getName().getStringRef());
}

bool kgraph::isKernelOp(Operation *op) {
  return llvm::isa<KGraphDialect>(op->getDialect()) &&
         !llvm::isa<FusedOp, YieldOp, BufferViewOp>(op);
}

bool kgraph::isDataMovementOp(Operation *op) {
  return llvm::isa<ReshapeOp, TransposeOp, SliceOp, ConcatOp, BroadcastToOp>(
      op);
}

std::optional<int64_t> kgraph::getViewByteOffset(Operation *op) {
  if (llvm::isa<ReshapeOp>(op))
    return 0;
  auto slice = llvm::dyn_cast<SliceOp>(op);
  if (!slice)
    return std::nullopt;
  auto inputType = llvm::cast<RankedTensorType>(slice.getInput().getType());
  auto resultType = llvm::cast<RankedTensorType>(slice.getType());
  AccessMap map =
      AccessMap::slice(inputType.getShape(), slice.getOffsets(),
                       slice.getSizes(), slice.getStrides());
  // One contiguous run of the input, starting on a 16-byte boundary (the
  // kernels' vector accesses assume their buffers are 16-byte aligned).
  if (map.getContiguousExtent() != resultType.getNumElements())
    return std::nullopt;
  int64_t elementBytes =
      (resultType.getElementType().getIntOrFloatBitWidth() + 7) / 8;
  int64_t bytes = map.getOffset() * elementBytes;
  if (bytes % kViewAlignment != 0)
    return std::nullopt;
  return bytes;
}

SmallVector<kgraph::ConcatSegment> kgraph::getConcatSegments(Operation *op) {
  SmallVector<ConcatSegment> segments;
  auto concat = llvm::dyn_cast<ConcatOp>(op);
  if (!concat)
    return segments;
  int64_t axis = concat.getAxis();
  int64_t offset = 0;
  for (Value input : concat.getInputs()) {
    int64_t size = llvm::cast<RankedTensorType>(input.getType()).getDimSize(axis);
    segments.push_back({input, offset, size});
    offset += size;
  }
  return segments;
}

std::optional<SmallVector<int64_t>>
kgraph::getConcatInputByteOffsets(Operation *op) {
  auto concat = llvm::dyn_cast<ConcatOp>(op);
  if (!concat)
    return std::nullopt;
  auto resultType = llvm::cast<RankedTensorType>(concat.getType());
  int64_t axis = concat.getAxis();
  for (int64_t d = 0; d < axis; ++d)
    if (resultType.getDimSize(d) != 1)
      return std::nullopt;
  int64_t elementBytes =
      (resultType.getElementType().getIntOrFloatBitWidth() + 7) / 8;
  // Every dim before the axis is 1: a segment's elements are the run from
  // its axis offset times the elements of one axis step.
  int64_t stepElements = 1;
  for (int64_t d = axis + 1, e = resultType.getRank(); d < e; ++d)
    stepElements *= resultType.getDimSize(d);
  SmallVector<int64_t> offsets;
  for (const ConcatSegment &segment : getConcatSegments(concat)) {
    int64_t offset = segment.offset * stepElements * elementBytes;
    if (offset % kViewAlignment != 0)
      return std::nullopt;
    offsets.push_back(offset);
  }
  return offsets;
}

bool kgraph::isElementwiseReadOp(Operation *op) {
  return isAccessMapOp(op) || llvm::isa<ConcatOp>(op) || isWinogradOp(op);
}

bool kgraph::isWinogradOp(Operation *op) {
  return llvm::isa<WinogradFilterOp, WinogradInputOp, WinogradOutputOp>(op);
}

bool kgraph::isViewOp(Operation *op) {
  return getViewByteOffset(op).has_value();
}

bool kgraph::isAccessMapOp(Operation *op) {
  return llvm::isa<TransposeOp, SliceOp, BroadcastToOp>(op);
}

int64_t kgraph::getWidestAccessBytes(Operation *op) {
  auto group = llvm::cast<FusedOp>(op);
  int64_t widest = 1;
  for (Type t : llvm::concat<const Type>(group.getInputs().getTypes(),
                                         group.getResultTypes()))
    if (auto shaped = llvm::dyn_cast<ShapedType>(t))
      widest = std::max<int64_t>(widest, shaped.getElementTypeBitWidth() / 8);
  return widest;
}

Operation *kgraph::getWinogradTileResult(Operation *op) {
  auto group = llvm::cast<FusedOp>(op);
  if (group.getNumResults() != 1)
    return nullptr;
  Operation *def = group.getYield().getValues().front().getDefiningOp();
  return llvm::isa_and_nonnull<WinogradInputOp, WinogradFilterOp>(def)
             ? def
             : nullptr;
}

int64_t kgraph::getElementwiseWorkElements(Operation *op) {
  auto group = llvm::cast<FusedOp>(op);
  if (group.getNumResults() == 0)
    return 0;
  auto type = llvm::cast<ShapedType>(group.getResultTypes().front());
  if (getWinogradTileResult(op))
    return type.getNumElements() / type.getDimSize(0);
  return type.getNumElements();
}

std::string kgraph::getGroupKindError(Operation *group, GroupKind kind) {
  auto fused = llvm::cast<FusedOp>(group);
  auto isAnchor = [&](Operation &op) {
    switch (kind) {
    case GroupKind::elementwise:
      return false;
    case GroupKind::gemm:
      return llvm::isa<MatmulOp, Conv2dOp>(op);
    case GroupKind::reduce:
      return llvm::isa<ReduceOp>(op);
    case GroupKind::stencil:
    case GroupKind::window:
      return llvm::isa<Conv2dOp, Pool2dOp>(op);
    case GroupKind::copy:
      return isDataMovementOp(&op);
    case GroupKind::transpose:
      return llvm::isa<TransposeOp>(op);
    }
    llvm_unreachable("unknown group kind");
  };
  int64_t others = 0;
  int64_t anchors = 0;
  for (Operation &op : fused.getBody().front().without_terminator()) {
    if (isAnchor(op)) {
      ++anchors;
      continue;
    }
    if ((kind == GroupKind::elementwise && isElementwiseReadOp(&op)) ||
        (kind == GroupKind::gemm && isAccessMapOp(&op)))
      continue;
    if (kind == GroupKind::transpose &&
        !op.hasTrait<mlir::OpTrait::ConstantLike>()) {
      ++others;
      continue;
    }
    if (!isElementwiseOp(&op) && !op.hasTrait<mlir::OpTrait::ConstantLike>())
      return ("holds '" + op.getName().getStringRef() + "', which " +
              stringifyGroupKind(kind) + " kernels cannot compute")
          .str();
  }
  switch (kind) {
  case GroupKind::elementwise:
    return "";
  case GroupKind::gemm:
    return anchors == 1
               ? ""
               : "needs exactly one kgraph.matmul or kgraph.conv2d, found " +
                     std::to_string(anchors);
  case GroupKind::reduce:
    return anchors ? "" : "has no kgraph.reduce";
  case GroupKind::stencil:
    return anchors ? "" : "has no kgraph.conv2d or kgraph.pool2d";
  case GroupKind::window:
    return anchors == 1 ? ""
                        : "needs exactly one kgraph.pool2d or kgraph.conv2d, "
                          "found " +
                              std::to_string(anchors);
  case GroupKind::copy:
    return anchors ? "" : "has no data-movement op";
  case GroupKind::transpose:
    return anchors == 1 && others == 0
               ? ""
               : "needs exactly one kgraph.transpose and nothing else";
  }
  llvm_unreachable("unknown group kind");
}
