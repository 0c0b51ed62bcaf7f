//===- KGraphOptMain.cpp - the kgraph-opt driver --------------------------===//
//
// kgraph-opt is mlir-opt with three more flags:
//   --tile=<target>   run kgraph-compile for an SM target from the table;
//                     --tile=sm_80,sm_90a writes out.sm_80.ptx, out.sm_90a.ptx
//                     and one out.plan.json with a variant per target
//   --fuse            group ops into fused kernels first (kgraph-fuse)
//   --fuse-report     with --fuse: remarks on what was fused and why not
//   --emit=<stage>    tiled | gpu | nvvm print the IR after that stage;
//                     ptx (default) writes -o <file>.ptx and <file>.plan.json
//   --list-configs=N  print the N best configuration candidates of every
//                     kernel group as JSON instead of compiling
//   --tuning-db=F     configurations from a tuning database (kgraph.tune);
//                     --tuning-gpu=NAME only its records of that GPU,
//                     --tuning-report a remark per group on who chose
//   --print-element-types  print the element-type table as JSON and exit
//   --version         also prints the kgraph version (the plans' producer)
// Without --tile it behaves exactly like mlir-opt.
//
//===----------------------------------------------------------------------===//

#include "kgraph/Tools/KGraphOptMain.h"
#include "kgraph/InitAll.h"
#include "kgraph/Dialect/KGraph/Transforms/KernelFamilies.h"
#include "kgraph/Dialect/KGraph/Transforms/Passes.h"
#include "kgraph/Pipelines/Pipelines.h"
#include "kgraph/Target/ElementTypes.h"
#include "kgraph/Target/SMTargets.h"

#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/InitAllDialects.h"
#include "mlir/InitAllExtensions.h"
#include "mlir/InitAllPasses.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Support/Timing.h"
#include "mlir/Support/FileUtilities.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/ToolOutputFile.h"
#include "llvm/Support/WithColor.h"

#include <sstream>

using namespace mlir;

static llvm::cl::OptionCategory kgraphCategory("kgraph options");
static llvm::cl::opt<std::string>
    tileTarget("tile",
               llvm::cl::desc("Compile for this SM target (sm_70 ... sm_90a); "
                              "a comma list writes a bundle, one PTX file "
                              "per target and one plan"),
               llvm::cl::value_desc("target"), llvm::cl::cat(kgraphCategory));
static llvm::cl::opt<bool>
    fuseOps("fuse", llvm::cl::desc("Fuse ops into as few kernels as pays"),
            llvm::cl::cat(kgraphCategory));
static llvm::cl::opt<unsigned> padConvChannels(
    "pad-conv-channels",
    llvm::cl::desc("With --tile: pad the few input channels of an nhwc conv2d "
                   "with zeros to this many bytes per pixel (4, 8 or 16; 0, "
                   "the default: off), so its im2col gather loads vectors"),
    llvm::cl::init(0), llvm::cl::cat(kgraphCategory));
static llvm::cl::opt<bool> spaceToDepthConvs(
    "space-to-depth-convs",
    llvm::cl::desc("With --tile: rewrite a strided nhwc conv2d with few "
                   "input channels as a stride-1 conv over its space-to-depth "
                   "input (kgraph-space-to-depth-convs; on by default, "
                   "=false keeps such convs as written: the rewrite's zero "
                   "filter taps turn an inf input into NaN in the outputs "
                   "beside its windows)"),
    llvm::cl::init(true), llvm::cl::cat(kgraphCategory));
static llvm::cl::opt<bool> winogradConvs(
    "winograd-convs",
    llvm::cl::desc("With --tile: compute a 3x3 stride-1 conv2d whose GEMM "
                   "runs on FMA (f32) as Winograd F(4x4, 3x3): filter and "
                   "input transforms, 36 batched GEMMs, output transform "
                   "with the epilogue, where it has enough channels and "
                   "work (kgraph-winograd-convs; on by default, =false "
                   "keeps direct convs: their sums lose fewer ulps, and an "
                   "inf input spreads NaN to its whole 4x4 output tile)"),
    llvm::cl::init(true), llvm::cl::cat(kgraphCategory));
static llvm::cl::opt<unsigned> winogradMinChannels(
    "winograd-min-channels",
    llvm::cl::desc("With --tile: the least input channels and filters of a "
                   "conv2d computed as Winograd (default 64)"),
    llvm::cl::init(64), llvm::cl::cat(kgraphCategory));
static llvm::cl::opt<uint64_t> winogradMinMacs(
    "winograd-min-macs",
    llvm::cl::desc("With --tile: the least multiply-adds (N*OH*OW*F*C*9) of "
                   "a conv2d computed as Winograd (default 2^29: the "
                   "ResNet-50 layers at batch 1 are mostly faster direct, "
                   "measured)"),
    llvm::cl::init(uint64_t(1) << 29), llvm::cl::cat(kgraphCategory));
static llvm::cl::opt<bool> splitKConvs(
    "split-k-convs",
    llvm::cl::desc("With --tile: split the K of a deep conv2d over few pixels "
                   "(a batch-1 CNN's last stages) into channel slices, a "
                   "grouped conv of partial sums and their sum, where the "
                   "target's GEMM model says it pays (kgraph-split-k-convs; "
                   "on by default, =false keeps convs as written)"),
    llvm::cl::init(true), llvm::cl::cat(kgraphCategory));
static llvm::cl::opt<double> splitKMinGain(
    "split-k-min-gain",
    llvm::cl::desc("With --tile: split a conv2d over channel slices only where "
                   "the model's estimate drops at least this factor (default "
                   "1.25; at least 1)"),
    llvm::cl::init(1.25), llvm::cl::cat(kgraphCategory));
static llvm::cl::opt<bool> hoistParameterKernels(
    "hoist-parameter-kernels",
    llvm::cl::desc("With --tile: kernels that compute only from the model's "
                   "parameters (a filter rearranged for a split-K or "
                   "space-to-depth conv) become the plan's once kernels, run "
                   "at load instead of on every call (on by default; =false "
                   "keeps them per call)"),
    llvm::cl::init(true), llvm::cl::cat(kgraphCategory));
static llvm::cl::opt<bool> fuseReport(
    "fuse-report",
    llvm::cl::desc("With --fuse: a remark per group formed and per kernel op "
                   "left alone, saying why"),
    llvm::cl::cat(kgraphCategory));
static llvm::cl::opt<std::string> emitStage(
    "emit",
    llvm::cl::desc("With --tile: tiled, gpu or nvvm print the IR after that "
                   "stage; ptx writes the PTX to -o and the launch plan "
                   "beside it"),
    llvm::cl::init("ptx"), llvm::cl::cat(kgraphCategory));

static llvm::cl::opt<unsigned> listConfigs(
    "list-configs",
    llvm::cl::desc("With --tile: print as JSON, for every kernel group (after "
                   "fusion with --fuse), up to N legal configurations ranked "
                   "by the model, the default first, instead of compiling"),
    llvm::cl::value_desc("N"), llvm::cl::cat(kgraphCategory));

static llvm::cl::opt<std::string> tuningDb(
    "tuning-db",
    llvm::cl::desc("With --tile: configurations from this tuning database "
                   "(python3 -m kgraph.tune) where its records match"),
    llvm::cl::value_desc("file"), llvm::cl::cat(kgraphCategory));
static llvm::cl::opt<std::string> tuningGpu(
    "tuning-gpu",
    llvm::cl::desc("With --tuning-db: only the records measured on this GPU "
                   "(default: any GPU of the target)"),
    llvm::cl::value_desc("name"), llvm::cl::cat(kgraphCategory));
static llvm::cl::opt<bool> tuningReport(
    "tuning-report",
    llvm::cl::desc("With --tile: a remark per group saying whether a tuning "
                   "record, a near record, a pinned attribute or the model "
                   "chose its configuration"),
    llvm::cl::cat(kgraphCategory));

static llvm::cl::opt<std::string> cudaPath(
    "cuda-path",
    llvm::cl::desc("CUDA toolkit root holding nvvm/libdevice (default: "
                   "$CUDA_HOME, $CUDA_PATH, $CUDA_ROOT, the folder above "
                   "this binary's bin/, /usr/local/cuda)"),
    llvm::cl::value_desc("dir"), llvm::cl::cat(kgraphCategory));

static llvm::cl::opt<bool> printElementTypes(
    "print-element-types",
    llvm::cl::desc("Print the element-type table (plan dtype names, sizes, "
                   "tensor-core operand kinds and their targets, tensor-map "
                   "types, host types) as JSON and exit"),
    llvm::cl::cat(kgraphCategory));

static int fail(const llvm::Twine &message) {
  llvm::WithColor::error(llvm::errs(), "kgraph-opt") << message << "\n";
  return EXIT_FAILURE;
}

/// The folder above the bin/ this executable sits in: the root of the
/// package scripts/build-static-kgraph-opt.sh makes (<root>/bin/kgraph-opt
/// beside <root>/nvvm/libdevice/libdevice.10.bc). Empty if unknown.
static std::string getPackageRoot(const char *argv0) {
  std::string exe = llvm::sys::fs::getMainExecutable(
      argv0, reinterpret_cast<void *>(&getPackageRoot));
  return llvm::sys::path::parent_path(llvm::sys::path::parent_path(exe))
      .str();
}

/// `out.ptx` (or `out`) -> `out`.
static llvm::StringRef ptxStem(llvm::StringRef ptxPath) {
  return ptxPath.ends_with(".ptx") ? ptxPath.drop_back(4) : ptxPath;
}

/// `out.ptx` -> `out.plan.json`.
static std::string planPathFor(llvm::StringRef ptxPath) {
  return (ptxStem(ptxPath) + ".plan.json").str();
}

/// The PTX file of `target` in a bundle written to `out.ptx`:
/// `out.<target>.ptx`.
static std::string bundlePTXPath(llvm::StringRef ptxPath,
                                 llvm::StringRef target) {
  return (ptxStem(ptxPath) + "." + target + ".ptx").str();
}

/// Parses `inputFilename` into `context`, diagnostics pointing at the source.
static OwningOpRef<ModuleOp> parseInput(StringRef inputFilename,
                                        llvm::SourceMgr &sourceMgr,
                                        MLIRContext &context) {
  std::string errorMessage;
  auto input = openInputFile(inputFilename, &errorMessage);
  if (!input) {
    fail(errorMessage);
    return nullptr;
  }
  sourceMgr.AddNewSourceBuffer(std::move(input), llvm::SMLoc());
  return parseSourceFile<ModuleOp>(sourceMgr, &context);
}

/// mlir-opt's pass-manager options (IR printing, statistics, crash
/// reproducers) and --mlir-timing on a pass manager of our own, as
/// MlirOptMain applies them; the timing report prints when `pm` is
/// destroyed, and nothing is timed without --mlir-timing.
static LogicalResult applyMlirOptCLOptions(PassManager &pm) {
  if (failed(applyPassManagerCLOptions(pm)))
    return failure();
  auto timing = std::make_unique<DefaultTimingManager>();
  applyDefaultTimingManagerCLOptions(*timing);
  if (timing->isEnabled())
    pm.enableTiming(std::move(timing));
  return success();
}

/// The kernel-formation options (kgraph-compile's passes up to
/// kgraph-form-kernels) the command line sets, for `target`: one place, so
/// --list-configs lists the groups the compile forms.
static void setKernelFormationOptions(kgraph::CompileOptions &options,
                                      StringRef target) {
  options.target = target.str();
  options.fuse = fuseOps;
  options.fuseReport = fuseReport;
  options.padConvChannels = padConvChannels;
  options.spaceToDepthConvs = spaceToDepthConvs;
  options.winogradConvs = winogradConvs;
  options.winogradMinChannels = winogradMinChannels;
  options.winogradMinMacs = winogradMinMacs;
  options.splitKConvs = splitKConvs;
  options.splitKMinGain = splitKMinGain;
}

/// --list-configs: kernel formation (after fusion with --fuse), then the
/// ranked candidates of every group as JSON.
static int printConfigCandidates(StringRef inputFilename,
                                StringRef outputFilename,
                                DialectRegistry &registry) {
  MLIRContext context(registry);
  context.printOpOnDiagnostic(false);
  llvm::SourceMgr sourceMgr;
  SourceMgrDiagnosticHandler handler(sourceMgr, &context);
  OwningOpRef<ModuleOp> module = parseInput(inputFilename, sourceMgr, context);
  if (!module)
    return EXIT_FAILURE;
  PassManager pm(&context);
  if (failed(applyMlirOptCLOptions(pm)))
    return EXIT_FAILURE;
  // The groups kgraph-compile would tile, from the same passes.
  kgraph::CompileOptions options;
  setKernelFormationOptions(options, tileTarget);
  kgraph::buildKernelFormationPasses(pm, options);
  if (failed(pm.run(*module)))
    return EXIT_FAILURE;
  FailureOr<llvm::json::Array> groups = kgraph::listModuleConfigCandidates(
      *module, *kgraph::lookupSMTarget(tileTarget), listConfigs);
  if (failed(groups))
    return EXIT_FAILURE;
  std::string errorMessage;
  auto output = openOutputFile(outputFilename, &errorMessage);
  if (!output)
    return fail(errorMessage);
  output->os() << llvm::formatv("{0:2}", llvm::json::Value(std::move(*groups)))
               << "\n";
  output->keep();
  return EXIT_SUCCESS;
}

int kgraph::kgraphOptMain(int argc, char **argv) {
  mlir::registerAllPasses();
  kgraph::registerAllPasses();
  DialectRegistry registry;
  mlir::registerAllDialects(registry);
  mlir::registerAllExtensions(registry);
  kgraph::registerAllDialects(registry);

  llvm::cl::AddExtraVersionPrinter([](llvm::raw_ostream &os) {
    os << "kgraph " KGRAPH_VERSION_STRING "\n";
  });
  auto [inputFilename, outputFilename] = registerAndParseCLIOptions(
      argc, argv, "kgraph optimizer driver\n", registry);

  if (printElementTypes) {
    printElementTypesJSON(llvm::outs());
    return EXIT_SUCCESS;
  }

  if (tileTarget.empty()) {
    if (fuseOps)
      return fail("--fuse needs --tile=<target>");
    if (fuseReport)
      return fail("--fuse-report needs --fuse --tile=<target>");
    if (padConvChannels.getNumOccurrences())
      return fail("--pad-conv-channels needs --tile=<target>");
    if (spaceToDepthConvs.getNumOccurrences())
      return fail("--space-to-depth-convs needs --tile=<target>");
    if (winogradConvs.getNumOccurrences())
      return fail("--winograd-convs needs --tile=<target>");
    if (winogradMinChannels.getNumOccurrences())
      return fail("--winograd-min-channels needs --tile=<target>");
    if (winogradMinMacs.getNumOccurrences())
      return fail("--winograd-min-macs needs --tile=<target>");
    if (splitKConvs.getNumOccurrences())
      return fail("--split-k-convs needs --tile=<target>");
    if (splitKMinGain.getNumOccurrences())
      return fail("--split-k-min-gain needs --tile=<target>");
    if (hoistParameterKernels.getNumOccurrences())
      return fail("--hoist-parameter-kernels needs --tile=<target>");
    if (listConfigs.getNumOccurrences())
      return fail("--list-configs needs --tile=<target>");
    if (!tuningDb.empty() || tuningReport)
      return fail(std::string(tuningDb.empty() ? "--tuning-report"
                                               : "--tuning-db") +
                  " needs --tile=<target>");
    return asMainReturnCode(
        MlirOptMain(argc, argv, inputFilename, outputFilename, registry));
  }
  // --tile=sm_80,sm_90a: a bundle, one compile per target.
  SmallVector<StringRef> targets;
  llvm::SplitString(tileTarget, targets, ",");
  if (targets.empty())
    return fail("--tile needs a target; known targets: " +
                getKnownSMTargetNames());
  for (auto [i, target] : llvm::enumerate(targets)) {
    if (!lookupSMTarget(target))
      return fail("unknown target '" + target +
                  "'; known targets: " + getKnownSMTargetNames());
    if (llvm::is_contained(ArrayRef(targets).take_front(i), target))
      return fail("target '" + target + "' is given twice in --tile=" +
                  tileTarget);
  }
  if (targets.size() > 1 &&
      (emitStage != "ptx" || listConfigs.getNumOccurrences()))
    return fail("several targets (--tile=" + tileTarget +
                ") make a bundle of PTX files: only with --emit=ptx, not " +
                (listConfigs.getNumOccurrences()
                     ? std::string("with --list-configs")
                     : "--emit=" + emitStage));
  if (fuseReport && !fuseOps)
    return fail("--fuse-report needs --fuse");
  if (padConvChannels != 0 && padConvChannels != 4 && padConvChannels != 8 &&
      padConvChannels != 16)
    return fail("--pad-conv-channels must be 0, 4, 8 or 16 (bytes per "
                "pixel), got " +
                std::to_string(padConvChannels));
  if (!(splitKMinGain >= 1.0))
    return fail("--split-k-min-gain must be at least 1, got " +
                (std::ostringstream() << double(splitKMinGain)).str());
  if (listConfigs.getNumOccurrences()) {
    if (listConfigs == 0)
      return fail("--list-configs needs a number of candidates of at least 1");
    return printConfigCandidates(inputFilename, outputFilename, registry);
  }

  CompileOptions options;
  setKernelFormationOptions(options, targets.front());
  if (!tuningGpu.empty() && tuningDb.empty())
    return fail("--tuning-gpu needs --tuning-db=<file>");
  options.tuningDb = tuningDb;
  options.tuningGpu = tuningGpu;
  options.tuningReport = tuningReport;
  options.hoistParameterKernels = hoistParameterKernels;
  // Resolved here, where the executable's path is known, so a libdevice
  // carried beside the binary (the static package, docs/runtime.md) is found.
  options.cudaPath = cudaPath.empty()
                         ? findCUDAToolkit("", getPackageRoot(argv[0]))
                         : std::string(cudaPath);
  bool emitPTX = emitStage == "ptx";
  if (emitPTX) {
    options.stopAfter = "binary";
  } else if (emitStage == "tiled" || emitStage == "gpu" ||
             emitStage == "nvvm") {
    options.stopAfter = emitStage;
  } else {
    return fail("unknown --emit stage '" + emitStage +
                "'; stages: tiled, gpu, nvvm, ptx");
  }

  MlirOptMainConfig config = MlirOptMainConfig::createFromCLOptions();
  config.setPassPipelineSetupFn([&](PassManager &pm) -> LogicalResult {
    std::string error;
    if (failed(buildCompilePipeline(pm, options, &error)))
      return emitError(UnknownLoc::get(pm.getContext()), error);
    return success();
  });

  std::string errorMessage;
  auto input = openInputFile(inputFilename, &errorMessage);
  if (!input)
    return fail(errorMessage);

  if (!emitPTX) {
    auto output = openOutputFile(outputFilename, &errorMessage);
    if (!output)
      return fail(errorMessage);
    if (failed(MlirOptMain(output->os(), std::move(input), registry, config)))
      return EXIT_FAILURE;
    output->keep();
    return EXIT_SUCCESS;
  }

  if (outputFilename == "-")
    return fail("--emit=ptx writes files: give -o <file>.ptx (the launch "
                "plan goes beside it)");

  MLIRContext context(registry);
  context.allowUnregisteredDialects(config.shouldAllowUnregisteredDialects());
  // Diagnostics point at the user's source; a dump of the (possibly huge)
  // lowered module after each one helps nobody reading them.
  context.printOpOnDiagnostic(false);
  llvm::SourceMgr sourceMgr;
  sourceMgr.AddNewSourceBuffer(std::move(input), llvm::SMLoc());
  SourceMgrDiagnosticHandler handler(sourceMgr, &context);
  OwningOpRef<ModuleOp> module = parseSourceFile<ModuleOp>(sourceMgr, &context);
  if (!module)
    return EXIT_FAILURE;
  // One compile per target; a bundle compiles a copy of the input for each.
  SmallVector<OwningOpRef<ModuleOp>> compiled;
  SmallVector<BundleVariant> variants;
  for (StringRef target : targets) {
    OwningOpRef<ModuleOp> copy =
        targets.size() == 1 ? std::move(module) : module->clone();
    options.target = target.str();
    PassManager pm(&context);
    if (failed(applyMlirOptCLOptions(pm)))
      return EXIT_FAILURE;
    std::string error;
    if (failed(buildCompilePipeline(pm, options, &error)))
      return fail(error);
    if (failed(pm.run(*copy)))
      return EXIT_FAILURE;
    variants.push_back({*copy, targets.size() == 1
                                   ? std::string(outputFilename)
                                   : bundlePTXPath(outputFilename, target)});
    compiled.push_back(std::move(copy));
  }
  if (targets.size() == 1) {
    if (failed(emitPTXAndPlan(variants.front().module,
                              variants.front().ptxPath,
                              planPathFor(outputFilename), inputFilename)))
      return EXIT_FAILURE;
  } else if (failed(emitBundle(variants, planPathFor(outputFilename),
                               inputFilename))) {
    return EXIT_FAILURE;
  }
  return EXIT_SUCCESS;
}
