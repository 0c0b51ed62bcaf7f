//===- MatmulMainLoop.cpp - GEMM operand staging and the loop over K ------===//
//
// The main loop of the GEMM kernel (see MatmulEmitter.cpp): operand tiles
// copied to shared memory with cp.async, or synchronously (without cp.async,
// or through a prologue that converts them on the way), in a multi-stage
// pipeline over the k tiles; the warp instruction's steps over each staged
// tile; with copy = tma, the warp-specialized pipeline of TmaPipeline.cpp
// instead.
//
//===----------------------------------------------------------------------===//

#include "MatmulKernelBuilder.h"
#include "ScalarOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/NVGPU/IR/NVGPUDialect.h"

using namespace mlir;
using namespace kgraph;
using namespace kgraph::detail;

void MatmulKernelBuilder::loadTile(OpBuilder &b, bool isA, Value stage,
                                   Value kTile) {
  IndexMath im{b, loc};
  int64_t tm = config.getTileM(), tn = config.getTileN(), tk = config.getTileK();
  int64_t lw = config.getLoadWidth();
  bool trans = isA ? p.transposeA : p.transposeB;
  Type elem = isA ? p.operandType : p.operandType;
  // Stored tile rows x cols and the tile's origin in the stored operand.
  int64_t rows, cols;
  Value originRow, originCol;
  Value kBase = im.mul(kTile, tk);
  if (isA) {
    rows = trans ? tk : tm;
    cols = trans ? tm : tk;
    originRow = trans ? kBase : rowBase;
    originCol = trans ? rowBase : kBase;
  } else {
    rows = trans ? tn : tk;
    cols = trans ? tk : tn;
    originRow = trans ? colBase : kBase;
    originCol = trans ? kBase : colBase;
  }
  Value flat = isA ? flatA : flatB;
  Value tile = isA ? aTile : bTile;
  const OperandAccess &access = isA ? *aAccess : *bAccess;
  int64_t chunksPerRow = cols / lw;
  int64_t chunks = rows * chunksPerRow;
  int64_t threads = config.getNumThreads();
  bool bypassL1 = lw * byteWidth(elem) == 16;
  ArrayRef<Operation *> prologue =
      isA ? gemm.parts.lhsPrologue : gemm.parts.rhsPrologue;
  bool async = isA ? asyncA : asyncB;
  Type sourceType = llvm::cast<MemRefType>(flat.getType()).getElementType();

  for (int64_t first = 0; first < chunks; first += threads) {
    Value chunk = im.add(tid, first);
    auto emitChunk = [&](OpBuilder &nb) {
      IndexMath m{nb, loc};
      Value r = m.div(chunk, chunksPerRow);
      Value cc = m.mul(m.rem(chunk, chunksPerRow), lw);
      // `valid` elements of the chunk exist (null: all); the rest are
      // zero-filled.
      Value row = m.add(originRow, r);
      Value col = m.add(originCol, cc);
      auto [src, valid] = access.locate(m, batch, row, col, lw);
      if (async) {
        nvgpu::DeviceAsyncCopyOp::create(
            nb, loc, nvgpu::DeviceAsyncTokenType::get(nb.getContext()), tile,
            mma->tileIndices(m, isA, stage, r, cc), flat, ValueRange{src},
            nb.getIndexAttr(lw), valid,
            bypassL1 ? nb.getUnitAttr() : UnitAttr());
        return;
      }
      Value zero = arith::ConstantOp::create(nb, loc, nb.getZeroAttr(elem));
      if (!prologue.empty()) {
        // Synchronous copy through the prologue: the input's elements are
        // not the bytes the mma reads, so cp.async cannot move them. A run
        // that exists whole is one vector load (aligned: runs start at
        // multiples of lw); missing elements are zero in the mma type.
        SmallVector<Value> loaded;
        if (!valid && lw > 1) {
          Value vec = vector::LoadOp::create(
              nb, loc, VectorType::get({lw}, sourceType), flat, src,
              /*nontemporal=*/false,
              llvm::MaybeAlign(lw * byteWidth(sourceType)));
          for (int64_t e = 0; e < lw; ++e)
            loaded.push_back(vector::ExtractOp::create(nb, loc, vec, e));
        }
        for (int64_t e = 0; e < lw; ++e) {
          Value ok;
          if (loaded.size() < size_t(lw)) {
            Value at = m.add(src, e);
            if (valid) {
              ok = m.ult(m.c(e), valid);
              at = m.select(ok, at, m.c(0));
            }
            loaded.push_back(memref::LoadOp::create(nb, loc, flat, at));
          } else if (valid) {
            ok = m.ult(m.c(e), valid);
          }
          Value v = applyPrologue(nb, prologue, isA ? gemm.lhs : gemm.rhs,
                                  loaded[e], elem);
          if (ok)
            v = arith::SelectOp::create(nb, loc, ok, v, zero);
          memref::StoreOp::create(
              nb, loc, v, tile,
              mma->tileIndices(m, isA, stage, r, m.add(cc, e)));
        }
        return;
      }
      // Synchronous copy, element by element, zero where missing.
      for (int64_t e = 0; e < lw; ++e) {
        Value at = m.add(src, e);
        Value v;
        if (valid) {
          Value ok = m.ult(m.c(e), valid);
          at = m.select(ok, at, m.c(0));
          v = memref::LoadOp::create(nb, loc, flat, at);
          v = arith::SelectOp::create(nb, loc, ok, v, zero);
        } else {
          v = memref::LoadOp::create(nb, loc, flat, at);
        }
        memref::StoreOp::create(nb, loc, v, tile,
                                mma->tileIndices(m, isA, stage, r,
                                                 m.add(cc, e)));
      }
    };
    if (first + threads <= chunks) {
      emitChunk(b);
    } else {
      auto guard = scf::IfOp::create(b, loc, im.ult(chunk, im.c(chunks)),
                                     /*withElseRegion=*/false);
      OpBuilder nb = guard.getThenBodyBuilder();
      emitChunk(nb);
    }
  }
}

void MatmulKernelBuilder::commit(OpBuilder &b) {
  if (!asyncCopies)
    return;
  // cp.async.commit_group commits every copy issued so far; the nvvm op
  // needs no tokens, unlike nvgpu's, whose copies may sit in nested regions.
  NVVM::CpAsyncCommitGroupOp::create(b, loc);
}

void MatmulKernelBuilder::wait(OpBuilder &b, int64_t pending) {
  if (!asyncCopies)
    return;
  NVVM::CpAsyncWaitGroupOp::create(b, loc, pending);
}

SmallVector<Value> MatmulKernelBuilder::compute(OpBuilder &b, Value stage,
                                                ArrayRef<Value> acc) {
  SmallVector<Value> values(acc);
  int64_t instrK = config.getInstructionShape()[2];
  mma->beginTile(b, loc);
  for (int64_t kk = 0; kk < config.getTileK(); kk += instrK)
    values = mma->step(b, loc, aTile, bTile, stage, warpRow, warpCol, lane, kk,
                       values);
  mma->endTile(b, loc);
  return values;
}

Value MatmulKernelBuilder::applyPrologue(OpBuilder &b,
                                         ArrayRef<Operation *> ops,
                                         Value source, Value loaded,
                                         Type elem) {
  // Exactly the elementwise ops one at a time: compute type, rounded to each
  // op's result type (analyzeGemmGroup admits casts and muls by a splat).
  // `chain` is the group value `v` holds an element of.
  Value chain = source;
  Value v = toComputeType(
      b, loc, loaded, llvm::cast<ShapedType>(source.getType()).getElementType());
  for (Operation *op : ops) {
    SmallVector<Value> x;
    for (Value operand : op->getOperands()) {
      if (auto cst = operand.getDefiningOp<arith::ConstantOp>();
          cst && operand != chain)
        x.push_back(*emitSplatConstant(b, loc, cst));
      else
        x.push_back(v);
    }
    Type resultType =
        llvm::cast<ShapedType>(op->getResult(0).getType()).getElementType();
    v = roundToType(b, loc, *emitScalarOp(b, loc, op, x), resultType);
    chain = op->getResult(0);
  }
  return toStorageType(b, loc, v, elem);
}

LogicalResult MatmulKernelBuilder::mainLoop(OpBuilder &b, Value smem,
                                            Value aStart, ArrayRef<Value> acc) {
  IndexMath im{b, loc};
  MLIRContext *ctx = kernel.getContext();
  Block &entry = kernel.getBody().front();
  int64_t tk = config.getTileK(), stages = config.getStages();
  int64_t kTiles = (p.k + tk - 1) / tk;

  if (config.getCopy() == CopyKind::tma) {
    // Warp-specialized TMA pipeline (TmaPipeline.cpp); the mbarriers follow
    // the B stages (the model's layout). The tensor maps are the last kernel
    // argument.
    int64_t barriers = getGemmSharedMemoryLayout(p, config).offsetBarriers;
    Value smemBase =
        memref::ExtractAlignedPointerAsIndexOp::create(b, loc, smem);
    TmaLoopInputs in(p, config, *mma);
    // The tensor maps, then a stream-K grid's workspace, end the kernel's
    // arguments.
    unsigned numArgs = entry.getNumArguments();
    if (config.isStreamK()) {
      in.workspace = entry.getArgument(numArgs - 1);
      in.tensorMaps = entry.getArgument(numArgs - 2);
      // The word after the mbarriers (the model's layout).
      GemmSharedMemoryLayout layout = getGemmSharedMemoryLayout(p, config);
      auto workgroup =
          gpu::AddressSpaceAttr::get(ctx, gpu::AddressSpace::Workgroup);
      in.flag = memref::ViewOp::create(
          b, loc, MemRefType::get({1}, b.getI32Type(), AffineMap(), workgroup),
          smem,
          im.add(aStart,
                 layout.offsetBarriers + kTmaBarrierBytesPerStage * stages),
          ValueRange{});
    } else {
      in.tensorMaps = entry.getArgument(numArgs - 1);
    }
    in.barriers = im.add(im.add(smemBase, aStart), barriers);
    in.aTile = aTile;
    in.bTile = bTile;
    in.tid = tid;
    in.rowBase = rowBase;
    in.colBase = colBase;
    in.batch = batch;
    in.acc.assign(acc.begin(), acc.end());
    // setmaxnreg moves registers from the producer to the consumers; it
    // needs a register cap at entry: maxntid with one block per SM.
    in.setMaxRegisters = true;
    kernel->setAttr("nvvm.maxntid",
                    DenseI32ArrayAttr::get(
                        ctx, {int32_t(config.getBlockThreads()), 1, 1}));
    kernel->setAttr("nvvm.minctasm", b.getI32IntegerAttr(1));
    in.compute = [&](OpBuilder &cb, Value stage, ArrayRef<Value> a) {
      return compute(cb, stage, a);
    };
    in.finish = [&](OpBuilder &eb, ArrayRef<Value> a) {
      return mma->finish(eb, loc, a);
    };
    in.epilogue = [&](OpBuilder &eb, ArrayRef<Value> finished,
                      const TmaTile *tile) {
      if (tile) {
        // A persistent block's current tile.
        rowBase = tile->rowBase;
        colBase = tile->colBase;
        batch = tile->batch;
      }
      return epilogue(eb, finished);
    };
    if (failed(emitTmaMainLoop(b, loc, in)))
      return failure();
    gpu::ReturnOp::create(b, loc);
    return success();
  }

  // Tiles loaded ahead of the one computed: stages - 1, less the tiles an
  // asynchronous instruction may still be reading.
  int64_t ahead = stages == 1 ? 0 : stages - 1 - mma->tilesInFlight();
  // Prologue: the first `ahead` tiles in flight.
  for (int64_t s = 0; s < ahead; ++s) {
    if (s < kTiles) {
      Value stage = im.c(s);
      loadTiles(b, stage, im.c(s));
    }
    commit(b);
  }
  Value lower = im.c(0);
  Value upper = im.c(kTiles);
  auto loop = scf::ForOp::create(
      b, loc, lower, upper, im.c(1), acc,
      [&](OpBuilder &lb, Location, Value kt, ValueRange iterArgs) {
        IndexMath lm{lb, loc};
        Value stage = stages == 1 ? lm.c(0) : lm.rem(kt, stages);
        if (stages == 1) {
          loadTiles(lb, stage, kt);
          commit(lb);
          wait(lb, 0);
          mma->stageLanded(lb, loc);
          gpu::BarrierOp::create(lb, loc);
        } else {
          // Tile kt has landed once at most ahead - 1 younger groups pend;
          // the barrier also tells every warp that stage
          // (kt + ahead) % stages, last read by tile kt - 1 -
          // tilesInFlight(), is free.
          wait(lb, ahead - 1);
          mma->stageLanded(lb, loc);
          gpu::BarrierOp::create(lb, loc);
          Value next = lm.add(kt, ahead);
          auto ifOp =
              scf::IfOp::create(lb, loc, lm.ult(next, lm.c(kTiles)), false);
          OpBuilder ib = ifOp.getThenBodyBuilder();
          IndexMath imb{ib, loc};
          loadTiles(ib, imb.rem(next, stages), next);
          commit(lb);
        }
        SmallVector<Value> updated =
            compute(lb, stage, SmallVector<Value>(iterArgs));
        if (stages == 1)
          gpu::BarrierOp::create(lb, loc);
        scf::YieldOp::create(lb, loc, updated);
      });
  // Drain: the groups still pending are empty, but leave nothing in flight.
  commit(b);
  wait(b, 0);
  if (failed(epilogue(b, mma->finish(b, loc,
                                      SmallVector<Value>(loop.getResults())))))
    return failure();
  gpu::ReturnOp::create(b, loc);
  return success();
}
