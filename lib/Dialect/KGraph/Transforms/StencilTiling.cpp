//===- StencilTiling.cpp - regions and tiling of stencil groups -----------===//
//
// The tiling model (chooseStencilConfig): every candidate tile (tile_h in
// {16, 32, 64}, tile_w in {32, 64, 128}, 256 threads, 4 rows per thread)
// whose shared memory fits the target (two resident blocks per SM) is
// ranked by its estimated work per output pixel:
//
//   work = (sum over ops of region(op) * taps(op)
//           + sum over materialized v of region(v) * channels(v))
//          * blocks per image / (H * W)
//
// divided by the wave efficiency of the grid on the target's SMs. taps is
// the emitter's operations per output (getStencilFilterSlice: zero taps
// skipped, rank-one constant filters as a row and a column pass) summed
// over a conv2d's F x C slices, C * (window ops + 1) for a pool2d, C for an
// elementwise op. Larger tiles lose less to the halo; the shared memory of
// the intermediates bounds them.
//
// Tiles count output positions while shared memory holds input regions,
// which grow with a pool's stride and window. When no usual tile fits, the
// search goes on over smaller tiles (down to 1x1, with as few warps as
// cover them) at two, then one, resident blocks per SM.
//
//===----------------------------------------------------------------------===//

#include "kgraph/Dialect/KGraph/Transforms/StencilTiling.h"
#include "kgraph/Dialect/KGraph/IR/AccessMap.h"
#include "kgraph/Dialect/KGraph/IR/KGraphClassify.h"
#include "kgraph/Dialect/KGraph/Transforms/FusionRules.h"
#include "kgraph/Target/SMTargets.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "llvm/Support/FormatVariadic.h"

#include <functional>

using namespace mlir;
using namespace kgraph;

namespace {
/// Spatial dims of a 4-D shape in `layout`: {N, C, H, W}.
struct Dims4 {
  int64_t n, c, h, w;
};
} // namespace

static Dims4 getDims(ShapedType type, Layout layout) {
  ArrayRef<int64_t> s = type.getShape();
  ActivationAxes axes = getActivationAxes(layout);
  return {s[axes.n], s[axes.c], s[axes.h], s[axes.w]};
}

static Layout getOpLayout(Operation *op) {
  if (auto conv = llvm::dyn_cast<Conv2dOp>(op))
    return conv.getLayout();
  return llvm::cast<Pool2dOp>(op).getLayout();
}

/// Filter extent {KH, KW} of a conv2d.
static std::pair<int64_t, int64_t> getConvKernel(Conv2dOp conv) {
  ArrayRef<int64_t> f = conv.getFilter().getType().getShape();
  if (conv.getLayout() == Layout::nhwc)
    return {f[1], f[2]};
  return {f[2], f[3]};
}

/// The pool2d of a group whose body is that op and the yield of its result.
static Pool2dOp getLonePool(FusedOp group) {
  Block &body = group.getBody().front();
  if (!llvm::hasSingleElement(body.without_terminator()))
    return nullptr;
  auto pool = llvm::dyn_cast<Pool2dOp>(&body.front());
  if (!pool || group.getYield().getValues().size() != 1 ||
      group.getYield().getValues()[0] != pool.getResult())
    return nullptr;
  return pool;
}

bool kgraph::isStencilGroup(FusedOp group) {
  // A conv2d that is not a stencil op (with or without an epilogue) is an
  // implicit GEMM; any pool2d or stencil conv2d makes a stencil group
  // (checkStencilGroup says why it is not a valid one).
  for (Operation &op : group.getBody().front().without_terminator()) {
    if (llvm::isa<Conv2dOp>(op) && isStencilOp(&op))
      return true;
    if (llvm::isa<Pool2dOp>(op))
      return true;
  }
  return false;
}

static InFlightDiagnostic &printArray(InFlightDiagnostic &diag,
                                      ArrayRef<int64_t> values) {
  diag << "[";
  llvm::interleaveComma(values, diag, [&](int64_t v) { diag << v; });
  return diag << "]";
}

/// Checks a conv2d or pool2d of a (multi-op or conv) stencil group.
static LogicalResult checkStencilOp(Operation *op) {
  auto in = llvm::cast<RankedTensorType>(op->getOperand(0).getType());
  auto out = llvm::cast<RankedTensorType>(op->getResult(0).getType());
  // A pool2d of integers is a max pool (avg needs floats, says its
  // verifier) and computes in i32.
  if (llvm::isa<Conv2dOp>(op) && (!llvm::isa<FloatType>(in.getElementType()) ||
                                  !llvm::isa<FloatType>(out.getElementType())))
    return op->emitOpError("in a stencil group must compute floats, got ")
           << in.getElementType() << " -> " << out.getElementType();
  Layout layout = getOpLayout(op);
  Dims4 i = getDims(in, layout), o = getDims(out, layout);
  ArrayRef<int64_t> strides = llvm::isa<Conv2dOp>(op)
                                  ? llvm::cast<Conv2dOp>(op).getStrides()
                                  : llvm::cast<Pool2dOp>(op).getStrides();
  if (!llvm::equal(strides, ArrayRef<int64_t>{1, 1})) {
    InFlightDiagnostic diag = op->emitOpError(
        "in a stencil group must have strides [1, 1], got ");
    return printArray(diag, strides);
  }
  int64_t kh, kw;
  if (auto conv = llvm::dyn_cast<Conv2dOp>(op)) {
    if (!llvm::equal(conv.getDilations(), ArrayRef<int64_t>{1, 1})) {
      InFlightDiagnostic diag = op->emitOpError(
          "in a stencil group must have dilations [1, 1], got ");
      return printArray(diag, conv.getDilations());
    }
    if (conv.getGroups() != 1)
      return op->emitOpError("in a stencil group must have groups = 1, got ")
             << conv.getGroups();
    std::tie(kh, kw) = getConvKernel(conv);
    if (i.c > 4 || o.c > 4)
      return op->emitOpError("in a stencil group has ")
             << i.c << " input and " << o.c
             << " output channels; at most 4 are supported";
    Value filter = conv.getFilter();
    Operation *def = filter.getDefiningOp();
    if (!llvm::isa<BlockArgument>(filter) &&
        !(def && def->hasTrait<mlir::OpTrait::ConstantLike>()))
      return op->emitOpError("filter must be a group input or a constant in "
                             "a stencil group");
  } else {
    ArrayRef<int64_t> k = llvm::cast<Pool2dOp>(op).getKernel();
    kh = k[0];
    kw = k[1];
  }
  if (i.h != o.h || i.w != o.w)
    return op->emitOpError("in a stencil group must keep the spatial size "
                           "(\"same\" padding), got ")
           << i.h << "x" << i.w << " -> " << o.h << "x" << o.w;
  if (kh > 7 || kw > 7)
    return op->emitOpError("in a stencil group has a ")
           << kh << "x" << kw << " window; at most 7x7 is supported";
  return success();
}

LogicalResult kgraph::checkStencilGroup(FusedOp group) {
  if (group.getNumResults() == 0)
    return group.emitOpError("has no results to compute");
  if (getLonePool(group))
    return success();

  // The grid: layout and N, H, W of the first conv2d or pool2d.
  Block &body = group.getBody().front();
  Operation *first = nullptr;
  for (Operation &op : body.without_terminator())
    if (llvm::isa<Conv2dOp, Pool2dOp>(op)) {
      first = &op;
      break;
    }
  if (!first)
    return group.emitOpError("is not a stencil group: it has no kgraph.conv2d "
                             "or kgraph.pool2d");
  Layout layout = getOpLayout(first);
  Dims4 grid = getDims(llvm::cast<ShapedType>(first->getOperand(0).getType()),
                       layout);

  DenseMap<Value, Operation *> fillReader;
  for (Operation &op : body.without_terminator()) {
    if (auto cst = llvm::dyn_cast<arith::ConstantOp>(op)) {
      auto dense = llvm::dyn_cast<DenseElementsAttr>(cst.getValue());
      bool onlyFilters = llvm::all_of(op.getUses(), [](OpOperand &use) {
        return llvm::isa<Conv2dOp>(use.getOwner()) &&
               use.getOperandNumber() == 1;
      });
      if (!dense || (!dense.isSplat() && !onlyFilters))
        return op.emitOpError("only splat tensor constants (and conv2d "
                              "filters) can be used inside a stencil group");
      continue;
    }
    bool stencilOp = llvm::isa<Conv2dOp, Pool2dOp>(op);
    if (!stencilOp && !isElementwiseOp(&op))
      return op.emitOpError("cannot be part of a stencil group: only "
                            "kgraph.conv2d, kgraph.pool2d and elementwise ops "
                            "can");
    if (stencilOp) {
      if (getOpLayout(&op) != layout)
        return op.emitOpError("layout differs from the stencil group's (")
               << stringifyLayout(layout) << ")";
      if (failed(checkStencilOp(&op)))
        return failure();
      // Positions outside the image are stored with the reader's padding
      // value, so all readers of a value must agree on it.
      Value in = op.getOperand(0);
      auto [it, inserted] = fillReader.try_emplace(in, &op);
      if (!inserted && getStencilFill(it->second) != getStencilFill(&op))
        return op.emitOpError("reads a value that ")
               << it->second->getName()
               << " of the same group reads with other padding semantics "
                  "(zero vs ignored); put them in separate groups";
    }
    for (Value result : op.getResults()) {
      // A computed filter is diagnosed by its conv2d.
      if (!result.use_empty() &&
          llvm::all_of(result.getUses(), [](OpOperand &use) {
            return llvm::isa<Conv2dOp>(use.getOwner()) &&
                   use.getOperandNumber() == 1;
          }))
        continue;
      auto type = llvm::dyn_cast<RankedTensorType>(result.getType());
      if (!type || type.getRank() != 4)
        return op.emitOpError("result must be 4-D in a stencil group, got ")
               << result.getType();
      Dims4 d = getDims(type, layout);
      if (d.n != grid.n || d.h != grid.h || d.w != grid.w)
        return op.emitOpError("result ")
               << type << " does not match the stencil grid of the group (N "
               << grid.n << ", H " << grid.h << ", W " << grid.w << ", "
               << stringifyLayout(layout) << ")";
      if (d.c > 4)
        return op.emitOpError("result has ")
               << d.c << " channels; values of a stencil group have at most 4";
    }
  }
  for (Value v : group.getYield().getValues())
    if (llvm::isa<BlockArgument>(v))
      return group.emitOpError("stencil groups cannot yield a group input");
  return success();
}

/// Channels of a 4-D value in `layout`.
static int64_t getChannels(Value v, Layout layout) {
  return getDims(llvm::cast<ShapedType>(v.getType()), layout).c;
}

StencilPlan kgraph::planStencilGroup(FusedOp group, StencilConfigAttr config) {
  StencilPlan plan;
  Block &body = group.getBody().front();
  Pool2dOp lonePool = getLonePool(group);
  for (Operation &op : body.without_terminator())
    if (llvm::isa<Conv2dOp, Pool2dOp>(op)) {
      plan.layout = getOpLayout(&op);
      break;
    }
  Dims4 out = getDims(llvm::cast<ShapedType>(group.getResultTypes().front()),
                      plan.layout);
  plan.n = out.n;
  plan.h = out.h;
  plan.w = out.w;
  if (lonePool) {
    // Channels of a pool are independent: blocks of the largest divisor <= 4.
    for (int64_t cb = 4; cb >= 1; --cb)
      if (out.c % cb == 0) {
        plan.channelBlock = cb;
        break;
      }
    plan.numChannelBlocks = out.c / plan.channelBlock;
  }
  int64_t th = config.getTileH(), tw = config.getTileW();
  int64_t rpt = config.getRowsPerThread(), cpt = config.getColsPerThread();

  // Region bounds per value, found backwards: rows [y0, y1) and the columns
  // [x0, x1) some output of the tile depends on (needed), and [ex0, ex1) at
  // which the value is evaluated or read at all (a superset: a strip of
  // cols_per_thread columns is computed whole, so the strips at a region's
  // edges evaluate their operands a few columns past what is needed).
  // A materialized value is computed over its needed columns rounded out to
  // multiples of cols_per_thread and held over the evaluated ones, rounded
  // out too: the columns held but not computed are never written, and only
  // positions nothing needs read them (needed columns follow from needed
  // columns), so the rounding does not cascade through the halos.
  struct Bounds {
    int64_t scaleY = 1, scaleX = 1, y0 = 0, y1 = 0, x0 = 0, x1 = 0;
    int64_t ex0 = 0, ex1 = 0;
    bool set = false;
  };
  auto alignDown = [&](int64_t x) {
    return llvm::divideFloorSigned(x, cpt) * cpt;
  };
  auto alignUp = [&](int64_t x) { return alignDown(x + cpt - 1); };
  llvm::MapVector<Value, Bounds> bounds;
  auto need = [&](Value v, int64_t scaleY, int64_t scaleX, int64_t y0,
                  int64_t y1, int64_t x0, int64_t x1, int64_t ex0,
                  int64_t ex1) {
    Bounds &b = bounds[v];
    if (!b.set) {
      b = {scaleY, scaleX, y0, y1, x0, x1, ex0, ex1, true};
      return;
    }
    b.y0 = std::min(b.y0, y0);
    b.y1 = std::max(b.y1, y1);
    b.x0 = std::min(b.x0, x0);
    b.x1 = std::max(b.x1, x1);
    b.ex0 = std::min(b.ex0, ex0);
    b.ex1 = std::max(b.ex1, ex1);
  };
  for (Value v : group.getYield().getValues())
    need(v, 1, 1, 0, th, 0, tw, 0, tw);
  DenseSet<Value> materialized;
  DenseMap<Value, StencilFill> fills;
  for (Operation &op : llvm::reverse(body.without_terminator())) {
    if (op.hasTrait<mlir::OpTrait::ConstantLike>() || op.getNumResults() != 1)
      continue;
    auto it = bounds.find(op.getResult(0));
    if (it == bounds.end())
      continue; // dead
    Bounds &r = it->second;
    // Computed values are produced in strips of rows_per_thread rows.
    if (llvm::isa<Conv2dOp, Pool2dOp>(op) || isElementwiseOp(&op))
      r.y1 = r.y0 + llvm::alignTo(r.y1 - r.y0, rpt);
    Bounds res = r; // `need` may invalidate `r`
    // The columns at which the op reads its operands: its strips over the
    // needed columns if it is materialized, else wherever it is evaluated.
    if (materialized.contains(op.getResult(0))) {
      res.ex0 = alignDown(res.x0);
      res.ex1 = alignUp(res.x1);
    }
    if (llvm::isa<Conv2dOp, Pool2dOp>(op)) {
      ArrayRef<int64_t> pad, strides;
      int64_t kh, kw;
      if (auto conv = llvm::dyn_cast<Conv2dOp>(op)) {
        pad = conv.getPadding();
        strides = conv.getStrides();
        std::tie(kh, kw) = getConvKernel(conv);
      } else {
        auto pool = llvm::cast<Pool2dOp>(op);
        pad = pool.getPadding();
        strides = pool.getStrides();
        kh = pool.getKernel()[0];
        kw = pool.getKernel()[1];
      }
      int64_t sy = strides[0], sx = strides[1];
      Value in = op.getOperand(0);
      need(in, res.scaleY * sy, res.scaleX * sx, res.y0 * sy - pad[0],
           (res.y1 - 1) * sy - pad[0] + kh, res.x0 * sx - pad[2],
           (res.x1 - 1) * sx - pad[2] + kw, res.ex0 * sx - pad[2],
           (res.ex1 - 1) * sx - pad[2] + kw);
      materialized.insert(in);
      fills[in] = getStencilFill(&op);
      continue;
    }
    for (Value operand : op.getOperands())
      if (Operation *def = operand.getDefiningOp())
        if (!def->hasTrait<mlir::OpTrait::ConstantLike>())
          need(operand, res.scaleY, res.scaleX, res.y0, res.y1, res.x0, res.x1,
               res.ex0, res.ex1);
  }

  // Materialized values in topological order: inputs, then body order.
  SmallVector<Value> order;
  for (Value arg : body.getArguments())
    if (materialized.contains(arg))
      order.push_back(arg);
  for (Operation &op : body.without_terminator())
    for (Value r : op.getResults())
      if (bounds.count(r))
        order.push_back(r);
  // Shared memory by liveness: the emitter stages the inputs (stage 0),
  // computes the other materialized values one stage each in `order`, a
  // barrier after each, and stores the results last. A value is live from
  // its stage to the last stage that reads it (its readers' inline
  // evaluations reach it), so one read for the last time before a stage
  // lends its bytes to that stage's value (the edge chain's staged image to
  // the gradient magnitude).
  DenseMap<Value, int64_t> stageOf, lastUse;
  int64_t stages = 0;
  for (Value v : order)
    if (materialized.contains(v))
      stageOf[v] = llvm::isa<BlockArgument>(v) ? 0 : ++stages;
  std::function<void(Value, int64_t, DenseSet<Value> &)> markReads =
      [&](Value v, int64_t stage, DenseSet<Value> &seen) {
        if (!seen.insert(v).second)
          return;
        if (materialized.contains(v)) {
          lastUse[v] = std::max(lastUse.lookup(v), stage);
          return;
        }
        Operation *def = v.getDefiningOp();
        if (!def || def->hasTrait<mlir::OpTrait::ConstantLike>())
          return;
        for (Value operand : def->getOperands())
          markReads(operand, stage, seen);
      };
  for (Value v : order) {
    if (!materialized.contains(v) || llvm::isa<BlockArgument>(v))
      continue;
    DenseSet<Value> seen;
    for (Value operand : v.getDefiningOp()->getOperands())
      markReads(operand, stageOf[v], seen);
  }
  {
    DenseSet<Value> seen;
    for (Value v : group.getYield().getValues())
      markReads(v, stages + 1, seen);
  }
  struct Placed {
    int64_t begin, end, first, last;
  };
  SmallVector<Placed> placed;
  int64_t offset = 0;
  for (Value v : order) {
    const Bounds &b = bounds[v];
    StencilValue sv;
    sv.scaleY = b.scaleY;
    sv.scaleX = b.scaleX;
    sv.y0 = b.y0;
    sv.rows = b.y1 - b.y0;
    sv.channels = lonePool ? plan.channelBlock : getChannels(v, plan.layout);
    sv.materialized = materialized.contains(v);
    // Computed (or staged) over the needed columns rounded out to whole
    // strips; held over every column read, rounded out too.
    sv.computeX0 = alignDown(b.x0);
    sv.computeCols = alignUp(b.x1) - sv.computeX0;
    sv.x0 = std::min(sv.computeX0, alignDown(b.ex0));
    sv.cols = std::max(sv.computeX0 + sv.computeCols, alignUp(b.ex1)) - sv.x0;
    if (sv.materialized) {
      sv.fill = fills.lookup(v);
      int64_t size = 4 * sv.channels * sv.rows * sv.cols;
      int64_t first = stageOf[v];
      auto use = lastUse.find(v);
      int64_t last = use == lastUse.end() ? stages + 1 : use->second;
      // First fit below the buffers live at the same time.
      SmallVector<std::pair<int64_t, int64_t>> busy;
      for (const Placed &q : placed)
        if (q.first <= last && first <= q.last)
          busy.push_back({q.begin, q.end});
      llvm::sort(busy);
      int64_t at = 0;
      for (auto [begin, end] : busy) {
        if (at + size <= begin)
          break;
        at = std::max(at, end);
      }
      sv.sharedOffset = at;
      placed.push_back({at, at + size, first, last});
      offset = std::max(offset, at + size);
    }
    plan.values.insert({v, sv});
  }
  plan.sharedMemoryBytes = offset;
  plan.gridX = llvm::divideCeil(plan.w, tw);
  plan.gridY = llvm::divideCeil(plan.h, th);
  plan.gridZ = plan.n * plan.numChannelBlocks;
  return plan;
}

LogicalResult kgraph::verifyStencilConfig(
    FusedOp group, StencilConfigAttr config, const SMTarget &target,
    function_ref<InFlightDiagnostic()> emitError) {
  // (Threads per block are bounded by the attribute's verifier.)
  StencilPlan plan = planStencilGroup(group, config);
  if (plan.sharedMemoryBytes > target.sharedMemPerBlock)
    return emitError() << "stencil tile " << config.getTileH() << "x"
                       << config.getTileW() << " needs "
                       << plan.sharedMemoryBytes
                       << " bytes of shared memory; " << target.name
                       << " allows " << target.sharedMemPerBlock
                       << " per block";
  std::array<int64_t, 3> grid = plan.launchGrid();
  if (grid[0] > StencilPlan::kMaxGridX || grid[1] > StencilPlan::kMaxGridYZ)
    return emitError() << "stencil grid " << plan.gridX << " x " << plan.gridY
                       << " x " << plan.gridZ
                       << " exceeds the blocks a launch allows (2^31 - 1 "
                          "along x with the images folded in, 65535 along y)";
  return success();
}

/// Rows of input a thread's `rows` outputs read through a window of `k` rows
/// at stride `stride`.
static int64_t windowRows(int64_t rows, int64_t k, int64_t stride) {
  return (rows - 1) * stride + k;
}

StencilFilterSlice kgraph::getStencilFilterSlice(Conv2dOp conv, int64_t f,
                                                 int64_t c,
                                                 int64_t rowsPerThread) {
  StencilFilterSlice s;
  std::tie(s.kh, s.kw) = getConvKernel(conv);
  s.opsPerOutput = double(s.kh * s.kw);
  auto cst = conv.getFilter().getDefiningOp<arith::ConstantOp>();
  auto dense = cst ? llvm::dyn_cast<DenseElementsAttr>(cst.getValue())
                   : DenseElementsAttr();
  if (!dense || !llvm::isa<FloatType>(dense.getElementType()))
    return s;
  s.constant = true;
  ArrayRef<int64_t> shape = conv.getFilter().getType().getShape();
  bool nhwc = conv.getLayout() == Layout::nhwc;
  int64_t nonzero = 0;
  for (int64_t ky = 0; ky < s.kh; ++ky)
    for (int64_t kx = 0; kx < s.kw; ++kx) {
      std::array<int64_t, 4> idx = nhwc ? std::array<int64_t, 4>{f, ky, kx, c}
                                        : std::array<int64_t, 4>{f, c, ky, kx};
      int64_t flat = 0;
      for (int64_t d = 0; d < 4; ++d)
        flat = flat * shape[d] + idx[d];
      APFloat value = dense.isSplat() ? dense.getSplatValue<APFloat>()
                                      : dense.getValues<APFloat>()[flat];
      bool lost;
      value.convert(APFloat::IEEEsingle(), APFloat::rmNearestTiesToEven, &lost);
      s.weights.push_back(value.convertToFloat());
      nonzero += s.weights.back() != 0.0f;
    }
  s.opsPerOutput = double(nonzero);
  if (nonzero == 0 || s.kh == 1 || s.kw == 1)
    return s;
  // Rank one: u = a column through a nonzero pivot, v = its row over the
  // pivot; every product must give the weight back exactly.
  int64_t pivot = llvm::find_if(s.weights, [](float w) { return w != 0.0f; }) -
                  s.weights.begin();
  int64_t py = pivot / s.kw, px = pivot % s.kw;
  float p = s.weights[pivot];
  SmallVector<float> u, v;
  for (int64_t ky = 0; ky < s.kh; ++ky)
    u.push_back(s.weights[ky * s.kw + px]);
  for (int64_t kx = 0; kx < s.kw; ++kx) {
    double q = double(s.weights[py * s.kw + kx]) / double(p);
    if (!std::isfinite(q) || double(float(q)) != q)
      return s;
    v.push_back(float(q));
  }
  for (int64_t ky = 0; ky < s.kh; ++ky)
    for (int64_t kx = 0; kx < s.kw; ++kx)
      if (u[ky] * v[kx] != s.weights[ky * s.kw + kx] ||
          !std::isfinite(u[ky] * v[kx]))
        return s;
  auto count = [](ArrayRef<float> xs) {
    return double(llvm::count_if(xs, [](float x) { return x != 0.0f; }));
  };
  // A pass starts its sum from a tap of weight 1 where it has one (the
  // emitter takes it first): that tap costs nothing. v has one (the pivot's);
  // where only -1 is in u, both factors change sign so that u has one too
  // (Sobel: [-1, -2, -1] x [1, 0, -1] -> [1, 2, 1] x [-1, 0, 1]).
  if (!llvm::is_contained(u, 1.0f) && llvm::is_contained(u, -1.0f) &&
      llvm::is_contained(v, -1.0f)) {
    for (float &x : u)
      x = -x;
    for (float &x : v)
      x = -x;
  }
  // The row pass runs once per input row the thread's rows read, each sum
  // from its weight-1 tap.
  int64_t rows = std::max<int64_t>(1, rowsPerThread);
  double separate =
      (count(v) - 1) * double(windowRows(rows, s.kh, 1)) / rows + count(u);
  if (separate < s.opsPerOutput) {
    s.separable = true;
    s.u = std::move(u);
    s.v = std::move(v);
    s.opsPerOutput = separate;
  }
  return s;
}

std::pair<double, bool> kgraph::getStencilPoolCost(Pool2dOp pool,
                                                   int64_t rowsPerThread) {
  int64_t kh = pool.getKernel()[0], kw = pool.getKernel()[1];
  int64_t sy = pool.getStrides()[0];
  int64_t rows = std::max<int64_t>(1, rowsPerThread);
  double direct = double(kh * kw - 1);
  double separate =
      double(windowRows(rows, kh, sy) * (kw - 1)) / rows + double(kh - 1);
  if (kh > 1 && kw > 1 && separate < direct)
    return {separate, true};
  return {direct, false};
}

/// Blocks of `config` resident on one SM: bounded by the threads and by the
/// shared memory of `plan`.
static int64_t getResidentBlocksPerSM(StencilConfigAttr config,
                                      const StencilPlan &plan,
                                      const SMTarget &target) {
  return std::min<int64_t>(target.blocksPerSMByThreads(config.getNumThreads()),
                           plan.sharedMemoryBytes
                               ? target.sharedMemPerSM / plan.sharedMemoryBytes
                               : target.maxBlocksPerSM);
}

namespace {
/// The model's numbers for one configuration.
struct StencilEstimate {
  double workPerPixel = 0; ///< taps and stores per output pixel (see top)
  double waveEfficiency = 1;
  double globalBytesPerPixel = 0;
  double haloOverhead = 1; ///< computed positions / output positions
};
} // namespace

static StencilEstimate estimateStencil(FusedOp group, StencilConfigAttr config,
                                       const StencilPlan &plan,
                                       const SMTarget &target) {
  StencilEstimate e;
  double area = double(config.getTileH()) * config.getTileW();
  double work = 0, computed = 0, outputs = 0;
  Block &body = group.getBody().front();
  for (Operation &op : body.without_terminator()) {
    if (op.getNumResults() != 1)
      continue;
    auto it = plan.values.find(op.getResult(0));
    if (it == plan.values.end())
      continue;
    const StencilValue &r = it->second;
    double region = double(r.rows) * r.computeCols;
    double taps = r.channels;
    int64_t rpt = config.getRowsPerThread();
    if (auto conv = llvm::dyn_cast<Conv2dOp>(op)) {
      // The emitter's operations per output (zero taps skipped, rank-one
      // filters applied separably), over the conv's filters (all of them
      // in the block) and input channels.
      int64_t numF = conv.getFilter().getType().getShape()[0];
      int64_t numC = getChannels(conv.getInput(), plan.layout);
      taps = 0;
      for (int64_t f = 0; f < numF; ++f)
        for (int64_t c = 0; c < numC; ++c)
          taps += getStencilFilterSlice(conv, f, c, rpt).opsPerOutput;
      taps = std::max(taps, 1.0);
    } else if (auto pool = llvm::dyn_cast<Pool2dOp>(op)) {
      taps = double(r.channels) * (getStencilPoolCost(pool, rpt).first + 1);
    }
    work += region * taps;
    if (r.materialized) {
      work += region * r.channels;
      computed += region;
      outputs += area;
    }
  }
  for (auto &[v, r] : plan.values)
    if (r.materialized && llvm::isa<BlockArgument>(v)) {
      double region = double(r.rows) * r.computeCols;
      work += region * r.channels;
      unsigned bytes =
          llvm::cast<ShapedType>(v.getType()).getElementTypeBitWidth() / 8;
      e.globalBytesPerPixel += region * r.channels * bytes / area;
    }
  // Group inputs read pointwise by elementwise ops: over the largest region
  // of a reader.
  DenseMap<Value, double> pointwise;
  for (Operation &op : body.without_terminator()) {
    if (!isElementwiseOp(&op))
      continue;
    auto it = plan.values.find(op.getResult(0));
    if (it == plan.values.end())
      continue;
    for (Value operand : op.getOperands()) {
      auto arg = llvm::dyn_cast<BlockArgument>(operand);
      if (!arg || plan.values.count(arg))
        continue;
      auto type = llvm::cast<ShapedType>(arg.getType());
      double bytes = double(it->second.rows) * it->second.computeCols *
                     type.getNumElements() / (plan.n * plan.h * plan.w) *
                     std::max<int64_t>(1, type.getElementTypeBitWidth() / 8);
      pointwise[arg] = std::max(pointwise[arg], bytes / area);
    }
  }
  for (auto &[arg, bytes] : pointwise)
    e.globalBytesPerPixel += bytes;
  for (Type t : group.getResultTypes())
    e.globalBytesPerPixel +=
        double(plan.channelBlock == 1 && plan.numChannelBlocks == 1
                   ? getDims(llvm::cast<ShapedType>(t), plan.layout).c
                   : plan.channelBlock) *
        llvm::cast<ShapedType>(t).getElementTypeBitWidth() / 8;
  // Per output pixel of the image: tiles hanging over its edge compute
  // positions nobody stores.
  e.workPerPixel =
      work * double(plan.gridX * plan.gridY) / double(plan.h * plan.w);
  e.haloOverhead = outputs > 0 ? computed / outputs : 1;
  int64_t perSM = getResidentBlocksPerSM(config, plan, target);
  double resident = double(std::max<int64_t>(1, perSM)) * target.numSMs;
  double blocks = double(plan.gridX) * plan.gridY * plan.gridZ;
  double waves = std::ceil(blocks / resident);
  e.waveEfficiency = blocks / (waves * resident);
  return e;
}

/// The most channels of any value of the group a thread holds per position.
static int64_t getMaxChannels(FusedOp group, const StencilPlan &plan) {
  int64_t most = 1;
  for (auto &[v, sv] : plan.values)
    most = std::max(most, sv.channels);
  return most;
}

/// `config` with strips of 4 (or 2) columns where that keeps every thread
/// busy and the registers bounded: a strip's shared-memory loads become
/// aligned vectors each shared by its columns, and its index arithmetic,
/// clamps and stores are paid once per 4 (2) positions. ncu on the edge
/// chain (S17-3) found one-column strips issue-bound on integer work, with
/// the L1/shared pipe 83% busy on scalar loads. Taken when the tile gives
/// every thread a strip, a thread holds at most 16 values per strip
/// (rows x columns x channels), the wider held regions leave as many blocks
/// resident per SM, and the materialized values, computed over whole
/// strips, compute at most 20% more positions. Measured on the edge chain
/// (runs S20-1 and S20-2, H100): 4x4 strips computing 17% more positions
/// than 4x1 ones (before planStencilGroup stopped the rounding from
/// cascading through the halos) ran 1.28x faster; 4x2 strips, 5 blocks
/// per SM against 4x4's 4, were the fastest in both runs (0.572 and
/// 0.550 ms against 0.583 and 0.638 ms).
static StencilConfigAttr widenStrips(FusedOp group, StencilConfigAttr config,
                                     const SMTarget &target) {
  StencilPlan narrow = planStencilGroup(group, config);
  auto computed = [](const StencilPlan &plan) {
    double total = 0;
    for (auto &[v, sv] : plan.values)
      if (sv.materialized)
        total += double(sv.rows) * sv.computeCols * sv.channels;
    return total;
  };
  int64_t channels = getMaxChannels(group, narrow);
  int64_t th = config.getTileH(), tw = config.getTileW();
  int64_t rpt = config.getRowsPerThread(), threads = config.getNumThreads();
  for (int64_t cpt : {4, 2}) {
    if (tw % cpt != 0 || (th / rpt) * (tw / cpt) < threads ||
        rpt * cpt * channels > 16)
      continue;
    int64_t bx = std::min<int64_t>(tw / cpt, 64);
    if (threads % bx != 0)
      continue;
    auto wide = StencilConfigAttr::get(group.getContext(), th, tw, bx,
                                       threads / bx, rpt, cpt);
    StencilPlan plan = planStencilGroup(group, wide);
    if (plan.sharedMemoryBytes > target.sharedMemPerBlock ||
        getResidentBlocksPerSM(wide, plan, target) <
            getResidentBlocksPerSM(config, narrow, target) ||
        computed(plan) > 1.2 * computed(narrow))
      continue;
    return wide;
  }
  return config;
}

FailureOr<StencilConfigAttr> kgraph::chooseStencilConfig(FusedOp group,
                                                         const SMTarget &target) {
  MLIRContext *ctx = group.getContext();
  StencilConfigAttr best;
  double bestCost = 0;
  // Ranks the tile th x tw (rows_per_thread min(4, th); 256 threads, or
  // with `fewThreads` for a tile of fewer than 256 strips the warps that
  // cover its strips) if its shared memory fits `blocksPerSM` resident
  // blocks.
  auto consider = [&](int64_t th, int64_t tw, int64_t blocksPerSM,
                      bool fewThreads) {
    int64_t rpt = std::min<int64_t>(4, th);
    int64_t strips = th / rpt * tw;
    int64_t threads =
        fewThreads ? std::clamp<int64_t>(llvm::PowerOf2Ceil(strips), 32, 256)
                   : 256;
    int64_t bx = std::min<int64_t>({tw, 64, threads});
    auto config = StencilConfigAttr::get(ctx, th, tw, bx, threads / bx, rpt, 1);
    StencilPlan plan = planStencilGroup(group, config);
    if (plan.sharedMemoryBytes > target.sharedMemPerBlock ||
        blocksPerSM * plan.sharedMemoryBytes > target.sharedMemPerSM ||
        plan.launchGrid()[0] > StencilPlan::kMaxGridX ||
        plan.launchGrid()[1] > StencilPlan::kMaxGridYZ)
      return;
    StencilEstimate e = estimateStencil(group, config, plan, target);
    // Threads without a strip of a small tile idle through its stores.
    double utilization =
        fewThreads ? std::min(1.0, double(strips) / threads) : 1.0;
    double cost = e.workPerPixel / (e.waveEfficiency * utilization);
    // The first candidate wins (near) ties: among the usual tiles the
    // smaller, with less shared memory and more blocks in flight.
    if (!best || cost < bestCost * 0.98) {
      best = config;
      bestCost = cost;
    }
  };
  // The usual tiles, with two resident blocks per SM at least, so one
  // block's barriers overlap with another's loads.
  for (int64_t th : {16, 32, 64})
    for (int64_t tw : {32, 64, 128})
      consider(th, tw, 2, /*fewThreads=*/false);
  if (best)
    return widenStrips(group, best, target);
  // Tiles are counted in output positions, but shared memory holds the
  // input regions, which grow with the stride and the window (a 16x32 tile
  // of a 3x3, stride-3 pool stages 48x96 inputs per channel). Then smaller
  // tiles, down to one position, no larger than the output needs: first at
  // two blocks per SM, then at one. On small images the model ranks many
  // tiles alike (every block is a fraction of a wave); on such ties the
  // larger tile wins, as it loads each halo once.
  StencilPlan shape =
      planStencilGroup(group, StencilConfigAttr::get(ctx, 1, 1, 1, 32, 1, 1));
  static constexpr int64_t kSmallH[] = {64, 32, 16, 8, 4, 2, 1};
  static constexpr int64_t kSmallW[] = {128, 64, 32, 16, 8, 4, 2, 1};
  for (int64_t blocksPerSM : {2, 1}) {
    for (int64_t th : kSmallH)
      for (int64_t tw : kSmallW)
        if ((th < 16 || tw < 32 || blocksPerSM == 1) &&
            th <= int64_t(llvm::PowerOf2Ceil(shape.h)) &&
            tw <= int64_t(llvm::PowerOf2Ceil(shape.w)))
          consider(th, tw, blocksPerSM, /*fewThreads=*/true);
    if (best)
      return best;
  }
  return failure();
}

double kgraph::estimateStencilMicroseconds(FusedOp group,
                                           StencilConfigAttr config,
                                           const SMTarget &target) {
  StencilPlan plan = planStencilGroup(group, config);
  StencilEstimate e = estimateStencil(group, config, plan, target);
  // Per image pixel and channel block: the global bytes at the part's
  // memory bandwidth, or the taps on the fp32 lanes, whichever binds,
  // stretched by the last partial wave.
  double pixels = double(plan.n) * plan.h * plan.w * plan.numChannelBlocks;
  double memory = target.dramMicroseconds(pixels * e.globalBytesPerPixel);
  double compute = target.cyclesToMicroseconds(
      pixels * e.workPerPixel / (double(target.numSMs) * target.f32LanesPerSM));
  return std::max(memory, compute) / e.waveEfficiency;
}

SmallVector<StencilConfigAttr>
kgraph::enumerateStencilConfigs(FusedOp group, const SMTarget &target) {
  MLIRContext *ctx = group.getContext();
  SmallVector<StencilConfigAttr> configs;
  if (FailureOr<StencilConfigAttr> chosen = chooseStencilConfig(group, target);
      succeeded(chosen))
    configs.push_back(*chosen);
  for (int64_t th : {16, 32, 64})
    for (int64_t tw : {32, 64, 128})
      for (int64_t threads : {256, 128, 512})
        for (int64_t rpt : {4, 2, 1})
          for (int64_t cpt : {1, 4, 2}) {
            int64_t bx = std::min<int64_t>(tw / cpt, 64);
            if (threads % bx != 0 || th % rpt != 0)
              continue;
            auto config =
                StencilConfigAttr::get(ctx, th, tw, bx, threads / bx, rpt, cpt);
            if (!llvm::is_contained(configs, config))
              configs.push_back(config);
          }
  return configs;
}

std::string kgraph::describeStencilPlan(FusedOp group,
                                        StencilConfigAttr config,
                                        const SMTarget &target) {
  StencilPlan plan = planStencilGroup(group, config);
  StencilEstimate e = estimateStencil(group, config, plan, target);
  return llvm::formatv("tile {0}x{1}, strips {10}x{11}, {2} threads, {3} B "
                       "shared, grid {4}x{5}x{6}, {7:F2} global B/px, halo "
                       "overhead {8:F2}, {9:F1} taps/px",
                       config.getTileH(), config.getTileW(),
                       config.getNumThreads(), plan.sharedMemoryBytes,
                       plan.gridX, plan.gridY, plan.gridZ,
                       e.globalBytesPerPixel, e.haloOverhead, e.workPerPixel,
                       config.getRowsPerThread(), config.getColsPerThread())
      .str();
}
