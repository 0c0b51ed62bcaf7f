//===- LaneEvaluator.h - elementwise values on W lanes ----------*- C++ -*-===//
//
// Private to lib/Conversion/KGraphToGPU: evaluates the elementwise values of
// a kernel group on W lanes, shared by the elementwise and the reduction
// emitters. Each value is evaluated under an *access*: which flat elements
// of that value the W lanes need. Broadcasting (an AccessMap from the result
// to the operand) maps the access of a result to the access of each operand:
//   - contiguous: lanes are value[i .. i+W), one aligned vector load;
//   - uniform:    every lane reads value[i], one scalar load;
//   - gather:     lane l reads value[i_l], W scalar loads.
// A kgraph.transpose, kgraph.broadcast_to or kgraph.slice in the group is
// not materialized: its input is read under the access its result's access
// maps to through AccessMap::forDataMovementOp (contiguous only where the
// mapped run is an aligned vector of the input). Nor is a kgraph.concat: a
// branch on the axis coordinate picks the input whose segment holds the
// element (getConcatSegments) and reads it through AccessMap::concatInput,
// for all W lanes at once where they lie in one segment, else lane by lane;
// only the chosen input is read, so no address outside it is formed. A
// small kgraph.reduce (isInlineReduceOp: the N-body's sum over x, y, z) is
// evaluated inline: its input under the access of each reduced coordinate
// (AccessMap::reduceInput), combined as the reduction kernels combine.
// The Winograd transforms (kgraph.winograd_filter, winograd_input,
// winograd_output) are evaluated where they are read: WinogradLanes.cpp.
// Arithmetic goes through ScalarOps.h, per lane, in compute type.
//
//===----------------------------------------------------------------------===//

#ifndef KGRAPH_LIB_CONVERSION_KGRAPHTOGPU_LANEEVALUATOR_H
#define KGRAPH_LIB_CONVERSION_KGRAPHTOGPU_LANEEVALUATOR_H

#include "kgraph/Dialect/KGraph/IR/AccessMap.h"
#include "kgraph/Dialect/KGraph/IR/KGraphOps.h"

#include "mlir/IR/Builders.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/SmallVector.h"

#include <functional>
#include <tuple>
#include <vector>

namespace kgraph::detail {

enum class AccessKind { Contiguous, Uniform, Gather };

/// Which flat elements of a value the W lanes read.
struct Access {
  AccessKind kind;
  llvm::SmallVector<mlir::Value> indices; ///< one index, or W for gathers
  /// Optional (contiguous and uniform accesses): the first lane's
  /// coordinates in the value's shape, as groups covering every dim. Where
  /// the caller knows them (a reduction kernel: the row's coordinates
  /// outside its loop, the reduced ones inside), operand indices are sums of
  /// coordinate terms instead of divisions of the flat index.
  llvm::SmallVector<CoordGroup> coords = {};
};

/// A dense row-major memref viewed as 1-D (free: a reinterpret_cast).
mlir::Value flattenMemRef(mlir::OpBuilder &b, mlir::Location loc,
                          mlir::Value memref);

/// Flat views of the buffers of `group`'s kernel, whose entry block takes
/// the group's inputs, then its results: `flatArgs` maps each block argument
/// of the group's body to its input's view; `flatOutputs` gets one view per
/// result.
void flattenGroupBuffers(mlir::OpBuilder &b, mlir::Location loc,
                         FusedOp group, mlir::Block &entry,
                         llvm::DenseMap<mlir::Value, mlir::Value> &flatArgs,
                         llvm::SmallVectorImpl<mlir::Value> &flatOutputs);

/// Evaluates values of a group on W lanes: loads block arguments (through
/// `flatArgs`, the flat view of each), clones splat constants and emits
/// elementwise ops, rounding each to its declared element type. Values the
/// caller has computed itself (a reduce result) are bound with `bind`.
class LaneEvaluator {
public:
  LaneEvaluator(mlir::OpBuilder &b, mlir::Location loc, int64_t width,
                const llvm::DenseMap<mlir::Value, mlir::Value> &flatArgs)
      : b(b), loc(loc), width(width), flatArgs(flatArgs) {}

  /// The W lanes of `v` under `access`, in compute type.
  mlir::FailureOr<llvm::SmallVector<mlir::Value>>
  evaluate(mlir::Value v, const Access &access);

  /// Makes `evaluate(v, ...)` return `lanes` (compute type) under every
  /// access, without looking at how `v` is defined.
  void bind(mlir::Value v, llvm::ArrayRef<mlir::Value> lanes) {
    known[v].assign(lanes.begin(), lanes.end());
  }

  /// The alpha^2 transform points (point-major, W lanes each, compute type
  /// rounded to the element type) of the tile(s) of winograd_input or
  /// winograd_filter `op` at flat index `index` of one point's slice ([C, T]
  /// or [T, C] of an input, [F, C] of a filter), lanes along its innermost
  /// dim: the tile's pixels or taps are read once.
  mlir::FailureOr<llvm::SmallVector<mlir::Value>>
  evaluateWinogradTile(mlir::Operation *op, mlir::Value index);

  /// Stores `lanes` (compute type of `elementType`) to the flat memref
  /// `flat` at `index`: one vector store for several lanes.
  void store(llvm::ArrayRef<mlir::Value> lanes, mlir::Type elementType,
             mlir::Value flat, mlir::Value index);

private:
  mlir::Value indexConst(int64_t v);
  /// The flat index lane `l` of `access` reads (a gather's own, else the
  /// first lane's plus `l`).
  mlir::Value laneIndex(const Access &access, int64_t l);
  /// The W lanes of the result of `concat` under `access`.
  mlir::FailureOr<llvm::SmallVector<mlir::Value>>
  evaluateConcat(mlir::Operation *concat, const Access &access);
  /// The W lanes of a small reduction (isInlineReduceOp) under `access`:
  /// its input evaluated at each reduced coordinate, combined in order.
  mlir::FailureOr<llvm::SmallVector<mlir::Value>>
  evaluateInlineReduce(ReduceOp reduce, const Access &access);
  /// The W lanes of a kgraph.winograd_filter, winograd_input or
  /// winograd_output result under `access` (WinogradLanes.cpp).
  mlir::FailureOr<llvm::SmallVector<mlir::Value>>
  evaluateWinograd(mlir::Operation *op, const Access &access);
  /// The same for W lanes at `coords` (one per result dim) that differ only
  /// in the innermost coordinate, lane l at coords.back() + l. A null
  /// coords[0] of a winograd_input or winograd_filter asks for every
  /// transform point (evaluateWinogradTile).
  mlir::FailureOr<llvm::SmallVector<mlir::Value>>
  evaluateWinogradLanes(mlir::Operation *op, llvm::ArrayRef<mlir::Value> coords);
  /// `evaluate` inside a region that ends before the values are read again:
  /// what it memoizes there does not dominate the code after the region.
  mlir::FailureOr<llvm::SmallVector<mlir::Value>>
  evaluateInRegion(mlir::Value v, const Access &access);
  /// The access of elementwise operand `operand` (numpy-broadcast) of a
  /// result of shape `resultShape` read under `access`.
  Access mapAccess(const Access &access, mlir::Value operand,
                   llvm::ArrayRef<int64_t> resultShape);
  /// The access of `operand`, read through `map` (result to operand) from a
  /// result read under `access`: the same access where the map keeps the
  /// flat order; contiguous where the W lanes stay one aligned vector of the
  /// operand, uniform where they read one element, gathered otherwise.
  Access mapAccessThrough(const Access &access, const AccessMap &map,
                          mlir::Value operand);
  /// The operand index `map` gives the result element at flat index `flat`.
  mlir::Value mapIndex(mlir::Value flat, const AccessMap &map);
  /// One coordinate per dim of `shape` from `coords` (groups of several dims
  /// divided by their extents).
  llvm::SmallVector<mlir::Value> splitCoords(llvm::ArrayRef<CoordGroup> coords,
                                             llvm::ArrayRef<int64_t> shape);
  /// The operand index `map` gives `access`'s first lane: from its
  /// coordinates where known, else from its flat index.
  mlir::Value mapFirstIndex(const Access &access, const AccessMap &map);
  /// The coordinates of `operand` (read through `map`) at `access`'s first
  /// lane; none where `access` has none or `operand` is loaded or constant
  /// (only its flat index is needed).
  llvm::SmallVector<CoordGroup>
  mapCoords(const Access &access, const AccessMap &map, mlir::Value operand);
  /// `access` (uniform or gathered) mapped index by index through `map`.
  Access mapEachIndex(const Access &access, const AccessMap &map);
  /// The W lanes of a contiguous `access` gathered one by one through `map`.
  Access gatherLanes(const Access &access, const AccessMap &map);
  llvm::SmallVector<mlir::Value> load(mlir::Value flat, mlir::Type elementType,
                                      const Access &access);

  mlir::OpBuilder &b;
  mlir::Location loc;
  int64_t width;
  const llvm::DenseMap<mlir::Value, mlir::Value> &flatArgs;
  llvm::DenseMap<mlir::Value, llvm::SmallVector<mlir::Value>> known;
  /// Memo of evaluated (value, access kind, first index) triples; gathers
  /// are not memoized.
  llvm::DenseMap<std::tuple<mlir::Value, unsigned, mlir::Value>,
                 llvm::SmallVector<mlir::Value>>
      memo;
};

} // namespace kgraph::detail

#endif // KGRAPH_LIB_CONVERSION_KGRAPHTOGPU_LANEEVALUATOR_H
