//===- SplitKConvs.cpp - deep-K convs over few pixels as split-K ----------===//
//
// kgraph-split-k-convs (Passes.td): an implicit-GEMM conv2d whose GEMM has
// few output tiles and a long K (a batch-1 CNN's last stages: 49 pixels,
// K = 4608) keeps a few blocks walking K alone while most SMs idle. Split
// the input channels into S slices: the conv becomes one grouped conv of S
// groups whose group s applies every filter to slice s (its S * F outputs
// are partial sums in the accumulator type), and a sum over the S partials
// gives the conv's result. The GEMM then has S times the blocks, each over
// K / S; the sum is a reduction kernel into which kgraph-fuse fuses the
// conv's consumers (bias, residual, relu) as before.
//
// The grouped conv's filter is the filter's channel slices stacked along F:
// nhwc [F, KH, KW, C] -> [F, KH, KW, S, C/S] -> [S, F, KH, KW, C/S] ->
// [S*F, KH, KW, C/S] (a copy kernel; nchw alike over [F, C, KH, KW]).
//
// The GEMM model (MatmulModel.cpp) decides: the conv's estimate against the
// grouped conv's plus the partials' round trip, the filter's copy and two
// more launches; a grid of blocks alone on their SMs takes at least
// kLoneIterationCycles per main-loop iteration (the model alone was
// 2.3-2.6x below the H200's times for such grids); a split must promise at
// least `min-gain` (1.25 by default).
//
//===----------------------------------------------------------------------===//

#include "kgraph/Dialect/KGraph/IR/KGraphClassify.h"
#include "kgraph/Dialect/KGraph/Transforms/FusionRules.h"
#include "kgraph/Dialect/KGraph/Transforms/GemmModel.h"
#include "kgraph/Dialect/KGraph/Transforms/MatmulTiling.h"
#include "kgraph/Dialect/KGraph/Transforms/Passes.h"
#include "kgraph/Target/ElementTypes.h"
#include "kgraph/Target/SMTargets.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/TypeUtilities.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/raw_ostream.h"

#include <sstream>

namespace kgraph {
#define GEN_PASS_DEF_KGRAPHSPLITKCONVS
#include "kgraph/Dialect/KGraph/Transforms/Passes.h.inc"
} // namespace kgraph

using namespace mlir;
using namespace kgraph;

namespace {

/// Splits tried, each a power of two.
constexpr int64_t kMaxSplit = 32;
/// A slice keeps at least this many K (four 64-deep main-loop iterations).
constexpr int64_t kMinSliceK = 256;
/// A slice's channels fill whole 16-byte vectors per pixel (nhwc) and more
/// than a window op's (a grouped conv with few channels per group is a
/// depthwise-style window kernel, not a GEMM).
constexpr int64_t kVectorBytes = 16;
/// What one more kernel costs besides its traffic (launch, ramp and tail),
/// microseconds: about what the H200 spends on a small kernel in a CUDA
/// graph (bench/RESULTS.md, ResNet-50 batch 1 profile).
constexpr double kKernelMicroseconds = 2.0;

/// Clocks one main-loop iteration (tile_k deep) takes at the least for a
/// block alone on its SM: the latency of its copies and of its few warps'
/// dependent address and MMA instructions, which no other block hides. The
/// GEMM model's throughput terms do not see it; calibrated on the H200
/// (S17-3's batch-1 ResNet-50 profile, bench/RESULTS.md: 32x32x64 blocks of
/// 2 warps with 4 stages took 770-910 clocks per iteration over 32-72
/// iterations, launch taken off, where the model estimated 330-400).
constexpr double kLoneIterationCycles = 800;

/// The model's microseconds for `p` with its default configuration, at
/// least kLoneIterationCycles per main-loop iteration of a grid of blocks
/// alone on their SMs; nullopt when no configuration fits.
std::optional<double> estimateMicroseconds(MLIRContext *ctx,
                                           const MatmulProblem &p,
                                           const SMTarget &target) {
  FailureOr<MatmulConfigAttr> config = chooseMatmulConfig(ctx, p, target);
  if (failed(config))
    return std::nullopt;
  MatmulEstimate e = estimateMatmul(*config, p, target);
  double cycles = e.cycles;
  if (e.numBlocks <= int64_t(target.numSMs)) {
    int64_t iterations = llvm::divideCeilSigned(p.k, config->getTileK());
    cycles = std::max(cycles, double(iterations) * kLoneIterationCycles);
  }
  return target.cyclesToMicroseconds(cycles);
}

struct SplitPlan {
  /// The split taken (1: none) and the best one tried (1: none fit).
  int64_t slices = 1, bestSlices = 1;
  double microseconds = 0, splitMicroseconds = 0;
  /// The filter's stacking runs once at load, not per call.
  bool filterAtLoad = false;
};

/// Whether `v` is computed from the function's parameters (kgraph.param
/// arguments) and constants alone, within a few ops: what
/// kgraph-lower-to-gpu{hoist-parameter-kernels} runs once at load.
bool isFromParameters(Value v, int depth = 0) {
  if (auto arg = llvm::dyn_cast<BlockArgument>(v)) {
    auto func = llvm::dyn_cast<func::FuncOp>(arg.getOwner()->getParentOp());
    return func && func.getArgAttr(arg.getArgNumber(), kParamAttrName);
  }
  Operation *op = v.getDefiningOp();
  if (!op || depth > 8 || op->getNumRegions() != 0)
    return false;
  return llvm::all_of(op->getOperands(), [&](Value operand) {
    return isFromParameters(operand, depth + 1);
  });
}

/// The split the model prefers for `conv` (slices 1: none). With
/// `hoistedFilters`, a filter from parameters is rearranged once at load:
/// neither its copy nor its launch is paid per call.
SplitPlan planSplit(Conv2dOp conv, const SMTarget &target, double minGain,
                    bool hoistedFilters) {
  SplitPlan plan;
  FailureOr<MatmulProblem> problem = getConvProblem(conv);
  if (failed(problem) || !problem->conv)
    return plan;
  const MatmulProblem &p = *problem;
  Type accType = getAccumulatorType(p.operandType);
  const ElementTypeInfo *operand = lookupElementType(p.operandType);
  const ElementTypeInfo *acc = accType ? lookupElementType(accType) : nullptr;
  const ElementTypeInfo *result = lookupElementType(p.resultType);
  if (!operand || !acc || !result || operand->storageBytes <= 0)
    return plan;
  MLIRContext *ctx = conv.getContext();
  std::optional<double> whole = estimateMicroseconds(ctx, p, target);
  if (!whole)
    return plan;
  plan.microseconds = *whole;
  const ConvGeometry &g = *p.conv;
  double outputs = double(p.m) * double(g.filters);
  double filterBytes = double(g.filters) * double(p.k) * operand->storageBytes;
  plan.filterAtLoad = hoistedFilters && isFromParameters(conv.getFilter());
  int64_t minSliceChannels = std::max<int64_t>(
      kMaxWindowGroupChannels + 1, kVectorBytes / operand->storageBytes);
  for (int64_t s = 2; s <= kMaxSplit; s *= 2) {
    if (g.channels % s != 0 || g.channels / s < minSliceChannels ||
        p.k / s < kMinSliceK)
      break;
    int64_t sliceChannels = g.channels / s;
    if (g.nhwc && (sliceChannels * operand->storageBytes) % kVectorBytes != 0)
      continue;
    MatmulProblem q = p;
    q.batch = s;
    q.k = p.k / s;
    q.resultType = accType;
    q.epilogueBytes = 0;
    if (g.nhwc)
      q.contiguousRunA = sliceChannels;
    q.conv->groups = s;
    q.conv->filters = g.filters * s;
    std::optional<double> gemm = estimateMicroseconds(ctx, q, target);
    if (!gemm)
      continue;
    // The partials are written by the GEMM (its estimate counts that) and
    // read once by the sum, which writes the result; the filter is copied
    // (once at load if it comes from parameters and that is hoisted).
    double extra =
        target.dramMicroseconds(
            outputs * (double(s) * acc->storageBytes + result->storageBytes) +
            (plan.filterAtLoad ? 0 : 2 * filterBytes)) +
        (plan.filterAtLoad ? 1 : 2) * kKernelMicroseconds;
    double total = *gemm + extra;
    if (plan.bestSlices == 1 || total < plan.splitMicroseconds) {
      plan.bestSlices = s;
      plan.splitMicroseconds = total;
    }
  }
  if (plan.bestSlices > 1 && plan.splitMicroseconds * minGain <= *whole)
    plan.slices = plan.bestSlices;
  return plan;
}

/// Rewrites `conv` as `slices` groups over channel slices and their sum.
void splitConv(Conv2dOp conv, int64_t slices) {
  OpBuilder b(conv);
  Location loc = conv.getLoc();
  bool nhwc = conv.getLayout() == Layout::nhwc;
  Value filter = conv.getFilter();
  auto resultType = llvm::cast<RankedTensorType>(conv.getType());
  auto filterType = llvm::cast<RankedTensorType>(filter.getType());
  SmallVector<int64_t> fil(filterType.getShape());
  int64_t f = fil[0];
  // The channel axis of the filter, split into [S, C/S] and S moved first.
  int64_t cAxis = nhwc ? 3 : 1;
  int64_t sliceChannels = fil[cAxis] / slices;
  SmallVector<int64_t> split(fil.begin(), fil.begin() + cAxis);
  split.push_back(slices);
  split.push_back(sliceChannels);
  split.append(fil.begin() + cAxis + 1, fil.end());
  Value w = ReshapeOp::create(b, loc, filterType.clone(split), filter);
  SmallVector<int64_t> perm = {cAxis};
  for (int64_t i = 0; i < int64_t(split.size()); ++i)
    if (i != cAxis)
      perm.push_back(i);
  w = TransposeOp::create(
      b, loc, ValueRange{w},
      {b.getNamedAttr("permutation", b.getDenseI64ArrayAttr(perm))});
  SmallVector<int64_t> grouped(fil);
  grouped[0] = slices * f;
  grouped[cAxis] = sliceChannels;
  w = ReshapeOp::create(b, loc, filterType.clone(grouped), w);

  // The partials: the result with S * F channels of the accumulator type.
  Type accType =
      getAccumulatorType(getElementTypeOrSelf(conv.getInput().getType()));
  SmallVector<int64_t> out(resultType.getShape());
  int64_t fAxis = nhwc ? 3 : 1;
  SmallVector<int64_t> partialShape(out);
  partialShape[fAxis] = slices * f;
  SmallVector<NamedAttribute> attrs(conv->getAttrs());
  llvm::erase_if(attrs,
                 [](NamedAttribute a) { return a.getName() == "groups"; });
  attrs.push_back(b.getNamedAttr("groups", b.getI64IntegerAttr(slices)));
  auto partialType = RankedTensorType::get(partialShape, accType);
  Value partials = Conv2dOp::create(b, loc, TypeRange{partialType},
                                    ValueRange{conv.getInput(), w}, attrs);
  SmallVector<int64_t> sliced(out.begin(), out.begin() + fAxis);
  sliced.push_back(slices);
  sliced.append(out.begin() + fAxis, out.end());
  partials = ReshapeOp::create(b, loc, partialType.clone(sliced), partials);
  Value sum = ReduceOp::create(
      b, loc, ValueRange{partials},
      {b.getNamedAttr("kind",
                      ReduceKindAttr::get(b.getContext(), ReduceKind::sum)),
       b.getNamedAttr("axes", b.getDenseI64ArrayAttr({fAxis}))});
  if (accType != resultType.getElementType())
    sum = CastOp::create(b, loc, resultType, sum);
  conv.replaceAllUsesWith(sum);
  conv.erase();
}

struct SplitKConvsPass
    : public kgraph::impl::KGraphSplitKConvsBase<SplitKConvsPass> {
  using Base::Base;

  void runOnOperation() override {
    if (!(minGain >= 1.0)) {
      getOperation().emitError()
          << "kgraph-split-k-convs: min-gain must be at least 1, got "
          << (std::ostringstream() << double(minGain)).str();
      return signalPassFailure();
    }
    const SMTarget *smTarget = lookupSMTarget(target);
    if (!smTarget) {
      getOperation().emitError()
          << "kgraph-split-k-convs: unknown target '" << target
          << "' (known: " << getKnownSMTargetNames() << ")";
      return signalPassFailure();
    }
    SmallVector<std::pair<Conv2dOp, int64_t>> splits;
    getOperation().walk([&](Conv2dOp conv) {
      // Implicit GEMMs of one group outside kernel groups, with the
      // accumulator type the element-type table gives their operands.
      if (conv->getParentOfType<FusedOp>() || !isGemmAnchor(conv) ||
          conv.getGroups() != 1)
        return;
      ArrayRef<int64_t> dil = conv.getDilations();
      if (dil.size() != 2 || dil[0] != 1 || dil[1] != 1)
        return;
      SplitPlan plan = planSplit(conv, *smTarget, minGain, hoistedFilters);
      // Reported: the splits taken, and those estimated faster but by
      // less than min-gain.
      if (report && plan.bestSlices > 1 &&
          plan.splitMicroseconds < plan.microseconds) {
        std::string text;
        llvm::raw_string_ostream os(text);
        os << "split-K on " << smTarget->name << ": "
           << (plan.slices > 1 ? "" : "not ") << "split into "
           << plan.bestSlices << " channel slices, estimated "
           << llvm::format("%.1f", plan.microseconds) << " us as written, "
           << llvm::format("%.1f", plan.splitMicroseconds)
           << " us split (grouped conv, sum"
           << (plan.filterAtLoad ? "; filter copied at load)"
                                 : ", filter copy)");
        if (plan.slices == 1)
          os << ": less than " << llvm::format("%.2f", double(minGain))
             << "x faster";
        conv.emitRemark(text);
      }
      if (plan.slices <= 1)
        return;
      splits.push_back({conv, plan.slices});
    });
    for (auto [conv, slices] : splits)
      splitConv(conv, slices);
  }
};

} // namespace
