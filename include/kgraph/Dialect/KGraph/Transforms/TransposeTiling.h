//===- TransposeTiling.h - tiled transpose kernels --------------*- C++ -*-===//
//
// The shape analysis of a kgraph.transpose shared by kgraph-tile (which
// picks a #kgraph.transpose_config or leaves the transpose to the
// elementwise family) and the transpose emitter (TransposeEmitter.cpp).
//
// A permutation is canonicalized before anything is decided: size-1 dims
// are dropped and output dims that are consecutive input dims, in order,
// are merged. What is left is one of
//   - a copy (no dim moves: the permutation only moved size-1 dims),
//   - an inner-kept permutation (the innermost dim stays innermost, e.g. the
//     head split [0, 2, 1, 3]): every output row is a contiguous input run,
//     which the elementwise kernel copies with vector accesses through the
//     AccessMap;
//   - a tiled transpose: the input's innermost dim `a` and the input dim `b`
//     that becomes the output's innermost are different; both are tiled, the
//     other dims are batch dims.
//
//===----------------------------------------------------------------------===//

#ifndef KGRAPH_DIALECT_KGRAPH_TRANSFORMS_TRANSPOSETILING_H
#define KGRAPH_DIALECT_KGRAPH_TRANSFORMS_TRANSPOSETILING_H

#include "kgraph/Dialect/KGraph/IR/KGraphOps.h"

#include "mlir/IR/Diagnostics.h"
#include "mlir/Support/LLVM.h"
#include "llvm/ADT/SmallVector.h"

namespace kgraph {

struct SMTarget;

/// A permutation with size-1 dims dropped and adjacent in-order dims merged.
struct CanonicalTranspose {
  /// Input shape after canonicalization (row-major, no size-1 dims).
  llvm::SmallVector<int64_t> inShape;
  /// Output dim i is canonical input dim permutation[i].
  llvm::SmallVector<int64_t> permutation;

  int64_t getRank() const { return inShape.size(); }
  /// No dim moves: the transpose is a copy of the flat elements.
  bool isCopy() const;
  /// The innermost dim stays innermost (and something else moves).
  bool keepsInnermost() const;
  /// Tiled form: a dim other than the innermost becomes the output's
  /// innermost.
  bool isTiled() const { return !isCopy() && !keepsInnermost(); }
};

/// The canonical form of `op`'s permutation.
CanonicalTranspose canonicalizeTranspose(TransposeOp op);
CanonicalTranspose canonicalizeTranspose(llvm::ArrayRef<int64_t> inShape,
                                         llvm::ArrayRef<int64_t> permutation);

/// The iteration space of a tiled transpose (CanonicalTranspose::isTiled).
struct TransposeLayout {
  int64_t extentA = 1; ///< input innermost dim (stride 1 in the input)
  int64_t extentB = 1; ///< the output's innermost dim (stride 1 in the output)
  int64_t inStrideB = 1;  ///< input stride of b
  int64_t outStrideA = 1; ///< output stride of a
  /// Batch dims in output order: size, input stride, output stride.
  struct BatchDim {
    int64_t size, inStride, outStride;
  };
  llvm::SmallVector<BatchDim> batch;
  int64_t batchSize = 1;
  int64_t elementBytes = 1;
  int64_t numElements = 1;
};

/// The layout of a tiled transpose; failure if `op` is not tiled.
mlir::FailureOr<TransposeLayout> getTransposeLayout(TransposeOp op);

/// The group's kgraph.transpose if it holds that one op and nothing else
/// (besides constants) and transposes a group input, else null.
TransposeOp getSoleTransposeOp(FusedOp group);

/// Checks `config` against the transpose group's layout: vector_width must
/// divide both tiled extents and give accesses of at most 16 bytes, the
/// shared tile must fit the target.
mlir::LogicalResult
verifyTransposeConfig(TransposeConfigAttr config, const TransposeLayout &layout,
                      const SMTarget &target,
                      llvm::function_ref<mlir::InFlightDiagnostic()> emitError);

/// Blocks of the launch: x = tiles over (a, b), z = batch (at most 65535,
/// the kernel loops over the rest).
std::array<int64_t, 3> getTransposeGrid(TransposeConfigAttr config,
                                        const TransposeLayout &layout);

/// Bytes of the shared tile.
int64_t getTransposeSharedBytes(TransposeConfigAttr config,
                                const TransposeLayout &layout);

/// Estimated microseconds: the bytes read and written at the part's DRAM
/// bandwidth, stretched by masked edge tiles, by accesses narrower than a
/// 32-byte sector and by the last partial wave.
double estimateTransposeMicroseconds(TransposeConfigAttr config,
                                     const TransposeLayout &layout,
                                     const SMTarget &target);

/// Every configuration the model considers, the default first: 64x64 tiles
/// (shrunk to small extents), the widest vector that divides both extents,
/// 256 threads, one element of padding per row (one 4-byte word for narrower
/// types); then other tiles, vector widths and block sizes.
llvm::SmallVector<TransposeConfigAttr>
enumerateTransposeConfigs(mlir::MLIRContext *ctx, const TransposeLayout &layout,
                          const SMTarget &target);

} // namespace kgraph

#endif // KGRAPH_DIALECT_KGRAPH_TRANSFORMS_TRANSPOSETILING_H
