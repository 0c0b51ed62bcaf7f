//===- RegionOps.cpp - kgraph.fused and kgraph.yield ----------------------===//

#include "kgraph/Dialect/KGraph/IR/KGraphClassify.h"
#include "kgraph/Dialect/KGraph/IR/KGraphOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/IR/OpImplementation.h"

using namespace mlir;
using namespace kgraph;

namespace kgraph {
ParseResult parseGroupKind(OpAsmParser &parser, GroupKindAttr &kind);
void printGroupKind(OpAsmPrinter &printer, Operation *op, GroupKindAttr kind);
} // namespace kgraph

/// `kgraph.fused gemm (...)`: the optional kind is a bare keyword.
ParseResult kgraph::parseGroupKind(OpAsmParser &parser,
                                           GroupKindAttr &kind) {
  StringRef keyword;
  SMLoc loc = parser.getCurrentLocation();
  if (failed(parser.parseOptionalKeyword(&keyword)))
    return success();
  std::optional<GroupKind> parsed = symbolizeGroupKind(keyword);
  if (!parsed) {
    InFlightDiagnostic diag = parser.emitError(loc, "unknown group kind '")
                              << keyword << "'; kinds: ";
    for (uint32_t k = 0; k <= getMaxEnumValForGroupKind(); ++k)
      diag << (k ? ", " : "") << stringifyGroupKind(GroupKind(k));
    return diag;
  }
  kind = GroupKindAttr::get(parser.getContext(), *parsed);
  return success();
}

void kgraph::printGroupKind(OpAsmPrinter &printer, Operation *,
                                    GroupKindAttr kind) {
  // `kgraph.fused gemm (%a, %b)`, like `kgraph.fused (%a, %b)` without.
  if (kind)
    printer << stringifyGroupKind(kind.getValue()) << " ";
}

YieldOp FusedOp::getYield() {
  return llvm::cast<YieldOp>(getBody().front().getTerminator());
}

LogicalResult FusedOp::verify() {
  Block &block = getBody().front();
  if (block.getNumArguments() != getInputs().size())
    return emitOpError("body has ")
           << block.getNumArguments() << " arguments but the op has "
           << getInputs().size() << " inputs";
  for (auto [i, arg, input] :
       llvm::enumerate(block.getArguments(), getInputs())) {
    if (arg.getType() != input.getType())
      return emitOpError("body argument #")
             << i << " has type " << arg.getType() << " but input #" << i
             << " has type " << input.getType();
  }
  auto yield = llvm::dyn_cast<YieldOp>(block.getTerminator());
  if (!yield)
    return emitOpError("body must end with kgraph.yield");
  if (yield.getValues().size() != getNumResults())
    return emitOpError("yields ")
           << yield.getValues().size() << " values but the op has "
           << getNumResults() << " results";
  for (auto [i, value, result] :
       llvm::enumerate(yield.getValues(), getResults())) {
    if (value.getType() != result.getType())
      return emitOpError("yielded value #")
             << i << " has type " << value.getType() << " but result #" << i
             << " has type " << result.getType();
  }
  for (Operation &op : block.without_terminator()) {
    if (llvm::isa<FusedOp>(op))
      return op.emitOpError("cannot be nested in another kgraph.fused");
    if (!llvm::isa<KGraphDialect>(op.getDialect()) &&
        !llvm::isa<arith::ConstantOp>(op))
      return emitOpError("body may only hold kgraph ops and arith.constant, "
                         "found '")
             << op.getName() << "'";
  }
  if (std::optional<GroupKind> kind = getKind()) {
    std::string error = getGroupKindError(*this, *kind);
    if (!error.empty())
      return emitOpError("of kind '")
             << stringifyGroupKind(*kind) << "' " << error;
  }
  if (std::optional<GroupKind> kind = getKind()) {
    std::string error = getGroupKindError(*this, *kind);
    if (!error.empty())
      return emitOpError("of kind '")
             << stringifyGroupKind(*kind) << "' " << error;
  }
  return success();
}
