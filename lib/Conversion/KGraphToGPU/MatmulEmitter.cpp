//===- MatmulEmitter.cpp - GEMM kernels from #kgraph.matmul_config --------===//
//
// The kernel is split the way the configuration is:
//   - the skeleton (MatmulKernelBuilder, MatmulKernelBuilder.h): block and
//     warp indexing (this file), global addressing of the operands and the
//     result (MatmulAddressing.cpp), shared-memory staging of operand tiles
//     with an asynchronous multi-stage pipeline over K (MatmulMainLoop.cpp),
//     and the bounds-checked epilogue (MatmulEpilogue.cpp);
//   - the instruction (WarpMma): how a warp loads its fragments from shared
//     memory, multiplies them into its accumulators, and which output
//     element each accumulator register holds.
// WarpMma.cpp has SIMT fma and mma.sync (f16/bf16 k16 and k8, tf32, s8);
// Wgmma.cpp has sm_90a's asynchronous warpgroup MMA, which overrides the
// WarpMma hooks (warp placement, its own swizzled tile layout, tiles still
// read after a k step, fences). Without cp.async (sm_70,
// sm_75, or rows not 4-byte aligned) the stages are filled by synchronous
// copies; the loop is the same, and the barrier at the top of each k step
// orders the writes of a stage before its reads.
//
// The same kernel computes kgraph.conv2d as an implicit GEMM (see
// MatmulProblem in MatmulTiling.h): one GEMM per group (grid z),
// M = N * OH * OW output pixels, N = F / groups output channels,
// K = KH * KW * C / groups, with the filter as a transposed B and A
// gathered from the input (im2col on the fly, zero outside the image). The
// skeleton reaches global memory only through the operand and result
// addressing below (OperandAccess, ResultAccess), so matmul and conv share
// every other line. A 1x1, stride-1, unpadded nhwc conv2d is a plain GEMM:
// its A is the input as an [N*H*W][C] matrix.
//
// Shared-memory layout (per stage; `pad` = smem_padding): operand tiles are
// stored as rows of the operand's contiguous global dimension, so every
// global row segment is one asynchronous copy:
//   A: [tile_m][tile_k + pad], or [tile_k][tile_m + pad] if transpose_a
//   B: [tile_k][tile_n + pad], or [tile_n][tile_k + pad] if transpose_b
// ldmatrix (.trans where the stored rows run along K) turns either layout
// into mma fragments. An instruction may ask for a layout of its own
// (WarpMma::tileShape / tileIndices; wgmma: 128-byte swizzled rows, see
// Wgmma.cpp), aligned inside the dynamic shared memory.
//
// A group may fuse elementwise ops around its GEMM (GemmGroup.h). The
// epilogue evaluates them in registers before the single store (ScalarOps.h:
// the accumulator rounded to the anchor's result type, every op computed in
// f32/i32 and rounded to its own type); their other inputs are read at the
// output element's coordinates. Where the resource model says so
// (GemmSharedMemoryLayout::epilogueRowBytes), the rounded accumulators first
// go through shared memory, so that each thread evaluates and stores runs of
// 16 bytes of one row (MatmulEpilogue.cpp). A matmul
// operand with a prologue (cast, scale) is staged synchronously through
// registers and converted on the way, since cp.async only copies bytes:
// its loads no longer overlap the previous stage's math.
//
//===----------------------------------------------------------------------===//

#include "MatmulKernelBuilder.h"
#include "kgraph/Dialect/KGraph/IR/KGraphClassify.h"
#include "kgraph/Dialect/KGraph/Transforms/MatmulTiling.h"
#include "kgraph/Target/SMTargets.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/IR/Builders.h"
#include "llvm/Support/MathExtras.h"

using namespace mlir;
using namespace kgraph;
using namespace kgraph::detail;


/// CUDA's limits on grid.y and grid.z (grid.x allows 2^31 - 1).
static constexpr int64_t kMaxGridY = 65535, kMaxGridZ = 65535;
static constexpr int64_t kMaxGridX = (int64_t(1) << 31) - 1;

/// Whether the blocks of one GEMM are numbered along grid x only (see
/// getGemmLaunchShape).
static bool isLinearGrid(const MatmulProblem &p, MatmulConfigAttr config) {
  return config.getGroupM() > 1 ||
         llvm::divideCeilSigned(p.m, config.getTileM()) > kMaxGridY;
}

FailureOr<GemmLaunchShape> kgraph::getGemmLaunchShape(FusedOp group,
                                                      MatmulConfigAttr config) {
  FailureOr<GemmGroup> g = getGemmGroup(group);
  if (failed(g))
    return failure();
  const MatmulProblem &p = g->p;
  GemmLaunchShape shape;
  shape.gridX = llvm::divideCeilSigned(p.n, config.getTileN());
  shape.gridY = llvm::divideCeilSigned(p.m, config.getTileM());
  shape.gridZ = p.batch;
  if (config.isStreamK()) {
    // A persistent grid walks every tile (TmaPipeline.cpp).
    shape.gridX = getStreamKWorkspace(p, config).schedule.blocks;
    shape.gridY = shape.gridZ = 1;
    shape.sharedMemoryBytes = getGemmSharedMemoryLayout(p, config).totalBytes;
    return shape;
  }
  // Grouped rasterization (group_m > 1) numbers the blocks of one GEMM
  // along grid x; so does a grid past grid.y's limit of 65535 blocks (grid.x
  // allows 2^31 - 1). The kernel decodes the (M tile, N tile) pair.
  if (isLinearGrid(p, config)) {
    shape.gridX *= shape.gridY;
    shape.gridY = 1;
  }
  shape.sharedMemoryBytes = getGemmSharedMemoryLayout(p, config).totalBytes;
  return shape;
}

FailureOr<ArrayAttr> kgraph::getGemmTensorMaps(FusedOp group,
                                               MatmulConfigAttr config) {
  FailureOr<GemmGroup> g = getGemmGroup(group);
  if (failed(g))
    return failure();
  if (config.getCopy() != CopyKind::tma)
    return ArrayAttr();
  return getTmaMapsAttr(group.getContext(), g->p, config,
                        g->lhs.getArgNumber(), g->rhs.getArgNumber());
}

FailureOr<int64_t> kgraph::getGemmWorkspaceBytes(FusedOp group,
                                                 MatmulConfigAttr config) {
  FailureOr<GemmGroup> g = getGemmGroup(group);
  if (failed(g))
    return failure();
  return getStreamKWorkspace(g->p, config).totalBytes;
}

LogicalResult kgraph::checkMatmulGroup(FusedOp group, MatmulConfigAttr config,
                                       const SMTarget *target) {
  // The contract's diagnostics first (analyzeGemmGroup).
  if (failed(analyzeGemmGroup(group)))
    return failure();
  std::string whyNot;
  FailureOr<GemmGroup> g = getGemmGroup(group, &whyNot);
  if (failed(g))
    // Only problems kgraph-tile rejects (an empty product, an element type
    // without a kernel, a conv2d whose groups do not divide its channels).
    return group.emitOpError(whyNot);
  Operation *op = g->op;
  const MatmulProblem &p = g->p;
  if (!createWarpMma(p, config, &whyNot))
    return op->emitOpError(whyNot);
  if (config.getCopy() == CopyKind::tma) {
    // The conditions of kgraph-tile's check, for configurations written
    // after it.
    if (!target)
      return op->emitOpError("copy = tma needs a target");
    if (std::string why = getTmaConfigError(config, p, *target); !why.empty())
      return op->emitOpError(why);
  }
  if (!llvm::isa<FloatType>(p.resultType) && p.resultType != p.getAccumulatorType())
    return op->emitOpError("result type ") << p.resultType << " is not supported";
  // The selection model's rule (kgraph-tile checks it too).
  if (std::string why = getLoadWidthError(config, p); !why.empty())
    return op->emitOpError(why);
  int64_t tm = config.getTileM(), tn = config.getTileN();
  int64_t tilesN = llvm::divideCeilSigned(p.n, tn),
          tilesM = llvm::divideCeilSigned(p.m, tm);
  if (p.batch > kMaxGridZ)
    return op->emitOpError("needs ")
           << p.batch << " GEMMs (batch or conv2d groups) in grid z; at most "
           << kMaxGridZ;
  if (std::string why = getStreamKError(config, p); !why.empty())
    return op->emitOpError(why);
  if (isLinearGrid(p, config) && tilesN * tilesM > kMaxGridX)
    return op->emitOpError("needs ")
           << tilesN * tilesM << " blocks per GEMM; at most " << kMaxGridX;
  int64_t smem = getGemmSharedMemoryLayout(p, config).totalBytes;
  if (target && smem > int64_t(target->sharedMemPerBlock))
    return op->emitOpError("needs ")
           << smem << " bytes of shared memory; " << target->name
           << " allows " << target->sharedMemPerBlock << " per block";
  return success();
}

LogicalResult MatmulKernelBuilder::build() {
  mma = createWarpMma(p, config);
  if (!mma)
    return gemm.op->emitOpError(
        "has no warp instruction for its configuration");
  setUpAddressing();
  MLIRContext *ctx = kernel.getContext();
  Block &entry = kernel.getBody().front();
  OpBuilder b = OpBuilder::atBlockBegin(&entry);
  IndexMath im{b, loc};

  auto flatten = [&](Value memref) -> Value {
    auto type = llvm::cast<MemRefType>(memref.getType());
    int64_t n = type.getNumElements();
    return memref::ReinterpretCastOp::create(
        b, loc, MemRefType::get({n}, type.getElementType()), memref, 0,
        ArrayRef<int64_t>{n}, ArrayRef<int64_t>{1});
  };
  // Kernel arguments: the group's inputs in order, then the result.
  Block &body = group.getBody().front();
  auto argOf = [&](Value v) {
    return entry.getArgument(llvm::cast<BlockArgument>(v).getArgNumber());
  };
  flatA = flatten(argOf(gemm.lhs));
  flatB = flatten(argOf(gemm.rhs));
  flatC = flatten(entry.getArgument(body.getNumArguments()));
  // Epilogue inputs, also those read through a transpose, broadcast or
  // slice (GemmGroup.cpp).
  for (Operation *op : gemm.parts.epilogue)
    for (Value operand : op->getOperands()) {
      if (Operation *def = operand.getDefiningOp(); def && isAccessMapOp(def))
        operand = def->getOperand(0);
      if (llvm::isa<BlockArgument>(operand) && !flatInputs.count(operand))
        flatInputs[operand] = flatten(argOf(operand));
    }

  // Shared memory: the A stages, then the B stages, then the mbarriers
  // (the model's layout, GemmModel.h).
  int64_t tm = config.getTileM(), tn = config.getTileN();
  int64_t stages = config.getStages();
  GemmSharedMemoryLayout layout = getGemmSharedMemoryLayout(p, config);
  auto workgroup = gpu::AddressSpaceAttr::get(ctx, gpu::AddressSpace::Workgroup);
  SmallVector<int64_t> aShape = {stages, layout.rowsA, layout.colsA};
  SmallVector<int64_t> bShape = {stages, layout.rowsB, layout.colsB};
  // The instruction may want a layout of its own (wgmma: swizzled).
  if (SmallVector<int64_t> own = mma->tileShape(/*isA=*/true); !own.empty())
    aShape = own;
  if (SmallVector<int64_t> own = mma->tileShape(/*isA=*/false); !own.empty())
    bShape = own;
  auto aType = MemRefType::get(aShape, p.operandType, AffineMap(), workgroup);
  auto bType = MemRefType::get(bShape, p.operandType, AffineMap(), workgroup);
  Value smem = gpu::DynamicSharedMemoryOp::create(
      b, loc,
      MemRefType::get({ShapedType::kDynamic}, b.getI8Type(), AffineMap(),
                      workgroup));
  // The views must be the layout's: the launch asks for its bytes.
  int64_t aBytes = aType.getNumElements() * byteWidth(p.operandType);
  int64_t bBytes = bType.getNumElements() * byteWidth(p.operandType);
  if (aBytes != layout.offsetB ||
      bBytes != stages * layout.stageBytesB ||
      mma->tileAlignment() != layout.tileAlignment)
    return group.emitOpError("internal error: the kernel's operand tiles (")
           << aBytes << " + " << bBytes << " bytes, aligned to "
           << mma->tileAlignment()
           << ") are not the shared-memory model's (" << layout.offsetB
           << " + " << stages * layout.stageBytesB
           << ", aligned to " << layout.tileAlignment << ")";
  // Tiles start at the first `align`-byte boundary of the dynamic shared
  // memory (the layout's slack).
  Value aStart = im.c(0);
  if (int64_t align = layout.tileAlignment; align > 0) {
    Value addr = memref::ExtractAlignedPointerAsIndexOp::create(b, loc, smem);
    Value alignValue = im.c(align);
    aStart = im.rem(im.sub(alignValue, im.rem(addr, align)), align);
  }
  dynamicSmem = smem;
  tilesStart = aStart;
  aTile = memref::ViewOp::create(b, loc, aType, smem, aStart, ValueRange{});
  bTile = memref::ViewOp::create(b, loc, bType, smem,
                                 im.add(aStart, layout.offsetB), ValueRange{});

  tid = gpu::ThreadIdOp::create(b, loc, gpu::Dimension::x);
  lane = im.rem(tid, 32);
  Value warp = im.div(tid, 32);
  std::tie(warpRow, warpCol) = mma->warpOrigin(im, warp, config);
  Value blockX = gpu::BlockIdOp::create(b, loc, gpu::Dimension::x);
  int64_t tilesN = llvm::divideCeilSigned(p.n, tn),
          tilesM = llvm::divideCeilSigned(p.m, tm);
  if (config.isStreamK()) {
    // A persistent block walks tiles: the main loop decodes each
    // (TmaPipeline.cpp).
  } else if (isLinearGrid(p, config)) {
    // Block b of the linear grid: bands of G = group_m M tiles, each walked
    // N tile by N tile with the G (or fewer, in the last band) M tiles of
    // one N tile consecutive.
    int64_t g = std::min(config.getGroupM(), tilesM);
    int64_t perBand = g * tilesN;
    Value band = im.div(blockX, perBand);
    Value inBand = im.rem(blockX, perBand);
    Value firstM = im.mul(band, g);
    Value rowsInBand;
    if (tilesM % g == 0) {
      rowsInBand = im.c(g);
    } else {
      Value rowsLeft = im.sub(im.c(tilesM), firstM);
      rowsInBand = im.minu(rowsLeft, im.c(g));
    }
    Value tileRow = im.add(firstM, arith::RemUIOp::create(b, loc, inBand,
                                                           rowsInBand));
    Value tileCol = arith::DivUIOp::create(b, loc, inBand, rowsInBand);
    rowBase = im.mul(tileRow, tm);
    colBase = im.mul(tileCol, tn);
  } else {
    colBase = im.mul(blockX, tn);
    rowBase = im.mul(gpu::BlockIdOp::create(b, loc, gpu::Dimension::y), tm);
  }
  if (!config.isStreamK())
    batch = gpu::BlockIdOp::create(b, loc, gpu::Dimension::z);

  SmallVector<Value> acc = mma->zeroAccumulators(b, loc);
  return mainLoop(b, smem, aStart, acc);
}

LogicalResult kgraph::emitMatmulKernel(FusedOp group, MatmulConfigAttr config,
                                       gpu::GPUFuncOp kernel,
                                       const SMTarget &target) {
  FailureOr<GemmGroup> gemm = getGemmGroup(group);
  if (failed(gemm))
    return group.emitOpError("is not a kgraph.matmul or kgraph.conv2d group");
  // cp.async moves 4, 8 or 16 raw bytes: not for operands a prologue
  // converts (those are staged through registers, see loadTile).
  auto async = [&](Type elem, bool prologue) {
    return target.hasCpAsync && !prologue &&
           config.getLoadWidth() * byteWidth(elem) >= 4;
  };
  MatmulKernelBuilder builder(
      group, *gemm, config, kernel,
      async(gemm->p.operandType, !gemm->parts.lhsPrologue.empty()),
      async(gemm->p.operandType, !gemm->parts.rhsPrologue.empty()));
  return builder.build();
}
