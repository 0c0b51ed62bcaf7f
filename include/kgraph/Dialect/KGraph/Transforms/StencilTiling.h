//===- StencilTiling.h - regions and tiling of stencil groups ---*- C++ -*-===//
//
// A stencil group (docs/architecture.md, "Stencil kernels") computes an
// output tile per block. Every value of the group is needed over a *region*:
// the tile grown by the halo its consumers read (a conv2d or pool2d with
// padding [top, bottom, left, right] and kernel KH x KW reads rows
// [y - top, y - top + KH) of its input for output row y). Regions are found
// backwards from the yielded values; a value that a conv2d or pool2d reads
// is *materialized*: computed over its region into shared memory, with the
// positions outside the image set to the reader's padding value (0 for
// conv2d and avg pool2d, -inf for max pool2d). Every other value is computed
// where it is used. Materialized values are stored as f32 rows:
//
//   shared bytes = sum over materialized v of
//                  4 * channels(v) * rows(v) * cols(v)
//
// rows(v) is rounded up to a multiple of rows_per_thread when v is computed
// (threads compute strips of rows_per_thread rows); columns are computed
// and held from and to multiples of cols_per_thread (planStencilGroup).
//
//===----------------------------------------------------------------------===//

#ifndef KGRAPH_DIALECT_KGRAPH_TRANSFORMS_STENCILTILING_H
#define KGRAPH_DIALECT_KGRAPH_TRANSFORMS_STENCILTILING_H

#include "kgraph/Dialect/KGraph/IR/KGraphOps.h"
#include "kgraph/Dialect/KGraph/Transforms/FusionRules.h"

#include "llvm/ADT/MapVector.h"
#include <array>

namespace kgraph {

struct SMTarget;

/// Region and storage of one value of a stencil group. Region coordinates are
/// relative to the tile origin times `scale` (the value's grid is the output
/// grid scaled by `scaleY` x `scaleX`: 1 except for the input of a strided
/// pool2d).
struct StencilValue {
  int64_t scaleY = 1, scaleX = 1;
  int64_t y0 = 0, x0 = 0;     ///< region origin (<= 0: the halo above/left)
  int64_t rows = 0, cols = 0; ///< region extent (as held in shared memory)
  /// The columns computed (or staged): [computeX0, computeX0 + computeCols),
  /// within [x0, x0 + cols), both multiples of cols_per_thread; the columns
  /// held but not computed are read only for positions nothing needs.
  int64_t computeX0 = 0, computeCols = 0;
  int64_t channels = 1;       ///< channels per block
  bool materialized = false;  ///< kept in shared memory
  StencilFill fill = StencilFill::None;
  int64_t sharedOffset = 0;   ///< byte offset in shared memory
};

/// The layout of a stencil kernel for one configuration.
struct StencilPlan {
  Layout layout = Layout::nchw;
  int64_t n = 0, h = 0, w = 0; ///< output grid of the yielded values
  /// Channels each block computes: all of them, except for a lone pool2d,
  /// whose channels are independent and split in blocks of <= 4.
  int64_t channelBlock = 1, numChannelBlocks = 1;
  llvm::MapVector<mlir::Value, StencilValue> values;
  int64_t sharedMemoryBytes = 0;
  /// Blocks along x (tiles of a row), y (tile rows), z (images x channel
  /// blocks).
  int64_t gridX = 1, gridY = 1, gridZ = 1;

  /// More images x channel blocks than a grid's z allows (65535) are
  /// launched along x instead: block x = z * gridX + tile column.
  bool foldsZIntoX() const { return gridZ > kMaxGridYZ; }
  /// The launched grid (x, y, z).
  std::array<int64_t, 3> launchGrid() const {
    if (foldsZIntoX())
      return {gridX * gridZ, gridY, 1};
    return {gridX, gridY, gridZ};
  }
  static constexpr int64_t kMaxGridYZ = 65535;
  static constexpr int64_t kMaxGridX = 2147483647;
};

/// How a stencil kernel applies one KH x KW slice (filter f, input channel
/// c) of a conv2d: tap by tap, or, when the slice is a constant of rank one
/// (weights[ky][kx] == u[ky] * v[kx] exactly in f32: Gaussian, box and
/// Sobel filters) and that takes fewer operations over a thread's rows, as a
/// row pass (v over each input row) and a column pass (u over the row sums).
/// Zero weights are skipped either way. The emitter and the tiling model
/// share it.
struct StencilFilterSlice {
  int64_t kh = 0, kw = 0;
  bool constant = false;           ///< weights known at compile time
  llvm::SmallVector<float> weights; ///< kh * kw, row-major (constant only)
  llvm::SmallVector<float> u, v;    ///< the factors when `separable`
  bool separable = false;
  /// Multiply-adds per output point: nonzero taps (all of them for a filter
  /// read at run time), or the separable passes' share.
  double opsPerOutput = 0;
};
/// Slice (f, c) of `conv`'s filter for threads computing `rowsPerThread`
/// output rows each.
StencilFilterSlice getStencilFilterSlice(Conv2dOp conv, int64_t f, int64_t c,
                                         int64_t rowsPerThread);
/// Operations per output point of a KH x KW pool window at row stride
/// `strideY` for `rowsPerThread` rows per thread, and whether the window is
/// applied separably (row maxima or sums first).
std::pair<double, bool> getStencilPoolCost(Pool2dOp pool, int64_t rowsPerThread);

/// True if `group` should be compiled by the stencil emitter: it contains a
/// kgraph.pool2d or a stencil conv2d (isStencilOp), and is not a lone non-stencil conv2d.
bool isStencilGroup(FusedOp group);

/// Checks `group` against the stencil-group contract; emits a diagnostic on
/// the offending op and fails otherwise.
mlir::LogicalResult checkStencilGroup(FusedOp group);

/// Regions and shared memory of a checked stencil group under `config`.
StencilPlan planStencilGroup(FusedOp group, StencilConfigAttr config);

/// Checks `config` fits `group` on `target` (shared memory, threads).
mlir::LogicalResult
verifyStencilConfig(FusedOp group, StencilConfigAttr config,
                    const SMTarget &target,
                    llvm::function_ref<mlir::InFlightDiagnostic()> emitError);

/// Picks the configuration of a checked stencil group for `target`.
mlir::FailureOr<StencilConfigAttr> chooseStencilConfig(FusedOp group,
                                                       const SMTarget &target);

/// chooseStencilConfig's pick first (when it has one), then every tile of
/// 16/32/64 x 32/64/128 outputs with 128, 256 or 512 threads and 1, 2 or 4
/// rows per thread. Not yet checked against the target
/// (verifyStencilConfig).
llvm::SmallVector<StencilConfigAttr>
enumerateStencilConfigs(FusedOp group, const SMTarget &target);

/// The model's time for `config` on `target`.
double estimateStencilMicroseconds(FusedOp group, StencilConfigAttr config,
                                   const SMTarget &target);

/// "tile 64x64, 256 threads, ..., B/px" for kgraph-tile's report remark:
/// the estimated global bytes moved per output pixel and the compute
/// overhead of the halo.
std::string describeStencilPlan(FusedOp group, StencilConfigAttr config,
                                const SMTarget &target);

} // namespace kgraph

#endif // KGRAPH_DIALECT_KGRAPH_TRANSFORMS_STENCILTILING_H
