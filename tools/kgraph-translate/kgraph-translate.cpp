//===- kgraph-translate.cpp - kgraph's translation driver -----------------===//
//
// mlir-translate with kgraph's importers registered:
//
//   kgraph-translate --import-graph-json graph.json -o graph.mlir
//
// reads the JSON graph format of docs/graph-json.md ("-" or no file: stdin)
// and writes kgraph IR. On any problem it reports errors naming the offending
// field and exits non-zero without writing the output file.
//
//===----------------------------------------------------------------------===//

#include "kgraph/Translate/GraphJson.h"

#include "mlir/Tools/mlir-translate/MlirTranslateMain.h"

int main(int argc, char **argv) {
  kgraph::registerGraphJsonTranslation();
  return mlir::failed(
      mlir::mlirTranslateMain(argc, argv, "kgraph translation driver"));
}
