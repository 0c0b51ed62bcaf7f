//===- Pipelines.h - kgraph's named compilation pipelines -------*- C++ -*-===//

#ifndef KGRAPH_PIPELINES_PIPELINES_H
#define KGRAPH_PIPELINES_PIPELINES_H

#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassOptions.h"

namespace kgraph {

/// Options of the `kgraph-compile` pipeline (the one `kgraph-opt --tile`
/// runs).
struct CompileOptions : public mlir::PassPipelineOptions<CompileOptions> {
  Option<std::string> target{*this, "target",
                             llvm::cl::desc("SM target from the table"),
                             llvm::cl::init("sm_80")};
  Option<bool> fuse{*this, "fuse",
                    llvm::cl::desc("group ops into fused kernels"),
                    llvm::cl::init(false)};
  Option<unsigned> padConvChannels{
      *this, "pad-conv-channels",
      llvm::cl::desc("pad an nhwc conv2d's few input channels with zeros to "
                     "this many bytes per pixel (kgraph-pad-conv-channels; "
                     "0: off)"),
      llvm::cl::init(0)};
  Option<bool> spaceToDepthConvs{
      *this, "space-to-depth-convs",
      llvm::cl::desc("rewrite a strided nhwc conv2d with few input channels "
                     "as a stride-1 conv over its space-to-depth input "
                     "(kgraph-space-to-depth-convs; on by default)"),
      llvm::cl::init(true)};
  Option<bool> winogradConvs{
      *this, "winograd-convs",
      llvm::cl::desc("compute 3x3 stride-1 conv2d on FMA (f32) as Winograd "
                     "F(4x4, 3x3) where it has enough channels and work "
                     "(kgraph-winograd-convs; on by default)"),
      llvm::cl::init(true)};
  Option<int64_t> winogradMinChannels{
      *this, "winograd-min-channels",
      llvm::cl::desc("with winograd-convs: the least input channels and "
                     "filters (kgraph-winograd-convs{min-channels})"),
      llvm::cl::init(64)};
  Option<int64_t> winogradMinMacs{
      *this, "winograd-min-macs",
      llvm::cl::desc("with winograd-convs: the least multiply-adds "
                     "(kgraph-winograd-convs{min-macs})"),
      llvm::cl::init(int64_t(1) << 29)};
  Option<bool> splitKConvs{
      *this, "split-k-convs",
      llvm::cl::desc("split the K of a deep conv2d over few pixels into "
                     "channel slices and a sum where the target's GEMM model "
                     "says it pays (kgraph-split-k-convs; on by default)"),
      llvm::cl::init(true)};
  Option<double> splitKMinGain{
      *this, "split-k-min-gain",
      llvm::cl::desc("with split-k-convs: the least factor the model's "
                     "estimate must drop by (kgraph-split-k-convs{min-gain})"),
      llvm::cl::init(1.25)};
  Option<bool> hoistParameterKernels{
      *this, "hoist-parameter-kernels",
      llvm::cl::desc("run kernels that compute only from parameters once at "
                     "load, not per call (kgraph-lower-to-gpu{"
                     "hoist-parameter-kernels}; on by default)"),
      llvm::cl::init(true)};
  Option<bool> fuseReport{
      *this, "fuse-report",
      llvm::cl::desc("with fuse: a remark per group formed and per kernel "
                     "op left alone (kgraph-fuse{report=true})"),
      llvm::cl::init(false)};
  Option<std::string> stopAfter{
      *this, "stop-after",
      llvm::cl::desc("last stage: tiled, gpu, nvvm or binary"),
      llvm::cl::init("binary")};
  Option<std::string> tuningDb{
      *this, "tuning-db",
      llvm::cl::desc("tuning database whose records choose the "
                     "configurations they match (kgraph-tile{tuning-db=})"),
      llvm::cl::init("")};
  Option<std::string> tuningGpu{
      *this, "tuning-gpu",
      llvm::cl::desc("with tuning-db: only records of this GPU"),
      llvm::cl::init("")};
  Option<bool> tuningReport{
      *this, "tuning-report",
      llvm::cl::desc("a remark per group on who chose its configuration"),
      llvm::cl::init(false)};
  Option<std::string> cudaPath{
      *this, "cuda-path",
      llvm::cl::desc("CUDA toolkit root holding nvvm/libdevice (default: "
                     "$CUDA_HOME, $CUDA_PATH, /usr/local/cuda)"),
      llvm::cl::init("")};
};

/// The CUDA toolkit root whose nvvm/libdevice/libdevice.10.bc the binary
/// stage links (math functions come from libdevice): `preferred` if given
/// (and nothing else), else the first of $CUDA_HOME, $CUDA_PATH, $CUDA_ROOT,
/// `packageRoot` (kgraph-opt passes the folder above its own bin/, where the
/// static package of scripts/build-static-kgraph-opt.sh carries libdevice),
/// /usr/local/cuda that has libdevice. Empty if there is none.
std::string findCUDAToolkit(llvm::StringRef preferred = "",
                            llvm::StringRef packageRoot = "");

/// Stages of `kgraph-compile`, in order; `stopAfter` names one of them.
///   tiled:  [kgraph-pad-conv-channels] [kgraph-space-to-depth-convs]
///           [kgraph-split-k-convs] [kgraph-fuse] kgraph-form-kernels
///           kgraph-tile                                 (kgraph, tensors)
///   gpu:    kgraph-lower-to-gpu                         (gpu + memref + scf)
///   nvvm:   kgraph-split-kernel-modules, nvvm-attach-target,
///           convert-gpu-to-nvvm ...                     (llvm + nvvm)
///   binary: kgraph-serialize-kernels                    (PTX in gpu.binary)
llvm::ArrayRef<llvm::StringRef> getCompileStages();

/// Adds the tiled stage's passes before kgraph-tile (the operand rewrites
/// the options ask for, kgraph-fuse if asked, kgraph-form-kernels): the
/// kernel groups of `options`, untiled (`kgraph-opt --list-configs`).
void buildKernelFormationPasses(mlir::OpPassManager &pm,
                                const CompileOptions &options);

/// Adds the `kgraph-compile` passes to `pm`. Fails (with a message in
/// `error`) for an unknown stage.
mlir::LogicalResult buildCompilePipeline(mlir::OpPassManager &pm,
                                         const CompileOptions &options,
                                         std::string *error = nullptr);

/// Registers `kgraph-compile` and the stage pipeline `kgraph-gpu-to-nvvm`.
void registerPipelines();

/// `ptx` with the instruction forms that ptxas 13.0 (and the r580 driver's
/// JIT) miscompile rewritten into equivalent ones; emitPTXAndPlan applies it
/// to every module it writes. Today: integer `neg` as `not` + `add 1`.
std::string avoidPtxasDefects(llvm::StringRef ptx);

/// Writes the PTX of the module's `gpu.binary` (made with format=isa) to
/// `ptxPath` and its launch plan (docs/launch-plan.md, version 2: one entry
/// per graph function) to `planPath`. `inputPath` is the .mlir file the
/// module came from ("-" or empty: stdin): the module's `kgraph.weights` is
/// relative to its folder.
mlir::LogicalResult emitPTXAndPlan(mlir::ModuleOp module,
                                   llvm::StringRef ptxPath,
                                   llvm::StringRef planPath,
                                   llvm::StringRef inputPath = "");

/// One target of a multi-target bundle: the module compiled for it and the
/// file its PTX goes to.
struct BundleVariant {
  mlir::ModuleOp module;
  std::string ptxPath;
};

/// Writes the PTX of each variant to its `ptxPath` and one launch plan of
/// version 3 (docs/launch-plan.md: a "variants" list, each with its target,
/// PTX file and functions; the weights file shared) to `planPath`. Nothing
/// is kept unless every file is written.
mlir::LogicalResult emitBundle(llvm::ArrayRef<BundleVariant> variants,
                               llvm::StringRef planPath,
                               llvm::StringRef inputPath = "");

} // namespace kgraph

#endif // KGRAPH_PIPELINES_PIPELINES_H
