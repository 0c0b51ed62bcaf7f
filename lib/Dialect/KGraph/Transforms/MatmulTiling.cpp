//===- MatmulTiling.cpp - tiling decision of GEMM kernels ----------------===//
//
// The candidate search behind #kgraph.matmul_config (enumeration, ranking,
// the copy engine and rasterization each candidate gets, launch variants)
// and the check of a configuration against a problem and a target. The
// resource and cost model it ranks with is MatmulModel.cpp.
//
// Ranking: the model is not finer than a few percent, so every candidate
// within 3% of the fastest estimate counts as equally fast. Among those the
// pick is a wgmma one where there is one (the wider instruction first), then
// the one with the most stages (slack against latency spikes that a
// mean-latency model does not see), then the least global + shared-memory
// time (slack behind the binding limit), the larger block tile, the smaller
// shared-memory footprint, fewer warps, and finally enumeration order
// (tile_m, tile_n, tile_k, warps_m, warps_n, stages ascending), so the
// choice is deterministic.
//
//===----------------------------------------------------------------------===//

#include "MatmulModel.h"
#include "kgraph/Dialect/KGraph/Transforms/GemmGroup.h"
#include "kgraph/Target/ElementTypes.h"
#include "kgraph/Target/SMTargets.h"

#include "mlir/IR/BuiltinTypes.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/MathExtras.h"
#include "llvm/Support/raw_ostream.h"

#include <cmath>
#include <limits>
#include <optional>

using namespace mlir;
using namespace kgraph;
using namespace kgraph::detail;

//===----------------------------------------------------------------------===//
// Instruction, load width, padding
//===----------------------------------------------------------------------===//

/// The table's operand type for `problem`, if tensor cores can take it.
static std::optional<MmaOperandType> mmaOperandType(const MatmulProblem &p) {
  return getMmaOperandType(p.operandType, p.allowTf32);
}

static StringRef mmaOperandTypeName(MmaOperandType t) {
  return getMmaOperandInfo(t).name;
}

/// The instruction the search uses: mma.sync of the m16n8kX family the
/// target's table lists for the operand type (sm_80+: m16n8k16 f16/bf16,
/// m16n8k8 tf32, m16n8k32 i8; sm_75: m16n8k8 f16), else SIMT fma. Volta's
/// m8n8k4 and Turing's i8 m8n8k16 use other fragment layouts that kgraph
/// does not generate, so those types get fma there.
static void chooseInstruction(const MatmulProblem &p, const SMTarget &target,
                              Tiling &t) {
  t.kind = MmaKind::fma;
  t.instM = t.instN = t.instK = 1;
  std::optional<MmaOperandType> type = mmaOperandType(p);
  if (!type)
    return;
  for (const MmaShape &s : target.mmaShapes) {
    if (s.warpgroup || s.operandType != *type || s.m != 16)
      continue;
    t.kind = MmaKind::mma_sync;
    t.instM = s.m;
    t.instN = s.n;
    t.instK = s.k;
    return;
  }
}

/// Elements per vector access along a contiguous extent: 16 bytes' worth
/// when the extent is a multiple of it, else the largest power of two that
/// divides the extent, so every access stays aligned.
static int64_t loadWidthFor(int64_t extent, int64_t eb) {
  int64_t width = 16 / eb;
  while (width > 1 && extent % width != 0)
    width /= 2;
  return width;
}

/// Row padding of the shared-memory tiles. ldmatrix (and the SIMT loads,
/// and the 16-byte cp.async stores) touch 8 rows x 16 bytes per phase; 32
/// banks of 4 bytes span 128 bytes, i.e. eight 16-byte slots. Row r starts
/// in slot (r * rowBytes / 16) mod 8, which takes 8 distinct slots exactly
/// when rowBytes / 16 is odd. Every candidate row (a power of two of at
/// least 32 bytes) has an even count, so it is padded by 16 bytes, making
/// the count odd and the phase conflict-free. A row of odd 16-byte count
/// needs nothing.
static int64_t paddingFor(const Tiling &t, const MatmulProblem &p) {
  int64_t eb = elementBytes(p.operandType);
  int64_t rowA = (p.transposeA ? t.tileM : t.tileK) * eb;
  int64_t rowB = (p.transposeB ? t.tileK : t.tileN) * eb;
  auto conflicted = [](int64_t rowBytes) {
    return rowBytes % 16 == 0 && (rowBytes / 16) % 2 == 0;
  };
  return conflicted(rowA) || conflicted(rowB) ? 16 / eb : 0;
}

/// Why kgraph's wgmma kernel cannot run `t` (see getWgmmaConfigError), or
/// an empty string.
static std::string wgmmaError(const Tiling &t, bool transposeA,
                              bool transposeB) {
  std::string msg;
  llvm::raw_string_ostream os(msg);
  if (t.instM != 64 || t.instK != 16 || t.instN % 8 != 0 || t.instN < 8 ||
      t.instN > 256)
    os << "wgmma takes instruction_shape [64, N, 16] with N a multiple of 8 "
          "in [8, 256], got [" << t.instM << ", " << t.instN << ", "
       << t.instK << "]";
  else if (t.smemPadding != 0)
    os << "wgmma takes smem_padding = 0 (its shared-memory tiles are "
          "swizzled, not padded), got "
       << t.smemPadding;
  else if ((!transposeA || transposeB) && t.tileK % 64 != 0)
    os << "wgmma needs tile_k to be a multiple of 64 for a K-major operand "
          "(A, or B with transpose_b), got "
       << t.tileK;
  else if (!transposeB && t.instN % 64 != 0)
    os << "wgmma with an N-major B (no transpose_b) needs the instruction's N "
          "to be a multiple of 64, got "
       << t.instN;
  return msg;
}

std::string kgraph::getWgmmaConfigError(MatmulConfigAttr config,
                                        bool transposeA, bool transposeB) {
  return wgmmaError(Tiling::fromAttr(config), transposeA, transposeB);
}

bool kgraph::usesTmaIm2col(const MatmulProblem &p) {
  return p.conv && !p.conv->isPlainGemm();
}

TmaIm2colCorners kgraph::getTmaIm2colCorners(const ConvGeometry &g) {
  TmaIm2colCorners c;
  c.lowerW = -g.padLeft;
  c.lowerH = -g.padTop;
  c.upperW = (g.outW - 1) * g.strideW + 1 - g.width - g.padLeft;
  c.upperH = (g.outH - 1) * g.strideH + 1 - g.height - g.padTop;
  return c;
}

/// Why TMA's im2col mode cannot gather the input of `p`'s conv2d with
/// `config`, or an empty string. A 4-D im2col map (cuTensorMapEncodeIm2col)
/// takes corners in [-128, 127], traversal strides up to 8 and boxes of up
/// to 256 pixels here; the instruction's i16 filter-tap offsets are kept in
/// the corners' range.
static std::string im2colError(MatmulConfigAttr config, const MatmulProblem &p) {
  std::string msg;
  llvm::raw_string_ostream os(msg);
  const ConvGeometry &g = *p.conv;
  constexpr int64_t kLow = -128, kHigh = 127, kMaxStride = 8;
  TmaIm2colCorners c = getTmaIm2colCorners(g);
  auto outside = [&](int64_t v) { return v < kLow || v > kHigh; };
  int64_t tk = config.getTileK();
  if (g.channelsPerGroup() % tk != 0)
    os << "copy = tma loads a conv2d's input one filter tap at a time (TMA's "
          "im2col mode): tile_k "
       << tk << " must divide its " << g.channelsPerGroup() << " channels";
  else if (config.getTileM() > kTmaMaxBoxRows)
    os << "copy = tma gathers a conv2d's input in boxes of at most "
       << kTmaMaxBoxRows << " pixels (TMA's im2col mode); tile_m is "
       << config.getTileM();
  else if (g.strideH > kMaxStride || g.strideW > kMaxStride)
    os << "copy = tma walks a conv2d's input with its strides (TMA's im2col "
          "mode), at most "
       << kMaxStride << "; the strides are " << g.strideH << "x" << g.strideW;
  else if (outside(c.lowerW) || outside(c.lowerH) || outside(c.upperW) ||
           outside(c.upperH) ||
           outside((g.kernelH - 1) * g.dilationH) ||
           outside((g.kernelW - 1) * g.dilationW))
    os << "copy = tma gathers a conv2d's input through an im2col tensor map, "
          "whose corners and filter offsets lie in ["
       << kLow << ", " << kHigh << "]; this conv2d needs corners ["
       << c.lowerW << ", " << c.lowerH << "] to [" << c.upperW << ", "
       << c.upperH << "] and offsets up to [" << (g.kernelW - 1) * g.dilationW
       << ", " << (g.kernelH - 1) * g.dilationH << "]";
  return msg;
}

std::string kgraph::getTmaConfigError(MatmulConfigAttr config,
                                      const MatmulProblem &p,
                                      const SMTarget &target) {
  if (config.getCopy() != CopyKind::tma)
    return "";
  std::string msg;
  llvm::raw_string_ostream os(msg);
  int64_t eb = elementBytes(p.operandType);
  auto misaligned = [&](int64_t extent) { return (extent * eb) % 16 != 0; };
  // Stored tile rows of A and B (see MatmulEmitter.cpp's layout).
  int64_t rowsA = p.transposeA ? config.getTileK() : config.getTileM();
  int64_t rowsB = p.transposeB ? config.getTileN() : config.getTileK();
  auto badBox = [](int64_t rows) {
    return rows > kTmaMaxBoxRows && rows % kTmaMaxBoxRows != 0;
  };
  constexpr int64_t kMaxCoord = int64_t(1) << 31;
  if (!target.hasTma)
    os << "copy = tma needs the tensor memory accelerator "
          "(cp.async.bulk.tensor), which "
       << target.name << " lacks";
  else if (const ElementTypeInfo *info = lookupElementType(p.operandType);
           !info || !info->tensorMapDataType)
    os << "copy = tma has no tensor-map data type for '" << p.operandType
       << "' operands";
  else if (p.conv && (!p.conv->nhwc || p.conv->groups != 1))
    os << "copy = tma loads a conv2d's input only in nhwc layout with one "
          "group (TMA's im2col mode gathers whole pixels)";
  else if (std::string why = usesTmaIm2col(p) ? im2colError(config, p) : "";
           !why.empty())
    os << why;
  else if (p.stagedInRegisters)
    os << "copy = tma cannot load an operand with a prologue (cast or "
          "scale): TMA copies bytes unchanged";
  else if (misaligned(p.getContiguousExtentA()))
    os << "copy = tma needs rows of 16-byte multiples (tensor-map strides), "
          "but lhs rows are "
       << p.getContiguousExtentA() << " elements (" << (p.transposeA ? "M" : "K")
       << ") of " << eb << " bytes";
  else if (misaligned(p.getContiguousExtentB()))
    os << "copy = tma needs rows of 16-byte multiples (tensor-map strides), "
          "but rhs rows are "
       << p.getContiguousExtentB() << " elements (" << (p.transposeB ? "K" : "N")
       << ") of " << eb << " bytes";
  else if (p.m >= kMaxCoord || p.n >= kMaxCoord || p.k >= kMaxCoord ||
           p.batch >= kMaxCoord)
    os << "copy = tma addresses tensors with 32-bit coordinates; a dimension "
          "reaches 2^31";
  else if (badBox(rowsA) || badBox(rowsB))
    os << "copy = tma loads boxes of at most " << kTmaMaxBoxRows
       << " rows: stored tile rows " << (badBox(rowsA) ? rowsA : rowsB)
       << " are not a multiple of it";
  else if (int64_t consumers = config.getNumThreads();
           consumers * kTmaConsumerRegisters +
               kTmaProducerThreads * kTmaProducerRegisters >
           int64_t(target.registersPerSM))
    // Found by measuring (kgraph.tune on the H200): 512 consumer threads
    // hung in setmaxnreg.inc.
    os << "copy = tma raises each of the " << consumers
       << " consumer threads to " << kTmaConsumerRegisters
       << " registers (setmaxnreg) beside the producer warpgroup's "
       << kTmaProducerRegisters << ", more than the "
       << target.registersPerSM << " registers of an " << target.name
       << " SM: the block would wait forever; use at most "
       << (int64_t(target.registersPerSM) -
           kTmaProducerThreads * kTmaProducerRegisters) /
              kTmaConsumerRegisters / 32
       << " consumer warps";
  return msg;
}

/// The warpgroup shape of the target's table that kgraph's wgmma kernel
/// implements for `p` (f16/bf16 operands), if any.
static std::optional<MmaShape> wgmmaShape(const MatmulProblem &p,
                                          const SMTarget &target) {
  std::optional<MmaOperandType> type = mmaOperandType(p);
  if (!type || (*type != MmaOperandType::F16 && *type != MmaOperandType::BF16))
    return std::nullopt;
  for (const MmaShape &s : target.mmaShapes)
    if (s.warpgroup && s.operandType == *type && s.m == 64 && s.k == 16)
      return s;
  return std::nullopt;
}

//===----------------------------------------------------------------------===//
// Search
//===----------------------------------------------------------------------===//

/// M tiles per band of grouped rasterization (#kgraph.matmul_config's
/// group_m) when the model uses it.
static constexpr int64_t kRasterGroupM = 8;

/// The band height with TMA loads (copy = tma), measured on the H200 (f16,
/// run S2-7): 8192^3 128x256 tiles 643 TFLOP/s with group_m 16, 623 with 8;
/// 256x128 tiles 623 with 8 (617 with 4, 615 with 16); 4096^3 128x256 612,
/// 256x128 601 (group_m 8).
static constexpr int64_t kRasterGroupMTma = 16;

/// TMA loads from a producer warpgroup (copy = tma) wherever the lowering
/// takes them, for wgmma blocks that own their SM anyway (the producer's 128
/// threads and the 16 bytes of mbarriers per stage then change no occupancy
/// the model counted). Measured on the H200, f16 matmul + bias + relu at
/// 8192^3: 1.71 ms against 1.95 ms with cp.async (run S2-5).
static bool usesTma(const Tiling &t, const MatmulEstimate &e,
                    const MatmulProblem &p, const SMTarget &target,
                    MLIRContext *ctx) {
  if (t.kind != MmaKind::wgmma || e.occupancy.blocksPerSM != 1)
    return false;
  Tiling withTma = t;
  withTma.copy = CopyKind::tma;
  int64_t smem = getGemmSharedMemoryLayout(p, tileShapeOf(withTma)).totalBytes;
  return smem <= int64_t(target.sharedMemPerBlock) &&
         getTmaConfigError(withTma.toAttr(ctx), p, target).empty();
}

/// Grouped rasterization (group_m = kRasterGroupM) for wgmma grids of more
/// than one wave: blocks resident together then share A and B panels in L2.
/// Measured on the H200 (bench/RESULTS.md, f16 128x256 wgmma tiles): 8192^3
/// 495 TFLOP/s without, 519 with group_m = 8 (527 with 16); 4096^3 510 ->
/// 522.
static bool usesGroupedRaster(const Tiling &t, const MatmulEstimate &e,
                              const MatmulProblem &p, const SMTarget &target) {
  int64_t tilesM = llvm::divideCeilSigned(p.m, t.tileM),
          tilesN = llvm::divideCeilSigned(p.n, t.tileN);
  int64_t resident =
      int64_t(target.numSMs) * std::max<int64_t>(1, e.occupancy.blocksPerSM);
  return t.kind == MmaKind::wgmma && tilesM > kRasterGroupM &&
         p.batch * tilesM * tilesN > resident;
}

/// The deepest wgmma pipeline the model considers (shared memory permitting;
/// more stages rank first among equal estimates). From 3 stages on, one of
/// them is still being read by the previous tile's wgmmas, and the loads'
/// latency under load exceeds what 4 stages in flight cover: on the deep
/// 1x1 conv 2048->512 (3136x512x2048, 128x104 tiles) 5, 6 and 7 stages
/// ran 0.75, 0.80 and 0.81 of cuDNN, 128x128 0.81 and 0.83 with 5 and 6
/// (S30-2, S30-3); cuBLAS runs its 128x96 tile there 7 deep (S30-1).
static constexpr int64_t kMaxWgmmaStages = 7;
/// The deepest wgmma pipeline with cp.async copies (the measured depths).
static constexpr int64_t kMaxCpAsyncWgmmaStages = 5;
/// The deepest wgmma pipeline of a conv whose input TMA gathers by im2col
/// boxes: on the 512 3x3 conv at 7x7 (128x112 tiles, S31-1) 7 stages ran
/// 36.0 us and 6 stages 31.5 us; the 1x1 convs, plain TMA GEMMs, ran
/// fastest 7 deep.
static constexpr int64_t kMaxIm2colWgmmaStages = 6;

/// The model picks a stream-K grid only this much faster than the best
/// data-parallel one (its stream-K estimates are the coarser).
static constexpr double kStreamKMinGain = 0.15;

/// Band heights of grouped rasterization (group_m) the variants try.
static constexpr int64_t kVariantGroupM[] = {1, 4, 8, 16, 32};

/// `t` as a stream-K grid of `blocks` persistent blocks (default one per
/// SM) with TMA copies, with as many of its stages as fit beside the staged
/// epilogue's own region.
static Tiling streamKVariant(Tiling t, const MatmulProblem &p,
                             const SMTarget &target, int64_t blocks = 0) {
  t.copy = CopyKind::tma;
  t.groupM = 1;
  t.streamK = blocks > 0 ? blocks : target.numSMs;
  while (t.stages > 1 &&
         getGemmSharedMemoryLayout(p, tileShapeOf(t)).totalBytes >
             int64_t(target.sharedMemPerBlock))
    --t.stages;
  return t;
}

/// Output tiles of `t`'s data-parallel grid over `p`.
static int64_t outputTiles(const Tiling &t, const MatmulProblem &p) {
  return p.batch * llvm::divideCeilSigned(p.m, t.tileM) *
         llvm::divideCeilSigned(p.n, t.tileN);
}

/// The persistent blocks of a grid of whole tiles per block for `tiles`
/// output tiles: the largest divisor of `tiles` that uses at least 3/4 of
/// the SMs and at most all of them, when each block gets several tiles; 0
/// when there is none.
static int64_t wholeTileBlocks(int64_t tiles, const SMTarget &target) {
  int64_t sms = target.numSMs;
  if (tiles <= sms)
    return 0;
  for (int64_t d = sms; 4 * d >= 3 * sms; --d)
    if (tiles % d == 0)
      return d;
  return 0;
}

/// Appends to `ranked` the variants of its wgmma tilings that the model does
/// not tell apart, for measured tuning (bench/gemm_variants): the other band
/// heights of grouped rasterization (below the grid's M tiles), the other
/// copy engine (cp.async or TMA), a stream-K grid of one block per SM and a
/// persistent grid of whole tiles per block (wholeTileBlocks), in rank
/// order after every ranked tiling, so the ranking and its rank 1 are
/// unchanged. Variants the problem or
/// target cannot run are left to the one legality check (verifyForGroup)
/// that every listed candidate passes; duplicates are dropped.
static void appendLaunchVariants(SmallVector<MatmulConfigAttr> &ranked,
                                 const MatmulProblem &p,
                                 const SMTarget &target) {
  llvm::SmallDenseSet<Attribute> seen(ranked.begin(), ranked.end());
  size_t primaries = ranked.size();
  for (size_t i = 0; i < primaries; ++i) {
    // The variants are of the tiling's data-parallel grid (rank 1 may be a
    // stream-K one).
    Tiling t = Tiling::fromAttr(ranked[i]);
    t.streamK = 0;
    if (t.kind != MmaKind::wgmma)
      continue;
    int64_t tilesM = llvm::divideCeilSigned(p.m, t.tileM);
    for (CopyKind copy : {t.copy, t.copy == CopyKind::tma ? CopyKind::cp_async
                                                          : CopyKind::tma}) {
      if (copy == CopyKind::tma && !target.hasTma)
        continue;
      // The other copy engine may not fit (cp.async copies' address
      // registers on a TMA tile): no block per SM, no variants.
      if (copy != t.copy) {
        Tiling other = t;
        other.copy = copy;
        if (estimateTiling(other, p, target).occupancy.blocksPerSM == 0)
          continue;
      }
      for (int64_t gm : kVariantGroupM) {
        if (gm > 1 && gm >= tilesM)
          continue;
        Tiling v = t;
        v.copy = copy;
        v.groupM = gm;
        MatmulConfigAttr attr = v.toAttr(ranked[i].getContext());
        if (seen.insert(attr).second)
          ranked.push_back(attr);
      }
    }
    // One block per SM (rounds of whole tiles, the rest split where that
    // pays: getStreamKSchedule), and a persistent grid of whole tiles per
    // block where a divisor fits.
    if (!target.hasTma)
      continue;
    int64_t tiles = outputTiles(t, p);
    SmallVector<Tiling, 2> persistent;
    if (tiles != target.numSMs)
      persistent.push_back(streamKVariant(t, p, target));
    if (int64_t whole = wholeTileBlocks(tiles, target))
      persistent.push_back(streamKVariant(t, p, target, whole));
    for (const Tiling &v : persistent) {
      MatmulConfigAttr attr = v.toAttr(ranked[i].getContext());
      if (seen.insert(attr).second)
        ranked.push_back(attr);
    }
  }
}

/// A persistent variant (copy = tma) that the model estimates at least
/// kStreamKMinGain faster than `best`, the best data-parallel tiling, with
/// the block turnovers of its grid. Two kinds:
/// - `best` as whole tiles per block (wholeTileBlocks), or as one block per
///   SM in rounds of whole tiles (getStreamKSchedule), matmuls and convs:
///   the next tile's loads and wgmmas run under the previous tile's
///   epilogue (bench/RESULTS.md, S28-1: the 64-channel 3x3 conv 1.16x its
///   data-parallel pick; S29-2: the 128-channel 3x3 conv's 392 tiles on
///   132 blocks 1.19x). Only `best`'s own tiling: the model does not tell
///   stage counts apart where L2 binds, and the persistent grid keeps as
///   many of `best`'s stages as fit;
/// - one block per SM splitting tiles, the fastest of the wgmma tilings
///   among `candidates`, plain matmuls only: measured there (S24-2:
///   2.2-3.5x on 4-16 tiles of 16-32K deep); on the deep-K 1x1 convs it ran
///   0.58-0.63 of cuDNN against the pick's 0.81-0.85 (S28-1), and a deep-K
///   conv over few pixels is kgraph-split-k-convs'.
template <typename Candidates, typename GetTiling>
static std::optional<Tiling>
chooseStreamK(const Candidates &candidates, GetTiling getTiling,
              const Tiling &best, const MatmulEstimate &bestEstimate,
              const MatmulProblem &p, const SMTarget &target,
              MLIRContext *ctx) {
  if (!target.hasTma)
    return std::nullopt;
  std::optional<Tiling> chosen;
  double bestSk = std::numeric_limits<double>::infinity();
  llvm::SmallDenseSet<Attribute> seen;
  auto consider = [&](const Tiling &v) {
    MatmulConfigAttr attr = v.toAttr(ctx);
    if (!seen.insert(attr).second ||
        !getTmaConfigError(attr, p, target).empty())
      return;
    MatmulEstimate e = estimateTiling(v, p, target);
    if (e.occupancy.blocksPerSM == 0 || e.cycles >= bestSk)
      return;
    bestSk = e.cycles;
    chosen = v;
  };
  if (best.kind == MmaKind::wgmma) {
    int64_t tiles = outputTiles(best, p);
    if (int64_t whole = wholeTileBlocks(tiles, target))
      consider(streamKVariant(best, p, target, whole));
    // One block per SM: rounds of whole tiles, the rest as the schedule
    // says (whole where a split does not pay).
    if (tiles > target.numSMs)
      consider(streamKVariant(best, p, target));
  }
  if (!p.conv)
    for (const auto &c : candidates)
      if (getTiling(c).kind == MmaKind::wgmma)
        consider(streamKVariant(getTiling(c), p, target));
  if (!chosen || bestSk * (1 + kStreamKMinGain) >=
                     bestEstimate.cycles + bestEstimate.turnoverCycles)
    return std::nullopt;
  return chosen;
}

FailureOr<SmallVector<MatmulConfigAttr>>
kgraph::rankMatmulConfigs(MLIRContext *ctx, const MatmulProblem &p,
                          const SMTarget &target, std::string *whyNot) {
  Tiling base{};
  chooseInstruction(p, target, base);
  int64_t eb = elementBytes(p.operandType);
  base.loadWidth = std::min(loadWidthFor(p.getContiguousExtentA(), eb),
                            loadWidthFor(p.getContiguousExtentB(), eb));
  int64_t maxStages = target.hasCpAsync ? 4 : 2;

  struct Candidate {
    Tiling tiling;
    MatmulEstimate estimate;
  };
  SmallVector<Candidate, 0> candidates;

  const int64_t tiles[] = {32, 64, 128, 256};
  const int64_t tileKs[] = {16, 32, 64};
  const int64_t warpCounts[] = {1, 2, 4};
  for (int64_t tm : tiles)
    for (int64_t tn : tiles)
      for (int64_t tk : tileKs) {
        if (tk % base.instK != 0)
          continue;
        int64_t kIters = llvm::divideCeilSigned(p.k, tk);
        for (int64_t wm : warpCounts)
          for (int64_t wn : warpCounts) {
            Tiling t = base;
            t.tileM = tm;
            t.tileN = tn;
            t.tileK = tk;
            t.warpsM = wm;
            t.warpsN = wn;
            if (t.warpTileM() % t.instM != 0 || t.warpTileN() % t.instN != 0)
              continue;
            if (t.kind == MmaKind::fma) {
              auto [lanesM, lanesN] = simtLanes(t);
              if (t.warpTileM() % lanesM != 0 || t.warpTileN() % lanesN != 0)
                continue;
            }
            t.smemPadding = paddingFor(t, p);
            // More stages than K steps only waste shared memory.
            for (int64_t s = 1; s <= std::min(maxStages, kIters); ++s) {
              t.stages = s;
              MatmulEstimate e = estimateTiling(t, p, target);
              if (e.occupancy.blocksPerSM != 0)
                candidates.push_back({t, e});
            }
          }
      }
  // wgmma where the target has it for the operand type: warpgroups of 4
  // warps stacked along M, each one to three 64-row slabs by one N-wide
  // instruction, K tiles of 64 (one 128-byte swizzled row of f16/bf16).
  // Only with cp.async copies (at least 4 bytes each): synchronous copies of
  // 64-deep tiles keep more values in registers than the model counts
  // (ptxas spills them), so those shapes stay with mma.sync.
  std::optional<MmaShape> wg = wgmmaShape(p, target);
  if (wg && target.hasCpAsync && base.loadWidth * eb >= 4) {
    Tiling w = base;
    w.kind = MmaKind::wgmma;
    w.instM = 64;
    w.instK = 16;
    w.tileK = 64;
    w.smemPadding = 0;
    int64_t kIters = llvm::divideCeilSigned(p.k, w.tileK);
    // Heights of one to three 64-row slabs per warpgroup, and widths of
    // every multiple of 16 from 64 to 256 (of 64 for an N-major B, whose
    // swizzled rows are 64 wide): a tile sized so that the grid has about
    // as many tiles as SMs beats a power of two whose last wave would be
    // partial. cuBLAS's and cuDNN's kernels for the deep ResNet-50 1x1
    // convs use 128x96 and 128x192 tiles, exactly 132 of them (S30-1); here
    // 128x112 (125 tiles) on 3136x512x2048 ran 1.1x the 128x128 grid, and
    // 192x128 as one warpgroup (132) on 12544x256x1024 1.05x 128x256 (S30-3;
    // the model still ranks 128x256 first there: see the saturation term).
    // Only grids of at most one wave get them (where a power of two leaves
    // SMs idle): the model would otherwise trade the measured 128x256 of
    // the large GEMMs for 256x192 on its global-traffic estimate alone.
    // Odd multiples of 8 are left out: 128x104 ran 0.9x 128x112. Of the
    // widths that cut N into the same number of tiles only the narrowest
    // is added: a wider one only computes padding.
    const int64_t wgTilesM[] = {64, 128, 192, 256};
    const int64_t groupCounts[] = {1, 2, 4};
    const int64_t stepN = p.transposeB ? 16 : 64;
    SmallVector<int64_t> wgTilesN;
    for (int64_t tn = 64; tn <= 256; tn += stepN)
      if (llvm::isPowerOf2_64(tn) ||
          llvm::divideCeilSigned(p.n, tn - stepN) !=
              llvm::divideCeilSigned(p.n, tn))
        wgTilesN.push_back(tn);
    for (int64_t tm : wgTilesM)
      for (int64_t tn : wgTilesN)
        for (int64_t gm : groupCounts)
          for (int64_t gn : groupCounts) {
            if (gm * gn > 4 || tm % (64 * gm) != 0 || tm / gm > 192 ||
                tn % (16 * gn) != 0 || tn / gn > int64_t(wg->n))
              continue;
            // Three slabs only as one warpgroup across N, the form measured
            // (S30-2, S30-3); two or four side by side never ran on a GPU.
            if (tm / gm == 192 && gn != 1)
              continue;
            w.tileM = tm;
            w.tileN = tn;
            if ((!llvm::isPowerOf2_64(tm) || !llvm::isPowerOf2_64(tn)) &&
                outputTiles(w, p) > int64_t(target.numSMs))
              continue;
            w.warpsM = 4 * gm;
            w.warpsN = gn;
            w.instN = tn / gn;
            if (!wgmmaError(w, p.transposeA, p.transposeB).empty())
              continue;
            for (int64_t s = 1; s <= std::min(kMaxWgmmaStages, kIters); ++s) {
              w.stages = s;
              MatmulEstimate e =
                  estimateTiling(w, p, target, /*copyEngineUndecided=*/true);
              if (e.occupancy.blocksPerSM == 0)
                continue;
              // A conv2d's TMA block gathers its input by im2col boxes:
              // its iterations carry no gather overhead (MatmulModel.cpp).
              // A matmul's copy engine is chosen by the same test when
              // ranked.
              Tiling v = w;
              bool tma = usesTma(w, e, p, target, ctx);
              if (p.conv && tma) {
                v.copy = CopyKind::tma;
                if (MatmulEstimate te = estimateTiling(v, p, target);
                    te.occupancy.blocksPerSM != 0) {
                  e = te;
                } else {
                  v.copy = CopyKind::cp_async;
                  tma = false;
                }
              }
              // Pipelines deeper than 5 stages were measured with TMA
              // copies only (kMaxWgmmaStages).
              if (s > kMaxCpAsyncWgmmaStages && !tma)
                continue;
              // cp.async copies issued by the consumer warps: their address
              // registers and, for a lone block, its serialized epilogue.
              if (!tma) {
                e = estimateTiling(w, p, target);
                if (e.occupancy.blocksPerSM == 0)
                  continue;
              }
              if (s > kMaxIm2colWgmmaStages && tma && usesTmaIm2col(p))
                continue;
              candidates.push_back({v, e});
            }
          }
  }
  if (candidates.empty()) {
    if (whyNot)
      *whyNot = "no candidate tiling fits the shared memory, registers and "
                "threads of " +
                target.name.str();
    return failure();
  }

  // The model is not finer than a few percent: every candidate within
  // kTimeTolerance of the fastest counts as equally fast, and the key below
  // picks among them. Where the epilogue binds a wgmma grid of several
  // waves (short K: the 1x1 convs of K = 64, whose candidates all tie at
  // the epilogue's rate), more resident blocks per SM: measured on the
  // H100, 64->256 at 56x56 ran 48.3-48.5 us with 4-warp blocks of 64x128
  // or 64x64 against 54.4 us with 8-warp 128x128 ones, and 64->64 21.9
  // against 22.9 us (S21-1, S31-1 tuner records; at batch 256 with a
  // residual add 64x64 ran 1.17x faster than 128x128). Then wgmma before
  // mma.sync (measured on the H200, session 8 database: wherever both
  // tied, the wgmma tiling ran 5-40% faster; its operands come from shared
  // memory without ldmatrix and its issue is asynchronous), and of wgmma
  // tilings the wider instruction (256x128 with 16 warps: 4 warpgroups of
  // 64x128 ran 4-11% faster than 8 x 2 of 128x64), then more stages (slack
  // against latency spikes the mean-latency model does not see), then less
  // global + shared-memory time (slack behind the binding limit), a larger
  // block tile, for wgmma grids of more than one wave (grouped
  // rasterization, below) the taller of two equal tiles, less shared
  // memory, fewer warps; enumeration order settles the rest. Taller tiles
  // measured on the H200: f16 8192^3 with group_m = 8 256x128 549 TFLOP/s
  // against 519 for 128x256 (both two warpgroups of 128x128); but a
  // one-wave grid (ResNet 1x1 conv, M 12544, N 256, K 1024) ran 0.027 ms
  // with 128x256 against 0.038 ms with 256x128.
  double fastest = std::numeric_limits<double>::infinity();
  for (const Candidate &c : candidates)
    fastest = std::min(fastest, c.estimate.cycles);
  auto key = [&](const Candidate &c) {
    const Tiling &t = c.tiling;
    const MatmulEstimate &e = c.estimate;
    // A wgmma grid of several waves whose estimate is its epilogue's: more
    // resident blocks first, whose epilogues overlap each other's main
    // loops (below).
    bool epilogueBound =
        t.kind == MmaKind::wgmma && e.waves > 1 &&
        e.epilogueCycles >= e.cycles * e.waveEfficiency * (1 - 1e-3);
    return std::make_tuple(
        epilogueBound ? -int64_t(e.occupancy.blocksPerSM) : 0,
        t.kind == MmaKind::wgmma ? -t.instN : 0, -t.stages,
        std::llround(e.globalCycles + e.sharedCycles),
        -t.tileM * t.tileN,
        usesGroupedRaster(t, e, p, target) && !usesTma(t, e, p, target, ctx)
            ? -t.tileM
            : 0,
        e.resources.sharedMemoryBytes, t.warps());
  };
  // The ranking: the candidates within the tolerance first, by the key
  // (rank 1 is the default choice), then the rest by estimated time; the
  // enumeration order settles equals. Keys are computed once per
  // candidate.
  using Key = decltype(key(candidates.front()));
  struct Ranked {
    const Candidate *c;
    bool tied;
    Key key;
    size_t index;
  };
  SmallVector<Ranked> order;
  for (auto [i, c] : llvm::enumerate(candidates)) {
    bool tied = c.estimate.cycles <= fastest * (1 + kTimeTolerance);
    order.push_back({&c, tied, tied ? key(c) : Key(), i});
  }
  llvm::sort(order, [](const Ranked &x, const Ranked &y) {
    if (x.tied != y.tied)
      return x.tied;
    if (x.tied && x.key != y.key)
      return x.key < y.key;
    if (!x.tied && x.c->estimate.cycles != y.c->estimate.cycles)
      return x.c->estimate.cycles < y.c->estimate.cycles;
    return x.index < y.index;
  });
  // Each candidate gets the copy engine and rasterization the model uses
  // for its tiling; a stream-K grid goes first where it beats them all.
  SmallVector<MatmulConfigAttr> ranked;
  if (std::optional<Tiling> sk = chooseStreamK(
          candidates, [](const Candidate &c) { return c.tiling; },
          order.front().c->tiling, order.front().c->estimate, p, target,
          ctx))
    ranked.push_back(sk->toAttr(ctx));
  for (const Ranked &r : order) {
    const Candidate &c = *r.c;
    Tiling chosen = c.tiling;
    bool tma = usesTma(chosen, c.estimate, p, target, ctx);
    if (tma)
      chosen.copy = CopyKind::tma;
    if (usesGroupedRaster(chosen, c.estimate, p, target))
      chosen.groupM = tma ? kRasterGroupMTma : kRasterGroupM;
    ranked.push_back(chosen.toAttr(ctx));
  }
  appendLaunchVariants(ranked, p, target);
  return ranked;
}

FailureOr<MatmulConfigAttr> kgraph::chooseMatmulConfig(MLIRContext *ctx,
                                                       const MatmulProblem &p,
                                                       const SMTarget &target,
                                                       std::string *whyNot) {
  FailureOr<SmallVector<MatmulConfigAttr>> ranked =
      rankMatmulConfigs(ctx, p, target, whyNot);
  if (failed(ranked))
    return failure();
  return ranked->front();
}

FailureOr<MatmulConfigAttr> kgraph::chooseMatmulConfig(MatmulOp op,
                                                       const SMTarget &target,
                                                       std::string *whyNot) {
  FailureOr<MatmulProblem> problem = getMatmulProblem(op, whyNot);
  if (failed(problem))
    return failure();
  return chooseMatmulConfig(op.getContext(), *problem, target, whyNot);
}

//===----------------------------------------------------------------------===//
// Validation against the target
//===----------------------------------------------------------------------===//

static std::string formatShape(ArrayRef<int64_t> shape) {
  return "[" +
         llvm::join(llvm::map_range(
                        shape, [](int64_t d) { return std::to_string(d); }),
                    ", ") +
         "]";
}

LogicalResult
kgraph::verifyMatmulConfig(MatmulConfigAttr config, const MatmulProblem &p,
                           const SMTarget &target,
                           function_ref<InFlightDiagnostic()> emitError) {
  Tiling t = Tiling::fromAttr(config);
  StringRef kindName = stringifyMmaKind(t.kind);
  if (std::string why = getTmaConfigError(config, p, target); !why.empty())
    return emitError() << why;
  SmallVector<int64_t, 3> shape = {t.instM, t.instN, t.instK};

  if (t.kind != MmaKind::fma) {
    std::optional<MmaOperandType> type = mmaOperandType(p);
    if (!type)
      return emitError() << kindName << " needs tensor-core operands, but "
                         << p.operandType
                         << " operands with precision ieee have none (use "
                            "fma, or precision = tf32 for f32)";
    bool warpgroup = t.kind == MmaKind::wgmma;
    bool offered = false;
    SmallVector<std::string> offers;
    for (const MmaShape &s : target.mmaShapes) {
      if (s.operandType != *type || s.warpgroup != warpgroup)
        continue;
      // wgmma takes any N that is a multiple of 8 up to the listed maximum.
      if (warpgroup) {
        offers.push_back("[" + std::to_string(s.m) + ", 8..." +
                         std::to_string(s.n) + ", " + std::to_string(s.k) +
                         "]");
        offered |= t.instM == s.m && t.instK == s.k && t.instN % 8 == 0 &&
                   t.instN <= s.n;
      } else {
        offers.push_back(formatShape({s.m, s.n, s.k}));
        offered |= t.instM == s.m && t.instN == s.n && t.instK == s.k;
      }
    }
    if (offered && warpgroup && !wgmmaShape(p, target))
      return emitError() << "wgmma is implemented for f16 and bf16 operands "
                            "only, not "
                         << mmaOperandTypeName(*type)
                         << " (use mma_sync)";
    if (offered && warpgroup) {
      std::string why = wgmmaError(t, p.transposeA, p.transposeB);
      if (!why.empty())
        return emitError() << why;
    }
    if (!offered) {
      InFlightDiagnostic diag = emitError();
      diag << kindName << " " << formatShape(shape) << " is not offered by "
           << target.name << " for " << mmaOperandTypeName(*type)
           << " operands; ";
      if (offers.empty())
        diag << "it offers no " << kindName << " shape for that type";
      else
        diag << "it offers " << llvm::join(offers, ", ");
      return diag;
    }
  }

  MatmulResourceEstimate r =
      estimateTilingResources(t, p, target.hasCpAsync && !p.stagedInRegisters);
  if (r.sharedMemoryBytes > target.sharedMemPerBlock)
    return emitError() << "configuration needs " << r.sharedMemoryBytes
                       << " bytes of shared memory per block (" << t.stages
                       << " stages of " << r.stageBytesA + r.stageBytesB
                       << "), but " << target.name << " allows at most "
                       << target.sharedMemPerBlock;

  if (t.stages > 2 && !target.hasCpAsync)
    return emitError() << "stages = " << t.stages << " needs cp.async, which "
                       << target.name
                       << " lacks; it takes at most 2 (register double "
                          "buffering)";

  if (std::string why = getLoadWidthError(config, p); !why.empty())
    return emitError() << why;
  if (std::string why = getStreamKError(config, p); !why.empty())
    return emitError() << why;
  return success();
}

FailureOr<MatmulProblem> kgraph::getGemmGroupProblem(FusedOp group,
                                                     const SMTarget &target) {
  FailureOr<GemmGroupParts> parts = analyzeGemmGroup(group);
  if (failed(parts))
    return failure();
  std::string whyNot;
  FailureOr<MatmulProblem> problem = getGemmProblem(*parts, &whyNot);
  if (failed(problem))
    return parts->anchor->emitOpError()
           << "has no code generation for " << target.name << ": " << whyNot;
  return problem;
}
