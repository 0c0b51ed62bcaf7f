//===- Wgmma.cpp - Hopper warpgroup MMA (wgmma) for GEMM kernels ----------===//
//
// wgmma.mma_async m64nNk16 with f16/bf16 operands from shared memory and f32
// accumulators (sm_90a). Four consecutive warps form a warpgroup; the
// warpgroups form a (warps_m / 4) x warps_n grid, each owning a
// (tile_m / (warps_m / 4)) x (tile_n / warps_n) tile made of 64-row slabs
// and N-wide instructions (N = instruction_shape[1]). Warp w of a warpgroup
// holds rows 16 w .. 16 w + 15 of every slab: its "warp tile" for the
// epilogue starts there.
//
// Shared-memory layout (per stage and operand; no padding): the stored tile
// (rows x cols as in MatmulEmitter.cpp: cols contiguous in global memory) is
// cut into blocks of 64 columns (128 bytes of f16/bf16), stacked block after
// block, each `rows` rows of 128 bytes; inside every 8-row x 128-byte atom
// the 16-byte chunk c of row r is stored at chunk c ^ (r % 8) (the 128-byte
// swizzle of the matrix descriptors). Element (r, c) of a tile is at
//   ((c / 64) * rows + r) * 128 + (((c % 64) / 8) ^ (r % 8)) * 16 + (c % 8) * 2
// bytes, i.e. view indices [stage][(c / 64) * rows + r][(c % 64) ^ ...]; the
// tiles start on a 1024-byte boundary. Both orientations of either operand
// use it:
//   - K-major (A [m][k], B^T [n][k]; rows run along M/N): the descriptor of
//     the 64 (or N) rows from row r0 at k offset kk starts at
//     (kk / 64) * rows * 128 + r0 * 128 + (kk % 64) * 2, stride byte offset
//     (8-row groups) 1024; the leading byte offset is unused.
//   - MN-major (A^T [k][m], B [k][n]; rows run along K; "transposed" for
//     wgmma): the descriptor of columns c0 .. c0 + 64 (N) at k offset kk
//     starts at (c0 / 64) * rows * 128 + kk * 128, leading byte offset
//     (next 64 columns) rows * 128, stride byte offset (next 8 k) 1024.
// (PTX ISA, "Matrix Descriptor Format" and "Shared Memory Matrix Layout";
// CUTLASS cute/atom/mma_traits_sm90_gmma.hpp, canonical GMMA layouts.)
//
// Synchronization: cp.async writes are made visible to the tensor cores'
// async proxy by fence.proxy.async before the stage barrier; each k tile is
// wgmma.fence, the tile's wgmmas, commit_group, then wait_group 1 (with >= 3
// stages: the tile's MMAs overlap the next tile's barrier and copies, and the
// skeleton loads one tile less ahead so no stage is overwritten while read)
// or wait_group 0. The accumulators stay in the instruction's register
// structs through the loop and become vectors only after the final
// wait_group 0.
//
//===----------------------------------------------------------------------===//

#include "MatmulKernel.h"
#include "kgraph/Dialect/KGraph/Transforms/MatmulTiling.h"
#include "kgraph/Target/ElementTypes.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

using namespace mlir;
using namespace kgraph;
using namespace kgraph::detail;

namespace {

/// Bytes of an 8-row swizzle atom: the descriptors' stride byte offset.
constexpr int64_t kAtomBytes = 1024;

class Wgmma : public WarpMma {
public:
  /// `operandType` / `accType`: the instruction's types of A and B / of
  /// the accumulators.
  Wgmma(const MatmulProblem &p, MatmulConfigAttr config,
        NVVM::WGMMATypes operandType, NVVM::WGMMATypes accType)
      : p(p), operandType(operandType), accType(accType) {
    tm = config.getTileM();
    tn = config.getTileN();
    tk = config.getTileK();
    stages = config.getStages();
    warpsN = config.getWarpsN();
    wgM = tm / (config.getWarpsM() / 4);
    wgN = tn / warpsN;
    instN = config.getInstructionShape()[1];
    slabs = wgM / 64;
    nInst = wgN / instN;
  }

  /// Whether the stored rows of operand A (isA) or B run along M/N (the
  /// columns along K).
  bool kMajor(bool isA) const { return isA ? !p.transposeA : p.transposeB; }
  int64_t storedRows(bool isA) const {
    return isA ? (p.transposeA ? tk : tm) : (p.transposeB ? tn : tk);
  }
  int64_t storedCols(bool isA) const {
    return isA ? (p.transposeA ? tm : tk) : (p.transposeB ? tk : tn);
  }
  int64_t stageBytes(bool isA) const {
    return storedRows(isA) * storedCols(isA) * byteWidth(p.operandType);
  }

  int64_t numAccumulators() const override {
    return slabs * nInst * (instN / 8);
  }

  SmallVector<Value> zeroAccumulators(OpBuilder &b, Location loc) override {
    Value zero = LLVM::ZeroOp::create(b, loc, structType(b.getContext()));
    return SmallVector<Value>(slabs * nInst, zero);
  }

  std::pair<Value, Value> warpOrigin(IndexMath &im, Value warp,
                                     MatmulConfigAttr) override {
    Value group = im.div(warp, 4);
    Value groupRow = im.mul(im.div(group, warpsN), wgM);
    Value row = im.add(groupRow, im.mul(im.rem(warp, 4), 16));
    return {row, im.mul(im.rem(group, warpsN), wgN)};
  }

  SmallVector<int64_t> tileShape(bool isA) const override {
    return {stages, storedCols(isA) / kSwizzleBlockCols * storedRows(isA),
            kSwizzleBlockCols};
  }

  SmallVector<Value> tileIndices(IndexMath &im, bool isA, Value stage,
                                 Value row, Value col) const override {
    Value block = im.div(col, kSwizzleBlockCols);
    Value inBlock = im.rem(col, kSwizzleBlockCols);
    Value chunkInRow = im.div(inBlock, 8);
    Value chunk =
        arith::XOrIOp::create(im.b, im.loc, chunkInRow, im.rem(row, 8));
    Value storedRow = im.add(im.mul(block, storedRows(isA)), row);
    Value chunkStart = im.mul(chunk, 8);
    return {stage, storedRow, im.add(chunkStart, im.rem(inBlock, 8))};
  }

  int64_t tileAlignment() const override { return kWgmmaTileAlignment; }

  int64_t tilesInFlight() const override { return stages >= 3 ? 1 : 0; }

  void stageLanded(OpBuilder &b, Location loc) override {
    NVVM::FenceProxyOp::create(
        b, loc, NVVM::ProxyKind::async_shared,
        NVVM::SharedSpaceAttr::get(b.getContext(),
                                   NVVM::SharedSpace::shared_cta));
  }

  void beginTile(OpBuilder &b, Location loc) override {
    NVVM::WgmmaFenceAlignedOp::create(b, loc);
  }

  void endTile(OpBuilder &b, Location loc) override {
    NVVM::WgmmaGroupSyncAlignedOp::create(b, loc);
    NVVM::WgmmaWaitGroupSyncOp::create(b, loc, tilesInFlight());
  }

  SmallVector<Value> step(OpBuilder &b, Location loc, Value aTile, Value bTile,
                          Value stage, Value warpRow, Value warpCol, Value lane,
                          int64_t kOffset, ArrayRef<Value> acc) override {
    IndexMath im{b, loc};
    // The warpgroup's first row: warp rows are 16 w past it, w < 4.
    Value groupRow = im.mul(im.div(warpRow, 64), 64);
    Value aBase = stageAddress(im, aTile, /*isA=*/true, stage);
    Value bBase = stageAddress(im, bTile, /*isA=*/false, stage);
    SmallVector<Value> descA, descB;
    for (int64_t s = 0; s < slabs; ++s)
      descA.push_back(
          descriptor(im, /*isA=*/true, aBase, im.add(groupRow, 64 * s), kOffset));
    for (int64_t n = 0; n < nInst; ++n)
      descB.push_back(descriptor(im, /*isA=*/false, bBase,
                                 im.add(warpCol, n * instN), kOffset));
    MLIRContext *ctx = b.getContext();
    // layout row for A and col for B: K-major (no transpose).
    auto layoutA = kMajor(true) ? NVVM::MMALayout::row : NVVM::MMALayout::col;
    auto layoutB = kMajor(false) ? NVVM::MMALayout::col : NVVM::MMALayout::row;
    SmallVector<Value> out;
    for (int64_t s = 0; s < slabs; ++s)
      for (int64_t n = 0; n < nInst; ++n)
        out.push_back(NVVM::WgmmaMmaAsyncOp::create(
            b, loc, structType(ctx), acc[s * nInst + n], descA[s], descB[n],
            NVVM::MMAShapeAttr::get(ctx, 64, instN, 16), operandType,
            operandType, accType, NVVM::WGMMAScaleOut::one,
            NVVM::WGMMAScaleIn::one, NVVM::WGMMAScaleIn::one, layoutA, layoutB,
            /*satfinite=*/nullptr));
    return out;
  }

  SmallVector<Value> finish(OpBuilder &b, Location loc,
                            ArrayRef<Value> acc) override {
    NVVM::WgmmaWaitGroupSyncOp::create(b, loc, 0);
    // Registers 4j .. 4j + 3 of an instruction: rows g and g + 8, columns
    // 8j + 2t + {0, 1} (PTX ISA, "Matrix Fragments for wgmma.m64nNk16",
    // accumulator D), as the vector<2x2xf32> of elementCoords.
    auto vecType = VectorType::get({2, 2}, p.getAccumulatorType());
    SmallVector<Value> out;
    for (Value s : acc)
      for (int64_t j = 0; j < instN / 8; ++j) {
        SmallVector<Value> regs;
        for (int64_t r = 0; r < 4; ++r)
          regs.push_back(LLVM::ExtractValueOp::create(
              b, loc, s, ArrayRef<int64_t>{4 * j + r}));
        out.push_back(vector::FromElementsOp::create(b, loc, vecType, regs));
      }
    return out;
  }

  std::pair<Value, Value> elementCoords(IndexMath &im, Value lane, int64_t i,
                                        int64_t h, int64_t e) override {
    int64_t perInst = instN / 8;
    int64_t s = i / (nInst * perInst), n = (i / perInst) % nInst,
            j = i % perInst;
    Value row = im.add(im.div(lane, 4), 64 * s + 8 * h);
    Value col = im.add(im.mul(im.rem(lane, 4), 2), n * instN + 8 * j + e);
    return {row, col};
  }

private:
  LLVM::LLVMStructType structType(MLIRContext *ctx) const {
    return LLVM::LLVMStructType::getLiteral(
        ctx, SmallVector<Type>(instN / 2, Float32Type::get(ctx)));
  }

  /// Shared-memory byte address of stage `stage` of an operand's tiles.
  Value stageAddress(IndexMath &im, Value tile, bool isA, Value stage) {
    Value base = memref::ExtractAlignedPointerAsIndexOp::create(im.b, im.loc,
                                                                tile);
    return im.add(base, im.mul(stage, stageBytes(isA)));
  }

  /// The matrix descriptor of the operand's rows (A: m, B: n) from `mn0` at
  /// k offset `kOffset` (see the file header).
  Value descriptor(IndexMath &im, bool isA, Value stageBase, Value mn0,
                   int64_t kOffset) {
    int64_t rows = storedRows(isA);
    Value start;
    int64_t lbo;
    if (kMajor(isA)) {
      start = im.add(im.add(stageBase, im.mul(mn0, kSwizzleRowBytes)),
                     (kOffset / kSwizzleBlockCols) * rows * kSwizzleRowBytes +
                         (kOffset % kSwizzleBlockCols) * byteWidth(p.operandType));
      lbo = 16; // unused by swizzled K-major layouts
    } else {
      start = im.add(im.add(stageBase,
                            im.mul(im.div(mn0, kSwizzleBlockCols), rows * kSwizzleRowBytes)),
                     kOffset * kSwizzleRowBytes);
      lbo = rows * kSwizzleRowBytes;
    }
    OpBuilder &b = im.b;
    Location loc = im.loc;
    Type i64 = b.getI64Type();
    // Bits 0-13: address >> 4 (18-bit shared-memory addresses); 16-29:
    // leading byte offset >> 4; 32-45: stride byte offset >> 4; 62-63:
    // layout type, 1 = 128-byte swizzle.
    Value addr = arith::IndexCastUIOp::create(b, loc, i64, start);
    auto c64 = [&](int64_t v) {
      return arith::ConstantIntOp::create(b, loc, i64, v).getResult();
    };
    Value address = arith::AndIOp::create(b, loc, addr, c64(0x3FFFF));
    Value field = arith::ShRUIOp::create(b, loc, address, c64(4));
    int64_t fixed = ((lbo >> 4) << 16) | ((kAtomBytes >> 4) << 32) |
                    (int64_t(1) << 62);
    return arith::OrIOp::create(b, loc, field, c64(fixed));
  }

  MatmulProblem p;
  NVVM::WGMMATypes operandType, accType;
  int64_t tm, tn, tk, stages, warpsN, wgM, wgN, instN, slabs, nInst;
};

} // namespace

std::unique_ptr<WarpMma> kgraph::detail::createWgmma(const MatmulProblem &p,
                                                     MatmulConfigAttr config,
                                                     std::string *whyNot) {
  auto fail = [&](const Twine &why) -> std::unique_ptr<WarpMma> {
    if (whyNot)
      *whyNot = why.str();
    return nullptr;
  };
  // The swizzled layout above holds 16-bit elements (64 to a 128-byte row)
  // and the register structs f32 accumulators: the table's f16 and bf16
  // operand kinds, with their f32 accumulator.
  std::optional<MmaOperandType> operand =
      getMmaOperandType(p.operandType, /*allowTf32=*/false);
  bool implemented = operand && (*operand == MmaOperandType::F16 ||
                                 *operand == MmaOperandType::BF16);
  if (p.operandType != p.operandType || !implemented || !p.getAccumulatorType().isF32() ||
      p.getAccumulatorType() != getAccumulatorType(p.operandType))
    return fail("wgmma is implemented for f16 and bf16 operands with f32 "
                "accumulators only");
  std::string reason = getWgmmaConfigError(config, p.transposeA, p.transposeB);
  if (!reason.empty())
    return fail(reason);
  std::optional<NVVM::WGMMATypes> operandType =
      NVVM::symbolizeWGMMATypes(getMmaOperandInfo(*operand).ptxType);
  std::optional<NVVM::WGMMATypes> accType =
      NVVM::symbolizeWGMMATypes(lookupElementType(p.getAccumulatorType())->ptxType);
  assert(operandType && accType && "the table's PTX types are NVVM's");
  return std::make_unique<Wgmma>(p, config, *operandType, *accType);
}
