//===- MatmulKernel.h - pieces shared by the GEMM emitter -------*- C++ -*-===//
//
// Private to lib/Conversion/KGraphToGPU: the problem description, index
// arithmetic helpers and the warp-instruction interface shared by the kernel
// skeleton (MatmulEmitter.cpp) and the instructions (WarpMma.cpp).
//
//===----------------------------------------------------------------------===//

#ifndef KGRAPH_LIB_CONVERSION_KGRAPHTOGPU_MATMULKERNEL_H
#define KGRAPH_LIB_CONVERSION_KGRAPHTOGPU_MATMULKERNEL_H

#include "kgraph/Conversion/KGraphToGPU/KGraphToGPU.h"
#include "kgraph/Dialect/KGraph/Transforms/GemmModel.h"
#include "kgraph/Target/ElementTypes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/IR/Builders.h"

#include <functional>
#include <memory>
#include <string>

namespace kgraph::detail {
using namespace mlir;

// The problem (MatmulProblem), its shared-memory layout, the load-width
// rule and kWgmmaTileAlignment are the selection model's (GemmModel.h).

/// Bytes of one element of `t` in memory (the element-type table's; GEMM
/// problems only hold types it has).
inline int64_t byteWidth(Type t) {
  const ElementTypeInfo *info = lookupElementType(t);
  assert(info && "GEMM operand of an element type kgraph does not have");
  return info->storageBytes;
}

/// Index arithmetic helpers on one builder.
struct IndexMath {
  OpBuilder &b;
  Location loc;
  Value c(int64_t v) { return arith::ConstantIndexOp::create(b, loc, v); }
  Value add(Value x, Value y) { return arith::AddIOp::create(b, loc, x, y); }
  Value add(Value x, int64_t y) { return y == 0 ? x : add(x, c(y)); }
  Value mul(Value x, int64_t y) { return y == 1 ? x : arith::MulIOp::create(b, loc, x, c(y)); }
  Value mul(Value x, Value y) { return arith::MulIOp::create(b, loc, x, y); }
  Value div(Value x, int64_t y) { return y == 1 ? x : arith::DivUIOp::create(b, loc, x, c(y)); }
  Value rem(Value x, int64_t y) { return arith::RemUIOp::create(b, loc, x, c(y)); }
  Value sub(Value x, Value y) { return arith::SubIOp::create(b, loc, x, y); }
  Value ult(Value x, Value y) {
    return arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult, x, y);
  }
  Value select(Value cond, Value x, Value y) {
    return arith::SelectOp::create(b, loc, cond, x, y);
  }
  Value minu(Value x, Value y) { return arith::MinUIOp::create(b, loc, x, y); }
  Value maxs(Value x, Value y) { return arith::MaxSIOp::create(b, loc, x, y); }
};

/// The 128-byte swizzled shared-memory layout of wgmma operand tiles
/// (Wgmma.cpp), which TMA boxes (TmaPipeline.cpp) fill: blocks of 64
/// columns of 16-bit elements, rows of 128 bytes.
constexpr int64_t kSwizzleBlockCols = 64;
constexpr int64_t kSwizzleRowBytes = 128;

/// A warp-level matrix instruction: fragments, multiply-accumulate and the
/// accumulator layout the epilogue needs.
class WarpMma {
public:
  virtual ~WarpMma() = default;
  /// Accumulator values of one warp, all zero.
  virtual SmallVector<Value> zeroAccumulators(OpBuilder &b, Location loc) = 0;
  /// One instruction-k step over the stage views: loads fragments and
  /// returns the updated accumulators.
  virtual SmallVector<Value> step(OpBuilder &b, Location loc, Value aTile,
                                  Value bTile, Value stage, Value warpRow,
                                  Value warpCol, Value lane, int64_t kOffset,
                                  ArrayRef<Value> acc) = 0;
  /// For accumulator value `i`, element (h, e) of its vector<R x C x T>: the
  /// (row, col) inside the warp tile, as a function of the lane. Elements
  /// (h, 0 .. C) are consecutive columns of one row.
  virtual std::pair<Value, Value> elementCoords(IndexMath &im, Value lane,
                                                int64_t i, int64_t h,
                                                int64_t e) = 0;
  virtual int64_t numAccumulators() const = 0;

  // Hooks with defaults for the synchronous warp instructions; the
  // asynchronous warpgroup instruction (wgmma) overrides them.

  /// The origin (row, col) of warp `warp`'s tile in the block tile: by
  /// default the warps_m x warps_n grid in row-major order.
  virtual std::pair<Value, Value> warpOrigin(IndexMath &im, Value warp,
                                             MatmulConfigAttr config) {
    return {im.mul(im.div(warp, config.getWarpsN()), config.getWarpTileM()),
            im.mul(im.rem(warp, config.getWarpsN()), config.getWarpTileN())};
  }
  /// The operand tiles in a shared-memory layout of the instruction's own:
  /// the view shape [stages, rows, cols] of operand A (isA) or B, or an
  /// empty vector for the padded layout of MatmulEmitter.cpp.
  virtual SmallVector<int64_t> tileShape(bool isA) const { return {}; }
  /// View indices of stored element (row, col) of a tile (see tileShape).
  virtual SmallVector<Value> tileIndices(IndexMath &im, bool isA, Value stage,
                                         Value row, Value col) const {
    return {stage, row, col};
  }
  /// Bytes the operand tiles' base must be aligned to (the skeleton pads
  /// the dynamic shared memory); 0: no requirement beyond the element's.
  virtual int64_t tileAlignment() const { return 0; }
  /// K tiles whose operands the instruction may still read after
  /// endTile() returns; the skeleton keeps their stages from being
  /// overwritten.
  virtual int64_t tilesInFlight() const { return 0; }
  /// After a stage's copies have completed, before the barrier that
  /// publishes it.
  virtual void stageLanded(OpBuilder &b, Location loc) {}
  /// Before the first step() / after the last step() of one k tile.
  virtual void beginTile(OpBuilder &b, Location loc) {}
  virtual void endTile(OpBuilder &b, Location loc) {}
  /// After the main loop: the accumulators as the epilogue reads them
  /// (vectors, see elementCoords).
  virtual SmallVector<Value> finish(OpBuilder &b, Location loc,
                                    ArrayRef<Value> acc) {
    return SmallVector<Value>(acc);
  }
};

/// The wgmma instruction of `config` (Wgmma.cpp); nullptr with the reason in
/// `whyNot` when `p` or `config` does not suit it.
std::unique_ptr<WarpMma> createWgmma(const MatmulProblem &p,
                                     MatmulConfigAttr config,
                                     std::string *whyNot = nullptr);

/// The instruction `config` asks for, for problem `p`; nullptr with the
/// reason in `whyNot` when kgraph has no implementation of it.
std::unique_ptr<WarpMma> createWarpMma(const MatmulProblem &p,
                                       MatmulConfigAttr config,
                                       std::string *whyNot = nullptr);

/// The TMA boxes of one operand's stage (TmaPipeline.cpp): the stored tile
/// rows x cols, loaded in boxes of boxRows x boxCols (cols along the
/// contiguous global dimension).
struct TmaOperandBoxes {
  int64_t rows = 0, cols = 0, boxRows = 0, boxCols = 0;
};
TmaOperandBoxes getTmaBoxes(const MatmulProblem &p, MatmulConfigAttr config,
                            bool isA);

/// The host-side description of the kernel's tensor maps (A's, then B's)
/// for the launch plan: dictionaries {arg, dtype, dims, strides, box,
/// swizzle, interleave, l2_promotion, oob_fill}, `arg` being the kernel
/// argument of the operand (lhsArg / rhsArg).
ArrayAttr getTmaMapsAttr(MLIRContext *ctx, const MatmulProblem &p,
                         MatmulConfigAttr config, int64_t lhsArg,
                         int64_t rhsArg);

/// The output tile a persistent (stream-K) block works on: its origin and
/// GEMM batch.
struct TmaTile {
  Value rowBase, colBase, batch;
};

/// What the TMA main loop needs from the skeleton.
struct TmaLoopInputs {
  TmaLoopInputs(const MatmulProblem &p, MatmulConfigAttr config, WarpMma &mma)
      : p(p), config(config), mma(mma) {}
  const MatmulProblem &p;
  MatmulConfigAttr config;
  WarpMma &mma;
  /// The global buffer of 128-byte tensor maps (the last kernel argument).
  Value tensorMaps;
  /// Shared-memory address (index) of the first mbarrier.
  Value barriers;
  Value aTile, bTile, tid, rowBase, colBase, batch;
  /// Zero accumulators.
  SmallVector<Value> acc;
  /// Emit setmaxnreg (the kernel carries a register cap at entry).
  bool setMaxRegisters = false;
  /// One k tile of wgmmas on `stage` (beginTile, steps, endTile).
  std::function<SmallVector<Value>(OpBuilder &, Value, ArrayRef<Value>)>
      compute;
  /// A stream-K grid's workspace (the last kernel argument) and its
  /// shared word (memref<1xi32>) telling the consumers whether they finish
  /// a split tile; else null.
  Value workspace, flag;
  /// The accumulators as the epilogue reads them (WarpMma::finish: waits
  /// for the instruction's last group).
  std::function<SmallVector<Value>(OpBuilder &, ArrayRef<Value>)> finish;
  /// The epilogue of finished accumulators; `tile` is a persistent block's
  /// current tile (null: the block's own, rowBase / colBase / batch).
  std::function<LogicalResult(OpBuilder &, ArrayRef<Value>, const TmaTile *)>
      epilogue;
};

/// The warp-specialized TMA main loop and the consumers' epilogue
/// (TmaPipeline.cpp; its header documents the mbarrier protocol).
LogicalResult emitTmaMainLoop(OpBuilder &b, Location loc,
                              const TmaLoopInputs &in);

} // namespace kgraph::detail

#endif // KGRAPH_LIB_CONVERSION_KGRAPHTOGPU_MATMULKERNEL_H
