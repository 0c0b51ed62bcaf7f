//===- GemmModel.h - the resource model of GEMM kernels ---------*- C++ -*-===//
//
// What kgraph-tile's selection model (MatmulTiling.h) and the GEMM emitter
// (lib/Conversion/KGraphToGPU) both need to know about one GEMM kernel, in
// one place: the problem a kgraph.matmul or kgraph.conv2d (as implicit GEMM)
// computes, the shared-memory layout of a configuration (operand tiles,
// alignment, mbarriers) and the load-width rule. The emitter allocates
// exactly this layout (and checks its views against it);
// test/Pipelines/gemm_smem.py compares the model's figure with the plan's
// for every GPU case (scripts/build-gpu-cases.py).
//
// Shared-memory layout
// --------------------
// Each operand tile is stored as rows of the dimension that is contiguous in
// global memory, every row padded by `smem_padding` elements:
//
//   | operand | stored as                                   |
//   |---------|---------------------------------------------|
//   | A       | [tile_m rows][tile_k + smem_padding] elems   |
//   | A^T     | [tile_k rows][tile_m + smem_padding] elems   |
//   | B       | [tile_k rows][tile_n + smem_padding] elems   |
//   | B^T     | [tile_n rows][tile_k + smem_padding] elems   |
//
// (A^T: `transpose_a`, A is stored [K, M]; B^T: `transpose_b`, B is stored
// [N, K].) `stages` A tiles come first, then `stages` B tiles, then (copy =
// tma) one full and one empty mbarrier of 8 bytes per stage:
//
//   bytes = stages * (rowsA * (colsA + pad) + rowsB * (colsB + pad))
//                  * sizeof(operand element)
//           + 16 * stages                       (copy = tma)
//           + 1024                              (instruction = wgmma)
//
// f16 128x128x32, pad 8, 4 stages, no transposes:
//   4 * (128 * 40 + 32 * 136) * 2 = 75776 bytes.
//
// wgmma (sm_90a) stores the same rows unpadded (smem_padding = 0), cut into
// 64-column blocks with the 128-byte swizzle (lib/Conversion/KGraphToGPU/
// Wgmma.cpp), and the tiles start on a 1024-byte boundary that the kernel
// finds at run time in the dynamic shared memory, so its kernels ask for
// 1024 bytes more: f16 128x256x64, 4 stages:
//   4 * (128 * 64 + 64 * 256) * 2 + 1024 = 197632 bytes.
//
//===----------------------------------------------------------------------===//

#ifndef KGRAPH_DIALECT_KGRAPH_TRANSFORMS_GEMMMODEL_H
#define KGRAPH_DIALECT_KGRAPH_TRANSFORMS_GEMMMODEL_H

#include "kgraph/Dialect/KGraph/IR/KGraphOps.h"

#include "mlir/Support/LLVM.h"

#include <numeric>
#include <optional>
#include <string>

namespace kgraph {

struct GemmGroupParts;

/// The geometry of a kgraph.conv2d seen as an implicit GEMM.
struct ConvGeometry {
  bool nhwc = true;
  int64_t batch = 0, channels = 0, height = 0, width = 0, filters = 0;
  int64_t kernelH = 0, kernelW = 0, outH = 0, outW = 0;
  int64_t strideH = 1, strideW = 1, padTop = 0, padLeft = 0;
  int64_t dilationH = 1, dilationW = 1, groups = 1;
  bool padded = false;

  int64_t channelsPerGroup() const { return channels / groups; }
  int64_t filtersPerGroup() const { return filters / groups; }
  /// The A gather is a plain [N*H*W][C] matrix.
  bool isPlainGemm() const {
    return nhwc && kernelH == 1 && kernelW == 1 && strideH == 1 &&
           strideW == 1 && !padded;
  }
};

/// The GEMM a kernel computes, independent of the op it came from (a
/// kgraph.matmul, or a kgraph.conv2d as implicit GEMM):
/// `batch` independent products C[M, N] = op(A)[M, K] * op(B)[K, N].
///
/// A conv2d with input [N, C, H, W] / [N, H, W, C], F filters of KH x KW,
/// `groups` groups and output OH x OW is one GEMM per group:
///   batch = groups, M = N * OH * OW, N = F / groups,
///   K = KH * KW * C / groups,
/// with B the group's filters as B^T (a row per output channel, contiguous
/// over K: (kh, kw, c) for nhwc, (c, kh, kw) for nchw) and A the im2col
/// gather of the input in the same K order, whose rows are contiguous only
/// in runs of `contiguousRunA` elements: C / groups for nhwc (one (kh, kw)
/// position), 1 for nchw.
struct MatmulProblem {
  int64_t batch = 1;
  int64_t m = 0, n = 0, k = 0;
  /// Element type of A and B (the verifiers make them one type).
  mlir::Type operandType;
  /// Element type of C as stored.
  mlir::Type resultType;
  /// A is stored [K, M] (B: [N, K]).
  bool transposeA = false, transposeB = false;
  /// f32 operands may run on tf32 tensor cores (`precision = tf32`).
  bool allowTf32 = false;
  /// For an implicit-GEMM A (conv2d): the length of the runs of a row of A
  /// that are contiguous in global memory; 0 for a stored matrix.
  int64_t contiguousRunA = 0;
  /// A prologue converts an operand while it is staged: its tiles travel
  /// global -> registers -> shared memory even where cp.async exists.
  bool stagedInRegisters = false;
  /// The convolution, for a conv2d's implicit GEMM.
  std::optional<ConvGeometry> conv;
  /// Global-memory bytes of the epilogue over the whole problem: the
  /// result's stores plus each group input the epilogue reads (a residual,
  /// a bias) once; 0 where unknown (a bare MatmulProblem: the model then
  /// counts only the result's stores).
  int64_t epilogueBytes = 0;

  /// Where a stored matrix operand lies in the buffer the kernel reads, in
  /// elements: its first element, the distance between its stored rows and
  /// between its batches. Zero fields mean a contiguous matrix (offset 0,
  /// rows of aCols() elements, batches of aRows() * aCols()); a slice of a
  /// wider matrix read in place (isGemmOperandSlice) sets them.
  struct StoredLayout {
    int64_t offset = 0, rowStride = 0, batchStride = 0;
  };
  StoredLayout layoutA, layoutB;
  int64_t aRowStride() const {
    return layoutA.rowStride ? layoutA.rowStride : aCols();
  }
  int64_t aBatchStride() const {
    return layoutA.batchStride ? layoutA.batchStride : aRows() * aCols();
  }
  int64_t bRowStride() const {
    return layoutB.rowStride ? layoutB.rowStride : bCols();
  }
  int64_t bBatchStride() const {
    return layoutB.batchStride ? layoutB.batchStride : bRows() * bCols();
  }

  /// Registers hold the accumulators in this type (the element-type
  /// table's): i32 for i8 operands, f32 for every float type (f16/bf16
  /// results are rounded in the epilogue).
  mlir::Type getAccumulatorType() const;
  /// Rows and columns of A and B as stored in global memory (for a conv2d,
  /// A's are those of the gathered [M][K] matrix).
  int64_t aRows() const { return transposeA ? k : m; }
  int64_t aCols() const { return transposeA ? m : k; }
  int64_t bRows() const { return transposeB ? n : k; }
  int64_t bCols() const { return transposeB ? k : n; }
  /// Extent of the dimension of A (B) that is contiguous in global memory:
  /// K for A, M for A^T; N for B, K for B^T; for a conv2d's A the runs of
  /// the gather. For a slice read in place, the largest extent that also
  /// divides its offset and strides: a vector access that this extent
  /// admits stays aligned on every row.
  int64_t getContiguousExtentA() const {
    if (contiguousRunA)
      return contiguousRunA;
    return alignedExtent(aCols(), layoutA);
  }
  int64_t getContiguousExtentB() const { return alignedExtent(bCols(), layoutB); }

private:
  static int64_t alignedExtent(int64_t cols, const StoredLayout &l) {
    return std::gcd(std::gcd(cols, l.offset),
                    std::gcd(l.rowStride, l.batchStride));
  }

public:
};

/// The problem `op` computes. Fails (with the reason in `whyNot`) for shapes
/// that have no kernel, e.g. an empty dimension.
mlir::FailureOr<MatmulProblem> getMatmulProblem(MatmulOp op,
                                                std::string *whyNot = nullptr);

/// The implicit GEMM of `op` (see MatmulProblem), its geometry in `conv`.
/// Fails (with the reason in `whyNot`) for element types that have no
/// kernel.
mlir::FailureOr<MatmulProblem> getConvProblem(Conv2dOp op,
                                              std::string *whyNot = nullptr);

/// The problem of a GEMM group: its anchor's, staged in registers when an
/// operand has a prologue (the operand type is the matmul's, i.e. the type
/// the prologue produces: shared memory holds the instruction's type).
mlir::FailureOr<MatmulProblem> getGemmProblem(const GemmGroupParts &parts,
                                              std::string *whyNot = nullptr);

/// wgmma's swizzled operand tiles start on this boundary (the 128-byte
/// swizzle repeats every 8 rows of 128 bytes); the kernel allocates this much
/// extra dynamic shared memory to find it at run time.
inline constexpr int64_t kWgmmaTileAlignment = 1024;

/// Bytes of mbarriers per stage of the TMA pipeline (copy = tma): a full
/// and an empty barrier of 8 bytes each.
inline constexpr int64_t kTmaBarrierBytesPerStage = 16;
/// A stream-K kernel's shared word after its mbarriers (8 bytes, keeping
/// the mbarriers' alignment for anything after).
inline constexpr int64_t kStreamKFlagBytes = 8;

/// setmaxnreg counts of the warp-specialized TMA kernel (TmaPipeline.cpp):
/// its producer warpgroup drops to 40 registers per thread, every consumer
/// thread rises to 232. The block must fit the SM's register file at those
/// counts: setmaxnreg.inc waits until the registers are free, so a block
/// asking for more than there are never proceeds (getTmaConfigError).
inline constexpr int32_t kTmaProducerRegisters = 40;
inline constexpr int32_t kTmaConsumerRegisters = 232;
inline constexpr int64_t kTmaProducerThreads = 128;

/// The fields of a #kgraph.matmul_config that decide its shared memory, so
/// the selection model can lay out candidates without creating attributes.
struct GemmTileShape {
  int64_t tileM = 0, tileN = 0, tileK = 0, stages = 0, smemPadding = 0;
  MmaKind instruction = MmaKind::fma;
  CopyKind copy = CopyKind::cp_async;
  /// A persistent stream-K grid (MatmulConfigAttr::isStreamK).
  bool streamK = false;

  static GemmTileShape fromConfig(MatmulConfigAttr config);
};

/// The dynamic shared memory of one block (see the file header). Offsets
/// are from the tiles' start, which is the start of the dynamic shared
/// memory unless `tileAlignment` is set: then the kernel rounds it up to
/// that boundary at run time, inside the `alignmentSlack` bytes reserved at
/// the front.
/// The dynamic shared memory of a block that any target gives without an
/// opt-in (CUDA's 48 KiB): a staged epilogue may grow a block's shared
/// memory up to it (getGemmSharedMemoryLayout).
constexpr int64_t kStagedEpilogueSharedMemoryLimit = 48 * 1024;

struct GemmSharedMemoryLayout {
  /// Rows and (padded) columns of one stage of A and B as stored.
  int64_t rowsA = 0, colsA = 0, rowsB = 0, colsB = 0;
  /// One stage of the A (B) tile, padding included.
  int64_t stageBytesA = 0, stageBytesB = 0;
  /// Bytes the tiles' start is aligned to (0: the element's alignment).
  int64_t tileAlignment = 0;
  /// Bytes allocated in front of the tiles to align them.
  int64_t alignmentSlack = 0;
  /// Offsets of the B tiles and of the mbarriers from the tiles' start
  /// (the mbarriers follow the B stages, or the staged epilogue's result
  /// tile where that is larger).
  int64_t offsetB = 0, offsetBarriers = 0;
  /// mbarrier bytes (copy = tma; a stream-K kernel's flag word after
  /// them), 0 otherwise.
  int64_t barrierBytes = 0;
  /// The kernel's dynamic shared memory: slack, tiles and barriers.
  int64_t totalBytes = 0;
  /// The staged epilogue (MatmulEpilogue.cpp), 0 where the accumulators are
  /// stored from registers: once the main loop is done, the block's result
  /// tile is written over the operand tiles as tile_m rows of
  /// `epilogueRowBytes` (a row of results plus 8 elements, against bank
  /// conflicts), and read back `epilogueVector` consecutive results (16
  /// bytes) per thread and step.
  int64_t epilogueRowBytes = 0, epilogueVector = 0;
  /// Offset of the staged result tile from the tiles' start: 0 (over the
  /// operand tiles), or past them for a stream-K grid, whose producer
  /// fills the next tile's stages during the epilogue.
  int64_t epilogueOffset = 0;
};
GemmSharedMemoryLayout getGemmSharedMemoryLayout(const MatmulProblem &p,
                                                 const GemmTileShape &shape);
GemmSharedMemoryLayout getGemmSharedMemoryLayout(const MatmulProblem &p,
                                                 MatmulConfigAttr config);

/// Why `config`'s load_width cannot move `p`'s operands, or an empty
/// string: a vector access is at most 16 bytes, and load_width elements
/// must divide the contiguous extent of each operand in global memory (for
/// a conv2d's A, the runs of the gather) and of its stored tile rows, so
/// every access stays aligned and inside one row.
std::string getLoadWidthError(MatmulConfigAttr config, const MatmulProblem &p);

/// How a stream-K grid of B persistent blocks shares T output tiles of K
/// k tiles each. Blocks that read the same operand panels must read the
/// same k tile at the same time: ncu counted half the L2 sector lookups
/// for blocks in step as for the same blocks at staggered k offsets, which
/// ran 1.33x slower (bench/RESULTS.md S29-1). So every block moves through
/// k in step with the others of its phase:
/// - `rounds` W = T / B rounds of whole tiles: in round i, block b
///   computes tile i B + b, all of it;
/// - the `remainder` R = T mod B tiles left, tile W B + r (r < R), are
///   split in k: block r computes its `head`, k tiles [0, X); the rest,
///   [X, K), is cut into `pieces` S of `pieceLength` L k tiles (the last
///   one shorter), and the other P = B - R blocks (the pool) take the R S
///   pieces in turn: pool block p (block R + p) computes units u = p,
///   p + P, p + 2P, ... < R S, unit u being piece u / R of tile W B + u % R
///   (so the pool's blocks, too, share k tiles while they share a piece);
/// - `pieces` = 0: the R tiles are whole, one per block r < R (no split
///   pays, or K = 1).
/// (X, S) minimize the busiest block's iterations, with
/// kStreamKPieceIterations for each piece a pool block finishes and
/// kStreamKPartialIterations for each of the S + 1 partial tiles that a
/// split tile's last block reads; a split is taken where it makes the
/// busiest block kStreamKSplitGain faster than whole tiles would.
struct StreamKSchedule {
  int64_t blocks = 0, tiles = 0, kTiles = 0;
  int64_t rounds = 0, remainder = 0, head = 0, pieces = 0, pieceLength = 0;
  /// The iterations of the busiest block.
  int64_t busiest = 0;
  int64_t poolBlocks() const { return blocks - remainder; }
  /// Whether the remaining tiles are split (each then has pieces + 1
  /// contributing blocks).
  bool splits() const { return remainder > 0 && pieces > 0; }
};
StreamKSchedule getStreamKSchedule(int64_t tiles, int64_t kTiles,
                                   int64_t blocks);

/// What reading one partial tile back costs the block that finishes a split
/// tile, in main-loop iterations of the same tile: on the H100 a 128x128
/// f32 partial took about 0.9 us to read (256x256x32768, S24-2: 33 partials
/// serially), a 128x128x64 f16 iteration 0.46 us at the data-parallel rate
/// (2048x1024x4096).
inline constexpr int64_t kStreamKPartialIterations = 2;
/// What finishing a piece costs a pool block beyond its iterations (its
/// partial's stores, the fence and the arrival), in iterations: on the
/// H100 a schedule of 100 tiles of 32 k tiles whose 32 pool blocks took
/// 3-4 pieces of 6 ran 30 us where its 26 iterations at the data-parallel
/// rate are 14 (S29-2): about 2.5 us, 5 iterations, a piece.
inline constexpr int64_t kStreamKPieceIterations = 5;
/// The least speedup of the busiest block for which a split is taken.
inline constexpr double kStreamKSplitGain = 1.1;

/// The grid and global workspace of a stream-K GEMM kernel: `schedule`
/// (getStreamKSchedule) of B = min(stream_k, tiles x kTiles) blocks, which
/// also holds the grid's blocks, tiles and k tiles; one i32 arrival counter
/// per split tile (at least one word), zero between launches, then from
/// `partialsOffset` (S + 1) slots per split
/// tile r of a block tile's partial sums in the accumulator type: its head
/// in slot r (S + 1), piece j in slot r (S + 1) + 1 + j.
struct StreamKWorkspace {
  StreamKSchedule schedule;
  int64_t partialsOffset = 0;
  int64_t slotElements = 0;
  int64_t totalBytes = 0;
};
StreamKWorkspace getStreamKWorkspace(const MatmulProblem &p,
                                     MatmulConfigAttr config);

/// The most workspace a stream-K kernel may have (the launch plan's limit,
/// docs/launch-plan.md).
inline constexpr int64_t kMaxStreamKWorkspaceBytes = int64_t(1) << 30;

/// Why `config`'s stream-K grid cannot run `p`, or an empty string.
std::string getStreamKError(MatmulConfigAttr config, const MatmulProblem &p);

} // namespace kgraph

#endif // KGRAPH_DIALECT_KGRAPH_TRANSFORMS_GEMMMODEL_H
