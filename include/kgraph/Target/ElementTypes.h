//===- ElementTypes.h - the table of element types kgraph knows -*- C++ -*-===//
//
// The one place that describes the element types of kgraph tensors: the
// dtype name launch plans use, the bytes an element takes in a buffer, the
// tensor-core operand kind and accumulator a GEMM of the type uses, the
// CUtensorMapDataType of a TMA load, the PTX type an instruction names and
// the host (torch/numpy) types the Python runtime holds it in. Passes and
// emitters ask this table; a type it lacks is unsupported, and every caller
// says so in a diagnostic naming the type.
//
// Which SM has a tensor-core operand kind is not repeated here: the SM table
// (SMTargets.h) lists the instruction shapes per operand kind, and
// SMTarget::hasMmaOperand reads them.
//
// Adding a type (fp8 e4m3/e5m2 are the next) is one row of kElementTypes in
// ElementTypes.cpp (plus a row of kMmaOperands for a new tensor-core operand
// kind) and the same row in python/kgraph/dtypes.py, which
// test/Target/element-types.test compares with `kgraph-opt
// --print-element-types`.
//
//===----------------------------------------------------------------------===//

#ifndef KGRAPH_TARGET_ELEMENTTYPES_H
#define KGRAPH_TARGET_ELEMENTTYPES_H

#include "kgraph/Target/SMTargets.h"

#include "mlir/IR/Types.h"
#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"

#include <optional>
#include <string>

namespace llvm {
class raw_ostream;
} // namespace llvm

namespace kgraph {

/// One tensor-core operand kind (the rows of SMTarget::mmaShapes).
struct MmaOperandInfo {
  MmaOperandType type;
  /// Name in diagnostics and in --print-element-types: "f16", "tf32".
  llvm::StringRef name;
  /// The PTX type of the operand in mma.sync / wgmma.mma_async
  /// ("f16", "bf16", "tf32", "s8", "e4m3"); NVVM's MMATypes and
  /// WGMMATypes spell their enumerants the same way.
  llvm::StringRef ptxType;
  /// Dense multiply-adds per clock relative to f16 on the same tensor core:
  /// tf32 runs at half the rate, 8-bit types at twice.
  double rateRelativeToF16;
};

/// One element type of kgraph tensors.
struct ElementTypeInfo {
  /// The dtype string of launch plans and diagnostics ("f32", "i1").
  llvm::StringRef planName;
  /// Bits of the MLIR type.
  unsigned bitWidth;
  /// Bytes of one element in a buffer (i1 is stored one byte per element).
  unsigned storageBytes;
  /// Whether the MLIR type is a float type (arith's f-ops apply).
  bool isFloat;
  /// The tensor-core operand kind of GEMM operands of this type; an f32
  /// operand takes it only under `precision = tf32`.
  std::optional<MmaOperandType> mmaOperand;
  bool mmaOperandNeedsTf32;
  /// The plan name of the type GEMM operands of this type accumulate in
  /// (f32 for float operands, i32 for i8); empty: not a GEMM operand type.
  llvm::StringRef accumulator;
  /// CUtensorMapDataType (cuda.h) of a TMA tensor map over buffers of this
  /// type; the launch-plan format names maps of f16, bf16 and f32 only.
  std::optional<unsigned> tensorMapDataType;
  /// The PTX type of a register of this type ("f32", "s8"); empty for i1,
  /// which no instruction kgraph emits names as such (it is a predicate in
  /// registers and a byte in memory).
  llvm::StringRef ptxType;
  /// The torch and numpy dtype names the Python runtime holds buffers of
  /// this type in (`torch.<name>`, `numpy.<name>`); numpy: empty when numpy
  /// has no such type (bf16).
  llvm::StringRef torchName, numpyName;
  /// The MLIR type.
  mlir::Type (*getType)(mlir::MLIRContext *ctx);
};

/// Every element type, in the order of the launch-plan documentation.
llvm::ArrayRef<ElementTypeInfo> getElementTypes();

/// The row of MLIR type `type`, or nullptr when kgraph has no such element
/// type (the caller reports it, naming the type).
const ElementTypeInfo *lookupElementType(mlir::Type type);

/// The row whose plan name is `planName`, or nullptr.
const ElementTypeInfo *lookupElementType(llvm::StringRef planName);

/// "f32, f16, bf16, ..." for diagnostics.
std::string getKnownElementTypeNames();

/// Every tensor-core operand kind.
llvm::ArrayRef<MmaOperandInfo> getMmaOperandTypes();

/// The row of `type` (every MmaOperandType has one).
const MmaOperandInfo &getMmaOperandInfo(MmaOperandType type);

/// The tensor-core operand kind of GEMM operands of `operandType` (f32 only
/// with `allowTf32`), or std::nullopt when tensor cores cannot take them.
std::optional<MmaOperandType> getMmaOperandType(mlir::Type operandType,
                                                bool allowTf32);

/// The type GEMM operands of `operandType` accumulate in (f32 for float
/// types, i32 for i8), or a null type when kgraph has no GEMM of them.
mlir::Type getAccumulatorType(mlir::Type operandType);

/// The table as JSON (kgraph-opt --print-element-types): {"element_types":
/// [...], "mma_operands": [...]}, each mma operand with the targets that
/// offer it to mma.sync and to wgmma.
void printElementTypesJSON(llvm::raw_ostream &os);

} // namespace kgraph

#endif // KGRAPH_TARGET_ELEMENTTYPES_H
