//===- KGraphClassify.h - op families for kernel formation ------*- C++ -*-===//

#ifndef KGRAPH_DIALECT_KGRAPH_IR_KGRAPHCLASSIFY_H
#define KGRAPH_DIALECT_KGRAPH_IR_KGRAPHCLASSIFY_H

#include "mlir/IR/Value.h"
#include "mlir/Support/LLVM.h"
#include "llvm/ADT/SmallVector.h"

#include <optional>
#include <string>

namespace mlir {
class Operation;
} // namespace mlir

namespace kgraph {
enum class GroupKind : uint32_t;

/// True for ops computed one output element at a time from the broadcast
/// operands at the same coordinates (unary, binary, cast, compare, select,
/// clamp).
bool isElementwiseOp(mlir::Operation *op);

/// True for kgraph ops that compute something and therefore belong in a
/// kernel: everything in the dialect except kgraph.fused, kgraph.yield and
/// the host-side kgraph.buffer_view. (Views among them, isViewOp, never get
/// a kernel of their own.)
bool isKernelOp(mlir::Operation *op);

/// True for the ops that only move or view data (reshape, transpose, slice,
/// concat, broadcast_to): the members of a `copy` group.
bool isDataMovementOp(mlir::Operation *op);

/// The alignment in bytes of the first element of a view: kernels read and
/// write their buffers with 16-byte vector accesses.
inline constexpr int64_t kViewAlignment = 16;

/// If `op`'s result is a view of its input's buffer (no kernel: kernels
/// read the input's buffer at an offset), that offset in bytes; else
/// nullopt. A kgraph.reshape is a view at offset 0 (both are dense
/// row-major); a kgraph.slice is one when its elements are one contiguous
/// run of the input starting a multiple of kViewAlignment bytes in.
std::optional<int64_t> getViewByteOffset(mlir::Operation *op);
bool isViewOp(mlir::Operation *op);

/// True for the data-movement ops an evaluator reads through an AccessMap
/// (kgraph.transpose, kgraph.broadcast_to, kgraph.slice): they fuse into
/// elementwise groups, whose kernels read the op's input at the mapped
/// coordinates instead of materializing its result.
bool isAccessMapOp(mlir::Operation *op);

/// True for the data-movement ops the elementwise family reads without
/// materializing them: the access-map ops, and kgraph.concat, whose result
/// element is read from the input whose segment of the axis holds it
/// (getConcatSegments, through AccessMap::concatInput), and the Winograd
/// transforms (isWinogradOp), each element a small sum of its operand's.
bool isElementwiseReadOp(mlir::Operation *op);

/// True for kgraph.winograd_filter, winograd_input and winograd_output.
bool isWinogradOp(mlir::Operation *op);

/// One input of a kgraph.concat: it fills `[offset, offset + size)` of the
/// result's concat axis.
struct ConcatSegment {
  mlir::Value input;
  int64_t offset;
  int64_t size;
};

/// The segments of the inputs of the kgraph.concat `op`, in operand order
/// (empty for any other op). The one answer to which input holds which
/// result element, for the in-place views and the kernels alike.
llvm::SmallVector<ConcatSegment> getConcatSegments(mlir::Operation *op);

/// If `op` is a kgraph.concat that needs no kernel of its own, the byte
/// offsets of its inputs in its result; else nullopt. It needs none when its
/// inputs are contiguous runs of its result (every result dim before the
/// axis is 1) each starting a multiple of kViewAlignment bytes in: the
/// lowering makes each input's buffer a view of the result's, which the
/// input's producer writes in place (or a copy kernel, where the input is
/// not a kernel's result of its own). Any other concat is an elementwise
/// kernel over its result (isElementwiseReadOp).
std::optional<llvm::SmallVector<int64_t>>
getConcatInputByteOffsets(mlir::Operation *op);

/// Bytes of the widest element type `group` loads or stores (its inputs and
/// results): what bounds a kernel's vector width to 16 bytes.
int64_t getWidestAccessBytes(mlir::Operation *group);

/// The kgraph.winograd_input or winograd_filter that is the one result of
/// elementwise group `group`, or null. Its kernel computes whole tiles: a
/// thread reads a tile's pixels (input) or taps (filter) once and writes all
/// alpha^2 transform points of its W lanes (along the result's innermost
/// dim: tiles for an nchw input, channels otherwise), so its work items are
/// one point's slice.
mlir::Operation *getWinogradTileResult(mlir::Operation *group);

/// The elements an elementwise kernel's threads step over, W at a time: the
/// result's, or one transform point's slice of a whole-tile Winograd
/// transform (getWinogradTileResult).
int64_t getElementwiseWorkElements(mlir::Operation *group);

/// Why the ops of a group body cannot form a kernel of `kind`, or an empty
/// string if they can. Structure only: an elementwise group holds only
/// elementwise ops; a gemm group exactly one matmul or conv2d; a reduce group
/// at least one reduce; a stencil group at least one conv2d or pool2d; a copy
/// group at least one data-movement op; a transpose group exactly one
/// kgraph.transpose and nothing else; besides its anchors, every group may
/// hold elementwise ops and constants, an elementwise group also access-map
/// ops and concats (isElementwiseReadOp), a gemm group access-map ops
/// (isAccessMapOp). Shapes, types and counts beyond that
/// are each family's tiling checks.
std::string getGroupKindError(mlir::Operation *group, GroupKind kind);

} // namespace kgraph

#endif // KGRAPH_DIALECT_KGRAPH_IR_KGRAPHCLASSIFY_H
