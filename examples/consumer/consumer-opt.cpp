//===- consumer-opt.cpp - a compiler embedding kgraph ---------------------===//
//
// The smallest compiler built against the installed kgraph package:
//
//   consumer-opt <input.mlir> [<pass pipeline>]
//
// registers kgraph's dialects and passes, parses and verifies the input, runs
// the pipeline (by default kgraph-form-kernels on every function), prints the
// module, and reports how many kernel groups (kgraph.fused) it holds, which
// uses kgraph's C++ op classes from the installed headers.
//
//===----------------------------------------------------------------------===//

#include "kgraph/Dialect/KGraph/IR/KGraphOps.h"
#include "kgraph/InitAll.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/raw_ostream.h"

int main(int argc, char **argv) {
  if (argc < 2 || argc > 3) {
    llvm::errs() << "usage: consumer-opt <input.mlir> [<pass pipeline>]\n";
    return 2;
  }
  llvm::StringRef pipeline =
      argc == 3 ? argv[2] : "builtin.module(func.func(kgraph-form-kernels))";

  mlir::DialectRegistry registry;
  kgraph::registerAllDialects(registry);
  kgraph::registerAllPasses();
  mlir::MLIRContext context(registry);

  llvm::SourceMgr sourceMgr;
  mlir::SourceMgrDiagnosticHandler diagHandler(sourceMgr, &context);
  mlir::OwningOpRef<mlir::ModuleOp> module =
      mlir::parseSourceFile<mlir::ModuleOp>(argv[1], sourceMgr,
                                            mlir::ParserConfig(&context));
  if (!module)
    return 1;
  if (mlir::failed(mlir::verify(*module)))
    return 1;

  // The pipeline names its root op (`builtin.module(...)`): parse it as a
  // whole and anchor the pass manager there. (The parsePassPipeline overload
  // that appends to an existing manager would nest `builtin.module(...)`
  // under the root and run it only on modules inside the module.)
  mlir::FailureOr<mlir::OpPassManager> parsed =
      mlir::parsePassPipeline(pipeline, llvm::errs());
  if (mlir::failed(parsed))
    return 1;
  mlir::PassManager pm(&context, parsed->getOpAnchorName());
  static_cast<mlir::OpPassManager &>(pm) = std::move(*parsed);
  if (mlir::failed(pm.run(*module)))
    return 1;

  module->print(llvm::outs());
  unsigned groups = 0;
  module->walk([&](kgraph::FusedOp) { ++groups; });
  llvm::outs() << "// kgraph.fused groups: " << groups << "\n";
  return 0;
}
