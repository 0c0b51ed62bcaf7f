//===- Pipelines.cpp - kgraph's named compilation pipelines ---------------===//

#include "kgraph/Pipelines/Pipelines.h"
#include "kgraph/Conversion/Passes.h"
#include "kgraph/Dialect/KGraph/Transforms/Passes.h"
#include "kgraph/Target/SMTargets.h"

#include "mlir/Conversion/ReconcileUnrealizedCasts/ReconcileUnrealizedCasts.h"
#include "mlir/Conversion/SCFToControlFlow/SCFToControlFlow.h"
#include "mlir/Conversion/GPUToNVVM/GPUToNVVMPass.h"
#include "mlir/Conversion/NVGPUToNVVM/NVGPUToNVVM.h"
#include "mlir/Conversion/NVVMToLLVM/NVVMToLLVM.h"
#include "mlir/Conversion/Passes.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/GPU/Transforms/Passes.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Transforms/Passes.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"

#include <cstdlib>

using namespace mlir;
using namespace kgraph;

static const StringRef kStages[] = {"tiled", "gpu", "nvvm", "binary"};

ArrayRef<StringRef> kgraph::getCompileStages() { return kStages; }

std::string kgraph::findCUDAToolkit(StringRef preferred,
                                    StringRef packageRoot) {
  // An explicit path is taken as is: no silent fallback to another toolkit.
  SmallVector<std::string> candidates;
  if (!preferred.empty()) {
    candidates.push_back(preferred.str());
  } else {
    for (const char *var : {"CUDA_HOME", "CUDA_PATH", "CUDA_ROOT"})
      if (const char *value = std::getenv(var))
        candidates.push_back(value);
    if (!packageRoot.empty())
      candidates.push_back(packageRoot.str());
    candidates.push_back("/usr/local/cuda");
  }
  for (const std::string &root : candidates) {
    SmallString<128> libdevice(root);
    llvm::sys::path::append(libdevice, "nvvm", "libdevice", "libdevice.10.bc");
    if (llvm::sys::fs::exists(libdevice))
      return root;
  }
  return "";
}

/// Lowers the kernels of gpu.module @kgraph_kernels to NVVM for `target`,
/// one module per kernel.
static void buildGPUToNVVM(OpPassManager &pm, const SMTarget &target) {
  // One module per kernel: the nested pipeline and the binary stage run
  // them in parallel.
  pm.addPass(createKGraphSplitKernelModules());
  GpuNVVMAttachTargetOptions attach;
  attach.chip = target.name.str();
  attach.features = target.ptxFeature();
  attach.optLevel = 3;
  pm.addPass(createGpuNVVMAttachTarget(attach));
  OpPassManager &gpuPm = pm.nest<gpu::GPUModuleOp>();
  gpuPm.addPass(createKGraphLegalizeVectors());
  gpuPm.addPass(createSCFToControlFlowPass());
  gpuPm.addPass(createConvertNVGPUToNVVMPass());
  ConvertGpuOpsToNVVMOpsOptions toNVVM;
  toNVVM.useBarePtrCallConv = true;
  gpuPm.addPass(createConvertGpuOpsToNVVMOps(toNVVM));
  // NVVM ops without an LLVM intrinsic (wgmma.mma_async) become inline PTX.
  gpuPm.addPass(createConvertNVVMToLLVMPass());
  gpuPm.addPass(createCanonicalizerPass());
  gpuPm.addPass(createCSEPass());
  gpuPm.addPass(createReconcileUnrealizedCastsPass());
}

void kgraph::buildKernelFormationPasses(OpPassManager &pm,
                                        const CompileOptions &options) {
  if (options.padConvChannels != 0) {
    KGraphPadConvChannelsOptions pad;
    pad.bytes = options.padConvChannels;
    pm.addNestedPass<func::FuncOp>(createKGraphPadConvChannels(pad));
  }
  if (options.spaceToDepthConvs)
    pm.addNestedPass<func::FuncOp>(createKGraphSpaceToDepthConvs());
  if (options.winogradConvs) {
    KGraphWinogradConvsOptions winograd;
    winograd.minChannels = options.winogradMinChannels;
    winograd.minMacs = options.winogradMinMacs;
    pm.addNestedPass<func::FuncOp>(createKGraphWinogradConvs(winograd));
  }
  // An unknown target is kgraph-tile's to report.
  if (options.splitKConvs && lookupSMTarget(options.target)) {
    KGraphSplitKConvsOptions split;
    split.target = options.target;
    split.minGain = options.splitKMinGain;
    split.hoistedFilters = options.hoistParameterKernels;
    pm.addNestedPass<func::FuncOp>(createKGraphSplitKConvs(split));
  }
  if (options.fuse) {
    KGraphFuseOptions fuse;
    fuse.report = options.fuseReport;
    pm.addNestedPass<func::FuncOp>(createKGraphFuse(fuse));
  }
  pm.addNestedPass<func::FuncOp>(createKGraphFormKernels());
}

LogicalResult kgraph::buildCompilePipeline(OpPassManager &pm,
                                           const CompileOptions &options,
                                           std::string *error) {
  const StringRef *stop = llvm::find(kStages, options.stopAfter.getValue());
  if (stop == std::end(kStages)) {
    if (error)
      *error = "unknown stage '" + options.stopAfter.getValue() +
               "'; stages: tiled, gpu, nvvm, binary";
    return failure();
  }
  unsigned last = stop - std::begin(kStages);
  // tiled
  buildKernelFormationPasses(pm, options);
  KGraphTileOptions tile;
  tile.target = options.target;
  tile.tuningDb = options.tuningDb;
  tile.tuningGpu = options.tuningGpu;
  tile.tuningReport = options.tuningReport;
  pm.addPass(createKGraphTile(tile));
  if (last == 0)
    return success();
  // gpu
  KGraphLowerToGPUOptions lower;
  lower.hoistParameterKernels = options.hoistParameterKernels;
  pm.addPass(createKGraphLowerToGPU(lower));
  pm.addPass(createCanonicalizerPass());
  pm.addPass(createCSEPass());
  if (last == 1)
    return success();
  // nvvm: an unknown target never gets here, kgraph-tile reports it.
  const SMTarget *target = lookupSMTarget(options.target);
  if (!target)
    return success();
  buildGPUToNVVM(pm, *target);
  if (last == 2)
    return success();
  // binary
  KGraphSerializeKernelsOptions toBinary;
  toBinary.toolkitPath = findCUDAToolkit(options.cudaPath);
  pm.addPass(createKGraphSerializeKernels(toBinary));
  return success();
}

namespace {
struct GPUToNVVMOptions : public PassPipelineOptions<GPUToNVVMOptions> {
  Option<std::string> target{*this, "target",
                             llvm::cl::desc("SM target from the table"),
                             llvm::cl::init("sm_80")};
};
} // namespace

/// Registers a pipeline whose builder can reject its options with a message
/// (PassPipelineRegistration's builders cannot fail).
template <typename Options>
static void registerCheckedPipeline(
    StringRef arg, StringRef description,
    std::function<LogicalResult(OpPassManager &, const Options &,
                                std::string &)>
        builder) {
  registerPassPipeline(
      arg, description,
      [builder](OpPassManager &pm, StringRef optionsStr,
                function_ref<LogicalResult(const Twine &)> errorHandler) {
        Options options;
        if (failed(options.parseFromString(optionsStr)))
          return failure();
        std::string error;
        if (failed(builder(pm, options, error)))
          return errorHandler(error);
        return success();
      },
      [](function_ref<void(const mlir::detail::PassOptions &)> optHandler) {
        optHandler(Options());
      });
}

void kgraph::registerPipelines() {
  registerCheckedPipeline<CompileOptions>(
      "kgraph-compile",
      "kgraph's whole pipeline: kernel formation, tiling, lowering to gpu, "
      "nvvm and PTX (stop-after picks the last stage)",
      [](OpPassManager &pm, const CompileOptions &options, std::string &error) {
        return buildCompilePipeline(pm, options, &error);
      });
  registerCheckedPipeline<GPUToNVVMOptions>(
      "kgraph-gpu-to-nvvm",
      "The nvvm stage alone: attach the target from the SM table and lower "
      "gpu.module kernels to NVVM",
      [](OpPassManager &pm, const GPUToNVVMOptions &options,
         std::string &error) {
        const SMTarget *target = lookupSMTarget(options.target);
        if (!target) {
          error = "unknown target '" + options.target +
                  "'; known targets: " + getKnownSMTargetNames();
          return failure();
        }
        buildGPUToNVVM(pm, *target);
        return success();
      });
}
