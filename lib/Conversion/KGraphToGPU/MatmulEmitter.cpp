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
// wgmma would plug in as another implementation. Without cp.async (sm_70,
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
// into mma fragments.
//
//===----------------------------------------------------------------------===//

#include "MatmulKernel.h"
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

/// What a GEMM kernel group computes: the GEMM, the operands, and for a
/// conv2d its geometry.
struct GemmGroup {
  Operation *op = nullptr;
  Value lhs, rhs; // A (matmul lhs / conv input), B (matmul rhs / conv filter)
  GemmProblem p;
  std::optional<ConvGeometry> conv;
};

} // namespace

static FailureOr<GemmGroup> getGemmGroup(FusedOp group) {
  Block &body = group.getBody().front();
  auto ops = body.without_terminator();
  if (!llvm::hasSingleElement(ops))
    return failure();
  Operation *op = &*ops.begin();
  GemmGroup g;
  g.op = op;
  if (auto matmul = llvm::dyn_cast<MatmulOp>(op)) {
    g.lhs = matmul.getLhs();
    g.rhs = matmul.getRhs();
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

  g.lhs = conv.getInput();
  g.rhs = conv.getFilter();
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

/// Dynamic shared memory of the kernel: `stages` A and B tiles.
static int64_t getSharedMemoryBytes(const GemmProblem &p,
                                    MatmulConfigAttr config) {
  int64_t pad = config.getSmemPadding();
  int64_t tm = config.getTileM(), tn = config.getTileN(), tk = config.getTileK();
  int64_t aElems = p.transA ? tk * (tm + pad) : tm * (tk + pad);
  int64_t bElems = p.transB ? tn * (tk + pad) : tk * (tn + pad);
  return config.getStages() *
         (aElems * byteWidth(p.aType) + bElems * byteWidth(p.bType));
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
  // grid.y is limited to 65535 blocks (grid.x to 2^31 - 1): past that the
  // (N tile, M tile) pairs are linearized over grid.x, N tiles fastest.
  if (shape.gridY > kMaxGridY) {
    shape.gridX *= shape.gridY;
    shape.gridY = 1;
  }
  shape.sharedMemoryBytes = getSharedMemoryBytes(p, config);
  return shape;
}

LogicalResult kgraph::checkMatmulGroup(FusedOp group, MatmulConfigAttr config,
                                       const SMTarget *target) {
  FailureOr<GemmGroup> g = getGemmGroup(group);
  if (failed(g))
    return group.emitOpError("a matmul kernel group must hold exactly one "
                             "kgraph.matmul or kgraph.conv2d (epilogue fusion "
                             "is not implemented yet)");
  Operation *op = g->op;
  const GemmProblem &p = g->p;
  std::string whyNot;
  if (!createWarpMma(p, config, &whyNot))
    return op->emitOpError(whyNot);
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
  if (tilesM > kMaxGridY && tilesN * tilesM > kMaxGridX)
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
    Value avail =
        checkCols ? m.minu(m.sub(m.c(cols), m.minu(col, m.c(cols))), m.c(width))
                  : m.c(width);
    return {m.add(batchOffset, m.select(inside, at, m.c(0))),
            m.select(inside, avail, m.c(0))};
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
    Value ih = im.add(im.mul(oh, g.strideH), im.mul(kh, g.dilationH));
    Value iw = im.add(im.mul(ow, g.strideW), im.mul(kw, g.dilationW));
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
    return {im.select(inside, at, im.c(0)),
            im.select(inside, im.c(width), im.c(0))};
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
    Value rowOffset =
        rowsPerImage == 0
            ? m.mul(row, rowStride)
            : m.add(m.mul(m.div(row, rowsPerImage), imageStride),
                    m.mul(m.rem(row, rowsPerImage), rowStride));
    return m.add(m.add(m.mul(batch, batchStride), rowOffset),
                 m.mul(col, colStride));
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
  MatmulKernelBuilder(FusedOp group, const GemmGroup &gemm,
                      MatmulConfigAttr config, gpu::GPUFuncOp kernel,
                      bool asyncCopies)
      : group(group), gemm(gemm), config(config), kernel(kernel),
        asyncCopies(asyncCopies), p(gemm.p), loc(group.getLoc()) {}

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
  SmallVector<Value> compute(OpBuilder &b, Value stage, ArrayRef<Value> acc);
  void epilogue(OpBuilder &b, ArrayRef<Value> acc);

  FusedOp group;
  GemmGroup gemm;
  MatmulConfigAttr config;
  gpu::GPUFuncOp kernel;
  bool asyncCopies;
  GemmProblem p;
  Location loc;
  std::unique_ptr<WarpMma> mma;
  std::unique_ptr<OperandAccess> aAccess, bAccess;
  ResultAccess cAccess;

  Value flatA, flatB, flatC;
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

  for (int64_t first = 0; first < chunks; first += threads) {
    Value chunk = im.add(tid, first);
    auto emitChunk = [&](OpBuilder &nb) {
      IndexMath m{nb, loc};
      Value r = m.div(chunk, chunksPerRow);
      Value cc = m.mul(m.rem(chunk, chunksPerRow), lw);
      // `valid` elements of the chunk exist (null: all); the rest are
      // zero-filled.
      auto [src, valid] = access.locate(m, batch, m.add(originRow, r),
                                        m.add(originCol, cc), lw);
      if (asyncCopies) {
        nvgpu::DeviceAsyncCopyOp::create(
            nb, loc, nvgpu::DeviceAsyncTokenType::get(nb.getContext()), tile,
            ValueRange{stage, r, cc}, flat, ValueRange{src},
            nb.getIndexAttr(lw), valid,
            bypassL1 ? nb.getUnitAttr() : UnitAttr());
        return;
      }
      // Synchronous copy, element by element, zero where missing.
      Value zero = arith::ConstantOp::create(nb, loc, nb.getZeroAttr(elem));
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
                                ValueRange{stage, r, m.add(cc, e)});
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
  for (int64_t kk = 0; kk < config.getTileK(); kk += instrK)
    values = mma->step(b, loc, aTile, bTile, stage, warpRow, warpCol, lane, kk,
                       values);
  return values;
}

void MatmulKernelBuilder::epilogue(OpBuilder &b, ArrayRef<Value> acc) {
  IndexMath im{b, loc};
  // Whole block tile inside C: stores need no bounds checks (always so when
  // the tiles divide C).
  Value full;
  if (p.m % config.getTileM() == 0 && p.n % config.getTileN() == 0)
    full = arith::ConstantIntOp::create(b, loc, b.getI1Type(), 1);
  else
    full = arith::AndIOp::create(
        b, loc, im.ult(im.add(rowBase, config.getTileM() - 1), im.c(p.m)),
        im.ult(im.add(colBase, config.getTileN() - 1), im.c(p.n)));
  auto ifOp = scf::IfOp::create(b, loc, full, /*withElseRegion=*/true);
  unsigned cBytes = byteWidth(p.cType);
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
        SmallVector<Value> vals;
        for (int64_t e = 0; e < cols; ++e) {
          Value v = vector::ExtractOp::create(nb, loc, acc[i],
                                              ArrayRef<int64_t>{h, e});
          if (v.getType() != p.cType)
            v = llvm::isa<FloatType>(p.cType)
                    ? Value(arith::TruncFOp::create(nb, loc, p.cType, v))
                    : Value(arith::TruncIOp::create(nb, loc, p.cType, v));
          vals.push_back(v);
        }
        if (!checked && cols > 1 && cAccess.hasAlignedRuns(cols)) {
          auto vt = VectorType::get({cols}, p.cType);
          Value vec = vector::FromElementsOp::create(nb, loc, vt, vals);
          vector::StoreOp::create(nb, loc, vec, flatC, base, false,
                                  llvm::MaybeAlign(cols * cBytes));
          continue;
        }
        for (int64_t e = 0; e < cols; ++e) {
          Value at = m.add(base, e * cAccess.colStride);
          if (!checked) {
            memref::StoreOp::create(nb, loc, vals[e], flatC, at);
            continue;
          }
          Value ok = arith::AndIOp::create(nb, loc, m.ult(row, m.c(p.m)),
                                           m.ult(m.add(col, e), m.c(p.n)));
          auto guard = scf::IfOp::create(nb, loc, ok, false);
          OpBuilder gb = guard.getThenBodyBuilder();
          memref::StoreOp::create(gb, loc, vals[e], flatC, at);
        }
      }
    }
  }
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

  // Shared memory: the A stages, then the B stages.
  int64_t tm = config.getTileM(), tn = config.getTileN(), tk = config.getTileK();
  int64_t pad = config.getSmemPadding(), stages = config.getStages();
  auto workgroup = gpu::AddressSpaceAttr::get(ctx, gpu::AddressSpace::Workgroup);
  SmallVector<int64_t> aShape = p.transA ? SmallVector<int64_t>{stages, tk, tm + pad}
                                         : SmallVector<int64_t>{stages, tm, tk + pad};
  SmallVector<int64_t> bShape = p.transB ? SmallVector<int64_t>{stages, tn, tk + pad}
                                         : SmallVector<int64_t>{stages, tk, tn + pad};
  auto aType = MemRefType::get(aShape, p.aType, AffineMap(), workgroup);
  auto bType = MemRefType::get(bShape, p.bType, AffineMap(), workgroup);
  Value smem = gpu::DynamicSharedMemoryOp::create(
      b, loc,
      MemRefType::get({ShapedType::kDynamic}, b.getI8Type(), AffineMap(),
                      workgroup));
  int64_t aBytes = aType.getNumElements() * byteWidth(p.aType);
  aTile = memref::ViewOp::create(b, loc, aType, smem, im.c(0), ValueRange{});
  bTile = memref::ViewOp::create(b, loc, bType, smem, im.c(aBytes), ValueRange{});

  tid = gpu::ThreadIdOp::create(b, loc, gpu::Dimension::x);
  lane = im.rem(tid, 32);
  Value warp = im.div(tid, 32);
  warpRow = im.mul(im.div(warp, config.getWarpsN()), config.getWarpTileM());
  warpCol = im.mul(im.rem(warp, config.getWarpsN()), config.getWarpTileN());
  Value blockX = gpu::BlockIdOp::create(b, loc, gpu::Dimension::x);
  int64_t tilesN = ceilDiv(p.n, tn);
  if (ceilDiv(p.m, tm) > kMaxGridY) {
    // Linearized grid (see getGemmLaunchShape).
    colBase = im.mul(im.rem(blockX, tilesN), tn);
    rowBase = im.mul(im.div(blockX, tilesN), tm);
  } else {
    colBase = im.mul(blockX, tn);
    rowBase = im.mul(gpu::BlockIdOp::create(b, loc, gpu::Dimension::y), tm);
  }
  batch = gpu::BlockIdOp::create(b, loc, gpu::Dimension::z);

  int64_t kTiles = (p.k + tk - 1) / tk;
  SmallVector<Value> acc = mma->zeroAccumulators(b, loc);

  // Prologue: the first stages - 1 tiles in flight.
  for (int64_t s = 0; s + 1 < stages; ++s) {
    if (s < kTiles)
      loadTiles(b, im.c(s), im.c(s));
    commit(b);
  }
  auto loop = scf::ForOp::create(b, loc, im.c(0), im.c(kTiles), im.c(1), acc);
  {
    OpBuilder lb = OpBuilder::atBlockBegin(loop.getBody());
    IndexMath lm{lb, loc};
    Value kt = loop.getInductionVar();
    Value stage = stages == 1 ? lm.c(0) : lm.rem(kt, stages);
    if (stages == 1) {
      loadTiles(lb, stage, kt);
      commit(lb);
      wait(lb, 0);
      gpu::BarrierOp::create(lb, loc);
    } else {
      // Tile kt has landed once at most stages - 2 younger groups pend; the
      // barrier also tells every warp that stage (kt - 1) % stages is free.
      wait(lb, stages - 2);
      gpu::BarrierOp::create(lb, loc);
      Value next = lm.add(kt, stages - 1);
      auto ifOp = scf::IfOp::create(lb, loc, lm.ult(next, lm.c(kTiles)), false);
      OpBuilder ib = ifOp.getThenBodyBuilder();
      IndexMath imb{ib, loc};
      loadTiles(ib, imb.rem(next, stages), next);
      commit(lb);
    }
    SmallVector<Value> iterAcc(loop.getRegionIterArgs());
    SmallVector<Value> updated = compute(lb, stage, iterAcc);
    if (stages == 1)
      gpu::BarrierOp::create(lb, loc);
    scf::YieldOp::create(lb, loc, updated);
  }
  // The loop body was built with an explicit yield: drop the default one.
  Block *loopBody = loop.getBody();
  if (loopBody->getOperations().size() > 1) {
    Operation *last = &loopBody->back();
    Operation *prev = last->getPrevNode();
    if (llvm::isa<scf::YieldOp>(last) && llvm::isa<scf::YieldOp>(prev))
      last->erase();
  }
  // Drain: the groups still pending are empty, but leave nothing in flight.
  commit(b);
  wait(b, 0);
  epilogue(b, SmallVector<Value>(loop.getResults()));
  gpu::ReturnOp::create(b, loc);
  return success();
}

LogicalResult kgraph::emitMatmulKernel(FusedOp group, MatmulConfigAttr config,
                                       gpu::GPUFuncOp kernel,
                                       const SMTarget &target) {
  bool async = target.hasCpAsync &&
               config.getLoadWidth() *
                       byteWidth(llvm::cast<ShapedType>(
                                     group.getInputs().front().getType())
                                     .getElementType()) >=
                   4;
  FailureOr<GemmGroup> gemm = getGemmGroup(group);
  if (failed(gemm))
    return group.emitOpError("is not a kgraph.matmul or kgraph.conv2d group");
  MatmulKernelBuilder builder(group, *gemm, config, kernel, async);
  return builder.build();
}
