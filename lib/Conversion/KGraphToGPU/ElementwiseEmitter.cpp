//===- ElementwiseEmitter.cpp - elementwise groups as grid-stride kernels -===//
//
// A kernel computes `vector_width` (W) consecutive elements of the flattened
// output per step. Each value of the group is evaluated under an *access*:
// which elements of that value the W lanes need. Broadcasting maps the access
// of a result to the access of each operand:
//   - contiguous: lanes are value[i .. i+W), one aligned vector load;
//   - uniform:    every lane reads value[i], one scalar load;
//   - gather:     lane l reads value[i_l], W scalar loads.
// Arithmetic is emitted per lane on scalars (f32 for floats, i32 for ints,
// i1 for booleans) and rounded to each op's declared element type, so a group
// computes exactly what its ops compute one at a time.
//
//===----------------------------------------------------------------------===//

#include "ScalarOps.h"
#include "kgraph/Conversion/KGraphToGPU/KGraphToGPU.h"
#include "kgraph/Dialect/KGraph/IR/KGraphClassify.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/IR/Builders.h"
#include "llvm/ADT/DenseMap.h"

using namespace mlir;
using namespace kgraph;
using namespace kgraph::detail;

Type kgraph::getStorageElementType(Type elementType) {
  if (elementType.isInteger(1))
    return IntegerType::get(elementType.getContext(), 8);
  return elementType;
}

MemRefType kgraph::getStorageMemRefType(RankedTensorType type) {
  return MemRefType::get(type.getShape(),
                         getStorageElementType(type.getElementType()));
}

namespace {

enum class AccessKind { Contiguous, Uniform, Gather };

/// Which flat elements of a value the W lanes read.
struct Access {
  AccessKind kind;
  SmallVector<Value> indices; ///< one index, or W for gathers
};

Type getElementType(Value v) {
  return llvm::cast<ShapedType>(v.getType()).getElementType();
}

ArrayRef<int64_t> getShape(Value v) {
  return llvm::cast<ShapedType>(v.getType()).getShape();
}

class ElementwiseEmitter {
public:
  ElementwiseEmitter(OpBuilder &b, Location loc, int64_t width,
                     DenseMap<Value, Value> &flatArgs)
      : b(b), loc(loc), width(width), flatArgs(flatArgs) {}

  /// The W lanes of `v` under `access`, in compute type.
  FailureOr<SmallVector<Value>> evaluate(Value v, const Access &access);

  /// Stores `lanes` (compute type of `elementType`) to `flat` at `index`.
  void store(ArrayRef<Value> lanes, Type elementType, Value flat, Value index);

  Value indexConst(int64_t v) {
    return arith::ConstantIndexOp::create(b, loc, v);
  }

private:
  Access mapAccess(const Access &access, ArrayRef<int64_t> from,
                   ArrayRef<int64_t> to);
  Value mapIndex(Value flat, ArrayRef<int64_t> from, ArrayRef<int64_t> to);
  SmallVector<Value> load(Value flat, Type elementType, const Access &access);
  Value toCompute(Value stored, Type elementType) {
    return toComputeType(b, loc, stored, elementType);
  }
  Value toStorage(Value computed, Type elementType) {
    return toStorageType(b, loc, computed, elementType);
  }
  Value roundTo(Value computed, Type elementType) {
    return roundToType(b, loc, computed, elementType);
  }

  OpBuilder &b;
  Location loc;
  int64_t width;
  DenseMap<Value, Value> &flatArgs;
  /// Memo of evaluated (value, access kind, first index) triples.
  DenseMap<std::tuple<Value, unsigned, Value>, SmallVector<Value>> memo;
};

} // namespace

/// numpy broadcasting: right-align `to` against `from` with leading ones.
static SmallVector<int64_t> alignShape(ArrayRef<int64_t> to, size_t rank) {
  SmallVector<int64_t> aligned(rank - to.size(), 1);
  aligned.append(to.begin(), to.end());
  return aligned;
}

Value ElementwiseEmitter::mapIndex(Value flat, ArrayRef<int64_t> from,
                                   ArrayRef<int64_t> to) {
  SmallVector<int64_t> alignedTo = alignShape(to, from.size());
  int64_t rank = from.size();
  SmallVector<int64_t> strideFrom(rank, 1), strideTo(rank, 1);
  for (int64_t d = rank - 2; d >= 0; --d) {
    strideFrom[d] = strideFrom[d + 1] * from[d + 1];
    strideTo[d] = strideTo[d + 1] * alignedTo[d + 1];
  }
  Value result;
  for (int64_t d = 0; d < rank; ++d) {
    if (alignedTo[d] == 1)
      continue;
    // coord_d = (flat / strideFrom[d]) % from[d]; the modulo is not needed
    // for the outermost dimension.
    Value coord = flat;
    if (strideFrom[d] != 1)
      coord = arith::DivUIOp::create(b, loc, coord, indexConst(strideFrom[d]));
    if (d != 0)
      coord = arith::RemUIOp::create(b, loc, coord, indexConst(from[d]));
    if (strideTo[d] != 1)
      coord = arith::MulIOp::create(b, loc, coord, indexConst(strideTo[d]));
    result = result ? arith::AddIOp::create(b, loc, result, coord) : coord;
  }
  return result ? result : indexConst(0);
}

Access ElementwiseEmitter::mapAccess(const Access &access,
                                     ArrayRef<int64_t> from,
                                     ArrayRef<int64_t> to) {
  int64_t numFrom = ShapedType::getNumElements(from);
  int64_t numTo = ShapedType::getNumElements(to);
  // Same number of elements under broadcasting means the same flat order.
  if (numFrom == numTo)
    return access;
  if (numTo == 1)
    return {AccessKind::Uniform, {indexConst(0)}};
  if (access.kind == AccessKind::Uniform)
    return {AccessKind::Uniform, {mapIndex(access.indices[0], from, to)}};
  if (access.kind == AccessKind::Gather) {
    Access gathered{AccessKind::Gather, {}};
    for (Value idx : access.indices)
      gathered.indices.push_back(mapIndex(idx, from, to));
    return gathered;
  }
  // Contiguous: W consecutive outputs starting at a multiple of W.
  SmallVector<int64_t> alignedTo = alignShape(to, from.size());
  int64_t matching = 1; // trailing extent where `to` is not broadcast
  for (int64_t d = from.size() - 1; d >= 0 && alignedTo[d] == from[d]; --d)
    matching *= from[d];
  if (matching % width == 0)
    return {AccessKind::Contiguous, {mapIndex(access.indices[0], from, to)}};
  int64_t broadcast = 1; // trailing extent along which `to` is broadcast
  for (int64_t d = from.size() - 1; d >= 0 && alignedTo[d] == 1; --d)
    broadcast *= from[d];
  if (broadcast % width == 0)
    return {AccessKind::Uniform, {mapIndex(access.indices[0], from, to)}};
  Access gathered{AccessKind::Gather, {}};
  for (int64_t l = 0; l < width; ++l) {
    Value idx = l == 0 ? access.indices[0]
                       : arith::AddIOp::create(b, loc, access.indices[0],
                                               indexConst(l));
    gathered.indices.push_back(mapIndex(idx, from, to));
  }
  return gathered;
}

SmallVector<Value> ElementwiseEmitter::load(Value flat, Type elementType,
                                            const Access &access) {
  Type storageType = getStorageElementType(elementType);
  unsigned bytes = std::max(1u, storageType.getIntOrFloatBitWidth() / 8);
  SmallVector<Value> lanes;
  switch (access.kind) {
  case AccessKind::Contiguous:
    if (width > 1) {
      auto vecType = VectorType::get({width}, storageType);
      Value vec = vector::LoadOp::create(b, loc, vecType, flat,
                                         access.indices[0], /*nontemporal=*/false,
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
    lane = toCompute(lane, elementType);
  return lanes;
}

void ElementwiseEmitter::store(ArrayRef<Value> lanes, Type elementType,
                               Value flat, Value index) {
  Type storageType = getStorageElementType(elementType);
  unsigned bytes = std::max(1u, storageType.getIntOrFloatBitWidth() / 8);
  SmallVector<Value> stored;
  for (Value lane : lanes)
    stored.push_back(toStorage(lane, elementType));
  if (stored.size() == 1) {
    memref::StoreOp::create(b, loc, stored[0], flat, index);
    return;
  }
  auto vecType = VectorType::get({int64_t(stored.size())}, storageType);
  Value vec = vector::FromElementsOp::create(b, loc, vecType, stored);
  vector::StoreOp::create(b, loc, vec, flat, index, /*nontemporal=*/false,
                          llvm::MaybeAlign(stored.size() * bytes));
}

FailureOr<SmallVector<Value>> ElementwiseEmitter::evaluate(Value v,
                                                           const Access &a) {
  auto key = std::make_tuple(v, unsigned(a.kind), a.indices[0]);
  if (a.kind != AccessKind::Gather)
    if (auto it = memo.find(key); it != memo.end())
      return it->second;

  SmallVector<Value> lanes;
  Type elementType = getElementType(v);
  if (auto arg = llvm::dyn_cast<BlockArgument>(v)) {
    lanes = load(flatArgs.lookup(arg), elementType, a);
  } else {
    Operation *op = v.getDefiningOp();
    if (auto cst = llvm::dyn_cast<arith::ConstantOp>(op)) {
      // checkElementwiseGroup admits splat constants only.
      FailureOr<Value> scalar = emitSplatConstant(b, loc, cst);
      if (failed(scalar))
        return cst.emitOpError("only splat tensor constants can be used "
                               "inside a kernel group"),
               failure();
      lanes.assign(width, *scalar);
    } else {
      SmallVector<SmallVector<Value>> operandLanes;
      for (Value operand : op->getOperands()) {
        Access operandAccess = mapAccess(a, getShape(v), getShape(operand));
        FailureOr<SmallVector<Value>> l = evaluate(operand, operandAccess);
        if (failed(l))
          return failure();
        operandLanes.push_back(*l);
      }
      for (int64_t l = 0; l < width; ++l) {
        SmallVector<Value> scalars;
        for (auto &lanesOfOperand : operandLanes)
          scalars.push_back(lanesOfOperand[l]);
        FailureOr<Value> r = emitScalarOp(b, loc, op, scalars);
        if (failed(r))
          return failure();
        lanes.push_back(roundTo(*r, elementType));
      }
    }
  }
  if (a.kind != AccessKind::Gather)
    memo[key] = lanes;
  return lanes;
}

LogicalResult kgraph::checkElementwiseGroup(FusedOp group) {
  if (group.getNumResults() == 0)
    return group.emitOpError("has no results to compute");
  Type first = group.getResultTypes().front();
  for (Type t : group.getResultTypes())
    if (llvm::cast<ShapedType>(t).getShape() !=
        llvm::cast<ShapedType>(first).getShape())
      return group.emitOpError("elementwise group results must share one "
                               "shape, got ")
             << first << " and " << t;
  for (Operation &op : group.getBody().front().without_terminator()) {
    if (auto cst = llvm::dyn_cast<arith::ConstantOp>(op)) {
      auto dense = llvm::dyn_cast<DenseElementsAttr>(cst.getValue());
      if (!dense || !dense.isSplat())
        return op.emitOpError("only splat tensor constants can be used "
                              "inside a kernel group");
      continue;
    }
    if (!isElementwiseOp(&op))
      return op.emitOpError("is not elementwise and cannot be lowered in an "
                            "elementwise kernel");
  }
  return success();
}

LogicalResult kgraph::emitElementwiseKernel(FusedOp group,
                                            ElementwiseConfigAttr config,
                                            gpu::GPUFuncOp kernel) {
  Location loc = group.getLoc();
  OpBuilder b(kernel.getContext());
  Block &entry = kernel.getBody().front();
  b.setInsertionPointToStart(&entry);
  Block &body = group.getBody().front();
  unsigned numInputs = group.getInputs().size();

  // Flat 1-D views of every buffer: dense row-major, so reinterpretation is
  // free.
  auto flatten = [&](Value memref) -> Value {
    auto type = llvm::cast<MemRefType>(memref.getType());
    int64_t n = type.getNumElements();
    auto flatType = MemRefType::get({n}, type.getElementType());
    return memref::ReinterpretCastOp::create(b, loc, flatType, memref, 0,
                                             ArrayRef<int64_t>{n},
                                             ArrayRef<int64_t>{1});
  };
  DenseMap<Value, Value> flatArgs;
  for (unsigned i = 0; i < numInputs; ++i)
    flatArgs[body.getArgument(i)] = flatten(entry.getArgument(i));
  SmallVector<Value> flatOutputs;
  for (unsigned i = 0; i < group.getNumResults(); ++i)
    flatOutputs.push_back(flatten(entry.getArgument(numInputs + i)));

  auto outType = llvm::cast<ShapedType>(group.getResultTypes().front());
  int64_t numElements = outType.getNumElements();
  int64_t width = config.getVectorWidth();
  int64_t blockSize = config.getBlockSize();
  int64_t gridSize = config.getGridSize();
  auto yield = group.getYield();

  Value tid = gpu::ThreadIdOp::create(b, loc, gpu::Dimension::x);
  Value bid = gpu::BlockIdOp::create(b, loc, gpu::Dimension::x);
  Value global = arith::AddIOp::create(
      b, loc,
      arith::MulIOp::create(b, loc, bid,
                            arith::ConstantIndexOp::create(b, loc, blockSize)),
      tid);
  Value stride = arith::ConstantIndexOp::create(b, loc, blockSize * gridSize);

  // Emits steps computing `w` elements from each flat output index in
  // `bases`: every load and computation first, then the stores, so the loads
  // of all steps are in flight together (stores may alias inputs, so loads
  // cannot be moved above them later).
  auto emitSteps = [&](OpBuilder &nb, ArrayRef<Value> bases,
                       int64_t w) -> LogicalResult {
    ElementwiseEmitter emitter(nb, loc, w, flatArgs);
    SmallVector<std::pair<unsigned, SmallVector<Value>>> pending;
    for (Value base : bases) {
      Access access{AccessKind::Contiguous, {base}};
      for (auto [i, value] : llvm::enumerate(yield.getValues())) {
        FailureOr<SmallVector<Value>> lanes = emitter.evaluate(value, access);
        if (failed(lanes))
          return failure();
        pending.emplace_back(i, *lanes);
      }
    }
    unsigned numResults = yield.getValues().size();
    for (auto [k, entry] : llvm::enumerate(pending))
      emitter.store(entry.second, getElementType(group.getResult(entry.first)),
                    flatOutputs[entry.first], bases[k / numResults]);
    return success();
  };
  auto c = [&](OpBuilder &nb, int64_t v) -> Value {
    return arith::ConstantIndexOp::create(nb, loc, v);
  };

  int64_t numVectors = numElements / width;
  int64_t unroll = config.getUnroll();
  int64_t strideValue = blockSize * gridSize;
  LogicalResult status = success();
  Value rest = global; // where the one-vector-per-trip loop starts
  if (unroll > 1 && numVectors > (unroll - 1) * strideValue) {
    // Trips of `unroll` vectors while the last of them is in range:
    // iv + (unroll - 1) * stride < numVectors.
    int64_t mainBound = numVectors - (unroll - 1) * strideValue;
    Value step = c(b, strideValue * unroll);
    auto loop = scf::ForOp::create(b, loc, global, c(b, mainBound), step);
    OpBuilder nb = OpBuilder::atBlockBegin(loop.getBody());
    SmallVector<Value> bases;
    for (int64_t u = 0; u < unroll; ++u) {
      Value iv = loop.getInductionVar();
      if (u > 0)
        iv = arith::AddIOp::create(nb, loc, iv, c(nb, u * strideValue));
      bases.push_back(arith::MulIOp::create(nb, loc, iv, c(nb, width)));
    }
    status = emitSteps(nb, bases, width);
    // rest = global + ceil(max(mainBound - global, 0) / step) * step
    Value inMain = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult,
                                         global, c(b, mainBound));
    Value span = arith::SelectOp::create(
        b, loc, inMain, arith::SubIOp::create(b, loc, c(b, mainBound), global),
        c(b, 0));
    Value trips = arith::CeilDivUIOp::create(b, loc, span, step);
    rest = arith::AddIOp::create(b, loc, global,
                                 arith::MulIOp::create(b, loc, trips, step));
  }
  if (succeeded(status) && numVectors > 0) {
    auto loop = scf::ForOp::create(b, loc, rest, c(b, numVectors), stride);
    OpBuilder nb = OpBuilder::atBlockBegin(loop.getBody());
    Value base =
        arith::MulIOp::create(nb, loc, loop.getInductionVar(), c(nb, width));
    status = emitSteps(nb, {base}, width);
  }
  if (succeeded(status) && numElements % width != 0) {
    Value lb = arith::AddIOp::create(
        b, loc, global,
        arith::ConstantIndexOp::create(b, loc, numVectors * width));
    Value ub = arith::ConstantIndexOp::create(b, loc, numElements);
    auto loop = scf::ForOp::create(b, loc, lb, ub, stride);
    OpBuilder nb = OpBuilder::atBlockBegin(loop.getBody());
    status = emitSteps(nb, {loop.getInductionVar()}, 1);
  }
  gpu::ReturnOp::create(b, loc);
  return status;
}
