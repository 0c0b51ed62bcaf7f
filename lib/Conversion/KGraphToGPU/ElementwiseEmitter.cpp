//===- ElementwiseEmitter.cpp - elementwise groups as grid-stride kernels -===//
//
// A kernel computes `vector_width` (W) consecutive elements of the flattened
// output per step (a whole-tile Winograd input or filter transform: all
// alpha^2 points of W consecutive elements of one point's slice). The values of
// the group are evaluated on the W lanes by LaneEvaluator (LaneEvaluator.h:
// contiguous, uniform and gathered accesses under numpy broadcasting), per lane
// on scalars (f32 for floats, i32 for ints, i1 for booleans) and rounded to
// each op's declared element type, so a group computes exactly what its ops
// compute one at a time.
//
//===----------------------------------------------------------------------===//

#include "LaneEvaluator.h"
#include "ScalarOps.h"
#include "kgraph/Conversion/KGraphToGPU/KGraphToGPU.h"
#include "kgraph/Dialect/KGraph/IR/KGraphClassify.h"
#include "kgraph/Dialect/KGraph/Transforms/FusionRules.h"
#include "kgraph/Target/ElementTypes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/IR/Builders.h"
#include "llvm/ADT/DenseMap.h"

using namespace mlir;
using namespace kgraph;
using namespace kgraph::detail;

Type kgraph::getStorageElementType(Type elementType) {
  // A type narrower than its storage (i1) is stored as an integer of the
  // element-type table's storage bytes.
  const ElementTypeInfo *info = lookupElementType(elementType);
  if (info && info->bitWidth != 8 * info->storageBytes)
    return IntegerType::get(elementType.getContext(), 8 * info->storageBytes);
  return elementType;
}

StringAttr kgraph::getLogicalDtypeAttr(Type elementType) {
  if (getStorageElementType(elementType) == elementType)
    return {};
  return StringAttr::get(elementType.getContext(),
                         lookupElementType(elementType)->planName);
}

MemRefType kgraph::getStorageMemRefType(RankedTensorType type) {
  return MemRefType::get(type.getShape(),
                         getStorageElementType(type.getElementType()));
}

LogicalResult kgraph::checkElementwiseGroup(FusedOp group) {
  if (group.getNumResults() == 0)
    return group.emitOpError("has no results to compute");
  Type first = group.getResultTypes().front();
  for (Type t : group.getResultTypes())
    if (llvm::cast<ShapedType>(t).getShape() !=
        llvm::cast<ShapedType>(first).getShape())
      return group.emitOpError("elementwise group results must share one "
                               "shape, got ")
             << first << " and " << t;
  for (Operation &op : group.getBody().front().without_terminator()) {
    if (llvm::isa<arith::ConstantOp>(op)) {
      if (failed(verifyKernelConstant(&op)))
        return failure();
      continue;
    }
    // Transposes, broadcasts and slices are read through their access maps,
    // a concat through one per input (LaneEvaluator::evaluateConcat).
    if (isAccessMapOp(&op)) {
      if (failed(AccessMap::forDataMovementOp(&op)))
        return op.emitOpError("has no static access map");
      continue;
    }
    if (llvm::isa<ConcatOp>(op) || isWinogradOp(&op))
      continue;
    if (!isElementwiseOp(&op))
      return op.emitOpError("is not elementwise and cannot be lowered in an "
                            "elementwise kernel");
  }
  return success();
}

LogicalResult kgraph::emitElementwiseKernel(FusedOp group,
                                            ElementwiseConfigAttr config,
                                            gpu::GPUFuncOp kernel) {
  Location loc = group.getLoc();
  OpBuilder b(kernel.getContext());
  Block &entry = kernel.getBody().front();
  b.setInsertionPointToStart(&entry);

  // Flat 1-D views of every buffer.
  DenseMap<Value, Value> flatArgs;
  SmallVector<Value> flatOutputs;
  flattenGroupBuffers(b, loc, group, entry, flatArgs, flatOutputs);

  // A whole-tile Winograd transform steps over one point's slice.
  Operation *tile = getWinogradTileResult(group);
  int64_t numElements = getElementwiseWorkElements(group);
  int64_t width = config.getVectorWidth();
  int64_t blockSize = config.getBlockSize();
  int64_t gridSize = config.getGridSize();
  auto yield = group.getYield();

  Value tid = gpu::ThreadIdOp::create(b, loc, gpu::Dimension::x);
  Value bid = gpu::BlockIdOp::create(b, loc, gpu::Dimension::x);
  Value global = arith::AddIOp::create(
      b, loc,
      arith::MulIOp::create(b, loc, bid,
                            arith::ConstantIndexOp::create(b, loc, blockSize)),
      tid);
  Value stride = arith::ConstantIndexOp::create(b, loc, blockSize * gridSize);

  // Emits steps computing `w` elements from each flat output index in
  // `bases`: every load and computation first, then the stores, so the loads
  // of all steps are in flight together (stores may alias inputs, so loads
  // cannot be moved above them later).
  auto emitSteps = [&](OpBuilder &nb, ArrayRef<Value> bases,
                       int64_t w) -> LogicalResult {
    LaneEvaluator emitter(nb, loc, w, flatArgs);
    if (tile) {
      Type elementType = getElementType(group.getResult(0));
      SmallVector<std::pair<Value, SmallVector<Value>>> points;
      for (Value base : bases) {
        FailureOr<SmallVector<Value>> lanes =
            emitter.evaluateWinogradTile(tile, base);
        if (failed(lanes))
          return failure();
        for (int64_t p = 0, e = int64_t(lanes->size()) / w; p < e; ++p) {
          Value at = arith::AddIOp::create(
              nb, loc, base,
              arith::ConstantIndexOp::create(nb, loc, p * numElements));
          points.push_back(
              {at, SmallVector<Value>(lanes->begin() + p * w,
                                      lanes->begin() + (p + 1) * w)});
        }
      }
      for (auto &[at, lanes] : points)
        emitter.store(lanes, elementType, flatOutputs[0], at);
      return success();
    }
    SmallVector<std::pair<unsigned, SmallVector<Value>>> pending;
    for (Value base : bases) {
      Access access{AccessKind::Contiguous, {base}};
      for (auto [i, value] : llvm::enumerate(yield.getValues())) {
        FailureOr<SmallVector<Value>> lanes = emitter.evaluate(value, access);
        if (failed(lanes))
          return failure();
        pending.emplace_back(i, *lanes);
      }
    }
    unsigned numResults = yield.getValues().size();
    for (auto [k, entry] : llvm::enumerate(pending))
      emitter.store(entry.second, getElementType(group.getResult(entry.first)),
                    flatOutputs[entry.first], bases[k / numResults]);
    return success();
  };
  auto c = [&](OpBuilder &nb, int64_t v) -> Value {
    return arith::ConstantIndexOp::create(nb, loc, v);
  };

  int64_t numVectors = numElements / width;
  int64_t unroll = config.getUnroll();
  int64_t strideValue = blockSize * gridSize;
  LogicalResult status = success();
  Value rest = global; // where the one-vector-per-trip loop starts
  if (unroll > 1 && numVectors > (unroll - 1) * strideValue) {
    // Trips of `unroll` vectors while the last of them is in range:
    // iv + (unroll - 1) * stride < numVectors.
    int64_t mainBound = numVectors - (unroll - 1) * strideValue;
    Value step = c(b, strideValue * unroll);
    auto loop = scf::ForOp::create(b, loc, global, c(b, mainBound), step);
    OpBuilder nb = OpBuilder::atBlockBegin(loop.getBody());
    SmallVector<Value> bases;
    for (int64_t u = 0; u < unroll; ++u) {
      Value iv = loop.getInductionVar();
      if (u > 0)
        iv = arith::AddIOp::create(nb, loc, iv, c(nb, u * strideValue));
      bases.push_back(arith::MulIOp::create(nb, loc, iv, c(nb, width)));
    }
    status = emitSteps(nb, bases, width);
    // rest = global + ceil(max(mainBound - global, 0) / step) * step
    Value inMain = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult,
                                         global, c(b, mainBound));
    Value toMain = arith::SubIOp::create(b, loc, c(b, mainBound), global);
    Value span = arith::SelectOp::create(b, loc, inMain, toMain, c(b, 0));
    Value trips = arith::CeilDivUIOp::create(b, loc, span, step);
    rest = arith::AddIOp::create(b, loc, global,
                                 arith::MulIOp::create(b, loc, trips, step));
  }
  if (succeeded(status) && numVectors > 0) {
    auto loop = scf::ForOp::create(b, loc, rest, c(b, numVectors), stride);
    OpBuilder nb = OpBuilder::atBlockBegin(loop.getBody());
    Value base =
        arith::MulIOp::create(nb, loc, loop.getInductionVar(), c(nb, width));
    status = emitSteps(nb, {base}, width);
  }
  if (succeeded(status) && numElements % width != 0) {
    Value lb = arith::AddIOp::create(
        b, loc, global,
        arith::ConstantIndexOp::create(b, loc, numVectors * width));
    Value ub = arith::ConstantIndexOp::create(b, loc, numElements);
    auto loop = scf::ForOp::create(b, loc, lb, ub, stride);
    OpBuilder nb = OpBuilder::atBlockBegin(loop.getBody());
    status = emitSteps(nb, {loop.getInductionVar()}, 1);
  }
  gpu::ReturnOp::create(b, loc);
  return status;
}
