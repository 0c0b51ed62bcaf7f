//===- AccessMap.h - output coordinates to operand elements -----*- C++ -*-===//
//
// Which element of an operand each element of an output (iteration) space
// reads: numpy broadcasting, permutations (kgraph.transpose), strided slices
// (kgraph.slice) and the axis positions of NCHW/NHWC activations, and their
// compositions. Fusion asks it what an access looks like (contiguous runs,
// uniform runs); the code generators ask it for the index arithmetic, so
// every evaluator that reads an operand at output coordinates (the lane
// evaluator of elementwise and reduction kernels, the GEMM epilogue, the
// stencil kernels) indexes through the same map.
//
// A map holds, for each operand dim j, an affine function of at most one
// output coordinate:
//
//   operand[j] = offset_j + step_j * out[outDim_j]     (outDim_j >= 0)
//   operand[j] = offset_j                              (outDim_j == kFixed)
//
// which is closed under composition. The operand is dense row-major, so its
// linear index is an affine function of the output coordinates:
//
//   index = getOffset() + sum_d out[d] * getCoefficient(d).
//
//===----------------------------------------------------------------------===//

#ifndef KGRAPH_DIALECT_KGRAPH_IR_ACCESSMAP_H
#define KGRAPH_DIALECT_KGRAPH_IR_ACCESSMAP_H

#include "kgraph/Dialect/KGraph/IR/KGraphOps.h"

#include "mlir/IR/Builders.h"
#include "llvm/ADT/SmallVector.h"

namespace kgraph {

/// Positions of the batch, channel and spatial dims of a 4-D activation
/// (conv2d and pool2d inputs and results) stored in `layout`.
struct ActivationAxes {
  unsigned n, c, h, w;
};
ActivationAxes getActivationAxes(Layout layout);

/// Output dims [first, first + count) given by their row-major linear index
/// `linear` over those dims (a flat element index when they are all of
/// them, one coordinate when count is 1).
struct CoordGroup {
  int64_t first, count;
  mlir::Value linear;
};

/// The order in which emitLinearIndex sums the terms of the dims of one
/// coordinate group. Both give the same index; each evaluator keeps the
/// order it has always emitted, so that its PTX stays what it was.
enum class TermOrder { OuterFirst, InnerFirst };

class AccessMap {
public:
  /// outDim of an operand dim that does not follow any output coordinate.
  static constexpr int64_t kFixed = -1;

  /// Operand dim j: offset + step * out[outDim], or offset if kFixed.
  struct OperandDim {
    int64_t outDim;
    int64_t offset;
    int64_t step;
  };

  /// The map from `outShape` to an operand of `operandShape` given by `dims`
  /// (one per operand dim).
  AccessMap(llvm::ArrayRef<int64_t> outShape,
            llvm::ArrayRef<int64_t> operandShape,
            llvm::ArrayRef<OperandDim> dims);

  /// Every element reads the operand element at the same coordinates.
  static AccessMap identity(llvm::ArrayRef<int64_t> shape);
  /// numpy broadcasting: the operand's shape right-aligned against
  /// `outShape`; operand dims of size 1 are read at index 0.
  static AccessMap broadcast(llvm::ArrayRef<int64_t> operandShape,
                             llvm::ArrayRef<int64_t> outShape);
  /// kgraph.transpose: output dim i is operand dim permutation[i].
  static AccessMap transpose(llvm::ArrayRef<int64_t> operandShape,
                             llvm::ArrayRef<int64_t> permutation);
  /// kgraph.slice: output element k of dim d is operand element
  /// offsets[d] + k * strides[d]; the output shape is `sizes`.
  static AccessMap slice(llvm::ArrayRef<int64_t> operandShape,
                         llvm::ArrayRef<int64_t> offsets,
                         llvm::ArrayRef<int64_t> sizes,
                         llvm::ArrayRef<int64_t> strides);
  /// The input of a kgraph.concat along `axis` whose segment of the result
  /// (of shape `outShape`) starts at `segmentOffset` on the axis: every dim
  /// reads the same output coordinate, the axis shifted back by the offset.
  /// In bounds only for the output elements of the segment.
  static AccessMap concatInput(llvm::ArrayRef<int64_t> outShape,
                               llvm::ArrayRef<int64_t> inputShape,
                               int64_t axis, int64_t segmentOffset);
  /// The input of a kgraph.reduce over `axes` (with `keepDims` as the op)
  /// at fixed coordinates of the reduced dims: `reducedCoords[d]` for each
  /// input dim d in `axes` (entries of other dims are ignored). The output
  /// space is the reduce result; one such map per input element of a result
  /// element evaluates the reduction inline.
  static AccessMap reduceInput(llvm::ArrayRef<int64_t> inputShape,
                               llvm::ArrayRef<int64_t> axes, bool keepDims,
                               llvm::ArrayRef<int64_t> reducedCoords);
  /// A 4-D activation of `storedShape` in `layout` read at logical
  /// (N, C, H, W) coordinates: the output space is [N, C, H, W].
  static AccessMap activation(llvm::ArrayRef<int64_t> storedShape,
                              Layout layout);
  /// The map from the result of a kgraph.transpose, kgraph.slice or
  /// kgraph.broadcast_to to its input; failure for any other op.
  static mlir::FailureOr<AccessMap> forDataMovementOp(mlir::Operation *op);

  /// This map followed by `next`, which reads this map's operand as its
  /// output space: output coordinates to `next`'s operand.
  AccessMap compose(const AccessMap &next) const;

  llvm::ArrayRef<int64_t> getOutShape() const { return outShape; }
  llvm::ArrayRef<int64_t> getOperandShape() const { return operandShape; }
  llvm::ArrayRef<OperandDim> getOperandDims() const { return dims; }
  int64_t getOutRank() const { return outShape.size(); }

  /// The linear operand index of output element zero.
  int64_t getOffset() const { return offset; }
  /// How far the linear operand index moves per step of output dim `d`.
  int64_t getCoefficient(int64_t d) const { return coefficients[d]; }
  /// The linear operand index of the output element at `coords`.
  int64_t getLinearIndex(llvm::ArrayRef<int64_t> coords) const;

  /// The operand does not change along output dim `d` (size 1, or not read).
  bool isBroadcastAlong(int64_t d) const {
    return outShape[d] == 1 || coefficients[d] == 0;
  }
  /// The largest trailing extent of the output (a product of its innermost
  /// dims) whose elements, in row-major order, are consecutive operand
  /// elements.
  int64_t getContiguousExtent() const;
  /// The largest trailing extent of the output along which the operand
  /// element is the same.
  int64_t getUniformExtent() const;
  /// The flat operand index is the flat output index (same element order).
  bool preservesFlatIndex() const;
  /// Every output element reads the same operand element.
  bool isUniform() const;
  /// `width` consecutive elements of output dim `d`, starting at a multiple
  /// of `width`, are consecutive operand elements starting at a multiple of
  /// `width` (one aligned vector access) for every value of the other
  /// coordinates.
  bool isContiguousAlong(int64_t d, int64_t width) const;

  /// Emits the linear operand index of the output element whose coordinates
  /// `groups` give (every output dim the operand varies along must be in a
  /// group), added to `init` if given. Per group: nothing if the operand is
  /// broadcast along all of it; `linear * stride` if the group is one
  /// strided run of the operand; else, per dim the operand varies along,
  /// `((linear / inner) % size) * coefficient` (no division by 1, no
  /// remainder for the group's first dim, no multiplication by 1), summed in
  /// `order`. A nonzero offset is added last. Returns a null value where the
  /// index is the constant zero and `init` is null.
  mlir::Value emitLinearIndex(mlir::OpBuilder &b, mlir::Location loc,
                              llvm::ArrayRef<CoordGroup> groups,
                              mlir::Value init = mlir::Value(),
                              TermOrder order = TermOrder::OuterFirst) const;
  /// Emits the operand coordinates (one index per operand dim) of the output
  /// element at `coords` (one per output dim): a constant for a fixed dim,
  /// else the output coordinate times the step plus the offset.
  llvm::SmallVector<mlir::Value>
  emitIndices(mlir::OpBuilder &b, mlir::Location loc,
              llvm::ArrayRef<mlir::Value> coords) const;

  /// `out [..] -> operand [..]: dims (d0, 2+3*d1, 0), index 5 + 1*d0 + ...`.
  void print(llvm::raw_ostream &os) const;

private:
  llvm::SmallVector<int64_t> outShape, operandShape;
  llvm::SmallVector<OperandDim> dims;
  /// Derived: the linear index's offset and per-output-dim coefficients.
  int64_t offset = 0;
  llvm::SmallVector<int64_t> coefficients;
};

} // namespace kgraph

#endif // KGRAPH_DIALECT_KGRAPH_IR_ACCESSMAP_H
