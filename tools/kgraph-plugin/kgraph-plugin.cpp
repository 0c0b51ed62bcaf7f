//===- kgraph-plugin.cpp - kgraph as an mlir-opt plugin -------------------===//
//
// The entry points upstream mlir-opt looks up after dlopen-ing this library:
// `--load-dialect-plugin` calls mlirGetDialectPluginInfo to add the kgraph
// dialect (and the dialects it depends on) to mlir-opt's registry;
// `--load-pass-plugin` calls mlirGetPassPluginInfo to register every kgraph
// pass, so `--pass-pipeline='...(kgraph-form-kernels)'` parses.
//
//===----------------------------------------------------------------------===//

#include "kgraph/InitAll.h"

#include "mlir/IR/DialectRegistry.h"
#include "mlir/Tools/Plugins/DialectPlugin.h"
#include "mlir/Tools/Plugins/PassPlugin.h"
#include "llvm/Config/llvm-config.h"
#include "llvm/Support/Compiler.h"

/// Dialect plugin interface: registers the kgraph dialect and the upstream
/// dialects kgraph IR refers to.
extern "C" LLVM_ATTRIBUTE_WEAK ::mlir::DialectPluginLibraryInfo
mlirGetDialectPluginInfo() {
  return {MLIR_PLUGIN_API_VERSION, "KGraph", LLVM_VERSION_STRING,
          [](::mlir::DialectRegistry *registry) {
            kgraph::registerAllDialects(*registry);
          }};
}

/// Pass plugin interface: registers every kgraph pass and pipeline.
extern "C" LLVM_ATTRIBUTE_WEAK ::mlir::PassPluginLibraryInfo
mlirGetPassPluginInfo() {
  return {MLIR_PLUGIN_API_VERSION, "KGraphPasses", LLVM_VERSION_STRING,
          []() { kgraph::registerAllPasses(); }};
}
