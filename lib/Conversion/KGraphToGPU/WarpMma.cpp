//===- WarpMma.cpp - warp-level matrix instructions for GEMM kernels ------===//
//
// Each WarpMma knows one instruction: how a warp loads its operand fragments
// from the shared-memory tiles (layout: see MatmulEmitter.cpp), multiplies
// them into its accumulators, and where each accumulator element lands in
// the warp tile. The kernel skeleton does everything else.
//
//===----------------------------------------------------------------------===//

#include "MatmulKernel.h"
#include "kgraph/Target/ElementTypes.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/NVGPU/IR/NVGPUDialect.h"
#include "llvm/Support/InterleavedRange.h"
#include "mlir/Dialect/UB/IR/UBOps.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

using namespace mlir;
using namespace kgraph;
using namespace kgraph::detail;

namespace {

/// What every mma.sync m16n8kK instruction shares: the warp tile is a grid
/// of mTiles x nTiles 16x8 accumulator tiles, each a vector<2x2xacc> whose
/// element (h, e) is row g + 8h, column 2t + e (g = lane / 4, t = lane % 4;
/// PTX ISA, "Matrix Fragments for mma.m16n8k*", accumulator layout).
class MmaSync16x8 : public WarpMma {
public:
  MmaSync16x8(const MatmulProblem &p, MatmulConfigAttr config)
      : p(p), mTiles(config.getWarpTileM() / 16),
        nTiles(config.getWarpTileN() / 8) {}

  int64_t numAccumulators() const override { return mTiles * nTiles; }

  SmallVector<Value> zeroAccumulators(OpBuilder &b, Location loc) override {
    auto type = VectorType::get({2, 2}, p.getAccumulatorType());
    Value zero = arith::ConstantOp::create(
        b, loc, type, DenseElementsAttr::get(type, b.getZeroAttr(p.getAccumulatorType())));
    return SmallVector<Value>(numAccumulators(), zero);
  }

  std::pair<Value, Value> elementCoords(IndexMath &im, Value lane, int64_t i,
                                        int64_t h, int64_t e) override {
    int64_t mi = i / nTiles, ni = i % nTiles;
    Value g = im.div(lane, 4), t = im.rem(lane, 4);
    Value row = im.add(g, mi * 16 + h * 8);
    Value col = im.add(im.mul(t, 2), ni * 8 + e);
    return {row, col};
  }

protected:
  MatmulProblem p;
  int64_t mTiles, nTiles;
};

/// mma.sync m16n8k16 (f16, bf16; sm_80+) or m16n8k8 (f16; sm_75) with
/// fragments through ldmatrix. The k8 fragments are the first half (k 0-7)
/// of the k16 ones (PTX ISA, "Matrix Fragments for mma.m16n8k8", Figures
/// 71 and 74: a0a1 row g, a2a3 row g+8, b0b1 k 2t..2t+1 column g), so A
/// takes ldmatrix x2 instead of x4 and B one 8x8 matrix per n-tile.
class MmaSyncF16 : public MmaSync16x8 {
public:
  MmaSyncF16(const MatmulProblem &p, MatmulConfigAttr config)
      : MmaSync16x8(p, config), instK(config.getInstructionShape()[2]) {}


  SmallVector<Value> step(OpBuilder &b, Location loc, Value aTile, Value bTile,
                          Value stage, Value warpRow, Value warpCol, Value lane,
                          int64_t kOffset, ArrayRef<Value> acc) override {
    IndexMath im{b, loc};
    Value l8 = im.rem(lane, 8);
    // Which 8x8 matrix this lane addresses. For k8, lanes 16-31 (whose
    // addresses ldmatrix x2 ignores) repeat lanes 0-15, staying in bounds.
    Value idx = instK == 8 ? im.rem(im.div(lane, 8), 2) : im.div(lane, 8);
    Value lo = im.rem(idx, 2), hi = instK == 8 ? im.c(0) : im.div(idx, 2);
    auto fragType = VectorType::get({instK == 8 ? 2 : 4, 2}, p.operandType);
    if (instK == 8)
      return stepK8(b, loc, aTile, bTile, stage, warpRow, warpCol, l8, lo,
                    kOffset, acc);

    // A: matrices (m-block = idx % 2, k-block = idx / 2).
    SmallVector<Value> aFrags;
    for (int64_t mi = 0; mi < mTiles; ++mi) {
      Value mRow = im.add(warpRow, mi * 16);
      Value row, col;
      if (!p.transposeA) { // stored [m][k]
        row = im.add(im.add(mRow, im.mul(lo, 8)), l8);
        col = im.add(im.mul(hi, 8), kOffset);
      } else { // stored [k][m]
        row = im.add(im.add(im.mul(hi, 8), kOffset), l8);
        col = im.add(mRow, im.mul(lo, 8));
      }
      aFrags.push_back(nvgpu::LdMatrixOp::create(
          b, loc, fragType, aTile, ValueRange{stage, row, col},
          b.getBoolAttr(p.transposeA), b.getI32IntegerAttr(4)));
    }
    // B: matrices (k-block = idx % 2, n-block = idx / 2), two n-tiles per x4.
    SmallVector<Value> bFrags;
    auto bType = VectorType::get({2, 2}, p.operandType);
    for (int64_t ni = 0; ni < nTiles; ni += 2) {
      Value nCol = im.add(warpCol, ni * 8);
      bool pair = ni + 1 < nTiles;
      // The last odd tile uses x2 (lanes 16-31 repeat lanes 0-15).
      Value kblk = lo;
      Value nblk = pair ? hi : im.c(0);
      Value row, col;
      if (!p.transposeB) { // stored [k][n]: transpose while loading
        row = im.add(im.add(im.mul(kblk, 8), kOffset), l8);
        col = im.add(nCol, im.mul(nblk, 8));
      } else { // stored [n][k]
        row = im.add(im.add(nCol, im.mul(nblk, 8)), l8);
        col = im.add(im.mul(kblk, 8), kOffset);
      }
      Value frag = nvgpu::LdMatrixOp::create(
          b, loc, pair ? fragType : bType, bTile, ValueRange{stage, row, col},
          b.getBoolAttr(!p.transposeB), b.getI32IntegerAttr(pair ? 4 : 2));
      if (!pair) {
        bFrags.push_back(frag);
        continue;
      }
      // Rows {0, 1} are the fragment of tile ni, rows {2, 3} of ni + 1
      // (row moves only: n-D vectors lower to arrays of 1-D vectors).
      for (int64_t half = 0; half < 2; ++half) {
        Value part = ub::PoisonOp::create(b, loc, bType);
        for (int64_t r = 0; r < 2; ++r) {
          Value row = vector::ExtractOp::create(b, loc, frag,
                                                ArrayRef<int64_t>{2 * half + r});
          part = vector::InsertOp::create(b, loc, row, part,
                                          ArrayRef<int64_t>{r});
        }
        bFrags.push_back(part);
      }
    }
    SmallVector<Value> out;
    for (int64_t mi = 0; mi < mTiles; ++mi)
      for (int64_t ni = 0; ni < nTiles; ++ni)
        out.push_back(mmaOne(b, loc, aFrags[mi], bFrags[ni],
                             acc[mi * nTiles + ni]));
    return out;
  }

  /// m16n8k8: A by ldmatrix x2 (matrices m 0-7 and m 8-15 of k 0-7), B by
  /// ldmatrix x2 over two n-tiles (x1 for the last odd one).
  SmallVector<Value> stepK8(OpBuilder &b, Location loc, Value aTile,
                            Value bTile, Value stage, Value warpRow,
                            Value warpCol, Value l8, Value q, int64_t kOffset,
                            ArrayRef<Value> acc) {
    IndexMath im{b, loc};
    SmallVector<Value> aFrags;
    auto aType = VectorType::get({2, 2}, p.operandType);
    for (int64_t mi = 0; mi < mTiles; ++mi) {
      Value mRow = im.add(warpRow, mi * 16);
      Value row, col;
      if (!p.transposeA) { // stored [m][k]: matrix q is rows 8q..8q+7
        row = im.add(im.add(mRow, im.mul(q, 8)), l8);
        col = im.c(kOffset);
      } else { // stored [k][m]: matrix q is columns 8q..8q+7, transposed
        row = im.add(l8, kOffset);
        col = im.add(mRow, im.mul(q, 8));
      }
      aFrags.push_back(nvgpu::LdMatrixOp::create(
          b, loc, aType, aTile, ValueRange{stage, row, col},
          b.getBoolAttr(p.transposeA), b.getI32IntegerAttr(2)));
    }
    SmallVector<Value> bFrags;
    auto bType = VectorType::get({1, 2}, p.operandType);
    for (int64_t ni = 0; ni < nTiles; ni += 2) {
      bool pair = ni + 1 < nTiles;
      Value nCol = im.add(warpCol, ni * 8);
      if (pair)
        nCol = im.add(nCol, im.mul(q, 8));
      Value row, col;
      if (!p.transposeB) { // stored [k][n]: transpose while loading
        row = im.add(l8, kOffset);
        col = nCol;
      } else { // stored [n][k]
        row = im.add(nCol, l8);
        col = im.c(kOffset);
      }
      Value frag = nvgpu::LdMatrixOp::create(
          b, loc, pair ? VectorType::get({2, 2}, p.operandType) : bType, bTile,
          ValueRange{stage, row, col}, b.getBoolAttr(!p.transposeB),
          b.getI32IntegerAttr(pair ? 2 : 1));
      if (!pair) {
        bFrags.push_back(frag);
        continue;
      }
      for (int64_t r = 0; r < 2; ++r) {
        Value rowVec = vector::ExtractOp::create(b, loc, frag, ArrayRef<int64_t>{r});
        bFrags.push_back(vector::BroadcastOp::create(b, loc, bType, rowVec));
      }
    }
    SmallVector<Value> out;
    for (int64_t mi = 0; mi < mTiles; ++mi)
      for (int64_t ni = 0; ni < nTiles; ++ni)
        out.push_back(nvgpu::MmaSyncOp::create(b, loc, aFrags[mi], bFrags[ni],
                                               acc[mi * nTiles + ni],
                                               ArrayRef<int64_t>{16, 8, 8}));
    return out;
  }

  /// One m16n8k16 on fragments held as vector<Rx2xT>. f16 goes through
  /// nvgpu.mma.sync; its NVVM lowering has no bf16 yet, so bf16 is written as
  /// nvvm.mma.sync on the packed 32-bit registers directly.
  Value mmaOne(OpBuilder &b, Location loc, Value a, Value bFrag, Value c) {
    std::optional<MmaOperandType> operand =
        getMmaOperandType(p.operandType, /*allowTf32=*/false);
    if (operand != MmaOperandType::BF16)
      return nvgpu::MmaSyncOp::create(b, loc, a, bFrag, c,
                                      ArrayRef<int64_t>{16, 8, 16});
    auto packed = [&](Value frag) {
      SmallVector<Value> regs;
      int64_t rows = llvm::cast<VectorType>(frag.getType()).getDimSize(0);
      for (int64_t r = 0; r < rows; ++r) {
        Value row = vector::ExtractOp::create(b, loc, frag, ArrayRef<int64_t>{r});
        Value word = vector::BitCastOp::create(
            b, loc, VectorType::get({1}, b.getI32Type()), row);
        regs.push_back(vector::ExtractOp::create(b, loc, word, ArrayRef<int64_t>{0}));
      }
      return regs;
    };
    SmallVector<Value> cRegs;
    for (int64_t h = 0; h < 2; ++h)
      for (int64_t e = 0; e < 2; ++e)
        cRegs.push_back(vector::ExtractOp::create(b, loc, c, ArrayRef<int64_t>{h, e}));
    Type f32 = b.getF32Type();
    auto resultType = LLVM::LLVMStructType::getLiteral(b.getContext(), {f32, f32, f32, f32});
    SmallVector<Value> aRegs = packed(a);
    SmallVector<Value> bRegs = packed(bFrag);
    Value d = NVVM::MmaOp::create(
        b, loc, resultType, aRegs, bRegs, cRegs,
        ArrayRef<int64_t>{16, 8, 16}, std::nullopt, std::nullopt,
        std::array<NVVM::MMATypes, 2>{NVVM::MMATypes::bf16, NVVM::MMATypes::bf16},
        std::array<NVVM::MMALayout, 2>{NVVM::MMALayout::row, NVVM::MMALayout::col});
    SmallVector<Value> parts;
    for (int64_t i = 0; i < 4; ++i)
      parts.push_back(LLVM::ExtractValueOp::create(b, loc, d, ArrayRef<int64_t>{i}));
    return vector::FromElementsOp::create(
        b, loc, llvm::cast<VectorType>(c.getType()), parts);
  }


private:
  int64_t instK;
};

/// Where the operand tiles of one stage live in shared memory (layout: see
/// MatmulEmitter.cpp) and which vector accesses they allow.
struct SmemOperands {
  SmemOperands(const MatmulProblem &p, MatmulConfigAttr config) : p(p) {
    int64_t pad = config.getSmemPadding();
    int64_t tm = config.getTileM(), tn = config.getTileN(),
            tk = config.getTileK();
    rowA = (p.transposeA ? tm : tk) + pad;
    rowB = (p.transposeB ? tk : tn) + pad;
    int64_t rowsA = p.transposeA ? tk : tm;
    bytesA = config.getStages() * rowsA * rowA * byteWidth(p.operandType);
  }

  /// Whether the operand's stored rows run along K.
  bool kContiguous(bool isA) const { return isA ? !p.transposeA : p.transposeB; }

  /// Indices of element (mn, k) of A (mn = m) or B (mn = n).
  SmallVector<Value> indices(bool isA, Value stage, Value mn, Value k) const {
    if (kContiguous(isA))
      return {stage, mn, k};
    return {stage, k, mn};
  }

  /// Whether `width` elements along the stored rows can be read as one
  /// aligned vector wherever the first one is at a column divisible by
  /// `width`: the row length and the tile's byte offset in the dynamic
  /// shared memory (A at 0, B after the A stages) must keep the alignment.
  bool canVector(bool isA, int64_t width) const {
    Type elem = isA ? p.operandType : p.operandType;
    int64_t bytes = width * byteWidth(elem);
    if (width == 1)
      return true;
    if (bytes > 16 || !llvm::isPowerOf2_64(bytes))
      return false;
    int64_t row = isA ? rowA : rowB;
    return row % width == 0 && (isA || bytesA % bytes == 0);
  }

  /// Largest of {max, max/2, ..., 1} that divides `extent` and is
  /// accessible as a vector.
  int64_t vectorWidth(bool isA, int64_t max, int64_t extent) const {
    int64_t w = max;
    while (w > 1 && (extent % w != 0 || !canVector(isA, w)))
      w /= 2;
    return w;
  }

  MatmulProblem p;
  int64_t rowA, rowB, bytesA;
};

/// Reads `width` consecutive elements along the stored rows, as a
/// vector<width x T> (one aligned vector.load when width > 1).
static Value loadRow(OpBuilder &b, Location loc, Value tile,
                     ArrayRef<Value> indices, Type elem, int64_t width) {
  auto type = VectorType::get({width}, elem);
  if (width == 1) {
    Value v = memref::LoadOp::create(b, loc, tile, indices);
    return vector::BroadcastOp::create(b, loc, type, v);
  }
  return vector::LoadOp::create(b, loc, type, tile, indices, false,
                                llvm::MaybeAlign(width * byteWidth(elem)));
}

/// SIMT outer products for any operand type without a tensor-core path (f32
/// ieee; f16, bf16, tf32 and i8 where the target has no mma.sync for them).
///
/// The warp's lanes form a lanesM x lanesN grid (4 x 8, or 8 x 4 when the
/// warp tile is taller than wide; lane = lm * lanesN + ln). Each thread owns
/// tm x tn elements of the warp tile, spread so that every shared-memory
/// read of the warp is conflict-free or a broadcast:
///   - along an operand dimension that is contiguous in shared memory (m
///     when transpose_a, n unless transpose_b) in chunks of v <= 4
///     consecutive elements, chunk c at (c * lanes + l) * v: the lanes read
///     consecutive 16-byte chunks with one vector load each;
///   - along a dimension whose stored rows run along K, one element every
///     `lanes` rows (row h * lanes + l): lanes read consecutive rows, which
///     the odd 16-byte row padding puts in distinct banks; those reads fetch
///     vk <= 4 consecutive k at once (vector loads along the row), kept
///     until the next vk-aligned k step.
/// Per k: the thread's A column slice (tm values) times its B row slice (tn
/// values) is accumulated into tm x tn accumulators: one vector<tm x vn> per
/// column chunk, row h holding vn consecutive output columns of the
/// thread's row h (the epilogue stores them as one vector).
class FmaSimt : public WarpMma {
public:
  FmaSimt(const MatmulProblem &p, MatmulConfigAttr config)
      : p(p), smem(p, config) {
    int64_t wm = config.getWarpTileM(), wn = config.getWarpTileN();
    std::tie(lanesM, lanesN) = lanes(wm, wn);
    tm = wm / lanesM;
    tn = wn / lanesN;
    vm = smem.kContiguous(true) ? 1 : smem.vectorWidth(true, 4, tm);
    vn = smem.kContiguous(false) ? 1 : smem.vectorWidth(false, 4, tn);
    // K-vectors cost tm * vk (tn * vk) registers: at most 32 of them.
    int64_t tk = config.getTileK();
    vkA = smem.kContiguous(true)
              ? smem.vectorWidth(true, std::clamp<int64_t>(32 / tm, 1, 4), tk)
              : 1;
    vkB = smem.kContiguous(false)
              ? smem.vectorWidth(false, std::clamp<int64_t>(32 / tn, 1, 4), tk)
              : 1;
  }

  /// The lane grid for a wm x wn warp tile.
  static std::pair<int64_t, int64_t> lanes(int64_t wm, int64_t wn) {
    return wn >= wm ? std::make_pair(4, 8) : std::make_pair(8, 4);
  }

  int64_t numAccumulators() const override { return tn / vn; }

  SmallVector<Value> zeroAccumulators(OpBuilder &b, Location loc) override {
    auto type = VectorType::get({tm, vn}, p.getAccumulatorType());
    Value zero = arith::ConstantOp::create(
        b, loc, type, DenseElementsAttr::get(type, b.getZeroAttr(p.getAccumulatorType())));
    return SmallVector<Value>(numAccumulators(), zero);
  }

  SmallVector<Value> step(OpBuilder &b, Location loc, Value aTile, Value bTile,
                          Value stage, Value warpRow, Value warpCol, Value lane,
                          int64_t kOffset, ArrayRef<Value> acc) override {
    IndexMath im{b, loc};
    Value lm = im.div(lane, lanesN), ln = im.rem(lane, lanesN);
    SmallVector<Value> aVals = slice(b, loc, /*isA=*/true, aTile, stage,
                                     warpRow, lm, kOffset, cacheA);
    SmallVector<Value> bVals = slice(b, loc, /*isA=*/false, bTile, stage,
                                     warpCol, ln, kOffset, cacheB);
    // Row h of accumulator j: vn consecutive columns. Only 1-D vectors and
    // row extracts/inserts, which the NVVM lowering takes as they are.
    auto rowType = VectorType::get({vn}, p.getAccumulatorType());
    SmallVector<Value> bChunks;
    for (int64_t j = 0; j < tn / vn; ++j)
      bChunks.push_back(vector::FromElementsOp::create(
          b, loc, rowType, ArrayRef<Value>(bVals).slice(j * vn, vn)));
    bool isFloat = llvm::isa<FloatType>(p.getAccumulatorType());
    SmallVector<Value> out(acc);
    for (int64_t h = 0; h < tm; ++h) {
      Value a = vector::BroadcastOp::create(b, loc, rowType, aVals[h]);
      for (int64_t j = 0; j < tn / vn; ++j) {
        Value c = vector::ExtractOp::create(b, loc, out[j], ArrayRef<int64_t>{h});
        Value d;
        if (isFloat) {
          d = math::FmaOp::create(b, loc, a, bChunks[j], c);
        } else {
          Value prod = arith::MulIOp::create(b, loc, a, bChunks[j]);
          d = arith::AddIOp::create(b, loc, prod, c);
        }
        out[j] = vector::InsertOp::create(b, loc, d, out[j], ArrayRef<int64_t>{h});
      }
    }
    return out;
  }

  std::pair<Value, Value> elementCoords(IndexMath &im, Value lane, int64_t i,
                                        int64_t h, int64_t e) override {
    Value lm = im.div(lane, lanesN), ln = im.rem(lane, lanesN);
    return {position(im, lm, lanesM, vm, h),
            im.add(position(im, ln, lanesN, vn, i * vn), e)};
  }

private:
  /// Values of a k-step slice cached from a wider load along K.
  struct KCache {
    Value tile, stage;
    Block *block = nullptr;
    int64_t kBase = -1;
    SmallVector<Value> vectors;
  };

  /// Warp-tile position of the thread's element `idx` along a dimension
  /// spread in chunks of `v` over `lanes` lanes: (idx / v * lanes + l) * v
  /// + idx % v.
  static Value position(IndexMath &im, Value l, int64_t lanes, int64_t v,
                        int64_t idx) {
    return im.add(im.mul(im.add(l, idx / v * lanes), v), idx % v);
  }

  /// The thread's A column slice (isA) or B row slice at k = kOffset,
  /// converted to the accumulator type.
  SmallVector<Value> slice(OpBuilder &b, Location loc, bool isA, Value tile,
                           Value stage, Value warpBase, Value l,
                           int64_t kOffset, KCache &cache) {
    IndexMath im{b, loc};
    Type elem = isA ? p.operandType : p.operandType;
    int64_t count = isA ? tm : tn, lanes = isA ? lanesM : lanesN;
    int64_t v = isA ? vm : vn, vk = isA ? vkA : vkB;
    SmallVector<Value> vals;
    if (smem.kContiguous(isA)) {
      // One row per element, rows `lanes` apart; vk k values per load.
      int64_t kBase = kOffset - kOffset % vk;
      Block *block = b.getInsertionBlock();
      if (cache.tile != tile || cache.stage != stage || cache.block != block ||
          cache.kBase != kBase) {
        cache = KCache{tile, stage, block, kBase, {}};
        for (int64_t h = 0; h < count; ++h) {
          Value mn = im.add(warpBase, position(im, l, lanes, 1, h));
          cache.vectors.push_back(
              loadRow(b, loc, tile, smem.indices(isA, stage, mn, im.c(kBase)),
                      elem, vk));
        }
      }
      for (Value vec : cache.vectors)
        vals.push_back(vector::ExtractOp::create(
            b, loc, vec, ArrayRef<int64_t>{kOffset - kBase}));
    } else {
      // Chunks of v consecutive elements along the stored row.
      for (int64_t c = 0; c < count / v; ++c) {
        Value mn = im.add(warpBase, position(im, l, lanes, v, c * v));
        Value vec = loadRow(b, loc, tile,
                            smem.indices(isA, stage, mn, im.c(kOffset)), elem, v);
        for (int64_t e = 0; e < v; ++e)
          vals.push_back(
              vector::ExtractOp::create(b, loc, vec, ArrayRef<int64_t>{e}));
      }
    }
    for (Value &v : vals) {
      if (v.getType() == p.getAccumulatorType())
        continue;
      v = llvm::isa<FloatType>(p.getAccumulatorType())
              ? Value(arith::ExtFOp::create(b, loc, p.getAccumulatorType(), v))
              : Value(arith::ExtSIOp::create(b, loc, p.getAccumulatorType(), v));
    }
    return vals;
  }

  MatmulProblem p;
  SmemOperands smem;
  int64_t lanesM, lanesN, tm, tn, vm, vn, vkA, vkB;
  KCache cacheA, cacheB;
};

/// mma.sync with 32-bit operand registers that each hold 4 / bytes
/// consecutive k of one row of A or one column of B: m16n8k8 tf32 (f32 data
/// with tf32Enabled) and m16n8k32 s8 -> s32. Both instructions distribute
/// their operands the same way in units of such k-words (PTX ISA, "Matrix
/// Fragments for mma.m16n8k8", Figures 72 and 75 for .tf32, and "Matrix
/// Fragments for mma.m16n8k32", Figures 88 and 90 for .s8), with g = lane / 4
/// and t = lane % 4:
///   A register q (0..3): row g + 8 (q % 2), k-word t + 4 (q / 2)
///     (tf32: a0 (g, t), a1 (g+8, t), a2 (g, t+4), a3 (g+8, t+4); s8: a0-a3
///     row g k 4t..4t+3, a4-a7 row g+8, a8-a11 row g k 4t+16.., a12-a15
///     row g+8 k 4t+16..);
///   B register q (0..1): column g, k-word t + 4 q
///     (tf32: b0 k t, b1 k t+4; s8: b0-b3 k 4t..4t+3, b4-b7 k 4t+16..);
///   C as for every m16n8 shape: (g + 8 h, 2 t + e) for element (h, e).
/// Where the stored rows run along K (A not transposed, B transposed) an
/// 8x8 b16 ldmatrix matrix is 8 rows of four k-words, giving lane l row l / 4
/// and k-word l % 4: exactly those registers, so fragments come through
/// ldmatrix (x4 for A, x4 per pair of n-tiles for B). The other layouts
/// would need ldmatrix .trans, which only moves 16-bit elements: their
/// fragments are gathered with scalar shared-memory loads.
///
/// tf32 operands are the f32 bits as stored: the tensor cores ignore the 13
/// low mantissa bits (truncation, within test/GPU/matmul_ref.py's tf32
/// bound), as nvgpu's lowering passes them without a cvt.rna.
class MmaSyncWord : public MmaSync16x8 {
public:
  MmaSyncWord(const MatmulProblem &p, MatmulConfigAttr config)
      : MmaSync16x8(p, config), smem(p, config),
        perWord(4 / byteWidth(p.operandType)), instK(8 * perWord) {
    // ldmatrix needs 16-byte aligned rows.
    ldmatrixA = smem.kContiguous(true) && smem.canVector(true, 4 * perWord);
    ldmatrixB = smem.kContiguous(false) && smem.canVector(false, 4 * perWord);
  }


  SmallVector<Value> step(OpBuilder &b, Location loc, Value aTile, Value bTile,
                          Value stage, Value warpRow, Value warpCol, Value lane,
                          int64_t kOffset, ArrayRef<Value> acc) override {
    IndexMath im{b, loc};
    Value g = im.div(lane, 4), t = im.rem(lane, 4);
    Value l8 = im.rem(lane, 8), q = im.div(lane, 8);
    auto aType = VectorType::get({4, perWord}, p.operandType);
    auto bType = VectorType::get({2, perWord}, p.operandType);

    SmallVector<Value> aFrags;
    for (int64_t mi = 0; mi < mTiles; ++mi) {
      Value mRow = im.add(warpRow, mi * 16);
      if (ldmatrixA) {
        // Matrix q (lanes 8q..8q+7 address its rows): rows 8 (q % 2),
        // k-words 4 (q / 2): A register q.
        Value row = im.add(im.add(mRow, im.mul(im.rem(q, 2), 8)), l8);
        Value col = im.add(im.mul(im.div(q, 2), 4 * perWord), kOffset);
        aFrags.push_back(nvgpu::LdMatrixOp::create(
            b, loc, aType, aTile, ValueRange{stage, row, col},
            b.getBoolAttr(false), b.getI32IntegerAttr(4)));
        continue;
      }
      SmallVector<Value> regs;
      for (int64_t r = 0; r < 4; ++r)
        regs.push_back(gatherWord(b, loc, /*isA=*/true, aTile, stage,
                                  im.add(im.add(mRow, g), 8 * (r % 2)), t,
                                  kOffset + 4 * (r / 2) * perWord));
      aFrags.push_back(assemble(b, loc, aType, regs));
    }

    SmallVector<Value> bFrags;
    for (int64_t ni = 0; ni < nTiles; ++ni) {
      Value nCol = im.add(warpCol, ni * 8);
      if (ldmatrixB) {
        // Two n-tiles per x4: matrix q is n-tile ni + q / 2, k-words
        // 4 (q % 2); the last odd tile takes x2 (lanes 16-31 repeat 0-15).
        bool pair = ni + 1 < nTiles;
        Value nblk = pair ? im.div(q, 2) : im.c(0);
        Value row = im.add(im.add(nCol, im.mul(nblk, 8)), l8);
        Value col = im.add(im.mul(im.rem(q, 2), 4 * perWord), kOffset);
        Value frag = nvgpu::LdMatrixOp::create(
            b, loc, pair ? VectorType::get({4, perWord}, p.operandType) : bType,
            bTile, ValueRange{stage, row, col}, b.getBoolAttr(false),
            b.getI32IntegerAttr(pair ? 4 : 2));
        if (!pair) {
          bFrags.push_back(frag);
          continue;
        }
        for (int64_t half = 0; half < 2; ++half) {
          SmallVector<Value> regs;
          for (int64_t r = 0; r < 2; ++r)
            regs.push_back(vector::ExtractOp::create(
                b, loc, frag, ArrayRef<int64_t>{2 * half + r}));
          bFrags.push_back(assemble(b, loc, bType, regs));
        }
        ++ni;
        continue;
      }
      SmallVector<Value> regs;
      for (int64_t r = 0; r < 2; ++r)
        regs.push_back(gatherWord(b, loc, /*isA=*/false, bTile, stage,
                                  im.add(nCol, g), t,
                                  kOffset + 4 * r * perWord));
      bFrags.push_back(assemble(b, loc, bType, regs));
    }

    SmallVector<Value> out;
    for (int64_t mi = 0; mi < mTiles; ++mi)
      for (int64_t ni = 0; ni < nTiles; ++ni)
        out.push_back(nvgpu::MmaSyncOp::create(
            b, loc, aFrags[mi], bFrags[ni], acc[mi * nTiles + ni],
            ArrayRef<int64_t>{16, 8, instK},
            /*tf32Enabled=*/getMmaOperandType(p.operandType, /*allowTf32=*/true) ==
                MmaOperandType::TF32));
    return out;
  }


private:
  /// The k-word `word` (0..3, plus kWord0 / perWord) of row or column `mn`:
  /// perWord consecutive k from k = kWord0 + word * perWord, as
  /// vector<perWord x T>.
  Value gatherWord(OpBuilder &b, Location loc, bool isA, Value tile,
                   Value stage, Value mn, Value word, int64_t kWord0) {
    IndexMath im{b, loc};
    Type elem = isA ? p.operandType : p.operandType;
    Value k0 = im.add(im.mul(word, perWord), kWord0);
    SmallVector<Value> elems;
    for (int64_t e = 0; e < perWord; ++e)
      elems.push_back(memref::LoadOp::create(
          b, loc, tile, smem.indices(isA, stage, mn, im.add(k0, e))));
    return vector::FromElementsOp::create(
        b, loc, VectorType::get({perWord}, elem), elems);
  }

  /// Stacks 1-D registers into a fragment (row moves only).
  static Value assemble(OpBuilder &b, Location loc, VectorType type,
                        ArrayRef<Value> regs) {
    Value frag = ub::PoisonOp::create(b, loc, type);
    for (auto [r, reg] : llvm::enumerate(regs))
      frag = vector::InsertOp::create(b, loc, reg, frag,
                                      ArrayRef<int64_t>{int64_t(r)});
    return frag;
  }

  SmemOperands smem;
  int64_t perWord, instK;
  bool ldmatrixA, ldmatrixB;
};

} // namespace

std::unique_ptr<WarpMma> kgraph::detail::createWarpMma(const MatmulProblem &p,
                                                       MatmulConfigAttr config,
                                                       std::string *whyNot) {
  ArrayRef<int64_t> shape = config.getInstructionShape();
  int64_t wm = config.getWarpTileM(), wn = config.getWarpTileN();
  auto fail = [&](const Twine &why) -> std::unique_ptr<WarpMma> {
    if (whyNot)
      *whyNot = why.str();
    return nullptr;
  };
  if (config.getInstruction() == MmaKind::wgmma)
    return createWgmma(p, config, whyNot);
  // Operands of one type that the element-type table gives an accumulator,
  // accumulated in it; the tensor-core operand kind is the table's (f32
  // operands reach mma_sync only as tf32: verifyMatmulConfig).
  bool accumulates = p.operandType == p.operandType && p.getAccumulatorType() &&
                     p.getAccumulatorType() == getAccumulatorType(p.operandType);
  std::optional<MmaOperandType> operand =
      getMmaOperandType(p.operandType, /*allowTf32=*/true);
  if (config.getInstruction() == MmaKind::fma && accumulates &&
      shape == ArrayRef<int64_t>{1, 1, 1}) {
    auto [lanesM, lanesN] = FmaSimt::lanes(wm, wn);
    if (wm % lanesM != 0 || wn % lanesN != 0)
      return fail("fma needs a warp tile divisible by its " + Twine(lanesM) +
                  " x " + Twine(lanesN) + " lanes; warp tile is " + Twine(wm) +
                  " x " + Twine(wn));
    return std::make_unique<FmaSimt>(p, config);
  }
  if (config.getInstruction() == MmaKind::mma_sync && accumulates &&
      operand && shape.size() == 3 && shape[0] == 16 && shape[1] == 8) {
    // The warp tile is a multiple of the instruction shape (verified by
    // MatmulConfigAttr).
    switch (*operand) {
    case MmaOperandType::F16:
      if (shape[2] == 16 || shape[2] == 8)
        return std::make_unique<MmaSyncF16>(p, config);
      break;
    case MmaOperandType::BF16:
      if (shape[2] == 16)
        return std::make_unique<MmaSyncF16>(p, config);
      break;
    case MmaOperandType::TF32:
      if (shape[2] == 8)
        return std::make_unique<MmaSyncWord>(p, config);
      break;
    case MmaOperandType::I8:
      if (shape[2] == 32)
        return std::make_unique<MmaSyncWord>(p, config);
      break;
    case MmaOperandType::F8E4M3:
      // No fp8 fragments yet: the diagnostic below names the type.
      break;
    }
  }
  if (whyNot) {
    llvm::raw_string_ostream os(*whyNot);
    os << "has no code generation yet for " << p.operandType << " operands with "
       << stringifyMmaKind(config.getInstruction()) << " ["
       << llvm::interleaved(config.getInstructionShape())
       << "]; implemented: fma [1, 1, 1] on float types and i8, mma_sync "
          "[16, 8, 16] on f16/bf16, [16, 8, 8] on f16 and f32 (tf32), "
          "[16, 8, 32] on i8, wgmma [64, N, 16] on f16/bf16";
  }
  return nullptr;
}
