//===- OpHelpers.h - diagnostics helpers shared by the op families -*- C++ -*-===//
//
// Private to lib/Dialect/KGraph/IR.
//
//===----------------------------------------------------------------------===//

#ifndef KGRAPH_LIB_DIALECT_KGRAPH_IR_OPHELPERS_H
#define KGRAPH_LIB_DIALECT_KGRAPH_IR_OPHELPERS_H

#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Diagnostics.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/raw_ostream.h"

#include <optional>
#include <string>

namespace kgraph::detail {

/// Formats a list of integers as "[a, b, c]" for diagnostics.
inline std::string formatList(llvm::ArrayRef<int64_t> values) {
  std::string str;
  llvm::raw_string_ostream os(str);
  os << '[';
  llvm::interleaveComma(values, os);
  os << ']';
  return str;
}

/// Returns an emitter for inferReturnTypes that prefixes messages like an
/// op verifier does, or an inert diagnostic when there is no location.
template <typename OpTy>
auto makeInferErrorEmitter(std::optional<mlir::Location> location) {
  return [location]() -> mlir::InFlightDiagnostic {
    if (!location)
      return mlir::InFlightDiagnostic();
    return mlir::emitError(*location)
           << "'" << OpTy::getOperationName() << "' op ";
  };
}

/// Returns `type` as a static ranked tensor type, or emits an error naming
/// it `name`. Needed because inferReturnTypes runs on unverified types while
/// the custom form is parsed.
inline mlir::RankedTensorType
getStaticTensorType(mlir::Type type, const llvm::Twine &name,
                    llvm::function_ref<mlir::InFlightDiagnostic()> emitError) {
  auto tensorType = llvm::dyn_cast<mlir::RankedTensorType>(type);
  if (!tensorType || !tensorType.hasStaticShape()) {
    emitError() << name << " must be a statically shaped tensor, got " << type;
    return {};
  }
  return tensorType;
}

} // namespace kgraph::detail

#endif // KGRAPH_LIB_DIALECT_KGRAPH_IR_OPHELPERS_H
