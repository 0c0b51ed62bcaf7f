//===- Fuse.cpp - group kernel ops into kgraph.fused (kgraph-fuse) --------===//
//
// Groups are decided on the flat graph of the function body, in the order of
// docs/fusion.md: stencil chains, GEMM anchors with epilogue and prologue,
// reductions with producers and consumers, then maximal elementwise groups.
// Every candidate set is checked for cycles against the groups decided so far
// (a group may not both feed and consume another group or op). Values are
// recomputed by cloning small elementwise cones right before their new user;
// nothing is wrapped until all groups are decided, then the block is sorted
// topologically (a group sits where its last op was).
//
// This file holds the grouping state and graph queries (Fuser.h), the
// wrapping and the report; the phases are FusePhases.cpp and the rules
// FusionRules.cpp.
//
//===----------------------------------------------------------------------===//

#include "Fuser.h"
#include "kgraph/Dialect/KGraph/Transforms/Passes.h"

#include "mlir/Analysis/TopologicalSortUtils.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/IRMapping.h"

namespace kgraph {
#define GEN_PASS_DEF_KGRAPHFUSE
#include "kgraph/Dialect/KGraph/Transforms/Passes.h.inc"
} // namespace kgraph

using namespace mlir;
using namespace kgraph;
using namespace kgraph::detail;

//===----------------------------------------------------------------------===//
// Graph queries and groups (the phases are in FusePhases.cpp)
//===----------------------------------------------------------------------===//

/// The kind as the report names it ("reduction" for reduce groups).
static StringRef kindName(GroupKind kind) {
  if (kind == GroupKind::reduce)
    return "reduction";
  return stringifyGroupKind(kind);
}

/// The ops of `body` that use a result of `op`, directly or inside their
/// regions (a use in a nested region makes the region's op depend on `op`).
static SmallVector<Operation *> usersOf(Block *body, Operation *op) {
  SmallVector<Operation *> users;
  for (Operation *user : op->getUsers())
    if (Operation *ancestor = body->findAncestorOpInBlock(*user))
      users.push_back(ancestor);
  return users;
}

/// `set` is legal only if no path leaves it and comes back: walk forward from
/// the users outside it, expanding each group met as one node.
///
/// Edges between ops go forward in the block, so a path can only come back
/// to `set` through a group that starts before `set` ends: ops after
/// `limit` (the end of `set`, extended over every group that straddles it)
/// never lead back and are not walked.
bool Fuser::createsCycle(const OpSet &set, Operation *last) const {
  Operation *limit = last;
  if (!limit)
    for (Operation *op : set)
      if (op->getBlock() == body && (!limit || limit->isBeforeInBlock(op)))
        limit = op;
  for (bool changed = limit != nullptr; changed;) {
    changed = false;
    for (const Group &group : groups) {
      if (group.dead || group.ops.empty())
        continue;
      Operation *first = group.ops.front(), *last = group.ops.back();
      if (!limit->isBeforeInBlock(first) && limit->isBeforeInBlock(last)) {
        limit = last;
        changed = true;
      }
    }
  }
  auto beyond = [&](Operation *op) {
    return limit && limit->isBeforeInBlock(op);
  };

  SmallVector<Operation *> worklist;
  OpSet visited;
  for (Operation *op : set)
    for (Operation *user : usersOf(body, op))
      if (!set.contains(user) && !beyond(user))
        worklist.push_back(user);
  while (!worklist.empty()) {
    Operation *op = worklist.pop_back_val();
    if (!visited.insert(op).second)
      continue;
    int g = findGroup(op);
    if (g >= 0)
      for (Operation *member : groups[g].ops)
        if (!set.contains(member) && !beyond(member))
          worklist.push_back(member);
    for (Operation *user : usersOf(body, op)) {
      if (set.contains(user))
        return true;
      if (!beyond(user))
        worklist.push_back(user);
    }
  }
  return false;
}

/// Results of `set` that are used outside it (including by the return), in
/// program order.
SmallVector<Value> Fuser::escaping(const OpSet &set) const {
  SmallVector<Operation *> ordered(set.begin(), set.end());
  llvm::sort(ordered,
             [](Operation *a, Operation *b) { return a->isBeforeInBlock(b); });
  SmallVector<Value> values;
  for (Operation *op : ordered)
    for (Value r : op->getResults())
      if (llvm::any_of(r.getUsers(),
                       [&](Operation *u) { return !set.contains(u); }))
        values.push_back(r);
  return values;
}

/// The elementwise ops `value` is computed from, back to values whose
/// defining op is not `allowed` (block arguments, constants, other groups), in
/// program order; none if that is more than options.maxRecompute ops.
std::optional<SmallVector<Operation *>>
Fuser::collectCone(Value value, function_ref<bool(Operation *)> allowed) const {
  llvm::SetVector<Operation *> cone;
  SmallVector<Value> worklist{value};
  while (!worklist.empty()) {
    Operation *def = worklist.pop_back_val().getDefiningOp();
    if (!def || def->hasTrait<mlir::OpTrait::ConstantLike>() || !allowed(def) ||
        cone.contains(def))
      continue;
    if (!isElementwiseOp(def))
      return std::nullopt;
    cone.insert(def);
    if (cone.size() > options.maxRecompute)
      return std::nullopt;
    for (Value operand : def->getOperands())
      worklist.push_back(operand);
  }
  SmallVector<Operation *> ordered(cone.begin(), cone.end());
  llvm::sort(ordered,
             [](Operation *a, Operation *b) { return a->isBeforeInBlock(b); });
  return ordered;
}

/// Clones `cone` right before `before`; returns the clone of `value`.
Value Fuser::cloneCone(ArrayRef<Operation *> cone, Value value,
                       Operation *before,
                       SmallVectorImpl<Operation *> &clones) {
  IRMapping mapping;
  builder.setInsertionPoint(before);
  for (Operation *op : cone) {
    clones.push_back(builder.clone(*op, mapping));
    recomputed.insert(clones.back());
    cloneSources.insert(op);
  }
  return mapping.lookupOrDefault(value);
}

void Fuser::eraseClones(ArrayRef<Operation *> clones) {
  for (Operation *op : llvm::reverse(clones)) {
    if (!op->use_empty())
      continue;
    recomputed.erase(op);
    op->erase();
  }
}

unsigned Fuser::addGroup(GroupKind kind, const OpSet &set) {
  SmallVector<Operation *> ordered(set.begin(), set.end());
  llvm::sort(ordered,
             [](Operation *a, Operation *b) { return a->isBeforeInBlock(b); });
  return addGroup(kind, std::move(ordered));
}

/// `ordered` is in program order.
unsigned Fuser::addGroup(GroupKind kind, SmallVector<Operation *> ordered) {
  unsigned index = groups.size();
  Group group{kind, {}, false};
  group.ops.insert(ordered.begin(), ordered.end());
  groups.push_back(std::move(group));
  for (Operation *op : ordered)
    groupOf[op] = index;
  return index;
}

/// Adds to `set` every free op after `anchor` (in program order) that uses a
/// value of `set` and that `accepts` allows, when that creates no cycle.
void Fuser::growEpilogue(Operation *anchor, ArrayRef<int64_t> shape,
                         OpSet &set) {
  growConsumers(anchor, set, [&](Operation *op, const OpSet &s) {
    return isEpilogueCandidate(op, shape, [&](Value v) {
      Operation *def = v.getDefiningOp();
      return def && s.contains(def);
    });
  });
}

void Fuser::growConsumers(
    Operation *anchor, OpSet &set,
    function_ref<bool(Operation *, const OpSet &)> accepts) {
  for (Operation *op = anchor->getNextNode(); op; op = op->getNextNode()) {
    if (!isFree(op) || set.contains(op))
      continue;
    bool usesSet = llvm::any_of(op->getOperands(), [&](Value v) {
      Operation *def = v.getDefiningOp();
      return def && set.contains(def);
    });
    if (!usesSet || !accepts(op, set))
      continue;
    set.insert(op);
    if (createsCycle(set)) {
      set.erase(op);
      note(op, "not fused into the " + anchor->getName().getStringRef() +
                   " group: it would create a cycle");
    }
  }
}

/// GEMM and reduction groups yield exactly one value, and their anchor result
/// only when nothing else is fused after it: drop the latest consumers until
/// that holds.
void Fuser::trimToOneResult(Operation *anchor, OpSet &set) {
  while (true) {
    Operation *last = nullptr;
    for (Operation *op : set)
      if (anchor->isBeforeInBlock(op) && (!last || last->isBeforeInBlock(op)))
        last = op;
    if (!last)
      return;
    SmallVector<Value> out = escaping(set);
    if (out.size() <= 1 && !llvm::is_contained(out, anchor->getResult(0)))
      return;
    set.erase(last);
    note(last, "not fused into the " + anchor->getName().getStringRef() +
                   " group: the group would yield more than one value");
  }
}

//===----------------------------------------------------------------------===//
// Wrapping and the report
//===----------------------------------------------------------------------===//

/// `kgraph.add at 12:8`, with " (recomputed)" for a clone.
static std::string describe(Operation *op, bool isClone) {
  std::string text = op->getName().getStringRef().str();
  if (auto loc = llvm::dyn_cast<FileLineColLoc>(op->getLoc()))
    text += " at " + std::to_string(loc.getLine()) + ":" +
            std::to_string(loc.getColumn());
  if (isClone)
    text += " (recomputed)";
  return text;
}

void Fuser::wrapGroups() {
  for (Group &group : groups) {
    if (group.dead)
      continue;
    SmallVector<Operation *> ops(group.ops.begin(), group.ops.end());
    llvm::sort(
        ops, [](Operation *a, Operation *b) { return a->isBeforeInBlock(b); });
    OpSet set(ops.begin(), ops.end());
    SmallVector<Value> results = escaping(set);
    // Dead code computes nothing anyone reads: no kernel for it.
    if (results.empty())
      continue;
    std::string names;
    for (Operation *op : ops)
      names +=
          (names.empty() ? "" : ", ") + describe(op, recomputed.contains(op));
    // The group is located at its first op that is not a recomputed copy.
    Operation *first = ops.front();
    for (Operation *op : ops)
      if (!recomputed.contains(op)) {
        first = op;
        break;
      }
    Location loc = first->getLoc();
    FusedOp fused = wrapInFusedOp(builder, ops, results, group.kind);
    fused->setLoc(loc);
    if (options.report)
      fused.emitRemark() << "fused " << ops.size() << " ops into "
                         << (group.kind == GroupKind::elementwise ? "an "
                                                                  : "a ")
                         << kindName(group.kind) << " group with "
                         << results.size() << " result"
                         << (results.size() == 1 ? "" : "s") << ": " << names;
  }
  // A group sits where its last op was; users between its first and last op
  // move after it (the grouping is acyclic, so an order exists).
  sortTopologically(body, body->without_terminator());
}

/// A value recomputed by all its users leaves its original dead (inside a
/// group, it would be computed and thrown away): erase such originals, and
/// drop groups left with fewer than two ops (kgraph-form-kernels wraps them).
void Fuser::eraseDeadCloneSources() {
  SmallVector<Operation *> worklist(cloneSources.begin(), cloneSources.end());
  while (!worklist.empty()) {
    Operation *op = worklist.pop_back_val();
    if (!cloneSources.contains(op) || !op->use_empty())
      continue;
    cloneSources.remove(op);
    if (int g = findGroup(op); g >= 0) {
      groups[g].ops.remove(op);
      groupOf.erase(op);
    }
    whyNot.erase(op);
    for (Value operand : op->getOperands())
      if (Operation *def = operand.getDefiningOp())
        worklist.push_back(def);
    op->erase();
  }
  for (Group &group : groups) {
    if (group.dead || group.ops.size() > 1)
      continue;
    group.dead = true;
    for (Operation *op : group.ops)
      groupOf.erase(op);
  }
}

void Fuser::run() {
  foldTransposedGemmOperands();
  formStencilGroups();
  formGemmGroups();
  formWindowGroups();
  formWinogradGroups();
  formReductionGroups();
  formElementwiseGroups();
  formConcatChainGroups();
  eraseDeadCloneSources();
  if (options.report) {
    for (Operation &op : func.getBody().front()) {
      if (!isKernelOp(&op) || groupOf.count(&op))
        continue;
      if (isViewOp(&op)) {
        op.emitRemark() << "not fused: a view of its input's buffer (no "
                           "kernel)";
        continue;
      }
      if (getConcatInputByteOffsets(&op)) {
        op.emitRemark() << "not fused: its inputs are written in place into "
                           "views of its buffer (no kernel)";
        continue;
      }
      auto it = whyNot.find(&op);
      op.emitRemark() << "not fused: "
                      << (it != whyNot.end()
                              ? it->second
                              : std::string("no producer or consumer it can "
                                            "be fused with"));
    }
  }
  wrapGroups();
}

void kgraph::fuseFunction(func::FuncOp func, const FusionOptions &options) {
  if (func.getBody().empty())
    return;
  Fuser(func, options).run();
}

namespace {
struct FusePass : public kgraph::impl::KGraphFuseBase<FusePass> {
  using KGraphFuseBase::KGraphFuseBase;
  void runOnOperation() override {
    FusionOptions fusion;
    fusion.maxRecompute = maxRecompute;
    fusion.report = report;
    fuseFunction(getOperation(), fusion);
  }
};
} // namespace
