//===- kgraph-opt.cpp - the kgraph optimizer driver -----------------------===//
//
// mlir-opt with every kgraph dialect, pass and pipeline registered, plus
// `--tile=<target>`, `--fuse` and `--emit=` (see lib/Tools/KGraphOptMain.cpp),
// and the test passes of test/lib.
//
//===----------------------------------------------------------------------===//

#include "kgraph/Tools/KGraphOptMain.h"

namespace kgraph::test {
void registerTestAccessMapPass();
} // namespace kgraph::test

int main(int argc, char **argv) {
  kgraph::test::registerTestAccessMapPass();
  return kgraph::kgraphOptMain(argc, argv);
}
