//===- InitAll.h - register every kgraph dialect and pass -------*- C++ -*-===//
//
// The entry points an embedding compiler calls: they register kgraph's
// dialect (and the upstream dialects its pipeline produces) and every kgraph
// pass and pipeline with MLIR's global registries.
//
//===----------------------------------------------------------------------===//

#ifndef KGRAPH_INITALL_H
#define KGRAPH_INITALL_H

namespace mlir {
class DialectRegistry;
} // namespace mlir

namespace kgraph {

/// Adds the kgraph dialect and the upstream dialects kgraph's pipelines
/// produce or need (func, arith, math, scf, gpu, nvvm, ...) to `registry`.
void registerAllDialects(mlir::DialectRegistry &registry);

/// Registers every kgraph pass and named pipeline (idempotent).
void registerAllPasses();

} // namespace kgraph

#endif // KGRAPH_INITALL_H
