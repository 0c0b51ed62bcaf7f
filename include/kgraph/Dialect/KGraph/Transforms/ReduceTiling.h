//===- ReduceTiling.h - mapping of reduction kernels ------------*- C++ -*-===//
//
// The shape analysis of a kgraph.reduce shared by kgraph-tile (which picks a
// #kgraph.reduce_config) and the reduction emitter (which implements it).
//
// Iteration space
// ---------------
// Every output element is a *row* of the `rowSize` input elements reduced
// into it. Input dimensions are merged into runs: adjacent dimensions that
// are all kept (or all reduced) form one dimension, and size-1 dimensions
// are dropped. With the kept runs K_0..K_a and the reduced runs R_0..R_b (in
// input order, each with its input stride), output `o` and reduced index `k`
// (both row-major over their runs) read the input element
//
//   offset(o, k) = sum_i coord_i(o) * stride(K_i) + sum_j coord_j(k) * stride(R_j)
//
// e.g. sum over axis 1 of [A, B, C]: kept runs A (stride B*C) and C (stride
// 1), one reduced run B (stride C).
//
// Groups
// ------
// A reduction group's kgraph.reduce ops all reduce the same rows, so they
// share this layout. Its other values either span the whole rows (the reduce
// input's shape: flat index offset(o, k)) or hold one value per row (flat
// index o). A single-pass group computes its one result in one pass over
// each row; a multi-reduction group (softmax, layer norm) runs its
// reductions one after the other over each row, each reading the per-row
// results of the earlier ones, then stores its results.
//
//===----------------------------------------------------------------------===//

#ifndef KGRAPH_DIALECT_KGRAPH_TRANSFORMS_REDUCETILING_H
#define KGRAPH_DIALECT_KGRAPH_TRANSFORMS_REDUCETILING_H

#include "kgraph/Dialect/KGraph/IR/KGraphOps.h"
#include "kgraph/Dialect/KGraph/Transforms/FusionRules.h"

#include "mlir/IR/Diagnostics.h"
#include "mlir/Support/LLVM.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/SmallVector.h"

namespace kgraph {

struct SMTarget;

/// The iteration space of a kgraph.reduce (see the file comment).
struct ReduceLayout {
  /// One merged run of input dimensions.
  struct Run {
    int64_t size;
    int64_t stride; ///< in input elements
  };
  llvm::SmallVector<Run> kept;    ///< outer to inner
  llvm::SmallVector<Run> reduced; ///< outer to inner
  int64_t numOutputs = 1;
  int64_t rowSize = 1;

  /// The innermost (stride-1) input dimension is reduced: rows are
  /// contiguous runs of `reduced.back().size` elements.
  bool isInnerReduced() const {
    return !reduced.empty() && reduced.back().stride == 1;
  }
  /// The innermost input dimension is kept: neighbouring outputs read
  /// neighbouring input elements.
  bool isInnerKept() const { return !kept.empty() && kept.back().stride == 1; }
};

/// The layout of `op`; failure (with a diagnostic on `op`) if its input has
/// no elements.
mlir::FailureOr<ReduceLayout> getReduceLayout(ReduceOp op);

/// What the model and the emitters know of a reduction group: its
/// reductions, all over the same rows, and whether one pass over each row
/// computes it.
struct ReduceGroupInfo {
  /// The kgraph.reduce ops in program order (a dependency order).
  llvm::SmallVector<ReduceOp> reduces;
  ReduceRows rows;
  ReduceLayout layout;
  /// Bytes of the widest element type the group loads or stores (its
  /// inputs and results), which bounds the vector width of 16-byte accesses.
  int64_t widestBytes = 1;
  /// One pass over each row computes the group: one reduction, whose result
  /// only flows into per-row consumers, and one yielded value. Otherwise it
  /// is a *multi-reduction group*: the rows are needed again after a
  /// reduction (several reductions, values over the whole rows computed
  /// from a reduction result, or several results).
  bool singlePass = true;
  /// Ops the kernel evaluates per element of a row besides its reductions:
  /// the body's elementwise ops, each inline reduction (isInlinedReduce)
  /// counted once per element it combines.
  int64_t opsPerElement = 0;
  /// Per op result of the body: 1 + the index of the last reduction it
  /// depends on (transitively), 0 when it depends on none.
  llvm::DenseMap<mlir::Value, unsigned> phase;

  /// Whether `v` (a value of the group) spans the whole rows rather than
  /// holding one value per row.
  bool spansRows(mlir::Value v) const;
};

/// Checks that `group` is a reduction group and describes it; diagnoses the
/// first violation. A reduction group holds kgraph.reduce ops over the same
/// rows (getReduceRows), elementwise ops and splat constants; every op that
/// uses a reduce result (transitively) holds one value per row or spans the
/// whole rows (the reduce input's shape), reading the group's per-row values
/// only where they broadcast along the rows; every yielded value spans the
/// rows or holds one value per row, and every reduction feeds one.
mlir::FailureOr<ReduceGroupInfo> analyzeReduceGroup(FusedOp group);

/// succeeded(analyzeReduceGroup(group)).
mlir::LogicalResult verifyReduceGroup(FusedOp group);

/// Elements of its row one thread of a multi-reduction kernel keeps in
/// registers at most (row_vectors * vector_width).
inline constexpr int64_t kMaxRowElementsPerThread = 64;

/// Rows of more elements than 1024 threads hold (kMaxRowElementsPerThread
/// each) that a multi-reduction group needs at least: a kernel that re-reads
/// its rows runs a block per row, and fewer rows than about a GPU's SMs leave
/// it mostly idle, where separate kernels spread their elementwise passes
/// over the whole GPU.
inline constexpr int64_t kMinRereadRows = 128;

/// Whether one multi-reduction kernel over `rows` pays against separate
/// kernels (kgraph-fuse's test): its rows fit in registers, or there are at
/// least kMinRereadRows of them.
bool isMultiReductionProfitable(const ReduceRows &rows);

/// The configuration kgraph-tile picks for the reduction group `info` on
/// `target`. Single-pass groups:
///  - T = 1 (a thread per output) when the innermost dimension is kept and
///    there are many outputs (at least 128 per SM) or short rows (< 64);
///    W = the widest power of two dividing the innermost kept extent with
///    W * bytes <= 16; 256 threads per block.
///  - otherwise threads cooperate on a row: W as above over the innermost
///    reduced extent (1 for strided rows); T = the power of two giving each
///    thread about 8 loads, in [2, 1024], at most a warp when there are
///    enough rows to fill every warp slot of the GPU; blocks of
///    max(T, 256) threads.
/// Multi-reduction groups hold their rows in registers where they fit:
///  - W over the innermost reduced extent as above (1 for strided rows);
///    T = the power of two giving each thread about 16 elements of its row,
///    in [1, 1024]; when the rows fill half the GPU's warp slots, at most a
///    warp where each thread then holds at most 32 elements; row_vectors =
///    the vectors of W a thread then holds;
///  - a row that needs more than kMaxRowElementsPerThread elements per
///    thread even with T = 1024 is not held (row_vectors = 0): T as for a
///    single pass, and each reduction re-reads the row.
///  - grid: enough blocks for every output, at most 64 waves of resident
///    blocks (the rest is a grid-stride loop).
ReduceConfigAttr chooseReduceConfig(mlir::MLIRContext *ctx,
                                    const ReduceGroupInfo &info,
                                    const SMTarget &target);

/// chooseReduceConfig's pick first, then the other mappings the kernel
/// supports: a thread per output (128, 256 or 512 per block) and 2 ... 1024
/// threads per row (blocks of 128 ... 1024 threads), each with every vector
/// width up to 16 bytes; for multi-reduction groups 1 ... 1024 threads per
/// row, each with the row held in registers where it fits and re-read;
/// grids as chooseReduceConfig sizes them. Not yet checked against the
/// group (verifyReduceConfig).
llvm::SmallVector<ReduceConfigAttr>
enumerateReduceConfigs(mlir::MLIRContext *ctx, const ReduceGroupInfo &info,
                       const SMTarget &target);

/// The model's registers per thread of a multi-reduction kernel that holds
/// its rows (2 per held element, plus 32); 0 when it holds none (not
/// modelled).
int64_t getReduceRegisters(ReduceConfigAttr config);

/// The model's time for `config` moving `bytes` (the group's inputs and
/// results once) on `target`; a multi-reduction group that re-reads its
/// rows moves the bytes of its inputs over the rows again per reduction
/// (at L2 bandwidth).
double estimateReduceMicroseconds(ReduceConfigAttr config,
                                  const ReduceGroupInfo &info, int64_t bytes,
                                  int64_t rowInputBytes,
                                  const SMTarget &target);

/// Checks `config` against the group: the vector width must divide the
/// innermost reduced (T > 1, or any T in a multi-reduction group) or kept
/// (T = 1) extent, which must be the input's innermost dimension, and keep
/// accesses within 16 bytes; row_vectors > 0 only in a multi-reduction
/// group, covering the row with at most kMaxRowElementsPerThread elements
/// per thread.
mlir::LogicalResult
verifyReduceConfig(ReduceConfigAttr config, const ReduceGroupInfo &info,
                   llvm::function_ref<mlir::InFlightDiagnostic()> emitError);

} // namespace kgraph

#endif // KGRAPH_DIALECT_KGRAPH_TRANSFORMS_REDUCETILING_H
