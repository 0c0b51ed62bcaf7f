//===- FormKernels.cpp - one kgraph.fused group per unfused op -----------===//

#include "kgraph/Dialect/KGraph/Transforms/Passes.h"

namespace kgraph {
#define GEN_PASS_DEF_KGRAPHFORMKERNELS
#include "kgraph/Dialect/KGraph/Transforms/Passes.h.inc"
} // namespace kgraph

using namespace mlir;
using namespace kgraph;

namespace {
struct FormKernelsPass
    : public kgraph::impl::KGraphFormKernelsBase<FormKernelsPass> {
  void runOnOperation() override {}
};
} // namespace
