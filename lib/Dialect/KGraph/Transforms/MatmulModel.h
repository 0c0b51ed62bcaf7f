//===- MatmulModel.h - GEMM cost model internals ----------------*- C++ -*-===//
//
// What the GEMM search (MatmulTiling.cpp) shares with the resource and cost
// model (MatmulModel.cpp): a plain-struct view of #kgraph.matmul_config and
// the model's entry points on it.
//
//===----------------------------------------------------------------------===//

#ifndef KGRAPH_LIB_DIALECT_KGRAPH_TRANSFORMS_MATMULMODEL_H
#define KGRAPH_LIB_DIALECT_KGRAPH_TRANSFORMS_MATMULMODEL_H

#include "kgraph/Dialect/KGraph/Transforms/MatmulTiling.h"

#include <utility>

namespace kgraph {
namespace detail {

/// The fields of #kgraph.matmul_config, so the search can evaluate thousands
/// of candidates without creating an attribute for each.
struct Tiling {
  int64_t tileM, tileN, tileK, warpsM, warpsN, stages;
  MmaKind kind;
  int64_t instM, instN, instK;
  int64_t loadWidth, smemPadding;
  int64_t groupM = 1;
  CopyKind copy = CopyKind::cp_async;
  /// Persistent stream-K blocks (0: one block per output tile).
  int64_t streamK = 0;

  static Tiling fromAttr(MatmulConfigAttr c) {
    llvm::ArrayRef<int64_t> s = c.getInstructionShape();
    return {
        c.getTileM(),  c.getTileN(),  c.getTileK(),       c.getWarpsM(),
        c.getWarpsN(), c.getStages(), c.getInstruction(), s[0],
        s[1],          s[2],          c.getLoadWidth(),   c.getSmemPadding(),
        c.getGroupM(), c.getCopy(),   c.getStreamK()};
  }
  MatmulConfigAttr toAttr(mlir::MLIRContext *ctx) const {
    return MatmulConfigAttr::get(ctx, tileM, tileN, tileK, warpsM, warpsN,
                                 stages, kind, {instM, instN, instK}, loadWidth,
                                 smemPadding, groupM, copy, streamK);
  }
  int64_t warps() const { return warpsM * warpsN; }
  int64_t warpTileM() const { return tileM / warpsM; }
  int64_t warpTileN() const { return tileN / warpsN; }
  /// A wgmma warpgroup's rows: warpgroups of 4 warps along M, each a stack
  /// of 64-row slabs (only for wgmma, whose warps_m is a multiple of 4).
  int64_t warpgroupTileM() const { return tileM / (warpsM / 4); }
};

/// Bytes of one element in memory (the element-type table's; problems are
/// only built for types it has).
int64_t elementBytes(mlir::Type type);

/// Lanes of a warp along M and N for the SIMT (fma) kernel: 4 x 8 or 8 x 4,
/// the longer side of the warp tile getting 8.
std::pair<int64_t, int64_t> simtLanes(const Tiling &t);

/// The fields of `t` that decide its shared memory.
GemmTileShape tileShapeOf(const Tiling &t);

/// Shared memory, registers and threads of `t` on `p` (estimateResources).
/// `copyEngineUndecided`: `t` is a wgmma tiling whose copy engine the
/// ranking chooses after estimating it (usesTma in MatmulTiling.cpp), so
/// the terms of a kernel whose own warps issue cp.async copies (their
/// address registers, a lone block's serialized epilogue) are left out.
MatmulResourceEstimate estimateTilingResources(const Tiling &t,
                                               const MatmulProblem &p,
                                               bool asyncCopies,
                                               bool copyEngineUndecided = false);

/// The cost model's estimate of `t` on `p` (estimateMatmul).
MatmulEstimate estimateTiling(const Tiling &t, const MatmulProblem &p,
                              const SMTarget &target,
                              bool copyEngineUndecided = false);

/// Candidates this close to the fastest estimate count as equally fast.
inline constexpr double kTimeTolerance = 0.03;

} // namespace detail
} // namespace kgraph

#endif // KGRAPH_LIB_DIALECT_KGRAPH_TRANSFORMS_MATMULMODEL_H
