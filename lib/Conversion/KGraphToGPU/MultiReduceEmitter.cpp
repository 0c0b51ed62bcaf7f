//===- MultiReduceEmitter.cpp - multi-reduction groups as one kernel ------===//
//
// A multi-reduction group (ReduceTiling.h: several kgraph.reduce over the
// same rows, or values over the whole rows computed from a reduction, such
// as a softmax or a layer norm) as one kernel. The mapping is
// #kgraph.reduce_config's: T adjacent threads per row, P rows per block,
// blocks striding over groups of P rows (a thread whose row is past the end
// works on the last row, so every thread reaches the shuffles and barriers,
// and stores nothing). The threads of a row visit it in vectors of W
// consecutive reduced elements: thread `lane` the vectors at
// k = (c * T + lane) * W for c = 0, 1, ...
//
// Per row, each reduction in program order is one phase: its input is
// evaluated on the thread's vectors (LaneEvaluator), folded, and combined
// across the row's threads so that every thread has the total
// (emitRowCombine); mean divides by the row size, and the result is
// rounded to its element type. The per-row values that depend only on the
// reductions done so far (var + eps, rsqrt) are then computed once per
// thread and read as a splat by every later vector. Last, the results are
// stored once: values over the rows per vector (16-byte stores), per-row
// values by the row's lane 0.
//
//  - row_vectors = C > 0 (the row held in registers): the C vectors are
//    straight-line code with one LaneEvaluator each, kept across the
//    phases, so each input element is loaded once and each value computed
//    on a vector (x, exp(x - max)) is reused by the later phases from
//    registers. A vector past the row's end reads the row's last vector
//    instead (in bounds) and is left out of the reductions and stores.
//  - C = 0 (rows too long for registers): each phase is a loop over the
//    thread's vectors that evaluates them anew, re-reading the inputs.
//
// Every value is rounded to its declared element type (ScalarOps.h), as
// in the single-pass kernel (ReduceEmitter.cpp).
//
//===----------------------------------------------------------------------===//

#include "LaneEvaluator.h"
#include "ReduceCombine.h"
#include "ScalarOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "llvm/ADT/MapVector.h"

#include <memory>

using namespace mlir;
using namespace kgraph;
using namespace kgraph::detail;

namespace {

/// Emits the kernel of one multi-reduction group.
class MultiReduceKernelBuilder {
public:
  MultiReduceKernelBuilder(FusedOp group, ReduceConfigAttr config,
                           const ReduceGroupInfo &info, gpu::GPUFuncOp kernel)
      : group(group), config(config), info(info), layout(info.layout),
        kernel(kernel), loc(group.getLoc()),
        width(config.getVectorWidth()), threads(config.getThreadsPerRow()) {}

  LogicalResult emit();

private:
  Value index(OpBuilder &b, int64_t v) {
    return arith::ConstantIndexOp::create(b, loc, v);
  }
  /// The input offset of reduced index `k` of the row at offset `base`.
  Value offsetOf(OpBuilder &b, Value base, Value k) {
    return arith::AddIOp::create(b, loc, base,
                                 emitRunOffset(b, loc, k, layout.reduced));
  }
  /// Makes `value` (one lane) the value of `v` in `eval` (W lanes).
  void bindSplat(LaneEvaluator &eval, Value v, Value value) {
    eval.bind(v, SmallVector<Value>(width, value));
  }
  /// Combines a thread's partial result of reduction `r` across its row and
  /// finishes it (mean, rounding): the value of `r` in every thread.
  Value finishReduction(OpBuilder &b, ReduceOp r, Value acc);
  /// After reduction number `phase` (1-based), the per-row values that now
  /// become computable, in program order, evaluated with `rowEval` (one lane
  /// at the row) and recorded in `known`.
  LogicalResult computePerRowValues(unsigned phase, LaneEvaluator &rowEval,
                                    Value row,
                                    llvm::MapVector<Value, Value> &known);
  /// Stores the per-row results (lane 0 of a row in range).
  LogicalResult storePerRowResults(OpBuilder &b, LaneEvaluator &rowEval,
                                   Value row, Value storeRow);
  /// One row, held in registers (C > 0) or re-read per phase (C = 0).
  LogicalResult emitHeldRow(OpBuilder &b, Value base, Value row,
                            Value inRange);
  LogicalResult emitStreamedRow(OpBuilder &b, Value base, Value row,
                                Value inRange);
  /// An scf.if on `cond` at `b`, with `b` inside its then-block while
  /// `body` runs.
  void emitIf(OpBuilder &b, Value cond, function_ref<void()> body);

  FusedOp group;
  ReduceConfigAttr config;
  const ReduceGroupInfo &info;
  const ReduceLayout &layout;
  gpu::GPUFuncOp kernel;
  Location loc;
  int64_t width, threads;
  DenseMap<Value, Value> flatArgs;
  SmallVector<Value> flatOutputs;
  /// Shared-memory slots per accumulator type (T > 32).
  DenseMap<Type, Value> partials;
  Value lane, rowInBlock;
};

} // namespace

void MultiReduceKernelBuilder::emitIf(OpBuilder &b, Value cond,
                                      function_ref<void()> body) {
  auto ifOp = scf::IfOp::create(b, loc, cond);
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPoint(ifOp.thenBlock()->getTerminator());
  body();
}

Value MultiReduceKernelBuilder::finishReduction(OpBuilder &b, ReduceOp r,
                                                Value acc) {
  acc = emitRowCombine(b, loc, r.getKind(), acc, threads, lane, rowInBlock,
                       partials.lookup(acc.getType()), /*everyLane=*/true);
  return emitReduceFinish(b, loc, r.getKind(), acc, layout.rowSize,
                          getElementType(r.getResult()));
}

LogicalResult MultiReduceKernelBuilder::computePerRowValues(
    unsigned phase, LaneEvaluator &rowEval, Value row,
    llvm::MapVector<Value, Value> &known) {
  for (Operation &op : group.getBody().front().without_terminator()) {
    if (llvm::isa<ReduceOp>(op) || op.getNumResults() != 1)
      continue;
    Value v = op.getResult(0);
    if (info.phase.lookup(v) != phase || info.spansRows(v))
      continue;
    FailureOr<SmallVector<Value>> lanes =
        rowEval.evaluate(v, {AccessKind::Contiguous, {row}});
    if (failed(lanes))
      return failure();
    known[v] = lanes->front();
  }
  return success();
}

LogicalResult MultiReduceKernelBuilder::storePerRowResults(
    OpBuilder &b, LaneEvaluator &rowEval, Value row, Value storeRow) {
  ValueRange yielded = group.getYield().getValues();
  SmallVector<std::pair<unsigned, Value>> values;
  for (auto [i, v] : llvm::enumerate(yielded)) {
    if (info.spansRows(v))
      continue;
    FailureOr<SmallVector<Value>> lanes =
        rowEval.evaluate(v, {AccessKind::Contiguous, {row}});
    if (failed(lanes))
      return failure();
    values.push_back({unsigned(i), lanes->front()});
  }
  if (values.empty())
    return success();
  emitIf(b, storeRow, [&] {
    for (auto [i, value] : values)
      rowEval.store({value}, getElementType(group.getResult(i)),
                    flatOutputs[i], row);
  });
  return success();
}

LogicalResult MultiReduceKernelBuilder::emitHeldRow(OpBuilder &b, Value base,
                                                    Value row, Value inRange) {
  const int64_t rowSize = layout.rowSize;
  const int64_t numVectors = config.getRowVectors();
  LaneEvaluator rowEval(b, loc, /*width=*/1, flatArgs);
  // Per vector: its evaluator, input offset and, for a vector that may lie
  // past the row's end, whether it is in the row (null: always).
  SmallVector<std::unique_ptr<LaneEvaluator>> evals;
  SmallVector<Value> offsets, valid;
  Value laneStart = arith::MulIOp::create(b, loc, lane, index(b, width));
  for (int64_t c = 0; c < numVectors; ++c) {
    Value k = arith::AddIOp::create(b, loc, laneStart,
                                    index(b, c * threads * width));
    Value inRow;
    if ((c + 1) * threads * width > rowSize) {
      inRow = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult, k,
                                    index(b, rowSize));
      // rowSize is a multiple of W: the last vector is in bounds.
      k = arith::MinUIOp::create(b, loc, k, index(b, rowSize - width));
    }
    evals.push_back(std::make_unique<LaneEvaluator>(b, loc, width, flatArgs));
    offsets.push_back(offsetOf(b, base, k));
    valid.push_back(inRow);
  }

  for (unsigned r = 0, e = info.reduces.size(); r < e; ++r) {
    ReduceOp reduce = info.reduces[r];
    Type accType = getComputeType(getElementType(reduce.getResult()));
    Value identity = emitReduceIdentity(b, loc, reduce.getKind(), accType);
    SmallVector<Value> accs(width, identity);
    for (int64_t c = 0; c < numVectors; ++c) {
      FailureOr<SmallVector<Value>> lanes = evals[c]->evaluate(
          reduce.getInput(), {AccessKind::Contiguous, {offsets[c]}});
      if (failed(lanes))
        return failure();
      for (int64_t l = 0; l < width; ++l) {
        Value x = (*lanes)[l];
        if (valid[c])
          x = arith::SelectOp::create(b, loc, valid[c], x, identity);
        accs[l] = emitReduceCombine(b, loc, reduce.getKind(), accs[l], x);
      }
    }
    Value acc = accs[0];
    for (int64_t l = 1; l < width; ++l)
      acc = emitReduceCombine(b, loc, reduce.getKind(), acc, accs[l]);
    llvm::MapVector<Value, Value> known;
    known[reduce.getResult()] = finishReduction(b, reduce, acc);
    rowEval.bind(reduce.getResult(), {known.front().second});
    if (failed(computePerRowValues(r + 1, rowEval, row, known)))
      return failure();
    for (auto [v, value] : known)
      for (auto &eval : evals)
        bindSplat(*eval, v, value);
  }

  // Results over the rows: every vector's values first (their other loads,
  // gamma and beta, issue together rather than each after the previous
  // vector's stores), then the stores; then the per-row results.
  ValueRange yielded = group.getYield().getValues();
  SmallVector<SmallVector<std::pair<unsigned, SmallVector<Value>>>> values(
      numVectors);
  for (int64_t c = 0; c < numVectors; ++c)
    for (auto [i, v] : llvm::enumerate(yielded)) {
      if (!info.spansRows(v))
        continue;
      FailureOr<SmallVector<Value>> lanes =
          evals[c]->evaluate(v, {AccessKind::Contiguous, {offsets[c]}});
      if (failed(lanes))
        return failure();
      values[c].push_back({unsigned(i), *lanes});
    }
  for (int64_t c = 0; c < numVectors && !values[c].empty(); ++c) {
    Value store = inRange;
    if (valid[c])
      store = arith::AndIOp::create(b, loc, valid[c], inRange);
    emitIf(b, store, [&] {
      for (auto &[i, lanes] : values[c])
        evals[c]->store(lanes, getElementType(group.getResult(i)),
                        flatOutputs[i], offsets[c]);
    });
  }
  Value storeRow = arith::AndIOp::create(
      b, loc, inRange,
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, lane,
                            index(b, 0)));
  return storePerRowResults(b, rowEval, row, storeRow);
}

LogicalResult MultiReduceKernelBuilder::emitStreamedRow(OpBuilder &b,
                                                        Value base, Value row,
                                                        Value inRange) {
  LaneEvaluator rowEval(b, loc, /*width=*/1, flatArgs);
  // Per-row values known so far, bound into each loop's evaluator.
  llvm::MapVector<Value, Value> known;
  Value lb = arith::MulIOp::create(b, loc, lane, index(b, width));
  Value ub = index(b, layout.rowSize);
  Value step = index(b, threads * width);
  LogicalResult status = success();
  // A loop over the thread's vectors of the row; `body` gets an evaluator
  // that knows the per-row values so far, and the vector's input offset.
  auto forEachVector = [&](OpBuilder &at, ValueRange init,
                           function_ref<SmallVector<Value>(
                               OpBuilder &, LaneEvaluator &, Value,
                               ValueRange)>
                               body) {
    return scf::ForOp::create(
        at, loc, lb, ub, step, init,
        [&](OpBuilder &nb, Location, Value k, ValueRange iters) {
          LaneEvaluator eval(nb, loc, width, flatArgs);
          for (auto [v, value] : known)
            bindSplat(eval, v, value);
          SmallVector<Value> next =
              body(nb, eval, offsetOf(nb, base, k), iters);
          scf::YieldOp::create(nb, loc, next);
        });
  };

  for (unsigned r = 0, e = info.reduces.size(); r < e; ++r) {
    ReduceOp reduce = info.reduces[r];
    Type accType = getComputeType(getElementType(reduce.getResult()));
    Value identity = emitReduceIdentity(b, loc, reduce.getKind(), accType);
    auto loop = forEachVector(
        b, SmallVector<Value>(width, identity),
        [&](OpBuilder &nb, LaneEvaluator &eval, Value offset,
            ValueRange accs) {
          SmallVector<Value> next(accs.begin(), accs.end());
          FailureOr<SmallVector<Value>> lanes = eval.evaluate(
              reduce.getInput(), {AccessKind::Contiguous, {offset}});
          if (failed(lanes)) {
            status = failure();
            return next;
          }
          for (int64_t l = 0; l < width; ++l)
            next[l] = emitReduceCombine(nb, loc, reduce.getKind(), accs[l],
                                        (*lanes)[l]);
          return next;
        });
    if (failed(status))
      return failure();
    Value acc = loop.getResult(0);
    for (int64_t l = 1; l < width; ++l)
      acc = emitReduceCombine(b, loc, reduce.getKind(), acc,
                              loop.getResult(l));
    Value value = finishReduction(b, reduce, acc);
    known[reduce.getResult()] = value;
    rowEval.bind(reduce.getResult(), {value});
    if (failed(computePerRowValues(r + 1, rowEval, row, known)))
      return failure();
  }

  ValueRange yielded = group.getYield().getValues();
  if (llvm::any_of(yielded, [&](Value v) { return info.spansRows(v); }))
    emitIf(b, inRange, [&] {
      forEachVector(b, {},
                    [&](OpBuilder &, LaneEvaluator &eval, Value offset,
                        ValueRange) {
                      for (auto [i, v] : llvm::enumerate(yielded)) {
                        if (!info.spansRows(v))
                          continue;
                        FailureOr<SmallVector<Value>> lanes = eval.evaluate(
                            v, {AccessKind::Contiguous, {offset}});
                        if (failed(lanes)) {
                          status = failure();
                          break;
                        }
                        eval.store(*lanes, getElementType(group.getResult(i)),
                                   flatOutputs[i], offset);
                      }
                      return SmallVector<Value>();
                    });
    });
  if (failed(status))
    return failure();
  Value storeRow = arith::AndIOp::create(
      b, loc, inRange,
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, lane,
                            index(b, 0)));
  return storePerRowResults(b, rowEval, row, storeRow);
}

LogicalResult MultiReduceKernelBuilder::emit() {
  MLIRContext *ctx = kernel.getContext();
  OpBuilder b(ctx);
  Block &entry = kernel.getBody().front();
  b.setInsertionPointToStart(&entry);
  flattenGroupBuffers(b, loc, group, entry, flatArgs, flatOutputs);

  // One shared-memory slot per warp of the block and accumulator type, for
  // rows of more than a warp.
  int64_t rows = config.getRowsPerBlock();
  if (threads > 32)
    for (ReduceOp r : info.reduces) {
      Type accType = getComputeType(getElementType(r.getResult()));
      if (partials.count(accType))
        continue;
      auto smemType = MemRefType::get(
          {rows * (threads / 32)}, accType, MemRefLayoutAttrInterface{},
          gpu::AddressSpaceAttr::get(ctx, gpu::AddressSpace::Workgroup));
      partials[accType] = kernel.addWorkgroupAttribution(smemType, loc);
    }

  Value tid = gpu::ThreadIdOp::create(b, loc, gpu::Dimension::x);
  Value bid = gpu::BlockIdOp::create(b, loc, gpu::Dimension::x);
  lane = arith::RemUIOp::create(b, loc, tid, index(b, threads));
  rowInBlock = arith::DivUIOp::create(b, loc, tid, index(b, threads));
  int64_t numOutputs = layout.numOutputs;
  LogicalResult status = success();
  // The loop bounds are uniform across the block, so every thread reaches
  // the barriers inside.
  scf::ForOp::create(
      b, loc, bid, index(b, llvm::divideCeil(numOutputs, rows)),
      index(b, config.getGridSize()), ValueRange{},
      [&](OpBuilder &nb, Location, Value rowGroup, ValueRange) {
        Value row = arith::AddIOp::create(
            nb, loc, arith::MulIOp::create(nb, loc, rowGroup, index(nb, rows)),
            rowInBlock);
        Value inRange = arith::CmpIOp::create(
            nb, loc, arith::CmpIPredicate::ult, row, index(nb, numOutputs));
        Value clamped =
            arith::MinUIOp::create(nb, loc, row, index(nb, numOutputs - 1));
        Value base = emitRunOffset(nb, loc, clamped, layout.kept);
        status = config.getRowVectors() > 0
                     ? emitHeldRow(nb, base, clamped, inRange)
                     : emitStreamedRow(nb, base, clamped, inRange);
        scf::YieldOp::create(nb, loc);
      });
  gpu::ReturnOp::create(b, loc);
  return status;
}

LogicalResult kgraph::detail::emitMultiReduceKernel(FusedOp group,
                                                    ReduceConfigAttr config,
                                                    const ReduceGroupInfo &info,
                                                    gpu::GPUFuncOp kernel) {
  return MultiReduceKernelBuilder(group, config, info, kernel).emit();
}
