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

/// `tensor<...>` of `shape` in the element type of `like`, for diagnostics.
static RankedTensorType withShape(Value like, ArrayRef<int64_t> shape) {
  return RankedTensorType::get(
      shape, llvm::cast<ShapedType>(like.getType()).getElementType());
}

bool ReduceGroupInfo::spansRows(Value v) const {
  auto type = llvm::dyn_cast<ShapedType>(v.getType());
  return type && type.getShape() == ArrayRef<int64_t>(rows.shape) &&
         !rows.isPerRowShape(type.getShape());
}

FailureOr<ReduceGroupInfo> kgraph::analyzeReduceGroup(FusedOp group) {
  ReduceGroupInfo info;
  Block &body = group.getBody().front();
  // Small reductions feeding another are evaluated inline, like elementwise
  // ops (isInlinedReduce).
  llvm::SmallPtrSet<Operation *, 4> inlined;
  for (Operation &op : body.without_terminator()) {
    if (isInlinedReduce(&op)) {
      inlined.insert(&op);
      info.opsPerElement += getReducedElementCount(llvm::cast<ReduceOp>(op));
      continue;
    }
    if (auto r = llvm::dyn_cast<ReduceOp>(op)) {
      if (!info.reduces.empty() && getReduceRows(r) != info.rows) {
        ReduceOp first = info.reduces.front();
        std::string axes;
        llvm::raw_string_ostream os(axes);
        llvm::interleaveComma(first.getAxes(), os);
        return r.emitOpError("does not reduce the rows of the group's first "
                             "kgraph.reduce (")
               << first.getInput().getType() << " over axes [" << axes
               << "]); the reductions of one group share their rows";
      }
      if (info.reduces.empty())
        info.rows = getReduceRows(r);
      info.reduces.push_back(r);
      continue;
    }
    if (llvm::isa<arith::ConstantOp>(op)) {
      if (failed(verifyKernelConstant(&op)))
        return failure();
      continue;
    }
    ++info.opsPerElement;
    if (!isElementwiseOp(&op))
      return op.emitOpError("cannot be part of a reduction group: only "
                            "elementwise ops and splat constants can join a "
                            "kgraph.reduce");
  }
  if (info.reduces.empty())
    return group.emitOpError("has no kgraph.reduce");
  FailureOr<ReduceLayout> layout = getReduceLayout(info.reduces.front());
  if (failed(layout))
    return failure();
  info.layout = *layout;
  info.widestBytes = getWidestAccessBytes(group);

  // Phases: what depends on which reduction. Everything downstream of a
  // reduction holds one value per row or spans the rows, so each output
  // element is computed by the threads that reduced its row.
  Value firstInput = info.reduces.front().getInput();
  RankedTensorType rowType = withShape(firstInput, info.rows.shape);
  RankedTensorType keptType =
      withShape(firstInput, info.rows.getKeptShape());
  bool rowsAfterReduce = false;
  for (Operation &op : body.without_terminator()) {
    unsigned phase = 0;
    for (Value operand : op.getOperands())
      phase = std::max(phase, info.phase.lookup(operand));
    if (auto r = llvm::dyn_cast<ReduceOp>(op); r && !inlined.contains(r)) {
      unsigned index = llvm::find(info.reduces, r) - info.reduces.begin();
      info.phase[r.getResult()] = index + 1;
      continue;
    }
    if (op.getNumResults() != 1)
      continue;
    Value result = op.getResult(0);
    info.phase[result] = phase;
    if (phase == 0)
      continue;
    if (inlined.contains(&op))
      return op.emitOpError("is evaluated inline but reads a reduction "
                            "result of its group; an inline reduction reads "
                            "only values computed before the group's first "
                            "reduction");
    auto type = llvm::cast<ShapedType>(result.getType());
    bool perRow = info.rows.isPerRowShape(type.getShape());
    bool overRows = type.getShape() == ArrayRef<int64_t>(info.rows.shape);
    if (!perRow && !overRows)
      return op.emitOpError("uses a kgraph.reduce result but has shape ")
             << type << "; values after a reduction hold one value per row ("
             << keptType << ") or span the rows (" << rowType << ")";
    rowsAfterReduce |= !perRow;
    for (Value operand : op.getOperands()) {
      if (info.phase.lookup(operand) == 0)
        continue;
      ArrayRef<int64_t> s = llvm::cast<ShapedType>(operand.getType()).getShape();
      if (!perRow && s != ArrayRef<int64_t>(info.rows.shape) &&
          !info.rows.broadcastsAlongRows(s))
        return op.emitOpError("reads the per-row value ")
               << operand.getType() << " along the rows of " << rowType
               << ", but it does not broadcast along them (it needs the "
                  "shape "
               << keptType << ")";
      if (perRow && !info.rows.isPerRowShape(s))
        return op.emitOpError("holds one value per row but reads ")
               << operand.getType() << ", which spans the rows";
    }
  }

  // Results: each spans the rows or holds one value per row, and every
  // reduction feeds one.
  ValueRange yielded = group.getYield().getValues();
  llvm::SmallPtrSet<Operation *, 8> feeding;
  SmallVector<Value> worklist;
  for (Value v : yielded) {
    auto type = llvm::cast<ShapedType>(v.getType());
    if (type.getShape() != ArrayRef<int64_t>(info.rows.shape) &&
        !info.rows.isPerRowShape(type.getShape()))
      return group.emitOpError("yields a value of shape ")
             << type << "; a reduction group yields values that span its "
             << "rows (" << rowType << ") or hold one value per row ("
             << keptType << ")";
    worklist.push_back(v);
  }
  while (!worklist.empty()) {
    Operation *def = worklist.pop_back_val().getDefiningOp();
    if (!def || def->getBlock() != &body || !feeding.insert(def).second)
      continue;
    llvm::append_range(worklist, def->getOperands());
  }
  for (ReduceOp r : info.reduces)
    if (!feeding.contains(r))
      return r.emitOpError("feeds no value its group yields");

  Value only = yielded.size() == 1 ? yielded.front() : Value();
  info.singlePass = info.reduces.size() == 1 && only && !rowsAfterReduce &&
                    info.phase.lookup(only) != 0 &&
                    info.rows.isPerRowShape(
                        llvm::cast<ShapedType>(only.getType()).getShape());
  return info;
}

LogicalResult kgraph::verifyReduceGroup(FusedOp group) {
  return success(succeeded(analyzeReduceGroup(group)));
}

bool kgraph::isMultiReductionProfitable(const ReduceRows &rows) {
  int64_t numRows = std::max<int64_t>(1, rows.getNumRows());
  int64_t rowSize = 1;
  for (int64_t d : rows.shape)
    rowSize *= d;
  rowSize /= numRows;
  return rowSize <= 1024 * kMaxRowElementsPerThread ||
         numRows >= kMinRereadRows;
}

/// Largest power of two W <= maxWidth dividing `extent`.
static int64_t widestDivisor(int64_t extent, int64_t maxWidth) {
  int64_t w = std::max<int64_t>(1, maxWidth);
  while (w > 1 && extent % w != 0)
    w /= 2;
  return w;
}

/// The vector width of a row: the widest power of two dividing the
/// innermost reduced extent with 16-byte accesses (1 for strided rows).
static int64_t getRowWidth(const ReduceGroupInfo &info) {
  const ReduceLayout &layout = info.layout;
  int64_t maxWidth = std::max<int64_t>(1, 16 / info.widestBytes);
  return layout.isInnerReduced()
             ? widestDivisor(layout.reduced.back().size, maxWidth)
             : 1;
}

/// Blocks for every group of outputs, at most 64 waves of resident blocks
/// (the kernels stride over the rest).
static int64_t getReduceGrid(int64_t numOutputs, int64_t outputsPerBlock,
                             int64_t blockSize, const SMTarget &target) {
  constexpr int64_t kMaxWaves = 64;
  int64_t blocksNeeded = llvm::divideCeil(numOutputs, outputsPerBlock);
  int64_t fullWave =
      int64_t(target.numSMs) * target.blocksPerSMByThreads(blockSize);
  return std::max<int64_t>(1, std::min(blocksNeeded, fullWave * kMaxWaves));
}

/// The vectors of W elements each of T threads holds of a row, or 0 when
/// that is more than kMaxRowElementsPerThread elements.
static int64_t getHeldVectors(const ReduceLayout &layout, int64_t threads,
                              int64_t width) {
  int64_t vectors =
      llvm::divideCeil(llvm::divideCeil(layout.rowSize, width), threads);
  return vectors * width <= kMaxRowElementsPerThread ? vectors : 0;
}

/// Threads per row of a single pass over rows of `loads` loads: the power of
/// two giving each thread about 8 loads, in [minimum, 1024], at most a warp
/// when the rows alone fill every warp slot of the GPU.
static int64_t getStreamingThreads(int64_t loads, int64_t numOutputs,
                                   int64_t minimum, const SMTarget &target) {
  constexpr int64_t kLoadsPerThread = 8;
  const int64_t allWarps =
      int64_t(target.numSMs) * target.maxThreadsPerSM / 32;
  int64_t threads = int64_t(llvm::PowerOf2Ceil(
      uint64_t(llvm::divideCeil(loads, kLoadsPerThread))));
  threads = std::clamp<int64_t>(
      threads, minimum, std::min<int64_t>(1024, target.maxThreadsPerBlock));
  if (numOutputs >= allWarps)
    threads = std::min<int64_t>(threads, 32);
  return threads;
}

/// Ops per row element (ReduceGroupInfo::opsPerElement) from which a
/// single-pass reduction is limited by arithmetic rather than loads.
static constexpr int64_t kComputeBoundOpsPerElement = 8;

/// chooseReduceConfig for a multi-reduction group (see the header).
static ReduceConfigAttr chooseMultiReduceConfig(MLIRContext *ctx,
                                                const ReduceGroupInfo &info,
                                                const SMTarget &target) {
  const ReduceLayout &layout = info.layout;
  // About 16 elements of the row per thread: 4096 f32 is 256 threads of 4
  // vectors of 4 (what torch.compile's persistent reductions pick too).
  constexpr int64_t kRowElementsPerThread = 16;
  const int64_t maxThreads = std::min<int64_t>(1024, target.maxThreadsPerBlock);
  const int64_t allWarps =
      int64_t(target.numSMs) * target.maxThreadsPerSM / 32;
  int64_t width = getRowWidth(info);
  auto threadsFor = [&](int64_t elements) {
    return std::clamp<int64_t>(int64_t(llvm::PowerOf2Ceil(uint64_t(
                                   llvm::divideCeil(layout.rowSize, elements)))),
                               1, maxThreads);
  };
  int64_t threads = threadsFor(kRowElementsPerThread);
  // Rows that fill half the warp slots keep every SM busy with a warp each
  // (no shared memory or barriers to combine them), up to twice the
  // elements per thread.
  if (2 * layout.numOutputs >= allWarps)
    threads = std::min(threads,
                       std::max<int64_t>(32, threadsFor(2 * kRowElementsPerThread)));
  // More threads where a row needs more registers than a thread has.
  while (threads < maxThreads && !getHeldVectors(layout, threads, width))
    threads *= 2;
  int64_t vectors = getHeldVectors(layout, threads, width);
  if (vectors == 0)
    // Too long to hold: each reduction streams the row again.
    threads = getStreamingThreads(llvm::divideCeil(layout.rowSize, width),
                                  layout.numOutputs, 1, target);
  int64_t rows = std::max<int64_t>(1, 256 / threads);
  int64_t grid =
      getReduceGrid(layout.numOutputs, rows, threads * rows, target);
  return ReduceConfigAttr::get(ctx, threads, rows, width, grid, vectors);
}

ReduceConfigAttr kgraph::chooseReduceConfig(MLIRContext *ctx,
                                            const ReduceGroupInfo &info,
                                            const SMTarget &target) {
  if (!info.singlePass)
    return chooseMultiReduceConfig(ctx, info, target);
  const ReduceLayout &layout = info.layout;
  const int64_t maxWidth = std::max<int64_t>(1, 16 / info.widestBytes);
  const int64_t numOutputs = layout.numOutputs, rowSize = layout.rowSize;
  // Outputs that keep every SM busy with a thread per output: a few warps
  // per SM stream the loads of a light group, but one that evaluates many
  // ops per element (nested reductions, long producer chains: the N-body)
  // is limited by its arithmetic and needs half the SM's threads.
  const int64_t manyOutputs =
      info.opsPerElement >= kComputeBoundOpsPerElement
          ? int64_t(target.numSMs) * target.maxThreadsPerSM / 2
          : int64_t(target.numSMs) * 128;

  // A thread per W outputs walks its rows alone: where the outputs are many,
  // or the rows short and the outputs still fill two warps per SM (the
  // global average pool of a batch-1 CNN, 2048 outputs over 49 pixels,
  // would run as one block of 256 threads, each loading 49 times in turn).
  int64_t threadsPerRow, rowsPerBlock, width, outputsPerBlock;
  int64_t columnWidth = layout.isInnerKept()
                            ? widestDivisor(layout.kept.back().size, maxWidth)
                            : 1;
  if (!layout.isInnerReduced() &&
      (numOutputs >= manyOutputs ||
       (rowSize < 64 &&
        numOutputs / columnWidth >= int64_t(target.numSMs) * 64))) {
    threadsPerRow = 1;
    width = columnWidth;
    rowsPerBlock = 256;
    outputsPerBlock = rowsPerBlock * width;
  } else {
    width = getRowWidth(info);
    threadsPerRow = getStreamingThreads(llvm::divideCeil(rowSize, width),
                                        numOutputs, 2, target);
    rowsPerBlock = std::max<int64_t>(1, 256 / threadsPerRow);
    outputsPerBlock = rowsPerBlock;
  }
  int64_t gridSize = getReduceGrid(numOutputs, outputsPerBlock,
                                   threadsPerRow * rowsPerBlock, target);
  return ReduceConfigAttr::get(ctx, threadsPerRow, rowsPerBlock, width,
                               gridSize, /*rowVectors=*/0);
}

int64_t kgraph::getReduceRegisters(ReduceConfigAttr config) {
  // Each held element and a value computed from it (x and exp(x - max))
  // live across a phase, besides the indices and accumulators.
  int64_t held = config.getRowVectors() * config.getVectorWidth();
  return held ? 32 + 2 * held : 0;
}

/// Cycles one dependent global load takes (an assumption of the coarse
/// model below, not a measurement).
static constexpr double kLoadLatencyCycles = 800;

/// Coarse time of a reduction kernel: its bytes at the part's memory
/// bandwidth, or, when too few threads are in flight to hide memory latency,
/// the chain of loads each thread issues one after the other (one load
/// latency each); plus the combining steps of a row (a shuffle per halving,
/// two barriers past a warp) per reduction. A multi-reduction kernel that
/// holds its rows issues a row's loads at once (one latency per row a
/// thread visits, with as many blocks resident as its registers allow); one
/// that re-reads them walks each row once per reduction and once more for
/// results that span the rows, the passes after the first at L2 bandwidth.
double kgraph::estimateReduceMicroseconds(ReduceConfigAttr config,
                                          const ReduceGroupInfo &info,
                                          int64_t bytes, int64_t rowInputBytes,
                                          const SMTarget &target) {
  const ReduceLayout &layout = info.layout;
  int64_t blockSize = config.getBlockSize();
  int64_t blocksPerSM = target.blocksPerSMByThreads(blockSize);
  if (int64_t registers = getReduceRegisters(config))
    blocksPerSM = std::max<int64_t>(
        1, std::min<int64_t>(blocksPerSM, target.registersPerSM /
                                              (registers * blockSize)));
  int64_t resident = int64_t(target.numSMs) * blocksPerSM;
  double threads = double(std::min(config.getGridSize(), resident)) *
                   double(blockSize);
  double loads = double(layout.numOutputs) * double(layout.rowSize) /
                 double(config.getVectorWidth());
  int64_t t = config.getThreadsPerRow();
  double combine = std::log2(double(t)) * 32 + (t > 32 ? 2 * 100 : 0);
  double passes = 1, extraBytes = 0;
  double chain = std::ceil(loads / threads) * kLoadLatencyCycles;
  if (!info.singlePass) {
    combine *= double(info.reduces.size());
    double rowsInFlight = threads / double(t);
    double rounds = std::ceil(double(layout.numOutputs) / rowsInFlight);
    if (config.getRowVectors() > 0) {
      chain = rounds * kLoadLatencyCycles;
    } else {
      passes = double(info.reduces.size()) + 1;
      chain *= passes;
      extraBytes = (passes - 1) * double(rowInputBytes);
    }
    combine *= rounds;
  }
  double l2Cycles =
      extraBytes / (double(target.l2BytesPerClock) * double(target.numSMs));
  return std::max(target.dramMicroseconds(double(bytes)),
                  target.cyclesToMicroseconds(chain + combine)) +
         target.cyclesToMicroseconds(l2Cycles);
}

SmallVector<ReduceConfigAttr>
kgraph::enumerateReduceConfigs(MLIRContext *ctx, const ReduceGroupInfo &info,
                               const SMTarget &target) {
  const ReduceLayout &layout = info.layout;
  SmallVector<ReduceConfigAttr> configs = {
      chooseReduceConfig(ctx, info, target)};
  const int64_t maxWidth = std::max<int64_t>(1, 16 / info.widestBytes);
  auto add = [&](int64_t threadsPerRow, int64_t rowsPerBlock, int64_t width,
                 int64_t rowVectors) {
    int64_t blockSize = threadsPerRow * rowsPerBlock;
    if (blockSize % 32 != 0 || blockSize > int64_t(target.maxThreadsPerBlock))
      return;
    int64_t outputsPerBlock =
        threadsPerRow == 1 && info.singlePass ? rowsPerBlock * width
                                              : rowsPerBlock;
    int64_t grid =
        getReduceGrid(layout.numOutputs, outputsPerBlock, blockSize, target);
    auto config = ReduceConfigAttr::get(ctx, threadsPerRow, rowsPerBlock,
                                        width, grid, rowVectors);
    if (!llvm::is_contained(configs, config))
      configs.push_back(config);
  };
  auto dividesReduced = [&](int64_t width) {
    return width == 1 || (layout.isInnerReduced() &&
                           layout.reduced.back().size % width == 0);
  };
  if (!info.singlePass) {
    // Threads of a row, each holding its part of the row where it fits,
    // else re-reading it.
    for (int64_t width = maxWidth; width >= 1; width /= 2) {
      if (!dividesReduced(width))
        continue;
      for (int64_t t = 1; t <= 1024; t *= 2)
        for (int64_t block : {128, 256, 512, 1024}) {
          int64_t rows = std::max<int64_t>(1, block / t);
          if (int64_t held = getHeldVectors(layout, t, width))
            add(t, rows, width, held);
          add(t, rows, width, 0);
        }
    }
    return configs;
  }
  // A thread per output, with the widths that divide the innermost kept
  // extent.
  for (int64_t width = maxWidth; width >= 1; width /= 2) {
    if (width > 1 && (!layout.isInnerKept() ||
                      layout.kept.back().size % width != 0))
      continue;
    for (int64_t rows : {128, 256, 512})
      add(1, rows, width, 0);
  }
  // Threads cooperating on a row.
  for (int64_t width = maxWidth; width >= 1; width /= 2) {
    if (!dividesReduced(width))
      continue;
    for (int64_t t = 2; t <= 1024; t *= 2)
      for (int64_t block : {128, 256, 512, 1024})
        add(t, std::max<int64_t>(1, block / t), width, 0);
  }
  return configs;
}

LogicalResult
kgraph::verifyReduceConfig(ReduceConfigAttr config,
                           const ReduceGroupInfo &info,
                           function_ref<InFlightDiagnostic()> emitError) {
  const ReduceLayout &layout = info.layout;
  int64_t width = config.getVectorWidth();
  int64_t threads = config.getThreadsPerRow();
  int64_t held = config.getRowVectors();
  if (held > 0) {
    if (info.singlePass)
      return emitError() << "row_vectors " << held
                         << " holds rows in registers, but the group reads "
                            "each row once (a single reduction with per-row "
                            "consumers): row_vectors must be 0";
    if (held * threads * width < layout.rowSize)
      return emitError() << "row_vectors " << held << " holds " << held
                         << " x " << threads << " x " << width << " = "
                         << held * threads * width
                         << " elements of each row, fewer than its "
                         << layout.rowSize;
    if (held * width > kMaxRowElementsPerThread)
      return emitError() << "row_vectors " << held << " keeps "
                         << held * width
                         << " elements per thread in registers; at most "
                         << kMaxRowElementsPerThread << " are allowed";
  }
  if (width == 1)
    return success();
  if (width * info.widestBytes > 16)
    return emitError() << "vector_width " << width << " makes "
                       << width * info.widestBytes
                       << "-byte accesses; at most 16 bytes are allowed";
  if (threads > 1 || !info.singlePass) {
    if (!layout.isInnerReduced())
      return emitError() << "vector_width " << width
                         << (info.singlePass
                                 ? " with threads_per_row > 1"
                                 : " in a multi-reduction group")
                         << " needs the innermost input dimension to be "
                            "reduced";
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
