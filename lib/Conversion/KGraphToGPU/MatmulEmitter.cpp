//===- MatmulEmitter.cpp - GEMM kernels from #kgraph.matmul_config --------===//
//
// The kernel is split the way the configuration is:
//   - the skeleton (this file's MatmulKernelBuilder): block and warp
//     indexing, shared-memory staging of operand tiles with an asynchronous
//     multi-stage pipeline over K, and the bounds-checked epilogue;
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

#include "MatmulKernel.h"
#include "ScalarOps.h"
#include "kgraph/Dialect/KGraph/Transforms/GemmGroup.h"
#include "kgraph/Dialect/KGraph/Transforms/MatmulTiling.h"
#include "kgraph/Target/SMTargets.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/NVGPU/IR/NVGPUDialect.h"
#include "mlir/Dialect/UB/IR/UBOps.h"
#include "mlir/IR/Builders.h"

using namespace mlir;
using namespace kgraph;
using namespace kgraph::detail;


namespace {

/// The geometry of a kgraph.conv2d seen as an implicit GEMM.
struct ConvGeometry {
  bool nhwc = true;
  int64_t batch = 0, channels = 0, height = 0, width = 0, filters = 0;
  int64_t kernelH = 0, kernelW = 0, outH = 0, outW = 0;
  int64_t strideH = 1, strideW = 1, padTop = 0, padLeft = 0;
  int64_t dilationH = 1, dilationW = 1, groups = 1;
  bool padded = false;

  int64_t channelsPerGroup() const { return channels / groups; }
  int64_t filtersPerGroup() const { return filters / groups; }
  /// The A gather is a plain [N*H*W][C] matrix.
  bool isPlainGemm() const {
    return nhwc && kernelH == 1 && kernelW == 1 && strideH == 1 &&
           strideW == 1 && !padded;
  }
};

/// What a GEMM kernel group computes: the GEMM, the group inputs of its
/// operands, its prologues and epilogue, and for a conv2d its geometry.
struct GemmGroup {
  Operation *op = nullptr;
  /// The group inputs A (matmul lhs / conv input) and B (matmul rhs / conv
  /// filter) are read from; a prologue converts them to the GEMM's operand
  /// types (p.aType, p.bType).
  BlockArgument lhs, rhs;
  GemmGroupParts parts;
  GemmProblem p;
  std::optional<ConvGeometry> conv;
};

} // namespace

static FailureOr<GemmGroup> getGemmGroup(FusedOp group) {
  FailureOr<GemmGroupParts> parts = analyzeGemmGroup(group, /*emitErrors=*/false);
  if (failed(parts))
    return failure();
  Operation *op = parts->anchor;
  GemmGroup g;
  g.op = op;
  g.parts = *parts;
  g.lhs = parts->lhsSource;
  g.rhs = parts->rhsSource;
  if (auto matmul = llvm::dyn_cast<MatmulOp>(op)) {
    g.p = *getProblem(matmul);
    return g;
  }
  auto conv = llvm::dyn_cast<Conv2dOp>(op);
  if (!conv)
    return failure();
  auto in = llvm::cast<RankedTensorType>(conv.getInput().getType());
  auto fil = llvm::cast<RankedTensorType>(conv.getFilter().getType());
  auto out = llvm::cast<RankedTensorType>(conv.getResult().getType());
  ConvGeometry c;
  c.nhwc = conv.getLayout() == Layout::nhwc;
  ArrayRef<int64_t> is = in.getShape(), fs = fil.getShape(),
                    os = out.getShape();
  c.batch = is[0];
  c.channels = c.nhwc ? is[3] : is[1];
  c.height = c.nhwc ? is[1] : is[2];
  c.width = c.nhwc ? is[2] : is[3];
  c.filters = fs[0];
  c.kernelH = c.nhwc ? fs[1] : fs[2];
  c.kernelW = c.nhwc ? fs[2] : fs[3];
  c.outH = c.nhwc ? os[1] : os[2];
  c.outW = c.nhwc ? os[2] : os[3];
  c.strideH = conv.getStrides()[0];
  c.strideW = conv.getStrides()[1];
  ArrayRef<int64_t> pad = conv.getPadding();
  c.padTop = pad[0];
  c.padLeft = pad[2];
  c.padded = llvm::any_of(pad, [](int64_t v) { return v != 0; });
  c.dilationH = conv.getDilations()[0];
  c.dilationW = conv.getDilations()[1];
  c.groups = conv.getGroups();
  if (c.groups <= 0 || c.channels % c.groups || c.filters % c.groups)
    return failure();

  GemmProblem &p = g.p;
  p.batch = c.groups;
  p.m = c.batch * c.outH * c.outW;
  p.n = c.filtersPerGroup();
  p.k = c.kernelH * c.kernelW * c.channelsPerGroup();
  p.transA = false; // A rows are output pixels, K along (kh, kw, c)/(c, kh, kw)
  p.transB = true;  // filter rows are output channels, contiguous over K
  p.aType = in.getElementType();
  p.bType = fil.getElementType();
  p.cType = out.getElementType();
  p.accType = llvm::isa<FloatType>(p.cType)
                  ? Type(Float32Type::get(op->getContext()))
                  : Type(IntegerType::get(op->getContext(), 32));
  g.conv = c;
  return g;
}

/// CUDA's limits on grid.y and grid.z (grid.x allows 2^31 - 1).
static constexpr int64_t kMaxGridY = 65535, kMaxGridZ = 65535;
static constexpr int64_t kMaxGridX = (int64_t(1) << 31) - 1;

static int64_t ceilDiv(int64_t a, int64_t b) { return (a + b - 1) / b; }

/// Whether the blocks of one GEMM are numbered along grid x only (see
/// getGemmLaunchShape).
static bool isLinearGrid(const GemmProblem &p, MatmulConfigAttr config) {
  return config.getGroupM() > 1 ||
         ceilDiv(p.m, config.getTileM()) > kMaxGridY;
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
  shape.gridX = ceilDiv(p.n, config.getTileN());
  shape.gridY = ceilDiv(p.m, config.getTileM());
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
  int64_t tilesN = ceilDiv(p.n, tn), tilesM = ceilDiv(p.m, tm);
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

namespace {

/// Where the elements of one GEMM operand, in the orientation the kernel
/// stores its tiles ([row][contiguous column], see the file header), live in
/// global memory.
class OperandAccess {
public:
  virtual ~OperandAccess() = default;
  /// The run of `width` elements (row, col .. col + width - 1) of GEMM batch
  /// `batch`: the flat index of its first element, and how many of them
  /// exist (the rest read as zero), or a null count when every element of
  /// every run of the kernel exists.
  virtual std::pair<Value, Value> locate(IndexMath &m, Value batch, Value row,
                                         Value col, int64_t width) const = 0;
};

/// A row-major matrix per batch: element (b, r, c) at
/// b * batchStride + r * rowStride + c, `rows` x `cols` of them.
/// `checkRows`/`checkCols`: the tiles may reach past that extent.
class MatrixAccess : public OperandAccess {
public:
  MatrixAccess(int64_t rows, int64_t cols, int64_t rowStride,
               int64_t batchStride, bool checkRows, bool checkCols)
      : rows(rows), cols(cols), rowStride(rowStride), batchStride(batchStride),
        checkRows(checkRows), checkCols(checkCols) {}

  std::pair<Value, Value> locate(IndexMath &m, Value batch, Value row,
                                 Value col, int64_t width) const override {
    Value batchOffset = m.mul(batch, batchStride);
    Value at = m.add(m.mul(row, rowStride), col);
    if (!checkRows && !checkCols)
      return {m.add(batchOffset, at), Value()};
    // 0 past the last row, min(width, cols - col) otherwise.
    Value inside;
    if (checkRows)
      inside = m.ult(row, m.c(rows));
    if (checkCols) {
      Value colIn = m.ult(col, m.c(cols));
      inside = inside ? arith::AndIOp::create(m.b, m.loc, inside, colIn)
                            .getResult()
                      : colIn;
    }
    Value avail;
    if (checkCols) {
      Value colsValue = m.c(cols);
      Value left = m.sub(colsValue, m.minu(col, m.c(cols)));
      avail = m.minu(left, m.c(width));
    } else {
      avail = m.c(width);
    }
    Value offset = m.add(batchOffset, m.select(inside, at, m.c(0)));
    return {offset, m.select(inside, avail, m.c(0))};
  }

private:
  int64_t rows, cols, rowStride, batchStride;
  bool checkRows, checkCols;
};

/// The im2col matrix of a conv2d input, gathered on the fly: row m is the
/// output pixel (n, oh, ow), column k the filter tap (kh, kw, c) for nhwc or
/// (c, kh, kw) for nchw, and batch g the channel group. Element (g, m, k) is
/// input[n][ih][iw][g * C/g + c] (nhwc; nchw alike) with
/// ih = oh * stride_h - pad_top + kh * dilation_h (iw alike), zero outside
/// the image. A run of `width` elements stays in one (kh, kw) position:
/// checkMatmulGroup makes `width` divide C/g (nhwc) or be 1 (nchw).
class Im2colAccess : public OperandAccess {
public:
  Im2colAccess(const ConvGeometry &g, int64_t m, int64_t k, bool checkRows,
               bool checkCols)
      : g(g), m(m), k(k), checkRows(checkRows), checkCols(checkCols) {}

  std::pair<Value, Value> locate(IndexMath &im, Value batch, Value row,
                                 Value col, int64_t width) const override {
    int64_t pixels = g.outH * g.outW, cg = g.channelsPerGroup();
    Value image = im.div(row, pixels);
    Value pixel = im.rem(row, pixels);
    Value oh = im.div(pixel, g.outW), ow = im.rem(pixel, g.outW);
    Value kh, kw, c;
    if (g.nhwc) {
      kh = im.div(col, g.kernelW * cg);
      kw = im.rem(im.div(col, cg), g.kernelW);
      c = im.rem(col, cg);
    } else {
      c = im.div(col, g.kernelH * g.kernelW);
      kh = im.rem(im.div(col, g.kernelW), g.kernelH);
      kw = im.rem(col, g.kernelW);
    }
    // Coordinates in the padded image; unsigned arithmetic: below the
    // padding they wrap around and fail the `< H` test.
    Value ohScaled = im.mul(oh, g.strideH);
    Value ih = im.add(ohScaled, im.mul(kh, g.dilationH));
    Value owScaled = im.mul(ow, g.strideW);
    Value iw = im.add(owScaled, im.mul(kw, g.dilationW));
    Value inside;
    auto both = [&](Value cond) {
      inside = inside ? arith::AndIOp::create(im.b, im.loc, inside, cond)
                            .getResult()
                      : cond;
    };
    if (checkRows)
      both(im.ult(row, im.c(m)));
    if (checkCols)
      both(im.ult(col, im.c(k)));
    if (g.padded) {
      ih = im.sub(ih, im.c(g.padTop));
      iw = im.sub(iw, im.c(g.padLeft));
      both(im.ult(ih, im.c(g.height)));
      both(im.ult(iw, im.c(g.width)));
    }
    Value channel = im.add(im.mul(batch, cg), c);
    Value at;
    if (g.nhwc)
      at = im.add(im.mul(im.add(im.mul(im.add(im.mul(image, g.height), ih),
                                       g.width),
                                iw),
                         g.channels),
                  channel);
    else
      at = im.add(im.mul(im.add(im.mul(im.add(im.mul(image, g.channels),
                                              channel),
                                       g.height),
                                ih),
                         g.width),
                  iw);
    if (!inside)
      return {at, Value()};
    Value offset = im.select(inside, at, im.c(0));
    Value widthValue = im.c(width);
    return {offset, im.select(inside, widthValue, im.c(0))};
  }

private:
  ConvGeometry g;
  int64_t m, k;
  bool checkRows, checkCols;
};

/// Where GEMM result element (batch, row, col) goes: at
///   batch * batchStride + rowOffset(row) + col * colStride,
/// rowOffset(row) = row * rowStride, or for rows grouped in images of
/// `rowsPerImage` (nchw conv2d: a row is a pixel of an image)
///   (row / rowsPerImage) * imageStride + (row % rowsPerImage) * rowStride.
struct ResultAccess {
  int64_t rows = 0, cols = 0; // the GEMM M and N
  int64_t rowStride = 0, colStride = 1, batchStride = 0;
  int64_t rowsPerImage = 0, imageStride = 0;

  Value locate(IndexMath &m, Value batch, Value row, Value col) const {
    Value rowOffset;
    if (rowsPerImage == 0) {
      rowOffset = m.mul(row, rowStride);
    } else {
      Value imageOffset = m.mul(m.div(row, rowsPerImage), imageStride);
      rowOffset =
          m.add(imageOffset, m.mul(m.rem(row, rowsPerImage), rowStride));
    }
    Value rowStart = m.add(m.mul(batch, batchStride), rowOffset);
    return m.add(rowStart, m.mul(col, colStride));
  }
  /// Runs of `width` columns starting at a multiple of `width` are
  /// contiguous and aligned to `width` elements.
  bool hasAlignedRuns(int64_t width) const {
    return colStride == 1 && rowStride % width == 0 &&
           batchStride % width == 0 &&
           (rowsPerImage == 0 || imageStride % width == 0);
  }
};

} // namespace

namespace {

/// The kernel skeleton.
class MatmulKernelBuilder {
public:
  /// `asyncA`/`asyncB`: the operand's tiles are copied with cp.async.
  MatmulKernelBuilder(FusedOp group, const GemmGroup &gemm,
                      MatmulConfigAttr config, gpu::GPUFuncOp kernel,
                      bool asyncA, bool asyncB)
      : group(group), gemm(gemm), config(config), kernel(kernel),
        asyncA(asyncA), asyncB(asyncB), asyncCopies(asyncA || asyncB),
        p(gemm.p), loc(group.getLoc()) {}

  LogicalResult build();

private:
  /// Global-memory addressing of A, B and C for this group's op.
  void setUpAddressing();
  /// Copies one operand tile (stage `stage`, k tile `kTile`) to shared
  /// memory.
  void loadTile(OpBuilder &b, bool isA, Value stage, Value kTile);
  void loadTiles(OpBuilder &b, Value stage, Value kTile) {
    loadTile(b, /*isA=*/true, stage, kTile);
    loadTile(b, /*isA=*/false, stage, kTile);
  }
  void commit(OpBuilder &b);
  void wait(OpBuilder &b, int64_t pending);
  /// Applies the prologue `ops` of an operand to one element `loaded` (in
  /// storage type) of its group input `source`; returns it in the GEMM
  /// operand type `elem`.
  Value applyPrologue(OpBuilder &b, ArrayRef<Operation *> ops, Value source,
                      Value loaded, Type elem);
  SmallVector<Value> compute(OpBuilder &b, Value stage, ArrayRef<Value> acc);
  LogicalResult epilogue(OpBuilder &b, ArrayRef<Value> acc);
  /// The `lanes.size()` consecutive-column elements of `v` (the anchor
  /// result or an epilogue value or input) at GEMM element (row, col ..), in
  /// compute type; `acc` holds the accumulators of those elements, `ok` (if
  /// non-empty) which of them exist.
  struct EpilogueRow {
    Value row, col;
    SmallVector<Value> acc, ok;
    bool checked;
    DenseMap<Value, SmallVector<Value>> memo;
  };
  FailureOr<SmallVector<Value>> evaluateEpilogue(OpBuilder &b, Value v,
                                                 EpilogueRow &at);
  /// Loads the elements of group input `arg` (broadcast to the result
  /// shape) that the epilogue row `at` needs.
  SmallVector<Value> loadEpilogueInput(OpBuilder &b, BlockArgument arg,
                                       EpilogueRow &at);

  FusedOp group;
  GemmGroup gemm;
  MatmulConfigAttr config;
  gpu::GPUFuncOp kernel;
  bool asyncA, asyncB, asyncCopies;
  GemmProblem p;
  Location loc;
  std::unique_ptr<WarpMma> mma;
  std::unique_ptr<OperandAccess> aAccess, bAccess;
  ResultAccess cAccess;

  Value flatA, flatB, flatC;
  /// Flat views of the group inputs the epilogue reads.
  DenseMap<Value, Value> flatInputs;
  Value aTile, bTile; // shared-memory views [stage][row][col]
  Value tid, lane, warpRow, warpCol, rowBase, colBase, batch;
};

} // namespace

void MatmulKernelBuilder::setUpAddressing() {
  int64_t tm = config.getTileM(), tn = config.getTileN(), tk = config.getTileK();
  // Stored rows x cols of each operand's tiles (see the file header).
  int64_t aTileRows = p.transA ? tk : tm, aTileCols = p.transA ? tm : tk;
  int64_t bTileRows = p.transB ? tn : tk, bTileCols = p.transB ? tk : tn;
  bAccess = std::make_unique<MatrixAccess>(
      p.bRows(), p.bCols(), p.bCols(), p.bRows() * p.bCols(),
      p.bRows() % bTileRows != 0, p.bCols() % bTileCols != 0);
  if (!gemm.conv) {
    aAccess = std::make_unique<MatrixAccess>(
        p.aRows(), p.aCols(), p.aCols(), p.aRows() * p.aCols(),
        p.aRows() % aTileRows != 0, p.aCols() % aTileCols != 0);
    cAccess.rowStride = p.n;
    cAccess.batchStride = p.m * p.n;
  } else {
    const ConvGeometry &g = *gemm.conv;
    bool checkRows = p.m % tm != 0, checkCols = p.k % tk != 0;
    if (g.isPlainGemm())
      // Group g's A: the input as [N*H*W][C], columns g*C/g .. (g+1)*C/g.
      aAccess = std::make_unique<MatrixAccess>(p.m, p.k, g.channels,
                                               g.channelsPerGroup(), checkRows,
                                               checkCols);
    else
      aAccess = std::make_unique<Im2colAccess>(g, p.m, p.k, checkRows,
                                               checkCols);
    if (g.nhwc) {
      // [N][OH][OW][F]: row m = (n, oh, ow) at m * F, group g's channels
      // from g * F/g on.
      cAccess.rowStride = g.filters;
      cAccess.batchStride = g.filtersPerGroup();
    } else {
      // [N][F][OH][OW]: a row is a pixel of image m / (OH*OW); channels
      // are OH*OW apart.
      int64_t pixels = g.outH * g.outW;
      cAccess.rowsPerImage = pixels;
      cAccess.imageStride = g.filters * pixels;
      cAccess.rowStride = 1;
      cAccess.colStride = pixels;
      cAccess.batchStride = g.filtersPerGroup() * pixels;
    }
  }
  cAccess.rows = p.m;
  cAccess.cols = p.n;
}

void MatmulKernelBuilder::loadTile(OpBuilder &b, bool isA, Value stage,
                                   Value kTile) {
  IndexMath im{b, loc};
  int64_t tm = config.getTileM(), tn = config.getTileN(), tk = config.getTileK();
  int64_t lw = config.getLoadWidth();
  bool trans = isA ? p.transA : p.transB;
  Type elem = isA ? p.aType : p.bType;
  // Stored tile rows x cols and the tile's origin in the stored operand.
  int64_t rows, cols;
  Value originRow, originCol;
  Value kBase = im.mul(kTile, tk);
  if (isA) {
    rows = trans ? tk : tm;
    cols = trans ? tm : tk;
    originRow = trans ? kBase : rowBase;
    originCol = trans ? rowBase : kBase;
  } else {
    rows = trans ? tn : tk;
    cols = trans ? tk : tn;
    originRow = trans ? colBase : kBase;
    originCol = trans ? kBase : colBase;
  }
  Value flat = isA ? flatA : flatB;
  Value tile = isA ? aTile : bTile;
  const OperandAccess &access = isA ? *aAccess : *bAccess;
  int64_t chunksPerRow = cols / lw;
  int64_t chunks = rows * chunksPerRow;
  int64_t threads = config.getNumThreads();
  bool bypassL1 = lw * byteWidth(elem) == 16;
  ArrayRef<Operation *> prologue =
      isA ? gemm.parts.lhsPrologue : gemm.parts.rhsPrologue;
  bool async = isA ? asyncA : asyncB;
  Type sourceType = llvm::cast<MemRefType>(flat.getType()).getElementType();

  for (int64_t first = 0; first < chunks; first += threads) {
    Value chunk = im.add(tid, first);
    auto emitChunk = [&](OpBuilder &nb) {
      IndexMath m{nb, loc};
      Value r = m.div(chunk, chunksPerRow);
      Value cc = m.mul(m.rem(chunk, chunksPerRow), lw);
      // `valid` elements of the chunk exist (null: all); the rest are
      // zero-filled.
      Value row = m.add(originRow, r);
      Value col = m.add(originCol, cc);
      auto [src, valid] = access.locate(m, batch, row, col, lw);
      if (async) {
        nvgpu::DeviceAsyncCopyOp::create(
            nb, loc, nvgpu::DeviceAsyncTokenType::get(nb.getContext()), tile,
            mma->tileIndices(m, isA, stage, r, cc), flat, ValueRange{src},
            nb.getIndexAttr(lw), valid,
            bypassL1 ? nb.getUnitAttr() : UnitAttr());
        return;
      }
      Value zero = arith::ConstantOp::create(nb, loc, nb.getZeroAttr(elem));
      if (!prologue.empty()) {
        // Synchronous copy through the prologue: the input's elements are
        // not the bytes the mma reads, so cp.async cannot move them. A run
        // that exists whole is one vector load (aligned: runs start at
        // multiples of lw); missing elements are zero in the mma type.
        SmallVector<Value> loaded;
        if (!valid && lw > 1) {
          Value vec = vector::LoadOp::create(
              nb, loc, VectorType::get({lw}, sourceType), flat, src,
              /*nontemporal=*/false,
              llvm::MaybeAlign(lw * byteWidth(sourceType)));
          for (int64_t e = 0; e < lw; ++e)
            loaded.push_back(vector::ExtractOp::create(nb, loc, vec, e));
        }
        for (int64_t e = 0; e < lw; ++e) {
          Value ok;
          if (loaded.size() < size_t(lw)) {
            Value at = m.add(src, e);
            if (valid) {
              ok = m.ult(m.c(e), valid);
              at = m.select(ok, at, m.c(0));
            }
            loaded.push_back(memref::LoadOp::create(nb, loc, flat, at));
          } else if (valid) {
            ok = m.ult(m.c(e), valid);
          }
          Value v = applyPrologue(nb, prologue, isA ? gemm.lhs : gemm.rhs,
                                  loaded[e], elem);
          if (ok)
            v = arith::SelectOp::create(nb, loc, ok, v, zero);
          memref::StoreOp::create(
              nb, loc, v, tile,
              mma->tileIndices(m, isA, stage, r, m.add(cc, e)));
        }
        return;
      }
      // Synchronous copy, element by element, zero where missing.
      for (int64_t e = 0; e < lw; ++e) {
        Value at = m.add(src, e);
        Value v;
        if (valid) {
          Value ok = m.ult(m.c(e), valid);
          at = m.select(ok, at, m.c(0));
          v = memref::LoadOp::create(nb, loc, flat, at);
          v = arith::SelectOp::create(nb, loc, ok, v, zero);
        } else {
          v = memref::LoadOp::create(nb, loc, flat, at);
        }
        memref::StoreOp::create(nb, loc, v, tile,
                                mma->tileIndices(m, isA, stage, r,
                                                 m.add(cc, e)));
      }
    };
    if (first + threads <= chunks) {
      emitChunk(b);
    } else {
      auto guard = scf::IfOp::create(b, loc, im.ult(chunk, im.c(chunks)),
                                     /*withElseRegion=*/false);
      OpBuilder nb = guard.getThenBodyBuilder();
      emitChunk(nb);
    }
  }
}

void MatmulKernelBuilder::commit(OpBuilder &b) {
  if (!asyncCopies)
    return;
  // cp.async.commit_group commits every copy issued so far; the nvvm op
  // needs no tokens, unlike nvgpu's, whose copies may sit in nested regions.
  NVVM::CpAsyncCommitGroupOp::create(b, loc);
}

void MatmulKernelBuilder::wait(OpBuilder &b, int64_t pending) {
  if (!asyncCopies)
    return;
  NVVM::CpAsyncWaitGroupOp::create(b, loc, pending);
}

SmallVector<Value> MatmulKernelBuilder::compute(OpBuilder &b, Value stage,
                                                ArrayRef<Value> acc) {
  SmallVector<Value> values(acc);
  int64_t instrK = config.getInstructionShape()[2];
  mma->beginTile(b, loc);
  for (int64_t kk = 0; kk < config.getTileK(); kk += instrK)
    values = mma->step(b, loc, aTile, bTile, stage, warpRow, warpCol, lane, kk,
                       values);
  mma->endTile(b, loc);
  return values;
}

Value MatmulKernelBuilder::applyPrologue(OpBuilder &b,
                                         ArrayRef<Operation *> ops,
                                         Value source, Value loaded,
                                         Type elem) {
  // Exactly the elementwise ops one at a time: compute type, rounded to each
  // op's result type (analyzeGemmGroup admits casts and muls by a splat).
  // `chain` is the group value `v` holds an element of.
  Value chain = source;
  Value v = toComputeType(
      b, loc, loaded, llvm::cast<ShapedType>(source.getType()).getElementType());
  for (Operation *op : ops) {
    SmallVector<Value> x;
    for (Value operand : op->getOperands()) {
      if (auto cst = operand.getDefiningOp<arith::ConstantOp>();
          cst && operand != chain)
        x.push_back(*emitSplatConstant(b, loc, cst));
      else
        x.push_back(v);
    }
    Type resultType =
        llvm::cast<ShapedType>(op->getResult(0).getType()).getElementType();
    v = roundToType(b, loc, *emitScalarOp(b, loc, op, x), resultType);
    chain = op->getResult(0);
  }
  return toStorageType(b, loc, v, elem);
}

namespace {
/// Result dimensions [first, first + count) whose row-major linear index
/// (over those dimensions) is `linear`.
struct CoordGroup {
  int64_t first, count;
  Value linear;
};
} // namespace

SmallVector<Value> MatmulKernelBuilder::loadEpilogueInput(OpBuilder &b,
                                                          BlockArgument arg,
                                                          EpilogueRow &at) {
  IndexMath m{b, loc};
  auto outType = llvm::cast<ShapedType>(gemm.op->getResult(0).getType());
  ArrayRef<int64_t> out = outType.getShape();
  auto argType = llvm::cast<ShapedType>(arg.getType());
  int64_t rank = out.size();
  // The input's shape right-aligned against the result, and its strides.
  SmallVector<int64_t> in(rank - argType.getRank(), 1);
  llvm::append_range(in, argType.getShape());
  SmallVector<int64_t> strides(rank, 1);
  for (int64_t d = rank - 2; d >= 0; --d)
    strides[d] = strides[d + 1] * in[d + 1];

  // The result coordinates of GEMM element (batch, row, col): a matmul's
  // are (batch?, row, col); a conv2d's row is the pixel (n, oh, ow) and its
  // channel is batch * F/groups + col.
  SmallVector<CoordGroup> rowGroups, colGroups;
  auto colGroupsAt = [&](Value col) {
    SmallVector<CoordGroup> groups;
    if (!gemm.conv) {
      groups.push_back({rank - 1, 1, col});
      return groups;
    }
    Value channel = p.batch == 1
                        ? col
                        : m.add(m.mul(batch, gemm.conv->filtersPerGroup()), col);
    groups.push_back({gemm.conv->nhwc ? 3 : 1, 1, channel});
    return groups;
  };
  if (!gemm.conv) {
    if (rank == 3)
      rowGroups.push_back({0, 1, batch});
    rowGroups.push_back({rank - 2, 1, at.row});
  } else if (gemm.conv->nhwc) {
    rowGroups.push_back({0, 3, at.row});
  } else {
    int64_t pixels = gemm.conv->outH * gemm.conv->outW;
    rowGroups.push_back({0, 1, m.div(at.row, pixels)});
    rowGroups.push_back({2, 2, m.rem(at.row, pixels)});
  }
  // The offset of a coordinate group in the input: nothing where the input
  // is broadcast along all of it, the linear index times the innermost
  // stride where it matches the result along all of it, else per dimension.
  auto offset = [&](const CoordGroup &g) -> Value {
    bool broadcast = true, matches = true;
    for (int64_t d = g.first; d < g.first + g.count; ++d) {
      broadcast &= in[d] == 1;
      matches &= in[d] == out[d];
    }
    if (broadcast)
      return Value();
    if (matches)
      return m.mul(g.linear, strides[g.first + g.count - 1]);
    Value sum;
    int64_t inner = 1;
    for (int64_t d = g.first + g.count - 1; d >= g.first; --d) {
      if (in[d] != 1) {
        Value coord = m.div(g.linear, inner);
        if (d != g.first)
          coord = m.rem(coord, out[d]);
        coord = m.mul(coord, strides[d]);
        sum = sum ? m.add(sum, coord) : coord;
      }
      inner *= out[d];
    }
    return sum;
  };
  auto sumOffsets = [&](ArrayRef<CoordGroup> groups, Value init) {
    Value sum = init;
    for (const CoordGroup &g : groups)
      if (Value o = offset(g))
        sum = sum ? m.add(sum, o) : o;
    return sum;
  };
  Value rowOffset = sumOffsets(rowGroups, Value());
  auto indexAt = [&](int64_t e) {
    Value idx = sumOffsets(colGroupsAt(e == 0 ? at.col : m.add(at.col, e)),
                           rowOffset);
    return idx ? idx : m.c(0);
  };

  Value flat = flatInputs.lookup(arg);
  Type storage = llvm::cast<MemRefType>(flat.getType()).getElementType();
  int64_t lanes = at.acc.size();
  int64_t channelDim = gemm.conv ? (gemm.conv->nhwc ? 3 : 1) : rank - 1;
  bool colBroadcast = in[channelDim] == 1;
  SmallVector<Value> loaded;
  auto clamp = [&](Value idx, int64_t e) {
    // Missing elements read element 0: they are computed but not stored.
    return at.checked ? m.select(at.ok[e], idx, m.c(0)) : idx;
  };
  if (colBroadcast) {
    // One element for the whole run (missing elements come last).
    loaded.assign(lanes, memref::LoadOp::create(b, loc, flat,
                                                clamp(indexAt(0), 0))
                             .getResult());
  } else if (!at.checked && lanes > 1 && channelDim == rank - 1 &&
             in[channelDim] % lanes == 0 &&
             (!gemm.conv || gemm.conv->filtersPerGroup() % lanes == 0)) {
    // Consecutive columns are consecutive elements: one aligned vector load
    // (runs start at multiples of `lanes`, see ResultAccess).
    Value vec = vector::LoadOp::create(
        b, loc, VectorType::get({lanes}, storage), flat, indexAt(0),
        /*nontemporal=*/false, llvm::MaybeAlign(lanes * byteWidth(storage)));
    for (int64_t e = 0; e < lanes; ++e)
      loaded.push_back(vector::ExtractOp::create(b, loc, vec, e));
  } else {
    for (int64_t e = 0; e < lanes; ++e)
      loaded.push_back(
          memref::LoadOp::create(b, loc, flat, clamp(indexAt(e), e)));
  }
  for (Value &v : loaded)
    v = toComputeType(b, loc, v, argType.getElementType());
  return loaded;
}

FailureOr<SmallVector<Value>>
MatmulKernelBuilder::evaluateEpilogue(OpBuilder &b, Value v, EpilogueRow &at) {
  if (auto it = at.memo.find(v); it != at.memo.end())
    return it->second;
  SmallVector<Value> lanes;
  if (v == gemm.op->getResult(0)) {
    // The anchor's result as the op alone computes it: the accumulator
    // rounded to the result element type.
    for (Value acc : at.acc)
      lanes.push_back(roundToType(b, loc, acc, p.cType));
  } else if (auto arg = llvm::dyn_cast<BlockArgument>(v)) {
    lanes = loadEpilogueInput(b, arg, at);
  } else if (auto cst = v.getDefiningOp<arith::ConstantOp>()) {
    FailureOr<Value> scalar = emitSplatConstant(b, loc, cst);
    if (failed(scalar))
      return failure();
    lanes.assign(at.acc.size(), *scalar);
  } else {
    Operation *op = v.getDefiningOp();
    SmallVector<SmallVector<Value>> operands;
    for (Value operand : op->getOperands()) {
      FailureOr<SmallVector<Value>> l = evaluateEpilogue(b, operand, at);
      if (failed(l))
        return failure();
      operands.push_back(*l);
    }
    FailureOr<SmallVector<Value>> r =
        emitScalarOpLanes(b, loc, op, operands, at.acc.size());
    if (failed(r))
      return failure();
    lanes = std::move(*r);
  }
  at.memo[v] = lanes;
  return lanes;
}

LogicalResult MatmulKernelBuilder::epilogue(OpBuilder &b, ArrayRef<Value> acc) {
  IndexMath im{b, loc};
  // Whole block tile inside C: stores need no bounds checks (always so when
  // the tiles divide C).
  Value full;
  if (p.m % config.getTileM() == 0 && p.n % config.getTileN() == 0) {
    full = arith::ConstantIntOp::create(b, loc, b.getI1Type(), 1);
  } else {
    Value lastRow = im.add(rowBase, config.getTileM() - 1);
    Value rowsInside = im.ult(lastRow, im.c(p.m));
    Value lastCol = im.add(colBase, config.getTileN() - 1);
    Value colsInside = im.ult(lastCol, im.c(p.n));
    full = arith::AndIOp::create(b, loc, rowsInside, colsInside);
  }
  auto ifOp = scf::IfOp::create(b, loc, full, /*withElseRegion=*/true);
  // The stored value: the anchor result, or the epilogue's, evaluated per
  // accumulator element in registers (ScalarOps.h) before the one store.
  Value result = gemm.parts.result;
  bool plain = result == gemm.op->getResult(0);
  Type outType = getStorageElementType(
      llvm::cast<ShapedType>(result.getType()).getElementType());
  unsigned cBytes = byteWidth(outType);
  for (bool checked : {false, true}) {
    OpBuilder nb = checked ? ifOp.getElseBodyBuilder() : ifOp.getThenBodyBuilder();
    IndexMath m{nb, loc};
    for (int64_t i = 0; i < int64_t(acc.size()); ++i) {
      auto accType = llvm::cast<VectorType>(acc[i].getType());
      int64_t rowsPer = accType.getDimSize(0), cols = accType.getDimSize(1);
      for (int64_t h = 0; h < rowsPer; ++h) {
        // Elements (h, 0 .. cols) are consecutive columns of one row.
        auto [r, c] = mma->elementCoords(m, lane, i, h, 0);
        Value row = m.add(m.add(rowBase, warpRow), r);
        Value col = m.add(m.add(colBase, warpCol), c);
        Value base = cAccess.locate(m, batch, row, col);
        EpilogueRow at;
        at.row = row;
        at.col = col;
        at.checked = checked;
        for (int64_t e = 0; e < cols; ++e) {
          at.acc.push_back(vector::ExtractOp::create(nb, loc, acc[i],
                                                     ArrayRef<int64_t>{h, e}));
          if (checked) {
            Value rowInside = m.ult(row, m.c(p.m));
            Value colE = m.add(col, e);
            Value colInside = m.ult(colE, m.c(p.n));
            at.ok.push_back(
                arith::AndIOp::create(nb, loc, rowInside, colInside));
          }
        }
        SmallVector<Value> vals;
        if (plain) {
          for (Value v : at.acc) {
            if (v.getType() != p.cType)
              v = llvm::isa<FloatType>(p.cType)
                      ? Value(arith::TruncFOp::create(nb, loc, p.cType, v))
                      : Value(arith::TruncIOp::create(nb, loc, p.cType, v));
            vals.push_back(v);
          }
        } else {
          FailureOr<SmallVector<Value>> lanes =
              evaluateEpilogue(nb, result, at);
          if (failed(lanes))
            return failure();
          Type resultType =
              llvm::cast<ShapedType>(result.getType()).getElementType();
          for (Value v : *lanes)
            vals.push_back(toStorageType(nb, loc, v, resultType));
        }
        if (!checked && cols > 1 && cAccess.hasAlignedRuns(cols)) {
          auto vt = VectorType::get({cols}, outType);
          Value vec = vector::FromElementsOp::create(nb, loc, vt, vals);
          vector::StoreOp::create(nb, loc, vec, flatC, base, false,
                                  llvm::MaybeAlign(cols * cBytes));
          continue;
        }
        for (int64_t e = 0; e < cols; ++e) {
          Value idx = m.add(base, e * cAccess.colStride);
          if (!checked) {
            memref::StoreOp::create(nb, loc, vals[e], flatC, idx);
            continue;
          }
          auto guard = scf::IfOp::create(nb, loc, at.ok[e], false);
          OpBuilder gb = guard.getThenBodyBuilder();
          memref::StoreOp::create(gb, loc, vals[e], flatC, idx);
        }
      }
    }
  }
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
    Value alignValue = im.c(align);
    aStart = im.rem(im.sub(alignValue, im.rem(addr, align)), align);
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
  int64_t tilesN = ceilDiv(p.n, tn), tilesM = ceilDiv(p.m, tm);
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
  batch = gpu::BlockIdOp::create(b, loc, gpu::Dimension::z);

  int64_t kTiles = (p.k + tk - 1) / tk;
  SmallVector<Value> acc = mma->zeroAccumulators(b, loc);

  if (config.getCopy() == CopyKind::tma) {
    // Warp-specialized TMA pipeline (TmaPipeline.cpp); the mbarriers follow
    // the B stages. The tensor maps are the last kernel argument.
    int64_t bBytes = bType.getNumElements() * byteWidth(p.bType);
    Value smemBase =
        memref::ExtractAlignedPointerAsIndexOp::create(b, loc, smem);
    TmaLoopInputs in(p, config, *mma);
    in.tensorMaps = entry.getArguments().back();
    in.barriers = im.add(im.add(smemBase, aStart), aBytes + bBytes);
    in.aTile = aTile;
    in.bTile = bTile;
    in.tid = tid;
    in.rowBase = rowBase;
    in.colBase = colBase;
    in.batch = batch;
    in.acc = acc;
    // setmaxnreg moves registers from the producer to the consumers; it
    // needs a register cap at entry: maxntid with one block per SM.
    in.setMaxRegisters = true;
    kernel->setAttr("nvvm.maxntid",
                    DenseI32ArrayAttr::get(
                        ctx, {int32_t(config.getBlockThreads()), 1, 1}));
    kernel->setAttr("nvvm.minctasm", b.getI32IntegerAttr(1));
    in.compute = [&](OpBuilder &cb, Value stage, ArrayRef<Value> a) {
      return compute(cb, stage, a);
    };
    in.epilogue = [&](OpBuilder &eb, ArrayRef<Value> a) {
      return epilogue(eb, mma->finish(eb, loc, a));
    };
    if (failed(emitTmaMainLoop(b, loc, in)))
      return failure();
    gpu::ReturnOp::create(b, loc);
    return success();
  }

  // Tiles loaded ahead of the one computed: stages - 1, less the tiles an
  // asynchronous instruction may still be reading.
  int64_t ahead = stages == 1 ? 0 : stages - 1 - mma->tilesInFlight();
  // Prologue: the first `ahead` tiles in flight.
  for (int64_t s = 0; s < ahead; ++s) {
    if (s < kTiles) {
      Value stage = im.c(s);
      loadTiles(b, stage, im.c(s));
    }
    commit(b);
  }
  Value lower = im.c(0);
  Value upper = im.c(kTiles);
  auto loop = scf::ForOp::create(
      b, loc, lower, upper, im.c(1), acc,
      [&](OpBuilder &lb, Location, Value kt, ValueRange iterArgs) {
        IndexMath lm{lb, loc};
        Value stage = stages == 1 ? lm.c(0) : lm.rem(kt, stages);
        if (stages == 1) {
          loadTiles(lb, stage, kt);
          commit(lb);
          wait(lb, 0);
          mma->stageLanded(lb, loc);
          gpu::BarrierOp::create(lb, loc);
        } else {
          // Tile kt has landed once at most ahead - 1 younger groups pend;
          // the barrier also tells every warp that stage
          // (kt + ahead) % stages, last read by tile kt - 1 -
          // tilesInFlight(), is free.
          wait(lb, ahead - 1);
          mma->stageLanded(lb, loc);
          gpu::BarrierOp::create(lb, loc);
          Value next = lm.add(kt, ahead);
          auto ifOp =
              scf::IfOp::create(lb, loc, lm.ult(next, lm.c(kTiles)), false);
          OpBuilder ib = ifOp.getThenBodyBuilder();
          IndexMath imb{ib, loc};
          loadTiles(ib, imb.rem(next, stages), next);
          commit(lb);
        }
        SmallVector<Value> updated =
            compute(lb, stage, SmallVector<Value>(iterArgs));
        if (stages == 1)
          gpu::BarrierOp::create(lb, loc);
        scf::YieldOp::create(lb, loc, updated);
      });
  // Drain: the groups still pending are empty, but leave nothing in flight.
  commit(b);
  wait(b, 0);
  if (failed(epilogue(b, mma->finish(b, loc,
                                      SmallVector<Value>(loop.getResults())))))
    return failure();
  gpu::ReturnOp::create(b, loc);
  return success();
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
