//===- MatmulModel.cpp - resource and cost model of GEMM kernels ----------===//
//
// The resources (shared memory, registers, threads), occupancy and time
// estimate of a #kgraph.matmul_config on a problem, and its launch; the
// search that ranks candidates with it is MatmulTiling.cpp. Everything is
// computed from the problem shape and the SM target table; nothing here
// names an SM.
//
// Cost model (all times in SM clock cycles, per problem)
// ------------------------------------------------------
// For a candidate with block tile tm x tn x tk, w warps, s stages:
//
//   blocks   = batch * ceil(M / tm) * ceil(N / tn)
//   kIters   = ceil(K / tk)
//   r        = min(blocksPerSM, ceil(blocks / numSMs))   blocks an SM holds
//   waves    = ceil(blocks / (r * numSMs))
//   waveEff  = blocks / (waves * r * numSMs)
//
//   T_compute = blocks * tm * tn * kIters * tk             (padded FMAs)
//               / (numSMs * mathRate * min(1, r * w / 8))
//               + blocks * kIters * 16 / numSMs       (per-iteration overhead)
//   stageBytes = (tm * tk + tk * tn) * elemBytes          (global bytes)
//   T_global  = blocks * kIters * stageBytes
//               / (numSMs * min(l2Rate, inflight / latency))
//               inflight = r * max(1, s - 1) * stageBytes  (Little's law)
//   T_shared  = blocks * w * kIters * tk * (wtm + wtn) * elemBytes
//               / (numSMs * sharedRate)
//   T         = max(T_compute (+ T_global when s = 1, else max with it),
//                   T_shared) / waveEff
//               * 1.1 when only one block fits on an SM (and blocks > numSMs)
//
// A stream-K grid (stream_k = B) has min(B, blocks * kIters) persistent
// blocks sharing the iterations as getStreamKSchedule says: waveEff also
// counts the busiest block's iterations against the mean. Where its blocks
// split tiles, T is then stretched by kStreamKSplitSlowdown and adds the
// last block's serial read of a split tile's partials (pieces + 2 tiles in
// the accumulator type at one SM's L2 rate); whole tiles per block cost
// nothing more. A data-parallel grid of one block per SM and several waves
// also reports what its blocks cost between tiles (turnoverCycles,
// kBlockTurnoverCycles), which a persistent grid of whole tiles hides.
//
// - The math rate needs 8 resident warps (two per SM sub-partition) to reach
//   its peak, which is what makes 4-warp blocks want two blocks per SM.
// - A/B re-reads are served by L2 (DRAM traffic for the unique bytes is the
//   same for every candidate, so it does not rank them).
// - Memory requests must cover the latency: with s stages a block has
//   s - 1 stage loads in flight while it computes on one; one stage means
//   load, wait, compute, so the two times add up.
// - Each warp reads its A and B fragments (wtm + wtn values per k) from
//   shared memory once; small warp tiles become shared-memory bound.
// - wgmma (sm_90a, f16/bf16) runs at twice mma.sync's rate, reads each
//   operand tile from shared memory once per warpgroup (not per warp), needs
//   no fragment registers, and from 3 stages on keeps one stage busy for the
//   previous tile's MMAs (s - 2 stage loads in flight instead of s - 1).
// - Every main-loop iteration costs a block ~16 cycles besides its math
//   (barrier, cp.async commit/wait, address updates): deep tile_k
//   amortizes it, as long as the stages still fit.
// - A lone block per SM leaves the SM idle at every barrier and during its
//   epilogue: the explicit 10% penalty is the preference for >= 2 blocks/SM
//   (applied when the grid has more blocks than SMs, so a second block
//   could have been resident).
//
//===----------------------------------------------------------------------===//

#include "MatmulModel.h"
#include "kgraph/Dialect/KGraph/Transforms/GemmModel.h"
#include "kgraph/Target/ElementTypes.h"
#include "kgraph/Target/SMTargets.h"

#include "mlir/IR/BuiltinTypes.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/MathExtras.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>

using namespace mlir;
using namespace kgraph;
using namespace kgraph::detail;

/// Bytes of one element in memory (the element-type table's; problems are
/// only built for types it has).
int64_t kgraph::detail::elementBytes(Type type) {
  const ElementTypeInfo *info = lookupElementType(type);
  assert(info && "MatmulProblem of an element type kgraph does not have");
  return info->storageBytes;
}

/// Lanes of a warp along M and N for the SIMT (fma) kernel: 4 x 8 or 8 x 4,
/// the longer side of the warp tile getting 8.
std::pair<int64_t, int64_t> kgraph::detail::simtLanes(const Tiling &t) {
  return t.warpTileN() >= t.warpTileM() ? std::make_pair(4, 8)
                                        : std::make_pair(8, 4);
}


//===----------------------------------------------------------------------===//
// Resources and occupancy
//===----------------------------------------------------------------------===//

/// Fixed per-thread registers for loop counters, predicates and the
/// addresses not counted per copy (fma copies: kFmaRegistersPerCopyA/B).
static constexpr int64_t kOverheadRegisters = 40;
/// Registers an fma kernel's thread spends per element copy of an A (B)
/// stage it issues (estimateTilingResources).
static constexpr int64_t kFmaRegistersPerCopyA = 5;
static constexpr int64_t kFmaRegistersPerCopyB = 2;
/// Registers a wgmma kernel's thread spends per 16-byte cp.async copy of a
/// stage it issues (A and B alike): the copies' addresses and bounds
/// predicates, which ptxas keeps live across the k loop.
static constexpr int64_t kWgmmaRegistersPerCopy = 3;

/// `t`'s own warps issue its copies (cp.async or synchronous ones), as
/// opposed to a TMA producer warpgroup; not known while the ranking has yet
/// to choose the copy engine (`copyEngineUndecided`).
static bool ownWarpsCopy(const Tiling &t, bool copyEngineUndecided) {
  return !copyEngineUndecided && t.copy != CopyKind::tma;
}

/// The fields of `t` that decide its shared memory.
GemmTileShape kgraph::detail::tileShapeOf(const Tiling &t) {
  GemmTileShape s;
  s.tileM = t.tileM;
  s.tileN = t.tileN;
  s.tileK = t.tileK;
  s.stages = t.stages;
  s.smemPadding = t.smemPadding;
  s.instruction = t.kind;
  s.copy = t.copy;
  s.streamK = t.streamK > 0;
  return s;
}

/// Tiles whose stages an asynchronous wgmma may still read while the next
/// ones load (the kernel waits with wait_group 1 from 3 stages on).
static int64_t tilesInFlight(const Tiling &t) {
  return t.kind == MmaKind::wgmma && t.stages >= 3 ? 1 : 0;
}

MatmulResourceEstimate
kgraph::detail::estimateTilingResources(const Tiling &t, const MatmulProblem &p,
                                        bool asyncCopies,
                                        bool copyEngineUndecided) {
  MatmulResourceEstimate r;
  int64_t eb = elementBytes(p.operandType);
  // The kernel's layout (GemmModel.h): tiles, alignment slack, mbarriers.
  GemmSharedMemoryLayout smem = getGemmSharedMemoryLayout(p, tileShapeOf(t));
  r.stageBytesA = smem.stageBytesA;
  r.stageBytesB = smem.stageBytesB;
  r.sharedMemoryBytes = smem.totalBytes;
  r.threadsPerBlock = 32 * t.warps();

  // Accumulators: the warp tile spread over 32 lanes, in 32-bit registers.
  const ElementTypeInfo *acc = lookupElementType(p.getAccumulatorType());
  assert(acc && "accumulator of an element type kgraph does not have");
  int64_t accWords =
      std::max<int64_t>(1, llvm::divideCeilSigned(int64_t(acc->bitWidth), 32));
  r.accumulatorRegisters =
      llvm::divideCeilSigned(t.warpTileM() * t.warpTileN(), 32) * accWords;

  // Operand fragments for one instruction-k step, double buffered so the
  // next step's loads overlap the current step's math.
  if (t.kind == MmaKind::wgmma) {
    // Both operands come from shared memory through descriptors.
    r.fragmentRegisters = 0;
  } else if (t.kind == MmaKind::fma) {
    auto [lanesM, lanesN] = simtLanes(t);
    int64_t perStep = llvm::divideCeilSigned(t.warpTileM(), lanesM) +
                      llvm::divideCeilSigned(t.warpTileN(), lanesN);
    r.fragmentRegisters = 2 * perStep;
  } else {
    // An m x k (k x n) fragment spread over 32 lanes of 4-byte registers.
    int64_t regsA = llvm::divideCeilSigned(t.instM * t.instK * eb, 128);
    int64_t regsB = llvm::divideCeilSigned(t.instN * t.instK * eb, 128);
    int64_t perStep =
        (t.warpTileM() / t.instM) * regsA + (t.warpTileN() / t.instN) * regsB;
    r.fragmentRegisters = 2 * perStep;
  }

  // Without cp.async a stage travels global -> registers -> shared memory.
  if (!asyncCopies)
    r.stagingRegisters = llvm::divideCeilSigned(
        (t.tileM * t.tileK + t.tileK * t.tileN) * eb, r.threadsPerBlock * 4);

  // An fma kernel's threads each copy tile elements (load_width at a time)
  // of every stage with their own address and bounds predicate, which ptxas
  // keeps live across the k loop: about 5 registers per A copy (im2col
  // coordinates for a conv) and 2 per B copy. Calibrated with ptxas 13.0 on
  // 360 fma configurations of the ResNet-50 f32 NCHW layers and f32
  // matmuls: with this term no configuration the model accepts spills more
  // than 64 bytes (128 accumulators spilled 300-600 bytes, estimated 216).
  if (t.kind == MmaKind::fma) {
    int64_t threads = r.threadsPerBlock * std::max<int64_t>(1, t.loadWidth);
    r.addressRegisters =
        kFmaRegistersPerCopyA * llvm::divideCeilSigned(t.tileM * t.tileK, threads) +
        kFmaRegistersPerCopyB * llvm::divideCeilSigned(t.tileK * t.tileN, threads);
  }

  // A wgmma kernel whose warps issue cp.async copies: ptxas 13.0 used 8-100
  // registers per thread more than the accumulators and the fixed overhead
  // on the ResNet-50 f16 layers with a spatial filter and on f16 matmuls
  // (the stem's 256x64 block 144 against 104 estimated, which halved its
  // resident blocks: 2.0x its estimate, S33), about 3 per copy a thread
  // issues per stage; a 1x1 filter's gather (a row of A is a pixel's
  // channels) needed none (-14 to +24). Not where TMA copies (a producer
  // warpgroup, setmaxnreg) or an undecided copy engine.
  if (t.kind == MmaKind::wgmma && asyncCopies &&
      ownWarpsCopy(t, copyEngineUndecided) &&
      !(p.conv && p.conv->kernelH == 1 && p.conv->kernelW == 1)) {
    int64_t threads = r.threadsPerBlock * std::max<int64_t>(1, t.loadWidth);
    r.addressRegisters =
        kWgmmaRegistersPerCopy *
        (llvm::divideCeilSigned(t.tileM * t.tileK, threads) +
         llvm::divideCeilSigned(t.tileK * t.tileN, threads));
  }

  r.registersPerThread = r.accumulatorRegisters + r.fragmentRegisters +
                         r.stagingRegisters + r.addressRegisters +
                         kOverheadRegisters;
  return r;
}

MatmulResourceEstimate kgraph::estimateResources(MatmulConfigAttr config,
                                                 const MatmulProblem &problem,
                                                 bool asyncCopies) {
  return estimateTilingResources(Tiling::fromAttr(config), problem, asyncCopies);
}

StringRef kgraph::stringifyOccupancyLimit(OccupancyLimit limit) {
  switch (limit) {
  case OccupancyLimit::SharedMemory:
    return "shared memory";
  case OccupancyLimit::Registers:
    return "registers";
  case OccupancyLimit::Threads:
    return "threads";
  case OccupancyLimit::Blocks:
    return "blocks";
  }
  return "blocks";
}

MatmulOccupancy kgraph::estimateOccupancy(const MatmulResourceEstimate &r,
                                          const SMTarget &target) {
  MatmulOccupancy occ;
  if (r.threadsPerBlock <= 0 || r.threadsPerBlock > target.maxThreadsPerBlock ||
      r.sharedMemoryBytes > target.sharedMemPerBlock ||
      r.registersPerThread > target.maxRegistersPerThread)
    return occ;

  // Shared memory: the block's bytes rounded to the 128-byte allocation unit
  // plus the per-block reservation of the runtime. The table's per-SM figure
  // exceeds its per-block opt-in maximum by exactly that reservation (1 KiB
  // from sm_80 on, none before).
  int64_t reserved =
      int64_t(target.sharedMemPerSM) - int64_t(target.sharedMemPerBlock);
  int64_t smemPerBlock = llvm::alignTo(r.sharedMemoryBytes, 128) + reserved;
  int64_t bySmem = smemPerBlock > 0 ? target.sharedMemPerSM / smemPerBlock
                                    : std::numeric_limits<int64_t>::max();
  // Registers: per-thread counts round up to 8, registers are allocated per
  // warp (256-register units), and a block needs all its warps resident.
  int64_t warps = r.threadsPerBlock / 32;
  int64_t regsPerWarp = llvm::alignTo(r.registersPerThread, 8) * 32;
  int64_t byRegs = (target.registersPerSM / regsPerWarp) / warps;
  int64_t byThreads = target.maxThreadsPerSM / r.threadsPerBlock;
  int64_t byBlocks = target.maxBlocksPerSM;

  occ.blocksPerSM = byBlocks;
  occ.limit = OccupancyLimit::Blocks;
  auto consider = [&](int64_t n, OccupancyLimit why) {
    if (n < occ.blocksPerSM || (n == occ.blocksPerSM && why < occ.limit)) {
      occ.blocksPerSM = n;
      occ.limit = why;
    }
  };
  consider(byThreads, OccupancyLimit::Threads);
  consider(byRegs, OccupancyLimit::Registers);
  consider(bySmem, OccupancyLimit::SharedMemory);
  return occ;
}

//===----------------------------------------------------------------------===//
// Throughputs and the cost model
//===----------------------------------------------------------------------===//

// The per-SM throughputs (math, L2, shared memory) are columns of the SM
// target table; the constants below are the model's own.
/// Latency of a global load under load (L2 miss included), clocks.
static constexpr double kMemoryLatency = 1000;
/// Resident warps an SM needs to keep its math pipes busy.
static constexpr double kWarpsToSaturate = 8;
/// Time factor of a configuration of which only one block fits per SM.
static constexpr double kLoneBlockPenalty = 1.1;
/// Cycles one main-loop iteration of a block spends besides its math: the
/// barrier, cp.async commit/wait and address updates that the other
/// resident block does not hide.
static constexpr double kIterationOverhead = 16;
/// An implicit-GEMM (conv2d) iteration also advances the im2col gather
/// (kh, kw, c decomposition of the k offset for every copied chunk) and waits
/// on copies whose rows are scattered: calibrated on the H200, where the
/// ResNet-50 layers with K >= 1152 ran 10-40% faster with tile_k = 64 than
/// with the 16-32 the GEMM overhead picked (bench/RESULTS.md, conv2d
/// variants). Only measured for tensor-core kernels, so SIMT (fma) convs keep
/// the GEMM figure. With copy = tma the gather is TMA's (im2col boxes issued
/// by the producer warpgroup): its consumers pay the GEMM figure.
static constexpr double kConvIterationOverhead = 64;
/// Global-memory bytes per clock that one resident warp's epilogue moves
/// (result stores, residual and bias loads), and the most an SM's epilogues
/// moved together. Today's epilogue stores (and loads) the accumulator
/// fragments in place, a few bytes per lane, far below the device-memory
/// bandwidth. Calibrated on the H200 (session 8 tuning database,
/// bench/tuning/h200.db.json) with the ResNet-50 1x1 convs of K = 64, whose
/// main loop is short: conv2d + bias to 256x56x56x256 (411 MB of stores)
/// took 0.40-0.42 ms with 8 resident warps per SM; with a residual add
/// (822 MB) 0.85 ms with 8 warps and 0.49 ms with 16 (6.5 bytes per SM
/// clock, the fastest measured): 0.40-0.50 bytes per warp-clock.
static constexpr double kEpilogueBytesPerWarpClock = 0.45;
static constexpr double kEpilogueBytesPerSMClock = 6.5;

/// How much slower a stream-K grid that splits tiles runs than the
/// data-parallel estimate of the same work. The schedule that gave each
/// block an even share of the iterations, at staggered k offsets, ran
/// 1.13-1.67x slower on the H100 (S24-2, S28-1): its blocks lost the L2
/// sharing of blocks in step (S29-1). The schedule of getStreamKSchedule
/// keeps them in step, but measured against this model it still ran
/// 1.2-3x slower on few-tile long-K matmuls (S29-2: the other blocks' L2
/// traffic and the serial partial reads), and with 1.1 the model picked a
/// 128x256 split for 1024x1024x8192 that ran 0.91x data-parallel: 1.5
/// stays.
static constexpr double kStreamKSplitSlowdown = 1.5;

/// What a block costs an SM between tiles in a data-parallel grid of one
/// block per SM, beyond the main-loop estimate: the next block starts
/// only when this one has stored its tile, then fills its pipeline. A
/// persistent grid of whole tiles per block loads the next tile under the
/// previous one's epilogue and pays it once. Measured on the H100
/// (bench/RESULTS.md, S28-1): the 64-channel 3x3 conv, 256x64 TMA tiles,
/// took 54.6 us as 6 waves and 46.9 us as 112 blocks of 7 tiles, which
/// the model's estimates (69984 and 81648 cycles) give with 5000 cycles
/// for each of the 5 turnovers.
static constexpr double kBlockTurnoverCycles = 5000;

/// Multiply-adds per clock per SM of `kind` on `operandType`, from the SM
/// table's f16 rates scaled by the element-type table's operand rate (tf32
/// at half of them, i8 at twice).
static double mathRate(const SMTarget &target, MmaKind kind, Type operandType) {
  if (kind == MmaKind::fma)
    return target.f32LanesPerSM;
  double f16Rate = kind == MmaKind::wgmma ? target.wgmmaF16MacsPerClock
                                          : target.mmaF16MacsPerClock;
  // A tensor-core kind on an operand type without a tensor-core operand
  // never reaches the model: verifyMatmulConfig rejects it.
  std::optional<MmaOperandType> type =
      getMmaOperandType(operandType, /*allowTf32=*/true);
  assert(type && "tensor-core instruction on operands that have none");
  return f16Rate * getMmaOperandInfo(*type).rateRelativeToF16;
}

MatmulEstimate kgraph::detail::estimateTiling(const Tiling &t,
                                              const MatmulProblem &p,
                                              const SMTarget &target,
                                              bool copyEngineUndecided) {
  MatmulEstimate e;
  e.resources = estimateTilingResources(
      t, p, target.hasCpAsync && !p.stagedInRegisters, copyEngineUndecided);
  e.occupancy = estimateOccupancy(e.resources, target);
  e.numBlocks = p.batch * llvm::divideCeilSigned(p.m, t.tileM) *
                llvm::divideCeilSigned(p.n, t.tileN);
  if (e.occupancy.blocksPerSM == 0) {
    e.cycles = std::numeric_limits<double>::infinity();
    return e;
  }
  const double numSMs = target.numSMs;
  int64_t eb = elementBytes(p.operandType);
  int64_t kIters = llvm::divideCeilSigned(p.k, t.tileK);
  // The work is the tiles' either way; `blocks` counts it in tiles.
  double blocks = e.numBlocks;
  int64_t tiles = e.numBlocks;
  if (t.streamK > 0) {
    // A persistent grid: min(stream_k, iterations) blocks of
    // ceil(iterations / blocks) iterations at most (MatmulConfigAttr).
    int64_t total = tiles * kIters;
    e.numBlocks = std::min(t.streamK, total);
  }
  int64_t resident =
      std::min<int64_t>(e.occupancy.blocksPerSM,
                        llvm::divideCeilSigned(e.numBlocks, target.numSMs));
  e.waves = llvm::divideCeilSigned(e.numBlocks, resident * target.numSMs);
  e.waveEfficiency =
      double(e.numBlocks) / double(e.waves * resident * target.numSMs);
  StreamKSchedule schedule;
  if (t.streamK > 0) {
    int64_t total = tiles * kIters;
    schedule = getStreamKSchedule(tiles, kIters, e.numBlocks);
    e.waveEfficiency *=
        double(total) / double(schedule.busiest * e.numBlocks);
  }

  // A warpgroup whose tile is two or more 64-row slabs issues that many
  // independent wgmma chains per k step, as much as two warpgroups of one
  // slab, when a producer warpgroup issues its TMA copies: measured on the
  // H100, 128x128 as one warpgroup and as two ran tied (S29-6, S30-1), and
  // one warpgroup of 192x128 ran 1.07-1.10x faster than 128x256 as two
  // (S30-3, S31-1). So each warp counts once per slab, up to two. With
  // cp.async the consumer warps also gather the operands: the strided 3x3
  // conv 96->128 ran 2x slower as one warpgroup of 192x128 than as two of
  // 256x128 (S31-1), and warps count once.
  double issuingWarps = double(t.warps());
  if (t.kind == MmaKind::wgmma && t.copy == CopyKind::tma)
    issuingWarps *=
        double(std::clamp<int64_t>(t.warpgroupTileM() / 64, 1, 2));
  double saturation =
      std::min(1.0, double(resident) * issuingWarps / kWarpsToSaturate);
  double paddedFma = blocks * t.tileM * t.tileN * double(kIters * t.tileK);
  e.computeCycles =
      paddedFma /
      (numSMs * mathRate(target, t.kind, p.operandType) * saturation);
  // Not hidden behind the math or the copies (the comment of
  // kIterationOverhead): measured on the H200, tile_k 16 ran 1.15-1.3x
  // slower than tile_k 32 at equal math and traffic (session 8 database).
  e.overheadCycles =
      blocks * double(kIters) *
      (p.contiguousRunA && t.kind != MmaKind::fma && t.copy != CopyKind::tma
           ? kConvIterationOverhead
           : kIterationOverhead) /
      numSMs;

  double stageBytes = double(t.tileM * t.tileK + t.tileK * t.tileN) * eb;
  double inflight =
      double(resident) *
      double(std::max<int64_t>(1, t.stages - 1 - tilesInFlight(t))) *
      stageBytes;
  double bandwidth =
      std::min(double(target.l2BytesPerClock), inflight / kMemoryLatency);
  e.globalCycles = blocks * double(kIters) * stageBytes / (numSMs * bandwidth);

  // Each warp reads its fragments; a wgmma reads its warpgroup's operands
  // once for the 4 warps.
  double sharedBytes =
      t.kind == MmaKind::wgmma
          ? blocks * (t.warps() / 4) * double(kIters * t.tileK) *
                double(t.warpgroupTileM() + t.warpTileN()) * eb
          : blocks * t.warps() * double(kIters * t.tileK) *
                double(t.warpTileM() + t.warpTileN()) * eb;
  e.sharedCycles = sharedBytes / (numSMs * double(target.sharedBytesPerClock));

  // The epilogue: its global traffic at the rate the resident warps reach
  // (kEpilogueBytesPerWarpClock), at most the fastest measured and the SM's
  // share of the device-memory bandwidth. It overlaps the main loops of
  // the other resident blocks and of the next wave, so the kernel takes the
  // longer of the two: the epilogue binds where the main loop is short
  // (small K, a residual to read), and a long main loop hides it (the
  // large GEMMs' estimates matched their measured times without it).
  double epilogueBytes =
      p.epilogueBytes ? double(p.epilogueBytes)
                      : double(p.batch * p.m * p.n) *
                            double(elementBytes(p.resultType
                                                    ? p.resultType
                                                    : p.operandType));
  double dramBytesPerClock = double(target.dramGBps) * 1e3 /
                             (double(target.clockMHz) * numSMs);
  // Warps whose fragments fall outside the problem (a tile wider or taller
  // than what is left of M or N) store nothing: the rate counts the
  // covered share of the tiles. Measured: the 1x1 conv 64 -> 64 ran 0.19 ms
  // with 128x128 tiles over N = 64 and 0.11 ms with 256x64 ones.
  double covered = double(p.batch * p.m * p.n) /
                   (blocks * double(t.tileM) * double(t.tileN));
  // The slab count speeds the epilogue of a grid of one block per SM in one
  // wave, whose stores end the kernel unhidden (192x128 as one warpgroup
  // beat 128x256 as two, S30-3). Where blocks turn over, 4-warp blocks of
  // one slab ran fastest (the K = 64 convs, S21-1), so warps count once.
  double epilogueWarps =
      e.waves == 1 && resident == 1 ? issuingWarps : double(t.warps());
  double epilogueRate = std::min(
      {dramBytesPerClock, kEpilogueBytesPerSMClock,
       double(resident) * epilogueWarps * covered *
           kEpilogueBytesPerWarpClock});
  e.epilogueCycles = epilogueBytes / (numSMs * epilogueRate);

  double pipelined = t.stages == 1 ? e.computeCycles + e.globalCycles
                                   : std::max(e.computeCycles, e.globalCycles);
  double mainLoop = std::max(pipelined, e.sharedCycles) + e.overheadCycles;
  e.cycles = std::max(mainLoop, e.epilogueCycles) / e.waveEfficiency;
  // A lone block per SM whose own warps issue its copies: nothing else on
  // the SM loads while it stores its tile, nor stores while it loads, so
  // over several waves its main loop and epilogue add up. Measured on the
  // stem (64x112x112x16 -> 64 channels, K = 256): 256x64 tiles of one
  // resident block ran 132-144 us on the H200 and H100 against 65-72 us
  // estimated as the larger of the two (S32-1, S33), about their sum. A
  // producer warpgroup (TMA) loads the next tile's stages while the
  // consumers store (kBlockTurnoverCycles covers what is left).
  if (t.streamK == 0 && resident == 1 && e.waves > 1) {
    if (ownWarpsCopy(t, copyEngineUndecided))
      e.cycles = (mainLoop + e.epilogueCycles) / e.waveEfficiency;
    e.turnoverCycles = double(e.waves - 1) * kBlockTurnoverCycles;
  }
  if (t.streamK > 0 && schedule.splits()) {
    // Split tiles (kStreamKSplitSlowdown), and a split tile's last block
    // reads the partials of all the tile's blocks alone, after writing its
    // own: (pieces + 2) tiles in the accumulator type at one SM's L2 rate,
    // on the critical path.
    e.cycles *= kStreamKSplitSlowdown;
    e.fixupCycles = double(schedule.pieces + 2) * double(t.tileM * t.tileN) *
                    double(elementBytes(p.getAccumulatorType())) /
                    double(target.l2BytesPerClock);
    e.cycles += e.fixupCycles;
  }
  // A lone block stalls on its own loads unless a producer warpgroup issues
  // them while its consumers compute: a TMA conv (measured on the H200, the
  // 64-channel 3x3 + bias + relu ran 1.19x faster as one 256x64x64 TMA
  // block per SM than as two cp.async blocks, session 11's tuning).
  bool overlapsOwnLoads = t.copy == CopyKind::tma && p.contiguousRunA;
  if (e.occupancy.blocksPerSM < 2 && e.numBlocks > target.numSMs &&
      !overlapsOwnLoads)
    e.cycles *= kLoneBlockPenalty;
  return e;
}

MatmulEstimate kgraph::estimateMatmul(MatmulConfigAttr config,
                                      const MatmulProblem &problem,
                                      const SMTarget &target) {
  return estimateTiling(Tiling::fromAttr(config), problem, target);
}


std::string kgraph::describeEstimate(const MatmulEstimate &e) {
  std::string s;
  llvm::raw_string_ostream os(s);
  const MatmulResourceEstimate &r = e.resources;
  os << "smem " << r.sharedMemoryBytes << " B, " << r.registersPerThread
     << " regs/thread (acc " << r.accumulatorRegisters << ", frag "
     << r.fragmentRegisters << ", staging " << r.stagingRegisters
     << ", addresses " << r.addressRegisters << "), "
     << r.threadsPerBlock << " threads, " << e.occupancy.blocksPerSM
     << " blocks/SM (" << stringifyOccupancyLimit(e.occupancy.limit) << "), "
     << e.numBlocks << " blocks in " << e.waves << " waves (";
  os << llvm::format("%.1f", 100 * e.waveEfficiency)
     << "% efficient), cycles: ";
  os << "compute " << std::llround(e.computeCycles) << ", global "
     << std::llround(e.globalCycles) << ", shared "
     << std::llround(e.sharedCycles) << ", overhead "
     << std::llround(e.overheadCycles) << ", epilogue "
     << std::llround(e.epilogueCycles);
  if (e.fixupCycles > 0)
    os << ", stream-K partials " << std::llround(e.fixupCycles);
  if (e.turnoverCycles > 0)
    os << ", block turnover " << std::llround(e.turnoverCycles);
  os << ", estimated "
     << (std::isfinite(e.cycles) ? std::llround(e.cycles) : -1);
  return s;
}

KernelLaunch kgraph::getMatmulLaunch(MatmulConfigAttr config,
                                     const MatmulProblem &p,
                                     const SMTarget &target) {
  constexpr int64_t kMaxGridY = 65535;
  KernelLaunch launch;
  int64_t tilesN = llvm::divideCeilSigned(p.n, config.getTileN());
  int64_t tilesM = llvm::divideCeilSigned(p.m, config.getTileM());
  bool linear = config.getGroupM() > 1 || tilesM > kMaxGridY;
  launch.grid = {linear ? tilesN * tilesM : tilesN, linear ? 1 : tilesM,
                 p.batch};
  if (config.isStreamK())
    launch.grid = {getStreamKWorkspace(p, config).schedule.blocks, 1, 1};
  launch.block = {config.getBlockThreads(), 1, 1};
  launch.sharedMemoryBytes = getGemmSharedMemoryLayout(p, config).totalBytes;
  return launch;
}

