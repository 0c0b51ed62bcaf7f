//===- Tile.cpp - per-target launch configuration of kernel groups --------===//

#include "kgraph/Dialect/KGraph/IR/KGraphClassify.h"
#include "kgraph/Dialect/KGraph/Transforms/GemmGroup.h"
#include "kgraph/Dialect/KGraph/Transforms/KernelFamilies.h"
#include "kgraph/Dialect/KGraph/Transforms/MatmulTiling.h"
#include "kgraph/Dialect/KGraph/Transforms/Passes.h"
#include "kgraph/Dialect/KGraph/Transforms/ReduceTiling.h"
#include "kgraph/Dialect/KGraph/Transforms/StencilTiling.h"
#include "kgraph/Dialect/KGraph/Transforms/TuningDB.h"
#include "kgraph/Target/SMTargets.h"

#include "mlir/AsmParser/AsmParser.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Diagnostics.h"
#include "llvm/Support/FormatVariadic.h"

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
  int64_t numElements = getElementwiseWorkElements(group);

  const int64_t blockSize = 256;
  int64_t vectorWidth = std::max<int64_t>(1, 16 / widest);
  if (Operation *tile = getWinogradTileResult(group)) {
    // A thread holds the alpha^2 points of each of its W lanes at once:
    // W * alpha^2 <= 72 values (W = 2 for F(4x4, 3x3)), W dividing the
    // innermost dim the lanes run along.
    auto type = llvm::cast<ShapedType>(tile->getResult(0).getType());
    int64_t points = type.getDimSize(0);
    while (vectorWidth > 1 && (vectorWidth * points > 72 ||
                               type.getShape().back() % vectorWidth != 0))
      vectorWidth /= 2;
  }
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
      if (tuningReport)
        group.emitRemark() << "configuration pinned in the input";
    } else {
      std::string how = "configuration from the model (no tuning database)";
      if (database)
        config = chooseFromDatabase(group, kind, sm, how);
      if (!config) {
        FailureOr<SmallVector<ConfigCandidate>> candidates =
            listConfigCandidates(group, kind, sm, /*limit=*/1);
        if (failed(candidates))
          return failure();
        config = candidates->front().config;
      }
      group->setAttr(kConfigAttrName, config);
      if (tuningReport)
        group.emitRemark() << how;
    }
    group.setKind(kind);
    if (report)
      reportGroup(group, kind, config, sm);
    return success();
  }

  /// The configuration a record of the tuning database gives `group`: the
  /// exact record's, else the nearest verifying near record's, else null
  /// (the model chooses). `how` says which, for --tuning-report; a skipped
  /// exact record gets a remark of its own.
  KernelConfigAttrInterface chooseFromDatabase(FusedOp group, GroupKind kind,
                                               const SMTarget &sm,
                                               std::string &how) {
    ProblemKey key = computeProblemKey(group, kind);
    // A body outside its family's contract gets no record: the model's
    // search then reports what is wrong with it.
    {
      ScopedDiagnosticHandler quiet(group.getContext(),
                                    [](Diagnostic &) { return success(); });
      if (failed(checkGroupForKind(group, kind, sm)))
        return {};
    }
    std::string gpuNote;
    if (const TuningRecord *record =
            database->findExact(key, sm.name, tuningGpu)) {
      std::string why = record->versionMismatch(kind);
      KernelConfigAttrInterface config;
      if (why.empty())
        config = parseAndVerify(group, kind, record->best, sm, why);
      if (config) {
        // A record replaces the model's pick only where it measured better
        // than the pick beyond noise: a pick measured in the record at most
        // the winner's third quartile stays (the model changed since, or
        // the two tied).
        // (The model runs again only where the record timed more than its
        // winner: otherwise there is nothing to compare.)
        std::optional<std::string> pick;
        if (record->measuredMedianUs.size() > 1)
          pick = modelPickText(group, kind, sm);
        if (pick && *pick != record->best && record->measuredAsFast(*pick)) {
          how = llvm::formatv("configuration from the model: tuning record "
                              "{0} of {1} (signature {2}) measured it as "
                              "fast as its winner ({3:F2} us against "
                              "{4:F2} us)",
                              record->index, record->gpu, key.signature,
                              record->measuredMedianUs.lookup(*pick),
                              record->measuredMedianUs.lookup(record->best))
                    .str();
          return {};
        }
        how = llvm::formatv("configuration from tuning record {0} of {1} "
                            "(signature {2})",
                            record->index, record->gpu, key.signature)
                  .str();
        if (record->speedup)
          how += llvm::formatv(", measured {0:F2}x the model's choice",
                               *record->speedup)
                     .str();
        return config;
      }
      group.emitRemark() << "tuning record " << record->index << " of "
                         << database->getPath() << " (" << record->gpu
                         << ") skipped: " << why;
      gpuNote = "; its exact record was skipped";
    }
    for (auto [record, distance] :
         database->findNear(key, kind, sm.name, tuningGpu)) {
      std::string why;
      if (KernelConfigAttrInterface config =
              parseAndVerify(group, kind, record->best, sm, why)) {
        how = llvm::formatv("configuration from the near record {0} of {1} "
                            "(shape distance {2:F2}: {3})",
                            record->index, record->gpu, distance,
                            record->summary.empty() ? record->signature
                                                    : record->summary)
                  .str();
        return config;
      }
    }
    how = "configuration from the model: no tuning record for " +
          key.summary + " (signature " + key.signature + ")" + gpuNote;
    return {};
  }

  /// The model's rank-1 configuration of `group`, printed as records hold
  /// configurations; none where the model has no candidate.
  std::optional<std::string> modelPickText(FusedOp group, GroupKind kind,
                                           const SMTarget &sm) {
    ScopedDiagnosticHandler quiet(group.getContext(),
                                  [](Diagnostic &) { return success(); });
    FailureOr<SmallVector<ConfigCandidate>> candidates =
        listConfigCandidates(group, kind, sm, /*limit=*/1);
    if (failed(candidates) || candidates->empty())
      return std::nullopt;
    std::string text;
    llvm::raw_string_ostream os(text);
    candidates->front().config.print(os);
    return text;
  }

  /// The configuration `text` of a record if it parses, is of `kind` and
  /// verifies for `group` (which met its family's contract) on `sm`; else
  /// null with `why` set. Diagnostics of the parse and the check are
  /// caught, not reported.
  KernelConfigAttrInterface parseAndVerify(FusedOp group, GroupKind kind,
                                           StringRef text, const SMTarget &sm,
                                           std::string &why) {
    MLIRContext *ctx = group.getContext();
    ScopedDiagnosticHandler handler(ctx, [&](Diagnostic &diag) {
      if (why.empty())
        why = diag.str();
      return success();
    });
    Attribute attr = parseAttribute(text, ctx);
    if (!attr) {
      why = "its configuration does not parse" +
            (why.empty() ? std::string() : ": " + why);
      return {};
    }
    auto config = llvm::dyn_cast<KernelConfigAttrInterface>(attr);
    if (!config) {
      why = "'" + text.str() + "' is not a kernel configuration";
      return {};
    }
    if (config.getGroupKind() != kind) {
      why = ("its configuration is for " +
             stringifyGroupKind(config.getGroupKind()) +
             " groups, the group is " + stringifyGroupKind(kind))
                .str();
      return {};
    }
    if (failed(config.verifyForGroup(group, sm,
                                     [&] { return group.emitOpError(); }))) {
      if (why.empty())
        why = "its configuration does not verify for the group";
      else
        why = "its configuration does not verify for the group: " + why;
      return {};
    }
    return config;
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
    if (!tuningDb.empty()) {
      std::string error;
      std::vector<std::string> warnings;
      database = TuningDatabase::load(tuningDb, error, warnings);
      if (!database) {
        module.emitError() << "tuning database '" << tuningDb
                           << "': " << error;
        return signalPassFailure();
      }
      for (const std::string &warning : warnings)
        module.emitWarning() << "tuning database '" << tuningDb
                             << "': " << warning;
    }

    WalkResult result = module.walk([&](FusedOp group) {
      FailureOr<GroupKind> kind = resolveGroupKind(group);
      if (failed(kind) || failed(tileGroup(group, *kind, *sm)))
        return WalkResult::interrupt();
      return WalkResult::advance();
    });
    if (result.wasInterrupted())
      signalPassFailure();
  }

  std::optional<TuningDatabase> database;
};
} // namespace
