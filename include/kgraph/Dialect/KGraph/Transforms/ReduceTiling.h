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
//===----------------------------------------------------------------------===//

#ifndef KGRAPH_DIALECT_KGRAPH_TRANSFORMS_REDUCETILING_H
#define KGRAPH_DIALECT_KGRAPH_TRANSFORMS_REDUCETILING_H

#include "kgraph/Dialect/KGraph/IR/KGraphOps.h"

#include "mlir/IR/Diagnostics.h"
#include "mlir/Support/LLVM.h"
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

/// The group's single kgraph.reduce, or null.
ReduceOp getSoleReduceOp(FusedOp group);

/// Checks that `group` is a reduction group: exactly one kgraph.reduce,
/// otherwise only elementwise ops and splat constants, every op that uses the
/// reduce result (transitively) of the reduce result's shape, and one
/// yielded value that depends on the reduce. Diagnoses the first violation.
mlir::LogicalResult verifyReduceGroup(FusedOp group);

/// Bytes of the widest element type the group loads or stores (its inputs
/// and results), which bounds the vector width of 16-byte accesses.
int64_t getWidestAccessBytes(FusedOp group);

/// The configuration kgraph-tile picks for the reduction `group` (anchor
/// `op`) on `target`:
///  - T = 1 (a thread per output) when the innermost dimension is kept and
///    there are many outputs (at least 128 per SM) or short rows (< 64);
///    W = the widest power of two dividing the innermost kept extent with
///    W * bytes <= 16; 256 threads per block.
///  - otherwise threads cooperate on a row: W as above over the innermost
///    reduced extent (1 for strided rows); T = the power of two giving each
///    thread about 8 loads, in [2, 1024], at most a warp when there are
///    enough rows to fill every warp slot of the GPU; blocks of
///    max(T, 256) threads.
///  - grid: enough blocks for every output, at most 64 waves of resident
///    blocks (the rest is a grid-stride loop).
ReduceConfigAttr chooseReduceConfig(FusedOp group, ReduceOp op,
                                    const ReduceLayout &layout,
                                    const SMTarget &target);

/// chooseReduceConfig's pick first, then the other mappings the kernel
/// supports: a thread per output (128, 256 or 512 per block) and 2 ... 1024
/// threads per row (blocks of 128 ... 1024 threads), each with every vector
/// width up to 16 bytes; grids as chooseReduceConfig sizes them. Not yet
/// checked against the group (verifyReduceConfig).
llvm::SmallVector<ReduceConfigAttr>
enumerateReduceConfigs(FusedOp group, ReduceOp op, const ReduceLayout &layout,
                       const SMTarget &target);

/// The model's time for `config` moving `bytes` (the group's inputs and
/// results once) on `target`.
double estimateReduceMicroseconds(ReduceConfigAttr config,
                                  const ReduceLayout &layout, int64_t bytes,
                                  const SMTarget &target);

/// Checks `config` against the group's shape: the vector width must divide
/// the innermost reduced (T > 1) or kept (T = 1) extent, which must be the
/// input's innermost dimension, and keep accesses within 16 bytes.
mlir::LogicalResult
verifyReduceConfig(ReduceConfigAttr config, const ReduceLayout &layout,
                   int64_t widestBytes,
                   llvm::function_ref<mlir::InFlightDiagnostic()> emitError);

} // namespace kgraph

#endif // KGRAPH_DIALECT_KGRAPH_TRANSFORMS_REDUCETILING_H
