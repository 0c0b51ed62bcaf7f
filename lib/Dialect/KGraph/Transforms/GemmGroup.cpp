//===- GemmGroup.cpp - the parts of a GEMM kernel group -------------------===//

#include "kgraph/Dialect/KGraph/Transforms/GemmGroup.h"
#include "kgraph/Dialect/KGraph/IR/KGraphClassify.h"
#include "kgraph/Dialect/KGraph/Transforms/FusionRules.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "llvm/ADT/SmallPtrSet.h"

using namespace mlir;
using namespace kgraph;

/// The anchor of a GEMM kernel group: any kgraph.matmul or kgraph.conv2d.
/// (kgraph-fuse anchors GEMM groups on non-stencil conv2d only, see
/// FusionRules.h; kgraph-tile sends stencil groups to the stencil kernel
/// before asking for a GEMM anchor, so a stencil conv2d lands here only
/// when a #kgraph.matmul_config pins it to the GEMM kernel.)
static bool isGemmOp(Operation *op) {
  return llvm::isa<MatmulOp, Conv2dOp>(op);
}

bool kgraph::hasGemmAnchor(FusedOp group) {
  return llvm::any_of(group.getBody().front().without_terminator(),
                      [](Operation &op) { return isGemmOp(&op); });
}

static ArrayRef<int64_t> shapeOf(Value v) {
  return llvm::cast<ShapedType>(v.getType()).getShape();
}

FailureOr<GemmGroupParts> kgraph::analyzeGemmGroup(FusedOp group,
                                                   bool emitErrors) {
  auto fail = [&](Operation *at, const Twine &message) {
    if (emitErrors)
      at->emitOpError(message);
    return failure();
  };
  Block &body = group.getBody().front();
  GemmGroupParts parts;
  for (Operation &op : body.without_terminator()) {
    if (!isGemmOp(&op))
      continue;
    if (parts.anchor)
      return fail(&op, "is a second kgraph.matmul/kgraph.conv2d in one GEMM "
                       "kernel group; a group computes one");
    parts.anchor = &op;
  }
  if (!parts.anchor)
    return fail(group, "holds no kgraph.matmul or kgraph.conv2d");
  Operation *anchor = parts.anchor;
  Value anchorResult = anchor->getResult(0);
  ArrayRef<int64_t> outShape = shapeOf(anchorResult);
  llvm::SmallPtrSet<Operation *, 8> prologueOps;

  // Prologues: from the anchor's operand back to a group input.
  for (unsigned i = 0; i < 2; ++i) {
    StringRef name = i == 0 ? "A" : "B";
    Value v = anchor->getOperand(i);
    SmallVector<Operation *, 2> &chain =
        i == 0 ? parts.lhsPrologue : parts.rhsPrologue;
    while (!llvm::isa<BlockArgument>(v)) {
      Operation *op = v.getDefiningOp();
      if (llvm::isa<Conv2dOp>(anchor))
        return fail(op, "computes an operand of a kgraph.conv2d inside its "
                        "kernel group; conv2d operands must be group inputs "
                        "(only a matmul has a prologue)");
      if (isGemmOperandSlice(op) && llvm::isa<BlockArgument>(op->getOperand(0))) {
        // The slice of a group input the operand is, read in place.
        if (!v.hasOneUse())
          return fail(op, "is the slice operand " + name + " of the "
                          "kgraph.matmul reads in place, and has other uses "
                          "in its group");
        (i == 0 ? parts.lhsSlice : parts.rhsSlice) = llvm::cast<SliceOp>(op);
        prologueOps.insert(op);
        v = op->getOperand(0);
        break;
      }
      if (chain.size() == 2)
        return fail(op, "is a third prologue op on operand " + name +
                            " of the kgraph.matmul; at most two are fused");
      Value next;
      if (llvm::isa<CastOp>(op)) {
        next = op->getOperand(0);
      } else if (llvm::isa<MulOp>(op)) {
        for (unsigned j = 0; j < 2 && !next; ++j)
          if (isSplatConstant(op->getOperand(1 - j)) &&
              shapeOf(op->getOperand(j)) == shapeOf(op->getResult(0)))
            next = op->getOperand(j);
        if (!next)
          return fail(op, "is on the path to operand " + name +
                              " of the kgraph.matmul but does not scale it "
                              "by a splat constant");
      } else {
        return fail(op, "is on the path to operand " + name +
                            " of the kgraph.matmul; a prologue holds only "
                            "kgraph.cast and kgraph.mul by a splat constant, "
                            "after a slice of a group input");
      }
      if (!v.hasOneUse())
        return fail(op, "computes a prologue value of operand " + name +
                            " of the kgraph.matmul that has other uses");
      chain.insert(chain.begin(), op);
      prologueOps.insert(op);
      v = next;
    }
    // The body is isolated from above: a block argument is a group input.
    (i == 0 ? parts.lhsSource : parts.rhsSource) = llvm::cast<BlockArgument>(v);
  }

  // Epilogue: every other non-constant op, in block order (a topological
  // order), depending on the anchor result.
  llvm::SmallPtrSet<Value, 8> epilogueValues;
  epilogueValues.insert(anchorResult);
  for (Operation &op : body.without_terminator()) {
    if (&op == anchor || prologueOps.contains(&op))
      continue;
    if (llvm::isa<arith::ConstantOp>(op))
      continue;
    // A transpose, broadcast or slice of a group input: the epilogue reads
    // the input through its access map.
    if (isAccessMapOp(&op) && llvm::isa<BlockArgument>(op.getOperand(0)))
      continue;
    if (!isElementwiseOp(&op))
      return fail(&op, "cannot be fused into the epilogue of a GEMM kernel "
                       "group: only elementwise ops and transposes, broadcasts "
                       "and slices of group inputs can");
    // Elementwise results are the broadcast of the operand shapes, so an
    // epilogue result of the anchor's shape also means every operand
    // broadcasts to it (bias [N], per-channel [1,F,1,1], residual, scalars).
    if (op.getNumResults() != 1 || shapeOf(op.getResult(0)) != outShape) {
      if (emitErrors)
        op.emitOpError("result type ")
            << op.getResult(0).getType()
            << " does not have the shape of the GEMM result "
            << anchorResult.getType()
            << "; a GEMM epilogue computes on the GEMM's elements";
      return failure();
    }
    bool dependent = false;
    for (Value operand : op.getOperands()) {
      if (epilogueValues.contains(operand)) {
        dependent = true;
        continue;
      }
      Operation *def = operand.getDefiningOp();
      bool input = llvm::isa<BlockArgument>(operand) ||
                   (def && isAccessMapOp(def) &&
                    llvm::isa<BlockArgument>(def->getOperand(0)));
      if (!input && !isSplatConstant(operand))
        return fail(&op, "has an operand that is neither a group input, a "
                         "splat constant nor an epilogue value");
    }
    if (!dependent)
      return fail(&op, "does not depend on the kgraph.matmul/kgraph.conv2d "
                       "result: the elementwise ops of a GEMM group are its "
                       "epilogue (or a matmul operand's prologue)");
    parts.epilogue.push_back(&op);
    epilogueValues.insert(op.getResult(0));
  }

  Operation *yield = body.getTerminator();
  if (yield->getNumOperands() != 1)
    return fail(group, "is a GEMM kernel group and must yield exactly one "
                       "value");
  parts.result = yield->getOperand(0);
  if (parts.result == anchorResult && !parts.epilogue.empty())
    return fail(anchor, "result is yielded although the group has an "
                        "epilogue; a GEMM group yields only its last "
                        "epilogue value");
  if (!epilogueValues.contains(parts.result))
    return fail(group, "is a GEMM kernel group and must yield its "
                       "kgraph.matmul/kgraph.conv2d result or an epilogue "
                       "value");
  return parts;
}
