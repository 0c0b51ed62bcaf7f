//===- MatmulEmitter.cpp - GEMM kernels from #kgraph.matmul_config --------===//
//
// The kernel is split the way the configuration is:
//   - the skeleton (this file's MatmulKernelBuilder): block and warp
//     indexing, shared-memory staging of operand tiles with an asynchronous
//     multi-stage pipeline over K, and the bounds-checked epilogue;
//   - the instruction (WarpMma): how a warp loads its fragments from shared
//     memory, multiplies them into its accumulators, and which output
//     element each accumulator register holds.
// Only mma.sync m16n8k16 (f16, bf16) exists so far; fma, tf32, i8 and wgmma
// plug in as further WarpMma implementations.
//
// Shared-memory layout (per stage; `pad` = smem_padding): operand tiles are
// stored as rows of the operand's contiguous global dimension, so every
// global row segment is one asynchronous copy:
//   A: [tile_m][tile_k + pad], or [tile_k][tile_m + pad] if transpose_a
//   B: [tile_k][tile_n + pad], or [tile_n][tile_k + pad] if transpose_b
// ldmatrix (.trans where the stored rows run along K) turns either layout
// into mma fragments.
//
//===----------------------------------------------------------------------===//

#include "MatmulKernel.h"
#include "kgraph/Target/SMTargets.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/NVGPU/IR/NVGPUDialect.h"
#include "mlir/Dialect/UB/IR/UBOps.h"
#include "mlir/IR/Builders.h"

using namespace mlir;
using namespace kgraph;
using namespace kgraph::detail;


int64_t kgraph::getMatmulSharedMemoryBytes(MatmulOp op,
                                           MatmulConfigAttr config) {
  FailureOr<GemmProblem> p = getProblem(op);
  if (failed(p))
    return 0;
  int64_t pad = config.getSmemPadding();
  int64_t tm = config.getTileM(), tn = config.getTileN(), tk = config.getTileK();
  int64_t aElems = p->transA ? tk * (tm + pad) : tm * (tk + pad);
  int64_t bElems = p->transB ? tn * (tk + pad) : tk * (tn + pad);
  return config.getStages() *
         (aElems * byteWidth(p->aType) + bElems * byteWidth(p->bType));
}

LogicalResult kgraph::checkMatmulGroup(FusedOp group, MatmulConfigAttr config,
                                       const SMTarget *target) {
  Block &body = group.getBody().front();
  auto ops = body.without_terminator();
  if (std::distance(ops.begin(), ops.end()) != 1 ||
      !llvm::isa<MatmulOp>(*ops.begin()))
    return group.emitOpError("a matmul kernel group must hold exactly one "
                             "kgraph.matmul (epilogue fusion is not "
                             "implemented yet)");
  auto op = llvm::cast<MatmulOp>(*ops.begin());
  GemmProblem p = *getProblem(op);
  std::string whyNot;
  if (!createWarpMma(p, config, &whyNot))
    return op.emitOpError(whyNot);
  if (!llvm::isa<FloatType>(p.cType))
    return op.emitOpError("result type ") << p.cType << " is not supported";
  int64_t lw = config.getLoadWidth();
  auto checkOperand = [&](StringRef name, int64_t cols, int64_t tileCols,
                          Type elem) -> LogicalResult {
    if (cols % lw != 0)
      return op.emitOpError("load_width ")
             << lw << " does not divide the contiguous dimension (" << cols
             << ") of operand " << name;
    if (tileCols % lw != 0)
      return op.emitOpError("load_width ")
             << lw << " does not divide the tile's contiguous extent ("
             << tileCols << ") of operand " << name;
    int64_t bytes = lw * byteWidth(elem);
    if (bytes > 16)
      return op.emitOpError("load_width ")
             << lw << " moves " << bytes << " bytes per copy; at most 16";
    return success();
  };
  int64_t tm = config.getTileM(), tn = config.getTileN(), tk = config.getTileK();
  if (failed(checkOperand("A", p.aCols(), p.transA ? tm : tk, p.aType)) ||
      failed(checkOperand("B", p.bCols(), p.transB ? tk : tn, p.bType)))
    return failure();
  int64_t smem = getMatmulSharedMemoryBytes(op, config);
  if (target && smem > int64_t(target->sharedMemPerBlock))
    return op.emitOpError("needs ")
           << smem << " bytes of shared memory; " << target->name
           << " allows " << target->sharedMemPerBlock << " per block";
  if (target && config.getStages() > 1 && !target->hasCpAsync)
    return op.emitOpError("uses ")
           << config.getStages() << " pipeline stages, which need cp.async; "
           << target->name << " has none (use stages = 1)";
  return success();
}

namespace {

/// The kernel skeleton.
class MatmulKernelBuilder {
public:
  MatmulKernelBuilder(FusedOp group, MatmulConfigAttr config,
                      gpu::GPUFuncOp kernel, bool asyncCopies)
      : group(group), config(config), kernel(kernel), asyncCopies(asyncCopies),
        op(llvm::cast<MatmulOp>(*group.getBody().front().begin())),
        p(*getProblem(op)), loc(group.getLoc()) {}

  LogicalResult build();

private:
  /// Copies one operand tile (stage `stage`, k tile `kTile`) to shared
  /// memory.
  void loadTile(OpBuilder &b, bool isA, Value stage, Value kTile);
  void loadTiles(OpBuilder &b, Value stage, Value kTile) {
    loadTile(b, /*isA=*/true, stage, kTile);
    loadTile(b, /*isA=*/false, stage, kTile);
  }
  void commit(OpBuilder &b);
  void wait(OpBuilder &b, int64_t pending);
  SmallVector<Value> compute(OpBuilder &b, Value stage, ArrayRef<Value> acc);
  void epilogue(OpBuilder &b, ArrayRef<Value> acc);

  FusedOp group;
  MatmulConfigAttr config;
  gpu::GPUFuncOp kernel;
  bool asyncCopies;
  MatmulOp op;
  GemmProblem p;
  Location loc;
  std::unique_ptr<WarpMma> mma;

  Value flatA, flatB, flatC;
  Value aTile, bTile; // shared-memory views [stage][row][col]
  Value tid, lane, warpRow, warpCol, rowBase, colBase, batch;
};

} // namespace

void MatmulKernelBuilder::loadTile(OpBuilder &b, bool isA, Value stage,
                                   Value kTile) {
  IndexMath im{b, loc};
  int64_t tm = config.getTileM(), tn = config.getTileN(), tk = config.getTileK();
  int64_t lw = config.getLoadWidth();
  bool trans = isA ? p.transA : p.transB;
  Type elem = isA ? p.aType : p.bType;
  // Stored tile rows x cols, the global matrix rows x cols, and the tile's
  // origin in it.
  int64_t rows, cols, gRows, gCols;
  Value originRow, originCol;
  Value kBase = im.mul(kTile, tk);
  if (isA) {
    rows = trans ? tk : tm;
    cols = trans ? tm : tk;
    gRows = p.aRows();
    gCols = p.aCols();
    originRow = trans ? kBase : rowBase;
    originCol = trans ? rowBase : kBase;
  } else {
    rows = trans ? tn : tk;
    cols = trans ? tk : tn;
    gRows = p.bRows();
    gCols = p.bCols();
    originRow = trans ? colBase : kBase;
    originCol = trans ? kBase : colBase;
  }
  Value flat = isA ? flatA : flatB;
  Value tile = isA ? aTile : bTile;
  Value batchOffset = im.mul(batch, gRows * gCols);
  bool checkRows = gRows % rows != 0;
  bool checkCols = gCols % cols != 0;
  int64_t chunksPerRow = cols / lw;
  int64_t chunks = rows * chunksPerRow;
  int64_t threads = config.getNumThreads();
  bool bypassL1 = lw * byteWidth(elem) == 16;

  for (int64_t first = 0; first < chunks; first += threads) {
    Value chunk = im.add(tid, first);
    auto emitChunk = [&](OpBuilder &nb) {
      IndexMath m{nb, loc};
      Value r = m.div(chunk, chunksPerRow);
      Value cc = m.mul(m.rem(chunk, chunksPerRow), lw);
      Value gr = m.add(originRow, r);
      Value gc = m.add(originCol, cc);
      // Elements of this chunk inside the matrix: 0 past the last row,
      // min(lw, gCols - gc) otherwise (zero-filled beyond). Tiles that divide
      // the matrix exactly need no checks at all.
      Value valid, src;
      if (!checkRows && !checkCols) {
        valid = m.c(lw);
        src = m.add(batchOffset, m.add(m.mul(gr, gCols), gc));
      } else {
        Value inside;
        if (checkRows)
          inside = m.ult(gr, m.c(gRows));
        if (checkCols) {
          Value colIn = m.ult(gc, m.c(gCols));
          inside = inside ? arith::AndIOp::create(nb, loc, inside, colIn).getResult()
                          : colIn;
        }
        Value avail = checkCols ? m.minu(m.sub(m.c(gCols), m.minu(gc, m.c(gCols))),
                                         m.c(lw))
                                : m.c(lw);
        valid = m.select(inside, avail, m.c(0));
        src = m.add(batchOffset,
                    m.select(inside, m.add(m.mul(gr, gCols), gc), m.c(0)));
      }
      if (asyncCopies) {
        nvgpu::DeviceAsyncCopyOp::create(
            nb, loc, nvgpu::DeviceAsyncTokenType::get(nb.getContext()), tile,
            ValueRange{stage, r, cc}, flat, ValueRange{src},
            nb.getIndexAttr(lw), (checkRows || checkCols) ? valid : Value(),
            bypassL1 ? nb.getUnitAttr() : UnitAttr());
        return;
      }
      // Synchronous copy, element by element, zero outside the matrix.
      Value zero = arith::ConstantOp::create(nb, loc, nb.getZeroAttr(elem));
      for (int64_t e = 0; e < lw; ++e) {
        Value ok = m.ult(m.c(e), valid);
        Value at = m.select(ok, m.add(src, e), m.c(0));
        Value v = memref::LoadOp::create(nb, loc, flat, at);
        v = arith::SelectOp::create(nb, loc, ok, v, zero);
        memref::StoreOp::create(nb, loc, v, tile,
                                ValueRange{stage, r, m.add(cc, e)});
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
  for (int64_t kk = 0; kk < config.getTileK(); kk += instrK)
    values = mma->step(b, loc, aTile, bTile, stage, warpRow, warpCol, lane, kk,
                       values);
  return values;
}

void MatmulKernelBuilder::epilogue(OpBuilder &b, ArrayRef<Value> acc) {
  IndexMath im{b, loc};
  Value batchOffset = im.mul(batch, p.m * p.n);
  // Whole block tile inside C: stores need no bounds checks (always so when
  // the tiles divide C).
  Value full;
  if (p.m % config.getTileM() == 0 && p.n % config.getTileN() == 0)
    full = arith::ConstantIntOp::create(b, loc, b.getI1Type(), 1);
  else
    full = arith::AndIOp::create(
        b, loc, im.ult(im.add(rowBase, config.getTileM() - 1), im.c(p.m)),
        im.ult(im.add(colBase, config.getTileN() - 1), im.c(p.n)));
  auto ifOp = scf::IfOp::create(b, loc, full, /*withElseRegion=*/true);
  unsigned cBytes = byteWidth(p.cType);
  for (bool checked : {false, true}) {
    OpBuilder nb = checked ? ifOp.getElseBodyBuilder() : ifOp.getThenBodyBuilder();
    IndexMath m{nb, loc};
    for (int64_t i = 0; i < int64_t(acc.size()); ++i) {
      auto accType = llvm::cast<VectorType>(acc[i].getType());
      int64_t rowsPer = accType.getDimSize(0), cols = accType.getDimSize(1);
      for (int64_t h = 0; h < rowsPer; ++h) {
        // Elements (h, 0 .. cols) are consecutive columns of one row.
        auto [r, c] = mma->elementCoords(m, lane, i, h, 0);
        Value row = m.add(m.add(rowBase, warpRow), r);
        Value col = m.add(m.add(colBase, warpCol), c);
        Value base = m.add(batchOffset, m.add(m.mul(row, p.n), col));
        SmallVector<Value> vals;
        for (int64_t e = 0; e < cols; ++e) {
          Value v = vector::ExtractOp::create(nb, loc, acc[i],
                                              ArrayRef<int64_t>{h, e});
          if (v.getType() != p.cType)
            v = llvm::isa<FloatType>(p.cType)
                    ? Value(arith::TruncFOp::create(nb, loc, p.cType, v))
                    : Value(arith::TruncIOp::create(nb, loc, p.cType, v));
          vals.push_back(v);
        }
        if (!checked && cols > 1 && p.n % cols == 0) {
          auto vt = VectorType::get({cols}, p.cType);
          Value vec = vector::FromElementsOp::create(nb, loc, vt, vals);
          vector::StoreOp::create(nb, loc, vec, flatC, base, false,
                                  llvm::MaybeAlign(cols * cBytes));
          continue;
        }
        for (int64_t e = 0; e < cols; ++e) {
          Value at = m.add(base, e);
          if (!checked) {
            memref::StoreOp::create(nb, loc, vals[e], flatC, at);
            continue;
          }
          Value ok = arith::AndIOp::create(nb, loc, m.ult(row, m.c(p.m)),
                                           m.ult(m.add(col, e), m.c(p.n)));
          auto guard = scf::IfOp::create(nb, loc, ok, false);
          OpBuilder gb = guard.getThenBodyBuilder();
          memref::StoreOp::create(gb, loc, vals[e], flatC, at);
        }
      }
    }
  }
}

LogicalResult MatmulKernelBuilder::build() {
  mma = createWarpMma(p, config);
  if (!mma)
    return op.emitOpError("has no warp instruction for its configuration");
  MLIRContext *ctx = kernel.getContext();
  Block &entry = kernel.getBody().front();
  OpBuilder b = OpBuilder::atBlockBegin(&entry);
  IndexMath im{b, loc};

  auto flatten = [&](Value memref) -> Value {
    auto type = llvm::cast<MemRefType>(memref.getType());
    int64_t n = type.getNumElements();
    return memref::ReinterpretCastOp::create(
        b, loc, MemRefType::get({n}, type.getElementType()), memref, 0,
        ArrayRef<int64_t>{n}, ArrayRef<int64_t>{1});
  };
  // Kernel arguments: the group's inputs in order, then the result.
  Block &body = group.getBody().front();
  auto argOf = [&](Value v) {
    return entry.getArgument(llvm::cast<BlockArgument>(v).getArgNumber());
  };
  flatA = flatten(argOf(op.getLhs()));
  flatB = flatten(argOf(op.getRhs()));
  flatC = flatten(entry.getArgument(body.getNumArguments()));

  // Shared memory: the A stages, then the B stages.
  int64_t tm = config.getTileM(), tn = config.getTileN(), tk = config.getTileK();
  int64_t pad = config.getSmemPadding(), stages = config.getStages();
  auto workgroup = gpu::AddressSpaceAttr::get(ctx, gpu::AddressSpace::Workgroup);
  SmallVector<int64_t> aShape = p.transA ? SmallVector<int64_t>{stages, tk, tm + pad}
                                         : SmallVector<int64_t>{stages, tm, tk + pad};
  SmallVector<int64_t> bShape = p.transB ? SmallVector<int64_t>{stages, tn, tk + pad}
                                         : SmallVector<int64_t>{stages, tk, tn + pad};
  auto aType = MemRefType::get(aShape, p.aType, AffineMap(), workgroup);
  auto bType = MemRefType::get(bShape, p.bType, AffineMap(), workgroup);
  Value smem = gpu::DynamicSharedMemoryOp::create(
      b, loc,
      MemRefType::get({ShapedType::kDynamic}, b.getI8Type(), AffineMap(),
                      workgroup));
  int64_t aBytes = aType.getNumElements() * byteWidth(p.aType);
  aTile = memref::ViewOp::create(b, loc, aType, smem, im.c(0), ValueRange{});
  bTile = memref::ViewOp::create(b, loc, bType, smem, im.c(aBytes), ValueRange{});

  tid = gpu::ThreadIdOp::create(b, loc, gpu::Dimension::x);
  lane = im.rem(tid, 32);
  Value warp = im.div(tid, 32);
  warpRow = im.mul(im.div(warp, config.getWarpsN()), config.getWarpTileM());
  warpCol = im.mul(im.rem(warp, config.getWarpsN()), config.getWarpTileN());
  colBase = im.mul(gpu::BlockIdOp::create(b, loc, gpu::Dimension::x), tn);
  rowBase = im.mul(gpu::BlockIdOp::create(b, loc, gpu::Dimension::y), tm);
  batch = gpu::BlockIdOp::create(b, loc, gpu::Dimension::z);

  int64_t kTiles = (p.k + tk - 1) / tk;
  SmallVector<Value> acc = mma->zeroAccumulators(b, loc);

  // Prologue: the first stages - 1 tiles in flight.
  for (int64_t s = 0; s + 1 < stages; ++s) {
    if (s < kTiles)
      loadTiles(b, im.c(s), im.c(s));
    commit(b);
  }
  auto loop = scf::ForOp::create(b, loc, im.c(0), im.c(kTiles), im.c(1), acc);
  {
    OpBuilder lb = OpBuilder::atBlockBegin(loop.getBody());
    IndexMath lm{lb, loc};
    Value kt = loop.getInductionVar();
    Value stage = stages == 1 ? lm.c(0) : lm.rem(kt, stages);
    if (stages == 1) {
      loadTiles(lb, stage, kt);
      commit(lb);
      wait(lb, 0);
      gpu::BarrierOp::create(lb, loc);
    } else {
      // Tile kt has landed once at most stages - 2 younger groups pend; the
      // barrier also tells every warp that stage (kt - 1) % stages is free.
      wait(lb, stages - 2);
      gpu::BarrierOp::create(lb, loc);
      Value next = lm.add(kt, stages - 1);
      auto ifOp = scf::IfOp::create(lb, loc, lm.ult(next, lm.c(kTiles)), false);
      OpBuilder ib = ifOp.getThenBodyBuilder();
      IndexMath imb{ib, loc};
      loadTiles(ib, imb.rem(next, stages), next);
      commit(lb);
    }
    SmallVector<Value> iterAcc(loop.getRegionIterArgs());
    SmallVector<Value> updated = compute(lb, stage, iterAcc);
    if (stages == 1)
      gpu::BarrierOp::create(lb, loc);
    scf::YieldOp::create(lb, loc, updated);
  }
  // The loop body was built with an explicit yield: drop the default one.
  Block *loopBody = loop.getBody();
  if (loopBody->getOperations().size() > 1) {
    Operation *last = &loopBody->back();
    Operation *prev = last->getPrevNode();
    if (llvm::isa<scf::YieldOp>(last) && llvm::isa<scf::YieldOp>(prev))
      last->erase();
  }
  // Drain: the groups still pending are empty, but leave nothing in flight.
  commit(b);
  wait(b, 0);
  epilogue(b, SmallVector<Value>(loop.getResults()));
  gpu::ReturnOp::create(b, loc);
  return success();
}

LogicalResult kgraph::emitMatmulKernel(FusedOp group, MatmulConfigAttr config,
                                       gpu::GPUFuncOp kernel,
                                       const SMTarget &target) {
  bool async = target.hasCpAsync &&
               config.getLoadWidth() *
                       byteWidth(llvm::cast<ShapedType>(
                                     group.getInputs().front().getType())
                                     .getElementType()) >=
                   4;
  MatmulKernelBuilder builder(group, config, kernel, async);
  return builder.build();
}
