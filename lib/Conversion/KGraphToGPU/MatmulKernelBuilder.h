//===- MatmulKernelBuilder.h - the GEMM kernel skeleton ---------*- C++ -*-===//
//
// Private to lib/Conversion/KGraphToGPU: the kernel skeleton of
// MatmulEmitter.cpp (see its header for the design), split by concern over
//   - MatmulEmitter.cpp: the checks, launch shape and kernel set-up (shared
//     memory, block and warp indexing), and the entry points;
//   - MatmulAddressing.cpp: the GEMM a group computes (matmul or conv2d as
//     an implicit GEMM) and where its operand and result elements live in
//     global memory (OperandAccess, ResultAccess; the conv2d im2col gather);
//   - MatmulMainLoop.cpp: the staging of operand tiles (cp.async or
//     synchronous, prologues) and the pipelined loop over K;
//   - MatmulEpilogue.cpp: the accumulators through the fused epilogue ops to
//     the store.
//
//===----------------------------------------------------------------------===//

#ifndef KGRAPH_LIB_CONVERSION_KGRAPHTOGPU_MATMULKERNELBUILDER_H
#define KGRAPH_LIB_CONVERSION_KGRAPHTOGPU_MATMULKERNELBUILDER_H

#include "MatmulKernel.h"
#include "kgraph/Dialect/KGraph/IR/AccessMap.h"
#include "kgraph/Dialect/KGraph/Transforms/GemmGroup.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"

#include <memory>
#include <optional>

namespace kgraph::detail {
using namespace mlir;

/// What a GEMM kernel group computes: the GEMM, the group inputs of its
/// operands, its prologues and epilogue, and for a conv2d its geometry.
struct GemmGroup {
  Operation *op = nullptr;
  /// The group inputs A (matmul lhs / conv input) and B (matmul rhs / conv
  /// filter) are read from; a prologue converts them to the GEMM's operand
  /// types (p.operandType, p.operandType).
  BlockArgument lhs, rhs;
  GemmGroupParts parts;
  /// The GEMM (the selection model's problem, GemmModel.h), for a conv2d
  /// with its geometry (p.conv).
  MatmulProblem p;
};

/// The GEMM kernel group `group` is (MatmulAddressing.cpp); failure, with
/// the reason in `whyNot`, if it is not one or has no GEMM kernel.
FailureOr<GemmGroup> getGemmGroup(FusedOp group,
                                  std::string *whyNot = nullptr);

/// Where the elements of one GEMM operand, in the orientation the kernel
/// stores its tiles ([row][contiguous column], see MatmulEmitter.cpp), live in
/// global memory.
class OperandAccess {
public:
  virtual ~OperandAccess() = default;
  /// The run of `width` elements (row, col .. col + width - 1) of GEMM batch
  /// `batch`: the flat index of its first element, and how many of them
  /// exist (the rest read as zero), or a null count when every element of
  /// every run of the kernel exists.
  virtual std::pair<Value, Value> locate(IndexMath &m, Value batch, Value row,
                                         Value col, int64_t width) const = 0;
};

/// A row-major matrix per batch: element (b, r, c) at
/// offset + b * batchStride + r * rowStride + c, `rows` x `cols` of them.
/// `checkRows`/`checkCols`: the tiles may reach past that extent.
class MatrixAccess : public OperandAccess {
public:
  MatrixAccess(int64_t rows, int64_t cols, int64_t rowStride,
               int64_t batchStride, bool checkRows, bool checkCols,
               int64_t offset = 0)
      : rows(rows), cols(cols), rowStride(rowStride), batchStride(batchStride),
        offset(offset), checkRows(checkRows), checkCols(checkCols) {}

  std::pair<Value, Value> locate(IndexMath &m, Value batch, Value row,
                                 Value col, int64_t width) const override;

private:
  int64_t rows, cols, rowStride, batchStride, offset;
  bool checkRows, checkCols;
};

/// The im2col matrix of a conv2d input, gathered on the fly: row m is the
/// output pixel (n, oh, ow), column k the filter tap (kh, kw, c) for nhwc or
/// (c, kh, kw) for nchw, and batch g the channel group. Element (g, m, k) is
/// input[n][ih][iw][g * C/g + c] (nhwc; nchw alike) with
/// ih = oh * stride_h - pad_top + kh * dilation_h (iw alike), zero outside
/// the image. A run of `width` elements stays in one (kh, kw) position:
/// checkMatmulGroup makes `width` divide C/g (nhwc) or be 1 (nchw).
class Im2colAccess : public OperandAccess {
public:
  Im2colAccess(const ConvGeometry &g, int64_t m, int64_t k, bool checkRows,
               bool checkCols)
      : g(g), m(m), k(k), checkRows(checkRows), checkCols(checkCols) {}

  std::pair<Value, Value> locate(IndexMath &im, Value batch, Value row,
                                 Value col, int64_t width) const override;

private:
  ConvGeometry g;
  int64_t m, k;
  bool checkRows, checkCols;
};

/// Where GEMM result element (batch, row, col) goes: at
///   batch * batchStride + rowOffset(row) + col * colStride,
/// rowOffset(row) = row * rowStride, or for rows grouped in images of
/// `rowsPerImage` (nchw conv2d: a row is a pixel of an image)
///   (row / rowsPerImage) * imageStride + (row % rowsPerImage) * rowStride.
struct ResultAccess {
  int64_t rows = 0, cols = 0; // the GEMM M and N
  int64_t rowStride = 0, colStride = 1, batchStride = 0;
  int64_t rowsPerImage = 0, imageStride = 0;

  Value locate(IndexMath &m, Value batch, Value row, Value col) const;
  /// Runs of `width` columns starting at a multiple of `width` are
  /// contiguous and aligned to `width` elements.
  bool hasAlignedRuns(int64_t width) const {
    return colStride == 1 && rowStride % width == 0 &&
           batchStride % width == 0 &&
           (rowsPerImage == 0 || imageStride % width == 0);
  }
};

/// The kernel skeleton.
class MatmulKernelBuilder {
public:
  /// `asyncA`/`asyncB`: the operand's tiles are copied with cp.async.
  MatmulKernelBuilder(FusedOp group, const GemmGroup &gemm,
                      MatmulConfigAttr config, gpu::GPUFuncOp kernel,
                      bool asyncA, bool asyncB)
      : group(group), gemm(gemm), config(config), kernel(kernel),
        asyncA(asyncA), asyncB(asyncB), asyncCopies(asyncA || asyncB),
        p(gemm.p), loc(group.getLoc()) {}

  /// The whole kernel (MatmulEmitter.cpp).
  LogicalResult build();

private:
  /// Global-memory addressing of A, B and C for this group's op
  /// (MatmulAddressing.cpp).
  void setUpAddressing();

  // The main loop (MatmulMainLoop.cpp).

  /// The loop over the k tiles from the zero accumulators `acc`, then the
  /// epilogue, ending the kernel; `smem` is the dynamic shared memory and
  /// `aStart` the byte offset of the A tiles in it.
  LogicalResult mainLoop(OpBuilder &b, Value smem, Value aStart,
                         ArrayRef<Value> acc);
  /// Copies one operand tile (stage `stage`, k tile `kTile`) to shared
  /// memory.
  void loadTile(OpBuilder &b, bool isA, Value stage, Value kTile);
  void loadTiles(OpBuilder &b, Value stage, Value kTile) {
    loadTile(b, /*isA=*/true, stage, kTile);
    loadTile(b, /*isA=*/false, stage, kTile);
  }
  void commit(OpBuilder &b);
  void wait(OpBuilder &b, int64_t pending);
  /// Applies the prologue `ops` of an operand to one element `loaded` (in
  /// storage type) of its group input `source`; returns it in the GEMM
  /// operand type `elem`.
  Value applyPrologue(OpBuilder &b, ArrayRef<Operation *> ops, Value source,
                      Value loaded, Type elem);
  SmallVector<Value> compute(OpBuilder &b, Value stage, ArrayRef<Value> acc);

  // The epilogue (MatmulEpilogue.cpp).

  /// The epilogue of the finished accumulators `acc` (mma->finish's):
  /// staged through shared memory where the layout says so
  /// (GemmSharedMemoryLayout::epilogueRowBytes), else stored from
  /// registers.
  LogicalResult epilogue(OpBuilder &b, ArrayRef<Value> acc);
  LogicalResult stagedEpilogue(OpBuilder &b, ArrayRef<Value> acc,
                               const GemmSharedMemoryLayout &layout);
  /// Whether the whole block tile is inside C (stores need no checks).
  Value fullTile(OpBuilder &b);
  /// A barrier over the threads that run the epilogue (with copy = tma, the
  /// consumer warpgroups only).
  void epilogueBarrier(OpBuilder &b);
  /// The `lanes.size()` consecutive-column elements of `v` (the anchor
  /// result or an epilogue value or input) at GEMM element (row, col ..), in
  /// compute type; `acc` holds the accumulators of those elements, `ok` (if
  /// non-empty) which of them exist.
  struct EpilogueRow {
    Value row, col;
    SmallVector<Value> acc, ok;
    bool checked;
    DenseMap<Value, SmallVector<Value>> memo;
  };
  FailureOr<SmallVector<Value>> evaluateEpilogue(OpBuilder &b, Value v,
                                                 EpilogueRow &at);
  /// Evaluates the epilogue on the run `at` (row, col, acc and checked set;
  /// fills ok) and stores its elements to C.
  LogicalResult storeRun(OpBuilder &b, EpilogueRow &at);
  /// Loads the elements of group input `arg` (broadcast to the result
  /// shape) that the epilogue row `at` needs; with `through` (the access map
  /// of a transpose, broadcast or slice of `arg`, from its result of shape
  /// `throughShape`), the elements that op's result would hold.
  SmallVector<Value> loadEpilogueInput(OpBuilder &b, BlockArgument arg,
                                       EpilogueRow &at,
                                       const AccessMap *through = nullptr);

  FusedOp group;
  GemmGroup gemm;
  MatmulConfigAttr config;
  gpu::GPUFuncOp kernel;
  bool asyncA, asyncB, asyncCopies;
  MatmulProblem p;
  Location loc;
  std::unique_ptr<WarpMma> mma;
  std::unique_ptr<OperandAccess> aAccess, bAccess;
  ResultAccess cAccess;

  Value flatA, flatB, flatC;
  /// Flat views of the group inputs the epilogue reads.
  DenseMap<Value, Value> flatInputs;
  Value aTile, bTile; // shared-memory views [stage][row][col]
  /// The dynamic shared memory (i8) and the byte offset of the tiles in it.
  Value dynamicSmem, tilesStart;
  Value tid, lane, warpRow, warpCol, rowBase, colBase, batch;
};

} // namespace kgraph::detail

#endif // KGRAPH_LIB_CONVERSION_KGRAPHTOGPU_MATMULKERNELBUILDER_H
