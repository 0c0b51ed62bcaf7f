//===- Tile.cpp - per-target launch configuration of kernel groups --------===//

#include "kgraph/Dialect/KGraph/IR/KGraphClassify.h"
#include "kgraph/Dialect/KGraph/Transforms/GemmGroup.h"
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

  /// Chooses (or checks a pinned) #kgraph.matmul_config for the GEMM group
  /// `group` from the problem of its anchor (a conv2d is tiled as its
  /// implicit GEMM). The epilogue runs on the accumulators after the main
  /// loop, when the fragments and staging registers are dead, so it does not
  /// change the choice; a prologue stages its operand through registers.
  LogicalResult tileGemm(FusedOp group, const GemmGroupParts &parts,
                         const SMTarget &sm) {
    Operation *gemmOp = parts.anchor;
    std::string whyNot;
    FailureOr<MatmulProblem> problem =
        llvm::isa<Conv2dOp>(gemmOp)
            ? getConvProblem(llvm::cast<Conv2dOp>(gemmOp), &whyNot)
            : getMatmulProblem(llvm::cast<MatmulOp>(gemmOp), &whyNot);
    if (failed(problem))
      return gemmOp->emitOpError()
             << "has no code generation for " << sm.name << ": " << whyNot;
    // The operand type of the problem is the matmul's, i.e. the type the
    // prologue produces: shared memory holds the mma's type.
    problem->stagedInRegisters =
        !parts.lhsPrologue.empty() || !parts.rhsPrologue.empty();
    StringRef opName = gemmOp->getName().getStringRef();
    auto emitError = [&] { return group.emitOpError(); };

    MatmulConfigAttr config;
    if (Attribute pinned = group->getAttr(kConfigAttrName)) {
      config = llvm::dyn_cast<MatmulConfigAttr>(pinned);
      if (!config)
        return group.emitOpError()
               << "computes a " << opName << " but its '" << kConfigAttrName
               << "' is not a #kgraph.matmul_config: " << pinned;
      if (failed(verifyMatmulConfig(config, *problem, sm, emitError)))
        return failure();
      MatmulEstimate estimate = estimateMatmul(config, *problem, sm);
      if (estimate.resources.registersPerThread > sm.maxRegistersPerThread)
        group.emitWarning() << "configuration needs an estimated "
                            << estimate.resources.registersPerThread
                            << " registers per thread, more than the "
                            << sm.maxRegistersPerThread << " " << sm.name
                            << " allows: expect spills";
    } else {
      FailureOr<MatmulConfigAttr> chosen =
          chooseMatmulConfig(&getContext(), *problem, sm, &whyNot);
      if (failed(chosen))
        return gemmOp->emitOpError()
               << "has no code generation for " << sm.name << ": " << whyNot;
      config = *chosen;
      // The search only builds valid candidates; check anyway so a model bug
      // shows up as a diagnostic rather than a bad kernel.
      if (failed(verifyMatmulConfig(config, *problem, sm, emitError)))
        return failure();
      group->setAttr(kConfigAttrName, config);
    }
    if (report)
      group.emitRemark() << (llvm::isa<Conv2dOp>(gemmOp) ? "conv2d " : "matmul ")
                         << describeEstimate(
                                estimateMatmul(config, *problem, sm));
    return success();
  }

  /// Chooses (or checks a pinned) #kgraph.reduce_config for the reduction
  /// `group`.
  LogicalResult tileReduce(FusedOp group, const SMTarget &sm) {
    if (failed(verifyReduceGroup(group)))
      return failure();
    ReduceOp reduce = getSoleReduceOp(group);
    FailureOr<ReduceLayout> layout = getReduceLayout(reduce);
    if (failed(layout))
      return failure();
    auto emitError = [&] { return group.emitOpError(); };
    if (Attribute pinned = group->getAttr(kConfigAttrName)) {
      auto config = llvm::dyn_cast<ReduceConfigAttr>(pinned);
      if (!config)
        return group.emitOpError()
               << "computes a kgraph.reduce but its '" << kConfigAttrName
               << "' is not a #kgraph.reduce_config: " << pinned;
      return verifyReduceConfig(config, *layout, getWidestAccessBytes(group),
                                emitError);
    }
    ReduceConfigAttr config = chooseReduceConfig(group, reduce, *layout, sm);
    if (failed(verifyReduceConfig(config, *layout,
                                  getWidestAccessBytes(group), emitError)))
      return failure();
    group->setAttr(kConfigAttrName, config);
    return success();
  }

  /// Chooses (or checks a pinned) #kgraph.stencil_config for a stencil
  /// group (StencilTiling.h).
  LogicalResult tileStencil(FusedOp group, const SMTarget &sm) {
    if (failed(checkStencilGroup(group)))
      return failure();
    auto emitError = [&] { return group.emitOpError(); };
    StencilConfigAttr config;
    if (Attribute pinned = group->getAttr(kConfigAttrName)) {
      config = llvm::dyn_cast<StencilConfigAttr>(pinned);
      if (!config)
        return group.emitOpError()
               << "is a stencil group but its '" << kConfigAttrName
               << "' is not a #kgraph.stencil_config: " << pinned;
      if (failed(verifyStencilConfig(group, config, sm, emitError)))
        return failure();
    } else {
      FailureOr<StencilConfigAttr> chosen = chooseStencilConfig(group, sm);
      if (failed(chosen))
        return group.emitOpError()
               << "has no stencil tile whose intermediates fit the "
               << sm.sharedMemPerBlock << " bytes of shared memory of "
               << sm.name;
      config = *chosen;
      group->setAttr(kConfigAttrName, config);
    }
    if (report)
      group.emitRemark() << "stencil "
                         << describeStencilPlan(group, config, sm);
    return success();
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
      // Stencil groups first: their conv2d ops are matmul-like too. A lone
      // stencil conv2d pinned to the GEMM kernel stays there.
      if (isStencilGroup(group) &&
          !llvm::isa_and_present<MatmulConfigAttr>(
              group->getAttr(kConfigAttrName)))
        return failed(tileStencil(group, *sm)) ? WalkResult::interrupt()
                                               : WalkResult::advance();
      if (hasGemmAnchor(group)) {
        FailureOr<GemmGroupParts> parts = analyzeGemmGroup(group);
        return failed(parts) || failed(tileGemm(group, *parts, *sm))
                   ? WalkResult::interrupt()
                   : WalkResult::advance();
      }
      if (!group.getBody().getOps<ReduceOp>().empty())
        return failed(tileReduce(group, *sm)) ? WalkResult::interrupt()
                                              : WalkResult::advance();
      if (Attribute pinned = group->getAttr(kConfigAttrName)) {
        if (llvm::isa<ReduceConfigAttr>(pinned)) {
          group.emitOpError() << "has a #kgraph.reduce_config but its body "
                                 "has no kgraph.reduce";
          return WalkResult::interrupt();
        }
        if (llvm::isa<MatmulConfigAttr>(pinned)) {
          group.emitOpError() << "has a #kgraph.matmul_config but holds no "
                                 "kgraph.matmul or kgraph.conv2d";
          return WalkResult::interrupt();
        }
        if (llvm::isa<StencilConfigAttr>(pinned)) {
          group.emitOpError() << "has a #kgraph.stencil_config but its body "
                                 "has no kgraph.conv2d or kgraph.pool2d";
          return WalkResult::interrupt();
        }
        return WalkResult::advance();
      }
      for (Operation &op : group.getBody().front().without_terminator()) {
        if (isElementwiseOp(&op) || op.hasTrait<mlir::OpTrait::ConstantLike>())
          continue;
        op.emitOpError() << "has no code generation for " << sm->name
                         << " yet: kgraph lowers elementwise, matmul, conv2d, "
                            "pool2d and reduce groups";
        return WalkResult::interrupt();
      }
      FailureOr<ElementwiseConfigAttr> config =
          chooseElementwiseConfig(group, *sm);
      if (failed(config)) {
        group.emitOpError("has no results to compute");
        return WalkResult::interrupt();
      }
      group->setAttr(kConfigAttrName, *config);
      return WalkResult::advance();
    });
    if (result.wasInterrupted())
      signalPassFailure();
  }
};
} // namespace
