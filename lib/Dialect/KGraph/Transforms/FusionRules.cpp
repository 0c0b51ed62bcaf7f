//===- FusionRules.cpp - which ops kgraph-fuse may group ------------------===//
//
// The predicates of the fused-group contract (FusionRules.h, docs/fusion.md);
// the group-forming algorithm that applies them is Fuse.cpp.
//
//===----------------------------------------------------------------------===//

#include "kgraph/Dialect/KGraph/IR/AccessMap.h"
#include "kgraph/Dialect/KGraph/IR/KGraphClassify.h"
#include "kgraph/Dialect/KGraph/Transforms/FusionRules.h"

#include "mlir/Dialect/Arith/IR/Arith.h"

using namespace mlir;
using namespace kgraph;

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

bool kgraph::isFoldedConstant(Operation *def,
                              function_ref<bool(Operation *)> inGroup) {
  if (def->getNumResults() != 1)
    return true;
  Value v = def->getResult(0);
  if (!llvm::isa<RankedTensorType>(v.getType()))
    return true;
  // The filter of a stencil conv2d: its taps become immediates.
  auto stencilFilter = [](OpOperand &use) {
    return llvm::isa<Conv2dOp>(use.getOwner()) && use.getOperandNumber() == 1 &&
           isStencilOp(use.getOwner());
  };
  // A GEMM kernel loads both operands of its matmul or conv2d from memory
  // (TMA, cp.async, ldmatrix; a slice of an input in place), and a pool2d
  // kernel its input, so even a splat there needs a buffer.
  auto gemmOperand = [&](OpOperand &use) {
    return llvm::isa<MatmulOp, Conv2dOp>(use.getOwner()) &&
           use.getOperandNumber() < 2 && !stencilFilter(use);
  };
  // A slice read in place is the operand too, also below a matmul's
  // prologue: a chain of single-use casts and scalings (analyzeGemmGroup's).
  auto slicedGemmOperand = [&](Operation *slice) {
    Value value = slice->getResult(0);
    for (unsigned step = 0; step <= kMaxPrologueOps; ++step) {
      if (!value.hasOneUse())
        return false;
      OpOperand &u = *value.use_begin();
      Operation *user = u.getOwner();
      if (!inGroup(user))
        return false;
      if (gemmOperand(u))
        return true;
      if (!isPrologueOp(user) || getPrologueInput(user) != value)
        return false;
      value = user->getResult(0);
    }
    return false;
  };
  auto loadedOperand = [&](OpOperand &use) {
    Operation *user = use.getOwner();
    if (isGemmOperandSlice(user))
      return slicedGemmOperand(user);
    return gemmOperand(use) ||
           (llvm::isa<Pool2dOp>(user) && use.getOperandNumber() == 0);
  };
  bool splat = isSplatConstant(v);
  return llvm::all_of(v.getUses(), [&](OpOperand &use) {
    if (!inGroup(use.getOwner()))
      return true;
    return splat ? !loadedOperand(use) : stencilFilter(use);
  });
}

LogicalResult kgraph::verifyKernelConstant(Operation *op) {
  if (op->getNumResults() == 1 && isSplatConstant(op->getResult(0)))
    return success();
  return op->emitOpError("only splat tensor constants can be used inside a "
                         "kernel group");
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
    ActivationAxes axes = getActivationAxes(layout);
    unsigned h = axes.h, w = axes.w, c = axes.c;
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
    // The stencil emitter computes in f32; an integer conv2d is an implicit
    // GEMM (integer MMA or the SIMT path).
    if (!llvm::isa<FloatType>(getElementTypeOrSelf(conv.getInput())) ||
        !llvm::isa<FloatType>(getElementTypeOrSelf(conv.getResult())))
      return fail("conv2d computes integers");
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

StencilFill kgraph::getStencilFill(Operation *op) {
  if (auto pool = llvm::dyn_cast<Pool2dOp>(op))
    return pool.getKind() == PoolKind::max ? StencilFill::NegInf
                                           : StencilFill::Zero;
  return StencilFill::Zero;
}

bool kgraph::isWindowOp(Operation *op, std::string *whyNot) {
  auto fail = [&](const Twine &why) {
    if (whyNot)
      *whyNot = why.str();
    return false;
  };
  Layout layout;
  if (auto pool = llvm::dyn_cast<Pool2dOp>(op)) {
    layout = pool.getLayout();
  } else if (auto conv = llvm::dyn_cast<Conv2dOp>(op)) {
    layout = conv.getLayout();
    ArrayRef<int64_t> in = shapeOf(conv.getInput());
    if (conv.getGroups() <= 1)
      return fail("conv2d has one group (a GEMM)");
    if (in.size() != 4)
      return fail("conv2d input is not 4-D");
    int64_t perGroup =
        in[getActivationAxes(layout).c] / std::max<int64_t>(1, conv.getGroups());
    if (perGroup > kMaxWindowGroupChannels)
      return fail("conv2d has " + Twine(perGroup) +
                  " input channels per group (at most " +
                  Twine(kMaxWindowGroupChannels) + ")");
  } else {
    return fail("'" + op->getName().getStringRef() +
                "' is not a conv2d or pool2d");
  }
  if (layout != Layout::nhwc)
    return fail("layout is nchw (window kernels read channels-last "
                "vectors)");
  if (shapeOf(op->getOperand(0)).size() != 4 ||
      shapeOf(op->getResult(0)).size() != 4)
    return fail("operands are not 4-D tensors");
  if (isStencilOp(op))
    return fail("it is a stencil op");
  return true;
}

bool kgraph::isGemmAnchor(Operation *op) {
  if (llvm::isa<MatmulOp>(op))
    return true;
  return llvm::isa<Conv2dOp>(op) && !isStencilOp(op) && !isWindowOp(op);
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

bool kgraph::isGemmOperandSlice(Operation *op) {
  auto slice = llvm::dyn_cast<SliceOp>(op);
  if (!slice || !isRankedTensor(slice.getInput()))
    return false;
  int64_t rank = shapeOf(slice.getInput()).size();
  return (rank == 2 || rank == 3) && slice.getStrides().back() == 1;
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

int64_t ReduceRows::getNumRows() const {
  int64_t n = 1;
  for (auto [d, r] : llvm::zip_equal(shape, reduced))
    if (!r)
      n *= d;
  return n;
}

SmallVector<int64_t> ReduceRows::getKeptShape() const {
  SmallVector<int64_t> kept;
  for (auto [d, r] : llvm::zip_equal(shape, reduced))
    kept.push_back(r ? 1 : d);
  return kept;
}

bool ReduceRows::broadcastsAlongRows(ArrayRef<int64_t> s) const {
  if (s.size() > shape.size())
    return false;
  SmallVector<int64_t> kept = getKeptShape();
  size_t lead = shape.size() - s.size();
  for (size_t d = 0; d < lead; ++d)
    if (kept[d] != 1)
      return false;
  return ArrayRef<int64_t>(kept).drop_front(lead) == s;
}

bool ReduceRows::isPerRowShape(ArrayRef<int64_t> s) const {
  // The same non-unit dims as the kept ones, in order: the same flat order
  // (whatever unit dims keep_dims or broadcasting left).
  SmallVector<int64_t> kept, rest;
  for (auto [d, r] : llvm::zip_equal(shape, reduced))
    if (!r && d != 1)
      kept.push_back(d);
  for (int64_t d : s)
    if (d != 1)
      rest.push_back(d);
  return rest == kept;
}

ReduceRows kgraph::getReduceRows(ReduceOp op) {
  ReduceRows rows;
  auto type = llvm::dyn_cast<RankedTensorType>(op.getInput().getType());
  if (!type)
    return rows;
  rows.shape.assign(type.getShape().begin(), type.getShape().end());
  rows.reduced.assign(rows.shape.size(), false);
  for (int64_t axis : op.getAxes())
    if (axis >= 0 && axis < int64_t(rows.shape.size()) &&
        rows.shape[axis] != 1)
      rows.reduced[axis] = true;
  return rows;
}

int64_t kgraph::getReducedElementCount(ReduceOp op) {
  auto type = llvm::dyn_cast<RankedTensorType>(op.getInput().getType());
  if (!type || !type.hasStaticShape())
    return 0;
  int64_t count = 1;
  for (int64_t axis : op.getAxes())
    if (axis >= 0 && axis < type.getRank())
      count *= type.getDimSize(axis);
  return count;
}

bool kgraph::isInlineReduceOp(Operation *op) {
  auto reduce = llvm::dyn_cast_if_present<ReduceOp>(op);
  if (!reduce || !isRankedTensor(reduce.getResult()))
    return false;
  Type element = getElementTypeOrSelf(reduce.getInput().getType());
  if (!llvm::isa<FloatType, IntegerType>(element) || element.isInteger(1))
    return false;
  int64_t count = getReducedElementCount(reduce);
  return count >= 1 && count <= kMaxInlineReduceElements;
}

bool kgraph::isInlinedReduce(Operation *op) {
  if (!isInlineReduceOp(op))
    return false;
  // Another reduction of the same block reads the result, transitively.
  SmallVector<Operation *> worklist{op};
  llvm::SmallPtrSet<Operation *, 16> seen;
  while (!worklist.empty()) {
    Operation *current = worklist.pop_back_val();
    for (Operation *user : current->getUsers()) {
      if (user->getBlock() != op->getBlock() || !seen.insert(user).second)
        continue;
      if (auto reduce = llvm::dyn_cast<ReduceOp>(user))
        if (getReduceRows(reduce) != getReduceRows(llvm::cast<ReduceOp>(op)))
          return true;
      worklist.push_back(user);
    }
  }
  return false;
}

bool kgraph::isRowGroupOp(Operation *op, const ReduceRows &rows,
                          function_ref<bool(Value)> inGroup) {
  if (auto reduce = llvm::dyn_cast<ReduceOp>(op))
    return getReduceRows(reduce) == rows;
  if (!isElementwiseOp(op) || op->getNumResults() != 1 ||
      !isRankedTensor(op->getResult(0)))
    return false;
  ArrayRef<int64_t> out = shapeOf(op->getResult(0));
  bool overRows = out == ArrayRef<int64_t>(rows.shape);
  if (!overRows && !rows.isPerRowShape(out))
    return false;
  for (Value operand : op->getOperands()) {
    if (!isRankedTensor(operand))
      return false;
    ArrayRef<int64_t> s = shapeOf(operand);
    if (!inGroup(operand)) {
      if (!broadcastsTo(s, out))
        return false;
      continue;
    }
    bool ok = overRows ? (s == ArrayRef<int64_t>(rows.shape) ||
                          rows.broadcastsAlongRows(s))
                       : rows.isPerRowShape(s) && broadcastsTo(s, out);
    if (!ok)
      return false;
  }
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
  ActivationAxes axes = getActivationAxes(layout);
  grid.n = in[axes.n], grid.h = in[axes.h], grid.w = in[axes.w];
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
  ActivationAxes axes = getActivationAxes(grid.layout);
  if (out[axes.n] != grid.n || out[axes.h] != grid.h ||
      out[axes.w] != grid.w || out[axes.c] > kMaxStencilChannels)
    return false;
  for (Value operand : op->getOperands()) {
    if (inGroup(operand) || shapeOf(operand) == out)
      continue;
    if (!isSplatConstant(operand) || !broadcastsTo(shapeOf(operand), out))
      return false;
  }
  return true;
}
