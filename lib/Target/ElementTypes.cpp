//===- ElementTypes.cpp - the table of element types kgraph knows ---------===//
//
// CUtensorMapDataType values are cuda.h's (CU_TENSOR_MAP_DATA_TYPE_FLOAT16
// = 6, FLOAT32 = 7, BFLOAT16 = 9); PTX type names and tensor-core rates are
// the PTX ISA's and the CUDA C++ Programming Guide's (tf32 at half the f16
// rate, 8-bit types at twice).
//
//===----------------------------------------------------------------------===//

#include "kgraph/Target/ElementTypes.h"

#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/MLIRContext.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/raw_ostream.h"

using namespace mlir;
using namespace kgraph;

namespace {
using T = MmaOperandType;

Type getF32(MLIRContext *ctx) { return Float32Type::get(ctx); }
Type getF16(MLIRContext *ctx) { return Float16Type::get(ctx); }
Type getBF16(MLIRContext *ctx) { return BFloat16Type::get(ctx); }
Type getI8(MLIRContext *ctx) { return IntegerType::get(ctx, 8); }
Type getI32(MLIRContext *ctx) { return IntegerType::get(ctx, 32); }
Type getI1(MLIRContext *ctx) { return IntegerType::get(ctx, 1); }

// plan name, bits, bytes, float, mma operand, needs tf32, accumulator,
// CUtensorMapDataType, PTX type, torch, numpy, MLIR type.
const ElementTypeInfo kElementTypes[] = {
    {"f32", 32, 4, true, T::TF32, true, "f32", 7, "f32", "float32", "float32",
     getF32},
    {"f16", 16, 2, true, T::F16, false, "f32", 6, "f16", "float16", "float16",
     getF16},
    {"bf16", 16, 2, true, T::BF16, false, "f32", 9, "bf16", "bfloat16", "",
     getBF16},
    {"i8", 8, 1, false, T::I8, false, "i32", std::nullopt, "s8", "int8", "int8",
     getI8},
    {"i32", 32, 4, false, std::nullopt, false, "", std::nullopt, "s32", "int32",
     "int32", getI32},
    {"i1", 1, 1, false, std::nullopt, false, "", std::nullopt, "", "bool",
     "bool", getI1},
};

// operand kind, name, PTX type, rate relative to f16.
const MmaOperandInfo kMmaOperands[] = {
    {T::F16, "f16", "f16", 1.0},   {T::BF16, "bf16", "bf16", 1.0},
    {T::TF32, "tf32", "tf32", 0.5}, {T::I8, "i8", "s8", 2.0},
    {T::F8E4M3, "f8E4M3", "e4m3", 2.0},
};
} // namespace

ArrayRef<ElementTypeInfo> kgraph::getElementTypes() { return kElementTypes; }

const ElementTypeInfo *kgraph::lookupElementType(Type type) {
  if (!type)
    return nullptr;
  for (const ElementTypeInfo &info : kElementTypes)
    if (info.getType(type.getContext()) == type)
      return &info;
  return nullptr;
}

const ElementTypeInfo *kgraph::lookupElementType(StringRef planName) {
  for (const ElementTypeInfo &info : kElementTypes)
    if (info.planName == planName)
      return &info;
  return nullptr;
}

std::string kgraph::getKnownElementTypeNames() {
  return llvm::join(llvm::map_range(kElementTypes,
                                    [](const ElementTypeInfo &info) {
                                      return info.planName;
                                    }),
                    ", ");
}

ArrayRef<MmaOperandInfo> kgraph::getMmaOperandTypes() { return kMmaOperands; }

const MmaOperandInfo &kgraph::getMmaOperandInfo(MmaOperandType type) {
  for (const MmaOperandInfo &info : kMmaOperands)
    if (info.type == type)
      return info;
  llvm_unreachable("every MmaOperandType has a row in kMmaOperands");
}

std::optional<MmaOperandType> kgraph::getMmaOperandType(Type operandType,
                                                        bool allowTf32) {
  const ElementTypeInfo *info = lookupElementType(operandType);
  if (!info || !info->mmaOperand || (info->mmaOperandNeedsTf32 && !allowTf32))
    return std::nullopt;
  return info->mmaOperand;
}

Type kgraph::getAccumulatorType(Type operandType) {
  const ElementTypeInfo *info = lookupElementType(operandType);
  if (!info || info->accumulator.empty())
    return {};
  return lookupElementType(info->accumulator)
      ->getType(operandType.getContext());
}

void kgraph::printElementTypesJSON(llvm::raw_ostream &os) {
  auto optional = [](StringRef s) -> llvm::json::Value {
    if (s.empty())
      return nullptr;
    return s;
  };
  llvm::json::Array types;
  for (const ElementTypeInfo &info : kElementTypes) {
    llvm::json::Value mma = nullptr;
    if (info.mmaOperand)
      mma = getMmaOperandInfo(*info.mmaOperand).name;
    llvm::json::Value tensorMap = nullptr;
    if (info.tensorMapDataType)
      tensorMap = int64_t(*info.tensorMapDataType);
    types.push_back(llvm::json::Object{
        {"name", info.planName},
        {"bits", int64_t(info.bitWidth)},
        {"bytes", int64_t(info.storageBytes)},
        {"float", info.isFloat},
        {"mma_operand", std::move(mma)},
        {"mma_operand_needs_tf32", info.mmaOperandNeedsTf32},
        {"accumulator", optional(info.accumulator)},
        {"tensor_map_data_type", std::move(tensorMap)},
        {"ptx_type", optional(info.ptxType)},
        {"torch", info.torchName},
        {"numpy", optional(info.numpyName)},
    });
  }
  llvm::json::Array operands;
  for (const MmaOperandInfo &info : kMmaOperands) {
    llvm::json::Array warp, warpgroup;
    for (const SMTarget &target : getSMTargets()) {
      if (target.hasMmaOperand(info.type, /*warpgroup=*/false))
        warp.push_back(target.name);
      if (target.hasMmaOperand(info.type, /*warpgroup=*/true))
        warpgroup.push_back(target.name);
    }
    operands.push_back(llvm::json::Object{
        {"name", info.name},
        {"ptx_type", info.ptxType},
        {"rate_relative_to_f16", info.rateRelativeToF16},
        {"mma_sync", std::move(warp)},
        {"wgmma", std::move(warpgroup)},
    });
  }
  os << llvm::formatv(
      "{0:2}\n", llvm::json::Value(llvm::json::Object{
                     {"element_types", std::move(types)},
                     {"mma_operands", std::move(operands)}}));
}
