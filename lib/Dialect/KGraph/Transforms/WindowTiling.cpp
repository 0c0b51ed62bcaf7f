//===- WindowTiling.cpp - the model of window kernels ---------------------===//
//
// The window family's contract, legality check, launch, estimate and
// candidates (WindowTiling.h). The default configuration: 16-byte vectors of
// the widest operand along the output channels, a warp's threads over
// consecutive channel vectors and pixels (block_x = the channel vectors up to
// 32), 256 threads, and at most 8 waves of resident blocks striding over the
// pixels (so a thread that preloads its filter taps reuses them).
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
  KernelLaunch launch = getWindowLaunch(config, *p);
  if (launch.grid[1] > kMaxGridY)
    return emitError() << "needs " << launch.grid[1]
                       << " blocks in grid y (output channel vectors over "
                          "block_x); at most "
                       << kMaxGridY;
  return success();
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
                                         group.getResultTypes())) {
    auto shaped = llvm::cast<ShapedType>(t);
    bytes += double(shaped.getNumElements()) *
             std::max<int64_t>(1, shaped.getElementTypeBitWidth() / 8);
  }
  double memoryUs = target.dramMicroseconds(bytes);
  // Instructions: per output vector and tap an address, a select and W
  // multiply-adds (or comparisons), W filter loads when not preloaded, and a
  // fixed cost per pixel (its coordinates and the stores).
  double perTap = 3.0 + double(width) +
                  (p->kind == WindowOpKind::Conv &&
                           !windowPreloadsFilter(*p, width)
                       ? double(width)
                       : 0.0);
  double outputVectors = double(p->getPixels()) * double(p->f / width);
  double instructions =
      outputVectors * (double(p->getTaps()) * perTap + 16.0 + 2.0 * width);
  double issueUs = target.cyclesToMicroseconds(
      instructions / (double(target.numSMs) * double(target.f32LanesPerSM)));
  // Idle threads: channel vectors past the last in grid y, pixels past the
  // last in the grid-stride loop, the last partial wave.
  KernelLaunch launch = getWindowLaunch(config, *p);
  int64_t vectors = p->f / width;
  double channelUse =
      double(vectors) / double(launch.grid[1] * config.getBlockX());
  int64_t pixelsPerStep = config.getGridSize() * config.getBlockY();
  int64_t steps = int64_t(llvm::divideCeil(p->getPixels(), pixelsPerStep));
  double pixelUse = double(p->getPixels()) / double(steps * pixelsPerStep);
  int64_t blocks = launch.grid[0] * launch.grid[1];
  int64_t resident =
      std::max<int64_t>(1, int64_t(target.numSMs) *
                               target.blocksPerSMByThreads(
                                   unsigned(config.getNumThreads())));
  double waves = std::ceil(double(blocks) / double(resident));
  double waveUse = double(blocks) / (waves * double(resident));
  // A thread's pixels follow one another, each waiting for its taps' loads
  // (issued together): small problems take this latency, not bandwidth.
  double latencyUs = double(steps) * waves * kPixelLatencyUs;
  return std::max(std::max(memoryUs, issueUs) /
                      (channelUse * pixelUse * waveUse),
                  latencyUs);
}

/// A configuration of `width`, `threads` per block (rounded so a block is
/// whole warps) with up to `maxBlockX` threads along the channel vectors,
/// and `waves` of resident blocks (0: a block per `block_y` pixels); null
/// where no block of whole warps has that many channel vectors.
static WindowConfigAttr makeConfig(MLIRContext *ctx, const WindowProblem &p,
                                   const SMTarget &target, int64_t width,
                                   int64_t threads, int64_t maxBlockX,
                                   int64_t waves) {
  int64_t vectors = p.f / width;
  int64_t blockX = std::min(vectors, maxBlockX);
  // block_y: whole warps, as close to `threads` as they come.
  int64_t unit = 32 / std::gcd<int64_t>(blockX, 32);
  int64_t blockY = std::max<int64_t>(unit, threads / blockX / unit * unit);
  // No more pixel rows than there are pixels (whole warps still).
  blockY = std::min(blockY, int64_t(llvm::alignTo(p.getPixels(), unit)));
  while (blockX * blockY > 1024 && blockY > unit)
    blockY -= unit;
  // A block of whole warps over more than 1024 / 32 channel vectors that are
  // not a multiple of 32 (33 vectors: 33 x 32 threads) has no legal shape.
  if (blockX * blockY > 1024)
    return {};
  int64_t gridY = int64_t(llvm::divideCeil(vectors, blockX));
  int64_t needed =
      std::max<int64_t>(1, int64_t(llvm::divideCeil(p.getPixels(), blockY)));
  int64_t grid = needed;
  if (waves > 0) {
    int64_t resident =
        int64_t(target.numSMs) *
        std::max<unsigned>(1, target.blocksPerSMByThreads(
                                  unsigned(std::min<int64_t>(1024,
                                                             blockX * blockY))));
    grid = std::min(needed, std::max<int64_t>(1, waves * resident / gridY));
  }
  return WindowConfigAttr::get(ctx, width, blockX, blockY, grid);
}

SmallVector<WindowConfigAttr>
kgraph::enumerateWindowConfigs(FusedOp group, const SMTarget &target) {
  SmallVector<WindowConfigAttr> configs;
  FailureOr<WindowProblem> p = getWindowProblem(group);
  if (failed(p))
    return configs;
  MLIRContext *ctx = group.getContext();
  int64_t maxWidth = getMaxWindowVectorWidth(group, *p);
  auto add = [&](WindowConfigAttr c) {
    if (c && !llvm::is_contained(configs, c))
      configs.push_back(c);
  };
  add(makeConfig(ctx, *p, target, maxWidth, 256, 32, kDefaultWaves));
  for (int64_t width = maxWidth; width >= 1; width /= 2) {
    if (p->f % width != 0)
      continue;
    for (int64_t threads : {256, 128, 512})
      for (int64_t maxBlockX : {32, 16, 64, 128})
        for (int64_t waves : {kDefaultWaves, int64_t(2), int64_t(32),
                              int64_t(0)})
          add(makeConfig(ctx, *p, target, width, threads, maxBlockX, waves));
  }
  return configs;
}
