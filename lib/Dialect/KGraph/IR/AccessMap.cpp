//===- AccessMap.cpp - output coordinates to operand elements -------------===//

#include "kgraph/Dialect/KGraph/IR/AccessMap.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "llvm/Support/raw_ostream.h"

#include <cassert>

using namespace mlir;
using namespace kgraph;

ActivationAxes kgraph::getActivationAxes(Layout layout) {
  if (layout == Layout::nhwc)
    return {0, 3, 1, 2};
  return {0, 1, 2, 3};
}

/// Row-major strides of a dense shape.
static SmallVector<int64_t> rowMajorStrides(ArrayRef<int64_t> shape) {
  SmallVector<int64_t> strides(shape.size(), 1);
  for (int64_t d = int64_t(shape.size()) - 2; d >= 0; --d)
    strides[d] = strides[d + 1] * shape[d + 1];
  return strides;
}

AccessMap::AccessMap(ArrayRef<int64_t> outShape, ArrayRef<int64_t> operandShape,
                     ArrayRef<OperandDim> dims)
    : outShape(outShape), operandShape(operandShape), dims(dims),
      coefficients(outShape.size(), 0) {
  assert(dims.size() == operandShape.size() && "one OperandDim per operand dim");
  SmallVector<int64_t> strides = rowMajorStrides(operandShape);
  for (auto [j, dim] : llvm::enumerate(dims)) {
    offset += dim.offset * strides[j];
    if (dim.outDim == kFixed)
      continue;
    assert(dim.outDim >= 0 && dim.outDim < int64_t(outShape.size()) &&
           "operand dim reads an output dim the map does not have");
    coefficients[dim.outDim] += dim.step * strides[j];
  }
}

AccessMap AccessMap::identity(ArrayRef<int64_t> shape) {
  SmallVector<OperandDim> dims;
  for (int64_t d = 0, e = shape.size(); d < e; ++d)
    dims.push_back({d, 0, 1});
  return AccessMap(shape, shape, dims);
}

AccessMap AccessMap::broadcast(ArrayRef<int64_t> operandShape,
                               ArrayRef<int64_t> outShape) {
  assert(operandShape.size() <= outShape.size() &&
         "broadcasting never lowers the rank");
  int64_t lead = outShape.size() - operandShape.size();
  SmallVector<OperandDim> dims;
  for (auto [j, size] : llvm::enumerate(operandShape)) {
    assert((size == 1 || size == outShape[lead + j]) &&
           "operand dim neither 1 nor the output's");
    if (size == 1)
      dims.push_back({kFixed, 0, 0});
    else
      dims.push_back({lead + int64_t(j), 0, 1});
  }
  return AccessMap(outShape, operandShape, dims);
}

AccessMap AccessMap::transpose(ArrayRef<int64_t> operandShape,
                               ArrayRef<int64_t> permutation) {
  assert(permutation.size() == operandShape.size() && "one entry per dim");
  SmallVector<int64_t> outShape;
  SmallVector<OperandDim> dims(operandShape.size(), {kFixed, 0, 0});
  for (auto [i, p] : llvm::enumerate(permutation)) {
    outShape.push_back(operandShape[p]);
    dims[p] = {int64_t(i), 0, 1};
  }
  return AccessMap(outShape, operandShape, dims);
}

AccessMap AccessMap::slice(ArrayRef<int64_t> operandShape,
                           ArrayRef<int64_t> offsets, ArrayRef<int64_t> sizes,
                           ArrayRef<int64_t> strides) {
  assert(offsets.size() == operandShape.size() &&
         sizes.size() == operandShape.size() &&
         strides.size() == operandShape.size() && "one entry per dim");
  SmallVector<OperandDim> dims;
  for (int64_t d = 0, e = operandShape.size(); d < e; ++d)
    dims.push_back({d, offsets[d], strides[d]});
  return AccessMap(sizes, operandShape, dims);
}

AccessMap AccessMap::reduceInput(ArrayRef<int64_t> inputShape,
                                 ArrayRef<int64_t> axes, bool keepDims,
                                 ArrayRef<int64_t> reducedCoords) {
  assert(reducedCoords.size() == inputShape.size() && "one entry per dim");
  SmallVector<int64_t> outShape;
  SmallVector<OperandDim> dims;
  for (int64_t d = 0, e = inputShape.size(); d < e; ++d) {
    if (llvm::is_contained(axes, d)) {
      dims.push_back({kFixed, reducedCoords[d], 0});
      if (keepDims)
        outShape.push_back(1);
      continue;
    }
    dims.push_back({int64_t(outShape.size()), 0, 1});
    outShape.push_back(inputShape[d]);
  }
  return AccessMap(outShape, inputShape, dims);
}

AccessMap AccessMap::concatInput(ArrayRef<int64_t> outShape,
                                 ArrayRef<int64_t> inputShape, int64_t axis,
                                 int64_t segmentOffset) {
  assert(outShape.size() == inputShape.size() && axis >= 0 &&
         axis < int64_t(outShape.size()) && "concat input of the result's rank");
  SmallVector<OperandDim> dims;
  for (int64_t d = 0, e = inputShape.size(); d < e; ++d)
    dims.push_back({d, d == axis ? -segmentOffset : 0, 1});
  return AccessMap(outShape, inputShape, dims);
}

AccessMap AccessMap::activation(ArrayRef<int64_t> storedShape, Layout layout) {
  assert(storedShape.size() == 4 && "activations are 4-D");
  ActivationAxes axes = getActivationAxes(layout);
  unsigned stored[4] = {axes.n, axes.c, axes.h, axes.w};
  SmallVector<int64_t> outShape;
  SmallVector<OperandDim> dims(4, {kFixed, 0, 0});
  for (int64_t logical = 0; logical < 4; ++logical) {
    outShape.push_back(storedShape[stored[logical]]);
    dims[stored[logical]] = {logical, 0, 1};
  }
  return AccessMap(outShape, storedShape, dims);
}

FailureOr<AccessMap> AccessMap::forDataMovementOp(Operation *op) {
  auto shapeOf = [](Value v) -> FailureOr<ArrayRef<int64_t>> {
    auto type = llvm::dyn_cast<RankedTensorType>(v.getType());
    if (!type || !type.hasStaticShape())
      return failure();
    return type.getShape();
  };
  if (auto t = llvm::dyn_cast<TransposeOp>(op)) {
    FailureOr<ArrayRef<int64_t>> in = shapeOf(t.getInput());
    if (failed(in))
      return failure();
    return transpose(*in, t.getPermutation());
  }
  if (auto s = llvm::dyn_cast<SliceOp>(op)) {
    FailureOr<ArrayRef<int64_t>> in = shapeOf(s.getInput());
    if (failed(in))
      return failure();
    return slice(*in, s.getOffsets(), s.getSizes(), s.getStrides());
  }
  if (auto bc = llvm::dyn_cast<BroadcastToOp>(op)) {
    FailureOr<ArrayRef<int64_t>> in = shapeOf(bc.getInput());
    FailureOr<ArrayRef<int64_t>> out = shapeOf(bc.getResult());
    if (failed(in) || failed(out))
      return failure();
    return broadcast(*in, *out);
  }
  return failure();
}

AccessMap AccessMap::compose(const AccessMap &next) const {
  assert(next.outShape == operandShape &&
         "the next map must read this map's operand");
  SmallVector<OperandDim> composed;
  for (const OperandDim &nd : next.dims) {
    if (nd.outDim == kFixed) {
      composed.push_back({kFixed, nd.offset, 0});
      continue;
    }
    const OperandDim &d = dims[nd.outDim];
    if (d.outDim == kFixed)
      composed.push_back({kFixed, nd.offset + nd.step * d.offset, 0});
    else
      composed.push_back(
          {d.outDim, nd.offset + nd.step * d.offset, nd.step * d.step});
  }
  return AccessMap(outShape, next.operandShape, composed);
}

int64_t AccessMap::getLinearIndex(ArrayRef<int64_t> coords) const {
  assert(coords.size() == outShape.size() && "one coordinate per output dim");
  int64_t index = offset;
  for (auto [c, k] : llvm::zip(coords, coefficients))
    index += c * k;
  return index;
}

int64_t AccessMap::getContiguousExtent() const {
  int64_t extent = 1;
  for (int64_t d = getOutRank() - 1; d >= 0; --d) {
    if (outShape[d] == 1)
      continue;
    if (coefficients[d] != extent)
      break;
    extent *= outShape[d];
  }
  return extent;
}

int64_t AccessMap::getUniformExtent() const {
  int64_t extent = 1;
  for (int64_t d = getOutRank() - 1; d >= 0 && isBroadcastAlong(d); --d)
    extent *= outShape[d];
  return extent;
}

bool AccessMap::preservesFlatIndex() const {
  int64_t total = 1;
  for (int64_t size : outShape)
    total *= size;
  return offset == 0 && getContiguousExtent() == total;
}

bool AccessMap::isUniform() const {
  for (int64_t d = 0, e = getOutRank(); d < e; ++d)
    if (!isBroadcastAlong(d))
      return false;
  return true;
}

bool AccessMap::isContiguousAlong(int64_t d, int64_t width) const {
  if (coefficients[d] != 1 || outShape[d] % width != 0 || offset % width != 0)
    return false;
  for (int64_t o = 0, e = getOutRank(); o < e; ++o)
    if (o != d && !isBroadcastAlong(o) && coefficients[o] % width != 0)
      return false;
  return true;
}

Value AccessMap::emitLinearIndex(OpBuilder &b, Location loc,
                                 ArrayRef<CoordGroup> groups, Value init,
                                 TermOrder order) const {
  auto c = [&](int64_t v) -> Value {
    return arith::ConstantIndexOp::create(b, loc, v);
  };
  auto addTo = [&](Value sum, Value term) -> Value {
    return sum ? arith::AddIOp::create(b, loc, sum, term).getResult() : term;
  };
  Value sum = init;
  for (const CoordGroup &g : groups) {
    int64_t last = g.first + g.count - 1;
    // Nothing where the operand is broadcast along the whole group.
    bool broadcast = true;
    for (int64_t d = g.first; d <= last; ++d)
      broadcast &= isBroadcastAlong(d);
    if (broadcast)
      continue;
    // One strided run: every dim's coefficient is the innermost varying
    // dim's times the extent inside it.
    int64_t innermost = last;
    while (outShape[innermost] == 1)
      --innermost;
    int64_t unit = coefficients[innermost];
    bool strided = true;
    for (int64_t d = last, extent = 1; d >= g.first; extent *= outShape[d--])
      if (outShape[d] != 1)
        strided &= coefficients[d] == unit * extent;
    if (strided) {
      Value term = unit == 1 ? g.linear
                             : arith::MulIOp::create(b, loc, g.linear, c(unit))
                                   .getResult();
      sum = addTo(sum, term);
      continue;
    }
    // Per dim: ((linear / inner) % size) * coefficient.
    SmallVector<int64_t> inner(g.count, 1);
    for (int64_t i = g.count - 2; i >= 0; --i)
      inner[i] = inner[i + 1] * outShape[g.first + i + 1];
    Value groupSum;
    auto term = [&](int64_t d) {
      if (isBroadcastAlong(d))
        return;
      Value coord = g.linear;
      if (int64_t in = inner[d - g.first]; in != 1)
        coord = arith::DivUIOp::create(b, loc, coord, c(in));
      if (d != g.first)
        coord = arith::RemUIOp::create(b, loc, coord, c(outShape[d]));
      if (coefficients[d] != 1)
        coord = arith::MulIOp::create(b, loc, coord, c(coefficients[d]));
      groupSum = addTo(groupSum, coord);
    };
    if (order == TermOrder::OuterFirst)
      for (int64_t d = g.first; d <= last; ++d)
        term(d);
    else
      for (int64_t d = last; d >= g.first; --d)
        term(d);
    sum = addTo(sum, groupSum);
  }
  if (offset != 0)
    sum = addTo(sum, c(offset));
  return sum;
}

SmallVector<Value> AccessMap::emitIndices(OpBuilder &b, Location loc,
                                          ArrayRef<Value> coords) const {
  assert(coords.size() == outShape.size() && "one coordinate per output dim");
  SmallVector<Value> indices;
  for (const OperandDim &d : dims) {
    if (d.outDim == kFixed) {
      indices.push_back(arith::ConstantIndexOp::create(b, loc, d.offset));
      continue;
    }
    Value index = coords[d.outDim];
    if (d.step != 1)
      index = arith::MulIOp::create(
          b, loc, index, arith::ConstantIndexOp::create(b, loc, d.step));
    if (d.offset != 0)
      index = arith::AddIOp::create(
          b, loc, index, arith::ConstantIndexOp::create(b, loc, d.offset));
    indices.push_back(index);
  }
  return indices;
}

void AccessMap::print(raw_ostream &os) const {
  auto shape = [&](ArrayRef<int64_t> s) {
    os << "[";
    llvm::interleaveComma(s, os);
    os << "]";
  };
  os << "out ";
  shape(outShape);
  os << " -> operand ";
  shape(operandShape);
  os << ": dims (";
  llvm::interleaveComma(dims, os, [&](const OperandDim &d) {
    if (d.outDim == kFixed) {
      os << d.offset;
      return;
    }
    if (d.offset != 0)
      os << d.offset << "+";
    if (d.step != 1)
      os << d.step << "*";
    os << "d" << d.outDim;
  });
  os << "), index " << offset;
  for (auto [d, k] : llvm::enumerate(coefficients))
    if (k != 0)
      os << " + " << k << "*d" << d;
}
