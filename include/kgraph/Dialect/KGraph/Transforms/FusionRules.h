//===- FusionRules.h - which ops kgraph-fuse may group ----------*- C++ -*-===//
//
// The predicates of the fused-group contract (docs/fusion.md): what a
// stencil op is, what may join a GEMM group as epilogue or prologue, what
// may join a reduction group. kgraph-fuse builds groups with them; tiling,
// lowering and tests use the same functions to classify a group.
//
//===----------------------------------------------------------------------===//

#ifndef KGRAPH_DIALECT_KGRAPH_TRANSFORMS_FUSIONRULES_H
#define KGRAPH_DIALECT_KGRAPH_TRANSFORMS_FUSIONRULES_H

#include "kgraph/Dialect/KGraph/IR/KGraphOps.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Operation.h"
#include "mlir/IR/Value.h"

#include <string>

namespace kgraph {

/// Largest stencil window (KH and KW) of a conv2d/pool2d in a stencil group.
inline constexpr int64_t kMaxStencilWindow = 7;
/// Largest channel count of any 4-D value in a stencil group.
inline constexpr int64_t kMaxStencilChannels = 4;
/// Most input channels per group of a conv2d that a window kernel computes
/// (its taps are a thread's multiply-adds; wider groups are GEMMs).
inline constexpr int64_t kMaxWindowGroupChannels = 8;
/// Ops on the path from a block argument to a matmul operand (prologue).
inline constexpr unsigned kMaxPrologueOps = 2;
/// Most input elements per result element of a kgraph.reduce that kernels
/// evaluate inline, wherever its result is read (isInlineReduceOp).
inline constexpr int64_t kMaxInlineReduceElements = 8;
/// Most times a producer adopted into a reduction group at a smaller shape
/// than the reduce input (or inside an inline reduction) is evaluated per
/// element of its own result (Fuser::adoptShapedProducers).
inline constexpr int64_t kMaxInlineEvaluations = 8;

/// Options of kgraph-fuse (the pass options of the same names).
struct FusionOptions {
  /// Most elementwise ops cloned into one group to recompute a value that
  /// another group also uses (0 disables recomputation).
  unsigned maxRecompute = 4;
  /// Emit a remark per group formed and per kernel op left alone.
  bool report = false;
};

/// True if `shape` broadcasts (numpy, right-aligned) to `target`: rank not
/// larger and every dimension equal or 1.
bool broadcastsTo(llvm::ArrayRef<int64_t> shape,
                  llvm::ArrayRef<int64_t> target);

/// True if `value` is an `arith.constant` splat tensor.
bool isSplatConstant(mlir::Value value);

/// True if the constant `def` is cloned into the group of `inGroup` ops
/// that reads it, its values folded into the kernel: a splat that no
/// matmul or GEMM conv2d of the group reads as an operand (directly, or
/// through a slice read in place) and no pool2d as its input (those kernels
/// load them from memory), any constant that is not a tensor, or a tensor
/// read only as the filter of stencil conv2ds (isStencilOp: the taps become
/// immediates). Any other constant stays outside as a group input: a buffer
/// the plan carries.
bool isFoldedConstant(mlir::Operation *def,
                      llvm::function_ref<bool(mlir::Operation *)> inGroup);

/// Succeeds if the `arith.constant` `op` of a kernel group is a splat tensor
/// (the only constants kernels clone into their lanes); otherwise diagnoses
/// `op`.
mlir::LogicalResult verifyKernelConstant(mlir::Operation *op);

/// True for a conv2d or pool2d that a stencil group may hold: strides 1,
/// output H,W equal to input H,W, window at most 7x7, channels at most 4,
/// and for conv2d dilations 1 and groups 1. Otherwise false, with the
/// reason in `whyNot` when given (e.g. "64 input channels").
bool isStencilOp(mlir::Operation *op, std::string *whyNot = nullptr);

/// What a materialized value of a stencil group holds outside the image.
enum class StencilFill { None, Zero, NegInf };

/// The value stencil op `op` (conv2d, pool2d) reads outside the image: -inf
/// for a max pool, zero otherwise. A stencil group stores each value once,
/// padded with this, so all stencil readers of one value in a group agree.
StencilFill getStencilFill(mlir::Operation *op);

/// True for the anchor of a window group (docs/architecture.md, "Window
/// kernels"): a channels-last (nhwc) pool2d, or an nhwc conv2d with groups > 1
/// and at most kMaxWindowGroupChannels input channels per group (depthwise
/// among them), that is not a stencil op. Otherwise false, with the reason
/// in `whyNot` when given.
bool isWindowOp(mlir::Operation *op, std::string *whyNot = nullptr);

/// True for the anchor of a GEMM group: a kgraph.matmul, or a kgraph.conv2d
/// that is neither a stencil op nor a window op.
bool isGemmAnchor(mlir::Operation *op);

/// True for a prologue op of a matmul operand: a kgraph.cast, or a kgraph.mul
/// of a same-shaped value by a splat constant that broadcasts to it.
bool isPrologueOp(mlir::Operation *op);

/// The operand of a prologue op that carries the data (not the constant).
mlir::Value getPrologueInput(mlir::Operation *op);

/// True for a kgraph.slice a GEMM kernel reads as its operand in place: a
/// rank-2 or rank-3 slice with unit steps along the last dim (a block of
/// rows and columns of a wider matrix, such as Q, K or V of a fused QKV
/// projection). The kernel addresses the slice's input with its row and
/// batch strides (MatmulProblem::layoutA/layoutB), no copy is made.
bool isGemmOperandSlice(mlir::Operation *op);

/// True if `op` is elementwise, its result has exactly `shape`, and every
/// operand not in `inGroup` broadcasts to `shape`. This is the rule for an
/// epilogue op of a GEMM group (shape = the anchor result's) and for a
/// producer (shape = the reduce input's) or consumer (shape = the reduce
/// result's) of a reduction group.
bool isEpilogueCandidate(mlir::Operation *op, llvm::ArrayRef<int64_t> shape,
                         llvm::function_ref<bool(mlir::Value)> inGroup);

/// The rows a kgraph.reduce reduces: its input shape and which dims it
/// reduces (a size-1 dim counts as kept: reducing it changes no row). Two
/// reductions with equal rows can share one kernel that reads each row once
/// (a multi-reduction group: softmax, layer norm).
struct ReduceRows {
  llvm::SmallVector<int64_t> shape; ///< the reduce input's shape
  llvm::SmallVector<bool> reduced;  ///< per dim of `shape`

  bool operator==(const ReduceRows &o) const {
    return shape == o.shape && reduced == o.reduced;
  }
  bool operator!=(const ReduceRows &o) const { return !(*this == o); }
  /// Number of rows (outputs of the reduction).
  int64_t getNumRows() const;
  /// `shape` with every reduced dim set to 1 (the keep_dims result).
  llvm::SmallVector<int64_t> getKeptShape() const;
  /// One value per row, in row order: the non-unit dims of `s` are the kept
  /// non-unit dims (the result with or without keep_dims, or either with
  /// unit dims added).
  bool isPerRowShape(llvm::ArrayRef<int64_t> s) const;
  /// A per-row value of shape `s` that numpy broadcasting spreads along the
  /// rows of `shape`: `s` is the kept shape, maybe without some leading dims.
  /// (A per-row `[N]` does not: it would broadcast along the last dim.)
  bool broadcastsAlongRows(llvm::ArrayRef<int64_t> s) const;
};

/// The rows of `op`.
ReduceRows getReduceRows(ReduceOp op);

/// Input elements per result element of `op` (the product of its reduced
/// extents), or 0 where its shapes are not static.
int64_t getReducedElementCount(ReduceOp op);

/// True for a kgraph.reduce small enough to evaluate inline (at most
/// kMaxInlineReduceElements input elements per result element, float or
/// integer elements other than i1): a kernel that reads its result computes
/// each result element from its inputs where it needs it, as it does an
/// elementwise op. The N-body's sum over x, y, z inside the sum over bodies.
bool isInlineReduceOp(mlir::Operation *op);

/// True if the kgraph.reduce `op` is evaluated inline (isInlineReduceOp) by
/// a reduction of other rows that reads its result, transitively, in the
/// same block: in a reduction group's body it is not one of the group's
/// reductions (those share their rows) but a value of its producers, and
/// kgraph-fuse offers it to that reduction's group first.
bool isInlinedReduce(mlir::Operation *op);

/// True if `op` may join a reduction group over `rows` whose values are
/// those `inGroup` accepts (the rule of a multi-reduction group, for
/// kgraph-fuse): a kgraph.reduce of the same rows; or an elementwise op
///  - over the whole rows (result shape `rows.shape`): operands in the group
///    have that shape or are per-row values that broadcast along the rows,
///    the others broadcast to the result;
///  - or with one value per row (a per-row result shape): operands in the
///    group are per-row values, the others broadcast to the result.
bool isRowGroupOp(mlir::Operation *op, const ReduceRows &rows,
                  llvm::function_ref<bool(mlir::Value)> inGroup);

/// The spatial grid of a stencil group: batch, height, width and layout.
struct StencilGrid {
  int64_t n = 0, h = 0, w = 0;
  Layout layout = Layout::nchw;
  bool operator==(const StencilGrid &o) const {
    return n == o.n && h == o.h && w == o.w && layout == o.layout;
  }
};

/// The grid of a stencil op's input (and output).
StencilGrid getStencilGrid(mlir::Operation *stencilOp);

/// True if `op` is elementwise, its result is 4-D on `grid` with at most 4
/// channels, and every operand not in `inGroup` has the result's shape or is
/// a splat constant that broadcasts to it.
bool isStencilElementwiseOp(mlir::Operation *op, const StencilGrid &grid,
                            llvm::function_ref<bool(mlir::Value)> inGroup);

/// Groups the kernel ops of `func` into kgraph.fused ops (the kgraph-fuse
/// pass). Ops it leaves alone are left for kgraph-form-kernels. Never fails on
/// verifier-valid IR.
void fuseFunction(mlir::func::FuncOp func, const FusionOptions &options);

} // namespace kgraph

#endif // KGRAPH_DIALECT_KGRAPH_TRANSFORMS_FUSIONRULES_H
