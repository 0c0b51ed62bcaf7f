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
//===----------------------------------------------------------------------===//

#include "kgraph/Dialect/KGraph/IR/KGraphClassify.h"
#include "kgraph/Dialect/KGraph/Transforms/FusionRules.h"
#include "kgraph/Dialect/KGraph/Transforms/Passes.h"

#include "mlir/Analysis/TopologicalSortUtils.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/IRMapping.h"
#include "llvm/ADT/SetVector.h"

namespace kgraph {
#define GEN_PASS_DEF_KGRAPHFUSE
#include "kgraph/Dialect/KGraph/Transforms/Passes.h.inc"
} // namespace kgraph

using namespace mlir;
using namespace kgraph;

//===----------------------------------------------------------------------===//
// Rules
//===----------------------------------------------------------------------===//

static ArrayRef<int64_t> shapeOf(Value v) {
  if (auto t = llvm::dyn_cast<RankedTensorType>(v.getType()))
    return t.getShape();
  return {};
}

static bool isRankedTensor(Value v) {
  return llvm::isa<RankedTensorType>(v.getType());
}

bool kgraph::broadcastsTo(ArrayRef<int64_t> shape, ArrayRef<int64_t> target) {
  if (shape.size() > target.size())
    return false;
  size_t offset = target.size() - shape.size();
  for (auto [i, d] : llvm::enumerate(shape))
    if (d != 1 && d != target[offset + i])
      return false;
  return true;
}

bool kgraph::isSplatConstant(Value value) {
  auto cst = value.getDefiningOp<arith::ConstantOp>();
  if (!cst)
    return false;
  auto dense = llvm::dyn_cast<DenseElementsAttr>(cst.getValue());
  return dense && dense.isSplat();
}

LogicalResult kgraph::verifyKernelConstant(Operation *op) {
  if (op->getNumResults() == 1 && isSplatConstant(op->getResult(0)))
    return success();
  return op->emitOpError("only splat tensor constants can be used inside a "
                         "kernel group");
}

/// H, W and channel positions of a 4-D value in `layout`.
static void gridDims(Layout layout, unsigned &h, unsigned &w, unsigned &c) {
  if (layout == Layout::nhwc) {
    h = 1, w = 2, c = 3;
  } else {
    c = 1, h = 2, w = 3;
  }
}

bool kgraph::isStencilOp(Operation *op, std::string *whyNot) {
  auto fail = [&](const Twine &why) {
    if (whyNot)
      *whyNot = why.str();
    return false;
  };
  auto windowed = [&](Value input, Value result, ArrayRef<int64_t> strides,
                      Layout layout, int64_t kh, int64_t kw,
                      StringRef name) -> bool {
    ArrayRef<int64_t> in = shapeOf(input), out = shapeOf(result);
    if (in.size() != 4 || out.size() != 4)
      return fail(name + " operands are not 4-D tensors");
    unsigned h, w, c;
    gridDims(layout, h, w, c);
    if (strides.size() != 2 || strides[0] != 1 || strides[1] != 1)
      return fail(name + " has strides other than 1");
    if (in[h] != out[h] || in[w] != out[w])
      return fail(name + " changes the spatial size (" + Twine(in[h]) + "x" +
                  Twine(in[w]) + " -> " + Twine(out[h]) + "x" + Twine(out[w]) +
                  ")");
    if (kh > kMaxStencilWindow || kw > kMaxStencilWindow)
      return fail(name + " window " + Twine(kh) + "x" + Twine(kw) +
                  " is larger than 7x7");
    if (in[c] > kMaxStencilChannels)
      return fail(Twine(in[c]) + " input channels");
    if (out[c] > kMaxStencilChannels)
      return fail(Twine(out[c]) + " output channels");
    return true;
  };
  if (auto conv = llvm::dyn_cast<Conv2dOp>(op)) {
    ArrayRef<int64_t> filter = shapeOf(conv.getFilter());
    if (filter.size() != 4)
      return fail("conv2d filter is not 4-D");
    // Filter [F, C, KH, KW] (nchw) or [F, KH, KW, C] (nhwc).
    bool nhwc = conv.getLayout() == Layout::nhwc;
    int64_t kh = nhwc ? filter[1] : filter[2];
    int64_t kw = nhwc ? filter[2] : filter[3];
    ArrayRef<int64_t> dil = conv.getDilations();
    if (dil.size() != 2 || dil[0] != 1 || dil[1] != 1)
      return fail("conv2d has dilations other than 1");
    if (conv.getGroups() != 1)
      return fail("conv2d has " + Twine(conv.getGroups()) + " groups");
    return windowed(conv.getInput(), conv.getResult(), conv.getStrides(),
                    conv.getLayout(), kh, kw, "conv2d");
  }
  if (auto pool = llvm::dyn_cast<Pool2dOp>(op)) {
    ArrayRef<int64_t> kernel = pool.getKernel();
    if (kernel.size() != 2)
      return fail("pool2d kernel is not 2-D");
    return windowed(pool.getInput(), pool.getResult(), pool.getStrides(),
                    pool.getLayout(), kernel[0], kernel[1], "pool2d");
  }
  return fail("'" + op->getName().getStringRef() +
              "' is not a conv2d or pool2d");
}

bool kgraph::isGemmAnchor(Operation *op) {
  if (llvm::isa<MatmulOp>(op))
    return true;
  return llvm::isa<Conv2dOp>(op) && !isStencilOp(op);
}

bool kgraph::isPrologueOp(Operation *op) {
  if (llvm::isa<CastOp>(op))
    return true;
  auto mul = llvm::dyn_cast<MulOp>(op);
  if (!mul)
    return false;
  for (unsigned i = 0; i < 2; ++i) {
    Value scale = mul->getOperand(i), data = mul->getOperand(1 - i);
    if (isSplatConstant(scale) && !isSplatConstant(data) &&
        isRankedTensor(scale) && isRankedTensor(data) &&
        shapeOf(data) == shapeOf(mul.getResult()) &&
        broadcastsTo(shapeOf(scale), shapeOf(data)))
      return true;
  }
  return false;
}

Value kgraph::getPrologueInput(Operation *op) {
  if (auto cast = llvm::dyn_cast<CastOp>(op))
    return cast.getInput();
  if (auto mul = llvm::dyn_cast<MulOp>(op))
    return isSplatConstant(mul.getLhs()) ? mul.getRhs() : mul.getLhs();
  return {};
}

bool kgraph::isEpilogueCandidate(Operation *op, ArrayRef<int64_t> shape,
                                 function_ref<bool(Value)> inGroup) {
  if (!isElementwiseOp(op) || op->getNumResults() != 1 ||
      !isRankedTensor(op->getResult(0)) || shapeOf(op->getResult(0)) != shape)
    return false;
  for (Value operand : op->getOperands())
    if (!inGroup(operand) &&
        (!isRankedTensor(operand) || !broadcastsTo(shapeOf(operand), shape)))
      return false;
  return true;
}

StencilGrid kgraph::getStencilGrid(Operation *stencilOp) {
  Value input;
  Layout layout = Layout::nchw;
  if (auto conv = llvm::dyn_cast<Conv2dOp>(stencilOp)) {
    input = conv.getInput();
    layout = conv.getLayout();
  } else if (auto pool = llvm::dyn_cast<Pool2dOp>(stencilOp)) {
    input = pool.getInput();
    layout = pool.getLayout();
  }
  StencilGrid grid;
  ArrayRef<int64_t> in = input ? shapeOf(input) : ArrayRef<int64_t>();
  if (in.size() != 4)
    return grid;
  unsigned h, w, c;
  gridDims(layout, h, w, c);
  grid.n = in[0], grid.h = in[h], grid.w = in[w];
  grid.layout = layout;
  return grid;
}

bool kgraph::isStencilElementwiseOp(Operation *op, const StencilGrid &grid,
                                    function_ref<bool(Value)> inGroup) {
  if (!isElementwiseOp(op) || op->getNumResults() != 1)
    return false;
  ArrayRef<int64_t> out = shapeOf(op->getResult(0));
  if (out.size() != 4)
    return false;
  unsigned h, w, c;
  gridDims(grid.layout, h, w, c);
  if (out[0] != grid.n || out[h] != grid.h || out[w] != grid.w ||
      out[c] > kMaxStencilChannels)
    return false;
  for (Value operand : op->getOperands()) {
    if (inGroup(operand) || shapeOf(operand) == out)
      continue;
    if (!isSplatConstant(operand) || !broadcastsTo(shapeOf(operand), out))
      return false;
  }
  return true;
}

//===----------------------------------------------------------------------===//
// The grouping
//===----------------------------------------------------------------------===//

namespace {
enum class GroupKind { Stencil, Gemm, Reduction, Elementwise };

static StringRef kindName(GroupKind kind) {
  switch (kind) {
  case GroupKind::Stencil:
    return "stencil";
  case GroupKind::Gemm:
    return "gemm";
  case GroupKind::Reduction:
    return "reduction";
  case GroupKind::Elementwise:
    return "elementwise";
  }
  return "";
}

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
  void formStencilGroups();
  void formGemmGroups();
  void formReductionGroups();
  void formElementwiseGroups();
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
} // namespace

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
      // from outside, never a value on the grid.
      if (llvm::isa<Conv2dOp, Pool2dOp>(op))
        return isStencilOp(op) && getStencilGrid(op) == grid &&
               inSet(op->getOperand(0)) &&
               (op->getNumOperands() == 1 || !inSet(op->getOperand(1)));
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
      addGroup(GroupKind::Stencil, set);
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
      growConsumers(anchor, set, [&](Operation *op, const OpSet &s) {
        return isEpilogueCandidate(op, shape, [&](Value v) {
          Operation *def = v.getDefiningOp();
          return def && s.contains(def);
        });
      });
      // Never empties the epilogue: {anchor, its only user} yields one value.
      trimToOneResult(anchor, set);
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
          Operation *member = def;
          if (!v.hasOneUse()) {
            // Shared: recompute a private copy (one cheap op).
            if (options.maxRecompute == 0) {
              note(def, "not fused into the matmul prologue: its result has "
                        "other users and recomputation is off");
              break;
            }
            SmallVector<Operation *> clones;
            cloneCone({def}, v, consumer, clones);
            member = clones.front();
            consumer->setOperand(consumerOperand, member->getResult(0));
          }
          set.insert(member);
          if (createsCycle(set)) {
            set.erase(member);
            if (member != def) {
              consumer->setOperand(consumerOperand, v);
              eraseClones({member});
            }
            note(def, "not fused into the matmul prologue: it would create a "
                      "cycle");
            break;
          }
          Value input = getPrologueInput(member);
          consumer = member;
          consumerOperand = input == member->getOperand(0) ? 0 : 1;
        }
      }
    }
    if (set.size() > 1)
      addGroup(GroupKind::Gemm, set);
  }
}

//===----------------------------------------------------------------------===//
// Phase 3: reductions
//===----------------------------------------------------------------------===//

void Fuser::formReductionGroups() {
  for (Operation &anchorOp : llvm::make_early_inc_range(*body)) {
    auto reduce = llvm::dyn_cast<ReduceOp>(&anchorOp);
    if (!reduce || !isFree(reduce))
      continue;
    OpSet set;
    set.insert(reduce);
    ArrayRef<int64_t> inShape = shapeOf(reduce.getInput());
    unsigned recomputed = 0;

    // Producers of the reduce input's shape; a producer also used outside is
    // cloned (recomputed) while the budget lasts.
    SmallVector<std::pair<Operation *, unsigned>> worklist{{reduce, 0}};
    while (!worklist.empty()) {
      Operation *consumer = worklist.back().first;
      unsigned index = worklist.back().second;
      worklist.pop_back();
      Value v = consumer->getOperand(index);
      Operation *def = v.getDefiningOp();
      if (!isFree(def) || set.contains(def) ||
          !isEpilogueCandidate(def, inShape, [](Value) { return false; }))
        continue;
      Operation *member = def;
      bool shared = llvm::any_of(def->getUsers(), [&](Operation *u) {
        return u != consumer && !set.contains(u);
      });
      if (shared) {
        if (recomputed >= options.maxRecompute) {
          note(def, "not fused into the reduce as a producer: its result has "
                    "other users and the recomputation budget is spent");
          continue;
        }
        SmallVector<Operation *> clones;
        cloneCone({def}, v, consumer, clones);
        member = clones.front();
        consumer->setOperand(index, member->getResult(0));
        ++recomputed;
      }
      set.insert(member);
      if (createsCycle(set)) {
        set.erase(member);
        if (member != def) {
          consumer->setOperand(index, v);
          eraseClones({member});
          --recomputed;
        }
        note(def, "not fused into the reduce: it would create a cycle");
        continue;
      }
      for (unsigned i = 0; i < member->getNumOperands(); ++i)
        worklist.push_back({member, i});
    }

    // Consumers of the reduce result's shape.
    ArrayRef<int64_t> outShape = shapeOf(reduce.getResult());
    growConsumers(reduce, set, [&](Operation *op, const OpSet &s) {
      return isEpilogueCandidate(op, outShape, [&](Value v) {
        Operation *def = v.getDefiningOp();
        return def && s.contains(def);
      });
    });
    trimToOneResult(reduce, set);
    if (set.size() > 1)
      addGroup(GroupKind::Reduction, set);
    else
      note(reduce, "reduce with no elementwise producer or consumer to fuse");
  }
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
    for (unsigned i = 0; i < op->getNumOperands(); ++i) {
      Value v = op->getOperand(i);
      int g = findGroup(v.getDefiningOp() ? v.getDefiningOp() : nullptr);
      if (g < 0 || groups[g].kind != GroupKind::Elementwise ||
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
    ordered.push_back(op);
    addGroup(GroupKind::Elementwise, std::move(ordered));
  }
  // One-op elementwise groups are left to kgraph-form-kernels.
  for (Group &group : groups) {
    if (group.dead || group.kind != GroupKind::Elementwise ||
        group.ops.size() > 1)
      continue;
    group.dead = true;
    groupOf.erase(group.ops.front());
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
    FusedOp fused = wrapInFusedOp(builder, ops, results);
    fused->setLoc(loc);
    if (options.report)
      fused.emitRemark() << "fused " << ops.size() << " ops into "
                         << (group.kind == GroupKind::Elementwise ? "an "
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
  formStencilGroups();
  formGemmGroups();
  formReductionGroups();
  formElementwiseGroups();
  eraseDeadCloneSources();
  if (options.report) {
    for (Operation &op : func.getBody().front()) {
      if (!isKernelOp(&op) || groupOf.count(&op))
        continue;
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
