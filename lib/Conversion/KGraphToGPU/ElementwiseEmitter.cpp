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

#include "kgraph/Conversion/KGraphToGPU/KGraphToGPU.h"
#include "kgraph/Dialect/KGraph/IR/KGraphClassify.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/IR/Builders.h"
#include "llvm/ADT/DenseMap.h"

#include <cmath>

using namespace mlir;
using namespace kgraph;

Type kgraph::getStorageElementType(Type elementType) {
  if (elementType.isInteger(1))
    return IntegerType::get(elementType.getContext(), 8);
  return elementType;
}

MemRefType kgraph::getStorageMemRefType(RankedTensorType type) {
  return MemRefType::get(type.getShape(),
                         getStorageElementType(type.getElementType()));
}

Type kgraph::getComputeType(Type elementType) {
  MLIRContext *ctx = elementType.getContext();
  if (llvm::isa<FloatType>(elementType))
    return Float32Type::get(ctx);
  if (elementType.isInteger(1))
    return elementType;
  return IntegerType::get(ctx, 32);
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
    return roundToElementType(b, loc, computed, elementType);
  }
  FailureOr<Value> emitScalar(Operation *op, ArrayRef<Value> operands) {
    return emitElementwiseScalar(b, loc, op, operands);
  }
  Value floatConst(double v) {
    return arith::ConstantOp::create(b, loc, b.getF32FloatAttr(v));
  }
  Value intConst(int64_t v, Type type) {
    return arith::ConstantOp::create(b, loc, b.getIntegerAttr(type, v));
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


namespace {
/// f32 and integer scalar constants for the scalar op emission below.
struct ScalarConsts {
  OpBuilder &b;
  Location loc;
  Value floatConst(double v) {
    return arith::ConstantOp::create(b, loc, b.getF32FloatAttr(v));
  }
  Value intConst(int64_t v, Type type) {
    return arith::ConstantOp::create(b, loc, b.getIntegerAttr(type, v));
  }
};
} // namespace

Value kgraph::toComputeType(OpBuilder &b, Location loc, Value stored,
                            Type elementType) {
  ScalarConsts k{b, loc};
  auto intConst = [&](int64_t v, Type t) { return k.intConst(v, t); };
  Type computeType = getComputeType(elementType);
  if (elementType.isInteger(1))
    return arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ne, stored,
                                 intConst(0, stored.getType()));
  if (stored.getType() == computeType)
    return stored;
  if (llvm::isa<FloatType>(computeType))
    return arith::ExtFOp::create(b, loc, computeType, stored);
  return arith::ExtSIOp::create(b, loc, computeType, stored);
}

Value kgraph::toStorageType(OpBuilder &b, Location loc, Value computed,
                            Type elementType) {
  Type storageType = getStorageElementType(elementType);
  if (computed.getType() == storageType)
    return computed;
  if (elementType.isInteger(1))
    return arith::ExtUIOp::create(b, loc, storageType, computed);
  if (llvm::isa<FloatType>(storageType))
    return arith::TruncFOp::create(b, loc, storageType, computed);
  return arith::TruncIOp::create(b, loc, storageType, computed);
}

Value kgraph::roundToElementType(OpBuilder &b, Location loc, Value computed,
                                 Type elementType) {
  if (getStorageElementType(elementType) == computed.getType())
    return computed;
  return toComputeType(b, loc, toStorageType(b, loc, computed, elementType),
                       elementType);
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
      auto dense = llvm::cast<DenseElementsAttr>(cst.getValue());
      Value scalar;
      if (auto f = llvm::dyn_cast<FloatType>(elementType)) {
        APFloat value = dense.getSplatValue<APFloat>();
        bool lost;
        value.convert(APFloat::IEEEsingle(), APFloat::rmNearestTiesToEven,
                      &lost);
        scalar = floatConst(value.convertToFloat());
      } else {
        APInt value = dense.getSplatValue<APInt>();
        Type computeType = getComputeType(elementType);
        scalar = intConst(elementType.isInteger(1) ? value.getZExtValue()
                                                   : value.getSExtValue(),
                          computeType);
      }
      lanes.assign(width, scalar);
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
        FailureOr<Value> r = emitScalar(op, scalars);
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

FailureOr<Value> kgraph::emitElementwiseScalar(OpBuilder &b, Location loc,
                                              Operation *op,
                                              ArrayRef<Value> x) {
  ScalarConsts k{b, loc};
  auto floatConst = [&](double v) { return k.floatConst(v); };
  auto intConst = [&](int64_t v, Type t) { return k.intConst(v, t); };
  StringRef name = op->getName().getStringRef();
  Type inType = getElementType(op->getOperand(op->getNumOperands() - 1));
  Type outType = getElementType(op->getResult(0));
  bool isFloat = llvm::isa<FloatType>(inType);
  Type f32 = b.getF32Type();

  if (name == "kgraph.add")
    return isFloat ? Value(arith::AddFOp::create(b, loc, x[0], x[1]))
                   : Value(arith::AddIOp::create(b, loc, x[0], x[1]));
  if (name == "kgraph.sub")
    return isFloat ? Value(arith::SubFOp::create(b, loc, x[0], x[1]))
                   : Value(arith::SubIOp::create(b, loc, x[0], x[1]));
  if (name == "kgraph.mul")
    return isFloat ? Value(arith::MulFOp::create(b, loc, x[0], x[1]))
                   : Value(arith::MulIOp::create(b, loc, x[0], x[1]));
  if (name == "kgraph.div")
    return isFloat ? Value(arith::DivFOp::create(b, loc, x[0], x[1]))
                   : Value(arith::DivSIOp::create(b, loc, x[0], x[1]));
  if (name == "kgraph.max")
    return isFloat ? Value(arith::MaximumFOp::create(b, loc, x[0], x[1]))
                   : Value(arith::MaxSIOp::create(b, loc, x[0], x[1]));
  if (name == "kgraph.min")
    return isFloat ? Value(arith::MinimumFOp::create(b, loc, x[0], x[1]))
                   : Value(arith::MinSIOp::create(b, loc, x[0], x[1]));
  if (name == "kgraph.pow")
    return Value(math::PowFOp::create(b, loc, x[0], x[1]));
  if (name == "kgraph.neg")
    return isFloat ? Value(arith::NegFOp::create(b, loc, x[0]))
                   : Value(arith::SubIOp::create(b, loc, intConst(0, x[0].getType()), x[0]));
  if (name == "kgraph.abs")
    return isFloat ? Value(math::AbsFOp::create(b, loc, x[0]))
                   : Value(math::AbsIOp::create(b, loc, x[0]));
  if (name == "kgraph.exp")
    return Value(math::ExpOp::create(b, loc, x[0]));
  if (name == "kgraph.log")
    return Value(math::LogOp::create(b, loc, x[0]));
  if (name == "kgraph.sqrt")
    return Value(math::SqrtOp::create(b, loc, x[0]));
  if (name == "kgraph.rsqrt")
    return Value(math::RsqrtOp::create(b, loc, x[0]));
  if (name == "kgraph.tanh")
    return Value(math::TanhOp::create(b, loc, x[0]));
  if (name == "kgraph.sigmoid") {
    // 1 / (1 + exp(-x))
    Value e = math::ExpOp::create(b, loc, arith::NegFOp::create(b, loc, x[0]));
    Value d = arith::AddFOp::create(b, loc, floatConst(1.0), e);
    return Value(arith::DivFOp::create(b, loc, floatConst(1.0), d));
  }
  if (name == "kgraph.relu") {
    if (!isFloat)
      return Value(arith::MaxSIOp::create(b, loc, x[0], intConst(0, x[0].getType())));
    // x < 0 ? 0 : x keeps NaN, as torch.relu does.
    Value neg = arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OLT, x[0],
                                      floatConst(0.0));
    return Value(arith::SelectOp::create(b, loc, neg, floatConst(0.0), x[0]));
  }
  if (name == "kgraph.gelu") {
    // Both forms are written without 1 + tanh / 1 + erf, which cancel to
    // nothing for negative x in f32:
    //   tanh form: 0.5 x (1 + tanh(z)) = x / (1 + exp(-2z)),
    //              z = sqrt(2/pi) (x + 0.044715 x^3)
    //   exact:     0.5 x (1 + erf(x / sqrt(2))) = 0.5 x erfc(-x / sqrt(2))
    if (op->hasAttr("approximate")) {
      Value x3 = arith::MulFOp::create(
          b, loc, x[0], arith::MulFOp::create(b, loc, x[0], x[0]));
      Value poly = arith::AddFOp::create(
          b, loc, x[0], arith::MulFOp::create(b, loc, floatConst(0.044715), x3));
      Value minus2z = arith::MulFOp::create(
          b, loc, floatConst(-2.0 * 0.7978845608028654), poly);
      Value denom = arith::AddFOp::create(b, loc, floatConst(1.0),
                                          math::ExpOp::create(b, loc, minus2z));
      return Value(arith::DivFOp::create(b, loc, x[0], denom));
    }
    Value erfc = math::ErfcOp::create(
        b, loc,
        arith::MulFOp::create(b, loc, x[0], floatConst(-0.7071067811865476)));
    return Value(arith::MulFOp::create(
        b, loc, arith::MulFOp::create(b, loc, floatConst(0.5), x[0]), erfc));
  }
  if (name == "kgraph.clamp") {
    auto minAttr = op->getAttrOfType<FloatAttr>("min");
    auto maxAttr = op->getAttrOfType<FloatAttr>("max");
    if (!minAttr || !maxAttr)
      return op->emitOpError("lowering expects f64 'min' and 'max' attributes"),
             failure();
    double lo = minAttr.getValueAsDouble(), hi = maxAttr.getValueAsDouble();
    if (isFloat) {
      // The bounds, rounded inward to the element type, so the result (which
      // is rounded to that type afterwards) stays inside [min, max].
      auto inward = [&](double bound, APFloat::roundingMode mode) {
        APFloat v(bound);
        bool lost;
        v.convert(llvm::cast<FloatType>(outType).getFloatSemantics(), mode,
                  &lost);
        v.convert(APFloat::IEEEsingle(), APFloat::rmNearestTiesToEven, &lost);
        return v.convertToFloat();
      };
      Value r = arith::MaximumFOp::create(
          b, loc, x[0], floatConst(inward(lo, APFloat::rmTowardPositive)));
      return Value(arith::MinimumFOp::create(
          b, loc, r, floatConst(inward(hi, APFloat::rmTowardNegative))));
    }
    // Integers: clamp into [ceil(min), floor(max)] within the type's range.
    unsigned bits = inType.getIntOrFloatBitWidth();
    double tmin = -std::ldexp(1.0, bits - 1), tmax = std::ldexp(1.0, bits - 1) - 1;
    int64_t ilo = int64_t(std::clamp(std::ceil(lo), tmin, tmax));
    int64_t ihi = int64_t(std::clamp(std::floor(hi), tmin, tmax));
    Value r = arith::MaxSIOp::create(b, loc, x[0], intConst(ilo, x[0].getType()));
    return Value(arith::MinSIOp::create(b, loc, r, intConst(ihi, x[0].getType())));
  }
  if (name == "kgraph.cast") {
    bool outFloat = llvm::isa<FloatType>(outType);
    if (isFloat && outFloat)
      return x[0]; // rounded to the result type by the caller
    if (!isFloat && outFloat)
      return Value(arith::SIToFPOp::create(b, loc, f32, x[0]));
    if (!isFloat && !outFloat)
      return x[0]; // wraps to the result type when rounded by the caller
    // Float to int: truncate toward zero, saturate, NaN -> 0.
    unsigned bits = outType.getIntOrFloatBitWidth();
    double tmin = -std::ldexp(1.0, bits - 1);
    double tmax = std::ldexp(1.0, bits - 1); // first value out of range
    Type i32 = b.getI32Type();
    Value clamped = arith::MaximumFOp::create(b, loc, x[0], floatConst(tmin));
    // Largest f32 below tmax: exact for i8 (127); 2^31 - 128 for i32.
    double below = bits >= 32 ? std::nextafter(float(tmax), 0.0f) : tmax - 1;
    clamped = arith::MinimumFOp::create(b, loc, clamped, floatConst(below));
    Value converted = arith::FPToSIOp::create(b, loc, i32, clamped);
    Value tooBig = arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OGE,
                                         x[0], floatConst(tmax));
    Value sat = arith::SelectOp::create(
        b, loc, tooBig, intConst(int64_t(tmax - 1), i32), converted);
    Value isNan = arith::CmpFOp::create(b, loc, arith::CmpFPredicate::UNO,
                                        x[0], x[0]);
    return Value(arith::SelectOp::create(b, loc, isNan, intConst(0, i32), sat));
  }
  if (name == "kgraph.compare") {
    Attribute dir = op->getAttr("direction");
    auto direction = llvm::dyn_cast_if_present<CompareDirectionAttr>(dir);
    if (!direction)
      return op->emitOpError("lowering expects a 'direction' attribute"),
             failure();
    if (isFloat) {
      static const arith::CmpFPredicate preds[] = {
          arith::CmpFPredicate::OEQ, arith::CmpFPredicate::UNE,
          arith::CmpFPredicate::OLT, arith::CmpFPredicate::OLE,
          arith::CmpFPredicate::OGT, arith::CmpFPredicate::OGE};
      return Value(arith::CmpFOp::create(
          b, loc, preds[unsigned(direction.getValue())], x[0], x[1]));
    }
    static const arith::CmpIPredicate preds[] = {
        arith::CmpIPredicate::eq,  arith::CmpIPredicate::ne,
        arith::CmpIPredicate::slt, arith::CmpIPredicate::sle,
        arith::CmpIPredicate::sgt, arith::CmpIPredicate::sge};
    return Value(arith::CmpIOp::create(
        b, loc, preds[unsigned(direction.getValue())], x[0], x[1]));
  }
  if (name == "kgraph.select")
    return Value(arith::SelectOp::create(b, loc, x[0], x[1], x[2]));
  return op->emitOpError("has no elementwise lowering"), failure();
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
