//===- MatmulEpilogue.cpp - GEMM accumulators to the stored result --------===//
//
// The epilogue of the GEMM kernel (see MatmulEmitter.cpp): each accumulator
// element, through the elementwise ops the group fused after its GEMM
// (evaluated in registers, ScalarOps.h; their other inputs read at the
// output element's coordinates, broadcast to the result shape), to one
// store, vectorized and unchecked where the whole block tile is inside C.
// Staged (GemmSharedMemoryLayout::epilogueRowBytes): the accumulators,
// rounded to the anchor's result type, are first written over the operand
// tiles (a stream-K block: past them) as the block's [tile_m][tile_n + 8]
// result tile; after a barrier
// each thread reads back runs of 16 bytes of one row, so the ops' input
// loads and the stores of a warp cover whole rows of C rather than the
// fragments' column pairs on 8 rows. Rounding first is exact: the epilogue
// starts from the rounded value either way (evaluateEpilogue).
//
//===----------------------------------------------------------------------===//

#include "MatmulKernelBuilder.h"
#include "ScalarOps.h"
#include "kgraph/Dialect/KGraph/IR/AccessMap.h"
#include "kgraph/Dialect/KGraph/IR/KGraphClassify.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"

using namespace mlir;
using namespace kgraph;
using namespace kgraph::detail;

SmallVector<Value>
MatmulKernelBuilder::loadEpilogueInput(OpBuilder &b, BlockArgument arg,
                                       EpilogueRow &at,
                                       const AccessMap *through) {
  IndexMath m{b, loc};
  auto outType = llvm::cast<ShapedType>(gemm.op->getResult(0).getType());
  ArrayRef<int64_t> out = outType.getShape();
  auto argType = llvm::cast<ShapedType>(arg.getType());
  int64_t rank = out.size();
  // The input broadcast to the result shape (through the data-movement op).
  AccessMap map =
      through ? AccessMap::broadcast(through->getOutShape(), out)
                    .compose(*through)
              : AccessMap::broadcast(argType.getShape(), out);

  // The result coordinates of GEMM element (batch, row, col): a matmul's
  // are (batch?, row, col); a conv2d's row is the pixel (n, oh, ow) and its
  // channel is batch * F/groups + col.
  SmallVector<CoordGroup> rowGroups;
  auto colGroupsAt = [&](Value col) {
    SmallVector<CoordGroup> groups;
    if (!gemm.p.conv) {
      groups.push_back({rank - 1, 1, col});
      return groups;
    }
    Value channel = p.batch == 1
                        ? col
                        : m.add(m.mul(batch, gemm.p.conv->filtersPerGroup()), col);
    groups.push_back({gemm.p.conv->nhwc ? 3 : 1, 1, channel});
    return groups;
  };
  if (!gemm.p.conv) {
    if (rank == 3)
      rowGroups.push_back({0, 1, batch});
    rowGroups.push_back({rank - 2, 1, at.row});
  } else if (gemm.p.conv->nhwc) {
    rowGroups.push_back({0, 3, at.row});
  } else {
    int64_t pixels = gemm.p.conv->outH * gemm.p.conv->outW;
    rowGroups.push_back({0, 1, m.div(at.row, pixels)});
    rowGroups.push_back({2, 2, m.rem(at.row, pixels)});
  }
  // The row part once, each column's added to it; per group the terms are
  // summed from the innermost dim.
  Value rowOffset =
      map.emitLinearIndex(b, loc, rowGroups, Value(), TermOrder::InnerFirst);
  auto indexAt = [&](int64_t e) {
    Value idx =
        map.emitLinearIndex(b, loc,
                            colGroupsAt(e == 0 ? at.col : m.add(at.col, e)),
                            rowOffset, TermOrder::InnerFirst);
    return idx ? idx : m.c(0);
  };

  Value flat = flatInputs.lookup(arg);
  Type storage = llvm::cast<MemRefType>(flat.getType()).getElementType();
  int64_t lanes = at.acc.size();
  int64_t channelDim = gemm.p.conv ? (gemm.p.conv->nhwc ? 3 : 1) : rank - 1;
  SmallVector<Value> loaded;
  auto clamp = [&](Value idx, int64_t e) {
    // Missing elements read element 0: they are computed but not stored.
    return at.checked ? m.select(at.ok[e], idx, m.c(0)) : idx;
  };
  if (map.isBroadcastAlong(channelDim)) {
    // One element for the whole run (missing elements come last).
    loaded.assign(lanes, memref::LoadOp::create(b, loc, flat,
                                                clamp(indexAt(0), 0))
                             .getResult());
  } else if (!at.checked && lanes > 1 && channelDim == rank - 1 &&
             map.isContiguousAlong(channelDim, lanes) &&
             (!gemm.p.conv || gemm.p.conv->filtersPerGroup() % lanes == 0)) {
    // Consecutive columns are consecutive elements: one aligned vector load
    // (runs start at multiples of `lanes`, see ResultAccess). Only where the
    // channels are the result's innermost dim: an nchw input contiguous
    // along the channels (a [F, 1, 1] bias) is loaded element by element.
    Value vec = vector::LoadOp::create(
        b, loc, VectorType::get({lanes}, storage), flat, indexAt(0),
        /*nontemporal=*/false, llvm::MaybeAlign(lanes * byteWidth(storage)));
    for (int64_t e = 0; e < lanes; ++e)
      loaded.push_back(vector::ExtractOp::create(b, loc, vec, e));
  } else {
    for (int64_t e = 0; e < lanes; ++e)
      loaded.push_back(
          memref::LoadOp::create(b, loc, flat, clamp(indexAt(e), e)));
  }
  for (Value &v : loaded)
    v = toComputeType(b, loc, v, argType.getElementType());
  return loaded;
}

FailureOr<SmallVector<Value>>
MatmulKernelBuilder::evaluateEpilogue(OpBuilder &b, Value v, EpilogueRow &at) {
  if (auto it = at.memo.find(v); it != at.memo.end())
    return it->second;
  SmallVector<Value> lanes;
  if (v == gemm.op->getResult(0)) {
    // The anchor's result as the op alone computes it: the accumulator
    // rounded to the result element type.
    for (Value acc : at.acc)
      lanes.push_back(roundToType(b, loc, acc, p.resultType));
  } else if (auto arg = llvm::dyn_cast<BlockArgument>(v)) {
    lanes = loadEpilogueInput(b, arg, at);
  } else if (auto cst = v.getDefiningOp<arith::ConstantOp>()) {
    FailureOr<Value> scalar = emitSplatConstant(b, loc, cst);
    if (failed(scalar))
      return failure();
    lanes.assign(at.acc.size(), *scalar);
  } else if (Operation *op = v.getDefiningOp();
             isAccessMapOp(op) &&
             llvm::isa<BlockArgument>(op->getOperand(0))) {
    // A transpose, broadcast or slice of a group input (GemmGroup.cpp).
    FailureOr<AccessMap> through = AccessMap::forDataMovementOp(op);
    if (failed(through))
      return op->emitOpError("has no static access map");
    lanes = loadEpilogueInput(b, llvm::cast<BlockArgument>(op->getOperand(0)),
                              at, &*through);
  } else {
    SmallVector<SmallVector<Value>> operands;
    for (Value operand : op->getOperands()) {
      FailureOr<SmallVector<Value>> l = evaluateEpilogue(b, operand, at);
      if (failed(l))
        return failure();
      operands.push_back(*l);
    }
    FailureOr<SmallVector<Value>> r =
        emitScalarOpLanes(b, loc, op, operands, at.acc.size());
    if (failed(r))
      return failure();
    lanes = std::move(*r);
  }
  at.memo[v] = lanes;
  return lanes;
}

Value MatmulKernelBuilder::fullTile(OpBuilder &b) {
  IndexMath im{b, loc};
  // Always so when the tiles divide C.
  if (p.m % config.getTileM() == 0 && p.n % config.getTileN() == 0)
    return arith::ConstantIntOp::create(b, loc, b.getI1Type(), 1);
  Value lastRow = im.add(rowBase, config.getTileM() - 1);
  Value rowsInside = im.ult(lastRow, im.c(p.m));
  Value lastCol = im.add(colBase, config.getTileN() - 1);
  Value colsInside = im.ult(lastCol, im.c(p.n));
  return arith::AndIOp::create(b, loc, rowsInside, colsInside);
}

LogicalResult MatmulKernelBuilder::storeRun(OpBuilder &nb, EpilogueRow &at) {
  IndexMath m{nb, loc};
  int64_t cols = at.acc.size();
  if (at.checked)
    for (int64_t e = 0; e < cols; ++e) {
      Value rowInside = m.ult(at.row, m.c(p.m));
      Value colInside = m.ult(e == 0 ? at.col : m.add(at.col, e), m.c(p.n));
      at.ok.push_back(arith::AndIOp::create(nb, loc, rowInside, colInside));
    }
  // The stored value: the anchor result, or the epilogue's, evaluated per
  // element in registers (ScalarOps.h).
  Value result = gemm.parts.result;
  Type outType = getStorageElementType(
      llvm::cast<ShapedType>(result.getType()).getElementType());
  SmallVector<Value> vals;
  if (result == gemm.op->getResult(0)) {
    for (Value v : at.acc)
      vals.push_back(toStorageType(nb, loc, v, p.resultType));
  } else {
    FailureOr<SmallVector<Value>> lanes = evaluateEpilogue(nb, result, at);
    if (failed(lanes))
      return failure();
    Type resultType = llvm::cast<ShapedType>(result.getType()).getElementType();
    for (Value v : *lanes)
      vals.push_back(toStorageType(nb, loc, v, resultType));
  }
  Value base = cAccess.locate(m, batch, at.row, at.col);
  if (!at.checked && cols > 1 && cAccess.hasAlignedRuns(cols)) {
    auto vt = VectorType::get({cols}, outType);
    Value vec = vector::FromElementsOp::create(nb, loc, vt, vals);
    vector::StoreOp::create(nb, loc, vec, flatC, base, false,
                            llvm::MaybeAlign(cols * byteWidth(outType)));
    return success();
  }
  for (int64_t e = 0; e < cols; ++e) {
    Value idx = m.add(base, e * cAccess.colStride);
    if (!at.checked) {
      memref::StoreOp::create(nb, loc, vals[e], flatC, idx);
      continue;
    }
    auto guard = scf::IfOp::create(nb, loc, at.ok[e], false);
    OpBuilder gb = guard.getThenBodyBuilder();
    memref::StoreOp::create(gb, loc, vals[e], flatC, idx);
  }
  return success();
}

void MatmulKernelBuilder::epilogueBarrier(OpBuilder &b) {
  if (config.getCopy() != CopyKind::tma) {
    gpu::BarrierOp::create(b, loc);
    return;
  }
  // Only the consumer warpgroups get here (the producer's threads exit
  // after their loads): named barrier 1 over them.
  auto i32 = [&](int64_t v) {
    return arith::ConstantIntOp::create(b, loc, b.getI32Type(), v).getResult();
  };
  NVVM::BarrierOp::create(b, loc, Type(), i32(1), i32(config.getNumThreads()),
                          NVVM::BarrierReductionAttr(), Value());
}

LogicalResult MatmulKernelBuilder::epilogue(OpBuilder &b, ArrayRef<Value> acc) {
  GemmSharedMemoryLayout layout = getGemmSharedMemoryLayout(p, config);
  if (layout.epilogueRowBytes > 0)
    return stagedEpilogue(b, acc, layout);
  // Stored from registers: each accumulator row run (consecutive columns of
  // one row) is one store, with no bounds checks where the whole block tile
  // is inside C.
  auto ifOp = scf::IfOp::create(b, loc, fullTile(b), /*withElseRegion=*/true);
  for (bool checked : {false, true}) {
    OpBuilder nb = checked ? ifOp.getElseBodyBuilder() : ifOp.getThenBodyBuilder();
    IndexMath m{nb, loc};
    for (int64_t i = 0; i < int64_t(acc.size()); ++i) {
      auto accType = llvm::cast<VectorType>(acc[i].getType());
      int64_t rowsPer = accType.getDimSize(0), cols = accType.getDimSize(1);
      for (int64_t h = 0; h < rowsPer; ++h) {
        // Elements (h, 0 .. cols) are consecutive columns of one row.
        auto [r, c] = mma->elementCoords(m, lane, i, h, 0);
        EpilogueRow at;
        at.row = m.add(m.add(rowBase, warpRow), r);
        at.col = m.add(m.add(colBase, warpCol), c);
        at.checked = checked;
        for (int64_t e = 0; e < cols; ++e)
          at.acc.push_back(vector::ExtractOp::create(nb, loc, acc[i],
                                                     ArrayRef<int64_t>{h, e}));
        if (failed(storeRun(nb, at)))
          return failure();
      }
    }
  }
  return success();
}

LogicalResult
MatmulKernelBuilder::stagedEpilogue(OpBuilder &b, ArrayRef<Value> acc,
                                    const GemmSharedMemoryLayout &layout) {
  IndexMath im{b, loc};
  int64_t tm = config.getTileM(), tn = config.getTileN();
  // The anchor's results, rounded to its type (what the epilogue starts
  // from, see evaluateEpilogue), as [tile_m][row] over the operand tiles.
  Type staged = p.resultType;
  int64_t rowElems = layout.epilogueRowBytes / byteWidth(staged);
  auto workgroup = gpu::AddressSpaceAttr::get(b.getContext(),
                                              gpu::AddressSpace::Workgroup);
  Value tile = memref::ViewOp::create(
      b, loc, MemRefType::get({tm, rowElems}, staged, AffineMap(), workgroup),
      dynamicSmem, im.add(tilesStart, layout.epilogueOffset), ValueRange{});
  // Every warp is done reading the operand tiles (the main loop left no
  // copy or wgmma in flight), or, in a region of its own (stream-K), the
  // previous tile's results.
  epilogueBarrier(b);
  for (int64_t i = 0; i < int64_t(acc.size()); ++i) {
    auto accType = llvm::cast<VectorType>(acc[i].getType());
    int64_t rowsPer = accType.getDimSize(0), cols = accType.getDimSize(1);
    for (int64_t h = 0; h < rowsPer; ++h) {
      auto [r, c] = mma->elementCoords(im, lane, i, h, 0);
      SmallVector<Value> vals;
      for (int64_t e = 0; e < cols; ++e)
        vals.push_back(toStorageType(
            b, loc,
            vector::ExtractOp::create(b, loc, acc[i], ArrayRef<int64_t>{h, e}),
            staged));
      Value vec = vector::FromElementsOp::create(
          b, loc, VectorType::get({cols}, staged), vals);
      vector::StoreOp::create(b, loc, vec, tile,
                              ValueRange{im.add(warpRow, r), im.add(warpCol, c)},
                              false, llvm::MaybeAlign(cols * byteWidth(staged)));
    }
  }
  epilogueBarrier(b);
  // Read back row-major: `vector` consecutive results per thread and step,
  // so a warp's stores cover whole rows of C.
  int64_t vector = layout.epilogueVector, perRow = tn / vector;
  int64_t total = tm * perRow, threads = config.getNumThreads();
  bool plain = gemm.parts.result == gemm.op->getResult(0);
  auto ifOp = scf::IfOp::create(b, loc, fullTile(b), /*withElseRegion=*/true);
  for (bool checked : {false, true}) {
    OpBuilder nb = checked ? ifOp.getElseBodyBuilder() : ifOp.getThenBodyBuilder();
    for (int64_t first = 0; first < total; first += threads) {
      OpBuilder sb = nb;
      IndexMath m{nb, loc};
      if (first + threads > total) {
        // The last step has fewer runs than threads.
        auto guard = scf::IfOp::create(
            nb, loc, m.ult(tid, m.c(total - first)), false);
        sb = guard.getThenBodyBuilder();
      }
      IndexMath sm{sb, loc};
      Value idx = first == 0 ? tid : sm.add(tid, first);
      Value row = sm.div(idx, perRow);
      Value col = sm.mul(sm.rem(idx, perRow), vector);
      Value run = vector::LoadOp::create(
          sb, loc, VectorType::get({vector}, staged), tile,
          ValueRange{row, col}, false,
          llvm::MaybeAlign(vector * byteWidth(staged)));
      EpilogueRow at;
      at.row = sm.add(rowBase, row);
      at.col = sm.add(colBase, col);
      at.checked = checked;
      for (int64_t e = 0; e < vector; ++e) {
        Value v = vector::ExtractOp::create(sb, loc, run, e);
        // The epilogue computes from the accumulator type.
        if (!plain)
          v = toComputeType(sb, loc, v, staged);
        at.acc.push_back(v);
      }
      if (failed(storeRun(sb, at)))
        return failure();
    }
  }
  return success();
}
