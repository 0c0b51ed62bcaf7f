//===- KernelFamilies.cpp - group kinds, config models, candidates --------===//
//
// classifyGroup() is the one answer to "which kernel family is this group";
// the KernelConfigAttrInterface models tie each configuration attribute to
// its family's checks and models; listConfigCandidates() is the open
// configuration space every family exposes (KernelFamilies.h).
//
//===----------------------------------------------------------------------===//

#include "kgraph/Dialect/KGraph/Transforms/KernelFamilies.h"
#include "kgraph/Dialect/KGraph/Transforms/TuningDB.h"

#include "kgraph/Dialect/KGraph/IR/KGraphClassify.h"
#include "kgraph/Dialect/KGraph/Transforms/FusionRules.h"
#include "kgraph/Dialect/KGraph/Transforms/MatmulTiling.h"
#include "kgraph/Dialect/KGraph/Transforms/Passes.h"
#include "kgraph/Dialect/KGraph/Transforms/ReduceTiling.h"
#include "kgraph/Dialect/KGraph/Transforms/StencilTiling.h"
#include "kgraph/Dialect/KGraph/Transforms/TransposeTiling.h"
#include "kgraph/Dialect/KGraph/Transforms/WindowTiling.h"
#include "kgraph/Target/SMTargets.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Diagnostics.h"

#include <cmath>

using namespace mlir;
using namespace kgraph;

//===----------------------------------------------------------------------===//
// Group kinds
//===----------------------------------------------------------------------===//

GroupKind kgraph::classifyGroup(FusedOp group) {
  // A lone transpose: the tiled kernel if it moves the innermost dim, else
  // (the innermost dim stays, or only size-1 dims move) an elementwise copy
  // through its access map, which keeps every access a contiguous vector.
  if (TransposeOp t = getSoleTransposeOp(group))
    return canonicalizeTranspose(t).isTiled() ? GroupKind::transpose
                                              : GroupKind::elementwise;
  // One channels-last pool2d or grouped conv2d among elementwise ops: the
  // direct window kernel (a stencil chain holds several stencil ops).
  {
    int64_t windowOps = 0, others = 0;
    for (Operation &op : group.getBody().front().without_terminator()) {
      if (isWindowOp(&op))
        ++windowOps;
      else if (!isElementwiseOp(&op) &&
               !op.hasTrait<mlir::OpTrait::ConstantLike>())
        ++others;
    }
    if (windowOps == 1 && others == 0)
      return GroupKind::window;
  }
  bool gemm = false, reduce = false, copy = false, onlyElementwiseReads = true;
  for (Operation &op : group.getBody().front().without_terminator()) {
    // Any pool2d (of any stride) or stencil conv2d makes a stencil group.
    if (llvm::isa<Pool2dOp>(op) || (llvm::isa<Conv2dOp>(op) && isStencilOp(&op)))
      return GroupKind::stencil;
    gemm |= llvm::isa<MatmulOp, Conv2dOp>(op);
    reduce |= llvm::isa<ReduceOp>(op);
    copy |= isDataMovementOp(&op);
    if (isDataMovementOp(&op) && !isElementwiseReadOp(&op))
      onlyElementwiseReads = false;
  }
  if (gemm)
    return GroupKind::gemm;
  if (reduce)
    return GroupKind::reduce;
  // Transposes, broadcasts, slices and concats, alone or feeding elementwise
  // ops, are read through their access maps by the elementwise kernel
  // (alone: a copy through the map; a concat reads each result element from
  // the input whose segment holds it). Only a reshape inside a group (views
  // never get a group of their own) is left to the copy kind.
  if (copy && !onlyElementwiseReads)
    return GroupKind::copy;
  return GroupKind::elementwise;
}

KernelConfigAttrInterface kgraph::getKernelConfig(FusedOp group) {
  Attribute attr = group->getAttr(kConfigAttrName);
  if (!attr) {
    group.emitOpError("has no '")
        << kConfigAttrName << "' configuration (run kgraph-tile first)";
    return {};
  }
  auto config = llvm::dyn_cast<KernelConfigAttrInterface>(attr);
  if (!config)
    group.emitOpError("has a '")
        << kConfigAttrName
        << "' that is not a kernel configuration (or the kernel-config models "
           "are not registered: kgraph::registerKernelConfigModels): "
        << attr;
  return config;
}

FailureOr<GroupKind> kgraph::resolveGroupKind(FusedOp group) {
  std::optional<GroupKind> recorded = group.getKind();
  Attribute pinnedAttr = group->getAttr(kConfigAttrName);
  if (!pinnedAttr)
    return recorded ? *recorded : classifyGroup(group);
  KernelConfigAttrInterface pinned = getKernelConfig(group);
  if (!pinned)
    return failure();
  GroupKind kind = pinned.getGroupKind();
  if (recorded && *recorded != kind)
    return group.emitOpError("is of kind '")
           << stringifyGroupKind(*recorded) << "' but its '"
           << kConfigAttrName << "' is for " << stringifyGroupKind(kind)
           << " kernels: " << pinnedAttr;
  std::string error = getGroupKindError(group, kind);
  if (!error.empty())
    return group.emitOpError("has a '")
           << kConfigAttrName << "' for " << stringifyGroupKind(kind)
           << " kernels but " << error << ": " << pinnedAttr;
  return kind;
}

//===----------------------------------------------------------------------===//
// Family checks
//===----------------------------------------------------------------------===//

/// Bytes of the group's inputs and results: what an elementwise or
/// reduction kernel must move at least once.
static int64_t getGroupBytes(FusedOp group) {
  int64_t bytes = 0;
  for (Type t : llvm::concat<const Type>(group.getInputs().getTypes(),
                                         group.getResultTypes())) {
    auto shaped = llvm::cast<ShapedType>(t);
    bytes += shaped.getNumElements() *
             std::max<int64_t>(1, shaped.getElementTypeBitWidth() / 8);
  }
  return bytes;
}

/// The elementwise contract: ops kgraph lowers lane by lane.
/// Transposes, broadcasts, slices and concats are read through their access
/// maps unless `allowReads` is false (copy groups, which have no kernels).
static LogicalResult checkElementwiseContract(FusedOp group,
                                              const SMTarget &target,
                                              bool allowReads = true) {
  for (Operation &op : group.getBody().front().without_terminator()) {
    if (isElementwiseOp(&op) || (allowReads && isElementwiseReadOp(&op)) ||
        op.hasTrait<mlir::OpTrait::ConstantLike>())
      continue;
    return op.emitOpError() << "has no code generation for " << target.name
                            << " yet: kgraph lowers elementwise, matmul, "
                               "conv2d, pool2d, reduce and transpose groups";
  }
  if (group.getNumResults() == 0)
    return group.emitOpError("has no results to compute");
  return success();
}

LogicalResult kgraph::checkGroupForKind(FusedOp group, GroupKind kind,
                                        const SMTarget &target) {
  switch (kind) {
  case GroupKind::elementwise:
    return checkElementwiseContract(group, target);
  case GroupKind::gemm:
    return getGemmGroupProblem(group, target);
  case GroupKind::reduce:
    return verifyReduceGroup(group);
  case GroupKind::stencil:
    return checkStencilGroup(group);
  case GroupKind::window:
    return checkWindowGroup(group);
  case GroupKind::copy:
    // Data movement has no kernels yet; name the first such op.
    return checkElementwiseContract(group, target, /*allowReads=*/false);
  case GroupKind::transpose: {
    TransposeOp t = getSoleTransposeOp(group);
    if (!t)
      return group.emitOpError("is not a single kgraph.transpose");
    if (failed(getTransposeLayout(t)))
      return t.emitOpError("keeps its innermost dim in place: it is an "
                           "elementwise copy, not a tiled transpose");
    return success();
  }
  }
  llvm_unreachable("unknown group kind");
}

//===----------------------------------------------------------------------===//
// KernelConfigAttrInterface models
//===----------------------------------------------------------------------===//

namespace {
/// Fraction of the resident-block slots the last wave of `blocks` uses.
double waveEfficiency(int64_t blocks, int64_t resident) {
  resident = std::max<int64_t>(1, resident);
  double waves = std::ceil(double(blocks) / double(resident));
  return double(blocks) / (waves * double(resident));
}

struct ElementwiseConfigModel
    : public KernelConfigAttrInterface::ExternalModel<ElementwiseConfigModel,
                                                      ElementwiseConfigAttr> {
  GroupKind getGroupKind(Attribute) const { return GroupKind::elementwise; }

  LogicalResult
  verifyForGroup(Attribute attr, Operation *op, const SMTarget &target,
                 function_ref<InFlightDiagnostic()> emitError) const {
    auto config = llvm::cast<ElementwiseConfigAttr>(attr);
    if (config.getBlockSize() > int64_t(target.maxThreadsPerBlock))
      return emitError() << "block_size " << config.getBlockSize()
                         << " exceeds the " << target.maxThreadsPerBlock
                         << " threads per block of " << target.name;
    if (Operation *tile = getWinogradTileResult(op)) {
      int64_t inner = llvm::cast<ShapedType>(tile->getResult(0).getType())
                          .getShape()
                          .back();
      if (inner % config.getVectorWidth() != 0)
        return emitError() << "vector_width " << config.getVectorWidth()
                           << " does not divide the innermost dim (" << inner
                           << ") of the " << tile->getName()
                           << " result, whose tiles a thread computes whole";
    }
    return success();
  }

  KernelLaunch getLaunch(Attribute attr, Operation *,
                         const SMTarget &) const {
    auto config = llvm::cast<ElementwiseConfigAttr>(attr);
    KernelLaunch launch;
    launch.grid = {config.getGridSize(), 1, 1};
    launch.block = {config.getBlockSize(), 1, 1};
    return launch;
  }

  /// The group's bytes at the part's memory bandwidth, stretched by the
  /// grid's last partial wave (registers are not modelled: 0).
  KernelEstimate estimate(Attribute attr, Operation *op,
                          const SMTarget &target) const {
    auto config = llvm::cast<ElementwiseConfigAttr>(attr);
    KernelEstimate e;
    e.threadsPerBlock = config.getBlockSize();
    int64_t resident = int64_t(target.numSMs) *
                       target.blocksPerSMByThreads(config.getBlockSize());
    e.microseconds =
        target.dramMicroseconds(double(getGroupBytes(llvm::cast<FusedOp>(op)))) /
        waveEfficiency(config.getGridSize(), resident);
    return e;
  }
};

struct MatmulConfigModel
    : public KernelConfigAttrInterface::ExternalModel<MatmulConfigModel,
                                                      MatmulConfigAttr> {
  GroupKind getGroupKind(Attribute) const { return GroupKind::gemm; }

  LogicalResult
  verifyForGroup(Attribute attr, Operation *op, const SMTarget &target,
                 function_ref<InFlightDiagnostic()> emitError) const {
    FailureOr<MatmulProblem> p =
        getGemmGroupProblem(llvm::cast<FusedOp>(op), target);
    if (failed(p))
      return failure();
    return verifyMatmulConfig(llvm::cast<MatmulConfigAttr>(attr), *p, target,
                              emitError);
  }

  KernelLaunch getLaunch(Attribute attr, Operation *op,
                         const SMTarget &target) const {
    FailureOr<MatmulProblem> p =
        getGemmGroupProblem(llvm::cast<FusedOp>(op), target);
    if (failed(p))
      return {};
    return getMatmulLaunch(llvm::cast<MatmulConfigAttr>(attr), *p, target);
  }

  KernelEstimate estimate(Attribute attr, Operation *op,
                          const SMTarget &target) const {
    auto config = llvm::cast<MatmulConfigAttr>(attr);
    FailureOr<MatmulProblem> p =
        getGemmGroupProblem(llvm::cast<FusedOp>(op), target);
    if (failed(p))
      return {};
    MatmulEstimate m = estimateMatmul(config, *p, target);
    KernelEstimate e;
    e.sharedMemoryBytes = getMatmulLaunch(config, *p, target).sharedMemoryBytes;
    e.registersPerThread = m.resources.registersPerThread;
    e.threadsPerBlock = config.getBlockThreads();
    e.microseconds = target.cyclesToMicroseconds(m.cycles);
    return e;
  }
};

/// Bytes of the group's inputs that span the rows of its reductions: what
/// a multi-reduction kernel that does not hold its rows reads again per
/// reduction.
static int64_t getRowInputBytes(FusedOp group, const ReduceGroupInfo &info) {
  int64_t bytes = 0;
  for (Type t : group.getInputs().getTypes()) {
    auto shaped = llvm::cast<ShapedType>(t);
    if (shaped.getShape() == ArrayRef<int64_t>(info.rows.shape))
      bytes += shaped.getNumElements() *
               std::max<int64_t>(1, shaped.getElementTypeBitWidth() / 8);
  }
  return bytes;
}

struct ReduceConfigModel
    : public KernelConfigAttrInterface::ExternalModel<ReduceConfigModel,
                                                      ReduceConfigAttr> {
  GroupKind getGroupKind(Attribute) const { return GroupKind::reduce; }

  LogicalResult
  verifyForGroup(Attribute attr, Operation *op, const SMTarget &target,
                 function_ref<InFlightDiagnostic()> emitError) const {
    auto group = llvm::cast<FusedOp>(op);
    auto config = llvm::cast<ReduceConfigAttr>(attr);
    FailureOr<ReduceGroupInfo> info = analyzeReduceGroup(group);
    if (failed(info))
      return failure();
    if (config.getBlockSize() > int64_t(target.maxThreadsPerBlock))
      return emitError() << "threads_per_row * rows_per_block = "
                         << config.getBlockSize() << " exceeds the "
                         << target.maxThreadsPerBlock
                         << " threads per block of " << target.name;
    return verifyReduceConfig(config, *info, emitError);
  }

  KernelLaunch getLaunch(Attribute attr, Operation *,
                         const SMTarget &) const {
    auto config = llvm::cast<ReduceConfigAttr>(attr);
    KernelLaunch launch;
    launch.grid = {config.getGridSize(), 1, 1};
    launch.block = {config.getBlockSize(), 1, 1};
    return launch;
  }

  KernelEstimate estimate(Attribute attr, Operation *op,
                          const SMTarget &target) const {
    auto group = llvm::cast<FusedOp>(op);
    auto config = llvm::cast<ReduceConfigAttr>(attr);
    KernelEstimate e;
    e.threadsPerBlock = config.getBlockSize();
    e.registersPerThread = getReduceRegisters(config);
    FailureOr<ReduceGroupInfo> info;
    {
      ScopedDiagnosticHandler quiet(group.getContext(),
                                    [](Diagnostic &) { return success(); });
      info = analyzeReduceGroup(group);
    }
    if (succeeded(info))
      e.microseconds = estimateReduceMicroseconds(
          config, *info, getGroupBytes(group), getRowInputBytes(group, *info),
          target);
    return e;
  }
};

struct StencilConfigModel
    : public KernelConfigAttrInterface::ExternalModel<StencilConfigModel,
                                                      StencilConfigAttr> {
  GroupKind getGroupKind(Attribute) const { return GroupKind::stencil; }

  LogicalResult
  verifyForGroup(Attribute attr, Operation *op, const SMTarget &target,
                 function_ref<InFlightDiagnostic()> emitError) const {
    return verifyStencilConfig(llvm::cast<FusedOp>(op),
                               llvm::cast<StencilConfigAttr>(attr), target,
                               emitError);
  }

  KernelLaunch getLaunch(Attribute attr, Operation *op,
                         const SMTarget &) const {
    auto config = llvm::cast<StencilConfigAttr>(attr);
    StencilPlan plan = planStencilGroup(llvm::cast<FusedOp>(op), config);
    KernelLaunch launch;
    std::array<int64_t, 3> grid = plan.launchGrid();
    launch.grid = {grid[0], grid[1], grid[2]};
    launch.block = {config.getBlockX(), config.getBlockY(), 1};
    launch.sharedMemoryBytes = plan.sharedMemoryBytes;
    return launch;
  }

  KernelEstimate estimate(Attribute attr, Operation *op,
                          const SMTarget &target) const {
    auto group = llvm::cast<FusedOp>(op);
    auto config = llvm::cast<StencilConfigAttr>(attr);
    KernelEstimate e;
    e.threadsPerBlock = config.getNumThreads();
    e.sharedMemoryBytes = planStencilGroup(group, config).sharedMemoryBytes;
    e.microseconds = estimateStencilMicroseconds(group, config, target);
    return e;
  }
};
struct WindowConfigModel
    : public KernelConfigAttrInterface::ExternalModel<WindowConfigModel,
                                                      WindowConfigAttr> {
  GroupKind getGroupKind(Attribute) const { return GroupKind::window; }

  LogicalResult
  verifyForGroup(Attribute attr, Operation *op, const SMTarget &target,
                 function_ref<InFlightDiagnostic()> emitError) const {
    return verifyWindowConfig(llvm::cast<FusedOp>(op),
                              llvm::cast<WindowConfigAttr>(attr), target,
                              emitError);
  }

  KernelLaunch getLaunch(Attribute attr, Operation *op,
                         const SMTarget &) const {
    FailureOr<WindowProblem> p = getWindowProblem(llvm::cast<FusedOp>(op));
    if (failed(p))
      return {};
    return getWindowLaunch(llvm::cast<WindowConfigAttr>(attr), *p);
  }

  KernelEstimate estimate(Attribute attr, Operation *op,
                          const SMTarget &target) const {
    auto config = llvm::cast<WindowConfigAttr>(attr);
    KernelEstimate e;
    e.threadsPerBlock = config.getNumThreads();
    e.microseconds = estimateWindowMicroseconds(llvm::cast<FusedOp>(op),
                                                config, target);
    return e;
  }
};

struct TransposeConfigModel
    : public KernelConfigAttrInterface::ExternalModel<TransposeConfigModel,
                                                      TransposeConfigAttr> {
  GroupKind getGroupKind(Attribute) const { return GroupKind::transpose; }

  static FailureOr<TransposeLayout> layoutOf(Operation *op) {
    TransposeOp t = getSoleTransposeOp(llvm::cast<FusedOp>(op));
    if (!t)
      return failure();
    return getTransposeLayout(t);
  }

  LogicalResult
  verifyForGroup(Attribute attr, Operation *op, const SMTarget &target,
                 function_ref<InFlightDiagnostic()> emitError) const {
    FailureOr<TransposeLayout> layout = layoutOf(op);
    if (failed(layout))
      return emitError() << "is not a single kgraph.transpose that moves its "
                            "innermost dim";
    return verifyTransposeConfig(llvm::cast<TransposeConfigAttr>(attr),
                                 *layout, target, emitError);
  }

  KernelLaunch getLaunch(Attribute attr, Operation *op,
                         const SMTarget &) const {
    auto config = llvm::cast<TransposeConfigAttr>(attr);
    KernelLaunch launch;
    FailureOr<TransposeLayout> layout = layoutOf(op);
    if (failed(layout))
      return launch;
    launch.grid = getTransposeGrid(config, *layout);
    launch.block = {config.getBlockSize(), 1, 1};
    return launch;
  }

  KernelEstimate estimate(Attribute attr, Operation *op,
                          const SMTarget &target) const {
    auto config = llvm::cast<TransposeConfigAttr>(attr);
    KernelEstimate e;
    e.threadsPerBlock = config.getBlockSize();
    FailureOr<TransposeLayout> layout = layoutOf(op);
    if (failed(layout))
      return e;
    e.sharedMemoryBytes = getTransposeSharedBytes(config, *layout);
    e.microseconds = estimateTransposeMicroseconds(config, *layout, target);
    return e;
  }
};
} // namespace

void kgraph::registerKernelConfigModels(DialectRegistry &registry) {
  registry.addExtension(+[](MLIRContext *ctx, KGraphDialect *) {
    ElementwiseConfigAttr::attachInterface<ElementwiseConfigModel>(*ctx);
    MatmulConfigAttr::attachInterface<MatmulConfigModel>(*ctx);
    ReduceConfigAttr::attachInterface<ReduceConfigModel>(*ctx);
    StencilConfigAttr::attachInterface<StencilConfigModel>(*ctx);
    TransposeConfigAttr::attachInterface<TransposeConfigModel>(*ctx);
    WindowConfigAttr::attachInterface<WindowConfigModel>(*ctx);
  });
}

//===----------------------------------------------------------------------===//
// Candidates
//===----------------------------------------------------------------------===//

/// Elementwise candidates: the default (256 threads, 16-byte vectors of the
/// widest type, no unrolling, one vector per thread up to 64 waves of
/// resident blocks; measured on the H200, bench/RESULTS.md run 2), then
/// narrower vectors, other block sizes and unrolling.
static SmallVector<Attribute> enumerateElementwiseConfigs(FusedOp group,
                                                          const SMTarget &target) {
  SmallVector<Attribute> configs;
  FailureOr<ElementwiseConfigAttr> chosen =
      chooseElementwiseConfig(group, target);
  if (failed(chosen))
    return configs;
  configs.push_back(*chosen);
  int64_t numElements = getElementwiseWorkElements(group);
  constexpr int64_t kMaxWaves = 64;
  for (int64_t width = chosen->getVectorWidth(); width >= 1; width /= 2)
    for (int64_t block : {256, 128, 512, 1024})
      for (int64_t unroll : {1, 2, 4}) {
        int64_t vectors = llvm::divideCeil(numElements, width);
        int64_t needed =
            std::max<int64_t>(1, llvm::divideCeil(vectors, block * unroll));
        int64_t fullWave =
            int64_t(target.numSMs) * target.blocksPerSMByThreads(block);
        auto config = ElementwiseConfigAttr::get(
            group.getContext(), block, width, unroll,
            std::min(needed, fullWave * kMaxWaves));
        if (!llvm::is_contained(configs, Attribute(config)))
          configs.push_back(config);
      }
  return configs;
}

/// Every configuration the family's model enumerates, default first.
static SmallVector<Attribute> enumerateConfigs(FusedOp group, GroupKind kind,
                                               const SMTarget &target) {
  SmallVector<Attribute> configs;
  switch (kind) {
  case GroupKind::elementwise:
    return enumerateElementwiseConfigs(group, target);
  case GroupKind::gemm: {
    FailureOr<MatmulProblem> p = getGemmGroupProblem(group, target);
    if (failed(p))
      return configs;
    std::string whyNot;
    FailureOr<SmallVector<MatmulConfigAttr>> ranked =
        rankMatmulConfigs(group.getContext(), *p, target, &whyNot);
    if (failed(ranked)) {
      group.getBody().front().front().emitOpError()
          << "has no code generation for " << target.name << ": " << whyNot;
      return configs;
    }
    configs.append(ranked->begin(), ranked->end());
    return configs;
  }
  case GroupKind::reduce: {
    FailureOr<ReduceGroupInfo> info = analyzeReduceGroup(group);
    if (failed(info))
      return configs;
    for (ReduceConfigAttr c :
         enumerateReduceConfigs(group.getContext(), *info, target))
      configs.push_back(c);
    return configs;
  }
  case GroupKind::stencil:
    for (StencilConfigAttr c : enumerateStencilConfigs(group, target))
      configs.push_back(c);
    return configs;
  case GroupKind::window:
    for (WindowConfigAttr c : enumerateWindowConfigs(group, target))
      configs.push_back(c);
    return configs;
  case GroupKind::copy:
    return configs;
  case GroupKind::transpose: {
    TransposeOp t = getSoleTransposeOp(group);
    FailureOr<TransposeLayout> layout =
        t ? getTransposeLayout(t) : FailureOr<TransposeLayout>(failure());
    if (failed(layout))
      return configs;
    for (TransposeConfigAttr c :
         enumerateTransposeConfigs(group.getContext(), *layout, target))
      configs.push_back(c);
    return configs;
  }
  }
  llvm_unreachable("unknown group kind");
}

FailureOr<SmallVector<ConfigCandidate>>
kgraph::listConfigCandidates(FusedOp group, GroupKind kind,
                             const SMTarget &target, size_t limit) {
  if (failed(checkGroupForKind(group, kind, target)))
    return failure();
  SmallVector<Attribute> configs;
  {
    // The enumeration of a checked group reports nothing; a failure to find
    // any candidate is diagnosed below.
    ScopedDiagnosticHandler quiet(group.getContext(),
                                  [](Diagnostic &) { return success(); });
    configs = enumerateConfigs(group, kind, target);
  }
  SmallVector<ConfigCandidate> candidates;
  for (Attribute attr : configs) {
    auto config = llvm::cast<KernelConfigAttrInterface>(attr);
    bool legal;
    {
      ScopedDiagnosticHandler quiet(group.getContext(),
                                    [](Diagnostic &) { return success(); });
      legal = succeeded(config.verifyForGroup(
          group, target, [&] { return group.emitOpError(); }));
    }
    if (!legal)
      continue;
    candidates.push_back({config, config.estimate(group, target)});
  }
  if (candidates.empty()) {
    if (kind == GroupKind::gemm) {
      // The reason the search found nothing.
      FailureOr<MatmulProblem> p = getGemmGroupProblem(group, target);
      std::string whyNot = "no candidate configuration is legal";
      if (succeeded(p))
        (void)rankMatmulConfigs(group.getContext(), *p, target, &whyNot);
      return group.getBody().front().front().emitOpError()
             << "has no code generation for " << target.name << ": "
             << whyNot;
    }
    if (kind == GroupKind::stencil)
      return group.emitOpError()
             << "has no stencil tile whose intermediates fit the "
             << target.sharedMemPerBlock << " bytes of shared memory of "
             << target.name;
    return group.emitOpError("has no ")
           << stringifyGroupKind(kind) << " configuration that fits "
           << target.name;
  }
  // The default stays rank 1; the rest are the family's order, which for
  // elementwise, reduce and stencil candidates is the estimate.
  if (kind != GroupKind::gemm && candidates.size() > 1) {
    // Enumeration order settles equal estimates.
    SmallVector<std::pair<ConfigCandidate, size_t>> order;
    for (auto [i, c] : llvm::enumerate(candidates))
      order.push_back({c, i});
    llvm::sort(order.begin() + 1, order.end(), [](auto &a, auto &b) {
      if (a.first.estimate.microseconds != b.first.estimate.microseconds)
        return a.first.estimate.microseconds < b.first.estimate.microseconds;
      return a.second < b.second;
    });
    for (auto [i, entry] : llvm::enumerate(order))
      candidates[i] = entry.first;
  }
  if (limit && candidates.size() > limit)
    candidates.resize(limit);
  return candidates;
}

/// "file:line:col" of a location, or its printed form.
static std::string formatLocation(Location loc) {
  if (auto fused = llvm::dyn_cast<FusedLoc>(loc))
    if (!fused.getLocations().empty())
      loc = fused.getLocations().front();
  if (auto file = llvm::dyn_cast<FileLineColLoc>(loc))
    return (file.getFilename().getValue() + ":" + Twine(file.getLine()) +
            ":" + Twine(file.getColumn()))
        .str();
  std::string text;
  llvm::raw_string_ostream os(text);
  loc.print(os);
  return text;
}

static std::string printAttr(Attribute attr) {
  std::string text;
  llvm::raw_string_ostream os(text);
  attr.print(os);
  return text;
}

FailureOr<llvm::json::Array>
kgraph::listModuleConfigCandidates(ModuleOp module, const SMTarget &target,
                                   size_t limit) {
  llvm::json::Array groups;
  WalkResult walk = module.walk([&](FusedOp group) {
    FailureOr<GroupKind> kind = resolveGroupKind(group);
    if (failed(kind))
      return WalkResult::interrupt();
    // A pinned configuration is listed, but the candidates are the
    // family's own.
    Attribute pinned = group->removeAttr(kConfigAttrName);
    FailureOr<SmallVector<ConfigCandidate>> candidates =
        listConfigCandidates(group, *kind, target, limit);
    if (pinned)
      group->setAttr(kConfigAttrName, pinned);
    if (failed(candidates))
      return WalkResult::interrupt();
    llvm::json::Array list;
    for (const ConfigCandidate &c : *candidates)
      list.push_back(llvm::json::Object{
          {"config", printAttr(c.config)},
          // JSON has no infinity: a candidate the model cannot place on an
          // SM (no block fits) has no estimate.
          {"estimate_us",
           std::isfinite(c.estimate.microseconds)
               ? llvm::json::Value(std::round(c.estimate.microseconds * 1000) /
                                   1000)
               : llvm::json::Value(nullptr)},
          {"shared_memory_bytes", c.estimate.sharedMemoryBytes},
          {"threads_per_block", c.estimate.threadsPerBlock}});
    ProblemKey key = computeProblemKey(group, *kind);
    llvm::json::Array shape;
    for (int64_t d : key.shape)
      shape.push_back(d);
    llvm::json::Object entry{
        {"group", formatLocation(group.getLoc())},
        {"kind", stringifyGroupKind(*kind)},
        {"signature", key.signature},
        {"structure", key.structure},
        {"shape", std::move(shape)},
        {"space", getConfigSpaceVersion(*kind)},
        {"emitter", getEmitterVersion(*kind)},
        {"problem", key.summary},
        {"kernel", printStandaloneKernel(group, *kind,
                                         candidates->front().config)},
        {"candidates", std::move(list)}};
    if (auto func = group->getParentOfType<func::FuncOp>())
      entry["function"] = func.getSymName();
    if (pinned)
      entry["pinned"] = printAttr(pinned);
    groups.push_back(std::move(entry));
    return WalkResult::advance();
  });
  if (walk.wasInterrupted())
    return failure();
  return groups;
}
