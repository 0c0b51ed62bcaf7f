//===- LaneEvaluator.cpp - elementwise values on W lanes ------------------===//

#include "LaneEvaluator.h"
#include "ReduceCombine.h"
#include "ScalarOps.h"

#include "kgraph/Conversion/KGraphToGPU/KGraphToGPU.h"
#include "kgraph/Dialect/KGraph/IR/AccessMap.h"
#include "kgraph/Dialect/KGraph/IR/KGraphClassify.h"
#include "kgraph/Dialect/KGraph/Transforms/FusionRules.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

using namespace mlir;
using namespace kgraph;
using namespace kgraph::detail;

static ArrayRef<int64_t> getShape(Value v) {
  return llvm::cast<ShapedType>(v.getType()).getShape();
}

Value kgraph::detail::flattenMemRef(OpBuilder &b, Location loc, Value memref) {
  auto type = llvm::cast<MemRefType>(memref.getType());
  int64_t n = type.getNumElements();
  auto flatType = MemRefType::get({n}, type.getElementType());
  return memref::ReinterpretCastOp::create(b, loc, flatType, memref, 0,
                                           ArrayRef<int64_t>{n},
                                           ArrayRef<int64_t>{1});
}

void kgraph::detail::flattenGroupBuffers(OpBuilder &b, Location loc,
                                         FusedOp group, Block &entry,
                                         DenseMap<Value, Value> &flatArgs,
                                         SmallVectorImpl<Value> &flatOutputs) {
  Block &body = group.getBody().front();
  unsigned numInputs = group.getInputs().size();
  for (unsigned i = 0; i < numInputs; ++i)
    flatArgs[body.getArgument(i)] = flattenMemRef(b, loc, entry.getArgument(i));
  for (unsigned i = 0; i < group.getNumResults(); ++i)
    flatOutputs.push_back(
        flattenMemRef(b, loc, entry.getArgument(numInputs + i)));
}

Value LaneEvaluator::indexConst(int64_t v) {
  return arith::ConstantIndexOp::create(b, loc, v);
}

Value LaneEvaluator::laneIndex(const Access &access, int64_t l) {
  if (access.kind == AccessKind::Gather)
    return access.indices[l];
  if (l == 0)
    return access.indices[0];
  return arith::AddIOp::create(b, loc, access.indices[0], indexConst(l));
}

Value LaneEvaluator::mapIndex(Value flat, const AccessMap &map) {
  // The flat result index is the one coordinate group over all dims; the
  // terms are summed from the outermost dim.
  Value index = map.emitLinearIndex(b, loc, {{0, map.getOutRank(), flat}},
                                    Value(), TermOrder::OuterFirst);
  return index ? index : indexConst(0);
}

SmallVector<Value> LaneEvaluator::splitCoords(ArrayRef<CoordGroup> coords,
                                              ArrayRef<int64_t> shape) {
  SmallVector<Value> perDim(shape.size());
  for (const CoordGroup &g : coords) {
    int64_t inner = 1;
    for (int64_t d = g.first + g.count - 1; d >= g.first; --d) {
      Value coord = g.linear;
      if (inner != 1)
        coord = arith::DivUIOp::create(b, loc, coord, indexConst(inner));
      if (d != g.first)
        coord = arith::RemUIOp::create(b, loc, coord, indexConst(shape[d]));
      perDim[d] = coord;
      inner *= shape[d];
    }
  }
  return perDim;
}

Value LaneEvaluator::mapFirstIndex(const Access &access, const AccessMap &map) {
  if (access.coords.empty())
    return mapIndex(access.indices[0], map);
  Value index = map.emitLinearIndex(b, loc, access.coords, Value(),
                                    TermOrder::OuterFirst);
  return index ? index : indexConst(0);
}

SmallVector<CoordGroup> LaneEvaluator::mapCoords(const Access &access,
                                                 const AccessMap &map,
                                                 Value operand) {
  if (access.coords.empty() || llvm::isa<BlockArgument>(operand) ||
      operand.getDefiningOp<arith::ConstantOp>())
    return {};
  if (map.preservesFlatIndex() && map.getOperandShape() == map.getOutShape())
    return access.coords;
  SmallVector<Value> perDim = splitCoords(access.coords, map.getOutShape());
  SmallVector<CoordGroup> mapped;
  for (auto [d, index] : llvm::enumerate(map.emitIndices(b, loc, perDim)))
    mapped.push_back({int64_t(d), 1, index});
  return mapped;
}

Access LaneEvaluator::mapEachIndex(const Access &access,
                                   const AccessMap &map) {
  Access mapped{access.kind, {}};
  if (!access.coords.empty() && access.kind != AccessKind::Gather) {
    mapped.indices.push_back(mapFirstIndex(access, map));
    return mapped;
  }
  for (Value idx : access.indices)
    mapped.indices.push_back(mapIndex(idx, map));
  return mapped;
}

Access LaneEvaluator::gatherLanes(const Access &access, const AccessMap &map) {
  Access gathered{AccessKind::Gather, {}};
  for (int64_t l = 0; l < width; ++l)
    gathered.indices.push_back(mapIndex(laneIndex(access, l), map));
  return gathered;
}

Access LaneEvaluator::mapAccess(const Access &access, Value operand,
                                ArrayRef<int64_t> resultShape) {
  return mapAccessThrough(
      access, AccessMap::broadcast(getShape(operand), resultShape), operand);
}

Access LaneEvaluator::mapAccessThrough(const Access &access,
                                       const AccessMap &map, Value operand) {
  // A copy in the same element order (a transpose of size-1 dims, a
  // broadcast that keeps the number of elements): the same access.
  if (map.preservesFlatIndex())
    return {access.kind, access.indices, mapCoords(access, map, operand)};
  if (map.isUniform())
    return {AccessKind::Uniform, {indexConst(map.getOffset())}};
  if (access.kind != AccessKind::Contiguous) {
    Access mapped = mapEachIndex(access, map);
    if (access.kind == AccessKind::Uniform)
      mapped.coords = mapCoords(access, map, operand);
    return mapped;
  }
  // Contiguous W lanes from a multiple of W stay one aligned vector if the
  // operand runs along a trailing extent divisible by W from an index that
  // is a multiple of W for every value of the outer coordinates; they are
  // uniform if the operand is constant along such an extent, gathered
  // otherwise.
  int64_t extent = map.getContiguousExtent();
  bool aligned = extent % width == 0 && map.getOffset() % width == 0;
  for (int64_t d = map.getOutRank() - 1, inner = 1; aligned && d >= 0;
       inner *= map.getOutShape()[d--])
    if (inner >= extent && !map.isBroadcastAlong(d))
      aligned = map.getCoefficient(d) % width == 0;
  if (aligned)
    return {AccessKind::Contiguous,
            {mapFirstIndex(access, map)},
            mapCoords(access, map, operand)};
  if (map.getUniformExtent() % width == 0)
    return {AccessKind::Uniform,
            {mapFirstIndex(access, map)},
            mapCoords(access, map, operand)};
  return gatherLanes(access, map);
}

FailureOr<SmallVector<Value>>
LaneEvaluator::evaluateInRegion(Value v, const Access &access) {
  auto saved = memo;
  FailureOr<SmallVector<Value>> lanes = evaluate(v, access);
  memo = std::move(saved);
  return lanes;
}

FailureOr<SmallVector<Value>>
LaneEvaluator::evaluateConcat(Operation *concat, const Access &access) {
  auto type = llvm::cast<RankedTensorType>(concat->getResult(0).getType());
  ArrayRef<int64_t> shape = type.getShape();
  int64_t axis = llvm::cast<ConcatOp>(concat).getAxis();
  // Flat result index f = (outer * axisSize + axisCoord) * inner + innerIdx.
  int64_t inner = 1, outer = 1;
  for (int64_t d = axis + 1, e = shape.size(); d < e; ++d)
    inner *= shape[d];
  for (int64_t d = 0; d < axis; ++d)
    outer *= shape[d];
  // Inputs of size 0 along the axis hold no element.
  SmallVector<ConcatSegment> segments;
  for (const ConcatSegment &s : getConcatSegments(concat))
    if (s.size > 0)
      segments.push_back(s);
  // A kernel over an empty result evaluates nothing.
  assert(!segments.empty() && "a concat result with elements has an input "
                              "with elements");
  std::vector<AccessMap> maps;
  for (const ConcatSegment &s : segments)
    maps.push_back(AccessMap::concatInput(
        shape, llvm::cast<ShapedType>(s.input.getType()).getShape(), axis,
        s.offset));
  Type computeType = getComputeType(type.getElementType());

  auto axisCoord = [&](Value flat) {
    Value coord = flat;
    if (inner != 1)
      coord = arith::DivUIOp::create(b, loc, coord, indexConst(inner));
    if (outer != 1)
      coord = arith::RemUIOp::create(b, loc, coord, indexConst(shape[axis]));
    return coord;
  };
  // A balanced tree of branches on the axis coordinate `coord` over segments
  // [lo, hi): each leaf evaluates its segment (`leaf`, `count` values), at
  // the builder's insertion point.
  using Leaf = function_ref<FailureOr<SmallVector<Value>>(unsigned)>;
  std::function<FailureOr<SmallVector<Value>>(Value, unsigned, unsigned,
                                              int64_t, Leaf)>
      select = [&](Value coord, unsigned lo, unsigned hi, int64_t count,
                   Leaf leaf) -> FailureOr<SmallVector<Value>> {
    if (hi - lo == 1)
      return leaf(lo);
    unsigned mid = (lo + hi) / 2;
    Value below = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult,
                                        coord,
                                        indexConst(segments[mid].offset));
    auto ifOp = scf::IfOp::create(
        b, loc, SmallVector<Type>(count, computeType), below,
        /*withElseRegion=*/true);
    OpBuilder::InsertionGuard guard(b);
    for (auto [block, range] :
         {std::make_pair(ifOp.thenBlock(), std::make_pair(lo, mid)),
          std::make_pair(ifOp.elseBlock(), std::make_pair(mid, hi))}) {
      b.setInsertionPointToStart(block);
      FailureOr<SmallVector<Value>> values =
          select(coord, range.first, range.second, count, leaf);
      if (failed(values))
        return failure();
      scf::YieldOp::create(b, loc, *values);
    }
    return SmallVector<Value>(ifOp.getResults());
  };

  // All W lanes in one segment: a uniform access, or W contiguous elements
  // from a multiple of W where every segment starts and ends (in flat
  // elements of one outer step) at a multiple of W. The input's access is
  // then of the same kind: its runs are the segment's, and every segment
  // boundary and outer step is a multiple of W.
  bool oneSegment = access.kind == AccessKind::Uniform;
  if (access.kind == AccessKind::Contiguous) {
    oneSegment = true;
    for (const ConcatSegment &s : segments)
      oneSegment &= (s.offset * inner) % width == 0 &&
                    (s.size * inner) % width == 0;
  }
  if (oneSegment) {
    bool uniform = access.kind == AccessKind::Uniform;
    // The axis coordinate: from the access's coordinates where known.
    Value coord;
    if (!access.coords.empty())
      coord = splitCoords(access.coords, shape)[axis];
    if (!coord)
      coord = axisCoord(access.indices[0]);
    FailureOr<SmallVector<Value>> lanes = select(
        coord, 0, segments.size(), uniform ? 1 : width,
        [&](unsigned i) -> FailureOr<SmallVector<Value>> {
          Access in{access.kind,
                    {mapFirstIndex(access, maps[i])},
                    mapCoords(access, maps[i], segments[i].input)};
          FailureOr<SmallVector<Value>> l =
              segments.size() == 1 ? evaluate(segments[i].input, in)
                                   : evaluateInRegion(segments[i].input, in);
          if (failed(l) || !uniform)
            return l;
          return SmallVector<Value>{l->front()};
        });
    if (failed(lanes) || !uniform)
      return lanes;
    return SmallVector<Value>(width, lanes->front());
  }
  // Lane by lane: each lane's element on its own branch, evaluated on one
  // lane.
  LaneEvaluator scalar(b, loc, /*width=*/1, flatArgs);
  scalar.known = known;
  SmallVector<Value> lanes;
  for (int64_t l = 0; l < width; ++l) {
    Value index = laneIndex(access, l);
    FailureOr<SmallVector<Value>> lane = select(
        axisCoord(index), 0, segments.size(), 1,
        [&](unsigned i) -> FailureOr<SmallVector<Value>> {
          Access in{AccessKind::Contiguous, {mapIndex(index, maps[i])}};
          return scalar.evaluateInRegion(segments[i].input, in);
        });
    if (failed(lane))
      return failure();
    lanes.push_back(lane->front());
  }
  return lanes;
}

FailureOr<SmallVector<Value>>
LaneEvaluator::evaluateInlineReduce(ReduceOp reduce, const Access &access) {
  if (!isInlineReduceOp(reduce))
    return reduce.emitOpError("reduces more than ")
           << kMaxInlineReduceElements
           << " elements per result element (or i1 elements), which a "
              "kernel does not evaluate inline";
  ArrayRef<int64_t> inShape = getShape(reduce.getInput());
  SmallVector<int64_t> reducedDims;
  for (int64_t d = 0, e = inShape.size(); d < e; ++d)
    if (llvm::is_contained(reduce.getAxes(), d))
      reducedDims.push_back(d);
  int64_t count = getReducedElementCount(reduce);
  SmallVector<int64_t> coords(inShape.size(), 0);
  SmallVector<Value> acc;
  for (int64_t k = 0; k < count; ++k) {
    // The k-th reduced coordinate tuple, row-major over the reduced dims.
    for (int64_t i = reducedDims.size() - 1, rest = k; i >= 0; --i) {
      coords[reducedDims[i]] = rest % inShape[reducedDims[i]];
      rest /= inShape[reducedDims[i]];
    }
    AccessMap map = AccessMap::reduceInput(inShape, reduce.getAxes(),
                                           reduce.getKeepDims(), coords);
    FailureOr<SmallVector<Value>> lanes = evaluate(
        reduce.getInput(), mapAccessThrough(access, map, reduce.getInput()));
    if (failed(lanes))
      return failure();
    if (k == 0) {
      acc = *lanes;
      continue;
    }
    for (int64_t l = 0; l < width; ++l)
      acc[l] = emitReduceCombine(b, loc, reduce.getKind(), acc[l], (*lanes)[l]);
  }
  Type resultType = getElementType(reduce.getResult());
  for (Value &lane : acc)
    lane = emitReduceFinish(b, loc, reduce.getKind(), lane, count, resultType);
  return acc;
}

SmallVector<Value> LaneEvaluator::load(Value flat, Type elementType,
                                       const Access &access) {
  Type storageType = getStorageElementType(elementType);
  unsigned bytes = std::max(1u, storageType.getIntOrFloatBitWidth() / 8);
  SmallVector<Value> lanes;
  switch (access.kind) {
  case AccessKind::Contiguous:
    if (width > 1) {
      auto vecType = VectorType::get({width}, storageType);
      Value vec = vector::LoadOp::create(
          b, loc, vecType, flat, access.indices[0], /*nontemporal=*/false,
          llvm::MaybeAlign(width * bytes));
      for (int64_t l = 0; l < width; ++l)
        lanes.push_back(vector::ExtractOp::create(b, loc, vec, l));
    } else {
      lanes.push_back(memref::LoadOp::create(b, loc, flat, access.indices));
    }
    break;
  case AccessKind::Uniform:
    lanes.assign(width,
                 memref::LoadOp::create(b, loc, flat, access.indices[0]));
    break;
  case AccessKind::Gather:
    for (Value idx : access.indices)
      lanes.push_back(memref::LoadOp::create(b, loc, flat, idx));
    break;
  }
  for (Value &lane : lanes)
    lane = toComputeType(b, loc, lane, elementType);
  return lanes;
}

void LaneEvaluator::store(ArrayRef<Value> lanes, Type elementType, Value flat,
                          Value index) {
  Type storageType = getStorageElementType(elementType);
  unsigned bytes = std::max(1u, storageType.getIntOrFloatBitWidth() / 8);
  SmallVector<Value> stored;
  for (Value lane : lanes)
    stored.push_back(toStorageType(b, loc, lane, elementType));
  if (stored.size() == 1) {
    memref::StoreOp::create(b, loc, stored[0], flat, index);
    return;
  }
  auto vecType = VectorType::get({int64_t(stored.size())}, storageType);
  Value vec = vector::FromElementsOp::create(b, loc, vecType, stored);
  vector::StoreOp::create(b, loc, vec, flat, index, /*nontemporal=*/false,
                          llvm::MaybeAlign(stored.size() * bytes));
}

FailureOr<SmallVector<Value>> LaneEvaluator::evaluate(Value v,
                                                      const Access &a) {
  if (auto it = known.find(v); it != known.end())
    return it->second;
  auto key = std::make_tuple(v, unsigned(a.kind), a.indices[0]);
  if (a.kind != AccessKind::Gather)
    if (auto it = memo.find(key); it != memo.end())
      return it->second;

  SmallVector<Value> lanes;
  Type elementType = getElementType(v);
  if (auto arg = llvm::dyn_cast<BlockArgument>(v)) {
    lanes = load(flatArgs.lookup(arg), elementType, a);
  } else if (auto cst = v.getDefiningOp<arith::ConstantOp>()) {
    // The group checks admit splat constants only.
    FailureOr<Value> scalar = emitSplatConstant(b, loc, cst);
    if (failed(scalar))
      return failure();
    lanes.assign(width, *scalar);
  } else if (Operation *op = v.getDefiningOp(); llvm::isa<ConcatOp>(op)) {
    FailureOr<SmallVector<Value>> l = evaluateConcat(op, a);
    if (failed(l))
      return failure();
    lanes = std::move(*l);
  } else if (isWinogradOp(op)) {
    FailureOr<SmallVector<Value>> l = evaluateWinograd(op, a);
    if (failed(l))
      return failure();
    lanes = std::move(*l);
  } else if (auto reduce = llvm::dyn_cast<ReduceOp>(op)) {
    FailureOr<SmallVector<Value>> l = evaluateInlineReduce(reduce, a);
    if (failed(l))
      return failure();
    lanes = std::move(*l);
  } else if (isAccessMapOp(op)) {
    FailureOr<AccessMap> map = AccessMap::forDataMovementOp(op);
    if (failed(map))
      return op->emitOpError("has no static access map");
    FailureOr<SmallVector<Value>> l = evaluate(
        op->getOperand(0), mapAccessThrough(a, *map, op->getOperand(0)));
    if (failed(l))
      return failure();
    lanes = std::move(*l);
  } else {
    SmallVector<SmallVector<Value>> operandLanes;
    for (Value operand : op->getOperands()) {
      FailureOr<SmallVector<Value>> l =
          evaluate(operand, mapAccess(a, operand, getShape(v)));
      if (failed(l))
        return failure();
      operandLanes.push_back(*l);
    }
    FailureOr<SmallVector<Value>> r =
        emitScalarOpLanes(b, loc, op, operandLanes, width);
    if (failed(r))
      return failure();
    lanes = std::move(*r);
  }
  if (a.kind != AccessKind::Gather)
    memo[key] = lanes;
  return lanes;
}
