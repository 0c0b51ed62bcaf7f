//===- KGraphClassify.cpp - op families for kernel formation --------------===//

#include "kgraph/Dialect/KGraph/IR/KGraphClassify.h"
#include "kgraph/Dialect/KGraph/IR/KGraphOps.h"

#include "llvm/ADT/StringSet.h"

using namespace mlir;

bool kgraph::isElementwiseOp(Operation *op) {
  static const llvm::StringSet<> kNames = {
      "kgraph.add",  "kgraph.sub",     "kgraph.mul",     "kgraph.div",
      "kgraph.max",  "kgraph.min",     "kgraph.pow",     "kgraph.neg",
      "kgraph.abs",  "kgraph.exp",     "kgraph.log",     "kgraph.sqrt",
      "kgraph.rsqrt", "kgraph.tanh",   "kgraph.sigmoid", "kgraph.relu",
      "kgraph.gelu", "kgraph.clamp",   "kgraph.cast",    "kgraph.compare",
      "kgraph.select"};
  return kNames.contains(op->getName().getStringRef());
}

bool kgraph::isKernelOp(Operation *op) {
  return llvm::isa<KGraphDialect>(op->getDialect()) &&
         !llvm::isa<FusedOp, YieldOp>(op);
}
