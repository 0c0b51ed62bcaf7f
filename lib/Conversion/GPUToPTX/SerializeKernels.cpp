//===- SerializeKernels.cpp - gpu.modules to PTX on every core ------------===//
//
// What gpu-module-to-binary does for PTX, with the modules compiled in
// parallel (each in its own LLVM context) and the pieces
// kgraph-split-kernel-modules cut from one module joined again: one
// gpu.binary per original module, one PTX module per target in it.
//
//===----------------------------------------------------------------------===//

#include "kgraph/Conversion/GPUToPTX/GPUToPTX.h"
#include "kgraph/Conversion/Passes.h"

#include "mlir/Dialect/GPU/IR/CompilationInterfaces.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/IR/AttrTypeSubElements.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/Threading.h"
#include "llvm/ADT/MapVector.h"

namespace kgraph {
#define GEN_PASS_DEF_KGRAPHSERIALIZEKERNELS
#include "kgraph/Conversion/Passes.h.inc"
} // namespace kgraph

using namespace mlir;
using namespace kgraph;

/// `object` without the compile-time properties the target records (they
/// would describe one piece, and make the IR differ from run to run).
static Attribute withoutTimings(Attribute object) {
  auto obj = llvm::dyn_cast<gpu::ObjectAttr>(object);
  if (!obj || !obj.getProperties())
    return object;
  SmallVector<NamedAttribute> kept;
  for (NamedAttribute p : obj.getProperties())
    if (!p.getName().getValue().ends_with("TimeInMs"))
      kept.push_back(p);
  DictionaryAttr properties =
      kept.empty() ? DictionaryAttr() : DictionaryAttr::get(obj.getContext(), kept);
  return gpu::ObjectAttr::get(obj.getContext(), obj.getTarget(), obj.getFormat(),
                              obj.getObject(), properties, obj.getKernels());
}

namespace {
/// One module compiled for one of its targets.
struct Job {
  gpu::GPUModuleOp module;
  gpu::TargetAttrInterface target;
  std::optional<SmallVector<char, 0>> object;
};

/// A module of a group and where its jobs start (one per target, in the
/// order of the module's targets).
struct Piece {
  gpu::GPUModuleOp module;
  size_t firstJob;
};

struct SerializeKernelsPass
    : public kgraph::impl::KGraphSerializeKernelsBase<SerializeKernelsPass> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp top = getOperation();
    MLIRContext *ctx = &getContext();
    // The modules to join into each binary, by the name the binary gets.
    llvm::MapVector<StringAttr, SmallVector<Piece>> groups;
    SmallVector<Job> jobs;
    for (auto module : top.getOps<gpu::GPUModuleOp>()) {
      ArrayAttr targets = module.getTargetsAttr();
      if (!targets || targets.empty()) {
        module.emitError("gpu.module '")
            << module.getName()
            << "' has no target attributes to compile it for (run "
               "kgraph-gpu-to-nvvm or gpu-nvvm-attach-target first)";
        return signalPassFailure();
      }
      auto origin = module->getAttrOfType<StringAttr>(kSplitFromAttrName);
      StringAttr name = origin ? origin : module.getSymNameAttr();
      SmallVector<Piece> &group = groups[name];
      // Checked before anything is compiled: the pieces' PTX is joined per
      // target.
      if (!group.empty() &&
          targets != group.front().module.getTargetsAttr()) {
        module.emitError("gpu.module '")
            << module.getName() << "' was split from '" << name.getValue()
            << "' but has other targets than '"
            << group.front().module.getName() << "'";
        return signalPassFailure();
      }
      group.push_back({module, jobs.size()});
      for (Attribute attr : targets) {
        auto target = llvm::dyn_cast<gpu::TargetAttrInterface>(attr);
        if (!target) {
          module.emitError("target ")
              << attr << " of gpu.module '" << module.getName()
              << "' cannot compile it";
          return signalPassFailure();
        }
        jobs.push_back({module, target, std::nullopt});
      }
    }
    if (jobs.empty())
      return;

    gpu::TargetOptions options(toolkitPath, {}, {}, {},
                               gpu::CompilationTarget::Assembly);
    // Diagnostics come out in module order whatever the threads do.
    ParallelDiagnosticHandler handler(ctx);
    LogicalResult compiled = failableParallelForEach(
        ctx, llvm::seq<size_t>(0, jobs.size()), [&](size_t i) {
          handler.setOrderIDForThread(i);
          Job &job = jobs[i];
          job.object = job.target.serializeToObject(job.module, options);
          if (!job.object)
            job.module.emitError("cannot compile gpu.module '")
                << job.module.getName() << "' to PTX";
          handler.eraseOrderIDForThread();
          return success(job.object.has_value());
        });
    if (failed(compiled))
      return signalPassFailure();

    // Each group becomes one gpu.binary where its first module was.
    DenseMap<StringAttr, StringAttr> binaryOf;
    for (auto &[name, pieces] : groups) {
      gpu::GPUModuleOp first = pieces.front().module;
      for (Piece piece : pieces)
        binaryOf[piece.module.getSymNameAttr()] = name;
      SmallVector<Attribute> objects;
      for (size_t t = 0, e = first.getTargetsAttr().size(); t < e; ++t) {
        SmallVector<StringRef> ptx;
        for (const Piece &piece : pieces) {
          const SmallVector<char, 0> &object = *jobs[piece.firstJob + t].object;
          ptx.push_back(StringRef(object.data(), object.size()));
        }
        std::string linked, error;
        if (failed(linkPTX(ptx, linked, error))) {
          first.emitError("cannot join the PTX of the modules split from '")
              << name.getValue() << "': " << error;
          return signalPassFailure();
        }
        SmallVector<char, 0> bytes(linked.begin(), linked.end());
        Attribute object =
            jobs[pieces.front().firstJob + t].target.createObject(first, bytes,
                                                                  options);
        if (!object) {
          first.emitError("cannot make a gpu.object of gpu.module '")
              << first.getName() << "'";
          return signalPassFailure();
        }
        objects.push_back(withoutTimings(object));
      }
      OpBuilder builder(first);
      Location loc = first.getLoc();
      auto offloading = first.getOffloadingHandlerAttr();
      gpu::BinaryOp::create(builder, loc, name, offloading,
                            builder.getArrayAttr(objects));
      for (Piece piece : pieces)
        piece.module.erase();
    }
    // References to a piece's kernels now name its binary.
    AttrTypeReplacer replacer;
    replacer.addReplacement([&](SymbolRefAttr ref) -> std::optional<Attribute> {
      auto it = binaryOf.find(ref.getRootReference());
      if (it == binaryOf.end() || it->second == ref.getRootReference())
        return std::nullopt;
      return SymbolRefAttr::get(it->second, ref.getNestedReferences());
    });
    top->walk([&](Operation *op) { replacer.replaceElementsIn(op); });
  }
};
} // namespace
