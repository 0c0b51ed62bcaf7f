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
// epilogue evaluates them per accumulator element in registers before the
// single store (ScalarOps.h: the accumulator rounded to the anchor's result
// type, every op computed in f32/i32 and rounded to its own type); their
// other inputs are read at the output element's coordinates. A matmul
// operand with a prologue (cast, scale) is staged synchronously through
// registers and converted on the way, since cp.async only copies bytes:
// its loads no longer overlap the previous stage's math.
//
//===----------------------------------------------------------------------===//

#include "MatmulKernelBuilder.h"
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
static bool isLinearGrid(const GemmProblem &p, MatmulConfigAttr config) {
  return config.getGroupM() > 1 ||
         llvm::divideCeilSigned(p.m, config.getTileM()) > kMaxGridY;
}

/// Dynamic shared memory of the kernel: `stages` A and B tiles.
static int64_t getSharedMemoryBytes(const GemmProblem &p,
                                    MatmulConfigAttr config) {
  int64_t pad = config.getSmemPadding();
  int64_t tm = config.getTileM(), tn = config.getTileN(), tk = config.getTileK();
  int64_t aElems = p.transA ? tk * (tm + pad) : tm * (tk + pad);
  int64_t bElems = p.transB ? tn * (tk + pad) : tk * (tn + pad);
  int64_t slack =
      config.getInstruction() == MmaKind::wgmma ? kWgmmaTileAlignment : 0;
  return config.getStages() *
             (aElems * byteWidth(p.aType) + bElems * byteWidth(p.bType)) +
         slack + getTmaBarrierBytes(config);
}

FailureOr<GemmLaunchShape> kgraph::getGemmLaunchShape(FusedOp group,
                                                      MatmulConfigAttr config) {
  FailureOr<GemmGroup> g = getGemmGroup(group);
  if (failed(g))
    return failure();
  const GemmProblem &p = g->p;
  GemmLaunchShape shape;
  shape.gridX = llvm::divideCeilSigned(p.n, config.getTileN());
  shape.gridY = llvm::divideCeilSigned(p.m, config.getTileM());
  shape.gridZ = p.batch;
  // Grouped rasterization (group_m > 1) numbers the blocks of one GEMM
  // along grid x; so does a grid past grid.y's limit of 65535 blocks (grid.x
  // allows 2^31 - 1). The kernel decodes the (M tile, N tile) pair.
  if (isLinearGrid(p, config)) {
    shape.gridX *= shape.gridY;
    shape.gridY = 1;
  }
  shape.sharedMemoryBytes = getSharedMemoryBytes(p, config);
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

LogicalResult kgraph::checkMatmulGroup(FusedOp group, MatmulConfigAttr config,
                                       const SMTarget *target) {
  // The contract's diagnostics first (analyzeGemmGroup).
  if (failed(analyzeGemmGroup(group)))
    return failure();
  FailureOr<GemmGroup> g = getGemmGroup(group);
  if (failed(g))
    // Only a conv2d whose groups do not divide its channels, which its
    // verifier rejects.
    return group.emitOpError("is not a kgraph.matmul or kgraph.conv2d group");
  Operation *op = g->op;
  const GemmProblem &p = g->p;
  std::string whyNot;
  if (!createWarpMma(p, config, &whyNot))
    return op->emitOpError(whyNot);
  if (config.getCopy() == CopyKind::tma) {
    // The conditions of kgraph-tile's check, for configurations written
    // after it.
    FailureOr<MatmulProblem> mp =
        llvm::isa<MatmulOp>(op) ? getMatmulProblem(llvm::cast<MatmulOp>(op))
                                : getConvProblem(llvm::cast<Conv2dOp>(op));
    if (failed(mp) || !target)
      return op->emitOpError("copy = tma needs a matmul and a target");
    mp->stagedInRegisters = !g->parts.lhsPrologue.empty() ||
                            !g->parts.rhsPrologue.empty();
    if (std::string why = getTmaConfigError(config, *mp, *target); !why.empty())
      return op->emitOpError(why);
  }
  if (!llvm::isa<FloatType>(p.cType) && p.cType != p.accType)
    return op->emitOpError("result type ") << p.cType << " is not supported";
  int64_t lw = config.getLoadWidth();
  auto checkOperand = [&](StringRef name, StringRef what, int64_t cols,
                          int64_t tileCols, Type elem) -> LogicalResult {
    if (cols % lw != 0)
      return op->emitOpError("load_width ")
             << lw << " does not divide the " << what << " (" << cols
             << ") of operand " << name;
    if (tileCols % lw != 0)
      return op->emitOpError("load_width ")
             << lw << " does not divide the tile's contiguous extent ("
             << tileCols << ") of operand " << name;
    int64_t bytes = lw * byteWidth(elem);
    if (bytes > 16)
      return op->emitOpError("load_width ")
             << lw << " moves " << bytes << " bytes per copy; at most 16";
    return success();
  };
  int64_t tm = config.getTileM(), tn = config.getTileN(), tk = config.getTileK();
  // The im2col gather of a conv2d is contiguous along the channels of one
  // (kh, kw) position in nhwc, and nowhere in nchw.
  int64_t aRun = p.aCols();
  StringRef aWhat = "contiguous dimension";
  if (g->conv) {
    aRun = g->conv->nhwc ? g->conv->channelsPerGroup() : 1;
    aWhat = g->conv->nhwc ? "channels per group" : "contiguous run of an nchw "
                                                   "gather";
  }
  if (failed(checkOperand("A", aWhat, aRun, p.transA ? tm : tk, p.aType)) ||
      failed(checkOperand("B", "contiguous dimension", p.bCols(),
                          p.transB ? tk : tn, p.bType)))
    return failure();
  int64_t tilesN = llvm::divideCeilSigned(p.n, tn),
          tilesM = llvm::divideCeilSigned(p.m, tm);
  if (p.batch > kMaxGridZ)
    return op->emitOpError("needs ")
           << p.batch << " GEMMs (batch or conv2d groups) in grid z; at most "
           << kMaxGridZ;
  if (isLinearGrid(p, config) && tilesN * tilesM > kMaxGridX)
    return op->emitOpError("needs ")
           << tilesN * tilesM << " blocks per GEMM; at most " << kMaxGridX;
  int64_t smem = getSharedMemoryBytes(p, config);
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
  for (Operation *op : gemm.parts.epilogue)
    for (Value operand : op->getOperands())
      if (llvm::isa<BlockArgument>(operand) && !flatInputs.count(operand))
        flatInputs[operand] = flatten(argOf(operand));

  // Shared memory: the A stages, then the B stages.
  int64_t tm = config.getTileM(), tn = config.getTileN(), tk = config.getTileK();
  int64_t pad = config.getSmemPadding(), stages = config.getStages();
  auto workgroup = gpu::AddressSpaceAttr::get(ctx, gpu::AddressSpace::Workgroup);
  SmallVector<int64_t> aShape = p.transA ? SmallVector<int64_t>{stages, tk, tm + pad}
                                         : SmallVector<int64_t>{stages, tm, tk + pad};
  SmallVector<int64_t> bShape = p.transB ? SmallVector<int64_t>{stages, tn, tk + pad}
                                         : SmallVector<int64_t>{stages, tk, tn + pad};
  // The instruction may want a layout of its own (wgmma: swizzled).
  if (SmallVector<int64_t> own = mma->tileShape(/*isA=*/true); !own.empty())
    aShape = own;
  if (SmallVector<int64_t> own = mma->tileShape(/*isA=*/false); !own.empty())
    bShape = own;
  auto aType = MemRefType::get(aShape, p.aType, AffineMap(), workgroup);
  auto bType = MemRefType::get(bShape, p.bType, AffineMap(), workgroup);
  Value smem = gpu::DynamicSharedMemoryOp::create(
      b, loc,
      MemRefType::get({ShapedType::kDynamic}, b.getI8Type(), AffineMap(),
                      workgroup));
  // Tiles start at the first `align`-byte boundary of the dynamic shared
  // memory (getSharedMemoryBytes counts the slack).
  Value aStart = im.c(0);
  if (int64_t align = mma->tileAlignment(); align > 0) {
    Value addr = memref::ExtractAlignedPointerAsIndexOp::create(b, loc, smem);
    aStart = im.rem(im.sub(im.c(align), im.rem(addr, align)), align);
  }
  int64_t aBytes = aType.getNumElements() * byteWidth(p.aType);
  aTile = memref::ViewOp::create(b, loc, aType, smem, aStart, ValueRange{});
  bTile = memref::ViewOp::create(b, loc, bType, smem, im.add(aStart, aBytes),
                                 ValueRange{});

  tid = gpu::ThreadIdOp::create(b, loc, gpu::Dimension::x);
  lane = im.rem(tid, 32);
  Value warp = im.div(tid, 32);
  std::tie(warpRow, warpCol) = mma->warpOrigin(im, warp, config);
  Value blockX = gpu::BlockIdOp::create(b, loc, gpu::Dimension::x);
  int64_t tilesN = llvm::divideCeilSigned(p.n, tn),
          tilesM = llvm::divideCeilSigned(p.m, tm);
  if (isLinearGrid(p, config)) {
    // Block b of the linear grid: bands of G = group_m M tiles, each walked
    // N tile by N tile with the G (or fewer, in the last band) M tiles of
    // one N tile consecutive.
    int64_t g = std::min(config.getGroupM(), tilesM);
    int64_t perBand = g * tilesN;
    Value band = im.div(blockX, perBand);
    Value inBand = im.rem(blockX, perBand);
    Value firstM = im.mul(band, g);
    Value rowsInBand;
    if (tilesM % g == 0)
      rowsInBand = im.c(g);
    else
      rowsInBand = im.minu(im.sub(im.c(tilesM), firstM), im.c(g));
    Value tileRow = im.add(firstM, arith::RemUIOp::create(b, loc, inBand,
                                                           rowsInBand));
    Value tileCol = arith::DivUIOp::create(b, loc, inBand, rowsInBand);
    rowBase = im.mul(tileRow, tm);
    colBase = im.mul(tileCol, tn);
  } else {
    colBase = im.mul(blockX, tn);
    rowBase = im.mul(gpu::BlockIdOp::create(b, loc, gpu::Dimension::y), tm);
  }
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
      async(gemm->p.aType, !gemm->parts.lhsPrologue.empty()),
      async(gemm->p.bType, !gemm->parts.rhsPrologue.empty()));
  return builder.build();
}
