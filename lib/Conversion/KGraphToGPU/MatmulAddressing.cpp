//===- MatmulAddressing.cpp - GEMM problem and global addressing ----------===//
//
// The GEMM a kernel group computes (a kgraph.matmul, or a kgraph.conv2d as
// an implicit GEMM, see MatmulEmitter.cpp) and where the elements of its
// operands and result live in global memory: row-major matrices, the conv2d
// im2col gather, and the nhwc/nchw result layouts. The rest of the kernel
// reaches global memory only through these (MatmulKernelBuilder.h).
//
//===----------------------------------------------------------------------===//

#include "MatmulKernelBuilder.h"

#include "mlir/Dialect/Arith/IR/Arith.h"

using namespace mlir;
using namespace kgraph;
using namespace kgraph::detail;

FailureOr<GemmGroup> kgraph::detail::getGemmGroup(FusedOp group) {
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

std::pair<Value, Value> MatrixAccess::locate(IndexMath &m, Value batch,
                                             Value row, Value col,
                                             int64_t width) const {
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

std::pair<Value, Value> Im2colAccess::locate(IndexMath &im, Value batch,
                                             Value row, Value col,
                                             int64_t width) const {
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

Value ResultAccess::locate(IndexMath &m, Value batch, Value row,
                           Value col) const {
  Value rowOffset =
      rowsPerImage == 0
          ? m.mul(row, rowStride)
          : m.add(m.mul(m.div(row, rowsPerImage), imageStride),
                  m.mul(m.rem(row, rowsPerImage), rowStride));
  return m.add(m.add(m.mul(batch, batchStride), rowOffset),
               m.mul(col, colStride));
}

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
