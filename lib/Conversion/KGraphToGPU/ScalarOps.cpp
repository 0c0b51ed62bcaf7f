//===- ScalarOps.cpp - one element of an elementwise op --------------------===//

#include "ScalarOps.h"

#include "kgraph/Conversion/KGraphToGPU/KGraphToGPU.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Math/IR/Math.h"

#include <cmath>

using namespace mlir;
using namespace kgraph;
using namespace kgraph::detail;

Type kgraph::detail::getComputeType(Type elementType) {
  MLIRContext *ctx = elementType.getContext();
  if (llvm::isa<FloatType>(elementType))
    return Float32Type::get(ctx);
  if (elementType.isInteger(1))
    return elementType;
  return IntegerType::get(ctx, 32);
}

Value kgraph::detail::toComputeType(OpBuilder &b, Location loc, Value stored,
                                    Type elementType) {
  Type computeType = getComputeType(elementType);
  if (elementType.isInteger(1))
    return arith::CmpIOp::create(
        b, loc, arith::CmpIPredicate::ne, stored,
        arith::ConstantOp::create(b, loc,
                                  b.getIntegerAttr(stored.getType(), 0)));
  if (stored.getType() == computeType)
    return stored;
  if (llvm::isa<FloatType>(computeType))
    return arith::ExtFOp::create(b, loc, computeType, stored);
  return arith::ExtSIOp::create(b, loc, computeType, stored);
}

Value kgraph::detail::toStorageType(OpBuilder &b, Location loc, Value computed,
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

Value kgraph::detail::roundToType(OpBuilder &b, Location loc, Value computed,
                                  Type elementType) {
  if (getStorageElementType(elementType) == computed.getType())
    return computed;
  return toComputeType(b, loc, toStorageType(b, loc, computed, elementType),
                       elementType);
}

FailureOr<Value> kgraph::detail::emitSplatConstant(OpBuilder &b, Location loc,
                                                   arith::ConstantOp cst) {
  auto notSplat = [&] {
    return cst.emitOpError("only splat tensor constants can be used inside a "
                           "kernel group");
  };
  auto dense = llvm::dyn_cast<DenseElementsAttr>(cst.getValue());
  if (!dense || !dense.isSplat())
    return notSplat();
  Type elementType = dense.getElementType();
  if (llvm::isa<FloatType>(elementType)) {
    APFloat value = dense.getSplatValue<APFloat>();
    bool lost;
    value.convert(APFloat::IEEEsingle(), APFloat::rmNearestTiesToEven, &lost);
    return Value(arith::ConstantOp::create(
        b, loc, b.getF32FloatAttr(value.convertToFloat())));
  }
  if (!elementType.isIntOrIndex())
    return notSplat();
  APInt value = dense.getSplatValue<APInt>();
  Type computeType = getComputeType(elementType);
  int64_t v = elementType.isInteger(1) ? value.getZExtValue()
                                       : value.getSExtValue();
  return Value(arith::ConstantOp::create(b, loc,
                                         b.getIntegerAttr(computeType, v)));
}

FailureOr<Value> kgraph::detail::emitScalarOp(OpBuilder &b, Location loc,
                                              Operation *op,
                                              ArrayRef<Value> x) {
  auto floatConst = [&](double v) -> Value {
    return arith::ConstantOp::create(b, loc, b.getF32FloatAttr(v));
  };
  auto intConst = [&](int64_t v, Type type) -> Value {
    return arith::ConstantOp::create(b, loc, b.getIntegerAttr(type, v));
  };
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
      Value one = floatConst(1.0);
      Value denom = arith::AddFOp::create(b, loc, one,
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
    Type i32 = b.getI32Type();
    // To i32, that is what PTX's cvt.rzi.s32.f32 does, which
    // llvm.nvvm.f2i.rz is: one instruction instead of the clamps and
    // selects below (LLVM's fptosi of an out-of-range value is poison, so
    // those are needed to keep the rule through LLVM's folds).
    if (bits == 32 && x[0].getType().isF32())
      return LLVM::CallIntrinsicOp::create(b, loc, i32,
                                           b.getStringAttr("llvm.nvvm.f2i.rz"),
                                           ValueRange{x[0]})
          .getResult(0);
    double tmin = -std::ldexp(1.0, bits - 1);
    double tmax = std::ldexp(1.0, bits - 1); // first value out of range
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

FailureOr<SmallVector<Value>>
kgraph::detail::emitScalarOpLanes(OpBuilder &b, Location loc, Operation *op,
                                  ArrayRef<SmallVector<Value>> operandLanes,
                                  int64_t numLanes) {
  Type resultType = getElementType(op->getResult(0));
  SmallVector<Value> lanes;
  for (int64_t l = 0; l < numLanes; ++l) {
    SmallVector<Value> scalars;
    for (const SmallVector<Value> &lanesOfOperand : operandLanes)
      scalars.push_back(lanesOfOperand[l]);
    FailureOr<Value> r = emitScalarOp(b, loc, op, scalars);
    if (failed(r))
      return failure();
    lanes.push_back(roundToType(b, loc, *r, resultType));
  }
  return lanes;
}
