//===- MatmulTiling.h - tiling decision of GEMM kernels ---------*- C++ -*-===//
//
// The compile-time model kgraph-tile uses to pick a #kgraph.matmul_config:
// the resources one block needs (shared memory, registers, threads), how many
// blocks fit on an SM (the compile-time counterpart of
// cudaOccupancyMaxActiveBlocksPerMultiprocessor), how many waves the grid
// takes, and an estimated time that ranks the candidates.
//
// The problem description, the shared-memory layout and the load-width
// rule are GemmModel.h's, which the emitter uses too.
//
//===----------------------------------------------------------------------===//

#ifndef KGRAPH_DIALECT_KGRAPH_TRANSFORMS_MATMULTILING_H
#define KGRAPH_DIALECT_KGRAPH_TRANSFORMS_MATMULTILING_H

#include "kgraph/Dialect/KGraph/IR/KGraphOps.h"
#include "kgraph/Dialect/KGraph/IR/KGraphInterfaces.h"
#include "kgraph/Dialect/KGraph/Transforms/GemmModel.h"

#include "mlir/IR/Diagnostics.h"
#include "mlir/Support/LLVM.h"

#include <string>

namespace kgraph {

struct SMTarget;

/// What one block of a configuration needs.
struct MatmulResourceEstimate {
  /// One stage of the A (B) tile in shared memory, padding included.
  int64_t stageBytesA = 0, stageBytesB = 0;
  /// The kernel's dynamic shared memory (getGemmSharedMemoryLayout): the
  /// stages, wgmma's alignment slack and the mbarriers of copy = tma.
  int64_t sharedMemoryBytes = 0;
  /// Per-thread 32-bit registers: accumulators (warp tile / 32 values),
  /// operand fragments of one instruction-k step, double buffered, register
  /// staging of global loads when copies are not asynchronous, the
  /// addresses of a SIMT (fma) kernel's per-thread copies, and a fixed
  /// overhead for loop counters, predicates and the remaining addresses.
  int64_t accumulatorRegisters = 0, fragmentRegisters = 0, stagingRegisters = 0,
          addressRegisters = 0, registersPerThread = 0;
  int64_t threadsPerBlock = 0;
};

/// Resources of `config` on `problem`. `asyncCopies` says global->shared
/// copies are cp.async (no register staging).
MatmulResourceEstimate estimateResources(MatmulConfigAttr config,
                                         const MatmulProblem &problem,
                                         bool asyncCopies);

/// Which per-SM limit bounds the number of resident blocks.
enum class OccupancyLimit { SharedMemory, Registers, Threads, Blocks };
llvm::StringRef stringifyOccupancyLimit(OccupancyLimit limit);

/// Resident blocks per SM, as cudaOccupancyMaxActiveBlocksPerMultiprocessor
/// would compute it: the minimum over shared memory (per-block size plus the
/// reserved per-block shared memory, rounded to 128 bytes), registers
/// (per-thread count rounded up to 8, allocated per warp), threads and the
/// block limit. 0 when the block does not fit at all.
struct MatmulOccupancy {
  int64_t blocksPerSM = 0;
  OccupancyLimit limit = OccupancyLimit::Blocks;
};
MatmulOccupancy estimateOccupancy(const MatmulResourceEstimate &resources,
                                  const SMTarget &target);

/// The full model of one configuration on one problem and target.
struct MatmulEstimate {
  MatmulResourceEstimate resources;
  MatmulOccupancy occupancy;
  /// Blocks in the grid: batch * ceil(M / tile_m) * ceil(N / tile_n), or a
  /// stream-K grid's persistent blocks.
  int64_t numBlocks = 0;
  /// ceil(numBlocks / (blocksPerSM * numSMs)).
  int64_t waves = 0;
  /// numBlocks / (waves * blocksPerSM * numSMs), in (0, 1]; for stream-K
  /// also the blocks' share of iterations against the busiest's.
  double waveEfficiency = 0;
  /// Model times in SM clock cycles (see MatmulModel.cpp for the formulas):
  /// tensor-core/FMA time of the padded problem, global (L2) time of the
  /// operand re-reads, shared-memory read time, the main-loop iterations'
  /// unhidden overhead, the epilogue's global traffic, and the total.
  double computeCycles = 0, globalCycles = 0, sharedCycles = 0,
         overheadCycles = 0, epilogueCycles = 0, cycles = 0;
  /// A stream-K grid's partial tiles, written and read back through L2.
  double fixupCycles = 0;
  /// A data-parallel grid of one block per SM over several waves: what
  /// its blocks cost between tiles (the epilogue's tail, the next block's
  /// pipeline fill). Not in `cycles` (the data-parallel ranking was
  /// calibrated without it); it decides between this grid and a persistent
  /// one of whole tiles per block, which hides it.
  double turnoverCycles = 0;
};
/// `config` must have passed verifyMatmulConfig for `problem` and `target`
/// (a tensor-core instruction only on operands that have one).
MatmulEstimate estimateMatmul(MatmulConfigAttr config,
                              const MatmulProblem &problem,
                              const SMTarget &target);

/// The configuration the model ranks best for `op` on `target`: the search
/// and cost model are described in MatmulTiling.cpp. Fails with the reason
/// in `whyNot` when no candidate fits the target.
mlir::FailureOr<MatmulConfigAttr>
chooseMatmulConfig(MatmulOp op, const SMTarget &target,
                   std::string *whyNot = nullptr);
mlir::FailureOr<MatmulConfigAttr>
chooseMatmulConfig(mlir::MLIRContext *ctx, const MatmulProblem &problem,
                   const SMTarget &target, std::string *whyNot = nullptr);

/// Every configuration the search considers for `problem` on `target`,
/// ranked best first: chooseMatmulConfig's pick, then the candidates the
/// model counts as equally fast in the order of its tie-break key, then the
/// rest by estimated time, then the launch variants the model does not tell
/// apart (other group_m and copy engine of each wgmma tiling), for measured
/// tuning; some of those may fail the legality check (verifyMatmulConfig),
/// which listings apply. Fails with the reason in `whyNot` when no
/// candidate fits the target.
mlir::FailureOr<llvm::SmallVector<MatmulConfigAttr>>
rankMatmulConfigs(mlir::MLIRContext *ctx, const MatmulProblem &problem,
                  const SMTarget &target, std::string *whyNot = nullptr);

/// Checks a configuration (chosen or pinned) against the target and the
/// problem: the instruction is one the target offers for the operand type,
/// shared memory fits, stages beyond 2 need cp.async, load_width is at most
/// 16 bytes and divides the contiguous extents. (Threads always fit: the
/// attribute verifier caps a block at 32 warps.) Reports through
/// `emitError`.
mlir::LogicalResult
verifyMatmulConfig(MatmulConfigAttr config, const MatmulProblem &problem,
                   const SMTarget &target,
                   llvm::function_ref<mlir::InFlightDiagnostic()> emitError);

/// Why kgraph has no wgmma kernel for `config` with operands stored as
/// `transposeA` / `transposeB` (the swizzled shared-memory layout of
/// lib/Conversion/KGraphToGPU/Wgmma.cpp), or an empty string if it has one:
/// instruction_shape [64, N, 16] with N a multiple of 8 up to 256, no
/// smem_padding, tile_k a multiple of 64 when an operand is K-major (A, B^T),
/// N a multiple of 64 when B is N-major. The operand type (f16/bf16) and the
/// target (sm_90a) are checked by verifyMatmulConfig.
std::string getWgmmaConfigError(MatmulConfigAttr config, bool transposeA,
                                bool transposeB);

/// Rows of one TMA box at most (cuTensorMapEncodeTiled's box limit).
inline constexpr int64_t kTmaMaxBoxRows = 256;

/// Whether copy = tma loads `p`'s A with TMA's im2col mode: a conv2d that
/// is not a plain GEMM (getTmaConfigError admits only nhwc, one group). A
/// 1x1, stride-1, unpadded nhwc conv2d's A is the input as an [N*H*W][C]
/// matrix and takes tiled maps like a matmul.
bool usesTmaIm2col(const MatmulProblem &p);

/// The corners of TMA's im2col bounding box (cuTensorMapEncodeIm2col's
/// pixelBoxLowerCorner / UpperCorner, W first) for a conv2d: the window
/// origins of the output pixels, [-pad, (out - 1) * stride + 1 - in - pad)
/// relative to [0, in), so that the walk with the conv's strides visits
/// exactly the output's OW x OH positions per image.
struct TmaIm2colCorners {
  int64_t lowerW = 0, lowerH = 0, upperW = 0, upperH = 0;
};
TmaIm2colCorners getTmaIm2colCorners(const ConvGeometry &g);

/// Why kgraph's TMA pipeline (copy = tma) cannot load the operands of `p`
/// with `config` on `target`, or an empty string (also for copy = cp_async):
/// it needs the target's TMA, instruction = wgmma, plain matrices or an
/// nhwc conv2d of one group (its input through TMA's im2col mode, one filter
/// tap and tile_k channels per k tile: tile_k must divide the channels, the
/// box is at most 256 pixels, padding, strides and dilated filter extents
/// within the tensor map's ranges), no prologue, operand rows whose byte
/// length is a multiple of 16 (the tensor map's global strides), dimensions
/// below 2^31 and stored tile rows that split into boxes of at most 256
/// rows.
std::string getTmaConfigError(MatmulConfigAttr config, const MatmulProblem &p,
                              const SMTarget &target);

/// The launch of the GEMM kernel of `p` with `config`: grid x over N tiles,
/// y over M tiles, z over the batch (x alone numbers the tiles of one GEMM
/// with group_m > 1 or more than 65535 M tiles), block threads with the
/// producer warpgroup of copy = tma, and the dynamic shared memory of the
/// GEMM model's layout (getGemmSharedMemoryLayout, barriers included).
KernelLaunch getMatmulLaunch(MatmulConfigAttr config, const MatmulProblem &p,
                             const SMTarget &target);

/// The problem of the GEMM group `group` (MatmulProblem of its anchor, with
/// `stagedInRegisters` set by a prologue). Fails with a diagnostic (the GEMM
/// group contract, or a problem without kernel on `target`).
mlir::FailureOr<MatmulProblem> getGemmGroupProblem(FusedOp group,
                                                   const SMTarget &target);

/// One line for remarks: "smem 75776 B, 232 regs/thread, ...".
std::string describeEstimate(const MatmulEstimate &estimate);

} // namespace kgraph

#endif // KGRAPH_DIALECT_KGRAPH_TRANSFORMS_MATMULTILING_H
