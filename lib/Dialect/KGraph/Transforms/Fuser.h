//===- Fuser.h - the group-forming algorithm of kgraph-fuse -----*- C++ -*-===//
//
// Private to lib/Dialect/KGraph/Transforms: the state and graph queries of
// kgraph-fuse (Fuse.cpp: cycles, recomputed cones, wrapping, the report) and
// its phases (FusePhases.cpp), which apply the rules of FusionRules.h.
//
//===----------------------------------------------------------------------===//

#ifndef KGRAPH_LIB_DIALECT_KGRAPH_TRANSFORMS_FUSER_H
#define KGRAPH_LIB_DIALECT_KGRAPH_TRANSFORMS_FUSER_H

#include "kgraph/Dialect/KGraph/IR/KGraphClassify.h"
#include "kgraph/Dialect/KGraph/Transforms/FusionRules.h"

#include "mlir/IR/Builders.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/SetVector.h"
#include "llvm/ADT/SmallPtrSet.h"

#include <optional>
#include <string>
#include <vector>

namespace kgraph::detail {
using namespace mlir;


struct Group {
  GroupKind kind;
  llvm::SetVector<Operation *> ops;
  bool dead = false;
};

using OpSet = llvm::SmallPtrSet<Operation *, 16>;

class Fuser {
public:
  Fuser(func::FuncOp func, const FusionOptions &options)
      : func(func), body(&func.getBody().front()), options(options),
        builder(func.getContext()) {}

  void run();

private:
  // Graph queries.
  bool isFree(Operation *op) const {
    return op && op->getBlock() == body && isKernelOp(op) && !groupOf.count(op);
  }
  int findGroup(Operation *op) const {
    auto it = groupOf.find(op);
    return it == groupOf.end() ? -1 : it->second;
  }
  /// `last`, if given, is the last op of `set` in the block.
  bool createsCycle(const OpSet &set, Operation *last = nullptr) const;
  SmallVector<Value> escaping(const OpSet &set) const;
  std::optional<SmallVector<Operation *>>
  collectCone(Value value, function_ref<bool(Operation *)> allowed) const;
  Value cloneCone(ArrayRef<Operation *> cone, Value value, Operation *before,
                  SmallVectorImpl<Operation *> &clones);
  void eraseClones(ArrayRef<Operation *> clones);

  unsigned addGroup(GroupKind kind, const OpSet &set);
  unsigned addGroup(GroupKind kind, SmallVector<Operation *> ordered);
  /// Records why `op` was not fused (reported if it ends up alone).
  void note(Operation *op, const Twine &why) {
    if (!options.report)
      return;
    std::string &text = whyNot[op];
    text += (text.empty() ? "" : "; ") + why.str();
  }

  // Phases.
  void foldTransposedGemmOperands();
  Operation *adoptProducer(Operation *consumer, unsigned index, bool shared,
                           OpSet &set,
                           SmallVectorImpl<Operation *> *clones = nullptr);
  void absorbGemmOperandSlice(Operation *consumer, unsigned index,
                              OpSet &set);
  void absorbAccessMapProducers(Operation *op, OpSet &set,
                                SmallVectorImpl<Operation *> &clones,
                                bool chains = true);
  void formStencilGroups();
  void formGemmGroups();
  void formWindowGroups();
  /// A kgraph.winograd_output with the conv's epilogue (bias, residual,
  /// activation): one elementwise kernel.
  void formWinogradGroups();
  void collectRowProducers(ArrayRef<Operation *> seeds, const ReduceRows &rows,
                           const OpSet &set,
                           SmallVectorImpl<Operation *> &cone);
  void adoptShapedProducers(
      SmallVector<std::pair<Operation *, unsigned>> worklist,
      ArrayRef<int64_t> shape, OpSet &set, StringRef anchorName,
      bool inlineSmaller = false);
  bool formMultiReductionGroup(ReduceOp reduce);
  void formReductionGroup(ReduceOp reduce);
  void formReductionGroups();
  void formElementwiseGroups();
  /// A concat (not written in place) or a transpose that keeps the
  /// innermost dim, fed by data movement (such a concat, a transpose, slice
  /// or broadcast_to) that no group took: one copy kernel for the chain,
  /// each op read through its access map or its inputs' segments.
  void formConcatChainGroups();
  /// growConsumers with the epilogue rule: free elementwise ops of exactly
  /// `shape` whose other operands broadcast to it (isEpilogueCandidate).
  void growEpilogue(Operation *anchor, ArrayRef<int64_t> shape, OpSet &set);
  void growConsumers(Operation *anchor, OpSet &set,
                     function_ref<bool(Operation *, const OpSet &)> accepts);
  void trimToOneResult(Operation *anchor, OpSet &set);
  void eraseDeadCloneSources();
  void wrapGroups();

  func::FuncOp func;
  Block *body;
  const FusionOptions &options;
  OpBuilder builder;
  std::vector<Group> groups;
  DenseMap<Operation *, unsigned> groupOf;
  DenseMap<Operation *, std::string> whyNot;
  /// Clones made to recompute a value in a second group (for the report).
  OpSet recomputed;
  /// Ops that were cloned; once every user reads a clone they are dead.
  llvm::SetVector<Operation *> cloneSources;
};

} // namespace kgraph::detail

#endif // KGRAPH_LIB_DIALECT_KGRAPH_TRANSFORMS_FUSER_H
