//===- KGraphOptMain.h - the kgraph-opt driver ------------------*- C++ -*-===//

#ifndef KGRAPH_TOOLS_KGRAPHOPTMAIN_H
#define KGRAPH_TOOLS_KGRAPHOPTMAIN_H

namespace kgraph {

/// The kgraph-opt driver: mlir-opt with every kgraph dialect, pass and
/// pipeline registered, plus `--tile=<target>`, `--fuse`, `--cuda-path` and
/// `--emit=tiled|gpu|nvvm|ptx` (PTX written to -o, the launch plan beside it).
int kgraphOptMain(int argc, char **argv);

} // namespace kgraph

#endif // KGRAPH_TOOLS_KGRAPHOPTMAIN_H
