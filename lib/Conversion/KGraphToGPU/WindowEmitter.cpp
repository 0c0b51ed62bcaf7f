//===- WindowEmitter.cpp - window groups as direct channel-vector kernels -===//
//
// A window group (WindowTiling.h) is one channels-last pool2d or grouped
// conv2d with elementwise producers and consumers. Thread (x, y) of block
// (bx, by) owns output channels [f0, f0 + W) with f0 = (by * block_x + x) * W
// and walks output pixels p = bx * block_y + y, stepping grid_size * block_y:
//
//   filter taps of its channels -> registers (conv2d, when few enough: the
//     W channels' taps are contiguous, so T W-wide loads)
//   for each pixel p = (n, oh, ow):
//     for each tap (kh, kw, input channel of the group):
//       ih = oh * stride_h - pad_top + kh * dilation_h (likewise iw)
//       x  = the W lanes of the input at (n, clamp(ih), clamp(iw), ...):
//            one W-wide load (pools, depthwise), one broadcast load, or W
//            gathered loads; producers evaluated on them (LaneEvaluator)
//       outside the image x is the padding value (select, no branch): -inf
//       for max (the i32 minimum for integers), 0 for avg and conv
//       acc = max(acc, x) | acc + x | acc + x * w
//     avg: acc / (in-image taps); round to the anchor's element type
//     consumers on the W lanes, one W-wide store per yielded value
//
// With strip = R > 1 (every tap unrolled) the thread walks strips of R
// pixels ow0 .. ow0 + R - 1 of one row instead, and loads each input column
// of a window row once for all R windows that read it; pixels past the
// row's end are not stored.
//
// Loads are clamped into the image, so every address is valid and the taps'
// loads are independent. Arithmetic is f32 for floats and i32 for integers,
// each op's result rounded to its element type, as in the other emitters.
//
//===----------------------------------------------------------------------===//

#include "LaneEvaluator.h"
#include "ScalarOps.h"
#include "kgraph/Conversion/KGraphToGPU/KGraphToGPU.h"
#include "kgraph/Dialect/KGraph/Transforms/WindowTiling.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/Builders.h"

#include <limits>

using namespace mlir;
using namespace kgraph;
using namespace kgraph::detail;

namespace {

/// The accumulators of one output vector: W lanes.
using Lanes = SmallVector<Value>;

class WindowKernelBuilder {
public:
  WindowKernelBuilder(FusedOp group, WindowConfigAttr config,
                      gpu::GPUFuncOp kernel, const WindowProblem &p)
      : group(group), config(config), kernel(kernel), p(p),
        loc(group.getLoc()), width(config.getVectorWidth()),
        accType(getComputeType(getElementType(p.anchor->getResult(0)))) {}

  LogicalResult emit();

private:
  Value c(OpBuilder &b, int64_t v) {
    return arith::ConstantIndexOp::create(b, loc, v);
  }
  Value mul(OpBuilder &b, Value x, int64_t v) {
    return v == 1 ? x : arith::MulIOp::create(b, loc, x, c(b, v)).getResult();
  }
  Value add(OpBuilder &b, Value x, Value y) {
    return arith::AddIOp::create(b, loc, x, y);
  }
  Value clampTo(OpBuilder &b, Value x, int64_t size) {
    Value lo = arith::MaxSIOp::create(b, loc, x, c(b, 0));
    return arith::MinSIOp::create(b, loc, lo, c(b, size - 1));
  }
  bool isFloat() const { return llvm::isa<FloatType>(accType); }
  /// The accumulators' start: -inf (the i32 minimum) for max, else 0.
  Value identity(OpBuilder &b);
  /// The W lanes of the filter at tap (kh, kw, ci) of channels [f0, f0 + W).
  FailureOr<Lanes> loadFilter(OpBuilder &b, Value f0, Value kh, Value kw,
                              Value ci);
  /// The input access of tap channel `ci` at input pixel `pixel`.
  Access inputAccess(OpBuilder &b, Value pixel, Value f0, Value ci);
  /// The W input lanes of tap channel `ci` at input (ih, iw) of image n,
  /// the padding value outside the image.
  FailureOr<Lanes> loadTap(OpBuilder &b, Value ih, Value iw, Value ci);
  /// acc = max(acc, x) | acc + x | acc + x * w, lane by lane.
  void accumulate(OpBuilder &b, Lanes &acc, const Lanes &x, const Lanes &w);
  /// The filter lanes of tap (kh, kw, ci): preloaded, or loaded here.
  FailureOr<Lanes> filterLanes(OpBuilder &b, Value kh, Value kw, Value ci);
  /// Accumulates taps of window dims `dim`.. (kh, kw, ci) into `acc`.
  FailureOr<Lanes> emitTaps(OpBuilder &b, unsigned dim,
                            SmallVector<Value, 3> &coords, Lanes acc);
  /// The output pixel `pixel` whose window starts at (ihBase, iwStart):
  /// the avg division, rounding, the consumers and the stores.
  LogicalResult emitOutput(OpBuilder &b, Lanes lanes, Value pixel,
                           Value iwStart);
  /// n, ihBase and iwBase of output row `row` = n * OH + oh, column `ow`.
  void setWindowOrigin(OpBuilder &b, Value row, Value ow);
  /// One pixel: its window, the consumers and the stores.
  LogicalResult emitPixel(OpBuilder &b, Value pixel);
  /// A strip of R pixels of one row: each input column the windows share
  /// loaded once (every tap unrolled), then each pixel's output.
  LogicalResult emitStrip(OpBuilder &b, Value strip);

  FusedOp group;
  WindowConfigAttr config;
  gpu::GPUFuncOp kernel;
  const WindowProblem &p;
  Location loc;
  int64_t width;
  Type accType;
  DenseMap<Value, Value> flatArgs;
  SmallVector<Value> flatOutputs;
  /// Per pixel: its image, the window origin, channels [f0, f0 + W).
  Value n, ihBase, iwBase, f0;
  /// Preloaded filter lanes, one entry per tap in (kh, kw, ci) order.
  SmallVector<Lanes> filter;
  /// Window dims whose taps are unrolled (the rest are loops).
  unsigned firstUnrolledDim = 0;
};

} // namespace

Value WindowKernelBuilder::identity(OpBuilder &b) {
  bool max = p.kind == WindowOpKind::MaxPool;
  if (isFloat())
    return arith::ConstantOp::create(
        b, loc,
        b.getFloatAttr(accType, max ? -std::numeric_limits<double>::infinity()
                                    : 0.0));
  return arith::ConstantOp::create(
      b, loc,
      b.getIntegerAttr(accType, max ? std::numeric_limits<int32_t>::min() : 0));
}

FailureOr<Lanes> WindowKernelBuilder::loadFilter(OpBuilder &b, Value first,
                                                 Value kh, Value kw, Value ci) {
  // Filter [F, KH, KW, C / groups]: lane l reads channel f0 + l.
  Value tap = add(b, mul(b, add(b, mul(b, kh, p.kw), kw), p.groupIn), ci);
  Access access{AccessKind::Gather, {}};
  for (int64_t l = 0; l < width; ++l)
    access.indices.push_back(
        add(b, mul(b, add(b, first, c(b, l)), p.getTaps()), tap));
  LaneEvaluator eval(b, loc, width, flatArgs);
  return eval.evaluate(llvm::cast<Conv2dOp>(p.anchor).getFilter(), access);
}

Access WindowKernelBuilder::inputAccess(OpBuilder &b, Value pixel, Value first,
                                        Value ci) {
  Value base = mul(b, pixel, p.c);
  // Pools and depthwise convs read their own channels: one vector.
  if (p.groupIn == 1 && p.groupOut == 1)
    return {AccessKind::Contiguous, {add(b, base, first)}};
  // Input channel of output channel f: (f / groupOut) * groupIn + ci.
  auto channelOf = [&](Value f) {
    Value g = arith::DivUIOp::create(b, loc, f, c(b, p.groupOut));
    return add(b, mul(b, g, p.groupIn), ci);
  };
  // f0 is a multiple of W: all lanes in one group when W divides groupOut.
  if (p.groupOut % width == 0)
    return {AccessKind::Uniform, {add(b, base, channelOf(first))}};
  Access access{AccessKind::Gather, {}};
  for (int64_t l = 0; l < width; ++l)
    access.indices.push_back(add(b, base, channelOf(add(b, first, c(b, l)))));
  return access;
}

FailureOr<Lanes> WindowKernelBuilder::loadTap(OpBuilder &b, Value ih,
                                              Value iw, Value ci) {
  // 0 <= ih < H && 0 <= iw < W (negative indices compare as huge unsigned).
  Value inH = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult, ih,
                                    c(b, p.h));
  Value inW = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult, iw,
                                    c(b, p.w));
  Value valid = arith::AndIOp::create(b, loc, inH, inW);
  Value pixel = add(b, mul(b, add(b, mul(b, n, p.h), clampTo(b, ih, p.h)), p.w),
                    clampTo(b, iw, p.w));
  LaneEvaluator eval(b, loc, width, flatArgs);
  FailureOr<Lanes> x =
      eval.evaluate(p.anchor->getOperand(0), inputAccess(b, pixel, f0, ci));
  if (failed(x))
    return failure();
  Value pad = p.kind == WindowOpKind::MaxPool
                  ? identity(b)
                  : (isFloat() ? Value(arith::ConstantOp::create(
                                     b, loc, b.getFloatAttr(accType, 0.0)))
                               : Value(arith::ConstantOp::create(
                                     b, loc, b.getIntegerAttr(accType, 0))));
  for (Value &lane : *x)
    lane = arith::SelectOp::create(b, loc, valid, lane, pad);
  return x;
}

void WindowKernelBuilder::accumulate(OpBuilder &b, Lanes &acc, const Lanes &x,
                                     const Lanes &w) {
  for (int64_t l = 0; l < width; ++l) {
    switch (p.kind) {
    case WindowOpKind::MaxPool:
      // maximumf propagates NaN, as torch's max pool does.
      acc[l] = isFloat() ? Value(arith::MaximumFOp::create(b, loc, acc[l], x[l]))
                         : Value(arith::MaxSIOp::create(b, loc, acc[l], x[l]));
      break;
    case WindowOpKind::AvgPool:
      acc[l] = isFloat() ? Value(arith::AddFOp::create(b, loc, acc[l], x[l]))
                         : Value(arith::AddIOp::create(b, loc, acc[l], x[l]));
      break;
    case WindowOpKind::Conv:
      // A padded position contributes 0 * w, as torch's zero padding does.
      acc[l] = isFloat() ? Value(math::FmaOp::create(b, loc, x[l], w[l], acc[l]))
                         : Value(arith::AddIOp::create(
                               b, loc, acc[l],
                               arith::MulIOp::create(b, loc, x[l], w[l])));
      break;
    }
  }
}

FailureOr<Lanes> WindowKernelBuilder::filterLanes(OpBuilder &b, Value kh,
                                                  Value kw, Value ci) {
  if (filter.empty())
    return loadFilter(b, f0, kh, kw, ci);
  // Unrolled taps: constant coordinates index the preloaded lanes.
  auto cst = [](Value v) {
    return v.getDefiningOp<arith::ConstantIndexOp>().value();
  };
  return filter[(cst(kh) * p.kw + cst(kw)) * p.groupIn + cst(ci)];
}

FailureOr<Lanes> WindowKernelBuilder::emitTaps(OpBuilder &b, unsigned dim,
                                               SmallVector<Value, 3> &coords,
                                               Lanes acc) {
  const int64_t extents[3] = {p.kh, p.kw, p.groupIn};
  if (dim == 3) {
    // One tap: coords = (kh, kw, ci).
    Value ih = add(b, ihBase, mul(b, coords[0], p.dilationH));
    Value iw = add(b, iwBase, mul(b, coords[1], p.dilationW));
    FailureOr<Lanes> x = loadTap(b, ih, iw, coords[2]);
    if (failed(x))
      return failure();
    Lanes w;
    if (p.kind == WindowOpKind::Conv) {
      FailureOr<Lanes> lanes = filterLanes(b, coords[0], coords[1], coords[2]);
      if (failed(lanes))
        return failure();
      w = *lanes;
    }
    accumulate(b, acc, *x, w);
    return acc;
  }
  if (dim >= firstUnrolledDim) {
    for (int64_t i = 0; i < extents[dim]; ++i) {
      coords.push_back(c(b, i));
      FailureOr<Lanes> next = emitTaps(b, dim + 1, coords, acc);
      coords.pop_back();
      if (failed(next))
        return failure();
      acc = *next;
    }
    return acc;
  }
  // A loop over this dim, the accumulators carried.
  auto loop = scf::ForOp::create(b, loc, c(b, 0), c(b, extents[dim]), c(b, 1),
                                 acc);
  OpBuilder nb = OpBuilder::atBlockBegin(loop.getBody());
  coords.push_back(loop.getInductionVar());
  Lanes carried(loop.getRegionIterArgs().begin(),
                loop.getRegionIterArgs().end());
  FailureOr<Lanes> next = emitTaps(nb, dim + 1, coords, carried);
  coords.pop_back();
  if (failed(next))
    return failure();
  scf::YieldOp::create(nb, loc, *next);
  return Lanes(loop.getResults().begin(), loop.getResults().end());
}

void WindowKernelBuilder::setWindowOrigin(OpBuilder &b, Value row, Value ow) {
  Value oh = arith::RemUIOp::create(b, loc, row, c(b, p.oh));
  n = arith::DivUIOp::create(b, loc, row, c(b, p.oh));
  ihBase = arith::SubIOp::create(b, loc, mul(b, oh, p.strideH),
                                 c(b, p.padTop));
  iwBase = arith::SubIOp::create(b, loc, mul(b, ow, p.strideW),
                                 c(b, p.padLeft));
}

LogicalResult WindowKernelBuilder::emitPixel(OpBuilder &b, Value pixel) {
  // pixel = (n * OH + oh) * OW + ow
  Value ow = arith::RemUIOp::create(b, loc, pixel, c(b, p.ow));
  setWindowOrigin(b, arith::DivUIOp::create(b, loc, pixel, c(b, p.ow)), ow);
  Lanes acc(width, identity(b));
  SmallVector<Value, 3> coords;
  FailureOr<Lanes> result = emitTaps(b, 0, coords, acc);
  if (failed(result))
    return failure();
  return emitOutput(b, *result, pixel, iwBase);
}

LogicalResult WindowKernelBuilder::emitStrip(OpBuilder &b, Value strip) {
  // strip = (n * OH + oh) * ceil(OW / R) + s; its pixels ow0 + r, r < R.
  int64_t r = config.getStrip();
  int64_t perRow = llvm::divideCeil(p.ow, r);
  Value ow0 = mul(b, arith::RemUIOp::create(b, loc, strip, c(b, perRow)), r);
  Value rest = arith::DivUIOp::create(b, loc, strip, c(b, perRow));
  setWindowOrigin(b, rest, ow0);
  SmallVector<Lanes> acc(r, Lanes(width, identity(b)));
  // The column of tap kw of pixel ow0 + i, from iwBase.
  auto columnOf = [&](int64_t i, int64_t kw) {
    return i * p.strideW + kw * p.dilationW;
  };
  for (int64_t kh = 0; kh < p.kh; ++kh) {
    Value ih = add(b, ihBase, c(b, kh * p.dilationH));
    for (int64_t ci = 0; ci < p.groupIn; ++ci) {
      // This window row's columns, each loaded once for the strip (all
      // loads first, so they are in flight together).
      llvm::SmallDenseMap<int64_t, Lanes> columns;
      for (int64_t i = 0; i < r; ++i)
        for (int64_t kw = 0; kw < p.kw; ++kw) {
          int64_t offset = columnOf(i, kw);
          if (columns.count(offset))
            continue;
          FailureOr<Lanes> x =
              loadTap(b, ih, add(b, iwBase, c(b, offset)), c(b, ci));
          if (failed(x))
            return failure();
          columns[offset] = *x;
        }
      // The row's filter taps (a conv's), once for all the strip's pixels.
      SmallVector<Lanes> w(p.kw);
      if (p.kind == WindowOpKind::Conv)
        for (int64_t kw = 0; kw < p.kw; ++kw) {
          FailureOr<Lanes> lanes = filterLanes(b, c(b, kh), c(b, kw), c(b, ci));
          if (failed(lanes))
            return failure();
          w[kw] = *lanes;
        }
      for (int64_t i = 0; i < r; ++i)
        for (int64_t kw = 0; kw < p.kw; ++kw)
          accumulate(b, acc[i], columns[columnOf(i, kw)], w[kw]);
    }
  }
  // Pixel ow0 + i of the row; past OW (the row's last strip) none.
  Value rowStart = mul(b, rest, p.ow);
  for (int64_t i = 0; i < r; ++i) {
    OpBuilder ob = b;
    if (p.ow % r != 0 && i > 0) {
      Value live = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult,
                                         add(b, ow0, c(b, i)), c(b, p.ow));
      auto ifOp = scf::IfOp::create(b, loc, live, /*withElseRegion=*/false);
      ob.setInsertionPointToStart(ifOp.thenBlock());
    }
    if (failed(emitOutput(ob, acc[i], add(ob, rowStart, add(ob, ow0, c(ob, i))),
                          add(ob, iwBase, c(ob, i * p.strideW)))))
      return failure();
  }
  return success();
}

LogicalResult WindowKernelBuilder::emitOutput(OpBuilder &b, Lanes lanes,
                                              Value pixel, Value iwStart) {
  if (p.kind == WindowOpKind::AvgPool) {
    // In-image taps: rows [max(ihBase, 0), min(ihBase + KH, H)) times the
    // same of the columns (pools have no dilation; never 0, says the
    // pool2d verifier).
    auto extent = [&](Value base, int64_t k, int64_t size) -> Value {
      Value lo = arith::MaxSIOp::create(b, loc, base, c(b, 0));
      Value hi = arith::MinSIOp::create(b, loc, add(b, base, c(b, k)),
                                        c(b, size));
      return arith::SubIOp::create(b, loc, hi, lo);
    };
    Value cells = arith::MulIOp::create(b, loc, extent(ihBase, p.kh, p.h),
                                        extent(iwStart, p.kw, p.w));
    Value count = arith::SIToFPOp::create(
        b, loc, accType,
        arith::IndexCastOp::create(b, loc, b.getI32Type(), cells));
    for (Value &lane : lanes)
      lane = arith::DivFOp::create(b, loc, lane, count);
  }
  Type resultType = getElementType(p.anchor->getResult(0));
  for (Value &lane : lanes)
    lane = roundToType(b, loc, lane, resultType);
  // Consumers on the W lanes at output index pixel * F + f0, then the
  // stores (one W-wide store per yielded value).
  LaneEvaluator eval(b, loc, width, flatArgs);
  eval.bind(p.anchor->getResult(0), lanes);
  Value index = add(b, mul(b, pixel, p.f), f0);
  Access access{AccessKind::Contiguous, {index}};
  SmallVector<Lanes> values;
  for (Value v : group.getYield().getValues()) {
    FailureOr<Lanes> out = eval.evaluate(v, access);
    if (failed(out))
      return failure();
    values.push_back(*out);
  }
  for (auto [i, out] : llvm::enumerate(values))
    eval.store(out, getElementType(group.getResult(i)), flatOutputs[i], index);
  return success();
}

LogicalResult WindowKernelBuilder::emit() {
  OpBuilder b(kernel.getContext());
  Block &entry = kernel.getBody().front();
  b.setInsertionPointToStart(&entry);
  flattenGroupBuffers(b, loc, group, entry, flatArgs, flatOutputs);

  // Unroll the innermost window dims while their taps stay few.
  const int64_t extents[3] = {p.kh, p.kw, p.groupIn};
  int64_t inner = 1;
  firstUnrolledDim = 3;
  while (firstUnrolledDim > 0 &&
         inner * extents[firstUnrolledDim - 1] <= kMaxUnrolledWindowTaps)
    inner *= extents[--firstUnrolledDim];

  int64_t blockX = config.getBlockX(), blockY = config.getBlockY();
  int64_t vectors = p.f / width;
  KernelLaunch launch = getWindowLaunch(config, p);
  Value tx = gpu::ThreadIdOp::create(b, loc, gpu::Dimension::x);
  Value ty = gpu::ThreadIdOp::create(b, loc, gpu::Dimension::y);
  Value bx = gpu::BlockIdOp::create(b, loc, gpu::Dimension::x);
  Value by = gpu::BlockIdOp::create(b, loc, gpu::Dimension::y);
  Value vector = add(b, mul(b, by, blockX), tx);
  f0 = mul(b, vector, width);

  // Threads past the last channel vector do nothing.
  if (launch.grid[1] * blockX != vectors) {
    Value live = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult,
                                       vector, c(b, vectors));
    auto ifOp = scf::IfOp::create(b, loc, live, /*withElseRegion=*/false);
    b.setInsertionPointToStart(ifOp.thenBlock());
  }
  // The filter taps of the thread's channels, loaded once (windowPreloads-
  // Filter implies every tap is unrolled).
  if (windowPreloadsFilter(p, width)) {
    assert(firstUnrolledDim == 0 && "preloaded taps are unrolled");
    // Channels [f0, f0 + W) own the filter's flat elements [f0 * T,
    // (f0 + W) * T), T taps each: T W-wide loads (f0 * T is a multiple of W)
    // instead of T * W scalar gathers with a stride of T elements.
    int64_t taps = p.getTaps();
    Value base = mul(b, f0, taps);
    Value filterValue = llvm::cast<Conv2dOp>(p.anchor).getFilter();
    SmallVector<Lanes> chunks;
    for (int64_t j = 0; j < taps; ++j) {
      LaneEvaluator eval(b, loc, width, flatArgs);
      FailureOr<Lanes> chunk = eval.evaluate(
          filterValue,
          {AccessKind::Contiguous, {add(b, base, c(b, j * width))}});
      if (failed(chunk))
        return failure();
      chunks.push_back(*chunk);
    }
    // Tap t of lane l is flat element l * T + t of the thread's range.
    for (int64_t t = 0; t < taps; ++t) {
      Lanes lanes;
      for (int64_t l = 0; l < width; ++l)
        lanes.push_back(chunks[(l * taps + t) / width][(l * taps + t) % width]);
      filter.push_back(lanes);
    }
  }
  int64_t strip = config.getStrip();
  assert((strip == 1 || firstUnrolledDim == 0) && "strips unroll every tap");
  Value start = add(b, mul(b, bx, blockY), ty);
  auto loop = scf::ForOp::create(b, loc, start, c(b, p.getStrips(strip)),
                                 c(b, config.getGridSize() * blockY));
  OpBuilder nb = OpBuilder::atBlockBegin(loop.getBody());
  if (failed(strip == 1 ? emitPixel(nb, loop.getInductionVar())
                        : emitStrip(nb, loop.getInductionVar())))
    return failure();
  b.setInsertionPointToEnd(&entry);
  gpu::ReturnOp::create(b, loc);
  return success();
}

LogicalResult kgraph::checkWindowKernelGroup(FusedOp group,
                                             WindowConfigAttr config,
                                             const SMTarget &target) {
  if (failed(checkWindowGroup(group)))
    return failure();
  return verifyWindowConfig(group, config, target,
                            [&] { return group.emitOpError(); });
}

LogicalResult kgraph::emitWindowKernel(FusedOp group, WindowConfigAttr config,
                                       gpu::GPUFuncOp kernel) {
  FailureOr<WindowProblem> p = getWindowProblem(group);
  if (failed(p))
    return group.emitOpError("is not a window group");
  return WindowKernelBuilder(group, config, kernel, *p).emit();
}
