//===- kgraph-opt.cpp - the kgraph optimizer driver -----------------------===//
//
// mlir-opt with every kgraph dialect, pass and pipeline registered, plus
// `--tile=<target>`, `--fuse` and `--emit=` (see lib/Tools/KGraphOptMain.cpp).
//
//===----------------------------------------------------------------------===//

#include "kgraph/Tools/KGraphOptMain.h"

int main(int argc, char **argv) { return kgraph::kgraphOptMain(argc, argv); }
