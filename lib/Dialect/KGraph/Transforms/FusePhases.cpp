//===- FusePhases.cpp - the phases of kgraph-fuse ------------------------===//
//
// The four phases of the grouping, in the order of docs/fusion.md: stencil
// chains, GEMM anchors with epilogue and prologue, reductions with producers
// and consumers (several reductions of the same rows in one group), then
// maximal elementwise groups (Fuser.h; the rules are FusionRules.h).
//
//===----------------------------------------------------------------------===//

#include "Fuser.h"

#include "kgraph/Dialect/KGraph/IR/AccessMap.h"
#include "kgraph/Dialect/KGraph/Transforms/ReduceTiling.h"

#include "mlir/Dialect/Arith/IR/Arith.h"

using namespace mlir;
using namespace kgraph;
using namespace kgraph::detail;

static ArrayRef<int64_t> shapeOf(Value v) {
  if (auto t = llvm::dyn_cast<RankedTensorType>(v.getType()))
    return t.getShape();
  return {};
}

static bool isStaticTensor(Value v) {
  auto t = llvm::dyn_cast<RankedTensorType>(v.getType());
  return t && t.hasStaticShape();
}

//===----------------------------------------------------------------------===//
// Phase 0: transposed GEMM operands become transpose flags
//===----------------------------------------------------------------------===//

/// Whether `permutation` swaps the last two dims and keeps the others.
static bool swapsLastTwo(ArrayRef<int64_t> permutation) {
  int64_t rank = permutation.size();
  if (rank < 2 || permutation[rank - 1] != rank - 2 ||
      permutation[rank - 2] != rank - 1)
    return false;
  for (int64_t d = 0; d < rank - 2; ++d)
    if (permutation[d] != d)
      return false;
  return true;
}

/// matmul(transpose(x)) with a transpose of the matrix dims reads x with the
/// operand's transpose flag toggled: the GEMM kernel loads either layout, so
/// the transposed copy is never made (the transpose stays for other users).
void Fuser::foldTransposedGemmOperands() {
  for (Operation &op : *body) {
    auto mm = llvm::dyn_cast<MatmulOp>(&op);
    if (!mm)
      continue;
    for (unsigned i = 0; i < 2; ++i) {
      auto t = mm->getOperand(i).getDefiningOp<TransposeOp>();
      if (!t || !swapsLastTwo(t.getPermutation()))
        continue;
      mm->setOperand(i, t.getInput());
      if (i == 0)
        mm.setTransposeA(!mm.getTransposeA());
      else
        mm.setTransposeB(!mm.getTransposeB());
      if (t->use_empty())
        t->erase();
    }
  }
}

//===----------------------------------------------------------------------===//
// Phase 1: stencil chains
//===----------------------------------------------------------------------===//

void Fuser::formStencilGroups() {
  for (Operation &seedOp : llvm::make_early_inc_range(*body)) {
    Operation *seed = &seedOp;
    if (!isFree(seed) || !llvm::isa<Conv2dOp, Pool2dOp>(seed))
      continue;
    std::string why;
    if (!isStencilOp(seed, &why)) {
      note(seed, seed->getName().getStringRef().drop_front(7) +
                     " is not a stencil op: " + why);
      continue;
    }
    StencilGrid grid = getStencilGrid(seed);
    OpSet set;
    set.insert(seed);
    growConsumers(seed, set, [&](Operation *op, const OpSet &s) {
      auto inSet = [&](Value v) {
        Operation *def = v.getDefiningOp();
        return def && s.contains(def);
      };
      // A stencil op joins through its input; a conv2d filter is a weight
      // from outside, never a value on the grid. The group stores each value
      // once, padded for its readers: a reader that needs other padding
      // (max pool's -inf against zero) stays out.
      if (llvm::isa<Conv2dOp, Pool2dOp>(op)) {
        Value in = op->getOperand(0);
        auto otherFill = [&](Operation *user) {
          return user != op && s.contains(user) &&
                 llvm::isa<Conv2dOp, Pool2dOp>(user) &&
                 user->getOperand(0) == in &&
                 getStencilFill(user) != getStencilFill(op);
        };
        return isStencilOp(op) && getStencilGrid(op) == grid && inSet(in) &&
               (op->getNumOperands() == 1 || !inSet(op->getOperand(1))) &&
               llvm::none_of(in.getUsers(), otherFill);
      }
      return isStencilElementwiseOp(op, grid, inSet);
    });
    // Elementwise producers on the grid used only by the group.
    bool changed = true;
    while (changed) {
      changed = false;
      for (Operation *member : SmallVector<Operation *>(set.begin(), set.end()))
        for (Value operand : member->getOperands()) {
          Operation *def = operand.getDefiningOp();
          if (!isFree(def) || set.contains(def) ||
              !llvm::all_of(def->getUsers(),
                            [&](Operation *u) { return set.contains(u); }) ||
              !isStencilElementwiseOp(def, grid, [](Value) { return false; }))
            continue;
          set.insert(def);
          if (createsCycle(set)) {
            set.erase(def);
            continue;
          }
          changed = true;
        }
    }
    if (set.size() > 1)
      addGroup(GroupKind::stencil, set);
    else
      note(seed, "stencil op with no fusible neighbour");
  }
}

//===----------------------------------------------------------------------===//
// Phase 2: GEMM anchors, epilogues and prologues
//===----------------------------------------------------------------------===//

void Fuser::formGemmGroups() {
  for (Operation &anchorOp : llvm::make_early_inc_range(*body)) {
    Operation *anchor = &anchorOp;
    if (!isFree(anchor) || !isGemmAnchor(anchor))
      continue;
    OpSet set;
    set.insert(anchor);
    ArrayRef<int64_t> shape = shapeOf(anchor->getResult(0));

    // Epilogue: only when the anchor result is used by nothing else.
    Value result = anchor->getResult(0);
    unsigned numUses = std::distance(result.use_begin(), result.use_end());
    Operation *onlyUser = numUses == 1 ? *result.user_begin() : nullptr;
    if (numUses > 1) {
      note(anchor,
           "no epilogue fused: its result has " + Twine(numUses) + " users");
      for (Operation *user : result.getUsers())
        if (isFree(user) && isElementwiseOp(user))
          note(user, "not fused into the " + anchor->getName().getStringRef() +
                         " epilogue: its operand has " + Twine(numUses) +
                         " users");
    } else if (onlyUser && isFree(onlyUser) &&
               isEpilogueCandidate(onlyUser, shape,
                                   [&](Value v) { return v == result; })) {
      growEpilogue(anchor, shape, set);
      // Never empties the epilogue: {anchor, its only user} yields one value.
      trimToOneResult(anchor, set);
      // Transposed, broadcast or sliced epilogue inputs are read through
      // their access maps.
      SmallVector<Operation *> epilogue;
      for (Operation *member : set)
        if (member != anchor)
          epilogue.push_back(member);
      llvm::sort(epilogue, [](Operation *a, Operation *b) {
        return a->isBeforeInBlock(b);
      });
      SmallVector<Operation *> clones;
      for (Operation *member : epilogue)
        absorbAccessMapProducers(member, set, clones, /*chains=*/false);
    } else if (onlyUser) {
      note(anchor, "no epilogue fused: its user '" +
                       onlyUser->getName().getStringRef() +
                       "' is not an elementwise op of the result's shape");
    }

    // Prologue (matmul only): up to two casts / scalings per operand.
    if (llvm::isa<MatmulOp>(anchor)) {
      for (unsigned operandIndex = 0; operandIndex < 2; ++operandIndex) {
        Operation *consumer = anchor;
        unsigned consumerOperand = operandIndex;
        for (unsigned step = 0; step < kMaxPrologueOps; ++step) {
          Value v = consumer->getOperand(consumerOperand);
          Operation *def = v.getDefiningOp();
          if (!isFree(def) || !isPrologueOp(def))
            break;
          // A prologue reads a group input; a splat there would be cloned
          // into the group (a cast of a splat stays its own kernel).
          if (isSplatConstant(getPrologueInput(def)))
            break;
          // Shared: recompute a private copy (one cheap op).
          bool shared = !v.hasOneUse();
          if (shared && options.maxRecompute == 0) {
            note(def, "not fused into the matmul prologue: its result has "
                      "other users and recomputation is off");
            break;
          }
          Operation *member =
              adoptProducer(consumer, consumerOperand, shared, set);
          if (!member) {
            note(def, "not fused into the matmul prologue: it would create a "
                      "cycle");
            break;
          }
          Value input = getPrologueInput(member);
          consumer = member;
          consumerOperand = input == member->getOperand(0) ? 0 : 1;
        }
        absorbGemmOperandSlice(consumer, consumerOperand, set);
      }
    }
    if (set.size() > 1)
      addGroup(GroupKind::gemm, set);
  }
}

//===----------------------------------------------------------------------===//
// Phase 2b: window ops (channels-last pools, depthwise and grouped convs)
//===----------------------------------------------------------------------===//

void Fuser::formWindowGroups() {
  for (Operation &anchorOp : llvm::make_early_inc_range(*body)) {
    Operation *anchor = &anchorOp;
    if (!isFree(anchor) || !llvm::isa<Conv2dOp, Pool2dOp>(anchor))
      continue;
    std::string why;
    if (!isWindowOp(anchor, &why)) {
      note(anchor, anchor->getName().getStringRef().drop_front(7) +
                       " is not a window op: " + why);
      continue;
    }
    OpSet set;
    set.insert(anchor);
    // Producers of the input's shape (after the GEMM phase, so a GEMM keeps
    // its epilogue): evaluated at every window tap that reads them; one
    // also used outside is recomputed while the budget lasts.
    ArrayRef<int64_t> inShape = shapeOf(anchor->getOperand(0));
    adoptShapedProducers({{anchor, 0}}, inShape, set, "the window op");
    // Consumers of the result's shape (bias, residual, activation).
    ArrayRef<int64_t> outShape = shapeOf(anchor->getResult(0));
    growEpilogue(anchor, outShape, set);
    trimToOneResult(anchor, set);
    if (set.size() > 1)
      addGroup(GroupKind::window, set);
    else
      note(anchor, "window op with no elementwise producer or consumer to "
                   "fuse");
  }
}

//===----------------------------------------------------------------------===//
// Phase 2c: Winograd output transforms and their epilogues
//===----------------------------------------------------------------------===//

void Fuser::formWinogradGroups() {
  for (Operation &anchorOp : llvm::make_early_inc_range(*body)) {
    Operation *anchor = &anchorOp;
    if (!isFree(anchor) || !llvm::isa<WinogradOutputOp>(anchor))
      continue;
    OpSet set;
    set.insert(anchor);
    // Consumers of the conv's output shape (bias, residual, activation),
    // computed where each output pixel is.
    growEpilogue(anchor, shapeOf(anchor->getResult(0)), set);
    trimToOneResult(anchor, set);
    if (set.size() > 1)
      addGroup(GroupKind::elementwise, set);
    else
      note(anchor, "Winograd output transform with no elementwise consumer "
                   "to fuse");
  }
}

//===----------------------------------------------------------------------===//
// Phase 3: reductions
//===----------------------------------------------------------------------===//

/// The unshared producers over the rows of `rows` that feed `seeds`: free
/// elementwise ops of the rows' shape (their operands broadcast to it) all
/// of whose users are in `set` or already in `cone`, transitively; appended
/// to `cone`.
void Fuser::collectRowProducers(ArrayRef<Operation *> seeds,
                                const ReduceRows &rows, const OpSet &set,
                                SmallVectorImpl<Operation *> &cone) {
  SmallVector<Operation *> worklist(seeds.begin(), seeds.end());
  while (!worklist.empty()) {
    Operation *consumer = worklist.pop_back_val();
    for (Value operand : consumer->getOperands()) {
      Operation *def = operand.getDefiningOp();
      if (!isFree(def) || set.contains(def) || llvm::is_contained(cone, def) ||
          !isEpilogueCandidate(def, rows.shape, [](Value) { return false; }) ||
          !llvm::all_of(def->getUsers(), [&](Operation *u) {
            return set.contains(u) || llvm::is_contained(cone, u);
          }))
        continue;
      cone.push_back(def);
      worklist.push_back(def);
    }
  }
}

/// A multi-reduction group over the rows of `reduce` (docs/fusion.md): grown
/// to a fixed point by (a) the free ops that read its values and may join
/// it (isRowGroupOp: reductions of the same rows, elementwise ops over the
/// rows or per row), (b) the producers over the rows whose users are all in
/// it, (c) sibling reductions of the same rows whose unshared producers read
/// a value the group reads (E[x^2] beside E[x]); then shared producers are
/// recomputed within the budget, as for a single reduction. Returns false,
/// changing nothing, when the group would read its rows only once (one
/// reduction, nothing over the rows after it): formReductionGroups then
/// forms the single-pass group.
bool Fuser::formMultiReductionGroup(ReduceOp reduce) {
  ReduceRows rows = getReduceRows(reduce);
  if (!isMultiReductionProfitable(rows)) {
    note(reduce, "no multi-reduction group: " + Twine(rows.getNumRows()) +
                     " rows too long to hold in registers are too few to "
                     "fill the GPU");
    return false;
  }
  OpSet set;
  set.insert(reduce);
  auto inSet = [&](Value v) {
    Operation *def = v.getDefiningOp();
    return def && set.contains(def);
  };
  auto tryAdd = [&](ArrayRef<Operation *> ops) {
    set.insert(ops.begin(), ops.end());
    if (!createsCycle(set))
      return true;
    for (Operation *op : ops)
      set.erase(op);
    return false;
  };
  SmallVector<std::pair<Operation *, std::string>> pending;
  for (bool changed = true; changed;) {
    changed = false;
    // (a) Readers of the group's values.
    for (Operation &opRef : *body) {
      Operation *op = &opRef;
      if (!isFree(op) || set.contains(op) ||
          llvm::none_of(op->getOperands(), inSet) ||
          !isRowGroupOp(op, rows, inSet))
        continue;
      if (tryAdd({op}))
        changed = true;
      else
        pending.push_back({op, "not fused into the kgraph.reduce group: it "
                               "would create a cycle"});
    }
    // (b) Producers no one else reads.
    SmallVector<Operation *> members(set.begin(), set.end());
    SmallVector<Operation *> cone;
    collectRowProducers(members, rows, set, cone);
    if (!cone.empty() && tryAdd(cone))
      changed = true;
    // (c) Reductions of the same rows beside the group's.
    llvm::SmallPtrSet<Value, 8> reads;
    for (Operation *member : set)
      for (Value v : member->getOperands())
        if (!inSet(v) && !isSplatConstant(v))
          reads.insert(v);
    for (Operation &opRef : *body) {
      auto sibling = llvm::dyn_cast<ReduceOp>(&opRef);
      if (!sibling || !isFree(sibling) || set.contains(sibling) ||
          getReduceRows(sibling) != rows)
        continue;
      SmallVector<Operation *> ops{sibling};
      collectRowProducers({sibling}, rows, set, ops);
      bool shares = llvm::any_of(ops, [&](Operation *op) {
        return llvm::any_of(op->getOperands(),
                            [&](Value v) { return reads.contains(v); });
      });
      if (shares && tryAdd(ops))
        changed = true;
    }
  }

  // The rows are read more than once: several reductions, or a value over
  // the rows computed from one.
  unsigned numReduces = 0;
  bool rowsAfterReduce = false;
  OpSet downstream;
  SmallVector<Operation *> ordered(set.begin(), set.end());
  llvm::sort(ordered,
             [](Operation *a, Operation *b) { return a->isBeforeInBlock(b); });
  for (Operation *op : ordered) {
    if (llvm::isa<ReduceOp>(op)) {
      ++numReduces;
      downstream.insert(op);
      continue;
    }
    if (llvm::none_of(op->getOperands(), [&](Value v) {
          return downstream.contains(v.getDefiningOp());
        }))
      continue;
    downstream.insert(op);
    rowsAfterReduce |= !rows.isPerRowShape(shapeOf(op->getResult(0)));
  }
  if (numReduces < 2 && !rowsAfterReduce)
    return false;
  for (auto &[op, why] : pending)
    if (!set.contains(op))
      note(op, why);

  // Shared producers over the rows: recomputed while the budget lasts.
  SmallVector<std::pair<Operation *, unsigned>> operands;
  for (Operation *op : ordered)
    for (unsigned i = 0; i < op->getNumOperands(); ++i)
      operands.push_back({op, i});
  adoptShapedProducers(std::move(operands), rows.shape, set, "the reduce");
  addGroup(GroupKind::reduce, set);
  return true;
}

/// Takes into `set` the producers of shape `shape` (elementwise, operands
/// broadcasting to it) of the operands in `worklist` (consumer, operand
/// index), and transitively theirs, the one defined last first; a producer
/// that something outside the set also reads is cloned (recomputed) while
/// the budget lasts. With
/// `inlineSmaller` (a single-pass reduction), also elementwise producers of
/// other shapes (smaller ones broadcast to their consumers, larger ones feed
/// an inline reduction) and small reductions (isInlineReduceOp), evaluated
/// wherever they are read: at most kMaxInlineEvaluations times per element
/// of their result.
void Fuser::adoptShapedProducers(
    SmallVector<std::pair<Operation *, unsigned>> worklist,
    ArrayRef<int64_t> shape, OpSet &set, StringRef anchorName,
    bool inlineSmaller) {
  auto numElements = [](Value v) {
    return llvm::cast<ShapedType>(v.getType()).getNumElements();
  };
  // How often the kernel evaluates each element of a member's result.
  DenseMap<Operation *, int64_t> evaluations;
  auto evaluationsOf = [&](Operation *consumer, Value operand) -> int64_t {
    int64_t perConsumer = evaluations.lookup(consumer);
    if (perConsumer == 0 || !isStaticTensor(operand) ||
        !isStaticTensor(consumer->getResult(0)) || numElements(operand) == 0)
      return 1;
    int64_t reads = numElements(consumer->getResult(0));
    if (auto reduce = llvm::dyn_cast<ReduceOp>(consumer))
      reads *= getReducedElementCount(reduce);
    return perConsumer * std::max<int64_t>(1, reads / numElements(operand));
  };
  auto isCandidate = [&](Operation *def, int64_t times) {
    if (isEpilogueCandidate(def, shape, [](Value) { return false; }))
      return true;
    // Any shape the consumer reads (its operand broadcasts to its result,
    // or is the input of an inline reduction): the evaluation count bounds
    // the recomputation.
    if (!inlineSmaller || times > kMaxInlineEvaluations ||
        def->getNumResults() != 1 || !isStaticTensor(def->getResult(0)))
      return false;
    if (isInlineReduceOp(def))
      return true;
    return isEpilogueCandidate(def, shapeOf(def->getResult(0)),
                               [](Value) { return false; });
  };
  auto defOf = [](const std::pair<Operation *, unsigned> &item) {
    return item.first->getOperand(item.second).getDefiningOp();
  };
  unsigned recomputed = 0;
  while (!worklist.empty()) {
    // The producer defined last first: the other users of an earlier one
    // (inv in inv * inv * inv) are then already members where they join,
    // so it is not counted as shared and recomputed.
    auto next = worklist.end() - 1;
    for (auto it = worklist.begin(); it != worklist.end(); ++it) {
      Operation *d = defOf(*it), *best = defOf(*next);
      if (d && (!best || (d->getBlock() == best->getBlock() &&
                          best->isBeforeInBlock(d))))
        next = it;
    }
    Operation *consumer = next->first;
    unsigned index = next->second;
    worklist.erase(next);
    Value operand = consumer->getOperand(index);
    Operation *def = operand.getDefiningOp();
    if (!isFree(def) || set.contains(def))
      continue;
    int64_t times = evaluationsOf(consumer, operand);
    if (!isCandidate(def, times))
      continue;
    bool shared = llvm::any_of(def->getUsers(), [&](Operation *u) {
      return u != consumer && !set.contains(u);
    });
    if (shared && recomputed >= options.maxRecompute) {
      note(def, "not fused into " + anchorName +
                    " as a producer: its result has other users and the "
                    "recomputation budget is spent");
      continue;
    }
    Operation *member = adoptProducer(consumer, index, shared, set);
    if (!member) {
      note(def, "not fused into " + anchorName + ": it would create a cycle");
      continue;
    }
    if (shared)
      ++recomputed;
    evaluations[member] = times;
    for (unsigned i = 0; i < member->getNumOperands(); ++i)
      worklist.push_back({member, i});
  }
}

void Fuser::formReductionGroups() {
  // A small reduction feeding a reduction of other rows (the N-body's sum
  // over x, y, z inside the sum over bodies) waits until that one has
  // formed its group, which may evaluate it inline; if it does not, it forms
  // its own group after the others.
  SmallVector<ReduceOp> deferred;
  for (Operation &anchorOp : llvm::make_early_inc_range(*body)) {
    auto reduce = llvm::dyn_cast<ReduceOp>(&anchorOp);
    if (!reduce || !isFree(reduce))
      continue;
    if (isInlinedReduce(reduce))
      deferred.push_back(reduce);
    else
      formReductionGroup(reduce);
  }
  for (ReduceOp reduce : deferred)
    if (isFree(reduce))
      formReductionGroup(reduce);
}

void Fuser::formReductionGroup(ReduceOp reduce) {
  if (formMultiReductionGroup(reduce))
    return;
  OpSet set;
  set.insert(reduce);

  // Producers of the reduce input's shape, and smaller ones and small
  // reductions evaluated inline; a producer also used outside is cloned
  // (recomputed) while the budget lasts.
  adoptShapedProducers({{reduce, 0}}, shapeOf(reduce.getInput()), set,
                       "the reduce", /*inlineSmaller=*/true);

  // Consumers of the reduce result's shape.
  ArrayRef<int64_t> outShape = shapeOf(reduce.getResult());
  growEpilogue(reduce, outShape, set);
  trimToOneResult(reduce, set);
  if (set.size() > 1)
    addGroup(GroupKind::reduce, set);
  else
    note(reduce, "reduce with no elementwise producer or consumer to fuse");
}

//===----------------------------------------------------------------------===//
// Phase 4: elementwise groups
//===----------------------------------------------------------------------===//

void Fuser::formElementwiseGroups() {
  // An elementwise kernel stores its results over one iteration space, so
  // the values a group yields must share one shape.
  auto yieldsOneShape = [&](const OpSet &set) {
    SmallVector<Value> out = escaping(set);
    return llvm::all_of(out, [&](Value v) {
      return shapeOf(v) == shapeOf(out.front());
    });
  };
  for (Operation &opRef : llvm::make_early_inc_range(*body)) {
    Operation *op = &opRef;
    if (!isFree(op) || !isElementwiseOp(op))
      continue;
    OpSet set;
    set.insert(op);
    SmallVector<unsigned> merged;
    SmallVector<Operation *> allClones;
    absorbAccessMapProducers(op, set, allClones);
    for (unsigned i = 0; i < op->getNumOperands(); ++i) {
      Value v = op->getOperand(i);
      int g = findGroup(v.getDefiningOp() ? v.getDefiningOp() : nullptr);
      if (g < 0 || groups[g].kind != GroupKind::elementwise ||
          llvm::is_contained(merged, unsigned(g)))
        continue;
      OpSet candidate = set;
      candidate.insert(groups[g].ops.begin(), groups[g].ops.end());
      bool cycle = createsCycle(candidate, op);
      if (!cycle && yieldsOneShape(candidate)) {
        set = std::move(candidate);
        merged.push_back(g);
        continue;
      }
      // Merging would close a cycle through another group, or make the group
      // yield values of two shapes: recompute the value here instead, if its
      // cone in that group is small.
      StringRef why = cycle ? "it would create a cycle"
                            : "the group would yield values of two shapes";
      auto cone =
          collectCone(v, [&](Operation *def) { return findGroup(def) == g; });
      if (!cone) {
        note(op, "not fused with the elementwise group of its operand #" +
                     Twine(i) + ": " + why);
        continue;
      }
      SmallVector<Operation *> clones;
      Value copy = cloneCone(*cone, v, op, clones);
      op->setOperand(i, copy);
      OpSet withClones = set;
      withClones.insert(clones.begin(), clones.end());
      if (createsCycle(withClones, op) || !yieldsOneShape(withClones)) {
        op->setOperand(i, v);
        eraseClones(clones);
        note(op, "not fused with the elementwise group of its operand #" +
                     Twine(i) + ": " + why);
        continue;
      }
      set = std::move(withClones);
      allClones.append(clones.begin(), clones.end());
    }
    // Program order without a full sort: each merged group is in order and
    // precedes the clones (placed right before `op`) and `op` itself.
    SmallVector<Operation *> ordered;
    for (unsigned g : merged) {
      groups[g].dead = true;
      ordered.append(groups[g].ops.begin(), groups[g].ops.end());
    }
    if (merged.size() > 1)
      llvm::sort(ordered, [](Operation *a, Operation *b) {
        return a->isBeforeInBlock(b);
      });
    ordered.append(allClones.begin(), allClones.end());
    // Access-map producers taken as they are (not cloned) precede `op`.
    SmallVector<Operation *> taken;
    for (Operation *member : set)
      if (isElementwiseReadOp(member) && !llvm::is_contained(ordered, member))
        taken.push_back(member);
    llvm::sort(taken,
               [](Operation *a, Operation *b) { return a->isBeforeInBlock(b); });
    ordered.append(taken.begin(), taken.end());
    if (!taken.empty() || !allClones.empty())
      llvm::sort(ordered, [](Operation *a, Operation *b) {
        return a->isBeforeInBlock(b);
      });
    ordered.push_back(op);
    addGroup(GroupKind::elementwise, std::move(ordered));
  }
  // One-op elementwise groups are left to kgraph-form-kernels.
  for (Group &group : groups) {
    if (group.dead || group.kind != GroupKind::elementwise ||
        group.ops.size() > 1)
      continue;
    group.dead = true;
    groupOf.erase(group.ops.front());
  }
}

void Fuser::formConcatChainGroups() {
  // Data movement the lane evaluator reads through: a concat not written in
  // place (its inputs' segments), a transpose, slice or broadcast_to (its
  // access map).
  auto movement = [&](Operation *op) {
    if (!isFree(op))
      return false;
    if (llvm::isa<ConcatOp>(op))
      return !getConcatInputByteOffsets(op);
    return isAccessMapOp(op) && succeeded(AccessMap::forDataMovementOp(op));
  };
  // A chain's root: a concat, or a transpose that keeps the innermost dim
  // (W consecutive elements stay one vector; one that moves it keeps its
  // own tiled transpose kernel).
  auto root = [&](Operation *op) {
    if (!movement(op))
      return false;
    if (auto t = llvm::dyn_cast<TransposeOp>(op)) {
      ArrayRef<int64_t> perm = t.getPermutation();
      return !perm.empty() && perm.back() == int64_t(perm.size()) - 1;
    }
    return llvm::isa<ConcatOp>(op);
  };
  // The chains' last ops first: each takes in its whole chain.
  SmallVector<Operation *> roots;
  for (Operation &op : *body)
    if (root(&op))
      roots.push_back(&op);
  for (Operation *op : llvm::reverse(roots)) {
    // Padding a tensor along several axes (kgraph-space-to-depth-convs'
    // filters), or padding then rearranging it (its input's channels
    // padded, then 2x2 pixel blocks transposed into one pixel): one kernel
    // instead of one per step.
    if (!root(op) || llvm::none_of(op->getOperands(), [&](Value v) {
          return movement(v.getDefiningOp());
        }))
      continue;
    OpSet set;
    set.insert(op);
    SmallVector<Operation *> clones;
    absorbAccessMapProducers(op, set, clones);
    if (set.size() == 1)
      continue;
    SmallVector<Operation *> ordered(set.begin(), set.end());
    llvm::sort(ordered, [](Operation *a, Operation *b) {
      return a->isBeforeInBlock(b);
    });
    addGroup(GroupKind::elementwise, std::move(ordered));
  }
}

/// Takes into `set` the slice that operand `index` of `consumer` (the
/// matmul or the first op of its prologue) is, when the GEMM kernel reads
/// it in place (isGemmOperandSlice); a slice with other users is cloned
/// (it is free to recompute), one that would close a cycle stays out.
void Fuser::absorbGemmOperandSlice(Operation *consumer, unsigned index,
                                   OpSet &set) {
  Value v = consumer->getOperand(index);
  Operation *def = v.getDefiningOp();
  if (!isFree(def) || !isGemmOperandSlice(def))
    return;
  if (!adoptProducer(consumer, index, !v.hasOneUse(), set))
    note(def, "not read in place by the matmul: it would create a cycle");
}

/// Takes the producer of operand `index` of `consumer` into `set`: the
/// producer itself, or with `shared` a clone of it right before `consumer`,
/// which then reads the clone (appended to `clones`). Returns the member;
/// null, with everything undone, when it would close a cycle.
Operation *Fuser::adoptProducer(Operation *consumer, unsigned index,
                                bool shared, OpSet &set,
                                SmallVectorImpl<Operation *> *clones) {
  Value v = consumer->getOperand(index);
  Operation *member = v.getDefiningOp();
  SmallVector<Operation *> copy;
  if (shared) {
    cloneCone({member}, v, consumer, copy);
    member = copy.front();
    consumer->setOperand(index, member->getResult(0));
  }
  set.insert(member);
  if (!createsCycle(set)) {
    if (clones)
      clones->append(copy.begin(), copy.end());
    return member;
  }
  set.erase(member);
  if (shared) {
    consumer->setOperand(index, v);
    eraseClones(copy);
  }
  return nullptr;
}

/// Takes into `set` the chains of free transposes, broadcasts and slices
/// (and with `chains`, concats that are not written in place) that feed
/// `op`'s operands: the elementwise kernel reads their inputs through the
/// access maps instead of a materialized copy. A producer with
/// other users is cloned right before its consumer (it is free to
/// recompute); one whose inclusion would close a cycle stays out.
void Fuser::absorbAccessMapProducers(Operation *op, OpSet &set,
                                     SmallVectorImpl<Operation *> &clones,
                                     bool chains) {
  SmallVector<std::pair<Operation *, unsigned>> worklist;
  for (unsigned i = 0; i < op->getNumOperands(); ++i)
    worklist.push_back({op, i});
  while (!worklist.empty()) {
    Operation *consumer = worklist.back().first;
    unsigned index = worklist.back().second;
    worklist.pop_back();
    Value v = consumer->getOperand(index);
    Operation *def = v.getDefiningOp();
    // A concat that is not written in place by its producers is read
    // through its inputs' segments (elementwise groups only: GEMM epilogues
    // read their operands through one access map).
    bool concat = chains && llvm::isa_and_present<ConcatOp>(def) &&
                  !getConcatInputByteOffsets(def);
    if (!isFree(def) || set.contains(def) ||
        (!concat && (!isAccessMapOp(def) ||
                     failed(AccessMap::forDataMovementOp(def)))))
      continue;
    // Without chains (GEMM epilogues), the op reads a value from outside.
    Operation *source = def->getOperand(0).getDefiningOp();
    if (!chains && source && (set.contains(source) || isAccessMapOp(source)))
      continue;
    bool shared = llvm::any_of(def->getUsers(), [&](Operation *u) {
      return u != consumer && !set.contains(u);
    });
    Operation *member = adoptProducer(consumer, index, shared, set, &clones);
    if (!member) {
      note(def, "not fused into the elementwise group of '" +
                    op->getName().getStringRef() +
                    "': it would create a cycle");
      continue;
    }
    if (chains)
      for (unsigned i = 0; i < member->getNumOperands(); ++i)
        worklist.push_back({member, i});
  }
}
