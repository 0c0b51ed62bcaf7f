//===- WarpMma.cpp - warp-level matrix instructions for GEMM kernels ------===//
//
// Each WarpMma knows one instruction: how a warp loads its operand fragments
// from the shared-memory tiles (layout: see MatmulEmitter.cpp), multiplies
// them into its accumulators, and where each accumulator element lands in
// the warp tile. The kernel skeleton does everything else.
//
//===----------------------------------------------------------------------===//

#include "MatmulKernel.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/NVGPU/IR/NVGPUDialect.h"
#include "llvm/Support/InterleavedRange.h"
#include "mlir/Dialect/UB/IR/UBOps.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

using namespace mlir;
using namespace kgraph;
using namespace kgraph::detail;

namespace {

class MmaSyncF16 : public WarpMma {
public:
  MmaSyncF16(const GemmProblem &p, MatmulConfigAttr config)
      : p(p), mTiles(config.getWarpTileM() / 16),
        nTiles(config.getWarpTileN() / 8) {}

  int64_t numAccumulators() const override { return mTiles * nTiles; }

  SmallVector<Value> zeroAccumulators(OpBuilder &b, Location loc) override {
    auto type = VectorType::get({2, 2}, p.accType);
    Value zero = arith::ConstantOp::create(
        b, loc, type, DenseElementsAttr::get(type, b.getZeroAttr(p.accType)));
    return SmallVector<Value>(numAccumulators(), zero);
  }

  SmallVector<Value> step(OpBuilder &b, Location loc, Value aTile, Value bTile,
                          Value stage, Value warpRow, Value warpCol, Value lane,
                          int64_t kOffset, ArrayRef<Value> acc) override {
    IndexMath im{b, loc};
    Value l8 = im.rem(lane, 8);
    Value idx = im.div(lane, 8);       // which 8x8 matrix this lane addresses
    Value lo = im.rem(idx, 2), hi = im.div(idx, 2);
    auto fragType = VectorType::get({4, 2}, p.aType);

    // A: matrices (m-block = idx % 2, k-block = idx / 2).
    SmallVector<Value> aFrags;
    for (int64_t mi = 0; mi < mTiles; ++mi) {
      Value mRow = im.add(warpRow, mi * 16);
      Value row, col;
      if (!p.transA) { // stored [m][k]
        row = im.add(im.add(mRow, im.mul(lo, 8)), l8);
        col = im.add(im.mul(hi, 8), kOffset);
      } else { // stored [k][m]
        row = im.add(im.add(im.mul(hi, 8), kOffset), l8);
        col = im.add(mRow, im.mul(lo, 8));
      }
      aFrags.push_back(nvgpu::LdMatrixOp::create(
          b, loc, fragType, aTile, ValueRange{stage, row, col},
          b.getBoolAttr(p.transA), b.getI32IntegerAttr(4)));
    }
    // B: matrices (k-block = idx % 2, n-block = idx / 2), two n-tiles per x4.
    SmallVector<Value> bFrags;
    auto bType = VectorType::get({2, 2}, p.bType);
    for (int64_t ni = 0; ni < nTiles; ni += 2) {
      Value nCol = im.add(warpCol, ni * 8);
      bool pair = ni + 1 < nTiles;
      // The last odd tile uses x2 (lanes 16-31 repeat lanes 0-15).
      Value kblk = lo;
      Value nblk = pair ? hi : im.c(0);
      Value row, col;
      if (!p.transB) { // stored [k][n]: transpose while loading
        row = im.add(im.add(im.mul(kblk, 8), kOffset), l8);
        col = im.add(nCol, im.mul(nblk, 8));
      } else { // stored [n][k]
        row = im.add(im.add(nCol, im.mul(nblk, 8)), l8);
        col = im.add(im.mul(kblk, 8), kOffset);
      }
      Value frag = nvgpu::LdMatrixOp::create(
          b, loc, pair ? fragType : bType, bTile, ValueRange{stage, row, col},
          b.getBoolAttr(!p.transB), b.getI32IntegerAttr(pair ? 4 : 2));
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

  /// One m16n8k16 on fragments held as vector<Rx2xT>. f16 goes through
  /// nvgpu.mma.sync; its NVVM lowering has no bf16 yet, so bf16 is written as
  /// nvvm.mma.sync on the packed 32-bit registers directly.
  Value mmaOne(OpBuilder &b, Location loc, Value a, Value bFrag, Value c) {
    if (!p.aType.isBF16())
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
    Value d = NVVM::MmaOp::create(
        b, loc, resultType, packed(a), packed(bFrag), cRegs,
        ArrayRef<int64_t>{16, 8, 16}, std::nullopt, std::nullopt,
        std::array<NVVM::MMATypes, 2>{NVVM::MMATypes::bf16, NVVM::MMATypes::bf16},
        std::array<NVVM::MMALayout, 2>{NVVM::MMALayout::row, NVVM::MMALayout::col});
    SmallVector<Value> parts;
    for (int64_t i = 0; i < 4; ++i)
      parts.push_back(LLVM::ExtractValueOp::create(b, loc, d, ArrayRef<int64_t>{i}));
    return vector::FromElementsOp::create(
        b, loc, llvm::cast<VectorType>(c.getType()), parts);
  }

  std::pair<Value, Value> elementCoords(IndexMath &im, Value lane, int64_t i,
                                        int64_t h, int64_t e) override {
    int64_t mi = i / nTiles, ni = i % nTiles;
    Value g = im.div(lane, 4), t = im.rem(lane, 4);
    Value row = im.add(g, mi * 16 + h * 8);
    Value col = im.add(im.mul(t, 2), ni * 8 + e);
    return {row, col};
  }

private:
  GemmProblem p;
  int64_t mTiles, nTiles;
};


} // namespace

std::unique_ptr<WarpMma> kgraph::detail::createWarpMma(const GemmProblem &p,
                                                       MatmulConfigAttr config,
                                                       std::string *whyNot) {
  if (config.getInstruction() == MmaKind::mma_sync &&
      config.getInstructionShape() == ArrayRef<int64_t>{16, 8, 16} &&
      (p.aType.isF16() || p.aType.isBF16()) && p.bType == p.aType &&
      p.accType.isF32())
    return std::make_unique<MmaSyncF16>(p, config);
  if (whyNot) {
    llvm::raw_string_ostream os(*whyNot);
    os << "has no code generation yet for " << p.aType << " operands with "
       << stringifyMmaKind(config.getInstruction()) << " ["
       << llvm::interleaved(config.getInstructionShape())
       << "]; implemented: mma_sync [16, 8, 16] on f16/bf16";
  }
  return nullptr;
}
