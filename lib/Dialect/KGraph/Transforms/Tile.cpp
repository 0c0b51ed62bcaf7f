//===- Tile.cpp - per-target launch configuration of kernel groups --------===//

#include "kgraph/Dialect/KGraph/IR/KGraphClassify.h"
#include "kgraph/Dialect/KGraph/Transforms/GemmGroup.h"
#include "kgraph/Dialect/KGraph/Transforms/KernelFamilies.h"
#include "kgraph/Dialect/KGraph/Transforms/MatmulTiling.h"
#include "kgraph/Dialect/KGraph/Transforms/Passes.h"
#include "kgraph/Dialect/KGraph/Transforms/ReduceTiling.h"
#include "kgraph/Dialect/KGraph/Transforms/StencilTiling.h"
#include "kgraph/Target/SMTargets.h"

#include "mlir/IR/BuiltinOps.h"

namespace kgraph {
#define GEN_PASS_DEF_KGRAPHTILE
#include "kgraph/Dialect/KGraph/Transforms/Passes.h.inc"
} // namespace kgraph

using namespace mlir;
using namespace kgraph;

/// Bytes one element of `type` occupies in device memory (i1 as a byte).
static int64_t storageBytes(Type type) {
  auto tensor = llvm::cast<ShapedType>(type);
  return std::max<int64_t>(1, tensor.getElementTypeBitWidth() / 8);
}

FailureOr<ElementwiseConfigAttr>
kgraph::chooseElementwiseConfig(FusedOp group, const SMTarget &target) {
  int64_t widest = 1;
  auto account = [&](Type type) {
    if (llvm::isa<ShapedType>(type))
      widest = std::max(widest, storageBytes(type));
  };
  for (Type t : group.getInputs().getTypes())
    account(t);
  for (Type t : group.getResultTypes())
    account(t);
  group.getBody().walk([&](Operation *op) {
    for (Type t : op->getResultTypes())
      account(t);
  });
  if (group.getNumResults() == 0)
    return failure();
  auto outType = llvm::cast<ShapedType>(group.getResultTypes().front());
  int64_t numElements = outType.getNumElements();

  const int64_t blockSize = 256;
  const int64_t vectorWidth = std::max<int64_t>(1, 16 / widest);
  const int64_t unroll = 1;
  int64_t numVectors = (numElements + vectorWidth - 1) / vectorWidth;
  int64_t blocksNeeded = std::max<int64_t>(
      1, (numVectors + blockSize * unroll - 1) / (blockSize * unroll));
  // One vector per thread while the grid stays within kMaxWaves waves of
  // resident blocks; past that a grid-stride loop covers the rest. Measured on
  // the H200 (bench/RESULTS.md): for 64M f32 add, one vector per thread moved
  // 101.9% of copy bandwidth against 95.3% for a one-wave grid-stride loop
  // (run 2's variants).
  constexpr int64_t kMaxWaves = 64;
  int64_t fullWave =
      int64_t(target.numSMs) * target.blocksPerSMByThreads(blockSize);
  int64_t gridSize = std::min(blocksNeeded, fullWave * kMaxWaves);
  return ElementwiseConfigAttr::get(group.getContext(), blockSize, vectorWidth,
                                    unroll, gridSize);
}

namespace {
struct TilePass : public kgraph::impl::KGraphTileBase<TilePass> {
  using Base::Base;

  /// Chooses (or checks a pinned) configuration for `group` of kind `kind`:
  /// the family's contract, then the one legality check of the
  /// configuration interface, for pinned and chosen configurations alike.
  LogicalResult tileGroup(FusedOp group, GroupKind kind, const SMTarget &sm) {
    auto emitError = [&] { return group.emitOpError(); };
    KernelConfigAttrInterface config;
    if (group->getAttr(kConfigAttrName)) {
      if (failed(checkGroupForKind(group, kind, sm)))
        return failure();
      config = getKernelConfig(group);
      if (!config || failed(config.verifyForGroup(group, sm, emitError)))
        return failure();
      KernelEstimate estimate = config.estimate(group, sm);
      if (estimate.registersPerThread > int64_t(sm.maxRegistersPerThread))
        group.emitWarning() << "configuration needs an estimated "
                            << estimate.registersPerThread
                            << " registers per thread, more than the "
                            << sm.maxRegistersPerThread << " " << sm.name
                            << " allows: expect spills";
    } else {
      FailureOr<SmallVector<ConfigCandidate>> candidates =
          listConfigCandidates(group, kind, sm, /*limit=*/1);
      if (failed(candidates))
        return failure();
      config = candidates->front().config;
      group->setAttr(kConfigAttrName, config);
    }
    group.setKind(kind);
    if (report)
      reportGroup(group, kind, config, sm);
    return success();
  }

  /// The model's estimate of a GEMM or stencil group as a remark.
  void reportGroup(FusedOp group, GroupKind kind,
                   KernelConfigAttrInterface config, const SMTarget &sm) {
    if (kind == GroupKind::gemm) {
      FailureOr<MatmulProblem> problem = getGemmGroupProblem(group, sm);
      if (failed(problem))
        return;
      bool conv = llvm::any_of(group.getBody().getOps<Conv2dOp>(),
                               [](Conv2dOp) { return true; });
      group.emitRemark() << (conv ? "conv2d " : "matmul ")
                         << describeEstimate(estimateMatmul(
                                llvm::cast<MatmulConfigAttr>(config), *problem,
                                sm));
    } else if (kind == GroupKind::stencil) {
      group.emitRemark() << "stencil "
                         << describeStencilPlan(
                                group, llvm::cast<StencilConfigAttr>(config),
                                sm);
    }
  }

  void runOnOperation() override {
    ModuleOp module = getOperation();
    const SMTarget *sm = lookupSMTarget(target);
    if (!sm) {
      module.emitError() << "unknown target '" << target
                         << "'; known targets: " << getKnownSMTargetNames();
      return signalPassFailure();
    }
    module->setAttr(kTargetAttrName, StringAttr::get(&getContext(), sm->name));

    WalkResult result = module.walk([&](FusedOp group) {
      FailureOr<GroupKind> kind = resolveGroupKind(group);
      if (failed(kind) || failed(tileGroup(group, *kind, *sm)))
        return WalkResult::interrupt();
      return WalkResult::advance();
    });
    if (result.wasInterrupted())
      signalPassFailure();
  }
};
} // namespace
