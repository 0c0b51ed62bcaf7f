//===- TmaPipeline.cpp - TMA + mbarrier producer/consumer GEMM main loop --===//
//
// The main loop of a wgmma GEMM kernel with `copy = tma` (sm_90a). The
// block is the config's consumer warpgroups (C = 32 * warps_m * warps_n
// threads, tid < C, placed and computing exactly as with cp.async) plus one
// producer warpgroup (tid C .. C + 127) of which one thread, tid == C,
// issues every load. Operand tiles land through cp.async.bulk.tensor
// (2-D, or 3-D with the batch) in the layout of Wgmma.cpp's header: a box
// is 64 columns (128 bytes) x up to 256 stored rows, written with the
// tensor map's 128-byte swizzle (16-byte chunk c of row r at c ^ (r % 8);
// TMA derives the XOR from shared address bits 7..9, so every box starts
// on a 1024-byte boundary: the tiles are 1024-aligned and a box is a
// multiple of 8 rows of 128 bytes). Out-of-bounds box elements are zero
// (the tensor map's OOB fill), so the loop has no bounds checks; the
// epilogue keeps its own.
//
// Shared memory: the A stages, the B stages (as with cp.async), then
// 2 * stages mbarriers of 8 bytes: full[s] at barriers + 8 s, empty[s] at
// barriers + 8 (stages + s).
//
// mbarrier protocol (k tile kt uses stage s = kt % stages in round
// r = kt / stages; "wait(bar, P)" is mbarrier.try_wait.parity in a loop,
// which returns once the phase of parity P has completed; a fresh barrier
// is in phase 0, so waiting for parity 1 returns at once):
//   init (tid 0): full[s] expects 1 arrival (+ transaction bytes),
//     empty[s] expects C arrivals; then a block barrier (the last one: the
//     roles never meet at a bar.sync again).
//   producer (tid C), for kt = 0 .. kTiles - 1:
//     wait(empty[s], (r & 1) ^ 1)          (round 0 passes at once)
//     mbarrier.arrive.expect_tx(full[s], bytes of the A and B tiles)
//     cp.async.bulk.tensor A and B boxes -> stage s, complete_tx on full[s]
//   consumers (every tid < C), for kt = 0 .. kTiles - 1:
//     wait(full[s], r & 1)
//     wgmma.fence; the tile's wgmmas; commit; wait_group F
//       (F = Wgmma::tilesInFlight(): 1 with >= 3 stages, else 0)
//     mbarrier.arrive(empty[(kt - F) % stages]) if kt >= F: the wgmmas of
//       tile kt - F have completed, its stage may be overwritten
//   then wait_group 0 and the epilogue (no barriers).
// The producer thread exits after its last issue (its copies still complete
// on full[]); the other 127 producer threads exit at once. A hang means a
// waiter whose phase never completes: the full[s] byte count disagreeing
// with the boxes (expect_tx must equal every box's full size, OOB included),
// a tensor map that fails to load (the copy never completes_tx), or an
// empty[s] arrival count other than C.
//
// The tensor maps (CUtensorMap, 128 bytes each, 64-byte aligned) are built
// on the host (docs/launch-plan.md "tensor_maps") and passed as one extra
// kernel argument: a global buffer of 128-byte maps, A's then B's, read by
// the producer through their generic address. They are written by a host
// copy before the launch, so no fence.proxy.tensormap is emitted (its
// intrinsic needs a newer PTX than the 8.0 that sm_90a targets here).
//
//===----------------------------------------------------------------------===//

#include "MatmulKernel.h"
#include "kgraph/Dialect/KGraph/Transforms/MatmulTiling.h"
#include "kgraph/Target/ElementTypes.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

using namespace mlir;
using namespace kgraph;
using namespace kgraph::detail;


TmaOperandBoxes kgraph::detail::getTmaBoxes(const MatmulProblem &p,
                                            MatmulConfigAttr config,
                                            bool isA) {
  int64_t tm = config.getTileM(), tn = config.getTileN(),
          tk = config.getTileK();
  TmaOperandBoxes boxes;
  bool trans = isA ? p.transposeA : p.transposeB;
  boxes.rows = isA ? (trans ? tk : tm) : (trans ? tn : tk);
  boxes.cols = isA ? (trans ? tm : tk) : (trans ? tk : tn);
  boxes.boxRows = std::min(boxes.rows, kTmaMaxBoxRows);
  boxes.boxCols = kSwizzleBlockCols;
  return boxes;
}

ArrayAttr kgraph::detail::getTmaMapsAttr(MLIRContext *ctx,
                                         const MatmulProblem &p,
                                         MatmulConfigAttr config,
                                         int64_t lhsArg, int64_t rhsArg) {
  Builder b(ctx);
  SmallVector<Attribute> maps;
  for (bool isA : {true, false}) {
    TmaOperandBoxes boxes = getTmaBoxes(p, config, isA);
    Type elem = isA ? p.operandType : p.operandType;
    int64_t eb = byteWidth(elem);
    int64_t rows = isA ? p.aRows() : p.bRows();
    int64_t cols = isA ? p.aCols() : p.bCols();
    // Innermost dimension first, as cuTensorMapEncodeTiled takes them; a
    // slice read in place is its input at the slice's strides and offset.
    SmallVector<int64_t> dims = {cols, rows};
    SmallVector<int64_t> strides = {(isA ? p.aRowStride() : p.bRowStride()) * eb};
    SmallVector<int64_t> box = {boxes.boxCols, boxes.boxRows};
    if (p.batch > 1) {
      dims.push_back(p.batch);
      strides.push_back((isA ? p.aBatchStride() : p.bBatchStride()) * eb);
      box.push_back(1);
    }
    int64_t offset = (isA ? p.layoutA : p.layoutB).offset;
    NamedAttrList fields;
    fields.append("arg", b.getI64IntegerAttr(isA ? lhsArg : rhsArg));
    // getTmaConfigError admits only operands with a tensor-map data type.
    const ElementTypeInfo *info = lookupElementType(elem);
    assert(info && info->tensorMapDataType &&
           "TMA operands without a tensor-map data type");
    fields.append("dtype", b.getStringAttr(info->planName));
    bool im2col = isA && usesTmaIm2col(p);
    if (im2col) {
      // The nhwc input as [N][H][W][C] (innermost first), walked by TMA's
      // im2col mode: a box is tile_m output pixels (window origins inside
      // the corners, stepped by the strides) x 64 channels of one tap.
      const ConvGeometry &g = *p.conv;
      TmaIm2colCorners c = getTmaIm2colCorners(g);
      dims = {g.channels, g.width, g.height, g.batch};
      strides = {g.channels * eb, g.width * g.channels * eb,
                 g.height * g.width * g.channels * eb};
      fields.append("mode", b.getStringAttr("im2col"));
      fields.append("lower_corner", b.getI64ArrayAttr({c.lowerW, c.lowerH}));
      fields.append("upper_corner", b.getI64ArrayAttr({c.upperW, c.upperH}));
      fields.append("channels_per_pixel", b.getI64IntegerAttr(boxes.boxCols));
      fields.append("pixels_per_column", b.getI64IntegerAttr(boxes.rows));
      fields.append("element_strides",
                    b.getI64ArrayAttr({1, g.strideW, g.strideH, 1}));
    } else {
      fields.append("box", b.getI64ArrayAttr(box));
    }
    fields.append("dims", b.getI64ArrayAttr(dims));
    fields.append("strides", b.getI64ArrayAttr(strides));
    fields.append("swizzle", b.getStringAttr("128B"));
    fields.append("interleave", b.getStringAttr("none"));
    fields.append("l2_promotion", b.getStringAttr("256B"));
    fields.append("oob_fill", b.getStringAttr("zero"));
    if (offset != 0)
      fields.append("byte_offset", b.getI64IntegerAttr(offset * eb));
    maps.push_back(fields.getDictionary(ctx));
  }
  return b.getArrayAttr(maps);
}

/// `v` (index) as an i32.
static Value toI32(IndexMath &im, Value v) {
  return arith::IndexCastOp::create(im.b, im.loc, im.b.getI32Type(), v);
}

/// The pointer in address space `space` at integer address `addr` (index).
static Value toPointer(IndexMath &im, Value addr, unsigned space) {
  Value i64 = arith::IndexCastUIOp::create(im.b, im.loc, im.b.getI64Type(),
                                           addr);
  return LLVM::IntToPtrOp::create(
      im.b, im.loc, LLVM::LLVMPointerType::get(im.b.getContext(), space), i64);
}

namespace {
/// The pieces of the pipeline both schedules share: the barriers, one
/// producer issue and one consumer step of pipeline iteration `iter` (the
/// block's iteration count, from 0: stage iter % stages, round
/// iter / stages), whatever output tile and k tile it is.
class TmaLoop {
public:
  TmaLoop(Location loc, const TmaLoopInputs &in)
      : loc(loc), in(in), p(in.p), config(in.config) {
    stages = config.getStages();
    tk = config.getTileK();
    consumers = config.getNumThreads();
    kTiles = (p.k + tk - 1) / tk;
    inFlight = in.mma.tilesInFlight();
    boxesA = getTmaBoxes(p, config, /*isA=*/true);
    boxesB = getTmaBoxes(p, config, /*isA=*/false);
    bytesA = boxesA.rows * boxesA.cols * byteWidth(p.operandType);
    bytesB = boxesB.rows * boxesB.cols * byteWidth(p.operandType);
  }

  Value i32(OpBuilder &nb, int64_t v) {
    return arith::ConstantIntOp::create(nb, loc, nb.getI32Type(), v)
        .getResult();
  }
  Value fullBar(IndexMath &m, Value stage) {
    return toPointer(m, m.add(in.barriers, m.mul(stage, 8)), kShared);
  }
  Value emptyBar(IndexMath &m, Value stage) {
    return toPointer(m, m.add(in.barriers, m.add(m.mul(stage, 8), 8 * stages)),
                     kShared);
  }
  /// Iteration `iter`'s stage (iter % stages, index) and the parity of its
  /// round (iter / stages, i32; flipped for the producer's empty waits), in
  /// 32-bit unsigned arithmetic: a block's iteration count fits
  /// (getStreamKError), and a 64-bit division by a stage count that is not
  /// a power of two is a long dependent chain ahead of every wgmma (a
  /// 5-stage persistent kernel ran 16% slower than with 4 stages, S25-1).
  std::pair<Value, Value> slot(IndexMath &m, Value iter, bool flip) {
    Value it = toI32(m, iter);
    Value n = i32(m.b, stages);
    Value stage = arith::IndexCastUIOp::create(
        m.b, loc, m.b.getIndexType(), arith::RemUIOp::create(m.b, loc, it, n));
    Value bit = arith::AndIOp::create(
        m.b, loc, arith::DivUIOp::create(m.b, loc, it, n), i32(m.b, 1));
    if (flip)
      bit = arith::XOrIOp::create(m.b, loc, bit, i32(m.b, 1));
    return {stage, bit};
  }

  /// Barrier initialization by thread 0, published by the block barrier.
  void initBarriers(OpBuilder &b) {
    IndexMath im{b, loc};
    auto init = scf::IfOp::create(
        b, loc,
        arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, in.tid,
                              im.c(0)),
        false);
    OpBuilder ib = init.getThenBodyBuilder();
    IndexMath m{ib, loc};
    for (int64_t s = 0; s < stages; ++s) {
      Value full = fullBar(m, m.c(s));
      NVVM::MBarrierInitOp::create(ib, loc, full, i32(ib, 1), Value());
      Value empty = emptyBar(m, m.c(s));
      NVVM::MBarrierInitOp::create(ib, loc, empty, i32(ib, consumers), Value());
    }
    gpu::BarrierOp::create(b, loc);
  }

  /// Consumer step of iteration `iter`, the `iter - segStart`-th of its
  /// tile's segment: wait for the stage, multiply, release the stage whose
  /// wgmmas wait_group F has just completed (none in the segment's first F
  /// iterations: they belong to the previous segment, released by
  /// releaseTail).
  SmallVector<Value> consume(OpBuilder &lb, Value iter, Value segStart,
                             ArrayRef<Value> acc) {
    IndexMath l{lb, loc};
    Value stage, phase;
    std::tie(stage, phase) = slot(l, iter, false);
    Value full = fullBar(l, stage);
    NVVM::MBarrierTryWaitParityOp::create(lb, loc, full, phase, i32(lb, 0));
    SmallVector<Value> updated = in.compute(lb, stage, acc);
    if (inFlight == 0) {
      release(lb, iter);
      return updated;
    }
    Value ok = arith::CmpIOp::create(lb, loc, arith::CmpIPredicate::uge, iter,
                                     l.add(segStart, l.c(inFlight)));
    auto guard = scf::IfOp::create(lb, loc, ok, false);
    OpBuilder gb = guard.getThenBodyBuilder();
    IndexMath g{gb, loc};
    release(gb, g.sub(iter, g.c(inFlight)));
    return updated;
  }
  /// After a segment's accumulators are finished (no wgmma in flight): the
  /// stages of its last F iterations, up to `lastIter`, are free.
  void releaseTail(OpBuilder &b, Value lastIter, Value segStart) {
    IndexMath im{b, loc};
    for (int64_t f = 0; f < inFlight; ++f) {
      Value iter = im.sub(lastIter, im.c(f));
      Value ok = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::sge, iter,
                                       segStart);
      auto guard = scf::IfOp::create(b, loc, ok, false);
      OpBuilder gb = guard.getThenBodyBuilder();
      release(gb, iter);
    }
  }

  /// The producer thread's maps and tile bases.
  void producerSetUp(OpBuilder &tb) {
    IndexMath t{tb, loc};
    Value mapsBase = memref::ExtractAlignedPointerAsIndexOp::create(
        tb, loc, in.tensorMaps);
    mapA = toPointer(t, mapsBase, 0);
    mapB = toPointer(t, t.add(mapsBase, 128), 0);
    aBase = memref::ExtractAlignedPointerAsIndexOp::create(tb, loc, in.aTile);
    bBase = memref::ExtractAlignedPointerAsIndexOp::create(tb, loc, in.bTile);
  }

  /// The im2col walk's origin for a tile starting at GEMM row `rowBase`: the
  /// window origin of its first output pixel (n, oh, ow), (ow * stride - pad,
  /// oh * stride - pad), and n.
  SmallVector<Value> im2colOrigin(OpBuilder &tb, Value rowBase) {
    IndexMath t{tb, loc};
    const ConvGeometry &g = *p.conv;
    Value n = t.div(rowBase, g.outH * g.outW);
    Value pix = t.rem(rowBase, g.outH * g.outW);
    Value oh = t.div(pix, g.outW), ow = t.rem(pix, g.outW);
    auto origin = [&](Value o, int64_t stride, int64_t pad) {
      return arith::SubIOp::create(tb, loc, toI32(t, t.mul(o, stride)),
                                   i32(tb, pad))
          .getResult();
    };
    return {origin(ow, g.strideW, g.padLeft), origin(oh, g.strideH, g.padTop),
            toI32(t, n)};
  }

  /// Producer issue of iteration `iter`: k tile `kt` of the output tile at
  /// (rowBase, colBase, batch); `im2col` is im2colOrigin's for it.
  void produce(OpBuilder &lb, Value iter, Value kt, const TmaTile &tile,
               ArrayRef<Value> im2col) {
    IndexMath l{lb, loc};
    Value stage, phase;
    std::tie(stage, phase) = slot(l, iter, true);
    Value empty = emptyBar(l, stage);
    NVVM::MBarrierTryWaitParityOp::create(lb, loc, empty, phase, i32(lb, 0));
    Value full = fullBar(l, stage);
    NVVM::MBarrierArriveExpectTxOp::create(
        lb, loc, Type(), full, i32(lb, bytesA + bytesB),
        NVVM::MemScopeKind::CTA, /*relaxed=*/false, Value());
    Value kBase = l.mul(kt, tk);
    // A box's destination, byte `offset` of `stageBase`: a shared::cta
    // address is this CTA's shared::cluster address.
    auto boxDst = [&](Value stageBase, int64_t offset) -> Value {
      return LLVM::AddrSpaceCastOp::create(
          lb, loc, LLVM::LLVMPointerType::get(lb.getContext(), 7),
          toPointer(l, l.add(stageBase, offset), kShared));
    };
    // One box load completing on full[stage].
    auto copyBox = [&](Value dst, Value map, ArrayRef<Value> coords,
                       ArrayRef<Value> offsets, NVVM::TMALoadMode mode) {
      NVVM::CpAsyncBulkTensorGlobalToSharedClusterOp::create(
          lb, loc, dst, map, coords, full, offsets, Value(), Value(), mode,
          /*isCTAOnly=*/false, NVVM::CTAGroupKindAttr(), Value());
    };
    if (usesTmaIm2col(p)) {
      // A k tile is tile_k channels of one filter tap (tile_k divides C):
      // k = (r * KW + s) * C + c. Each 64-channel block is one im2col box
      // of tile_m pixels from the tile's first output pixel, shifted by
      // the tap's offsets.
      const ConvGeometry &g = *p.conv;
      Value tap = l.div(kBase, g.channels);
      Value c0 = l.rem(kBase, g.channels);
      auto i16 = [&](Value v) {
        return arith::TruncIOp::create(lb, loc, lb.getI16Type(), toI32(l, v))
            .getResult();
      };
      SmallVector<Value> offsets = {
          i16(l.mul(l.rem(tap, g.kernelW), g.dilationW)),
          i16(l.mul(l.div(tap, g.kernelW), g.dilationH))};
      Value stageBase = l.add(aBase, l.mul(stage, bytesA));
      for (int64_t j = 0; j * boxesA.boxCols < boxesA.cols; ++j) {
        Value dst = boxDst(stageBase, j * boxesA.rows * kSwizzleRowBytes);
        SmallVector<Value> coords = {toI32(l, l.add(c0, j * boxesA.boxCols)),
                                     im2col[0], im2col[1], im2col[2]};
        copyBox(dst, mapA, coords, offsets, NVVM::TMALoadMode::IM2COL);
      }
    }
    auto issue = [&](bool isA, Value map, Value tileBase,
                     const TmaOperandBoxes &boxes, int64_t stageBytes) {
      bool trans = isA ? p.transposeA : p.transposeB;
      Value originRow, originCol;
      if (isA) {
        originRow = trans ? kBase : tile.rowBase;
        originCol = trans ? tile.rowBase : kBase;
      } else {
        originRow = trans ? tile.colBase : kBase;
        originCol = trans ? kBase : tile.colBase;
      }
      Value stageBase = l.add(tileBase, l.mul(stage, stageBytes));
      for (int64_t c0 = 0; c0 < boxes.cols; c0 += boxes.boxCols)
        for (int64_t r0 = 0; r0 < boxes.rows; r0 += boxes.boxRows) {
          int64_t offset =
              ((c0 / kSwizzleBlockCols) * boxes.rows + r0) * kSwizzleRowBytes;
          Value dst = boxDst(stageBase, offset);
          SmallVector<Value> coords = {toI32(l, l.add(originCol, c0)),
                                       toI32(l, l.add(originRow, r0))};
          if (p.batch > 1)
            coords.push_back(toI32(l, tile.batch));
          copyBox(dst, map, coords, {}, NVVM::TMALoadMode::TILE);
        }
    };
    if (!usesTmaIm2col(p))
      issue(true, mapA, aBase, boxesA, bytesA);
    issue(false, mapB, bBase, boxesB, bytesB);
  }

  static constexpr unsigned kShared = 3;
  Location loc;
  const TmaLoopInputs &in;
  const MatmulProblem &p;
  MatmulConfigAttr config;
  int64_t stages, tk, consumers, kTiles, inFlight, bytesA, bytesB;
  TmaOperandBoxes boxesA, boxesB;
  Value mapA, mapB, aBase, bBase;

private:
  void release(OpBuilder &rb, Value iter) {
    IndexMath r{rb, loc};
    Value stage = slot(r, iter, false).first;
    NVVM::MBarrierArriveOp::create(rb, loc, Type(), emptyBar(r, stage), Value(),
                                   NVVM::MemScopeKind::CTA, /*relaxed=*/false);
  }
};
} // namespace

/// Splits the consumer and producer roles; `consumerBody` and
/// `producerBody` (the producer's leader thread) fill them.
static void emitRoles(OpBuilder &b, Location loc, TmaLoop &loop,
                      function_ref<LogicalResult(OpBuilder &)> consumerBody,
                      function_ref<void(OpBuilder &)> producerBody,
                      LogicalResult &result) {
  const TmaLoopInputs &in = loop.in;
  IndexMath im{b, loc};
  auto roles = scf::IfOp::create(b, loc, im.ult(in.tid, im.c(loop.consumers)),
                                 /*withElseRegion=*/true);
  {
    OpBuilder cb = roles.getThenBodyBuilder();
    if (in.setMaxRegisters)
      NVVM::SetMaxRegisterOp::create(cb, loc, kTmaConsumerRegisters,
                                     NVVM::SetMaxRegisterAction::increase);
    result = consumerBody(cb);
  }
  {
    OpBuilder pb = roles.getElseBodyBuilder();
    IndexMath m{pb, loc};
    if (in.setMaxRegisters)
      NVVM::SetMaxRegisterOp::create(pb, loc, kTmaProducerRegisters,
                                     NVVM::SetMaxRegisterAction::decrease);
    auto leader = scf::IfOp::create(
        pb, loc,
        arith::CmpIOp::create(pb, loc, arith::CmpIPredicate::eq, in.tid,
                              m.c(loop.consumers)),
        false);
    OpBuilder tb = leader.getThenBodyBuilder();
    loop.producerSetUp(tb);
    producerBody(tb);
  }
}

/// One block, one output tile: k tiles 0 .. kTiles - 1, then the epilogue.
static LogicalResult emitDataParallel(OpBuilder &b, Location loc,
                                      TmaLoop &loop) {
  const TmaLoopInputs &in = loop.in;
  LogicalResult result = success();
  TmaTile own{in.rowBase, in.colBase, in.batch};
  emitRoles(
      b, loc, loop,
      [&](OpBuilder &cb) -> LogicalResult {
        IndexMath m{cb, loc};
        Value first = m.c(0);
        auto forOp = scf::ForOp::create(
            cb, loc, first, m.c(loop.kTiles), m.c(1), in.acc,
            [&](OpBuilder &lb, Location, Value kt, ValueRange iterArgs) {
              SmallVector<Value> updated =
                  loop.consume(lb, kt, first, SmallVector<Value>(iterArgs));
              scf::YieldOp::create(lb, loc, updated);
            });
        return in.epilogue(
            cb, in.finish(cb, SmallVector<Value>(forOp.getResults())), nullptr);
      },
      [&](OpBuilder &tb) {
        IndexMath t{tb, loc};
        SmallVector<Value> im2col;
        if (usesTmaIm2col(loop.p))
          im2col = loop.im2colOrigin(tb, in.rowBase);
        auto forOp =
            scf::ForOp::create(tb, loc, t.c(0), t.c(loop.kTiles), t.c(1));
        OpBuilder lb = OpBuilder::atBlockBegin(forOp.getBody());
        Value kt = forOp.getInductionVar();
        loop.produce(lb, kt, kt, own, im2col);
      },
      result);
  return result;
}

namespace {
/// The stream-K schedule (getStreamKSchedule) as the kernel walks it: a
/// block's segments, each the k tiles [kBegin, kBegin + len) of one output
/// tile; segment s < rounds is tile s B + b, whole; the next ones are the
/// block's head or pool pieces of the remaining tiles.
struct StreamKGrid {
  StreamKGrid(const MatmulProblem &p, MatmulConfigAttr config)
      : ws(getStreamKWorkspace(p, config)), sched(ws.schedule),
        tilesM(llvm::divideCeilSigned(p.m, config.getTileM())),
        tilesN(llvm::divideCeilSigned(p.n, config.getTileN())) {}

  /// The workspace's layout (counters, partial slots) and the schedule.
  StreamKWorkspace ws;
  StreamKSchedule sched;
  int64_t tilesM, tilesN;

  struct Segment {
    Value tile, kBegin, len;
    /// A split tile's index among the remaining ones, and this segment's
    /// slot among its S + 1 partials (0: the head); only for split tiles.
    Value split, part;
  };

  /// How many segments block `blk` has.
  Value count(IndexMath &m, Value blk) const {
    int64_t rounds = sched.rounds, rem = sched.remainder;
    if (rem == 0)
      return m.c(rounds);
    Value isHead = m.ult(blk, m.c(rem));
    if (!sched.splits())
      return m.add(m.select(isHead, m.c(1), m.c(0)), rounds);
    // Pool block p has the units p, p + P, ... below R S.
    int64_t units = rem * sched.pieces, pool = sched.poolBlocks();
    Value p = m.select(isHead, m.c(0), m.sub(blk, m.c(rem)));
    Value has = m.ult(p, m.c(units));
    Value left = m.sub(m.c(units + pool - 1), m.minu(p, m.c(units)));
    Value poolCount = m.select(has, m.div(left, pool), m.c(0));
    return m.add(m.select(isHead, m.c(1), poolCount), rounds);
  }

  /// Segment `s` of block `blk`.
  Segment segment(IndexMath &m, Value blk, Value s) const {
    int64_t B = sched.blocks, K = sched.kTiles, rounds = sched.rounds,
            rem = sched.remainder;
    Value isRound = m.ult(s, m.c(rounds));
    Value roundTile = m.add(m.mul(s, B), blk);
    if (rem == 0)
      return {roundTile, m.c(0), m.c(K), Value(), Value()};
    Value isHead = m.ult(blk, m.c(rem));
    Value headTile = m.add(blk, rounds * B);
    if (!sched.splits())
      return {m.select(isRound, roundTile, headTile), m.c(0), m.c(K), Value(),
              Value()};
    // Pool unit u = p + (s - rounds) P: piece u / R of remaining tile u % R.
    int64_t pool = sched.poolBlocks(), X = sched.head, L = sched.pieceLength;
    Value p = m.select(isHead, m.c(0), m.sub(blk, m.c(rem)));
    Value later = m.select(isRound, m.c(0), m.sub(s, m.c(rounds)));
    Value u = m.add(p, m.mul(later, pool));
    Value piece = m.div(u, rem);
    Value split = m.select(isHead, blk, m.rem(u, rem));
    Value pieceBegin = m.add(m.mul(piece, L), X);
    Value pieceLen = m.minu(m.c(L), m.sub(m.c(K), pieceBegin));
    Value kBegin = m.select(isHead, m.c(0), pieceBegin);
    Value len = m.select(isHead, m.c(X), pieceLen);
    Value part = m.select(isHead, m.c(0), m.add(piece, 1));
    return {m.select(isRound, roundTile, m.add(split, rounds * B)),
            m.select(isRound, m.c(0), kBegin), m.select(isRound, m.c(K), len),
            split, part};
  }

  /// Output tile `tile` (batch-major, then M tiles, then N tiles).
  TmaTile decode(IndexMath &m, Value tile, int64_t tm, int64_t tn) const {
    Value col = m.rem(tile, tilesN);
    Value rest = m.div(tile, tilesN);
    Value row = m.rem(rest, tilesM);
    return {m.mul(row, tm), m.mul(col, tn), m.div(rest, tilesM)};
  }

  /// A loop over block `blk`'s `count` segments that carries the pipeline
  /// iteration of each one's first (counted from the block's first):
  /// `body` emits one segment starting at iteration `segStart`.
  LogicalResult forEachSegment(
      OpBuilder &b, Location loc, Value blk, Value count,
      function_ref<LogicalResult(OpBuilder &, Value, const Segment &)> body)
      const {
    IndexMath m{b, loc};
    auto segLoop = scf::ForOp::create(b, loc, m.c(0), count, m.c(1),
                                      ValueRange{m.c(0)});
    OpBuilder sb = OpBuilder::atBlockBegin(segLoop.getBody());
    IndexMath s{sb, loc};
    Value segStart = segLoop.getRegionIterArgs()[0];
    Segment seg = segment(s, blk, segLoop.getInductionVar());
    if (failed(body(sb, segStart, seg)))
      return failure();
    scf::YieldOp::create(sb, loc, ValueRange{s.add(segStart, seg.len)});
    return success();
  }
};
} // namespace

/// The finished accumulators `acc` of segment `seg` (not a whole tile: a
/// split tile's head or piece): the last of the tile's S + 1 blocks to
/// arrive gets the sum of its partials in slot order (head, then the
/// pieces), and true; the others write their partial to the tile's slot
/// for them in the workspace and get false. The head (it ends its block's
/// work, so it usually finishes last) first looks whether every piece has
/// arrived: then it adds its registers in place of its partial, which it
/// does not write (the same values, so the same sum bit for bit whoever is
/// last).
static FailureOr<SmallVector<Value>>
emitStreamKFixup(OpBuilder &b, Location loc, TmaLoop &loop,
                 const StreamKGrid &grid, const StreamKGrid::Segment &seg,
                 ArrayRef<Value> acc) {
  const TmaLoopInputs &in = loop.in;
  IndexMath im{b, loc};
  const StreamKWorkspace &ws = grid.ws;
  int64_t parts = grid.sched.pieces + 1;
  Type accType = loop.p.getAccumulatorType();
  int64_t accBytes = byteWidth(accType);
  auto vecType = llvm::dyn_cast<VectorType>(acc.front().getType());
  int64_t threads = loop.consumers;
  int64_t slotElems = ws.slotElements;
  if (!vecType ||
      int64_t(acc.size()) * threads * vecType.getNumElements() != slotElems)
    return emitError(loc, "internal error: the stream-K partial tile is not "
                          "the block's accumulators");
  int64_t perVector = vecType.getNumElements();
  auto flatType = VectorType::get({perVector}, accType);
  // Each thread's values at [slot][vector v][thread][perVector]: a warp's
  // accesses are contiguous.
  auto counters = memref::ViewOp::create(
      b, loc, MemRefType::get({grid.sched.remainder}, b.getI32Type()),
      in.workspace, im.c(0), ValueRange{});
  auto partials = memref::ViewOp::create(
      b, loc,
      MemRefType::get({grid.sched.remainder * parts * slotElems}, accType),
      in.workspace, im.c(ws.partialsOffset), ValueRange{});
  auto slotIndex = [&](IndexMath &m, Value part, int64_t v) {
    Value slot = m.add(m.mul(seg.split, parts), part);
    return m.add(m.mul(slot, slotElems),
                 m.add(m.mul(in.tid, perVector), v * threads * perVector));
  };
  auto i32c = [&](OpBuilder &nb, int64_t v) {
    return arith::ConstantIntOp::create(nb, loc, nb.getI32Type(), v)
        .getResult();
  };
  auto i1c = [&](OpBuilder &nb, bool v) {
    return arith::ConstantIntOp::create(nb, loc, nb.getI1Type(), v).getResult();
  };
  auto consumersBarrier = [&](OpBuilder &nb) {
    NVVM::BarrierOp::create(nb, loc, Type(), i32c(nb, 1), i32c(nb, threads),
                            NVVM::BarrierReductionAttr(), Value());
  };
  auto isLeader = [&](OpBuilder &nb) {
    IndexMath m{nb, loc};
    return arith::CmpIOp::create(nb, loc, arith::CmpIPredicate::eq, in.tid,
                                 m.c(0))
        .getResult();
  };
  // Thread 0's answer to every consumer, through the shared word; callers
  // put a barrier before it, which every thread passes after reading the
  // previous answer.
  auto broadcast = [&](OpBuilder &nb, function_ref<Value(OpBuilder &)> answer) {
    IndexMath m{nb, loc};
    auto ifLeader = scf::IfOp::create(nb, loc, isLeader(nb), false);
    OpBuilder lb = ifLeader.getThenBodyBuilder();
    memref::StoreOp::create(
        lb, loc, arith::ExtUIOp::create(lb, loc, lb.getI32Type(), answer(lb)),
        in.flag, ValueRange{IndexMath{lb, loc}.c(0)});
    consumersBarrier(nb);
    Value word = memref::LoadOp::create(nb, loc, in.flag, ValueRange{m.c(0)});
    return arith::CmpIOp::create(nb, loc, arith::CmpIPredicate::ne, word,
                                 i32c(nb, 0))
        .getResult();
  };
  // Thread 0 adds `delta` to the tile's arrival counter: were all the
  // tile's other blocks there before?
  auto countArrival = [&](OpBuilder &lb, int64_t delta) {
    Value old = memref::AtomicRMWOp::create(lb, loc, arith::AtomicRMWKind::addi,
                                            i32c(lb, delta), counters,
                                            ValueRange{seg.split});
    return arith::CmpIOp::create(lb, loc, arith::CmpIPredicate::eq, old,
                                 i32c(lb, parts - 1))
        .getResult();
  };
  SmallVector<Type> types = {b.getI1Type()};
  for (Value v : acc)
    types.push_back(v.getType());
  // The sum, after an acquire: 0 + the head's partial (or `own`, the same
  // values) + the pieces' partials in order; thread 0 resets the tile's
  // counter for the next launch.
  auto finishTile = [&](OpBuilder &sb, ArrayRef<Value> own) {
    IndexMath sm{sb, loc};
    NVVM::MembarOp::create(sb, loc, NVVM::MemScopeKind::GPU);
    auto reset = scf::IfOp::create(sb, loc, isLeader(sb), false);
    OpBuilder rb = reset.getThenBodyBuilder();
    memref::StoreOp::create(rb, loc, i32c(rb, 0), counters,
                            ValueRange{seg.split});
    Value zero = arith::ConstantOp::create(sb, loc, sb.getZeroAttr(flatType));
    auto add = [&](OpBuilder &ab, Value x, Value y) {
      return llvm::isa<FloatType>(accType)
                 ? arith::AddFOp::create(ab, loc, x, y).getResult()
                 : arith::AddIOp::create(ab, loc, x, y).getResult();
    };
    SmallVector<Value> init;
    for (size_t v = 0; v < acc.size(); ++v)
      init.push_back(own.empty()
                         ? zero
                         : add(sb, zero,
                               vector::ShapeCastOp::create(sb, loc, flatType,
                                                           own[v])));
    auto sum = scf::ForOp::create(
        sb, loc, sm.c(own.empty() ? 0 : 1), sm.c(parts), sm.c(1), init,
        [&](OpBuilder &fb, Location, Value part, ValueRange iterArgs) {
          IndexMath f{fb, loc};
          SmallVector<Value> next;
          for (size_t v = 0; v < acc.size(); ++v) {
            Value partial = vector::LoadOp::create(
                fb, loc, flatType, partials,
                ValueRange{slotIndex(f, part, v)}, false,
                llvm::MaybeAlign(perVector * accBytes));
            next.push_back(add(fb, iterArgs[v], partial));
          }
          scf::YieldOp::create(fb, loc, next);
        });
    SmallVector<Value> yield = {i1c(sb, true)};
    for (Value v : sum.getResults())
      yield.push_back(vector::ShapeCastOp::create(sb, loc, vecType, v));
    scf::YieldOp::create(sb, loc, yield);
  };
  auto yieldOwn = [&](OpBuilder &nb, bool last) {
    SmallVector<Value> yield = {i1c(nb, last)};
    yield.append(acc.begin(), acc.end());
    scf::YieldOp::create(nb, loc, yield);
  };

  Value isHead = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq,
                                       seg.part, im.c(0));
  // The head: has everyone else arrived?
  auto ifHead = scf::IfOp::create(b, loc, {b.getI1Type()}, isHead, true);
  {
    OpBuilder hb = ifHead.getThenBodyBuilder();
    // Every thread has read the shared word's last answer.
    consumersBarrier(hb);
    Value others =
        broadcast(hb, [&](OpBuilder &lb) { return countArrival(lb, 0); });
    scf::YieldOp::create(hb, loc, ValueRange{others});
  }
  {
    OpBuilder nb = ifHead.getElseBodyBuilder();
    scf::YieldOp::create(nb, loc, ValueRange{i1c(nb, false)});
  }
  auto ifEarly =
      scf::IfOp::create(b, loc, types, ifHead.getResult(0), /*withElse=*/true);
  {
    OpBuilder sb = ifEarly.getThenBodyBuilder();
    finishTile(sb, acc);
  }
  {
    // Write the partial to this segment's slot, publish it, arrive.
    OpBuilder wb = ifEarly.getElseBodyBuilder();
    IndexMath w{wb, loc};
    for (size_t v = 0; v < acc.size(); ++v) {
      Value flat = vector::ShapeCastOp::create(wb, loc, flatType, acc[v]);
      vector::StoreOp::create(wb, loc, flat, partials,
                              ValueRange{slotIndex(w, seg.part, v)}, false,
                              llvm::MaybeAlign(perVector * accBytes));
    }
    NVVM::MembarOp::create(wb, loc, NVVM::MemScopeKind::GPU);
    consumersBarrier(wb);
    Value isLast =
        broadcast(wb, [&](OpBuilder &lb) { return countArrival(lb, 1); });
    auto ifLast = scf::IfOp::create(wb, loc, types, isLast, true);
    {
      OpBuilder sb = ifLast.getThenBodyBuilder();
      finishTile(sb, {});
    }
    {
      OpBuilder nb = ifLast.getElseBodyBuilder();
      yieldOwn(nb, false);
    }
    scf::YieldOp::create(wb, loc, ifLast.getResults());
  }
  return SmallVector<Value>(ifEarly.getResults());
}

/// A persistent grid of stream_k blocks walking the stream-K schedule
/// (getStreamKSchedule): whole tiles in rounds, then the split remainder.
static LogicalResult emitStreamK(OpBuilder &b, Location loc, TmaLoop &loop) {
  const TmaLoopInputs &in = loop.in;
  const MatmulProblem &p = loop.p;
  int64_t tm = loop.config.getTileM(), tn = loop.config.getTileN();
  int64_t K = loop.kTiles;
  StreamKGrid grid(p, loop.config);
  if (!in.workspace)
    return emitError(loc, "internal error: a stream-K kernel without its "
                          "workspace argument");
  IndexMath im{b, loc};
  Value blk = gpu::BlockIdOp::create(b, loc, gpu::Dimension::x);
  Value segments = grid.count(im, blk);
  LogicalResult result = success();
  emitRoles(
      b, loc, loop,
      [&](OpBuilder &cb) -> LogicalResult {
        return grid.forEachSegment(
            cb, loc, blk, segments,
            [&](OpBuilder &wb, Value segStart,
                const StreamKGrid::Segment &seg) -> LogicalResult {
              IndexMath w{wb, loc};
              Value segEnd = w.add(segStart, seg.len);
              auto forOp = scf::ForOp::create(
                  wb, loc, segStart, segEnd, w.c(1), in.acc,
                  [&](OpBuilder &lb, Location, Value iter,
                      ValueRange iterArgs) {
                    SmallVector<Value> updated = loop.consume(
                        lb, iter, segStart, SmallVector<Value>(iterArgs));
                    scf::YieldOp::create(lb, loc, updated);
                  });
              SmallVector<Value> finished =
                  in.finish(wb, SmallVector<Value>(forOp.getResults()));
              loop.releaseTail(wb, w.sub(segEnd, w.c(1)), segStart);
              SmallVector<Value> fixed = {
                  arith::ConstantIntOp::create(wb, loc, wb.getI1Type(), 1)};
              fixed.append(finished.begin(), finished.end());
              if (grid.sched.splits()) {
                // A whole tile keeps its accumulators; a split one goes through
                // the workspace.
                Value whole = arith::CmpIOp::create(
                    wb, loc, arith::CmpIPredicate::eq, seg.len, w.c(K));
                SmallVector<Type> types;
                for (Value v : fixed)
                  types.push_back(v.getType());
                auto ifWhole = scf::IfOp::create(wb, loc, types, whole, true);
                OpBuilder tb = ifWhole.getThenBodyBuilder();
                scf::YieldOp::create(tb, loc, fixed);
                OpBuilder eb = ifWhole.getElseBodyBuilder();
                FailureOr<SmallVector<Value>> fixedOr =
                    emitStreamKFixup(eb, loc, loop, grid, seg, finished);
                if (failed(fixedOr))
                  return failure();
                scf::YieldOp::create(eb, loc, *fixedOr);
                fixed.assign(ifWhole.getResults().begin(),
                             ifWhole.getResults().end());
              }
              auto ifStore = scf::IfOp::create(wb, loc, fixed[0], false);
              OpBuilder sb = ifStore.getThenBodyBuilder();
              IndexMath s{sb, loc};
              TmaTile coords = grid.decode(s, seg.tile, tm, tn);
              return in.epilogue(sb, ArrayRef<Value>(fixed).drop_front(),
                                 &coords);
            });
      },
      [&](OpBuilder &tb) {
        (void)grid.forEachSegment(
            tb, loc, blk, segments,
            [&](OpBuilder &sb, Value segStart,
                const StreamKGrid::Segment &seg) {
              IndexMath s{sb, loc};
              TmaTile tile = grid.decode(s, seg.tile, tm, tn);
              SmallVector<Value> im2col;
              if (usesTmaIm2col(p))
                im2col = loop.im2colOrigin(sb, tile.rowBase);
              auto forOp = scf::ForOp::create(sb, loc, s.c(0), seg.len, s.c(1));
              OpBuilder lb = OpBuilder::atBlockBegin(forOp.getBody());
              IndexMath l{lb, loc};
              Value i = forOp.getInductionVar();
              loop.produce(lb, l.add(segStart, i), l.add(seg.kBegin, i), tile,
                           im2col);
              return success();
            });
      },
      result);
  return result;
}

LogicalResult kgraph::detail::emitTmaMainLoop(OpBuilder &b, Location loc,
                                              const TmaLoopInputs &in) {
  TmaLoop loop(loc, in);
  loop.initBarriers(b);
  if (in.config.isStreamK())
    return emitStreamK(b, loc, loop);
  return emitDataParallel(b, loc, loop);
}
