//===- ReduceTiling.cpp - mapping of reduction kernels --------------------===//

#include "kgraph/Dialect/KGraph/Transforms/ReduceTiling.h"
#include "kgraph/Dialect/KGraph/IR/KGraphClassify.h"
#include "kgraph/Dialect/KGraph/Transforms/FusionRules.h"
#include "kgraph/Target/SMTargets.h"

#include "mlir/Dialect/Arith/IR/Arith.h"

#include "llvm/Support/MathExtras.h"

#include <cmath>

using namespace mlir;
using namespace kgraph;

FailureOr<ReduceLayout> kgraph::getReduceLayout(ReduceOp op) {
  auto type = llvm::cast<RankedTensorType>(op.getInput().getType());
  ArrayRef<int64_t> shape = type.getShape();
  if (type.getNumElements() == 0)
    return op.emitOpError("reduces an empty tensor ") << type;
  SmallVector<bool> reduced(shape.size(), false);
  for (int64_t axis : op.getAxes())
    if (axis >= 0 && axis < int64_t(shape.size()))
      reduced[axis] = true;

  ReduceLayout layout;
  int64_t stride = 1;
  // Innermost first, so strides accumulate; runs are reversed at the end.
  std::optional<bool> lastKind;
  for (int64_t d = shape.size() - 1; d >= 0; --d) {
    int64_t size = shape[d];
    if (size != 1) {
      auto &runs = reduced[d] ? layout.reduced : layout.kept;
      if (lastKind == reduced[d])
        runs.back().size *= size;
      else
        runs.push_back({size, stride});
      lastKind = reduced[d];
      (reduced[d] ? layout.rowSize : layout.numOutputs) *= size;
    }
    stride *= size;
  }
  std::reverse(layout.kept.begin(), layout.kept.end());
  std::reverse(layout.reduced.begin(), layout.reduced.end());
  return layout;
}

ReduceOp kgraph::getSoleReduceOp(FusedOp group) {
  ReduceOp found;
  for (Operation &op : group.getBody().front().without_terminator()) {
    if (auto reduce = llvm::dyn_cast<ReduceOp>(op)) {
      if (found)
        return nullptr;
      found = reduce;
    }
  }
  return found;
}

LogicalResult kgraph::verifyReduceGroup(FusedOp group) {
  ReduceOp reduce;
  for (Operation &op : group.getBody().front().without_terminator()) {
    if (auto r = llvm::dyn_cast<ReduceOp>(op)) {
      if (reduce)
        return r.emitOpError("is a second kgraph.reduce in one group; a "
                             "reduction group has exactly one");
      reduce = r;
      continue;
    }
    if (llvm::isa<arith::ConstantOp>(op)) {
      if (failed(verifyKernelConstant(&op)))
        return failure();
      continue;
    }
    if (!isElementwiseOp(&op))
      return op.emitOpError("cannot be part of a reduction group: only "
                            "elementwise ops and splat constants can join a "
                            "kgraph.reduce");
  }
  if (!reduce)
    return group.emitOpError("has no kgraph.reduce");
  if (group.getNumResults() != 1)
    return group.emitOpError("reduction group must yield exactly one value, "
                             "got ")
           << group.getNumResults();

  // Consumers: everything downstream of the reduce keeps its result shape,
  // so each output element is computed by the thread that reduced it.
  ArrayRef<int64_t> outShape = reduce.getType().getShape();
  llvm::SmallPtrSet<Operation *, 8> downstream;
  downstream.insert(reduce);
  for (Operation &op : group.getBody().front().without_terminator()) {
    if (&op == reduce.getOperation() ||
        llvm::none_of(op.getOperands(), [&](Value v) {
          return downstream.contains(v.getDefiningOp());
        }))
      continue;
    auto type = llvm::cast<ShapedType>(op.getResult(0).getType());
    if (type.getShape() != outShape)
      return op.emitOpError("uses the kgraph.reduce result but has shape ")
             << type << "; consumers of a reduction must keep the reduce "
                        "result shape "
             << reduce.getType();
    downstream.insert(&op);
  }
  Value yielded = group.getYield().getValues().front();
  if (!downstream.contains(yielded.getDefiningOp()))
    return group.emitOpError("yields a value that does not depend on its "
                             "kgraph.reduce");
  return success();
}

int64_t kgraph::getWidestAccessBytes(FusedOp group) {
  int64_t widest = 1;
  for (Type t : llvm::concat<const Type>(group.getInputs().getTypes(),
                                         group.getResultTypes()))
    if (auto shaped = llvm::dyn_cast<ShapedType>(t))
      widest = std::max<int64_t>(widest, shaped.getElementTypeBitWidth() / 8);
  return widest;
}

/// Largest power of two W <= maxWidth dividing `extent`.
static int64_t widestDivisor(int64_t extent, int64_t maxWidth) {
  int64_t w = std::max<int64_t>(1, maxWidth);
  while (w > 1 && extent % w != 0)
    w /= 2;
  return w;
}

ReduceConfigAttr kgraph::chooseReduceConfig(FusedOp group, ReduceOp op,
                                            const ReduceLayout &layout,
                                            const SMTarget &target) {
  const int64_t maxWidth =
      std::max<int64_t>(1, 16 / getWidestAccessBytes(group));
  const int64_t numOutputs = layout.numOutputs, rowSize = layout.rowSize;
  // Outputs that keep every SM busy with a thread per output.
  const int64_t manyOutputs = int64_t(target.numSMs) * 128;
  // Rows that give every warp slot of the GPU a row of its own.
  const int64_t allWarps =
      int64_t(target.numSMs) * target.maxThreadsPerSM / 32;
  constexpr int64_t kLoadsPerThread = 8;
  constexpr int64_t kMaxWaves = 64;

  int64_t threadsPerRow, rowsPerBlock, width, outputsPerBlock;
  if (!layout.isInnerReduced() &&
      (numOutputs >= manyOutputs || rowSize < 64)) {
    threadsPerRow = 1;
    width = layout.isInnerKept()
                ? widestDivisor(layout.kept.back().size, maxWidth)
                : 1;
    rowsPerBlock = 256;
    outputsPerBlock = rowsPerBlock * width;
  } else {
    width = layout.isInnerReduced()
                ? widestDivisor(layout.reduced.back().size, maxWidth)
                : 1;
    int64_t loads = llvm::divideCeil(rowSize, width);
    threadsPerRow = int64_t(llvm::PowerOf2Ceil(
        uint64_t(llvm::divideCeil(loads, kLoadsPerThread))));
    threadsPerRow = std::clamp<int64_t>(threadsPerRow, 2,
                                        std::min<int64_t>(1024, target.maxThreadsPerBlock));
    if (numOutputs >= allWarps)
      threadsPerRow = std::min<int64_t>(threadsPerRow, 32);
    rowsPerBlock = std::max<int64_t>(1, 256 / threadsPerRow);
    outputsPerBlock = rowsPerBlock;
  }
  int64_t blockSize = threadsPerRow * rowsPerBlock;
  int64_t blocksNeeded = llvm::divideCeil(numOutputs, outputsPerBlock);
  int64_t fullWave =
      int64_t(target.numSMs) * target.blocksPerSMByThreads(blockSize);
  int64_t gridSize =
      std::max<int64_t>(1, std::min(blocksNeeded, fullWave * kMaxWaves));
  return ReduceConfigAttr::get(op.getContext(), threadsPerRow, rowsPerBlock,
                               width, gridSize);
}

/// Cycles one dependent global load takes (an assumption of the coarse
/// model below, not a measurement).
static constexpr double kLoadLatencyCycles = 800;

/// Coarse time of a reduction kernel: its bytes at the part's memory
/// bandwidth, or, when too few threads are in flight to hide memory latency,
/// the chain of loads each thread issues one after the other (one load
/// latency each); plus the combining steps of a row (a shuffle per halving,
/// two barriers past a warp).
double kgraph::estimateReduceMicroseconds(ReduceConfigAttr config,
                                          const ReduceLayout &layout,
                                          int64_t bytes,
                                          const SMTarget &target) {
  int64_t blockSize = config.getBlockSize();
  int64_t resident =
      int64_t(target.numSMs) * target.blocksPerSMByThreads(blockSize);
  double threads = double(std::min(config.getGridSize(), resident)) *
                   double(blockSize);
  double loads = double(layout.numOutputs) * double(layout.rowSize) /
                 double(config.getVectorWidth());
  double chain = std::ceil(loads / threads) * kLoadLatencyCycles;
  int64_t t = config.getThreadsPerRow();
  double combine = std::log2(double(t)) * 32 + (t > 32 ? 2 * 100 : 0);
  return std::max(target.dramMicroseconds(double(bytes)),
                  target.cyclesToMicroseconds(chain + combine));
}

SmallVector<ReduceConfigAttr> kgraph::enumerateReduceConfigs(
    FusedOp group, ReduceOp op, const ReduceLayout &layout,
    const SMTarget &target) {
  MLIRContext *ctx = op.getContext();
  SmallVector<ReduceConfigAttr> configs = {
      chooseReduceConfig(group, op, layout, target)};
  int64_t widest = getWidestAccessBytes(group);
  const int64_t maxWidth = std::max<int64_t>(1, 16 / widest);
  constexpr int64_t kMaxWaves = 64;
  auto add = [&](int64_t threadsPerRow, int64_t rowsPerBlock, int64_t width) {
    int64_t blockSize = threadsPerRow * rowsPerBlock;
    if (blockSize % 32 != 0 || blockSize > int64_t(target.maxThreadsPerBlock))
      return;
    int64_t outputsPerBlock =
        threadsPerRow == 1 ? rowsPerBlock * width : rowsPerBlock;
    int64_t blocksNeeded = llvm::divideCeil(layout.numOutputs, outputsPerBlock);
    int64_t fullWave =
        int64_t(target.numSMs) * target.blocksPerSMByThreads(blockSize);
    int64_t grid =
        std::max<int64_t>(1, std::min(blocksNeeded, fullWave * kMaxWaves));
    auto config = ReduceConfigAttr::get(ctx, threadsPerRow, rowsPerBlock,
                                        width, grid);
    if (!llvm::is_contained(configs, config))
      configs.push_back(config);
  };
  // A thread per output, with the widths that divide the innermost kept
  // extent.
  for (int64_t width = maxWidth; width >= 1; width /= 2) {
    if (width > 1 && (!layout.isInnerKept() ||
                      layout.kept.back().size % width != 0))
      continue;
    for (int64_t rows : {128, 256, 512})
      add(1, rows, width);
  }
  // Threads cooperating on a row.
  for (int64_t width = maxWidth; width >= 1; width /= 2) {
    if (width > 1 && (!layout.isInnerReduced() ||
                      layout.reduced.back().size % width != 0))
      continue;
    for (int64_t t = 2; t <= 1024; t *= 2)
      for (int64_t block : {128, 256, 512, 1024})
        add(t, std::max<int64_t>(1, block / t), width);
  }
  return configs;
}

LogicalResult kgraph::verifyReduceConfig(
    ReduceConfigAttr config, const ReduceLayout &layout, int64_t widestBytes,
    function_ref<InFlightDiagnostic()> emitError) {
  int64_t width = config.getVectorWidth();
  if (width == 1)
    return success();
  if (width * widestBytes > 16)
    return emitError() << "vector_width " << width << " makes "
                       << width * widestBytes
                       << "-byte accesses; at most 16 bytes are allowed";
  if (config.getThreadsPerRow() > 1) {
    if (!layout.isInnerReduced())
      return emitError() << "vector_width " << width
                         << " with threads_per_row > 1 needs the innermost "
                            "input dimension to be reduced";
    if (layout.reduced.back().size % width != 0)
      return emitError() << "vector_width " << width
                         << " does not divide the innermost reduced extent "
                         << layout.reduced.back().size;
    return success();
  }
  if (!layout.isInnerKept())
    return emitError() << "vector_width " << width
                       << " with threads_per_row = 1 needs the innermost "
                          "input dimension to be kept";
  if (layout.kept.back().size % width != 0)
    return emitError() << "vector_width " << width
                       << " does not divide the innermost kept extent "
                       << layout.kept.back().size;
  return success();
}
