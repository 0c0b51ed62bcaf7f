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

LogicalResult kgraph::detail::emitTmaMainLoop(OpBuilder &b, Location loc,
                                              const TmaLoopInputs &in) {
  IndexMath im{b, loc};
  const MatmulProblem &p = in.p;
  MatmulConfigAttr config = in.config;
  int64_t stages = config.getStages();
  int64_t tk = config.getTileK();
  int64_t consumers = config.getNumThreads();
  int64_t kTiles = (p.k + tk - 1) / tk;
  int64_t inFlight = in.mma.tilesInFlight();
  TmaOperandBoxes boxesA = getTmaBoxes(p, config, /*isA=*/true);
  TmaOperandBoxes boxesB = getTmaBoxes(p, config, /*isA=*/false);
  int64_t bytesA = boxesA.rows * boxesA.cols * byteWidth(p.operandType);
  int64_t bytesB = boxesB.rows * boxesB.cols * byteWidth(p.operandType);
  constexpr unsigned kShared = 3;

  auto fullBar = [&](IndexMath &m, Value stage) {
    return toPointer(m, m.add(in.barriers, m.mul(stage, 8)), kShared);
  };
  auto emptyBar = [&](IndexMath &m, Value stage) {
    return toPointer(m, m.add(in.barriers, m.add(m.mul(stage, 8), 8 * stages)),
                     kShared);
  };
  auto i32 = [&](OpBuilder &nb, int64_t v) {
    return arith::ConstantIntOp::create(nb, loc, nb.getI32Type(), v)
        .getResult();
  };
  // Parity of round kt / stages, as i32.
  auto parity = [&](IndexMath &m, Value kt, bool flip) {
    Value bit = toI32(m, m.rem(m.div(kt, stages), 2));
    if (flip)
      bit = arith::XOrIOp::create(m.b, loc, bit, i32(m.b, 1));
    return bit;
  };

  // Barrier initialization by thread 0, published by the block barrier.
  {
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
      NVVM::MBarrierInitOp::create(ib, loc, empty, i32(ib, consumers),
                                   Value());
    }
    gpu::BarrierOp::create(b, loc);
  }

  auto roles = scf::IfOp::create(b, loc, im.ult(in.tid, im.c(consumers)),
                                 /*withElseRegion=*/true);
  // Consumers.
  {
    OpBuilder cb = roles.getThenBodyBuilder();
    IndexMath m{cb, loc};
    if (in.setMaxRegisters)
      NVVM::SetMaxRegisterOp::create(cb, loc, kTmaConsumerRegisters,
                                     NVVM::SetMaxRegisterAction::increase);
    Value lower = m.c(0);
    Value upper = m.c(kTiles);
    auto loop = scf::ForOp::create(
        cb, loc, lower, upper, m.c(1), in.acc,
        [&](OpBuilder &lb, Location, Value kt, ValueRange iterArgs) {
          IndexMath l{lb, loc};
          Value stage = l.rem(kt, stages);
          Value full = fullBar(l, stage);
          Value phase = parity(l, kt, false);
          NVVM::MBarrierTryWaitParityOp::create(lb, loc, full, phase,
                                                i32(lb, 0));
          SmallVector<Value> updated =
              in.compute(lb, stage, SmallVector<Value>(iterArgs));
          // Release the stage whose wgmmas wait_group F has just completed.
          Value done = kt;
          Value ok;
          if (inFlight > 0) {
            ok = arith::CmpIOp::create(lb, loc, arith::CmpIPredicate::uge, kt,
                                       l.c(inFlight));
            Value ahead = l.add(kt, l.c(stages));
            done = l.sub(ahead, l.c(inFlight));
          }
          auto release = [&](OpBuilder &rb) {
            IndexMath r{rb, loc};
            NVVM::MBarrierArriveOp::create(
                rb, loc, Type(), emptyBar(r, r.rem(done, stages)), Value(),
                NVVM::MemScopeKind::CTA, /*relaxed=*/false);
          };
          if (ok) {
            auto guard = scf::IfOp::create(lb, loc, ok, false);
            OpBuilder gb = guard.getThenBodyBuilder();
            release(gb);
          } else {
            release(lb);
          }
          scf::YieldOp::create(lb, loc, updated);
        });
    if (failed(in.epilogue(cb, SmallVector<Value>(loop.getResults()))))
      return failure();
  }
  // Producer.
  {
    OpBuilder pb = roles.getElseBodyBuilder();
    IndexMath m{pb, loc};
    if (in.setMaxRegisters)
      NVVM::SetMaxRegisterOp::create(pb, loc, kTmaProducerRegisters,
                                     NVVM::SetMaxRegisterAction::decrease);
    auto leader = scf::IfOp::create(
        pb, loc,
        arith::CmpIOp::create(pb, loc, arith::CmpIPredicate::eq, in.tid,
                              m.c(consumers)),
        false);
    OpBuilder tb = leader.getThenBodyBuilder();
    IndexMath t{tb, loc};
    Value mapsBase = memref::ExtractAlignedPointerAsIndexOp::create(
        tb, loc, in.tensorMaps);
    Value mapA = toPointer(t, mapsBase, 0);
    Value mapB = toPointer(t, t.add(mapsBase, 128), 0);
    Value aBase =
        memref::ExtractAlignedPointerAsIndexOp::create(tb, loc, in.aTile);
    Value bBase =
        memref::ExtractAlignedPointerAsIndexOp::create(tb, loc, in.bTile);
    // The im2col walk starts at the window origin of the block's first
    // output pixel (n, oh, ow): (ow * stride - pad, oh * stride - pad).
    Value im2colW, im2colH, im2colN;
    if (usesTmaIm2col(p)) {
      const ConvGeometry &g = *p.conv;
      Value n = t.div(in.rowBase, g.outH * g.outW);
      Value pix = t.rem(in.rowBase, g.outH * g.outW);
      Value oh = t.div(pix, g.outW), ow = t.rem(pix, g.outW);
      auto origin = [&](Value o, int64_t stride, int64_t pad) {
        return arith::SubIOp::create(tb, loc, toI32(t, t.mul(o, stride)),
                                     i32(tb, pad))
            .getResult();
      };
      im2colW = origin(ow, g.strideW, g.padLeft);
      im2colH = origin(oh, g.strideH, g.padTop);
      im2colN = toI32(t, n);
    }
    Value lower = t.c(0);
    Value upper = t.c(kTiles);
    auto loop = scf::ForOp::create(tb, loc, lower, upper, t.c(1));
    OpBuilder lb = OpBuilder::atBlockBegin(loop.getBody());
    IndexMath l{lb, loc};
    Value kt = loop.getInductionVar();
    Value stage = l.rem(kt, stages);
    Value empty = emptyBar(l, stage);
    Value phase = parity(l, kt, true);
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
      // of tile_m pixels from the block's first output pixel, shifted by
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
                                     im2colW, im2colH, im2colN};
        copyBox(dst, mapA, coords, offsets, NVVM::TMALoadMode::IM2COL);
      }
    }
    auto issue = [&](bool isA, Value map, Value tileBase,
                     const TmaOperandBoxes &boxes, int64_t stageBytes) {
      bool trans = isA ? p.transposeA : p.transposeB;
      Value originRow, originCol;
      if (isA) {
        originRow = trans ? kBase : in.rowBase;
        originCol = trans ? in.rowBase : kBase;
      } else {
        originRow = trans ? in.colBase : kBase;
        originCol = trans ? kBase : in.colBase;
      }
      Value stageBase = l.add(tileBase, l.mul(stage, stageBytes));
      for (int64_t c0 = 0; c0 < boxes.cols; c0 += boxes.boxCols)
        for (int64_t r0 = 0; r0 < boxes.rows; r0 += boxes.boxRows) {
          int64_t offset = ((c0 / kSwizzleBlockCols) * boxes.rows + r0) * kSwizzleRowBytes;
          Value dst = boxDst(stageBase, offset);
          SmallVector<Value> coords = {toI32(l, l.add(originCol, c0)),
                                       toI32(l, l.add(originRow, r0))};
          if (p.batch > 1)
            coords.push_back(toI32(l, in.batch));
          copyBox(dst, map, coords, {}, NVVM::TMALoadMode::TILE);
        }
    };
    if (!usesTmaIm2col(p))
      issue(true, mapA, aBase, boxesA, bytesA);
    issue(false, mapB, bBase, boxesB, bytesB);
  }
  return success();
}
