//===- kgraph-opt.cpp - the kgraph optimizer driver -----------------------===//
//
// mlir-opt for kgraph: registers kgraph and the upstream dialects and passes,
// then hands over to MlirOptMain.
//
//===----------------------------------------------------------------------===//

#include "kgraph/InitAll.h"

#include "mlir/IR/DialectRegistry.h"
#include "mlir/InitAllDialects.h"
#include "mlir/InitAllPasses.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"

int main(int argc, char **argv) {
  mlir::registerAllPasses();
  kgraph::registerAllPasses();

  mlir::DialectRegistry registry;
  mlir::registerAllDialects(registry);
  kgraph::registerAllDialects(registry);

  return mlir::asMainReturnCode(
      mlir::MlirOptMain(argc, argv, "kgraph optimizer driver\n", registry));
}
