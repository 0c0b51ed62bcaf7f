//===- WindowTiling.cpp - the model of window kernels ---------------------===//
//
// The window family's contract, legality check, launch, estimate and
// candidates (WindowTiling.h). The default configuration: 16-byte vectors of
// the widest operand along the output channels, a warp's threads over
// consecutive channel vectors and pixels (block_x = the channel vectors up to
// 32), 256 threads, at most 8 waves of resident blocks (by threads and the
// model's registers) striding over the pixels (so a thread that preloads its
// filter taps reuses them), and for convolutions the strip of 1, 2, 4 or 8
// pixels the estimate prefers.
//
//===----------------------------------------------------------------------===//

#include "kgraph/Dialect/KGraph/Transforms/WindowTiling.h"
#include "kgraph/Dialect/KGraph/IR/AccessMap.h"
#include "kgraph/Dialect/KGraph/IR/KGraphClassify.h"
#include "kgraph/Dialect/KGraph/Transforms/FusionRules.h"
#include "kgraph/Dialect/KGraph/Transforms/ReduceTiling.h"
#include "kgraph/Target/SMTargets.h"

#include "mlir/Dialect/Arith/IR/Arith.h"

#include <cmath>
#include <numeric>

using namespace mlir;
using namespace kgraph;

/// Most filter values (taps times lanes) a thread keeps in registers.
static constexpr int64_t kMaxPreloadedFilterValues = 128;
/// Grid-stride blocks of the default: waves of resident blocks.
static constexpr int64_t kDefaultWaves = 8;
/// Memory latency of one pixel step of a thread (its taps' loads in flight
/// together), microseconds.
static constexpr double kPixelLatencyUs = 0.5;
/// Largest grid y (channel-vector blocks).
static constexpr int64_t kMaxGridY = 65535;
/// Registers of a thread besides its lane values: indices, addresses, loop.
static constexpr int64_t kFixedWindowRegisters = 24;

static ArrayRef<int64_t> shapeOf(Value v) {
  return llvm::cast<ShapedType>(v.getType()).getShape();
}

/// The pool2d or conv2d ops of `group`.
static SmallVector<Operation *> getWindowAnchors(FusedOp group) {
  SmallVector<Operation *> anchors;
  for (Operation &op : group.getBody().front().without_terminator())
    if (llvm::isa<Pool2dOp, Conv2dOp>(op))
      anchors.push_back(&op);
  return anchors;
}

LogicalResult kgraph::checkWindowGroup(FusedOp group) {
  // One pool2d or conv2d among elementwise ops and constants.
  std::string error = getGroupKindError(group, GroupKind::window);
  if (!error.empty())
    return group.emitOpError("is not a window group: ") << error;
  Operation *anchor = getWindowAnchors(group).front();
  std::string why;
  if (!isWindowOp(anchor, &why))
    return anchor->emitOpError("cannot be computed by a window kernel: ")
           << why;
  for (Operation &op : group.getBody().front().without_terminator())
    if (op.hasTrait<mlir::OpTrait::ConstantLike>() &&
        failed(verifyKernelConstant(&op)))
      return failure();
  if (group.getNumResults() == 0)
    return group.emitOpError("has no results to compute");
  ArrayRef<int64_t> outShape = shapeOf(anchor->getResult(0));
  for (Value v : group.getYield().getValues())
    if (shapeOf(v) != outShape)
      return group.emitOpError("yields a value of type ")
             << v.getType()
             << "; a window kernel writes only values of its anchor's result "
                "shape "
             << anchor->getResult(0).getType();
  return success();
}

FailureOr<WindowProblem> kgraph::getWindowProblem(FusedOp group) {
  SmallVector<Operation *> anchors = getWindowAnchors(group);
  if (anchors.size() != 1)
    return failure();
  WindowProblem p;
  p.anchor = anchors.front();
  ArrayRef<int64_t> in = shapeOf(p.anchor->getOperand(0));
  ArrayRef<int64_t> out = shapeOf(p.anchor->getResult(0));
  if (in.size() != 4 || out.size() != 4)
    return failure();
  // Window ops are channels-last (isWindowOp).
  p.n = in[0], p.h = in[1], p.w = in[2], p.c = in[3];
  p.oh = out[1], p.ow = out[2], p.f = out[3];
  ArrayRef<int64_t> strides, padding;
  if (auto pool = llvm::dyn_cast<Pool2dOp>(p.anchor)) {
    if (pool.getLayout() != Layout::nhwc)
      return failure();
    p.kind = pool.getKind() == PoolKind::max ? WindowOpKind::MaxPool
                                             : WindowOpKind::AvgPool;
    p.kh = pool.getKernel()[0], p.kw = pool.getKernel()[1];
    strides = pool.getStrides();
    padding = pool.getPadding();
  } else {
    auto conv = llvm::cast<Conv2dOp>(p.anchor);
    if (conv.getLayout() != Layout::nhwc || conv.getGroups() < 1)
      return failure();
    p.kind = WindowOpKind::Conv;
    ArrayRef<int64_t> filter = shapeOf(conv.getFilter()); // [F, KH, KW, C/g]
    p.kh = filter[1], p.kw = filter[2];
    p.dilationH = conv.getDilations()[0], p.dilationW = conv.getDilations()[1];
    p.groupIn = p.c / conv.getGroups();
    p.groupOut = p.f / conv.getGroups();
    strides = conv.getStrides();
    padding = conv.getPadding();
  }
  p.strideH = strides[0], p.strideW = strides[1];
  p.padTop = padding[0], p.padLeft = padding[2];
  return p;
}

int64_t kgraph::getMaxWindowVectorWidth(FusedOp group, const WindowProblem &p) {
  int64_t width = std::max<int64_t>(1, 16 / getWidestAccessBytes(group));
  while (width > 1 && p.f % width != 0)
    width /= 2;
  return width;
}

int64_t WindowProblem::getStripColumns(int64_t strip) const {
  if (strip == 1)
    return kw;
  llvm::SmallDenseSet<int64_t, 64> offsets;
  for (int64_t r = 0; r < strip; ++r)
    for (int64_t k = 0; k < kw; ++k)
      offsets.insert(r * strideW + k * dilationW);
  return int64_t(offsets.size());
}

/// Bytes of one element of shaped type `t` (at least 1).
static int64_t elementBytes(Type t) {
  return std::max<int64_t>(
      1, llvm::cast<ShapedType>(t).getElementTypeBitWidth() / 8);
}

int64_t kgraph::estimateWindowRegisters(const WindowProblem &p, int64_t width,
                                        int64_t strip) {
  // 32-bit accumulators per lane and pixel.
  int64_t regs = kFixedWindowRegisters + strip * width;
  // Preloaded taps stay in their loaded (packed) form.
  if (windowPreloadsFilter(p, width))
    regs += llvm::divideCeil(p.getTaps() * width *
                                 elementBytes(llvm::cast<Conv2dOp>(p.anchor)
                                                  .getFilter()
                                                  .getType()),
                             4);
  // A conv keeps one window row's input columns (32-bit compute type) for
  // the multiply-adds of the strip's pixels; a pool folds each column into
  // its accumulators as it arrives.
  int64_t columns =
      p.kind == WindowOpKind::Conv
          ? std::min<int64_t>(p.getStripColumns(strip), kMaxUnrolledWindowTaps)
          : 1;
  return regs + columns * width;
}

bool kgraph::windowPreloadsFilter(const WindowProblem &p, int64_t vectorWidth) {
  return p.kind == WindowOpKind::Conv && p.getTaps() <= kMaxUnrolledWindowTaps &&
         p.getTaps() * vectorWidth <= kMaxPreloadedFilterValues;
}

KernelLaunch kgraph::getWindowLaunch(WindowConfigAttr config,
                                     const WindowProblem &p) {
  KernelLaunch launch;
  int64_t vectors = p.f / std::max<int64_t>(1, config.getVectorWidth());
  launch.grid = {config.getGridSize(),
                 int64_t(llvm::divideCeil(vectors, config.getBlockX())), 1};
  launch.block = {config.getBlockX(), config.getBlockY(), 1};
  return launch;
}

LogicalResult
kgraph::verifyWindowConfig(FusedOp group, WindowConfigAttr config,
                           const SMTarget &target,
                           function_ref<InFlightDiagnostic()> emitError) {
  FailureOr<WindowProblem> p = getWindowProblem(group);
  if (failed(p))
    return emitError() << "is not a window group (one channels-last pool2d "
                          "or grouped conv2d)";
  int64_t width = config.getVectorWidth();
  if (p->f % width != 0)
    return emitError() << "vector_width " << width << " must divide the "
                       << p->f << " output channels";
  int64_t widest = getWidestAccessBytes(group);
  if (width * widest > 16)
    return emitError() << "vector_width " << width << " moves "
                       << width * widest
                       << " bytes of the group's widest element type; at most "
                          "16 bytes per access";
  if (config.getNumThreads() > int64_t(target.maxThreadsPerBlock))
    return emitError() << "block_x * block_y = " << config.getNumThreads()
                       << " exceeds the " << target.maxThreadsPerBlock
                       << " threads per block of " << target.name;
  int64_t strip = config.getStrip();
  if (strip > p->ow)
    return emitError() << "strip " << strip << " exceeds the " << p->ow
                       << " output columns";
  if (strip > 1 && p->getTaps() > kMaxUnrolledWindowTaps)
    return emitError() << "strip " << strip << " needs every window tap "
                       << "unrolled; the window has " << p->getTaps()
                       << " taps (KH * KW * input channels per group), at "
                          "most "
                       << kMaxUnrolledWindowTaps;
  KernelLaunch launch = getWindowLaunch(config, *p);
  if (launch.grid[1] > kMaxGridY)
    return emitError() << "needs " << launch.grid[1]
                       << " blocks in grid y (output channel vectors over "
                          "block_x); at most "
                       << kMaxGridY;
  return success();
}

/// Blocks of `threads` threads resident on one SM, by the thread, block and
/// register limits (the model's registers, rounded to 8 per thread).
static int64_t getResidentBlocks(const WindowProblem &p,
                                 const SMTarget &target, int64_t width,
                                 int64_t strip, int64_t threads) {
  threads = std::min<int64_t>(1024, threads);
  int64_t byThreads = target.blocksPerSMByThreads(unsigned(threads));
  int64_t regs = llvm::alignTo(
      std::min<int64_t>(estimateWindowRegisters(p, width, strip),
                        target.maxRegistersPerThread),
      8);
  int64_t byRegisters = int64_t(target.registersPerSM) / (regs * threads);
  return std::max<int64_t>(1, std::min(byThreads, byRegisters));
}

double kgraph::estimateWindowMicroseconds(FusedOp group,
                                          WindowConfigAttr config,
                                          const SMTarget &target) {
  FailureOr<WindowProblem> p = getWindowProblem(group);
  if (failed(p))
    return 0;
  int64_t width = config.getVectorWidth();
  // Bytes: every group input and result once (the windows' overlap is
  // served by the caches).
  double bytes = 0;
  for (Type t : llvm::concat<const Type>(group.getInputs().getTypes(),
                                         group.getResultTypes()))
    bytes += double(llvm::cast<ShapedType>(t).getNumElements()) *
             double(elementBytes(t));
  double memoryUs = target.dramMicroseconds(bytes);
  // Instructions per output vector: W multiply-adds (or comparisons) per
  // tap; per loaded input column an address and W selects (a strip of R
  // pixels loads each column its windows share once); W filter gathers per
  // tap when not preloaded (shared by the strip); the strip's coordinates
  // and W conversions and stores per pixel.
  int64_t strip = config.getStrip();
  double loads = double(p->kh * p->groupIn) *
                 double(p->getStripColumns(strip)) / double(strip);
  double gathers = p->kind == WindowOpKind::Conv &&
                           !windowPreloadsFilter(*p, width)
                       ? double(p->getTaps() * width) / double(strip)
                       : 0.0;
  double outputVectors = double(p->getPixels()) * double(p->f / width);
  double instructions =
      outputVectors * (double(p->getTaps() * width) +
                       loads * (3.0 + double(width)) + gathers +
                       16.0 / double(strip) + 2.0 * width);
  double issueUs = target.cyclesToMicroseconds(
      instructions / (double(target.numSMs) * double(target.f32LanesPerSM)));
  // L2 traffic: every input vector load (the caches' reuse of a window's
  // overlap with its neighbours' not counted), which strips cut. Measured
  // on the H200 (session 17, depthwise 3x3 f16): strips of 1, 2, 4 and 8
  // took 36, 31, 25 and 24 us, in order with this bound.
  int64_t inputBytes =
      elementBytes(llvm::cast<ShapedType>(p->anchor->getOperand(0).getType()));
  double l2Us = target.cyclesToMicroseconds(
      outputVectors * loads * double(width * inputBytes) /
      (double(target.l2BytesPerClock) * double(target.numSMs)));
  // Idle threads: channel vectors past the last in grid y, pixels past the
  // last in the grid-stride loop, the last partial wave.
  KernelLaunch launch = getWindowLaunch(config, *p);
  int64_t vectors = p->f / width;
  double channelUse =
      double(vectors) / double(launch.grid[1] * config.getBlockX());
  int64_t stripsPerStep = config.getGridSize() * config.getBlockY();
  int64_t strips = p->getStrips(strip);
  int64_t steps = int64_t(llvm::divideCeil(strips, stripsPerStep));
  // Pixels past the end of a row in its last strip idle too.
  double pixelUse = double(p->getPixels()) /
                    double(steps * stripsPerStep * strip);
  int64_t blocks = launch.grid[0] * launch.grid[1];
  int64_t resident = int64_t(target.numSMs) *
                     getResidentBlocks(*p, target, width, strip,
                                       config.getNumThreads());
  double waves = std::ceil(double(blocks) / double(resident));
  double waveUse = double(blocks) / (waves * double(resident));
  // A thread's strips follow one another, each waiting for its loads
  // (issued together): small problems take this latency, not bandwidth.
  double latencyUs = double(steps) * waves * kPixelLatencyUs;
  return std::max(std::max({memoryUs, l2Us, issueUs}) /
                      (channelUse * pixelUse * waveUse),
                  latencyUs);
}

/// A configuration of `width`, `threads` per block (rounded so a block is
/// whole warps) with up to `maxBlockX` threads along the channel vectors,
/// `waves` of resident blocks (0: a block per `block_y` strips) and `strip`
/// pixels per thread; null where no block of whole warps has that many
/// channel vectors, or a strip's registers exceed a thread's.
static WindowConfigAttr makeConfig(FusedOp group, const WindowProblem &p,
                                   const SMTarget &target, int64_t width,
                                   int64_t threads, int64_t maxBlockX,
                                   int64_t waves, int64_t strip = 1) {
  if (strip > 1 && estimateWindowRegisters(p, width, strip) >
                       int64_t(target.maxRegistersPerThread))
    return {};
  int64_t vectors = p.f / width;
  int64_t blockX = std::min(vectors, maxBlockX);
  // block_y: whole warps, as close to `threads` as they come.
  int64_t unit = 32 / std::gcd<int64_t>(blockX, 32);
  int64_t blockY = std::max<int64_t>(unit, threads / blockX / unit * unit);
  // No more strip rows than there are strips (whole warps still).
  int64_t strips = p.getStrips(strip);
  blockY = std::min(blockY, int64_t(llvm::alignTo(strips, unit)));
  while (blockX * blockY > 1024 && blockY > unit)
    blockY -= unit;
  // A block of whole warps over more than 1024 / 32 channel vectors that are
  // not a multiple of 32 (33 vectors: 33 x 32 threads) has no legal shape.
  if (blockX * blockY > 1024)
    return {};
  int64_t gridY = int64_t(llvm::divideCeil(vectors, blockX));
  int64_t needed =
      std::max<int64_t>(1, int64_t(llvm::divideCeil(strips, blockY)));
  int64_t grid = needed;
  if (waves > 0) {
    int64_t resident =
        int64_t(target.numSMs) *
        getResidentBlocks(p, target, width, strip, blockX * blockY);
    int64_t cap = std::max<int64_t>(1, waves * resident / gridY);
    // The fewest grid-stride steps under the cap, the blocks evened out
    // over them (no last step of few strips).
    int64_t steps = llvm::divideCeil(needed, cap);
    grid = llvm::divideCeil(needed, steps);
  }
  return WindowConfigAttr::get(group.getContext(), width, blockX, blockY, grid,
                               strip);
}

SmallVector<WindowConfigAttr>
kgraph::enumerateWindowConfigs(FusedOp group, const SMTarget &target) {
  SmallVector<WindowConfigAttr> configs;
  FailureOr<WindowProblem> p = getWindowProblem(group);
  if (failed(p))
    return configs;
  int64_t maxWidth = getMaxWindowVectorWidth(group, *p);
  auto add = [&](WindowConfigAttr c) {
    if (c && !llvm::is_contained(configs, c))
      configs.push_back(c);
  };
  // The default: its strip the one of least estimate, a longer strip only
  // where it saves at least 5% (so 1 unless longer strips pay); per strip,
  // 256 or 128 threads of 16-byte vectors (strips of 2 or more pixels also
  // of half that width), where within
  // 2% of each other the one with the most threads resident per SM (a
  // long strip of wide vectors can leave one block per SM: measured 14%
  // slower than half-width vectors for the depthwise 3x3 with strip 8).
  WindowConfigAttr best;
  double bestUs = 0;
  auto residentThreads = [&](WindowConfigAttr c) {
    return c.getNumThreads() * getResidentBlocks(*p, target, c.getVectorWidth(),
                                                 c.getStrip(),
                                                 c.getNumThreads());
  };
  for (int64_t strip : {1, 2, 4, 8}) {
    if (strip > 1 && (p->kind != WindowOpKind::Conv ||
                      p->getTaps() > kMaxUnrolledWindowTaps || strip > p->ow))
      break;
    WindowConfigAttr stripBest;
    double stripUs = 0;
    for (int64_t width : {maxWidth, maxWidth / 2}) {
      if (width < 1 || p->f % width != 0 || (width != maxWidth && strip == 1))
        continue;
      for (int64_t threads : {256, 128}) {
        WindowConfigAttr c = makeConfig(group, *p, target, width, threads, 32,
                                        kDefaultWaves, strip);
        if (!c)
          continue;
        double us = estimateWindowMicroseconds(group, c, target);
        bool tie = stripBest && us <= 1.02 * stripUs && us >= stripUs / 1.02;
        if (!stripBest || (!tie && us < stripUs) ||
            (tie && residentThreads(c) > residentThreads(stripBest)))
          stripBest = c, stripUs = us;
      }
    }
    if (stripBest && (!best || stripUs < 0.95 * bestUs))
      best = stripBest, bestUs = stripUs;
  }
  add(best);
  for (int64_t width = maxWidth; width >= 1; width /= 2) {
    if (p->f % width != 0)
      continue;
    for (int64_t threads : {256, 128, 512})
      for (int64_t maxBlockX : {32, 16, 64, 128})
        for (int64_t waves : {kDefaultWaves, int64_t(2), int64_t(32),
                              int64_t(0)})
          add(makeConfig(group, *p, target, width, threads, maxBlockX,
                         waves));
  }
  // Convolutions whose taps are unrolled: strips of 2 to 8 pixels, which
  // load the columns their windows share once.
  if (p->kind == WindowOpKind::Conv &&
      p->getTaps() <= kMaxUnrolledWindowTaps)
    for (int64_t strip : {2, 4, 8}) {
      if (strip > p->ow)
        break;
      for (int64_t width = maxWidth; width >= 1; width /= 2) {
        if (p->f % width != 0)
          continue;
        for (int64_t threads : {256, 128})
          for (int64_t waves : {kDefaultWaves, int64_t(2), int64_t(0)})
            add(makeConfig(group, *p, target, width, threads, 32, waves,
                           strip));
      }
    }
  return configs;
}
