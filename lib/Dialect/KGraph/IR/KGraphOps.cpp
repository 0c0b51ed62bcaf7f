//===- KGraphOps.cpp - kgraph op definitions ------------------------------===//
//
// The generated op classes. Verifiers, folders and type inference live in the
// per-family files (ElementwiseOps.cpp, StructuredOps.cpp,
// DataMovementOps.cpp).
//
//===----------------------------------------------------------------------===//

#include "kgraph/Dialect/KGraph/IR/KGraphOps.h"

#include "mlir/IR/OpImplementation.h"

using namespace mlir;
using namespace kgraph;

// The optional group kind of kgraph.fused (RegionOps.cpp).
namespace kgraph {
ParseResult parseGroupKind(OpAsmParser &parser, GroupKindAttr &kind);
void printGroupKind(OpAsmPrinter &printer, Operation *op, GroupKindAttr kind);
} // namespace kgraph

#define GET_OP_CLASSES
#include "kgraph/Dialect/KGraph/IR/KGraphOps.cpp.inc"
