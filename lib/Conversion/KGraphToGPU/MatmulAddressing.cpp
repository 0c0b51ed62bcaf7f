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

FailureOr<GemmGroup> kgraph::detail::getGemmGroup(FusedOp group,
                                                  std::string *whyNot) {
  FailureOr<GemmGroupParts> parts = analyzeGemmGroup(group, /*emitErrors=*/false);
  if (failed(parts)) {
    if (whyNot)
      *whyNot = "is not a kgraph.matmul or kgraph.conv2d group";
    return failure();
  }
  // The problem and the conv-as-GEMM mapping are the selection model's.
  FailureOr<MatmulProblem> p = getGemmProblem(*parts, whyNot);
  if (failed(p))
    return failure();
  GemmGroup g;
  g.op = parts->anchor;
  g.parts = *parts;
  g.lhs = parts->lhsSource;
  g.rhs = parts->rhsSource;
  g.p = *p;
  return g;
}

std::pair<Value, Value> MatrixAccess::locate(IndexMath &m, Value batch,
                                             Value row, Value col,
                                             int64_t width) const {
  Value batchOffset = m.mul(batch, batchStride);
  if (offset != 0)
    batchOffset = m.add(batchOffset, m.c(offset));
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
  // Nested builder calls are named locals: argument evaluation order is
  // unspecified, and the IR must not depend on the host compiler.
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

Value ResultAccess::locate(IndexMath &m, Value batch, Value row,
                           Value col) const {
  Value rowOffset;
  if (rowsPerImage == 0) {
    rowOffset = m.mul(row, rowStride);
  } else {
    Value imageOffset = m.mul(m.div(row, rowsPerImage), imageStride);
    rowOffset = m.add(imageOffset, m.mul(m.rem(row, rowsPerImage), rowStride));
  }
  Value rowStart = m.add(m.mul(batch, batchStride), rowOffset);
  return m.add(rowStart, m.mul(col, colStride));
}

void MatmulKernelBuilder::setUpAddressing() {
  int64_t tm = config.getTileM(), tn = config.getTileN(), tk = config.getTileK();
  // Stored rows x cols of each operand's tiles (see the file header).
  int64_t aTileRows = p.transposeA ? tk : tm, aTileCols = p.transposeA ? tm : tk;
  int64_t bTileRows = p.transposeB ? tn : tk, bTileCols = p.transposeB ? tk : tn;
  // A slice read in place is its input at the slice's offset and strides.
  bAccess = std::make_unique<MatrixAccess>(
      p.bRows(), p.bCols(), p.bRowStride(), p.bBatchStride(),
      p.bRows() % bTileRows != 0, p.bCols() % bTileCols != 0,
      p.layoutB.offset);
  if (!gemm.p.conv) {
    aAccess = std::make_unique<MatrixAccess>(
        p.aRows(), p.aCols(), p.aRowStride(), p.aBatchStride(),
        p.aRows() % aTileRows != 0, p.aCols() % aTileCols != 0,
        p.layoutA.offset);
    cAccess.rowStride = p.n;
    cAccess.batchStride = p.m * p.n;
  } else {
    const ConvGeometry &g = *gemm.p.conv;
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
