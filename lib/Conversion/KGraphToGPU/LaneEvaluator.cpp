//===- LaneEvaluator.cpp - elementwise values on W lanes ------------------===//

#include "LaneEvaluator.h"
#include "ScalarOps.h"

#include "kgraph/Conversion/KGraphToGPU/KGraphToGPU.h"
#include "kgraph/Dialect/KGraph/IR/AccessMap.h"
#include "kgraph/Dialect/KGraph/IR/KGraphClassify.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

using namespace mlir;
using namespace kgraph;
using namespace kgraph::detail;

static Type getElementType(Value v) {
  return llvm::cast<ShapedType>(v.getType()).getElementType();
}

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

Value LaneEvaluator::indexConst(int64_t v) {
  return arith::ConstantIndexOp::create(b, loc, v);
}

Value LaneEvaluator::mapIndex(Value flat, const AccessMap &map) {
  // The flat result index is the one coordinate group over all dims; the
  // terms are summed from the outermost dim.
  Value index = map.emitLinearIndex(b, loc, {{0, map.getOutRank(), flat}},
                                    Value(), TermOrder::OuterFirst);
  return index ? index : indexConst(0);
}

Access LaneEvaluator::mapEachIndex(const Access &access,
                                   const AccessMap &map) {
  Access mapped{access.kind, {}};
  for (Value idx : access.indices)
    mapped.indices.push_back(mapIndex(idx, map));
  return mapped;
}

Access LaneEvaluator::gatherLanes(const Access &access, const AccessMap &map) {
  Access gathered{AccessKind::Gather, {}};
  for (int64_t l = 0; l < width; ++l) {
    Value idx = l == 0 ? access.indices[0]
                       : arith::AddIOp::create(b, loc, access.indices[0],
                                               indexConst(l));
    gathered.indices.push_back(mapIndex(idx, map));
  }
  return gathered;
}

Access LaneEvaluator::mapAccess(const Access &access, ArrayRef<int64_t> from,
                                ArrayRef<int64_t> to) {
  AccessMap map = AccessMap::broadcast(to, from);
  // Broadcasting that keeps the number of elements keeps the flat order.
  if (map.preservesFlatIndex())
    return access;
  if (map.isUniform())
    return {AccessKind::Uniform, {indexConst(0)}};
  if (access.kind != AccessKind::Contiguous)
    return mapEachIndex(access, map);
  // Contiguous W lanes from a multiple of W: still contiguous if the operand
  // runs along a trailing extent divisible by W, uniform if it is constant
  // along one, gathered otherwise.
  if (map.getContiguousExtent() % width == 0)
    return {AccessKind::Contiguous, {mapIndex(access.indices[0], map)}};
  if (map.getUniformExtent() % width == 0)
    return {AccessKind::Uniform, {mapIndex(access.indices[0], map)}};
  return gatherLanes(access, map);
}

Access LaneEvaluator::mapAccessThrough(const Access &access,
                                       const AccessMap &map) {
  // A copy in the same element order (a transpose of size-1 dims, a
  // broadcast that adds only size-1 dims): the same access.
  if (map.preservesFlatIndex())
    return access;
  if (map.isUniform() && map.getOffset() == 0)
    return {AccessKind::Uniform, {indexConst(0)}};
  if (map.isUniform())
    return {AccessKind::Uniform, {indexConst(map.getOffset())}};
  if (access.kind != AccessKind::Contiguous)
    return mapEachIndex(access, map);
  // Contiguous W lanes from a multiple of W stay one aligned vector if the
  // input runs along a trailing extent divisible by W from an index that is
  // a multiple of W for every value of the outer coordinates.
  int64_t extent = map.getContiguousExtent();
  bool aligned = extent % width == 0 && map.getOffset() % width == 0;
  for (int64_t d = map.getOutRank() - 1, inner = 1; aligned && d >= 0;
       inner *= map.getOutShape()[d--])
    if (inner >= extent && !map.isBroadcastAlong(d))
      aligned = map.getCoefficient(d) % width == 0;
  if (aligned)
    return {AccessKind::Contiguous, {mapIndex(access.indices[0], map)}};
  if (map.getUniformExtent() % width == 0)
    return {AccessKind::Uniform, {mapIndex(access.indices[0], map)}};
  return gatherLanes(access, map);
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
  } else if (Operation *op = v.getDefiningOp(); isAccessMapOp(op)) {
    FailureOr<AccessMap> map = AccessMap::forDataMovementOp(op);
    if (failed(map))
      return op->emitOpError("has no static access map");
    FailureOr<SmallVector<Value>> l =
        evaluate(op->getOperand(0), mapAccessThrough(a, *map));
    if (failed(l))
      return failure();
    lanes = std::move(*l);
  } else {
    SmallVector<SmallVector<Value>> operandLanes;
    for (Value operand : op->getOperands()) {
      FailureOr<SmallVector<Value>> l =
          evaluate(operand, mapAccess(a, getShape(v), getShape(operand)));
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
