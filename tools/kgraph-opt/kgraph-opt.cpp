//===- kgraph-opt.cpp - the kgraph optimizer driver -----------------------===//
//
// mlir-opt with every kgraph dialect, pass and pipeline registered, plus
// `--tile=<target>`, `--fuse` and `--emit=` (see lib/Pipelines/Driver.cpp).
//
//===----------------------------------------------------------------------===//

#include "kgraph/Pipelines/Pipelines.h"

int main(int argc, char **argv) { return kgraph::kgraphOptMain(argc, argv); }
