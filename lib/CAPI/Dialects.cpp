//===- Dialects.cpp - C API for the kgraph dialect ------------------------===//

#include "kgraph-c/Dialects.h"

#include "kgraph/Dialect/KGraph/IR/KGraphDialect.h"
#include "kgraph/InitAll.h"

#include "mlir/CAPI/IR.h"
#include "mlir/CAPI/Registration.h"

MLIR_DEFINE_CAPI_DIALECT_REGISTRATION(KGraph, kgraph, kgraph::KGraphDialect)

void kgraphRegisterAllDialects(MlirDialectRegistry registry) {
  kgraph::registerAllDialects(*unwrap(registry));
}

void kgraphRegisterAllPasses(void) { kgraph::registerAllPasses(); }
