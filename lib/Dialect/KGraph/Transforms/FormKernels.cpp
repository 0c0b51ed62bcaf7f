//===- FormKernels.cpp - one kgraph.fused group per unfused op -----------===//

#include "kgraph/Dialect/KGraph/IR/KGraphClassify.h"
#include "kgraph/Dialect/KGraph/Transforms/FusionRules.h"
#include "kgraph/Dialect/KGraph/Transforms/KernelFamilies.h"
#include "kgraph/Dialect/KGraph/Transforms/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/IR/IRMapping.h"

namespace kgraph {
#define GEN_PASS_DEF_KGRAPHFORMKERNELS
#include "kgraph/Dialect/KGraph/Transforms/Passes.h.inc"
} // namespace kgraph

using namespace mlir;
using namespace kgraph;

FusedOp kgraph::wrapInFusedOp(OpBuilder &builder, ArrayRef<Operation *> ops,
                              ArrayRef<Value> results,
                              std::optional<GroupKind> kind) {
  llvm::SmallPtrSet<Operation *, 8> inGroup(ops.begin(), ops.end());
  // Operands from outside the group become inputs, except constants the
  // kernel folds (isFoldedConstant), which are cloned into the body (they
  // are free to rematerialize).
  SmallVector<Value> inputs;
  SmallVector<Operation *> constants;
  for (Operation *op : ops) {
    for (Value operand : op->getOperands()) {
      Operation *def = operand.getDefiningOp();
      if (def && inGroup.contains(def))
        continue;
      if (def && def->hasTrait<mlir::OpTrait::ConstantLike>() &&
          isFoldedConstant(
              def, [&](Operation *user) { return inGroup.contains(user); })) {
        if (!llvm::is_contained(constants, def))
          constants.push_back(def);
        continue;
      }
      if (!llvm::is_contained(inputs, operand))
        inputs.push_back(operand);
    }
  }

  Location loc = ops.front()->getLoc();
  builder.setInsertionPoint(ops.back());
  auto fused = FusedOp::create(builder, loc, ValueRange(results).getTypes(),
                               inputs);
  Block *body = builder.createBlock(&fused.getBody());
  IRMapping mapping;
  for (Value input : inputs)
    mapping.map(input, body->addArgument(input.getType(), input.getLoc()));
  for (Operation *c : constants)
    builder.clone(*c, mapping);
  for (Operation *op : ops)
    builder.clone(*op, mapping);
  SmallVector<Value> yielded;
  for (Value r : results)
    yielded.push_back(mapping.lookup(r));
  YieldOp::create(builder, loc, yielded);

  for (auto [i, oldValue] : llvm::enumerate(results))
    Value(oldValue).replaceAllUsesWith(fused.getResult(i));
  for (Operation *op : llvm::reverse(ops))
    if (op->use_empty())
      op->erase();
  for (Operation *c : constants)
    if (c->use_empty())
      c->erase();
  // The kind is decided here, once, for every later pass.
  fused.setKind(kind ? *kind : classifyGroup(fused));
  builder.setInsertionPointAfter(fused);
  return fused;
}

namespace {
struct FormKernelsPass
    : public kgraph::impl::KGraphFormKernelsBase<FormKernelsPass> {
  void runOnOperation() override {
    SmallVector<Operation *> toWrap;
    getOperation().getBody().walk<WalkOrder::PreOrder>([&](Operation *op) {
      if (llvm::isa<FusedOp>(op))
        return WalkResult::skip();
      // A view (a reshape, a contiguous slice) gets no kernel: the lowering
      // makes its result a view of its input's buffer.
      // Nor does a concat whose inputs are written in place (views of its
      // result).
      if (isKernelOp(op) && !isViewOp(op) && !getConcatInputByteOffsets(op))
        toWrap.push_back(op);
      return WalkResult::advance();
    });
    OpBuilder builder(&getContext());
    for (Operation *op : toWrap) {
      SmallVector<Value> results(op->getResults());
      wrapInFusedOp(builder, {op}, results);
    }
  }
};
} // namespace
