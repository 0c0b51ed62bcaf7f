//===- ReduceEmitter.cpp - reduction groups as one kernel -----------------===//
//
// A reduction group is one kgraph.reduce, the elementwise *producers* of its
// input and the elementwise *consumers* of its result (same shape as the
// result). The kernel reads the group's inputs once: producers are evaluated
// per loaded element while reducing, consumers on the final value before the
// single store. Indexing follows ReduceLayout (ReduceTiling.h); the thread
// mapping follows #kgraph.reduce_config:
//
//  - threads_per_row T > 1: the T adjacent threads of a row load W
//    consecutive elements at k = lane * W + i * T * W, accumulate W lanes in
//    registers, fold them, combine across the row with xor shuffles and, for
//    T > 32, through one shared-memory slot per warp. A block reduces P rows
//    at a time; blocks stride over groups of P rows. Threads whose row is
//    past the end reduce the last row again (so every thread reaches the
//    shuffles and barriers) and do not store.
//  - T = 1: each thread owns W consecutive outputs (neighbouring in the
//    innermost input dimension) and walks their rows, one W-wide load per
//    reduced index; neighbouring threads read neighbouring vectors.
//
// Accumulation is in f32 for floats and i32 for integers; `mean` divides the
// f32 sum by the row size. The result is rounded to the reduce's element
// type, as are the values of every producer and consumer, so the group
// computes exactly what its ops compute one at a time (up to the order of
// the additions). The combining steps are shared with the multi-reduction
// kernel (ReduceCombine.h, defined here); multi-reduction groups go to
// MultiReduceEmitter.cpp.
//
//===----------------------------------------------------------------------===//

#include "LaneEvaluator.h"
#include "ReduceCombine.h"
#include "ScalarOps.h"
#include "kgraph/Conversion/KGraphToGPU/KGraphToGPU.h"
#include "kgraph/Dialect/KGraph/Transforms/ReduceTiling.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/IR/Builders.h"
#include "llvm/ADT/DenseMap.h"

#include <limits>

using namespace mlir;
using namespace kgraph;
using namespace kgraph::detail;

LogicalResult kgraph::checkReduceGroup(FusedOp group, ReduceConfigAttr config) {
  FailureOr<ReduceGroupInfo> info = analyzeReduceGroup(group);
  if (failed(info))
    return failure();
  return verifyReduceConfig(config, *info, [&] { return group.emitOpError(); });
}

//===----------------------------------------------------------------------===//
// Shared steps (ReduceCombine.h)
//===----------------------------------------------------------------------===//

static Value indexConst(OpBuilder &b, Location loc, int64_t v) {
  return arith::ConstantIndexOp::create(b, loc, v);
}

Value kgraph::detail::emitRunOffset(OpBuilder &b, Location loc, Value linear,
                                    ArrayRef<ReduceLayout::Run> runs) {
  Value offset;
  int64_t inner = 1; // product of the sizes of the runs inside run i
  for (int64_t i = runs.size() - 1; i >= 0; --i) {
    Value coord = linear;
    if (inner != 1)
      coord = arith::DivUIOp::create(b, loc, coord, indexConst(b, loc, inner));
    if (i != 0)
      coord = arith::RemUIOp::create(b, loc, coord,
                                     indexConst(b, loc, runs[i].size));
    if (runs[i].stride != 1)
      coord = arith::MulIOp::create(b, loc, coord,
                                    indexConst(b, loc, runs[i].stride));
    offset = offset ? arith::AddIOp::create(b, loc, offset, coord) : coord;
    inner *= runs[i].size;
  }
  return offset ? offset : indexConst(b, loc, 0);
}

Value kgraph::detail::emitReduceIdentity(OpBuilder &b, Location loc,
                                         ReduceKind kind, Type accType) {
  bool isMax = kind == ReduceKind::max;
  TypedAttr value;
  if (llvm::isa<FloatType>(accType))
    value = b.getF32FloatAttr(isMax ? -std::numeric_limits<float>::infinity()
                                    : 0.0f);
  else
    value = b.getI32IntegerAttr(isMax ? std::numeric_limits<int32_t>::min()
                                      : 0);
  return arith::ConstantOp::create(b, loc, value);
}

Value kgraph::detail::emitReduceCombine(OpBuilder &b, Location loc,
                                        ReduceKind kind, Value x, Value y) {
  bool isFloat = llvm::isa<FloatType>(x.getType());
  if (kind == ReduceKind::max)
    // maximumf propagates NaN, as torch.amax does.
    return isFloat ? Value(arith::MaximumFOp::create(b, loc, x, y))
                   : Value(arith::MaxSIOp::create(b, loc, x, y));
  return isFloat ? Value(arith::AddFOp::create(b, loc, x, y))
                 : Value(arith::AddIOp::create(b, loc, x, y));
}

Value kgraph::detail::emitReduceFinish(OpBuilder &b, Location loc,
                                       ReduceKind kind, Value acc,
                                       int64_t count, Type resultType) {
  if (kind == ReduceKind::mean)
    acc = arith::DivFOp::create(
        b, loc, acc,
        arith::ConstantOp::create(b, loc, b.getF32FloatAttr(float(count))));
  return roundToType(b, loc, acc, resultType);
}

Value kgraph::detail::emitShuffleReduce(OpBuilder &b, Location loc,
                                        ReduceKind kind, Value v, int64_t n) {
  for (int64_t offset = n / 2; offset >= 1; offset /= 2) {
    auto shuffle = gpu::ShuffleOp::create(b, loc, v, int32_t(offset), 32,
                                          gpu::ShuffleMode::XOR);
    v = emitReduceCombine(b, loc, kind, v, shuffle.getShuffleResult());
  }
  return v;
}

Value kgraph::detail::emitRowCombine(OpBuilder &b, Location loc,
                                     ReduceKind kind, Value v, int64_t threads,
                                     Value lane, Value rowInBlock,
                                     Value partials, bool everyLane) {
  v = emitShuffleReduce(b, loc, kind, v, std::min<int64_t>(threads, 32));
  int64_t warpsPerRow = threads / 32;
  if (warpsPerRow <= 1)
    return v;
  auto c = [&](int64_t x) { return indexConst(b, loc, x); };
  Value warpInRow = arith::DivUIOp::create(b, loc, lane, c(32));
  Value laneInWarp = arith::RemUIOp::create(b, loc, lane, c(32));
  Value rowSlots = arith::MulIOp::create(b, loc, rowInBlock, c(warpsPerRow));
  // The previous readers of the slots are done with them.
  gpu::BarrierOp::create(b, loc);
  Value isLeader = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq,
                                         laneInWarp, c(0));
  auto write = scf::IfOp::create(b, loc, isLeader);
  {
    OpBuilder wb = OpBuilder::atBlockBegin(write.thenBlock());
    memref::StoreOp::create(
        wb, loc, v, partials,
        ValueRange{arith::AddIOp::create(wb, loc, rowSlots, warpInRow)});
  }
  gpu::BarrierOp::create(b, loc);
  // Every warp reads its row's slots (lanes past them read the identity)
  // and reduces them again, so lane 0 of the row (with `everyLane`, every
  // lane) has the total without another branch around the shuffles.
  Value hasSlot = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult,
                                        laneInWarp, c(warpsPerRow));
  Value slot = arith::AddIOp::create(
      b, loc, rowSlots,
      arith::MinUIOp::create(b, loc, laneInWarp, c(warpsPerRow - 1)));
  Value partial = memref::LoadOp::create(b, loc, partials, slot);
  v = arith::SelectOp::create(b, loc, hasSlot, partial,
                              emitReduceIdentity(b, loc, kind, v.getType()));
  return emitShuffleReduce(b, loc, kind, v, everyLane ? 32 : warpsPerRow);
}

namespace {

/// Emits the kernel of one reduction group.
class ReduceKernelBuilder {
public:
  ReduceKernelBuilder(FusedOp group, ReduceConfigAttr config,
                      gpu::GPUFuncOp kernel, ReduceOp reduce,
                      const ReduceLayout &layout)
      : group(group), config(config), kernel(kernel), reduce(reduce),
        layout(layout), loc(group.getLoc()),
        accType(getComputeType(getElementType(reduce.getResult()))) {}

  LogicalResult emit();

private:
  Value index(OpBuilder &b, int64_t v) {
    return arith::ConstantIndexOp::create(b, loc, v);
  }
  Value runOffset(OpBuilder &b, Value linear,
                  ArrayRef<ReduceLayout::Run> runs) {
    return emitRunOffset(b, loc, linear, runs);
  }
  Value identity(OpBuilder &b) {
    return emitReduceIdentity(b, loc, reduce.getKind(), accType);
  }
  Value combine(OpBuilder &b, Value x, Value y) {
    return emitReduceCombine(b, loc, reduce.getKind(), x, y);
  }
  ArrayRef<int64_t> inputShape() {
    return llvm::cast<ShapedType>(reduce.getInput().getType()).getShape();
  }
  /// The W lanes of the reduce input under `access`.
  FailureOr<SmallVector<Value>> loadInput(OpBuilder &b, const Access &access,
                                          int64_t width);
  /// The reduce input's coordinate groups of output (row) `row`: one group
  /// per run of consecutive kept dims, emitted once per row.
  SmallVector<CoordGroup> keptCoords(OpBuilder &b, Value row);
  /// Accumulates rows from reduced index `lb` to `ub` by `step` into `width`
  /// accumulators: the input at offset `base` + the offset of reduced index
  /// k, whose coordinates are `rowCoords` and those of k.
  FailureOr<SmallVector<Value>> accumulate(OpBuilder &b, Value lb, Value ub,
                                           Value step, int64_t width,
                                           Value base,
                                           ArrayRef<CoordGroup> rowCoords);
  /// Finishes the reduction on `lanes`, applies the consumers and stores the
  /// W results at output `o`.
  LogicalResult finishAndStore(OpBuilder &b, ArrayRef<Value> lanes, Value o);

  LogicalResult emitColumns(OpBuilder &b, Value tid, Value bid);
  LogicalResult emitRows(OpBuilder &b, Value tid, Value bid);

  FusedOp group;
  ReduceConfigAttr config;
  gpu::GPUFuncOp kernel;
  ReduceOp reduce;
  const ReduceLayout &layout;
  Location loc;
  Type accType;
  DenseMap<Value, Value> flatArgs;
  Value flatOutput;
};

} // namespace

FailureOr<SmallVector<Value>>
ReduceKernelBuilder::loadInput(OpBuilder &b, const Access &access,
                               int64_t width) {
  LaneEvaluator eval(b, loc, width, flatArgs);
  // The reduce input in accumulator type (i8 widens to i32).
  return eval.evaluate(reduce.getInput(), access);
}

/// Coordinate groups of the dims of `shape` whose membership in `axes` is
/// `reduced`, given by `linear`, their row-major linear index: one group per
/// run of consecutive such dims, appended to `groups`.
static void appendCoordGroups(OpBuilder &b, Location loc,
                              ArrayRef<int64_t> shape, ArrayRef<int64_t> axes,
                              bool reduced, Value linear,
                              SmallVectorImpl<CoordGroup> &groups) {
  int64_t rank = shape.size();
  auto member = [&](int64_t d) {
    return llvm::is_contained(axes, d) == reduced;
  };
  // Runs [first, first + count) from the innermost, with the extent of the
  // member dims inside each.
  SmallVector<std::tuple<int64_t, int64_t, int64_t>> runs;
  int64_t inner = 1;
  for (int64_t d = rank - 1; d >= 0;) {
    if (!member(d)) {
      --d;
      continue;
    }
    int64_t last = d, size = 1;
    for (; d >= 0 && member(d); --d)
      size *= shape[d];
    runs.push_back({d + 1, last - d, inner});
    inner *= size;
  }
  for (auto [i, run] : llvm::enumerate(llvm::reverse(runs))) {
    auto [first, count, in] = run;
    int64_t size = 1;
    for (int64_t d = first; d < first + count; ++d)
      size *= shape[d];
    Value coord = linear;
    if (in != 1)
      coord = arith::DivUIOp::create(
          b, loc, coord, arith::ConstantIndexOp::create(b, loc, in));
    if (i != 0)
      coord = arith::RemUIOp::create(
          b, loc, coord, arith::ConstantIndexOp::create(b, loc, size));
    groups.push_back({first, count, coord});
  }
}

SmallVector<CoordGroup> ReduceKernelBuilder::keptCoords(OpBuilder &b,
                                                        Value row) {
  SmallVector<CoordGroup> groups;
  appendCoordGroups(b, loc, inputShape(), reduce.getAxes(),
                    /*reduced=*/false, row, groups);
  return groups;
}

FailureOr<SmallVector<Value>>
ReduceKernelBuilder::accumulate(OpBuilder &b, Value lb, Value ub, Value step,
                                int64_t width, Value base,
                                ArrayRef<CoordGroup> rowCoords) {
  SmallVector<Value> init(width, identity(b));
  LogicalResult status = success();
  auto loop = scf::ForOp::create(
      b, loc, lb, ub, step, init,
      [&](OpBuilder &nb, Location, Value k, ValueRange accs) {
        Access access{AccessKind::Contiguous,
                      {arith::AddIOp::create(nb, loc, base,
                                             runOffset(nb, k, layout.reduced))},
                      SmallVector<CoordGroup>(rowCoords)};
        appendCoordGroups(nb, loc, inputShape(), reduce.getAxes(),
                          /*reduced=*/true, k, access.coords);
        FailureOr<SmallVector<Value>> lanes = loadInput(nb, access, width);
        SmallVector<Value> next(accs.begin(), accs.end());
        if (failed(lanes))
          status = failure();
        else
          for (int64_t l = 0; l < width; ++l)
            next[l] = combine(nb, accs[l], (*lanes)[l]);
        scf::YieldOp::create(nb, loc, next);
      });
  if (failed(status))
    return failure();
  return SmallVector<Value>(loop.getResults());
}

LogicalResult ReduceKernelBuilder::finishAndStore(OpBuilder &b,
                                                  ArrayRef<Value> accs,
                                                  Value o) {
  int64_t width = accs.size();
  Type resultType = getElementType(reduce.getResult());
  LaneEvaluator eval(b, loc, width, flatArgs);
  SmallVector<Value> lanes;
  for (Value acc : accs)
    lanes.push_back(emitReduceFinish(b, loc, reduce.getKind(), acc,
                                     layout.rowSize, resultType));
  eval.bind(reduce.getResult(), lanes);
  Value yielded = group.getYield().getValues().front();
  FailureOr<SmallVector<Value>> out =
      eval.evaluate(yielded, {AccessKind::Contiguous, {o}});
  if (failed(out))
    return failure();
  eval.store(*out, getElementType(group.getResult(0)), flatOutput, o);
  return success();
}

LogicalResult ReduceKernelBuilder::emitColumns(OpBuilder &b, Value tid,
                                               Value bid) {
  int64_t width = config.getVectorWidth();
  int64_t perBlock = config.getRowsPerBlock();
  int64_t numGroups = layout.numOutputs / width; // W divides it (verified)
  Value first = arith::AddIOp::create(
      b, loc, arith::MulIOp::create(b, loc, bid, index(b, perBlock)), tid);
  Value stride = index(b, perBlock * config.getGridSize());
  LogicalResult status = success();
  scf::ForOp::create(
      b, loc, first, index(b, numGroups), stride, ValueRange{},
      [&](OpBuilder &nb, Location, Value g, ValueRange) {
        Value o = arith::MulIOp::create(nb, loc, g, index(nb, width));
        Value base = runOffset(nb, o, layout.kept);
        Value lower = index(nb, 0);
        Value upper = index(nb, layout.rowSize);
        FailureOr<SmallVector<Value>> accs = accumulate(
            nb, lower, upper, index(nb, 1), width, base, keptCoords(nb, o));
        if (failed(accs) || failed(finishAndStore(nb, *accs, o)))
          status = failure();
        scf::YieldOp::create(nb, loc);
      });
  return status;
}

LogicalResult ReduceKernelBuilder::emitRows(OpBuilder &b, Value tid,
                                            Value bid) {
  MLIRContext *ctx = b.getContext();
  int64_t width = config.getVectorWidth();
  int64_t threads = config.getThreadsPerRow();
  int64_t rows = config.getRowsPerBlock();
  int64_t warpsPerRow = threads / 32;
  int64_t numOutputs = layout.numOutputs;

  // One shared-memory slot per warp of the block for T > 32.
  Value partials;
  if (warpsPerRow > 1) {
    auto smemType = MemRefType::get(
        {rows * warpsPerRow}, accType, MemRefLayoutAttrInterface{},
        gpu::AddressSpaceAttr::get(ctx, gpu::AddressSpace::Workgroup));
    partials = kernel.addWorkgroupAttribution(smemType, loc);
  }

  Value lane = arith::RemUIOp::create(b, loc, tid, index(b, threads));
  Value rowInBlock = arith::DivUIOp::create(b, loc, tid, index(b, threads));
  int64_t numRowGroups = llvm::divideCeil(numOutputs, rows);
  LogicalResult status = success();
  // The loop bounds are uniform across the block, so every thread reaches
  // the barriers inside.
  Value numRowGroupsValue = index(b, numRowGroups);
  scf::ForOp::create(
      b, loc, bid, numRowGroupsValue, index(b, config.getGridSize()),
      ValueRange{}, [&](OpBuilder &nb, Location, Value rg, ValueRange) {
        Value row = arith::AddIOp::create(
            nb, loc, arith::MulIOp::create(nb, loc, rg, index(nb, rows)),
            rowInBlock);
        Value clamped =
            arith::MinUIOp::create(nb, loc, row, index(nb, numOutputs - 1));
        Value base = runOffset(nb, clamped, layout.kept);
        Value lb = arith::MulIOp::create(nb, loc, lane, index(nb, width));
        Value upper = index(nb, layout.rowSize);
        FailureOr<SmallVector<Value>> accs =
            accumulate(nb, lb, upper, index(nb, threads * width), width, base,
                       keptCoords(nb, clamped));
        if (failed(accs)) {
          status = failure();
          scf::YieldOp::create(nb, loc);
          return;
        }
        Value v = (*accs)[0];
        for (int64_t l = 1; l < width; ++l)
          v = combine(nb, v, (*accs)[l]);
        v = emitRowCombine(nb, loc, reduce.getKind(), v, threads, lane,
                           rowInBlock, partials, /*everyLane=*/false);

        Value isFirst = arith::CmpIOp::create(nb, loc, arith::CmpIPredicate::eq,
                                              lane, index(nb, 0));
        Value inRange = arith::CmpIOp::create(
            nb, loc, arith::CmpIPredicate::ult, row, index(nb, numOutputs));
        auto store = scf::IfOp::create(
            nb, loc, arith::AndIOp::create(nb, loc, isFirst, inRange));
        {
          OpBuilder sb = OpBuilder::atBlockBegin(store.thenBlock());
          sb.setInsertionPoint(store.thenBlock()->getTerminator());
          if (failed(finishAndStore(sb, {v}, row)))
            status = failure();
        }
        scf::YieldOp::create(nb, loc);
      });
  return status;
}

LogicalResult ReduceKernelBuilder::emit() {
  OpBuilder b(kernel.getContext());
  Block &entry = kernel.getBody().front();
  b.setInsertionPointToStart(&entry);
  SmallVector<Value> flatOutputs;
  flattenGroupBuffers(b, loc, group, entry, flatArgs, flatOutputs);
  flatOutput = flatOutputs.front();

  Value tid = gpu::ThreadIdOp::create(b, loc, gpu::Dimension::x);
  Value bid = gpu::BlockIdOp::create(b, loc, gpu::Dimension::x);
  LogicalResult status = config.getThreadsPerRow() == 1
                             ? emitColumns(b, tid, bid)
                             : emitRows(b, tid, bid);
  gpu::ReturnOp::create(b, loc);
  return status;
}

LogicalResult kgraph::emitReduceKernel(FusedOp group, ReduceConfigAttr config,
                                       gpu::GPUFuncOp kernel) {
  FailureOr<ReduceGroupInfo> info = analyzeReduceGroup(group);
  if (failed(info) ||
      failed(verifyReduceConfig(config, *info,
                                [&] { return group.emitOpError(); })))
    return failure();
  if (!info->singlePass)
    return emitMultiReduceKernel(group, config, *info, kernel);
  return ReduceKernelBuilder(group, config, kernel, info->reduces.front(),
                             info->layout)
      .emit();
}
