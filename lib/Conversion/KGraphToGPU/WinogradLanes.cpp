//===- WinogradLanes.cpp - Winograd transforms on W lanes -----------------===//
//
// LaneEvaluator::evaluateWinograd: an element of kgraph.winograd_filter,
// winograd_input or winograd_output, computed where an elementwise kernel
// reads it. The transform point (filter, input) or the pixel's place in its
// output tile (output) picks a branch (a balanced scf.if tree) whose sums
// carry only the transform's nonzero coefficients, as constants; the W lanes
// of a thread share the branch. Lanes that differ only in the innermost
// coordinate (channels-last operands, or output pixels of one tile row) are
// computed together: their operand reads are one vector (channels) or one
// scalar (the tile's points); any other access is computed lane by lane.
//
//===----------------------------------------------------------------------===//

#include "LaneEvaluator.h"
#include "ScalarOps.h"

#include "kgraph/Dialect/KGraph/IR/Winograd.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/SCF/IR/SCF.h"

using namespace mlir;
using namespace kgraph;
using namespace kgraph::detail;

namespace {
using Lanes = SmallVector<Value>;
using LeafFn = function_ref<FailureOr<Lanes>(int64_t)>;
} // namespace

/// Sum of coefficient * value over the nonzero coefficients (0 if none).
static Value linearCombination(OpBuilder &b, Location loc, Type type,
                               ArrayRef<std::pair<double, Value>> terms) {
  Value acc;
  for (auto [coef, v] : terms) {
    if (coef == 0)
      continue;
    bool negate = coef < 0;
    Value term = v;
    if (std::abs(coef) != 1)
      term = arith::MulFOp::create(
          b, loc, v,
          arith::ConstantOp::create(b, loc,
                                    b.getFloatAttr(type, std::abs(coef))));
    if (!acc)
      acc = negate ? arith::NegFOp::create(b, loc, term).getResult() : term;
    else if (negate)
      acc = arith::SubFOp::create(b, loc, acc, term);
    else
      acc = arith::AddFOp::create(b, loc, acc, term);
  }
  if (!acc)
    acc = arith::ConstantOp::create(b, loc, b.getFloatAttr(type, 0.0));
  return acc;
}

/// A balanced tree of branches on `key` over [lo, hi); leaf `i` yields
/// `count` values of `type`.
static FailureOr<Lanes> selectTree(OpBuilder &b, Location loc, Value key,
                                   int64_t lo, int64_t hi, int64_t count,
                                   Type type, LeafFn leaf) {
  if (hi - lo == 1)
    return leaf(lo);
  int64_t mid = (lo + hi) / 2;
  Value below =
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult, key,
                            arith::ConstantIndexOp::create(b, loc, mid));
  auto ifOp = scf::IfOp::create(b, loc, SmallVector<Type>(count, type), below,
                                /*withElseRegion=*/true);
  OpBuilder::InsertionGuard guard(b);
  for (auto [block, range] :
       {std::make_pair(ifOp.thenBlock(), std::make_pair(lo, mid)),
        std::make_pair(ifOp.elseBlock(), std::make_pair(mid, hi))}) {
    b.setInsertionPointToStart(block);
    FailureOr<Lanes> values =
        selectTree(b, loc, key, range.first, range.second, count, type, leaf);
    if (failed(values))
      return failure();
    scf::YieldOp::create(b, loc, *values);
  }
  return Lanes(ifOp.getResults());
}

/// The W lanes of sum_j outer(l, j) * (sum_i inner(i) * read(i, j)[l]) over
/// i, j < n: one 2-D transform (B^T d B, G g G^T, A^T M A) of a point, the
/// inner sums first, each only for a j some lane's outer coefficient needs;
/// terms with a zero coefficient are neither read nor added.
static FailureOr<Lanes>
separableSum(OpBuilder &b, Location loc, Type type, int64_t w, int64_t n,
             function_ref<double(int64_t)> inner,
             function_ref<double(int64_t, int64_t)> outer,
             function_ref<FailureOr<Lanes>(int64_t, int64_t)> read) {
  SmallVector<Lanes> sums(n);
  for (int64_t j = 0; j < n; ++j) {
    bool needed = false;
    for (int64_t l = 0; l < w; ++l)
      needed |= outer(l, j) != 0;
    if (!needed)
      continue;
    SmallVector<SmallVector<std::pair<double, Value>>> terms(w);
    for (int64_t i = 0; i < n; ++i) {
      if (inner(i) == 0)
        continue;
      FailureOr<Lanes> v = read(i, j);
      if (failed(v))
        return failure();
      for (int64_t l = 0; l < w; ++l)
        terms[l].push_back({inner(i), (*v)[l]});
    }
    for (int64_t l = 0; l < w; ++l)
      sums[j].push_back(linearCombination(b, loc, type, terms[l]));
  }
  Lanes out;
  for (int64_t l = 0; l < w; ++l) {
    SmallVector<std::pair<double, Value>> terms;
    for (int64_t j = 0; j < n; ++j)
      if (outer(l, j) != 0)
        terms.push_back({outer(l, j), sums[j][l]});
    out.push_back(linearCombination(b, loc, type, terms));
  }
  return out;
}

/// Every point (i, j) < (a, a), point-major, of the W lanes of the 2-D
/// transform sum_r sum_c coef(i, r) coef(j, c) d[r][c] of a whole n x n tile
/// `d`: each row transformed first (d coef^T), then each column, each
/// point rounded to `elementType`.
static Lanes wholeTile(OpBuilder &b, Location loc, Type type, Type elementType,
                       int64_t w, int64_t a, ArrayRef<SmallVector<Lanes>> d,
                       function_ref<double(int64_t, int64_t)> coef) {
  int64_t n = d.size();
  SmallVector<SmallVector<Lanes>> rows(n); // rows[r][j] = (d coef^T)[r][j]
  for (int64_t r = 0; r < n; ++r)
    for (int64_t j = 0; j < a; ++j) {
      Lanes lanes;
      for (int64_t l = 0; l < w; ++l) {
        SmallVector<std::pair<double, Value>> terms;
        for (int64_t c = 0; c < n; ++c)
          terms.push_back({coef(j, c), d[r][c][l]});
        lanes.push_back(linearCombination(b, loc, type, terms));
      }
      rows[r].push_back(lanes);
    }
  Lanes points;
  for (int64_t i = 0; i < a; ++i)
    for (int64_t j = 0; j < a; ++j)
      for (int64_t l = 0; l < w; ++l) {
        SmallVector<std::pair<double, Value>> terms;
        for (int64_t r = 0; r < n; ++r)
          terms.push_back({coef(i, r), rows[r][j][l]});
        points.push_back(roundToType(
            b, loc, linearCombination(b, loc, type, terms), elementType));
      }
  return points;
}

static const WinogradTransform &getTransformOf(Operation *op) {
  int64_t m = 4;
  if (auto f = llvm::dyn_cast<WinogradFilterOp>(op))
    m = f.getOutputTile();
  else if (auto in = llvm::dyn_cast<WinogradInputOp>(op))
    m = in.getOutputTile();
  else
    m = llvm::cast<WinogradOutputOp>(op).getOutputTile();
  return *lookupWinogradTransform(m);
}

static Layout getLayoutOf(Operation *op) {
  if (auto f = llvm::dyn_cast<WinogradFilterOp>(op))
    return f.getLayout();
  if (auto in = llvm::dyn_cast<WinogradInputOp>(op))
    return in.getLayout();
  return llvm::cast<WinogradOutputOp>(op).getLayout();
}

FailureOr<SmallVector<Value>>
LaneEvaluator::evaluateWinograd(Operation *op, const Access &access) {
  ArrayRef<int64_t> shape =
      llvm::cast<ShapedType>(op->getResult(0).getType()).getShape();
  const WinogradTransform &t = getTransformOf(op);
  // nchw output pixels of one thread share their tile when its W lanes lie
  // in one tile row (m a multiple of W); every other transform keeps W
  // lanes of one innermost run together.
  bool fits = !(llvm::isa<WinogradOutputOp>(op) &&
                getLayoutOf(op) == Layout::nchw && t.m % width != 0);
  if (width == 1 || (access.kind == AccessKind::Contiguous &&
                     shape.back() % width == 0 && fits)) {
    SmallVector<Value> coords =
        access.coords.empty()
            ? splitCoords({{0, int64_t(shape.size()), access.indices[0]}},
                          shape)
            : splitCoords(access.coords, shape);
    return evaluateWinogradLanes(op, coords);
  }
  // One lane at a time (a uniform access: lane 0's value on every lane).
  LaneEvaluator scalar(b, loc, /*width=*/1, flatArgs);
  scalar.known = known;
  SmallVector<Value> lanes;
  int64_t count = access.kind == AccessKind::Uniform ? 1 : width;
  for (int64_t l = 0; l < count; ++l) {
    FailureOr<SmallVector<Value>> lane = scalar.evaluateWinograd(
        op, Access{AccessKind::Contiguous, {laneIndex(access, l)}});
    if (failed(lane))
      return failure();
    lanes.push_back(lane->front());
  }
  if (access.kind == AccessKind::Uniform)
    lanes.assign(width, lanes.front());
  return lanes;
}

FailureOr<SmallVector<Value>> LaneEvaluator::evaluateWinogradTile(Operation *op,
                                                                  Value index) {
  // Slice coordinates of the first lane: (channel, tile) of an nchw input,
  // (tile, channel) of an nhwc one, (filter, channel) of a filter.
  ArrayRef<int64_t> shape =
      llvm::cast<ShapedType>(op->getResult(0).getType()).getShape();
  Value inner = indexConst(shape[2]);
  Value outer = arith::DivUIOp::create(b, loc, index, inner);
  Value innermost = arith::RemUIOp::create(b, loc, index, inner);
  return evaluateWinogradLanes(op, {Value(), outer, innermost});
}

FailureOr<SmallVector<Value>>
LaneEvaluator::evaluateWinogradLanes(Operation *op, ArrayRef<Value> coords) {
  const WinogradTransform &t = getTransformOf(op);
  bool nhwc = getLayoutOf(op) == Layout::nhwc;
  Value operand = op->getOperand(0);
  ArrayRef<int64_t> in = llvm::cast<ShapedType>(operand.getType()).getShape();
  Type elementType = getElementType(op->getResult(0));
  Type type = getComputeType(elementType);
  int64_t a = t.alpha, m = t.m, w = width;
  auto c = [&](int64_t v) { return indexConst(v); };
  auto add = [&](Value x, Value y) -> Value {
    return arith::AddIOp::create(b, loc, x, y);
  };
  auto mul = [&](Value x, int64_t k) -> Value {
    return k == 1 ? x : arith::MulIOp::create(b, loc, x, c(k)).getResult();
  };
  auto div = [&](Value x, int64_t k) -> Value {
    return k == 1 ? x : arith::DivUIOp::create(b, loc, x, c(k)).getResult();
  };
  auto rem = [&](Value x, int64_t k) -> Value {
    return k == 1 ? c(0) : arith::RemUIOp::create(b, loc, x, c(k)).getResult();
  };
  // The W lanes of `operand` at flat index `base` (+ l * laneStride per
  // lane: 1 reads one vector, 0 one scalar, others gather).
  auto read = [&](Value base, int64_t laneStride) -> FailureOr<Lanes> {
    if (w == 1 || laneStride == 1)
      return evaluateInRegion(operand, {AccessKind::Contiguous, {base}});
    if (laneStride == 0)
      return evaluateInRegion(operand, {AccessKind::Uniform, {base}});
    Access gather{AccessKind::Gather, {}};
    for (int64_t l = 0; l < w; ++l)
      gather.indices.push_back(add(base, c(l * laneStride)));
    return evaluateInRegion(operand, gather);
  };
  // A point's lanes rounded to the element type.
  auto finish = [&](FailureOr<Lanes> lanes) -> FailureOr<Lanes> {
    if (succeeded(lanes))
      for (Value &v : *lanes)
        v = roundToType(b, loc, v, elementType);
    return lanes;
  };

  if (llvm::isa<WinogradFilterOp>(op)) {
    // Result [a*a, F, C]; lanes along C. Point (i, j) = sum over the 3x3
    // taps of G[i][kh] G[j][kw] g[kh][kw], row sums first.
    Value k = coords[0], f = coords[1], ch = coords[2];
    int64_t channels = nhwc ? in[3] : in[1];
    auto tap = [&](int64_t kh, int64_t kw) {
      return nhwc ? add(mul(add(mul(f, 9), c(kh * 3 + kw)), channels), ch)
                  : add(mul(add(mul(f, channels), ch), 9), c(kh * 3 + kw));
    };
    int64_t laneStride = nhwc ? 1 : 9;
    if (!k) {
      // The whole tile: each tap read once, then (G g) G^T.
      SmallVector<SmallVector<Lanes>> taps(3);
      for (int64_t kh = 0; kh < 3; ++kh)
        for (int64_t kw = 0; kw < 3; ++kw) {
          FailureOr<Lanes> v = read(tap(kh, kw), laneStride);
          if (failed(v))
            return failure();
          taps[kh].push_back(*v);
        }
      return wholeTile(b, loc, type, elementType, w, a, taps,
                       [&](int64_t i, int64_t r) { return t.getG(i, r); });
    }
    return selectTree(
        b, loc, k, 0, a * a, w, type, [&](int64_t point) -> FailureOr<Lanes> {
          int64_t i = point / a, j = point % a;
          return finish(separableSum(
              b, loc, type, w, 3, [&](int64_t kh) { return t.getG(i, kh); },
              [&](int64_t, int64_t kw) { return t.getG(j, kw); },
              [&](int64_t kh, int64_t kw) {
                return read(tap(kh, kw), laneStride);
              }));
        });
  }

  if (auto input = llvm::dyn_cast<WinogradInputOp>(op)) {
    // Result [a*a, C, T] (nchw; lanes along tiles) or [a*a, T, C] (nhwc;
    // lanes along C).
    ArrayRef<int64_t> pad = input.getPadding();
    int64_t channels = nhwc ? in[3] : in[1];
    int64_t height = nhwc ? in[1] : in[2], widthPx = nhwc ? in[2] : in[3];
    int64_t th = getWinogradTiles(height + pad[0] + pad[1] - 2, m);
    int64_t tw = getWinogradTiles(widthPx + pad[2] + pad[3] - 2, m);
    Value k = coords[0];
    Value ch = nhwc ? coords[2] : coords[1];
    // Each distinct tile of the lanes: image, first row and column read.
    int64_t tiles = nhwc ? 1 : w;
    SmallVector<Value> img, row0, col0;
    for (int64_t l = 0; l < tiles; ++l) {
      Value tile = nhwc ? coords[1] : (l ? add(coords[2], c(l)) : coords[2]);
      img.push_back(div(tile, th * tw));
      Value r = mul(rem(div(tile, tw), th), m);
      Value q = mul(rem(tile, tw), m);
      row0.push_back(arith::SubIOp::create(b, loc, r, c(pad[0])));
      col0.push_back(arith::SubIOp::create(b, loc, q, c(pad[2])));
    }
    auto pixel = [&](int64_t i, int64_t j) -> FailureOr<Lanes> {
      // nchw: each lane's tile its own scalar; nhwc: the lanes' channels,
      // one vector of the one pixel.
      SmallVector<Value> inside;
      Value nhwcIndex;
      Lanes values;
      for (int64_t l = 0; l < tiles; ++l) {
        Value r = add(row0[l], c(i)), q = add(col0[l], c(j));
        inside.push_back(arith::AndIOp::create(
            b, loc,
            arith::AndIOp::create(
                b, loc,
                arith::CmpIOp::create(b, loc, arith::CmpIPredicate::sge, r,
                                      c(0)),
                arith::CmpIOp::create(b, loc, arith::CmpIPredicate::slt, r,
                                      c(height))),
            arith::AndIOp::create(
                b, loc,
                arith::CmpIOp::create(b, loc, arith::CmpIPredicate::sge, q,
                                      c(0)),
                arith::CmpIOp::create(b, loc, arith::CmpIPredicate::slt, q,
                                      c(widthPx)))));
        // Clamped into the image, so every address formed is in bounds.
        Value rc = arith::MinSIOp::create(
            b, loc, arith::MaxSIOp::create(b, loc, r, c(0)), c(height - 1));
        Value qc = arith::MinSIOp::create(
            b, loc, arith::MaxSIOp::create(b, loc, q, c(0)), c(widthPx - 1));
        if (nhwc) {
          nhwcIndex =
              add(mul(add(mul(add(mul(img[l], height), rc), widthPx), qc),
                      channels),
                  ch);
          continue;
        }
        FailureOr<Lanes> v =
            read(add(mul(add(mul(add(mul(img[l], channels), ch), height), rc),
                         widthPx),
                     qc),
                 0);
        if (failed(v))
          return failure();
        values.push_back(v->front());
      }
      if (nhwc) {
        FailureOr<Lanes> v = read(nhwcIndex, 1);
        if (failed(v))
          return failure();
        values = *v;
      }
      Value zero = arith::ConstantOp::create(b, loc, b.getFloatAttr(type, 0.0));
      for (int64_t l = 0; l < w; ++l)
        values[l] = arith::SelectOp::create(b, loc, inside[nhwc ? 0 : l],
                                            values[l], zero);
      return values;
    };
    if (!k) {
      // The whole tile: each pixel read once, then B^T d B.
      SmallVector<SmallVector<Lanes>> px(a);
      for (int64_t i = 0; i < a; ++i)
        for (int64_t j = 0; j < a; ++j) {
          FailureOr<Lanes> v = pixel(i, j);
          if (failed(v))
            return failure();
          px[i].push_back(*v);
        }
      return wholeTile(b, loc, type, elementType, w, a, px,
                       [&](int64_t i, int64_t r) { return t.getBT(i, r); });
    }
    return selectTree(
        b, loc, k, 0, a * a, w, type, [&](int64_t point) -> FailureOr<Lanes> {
          int64_t xi = point / a, nu = point % a;
          // Column sums of the rows B^T[xi] picks, then B^T[nu] across.
          return finish(separableSum(
              b, loc, type, w, a, [&](int64_t i) { return t.getBT(xi, i); },
              [&](int64_t, int64_t j) { return t.getBT(nu, j); }, pixel));
        });
  }

  // winograd_output: result [N, F, OH, OW] (lanes along OW, one tile row:
  // m is a multiple of W) or [N, OH, OW, F] (lanes along F).
  ArrayRef<int64_t> out =
      llvm::cast<ShapedType>(op->getResult(0).getType()).getShape();
  int64_t oh = nhwc ? out[1] : out[2], ow = nhwc ? out[2] : out[3];
  int64_t filters = nhwc ? out[3] : out[1];
  int64_t th = getWinogradTiles(oh, m), tw = getWinogradTiles(ow, m);
  int64_t tiles = in[nhwc ? 1 : 2];
  Value img = coords[0];
  Value y = nhwc ? coords[1] : coords[2], x = nhwc ? coords[2] : coords[3];
  Value f = nhwc ? coords[3] : coords[1];
  Value tile = add(mul(add(mul(img, th), div(y, m)), tw), div(x, m));
  Value rowInTile = rem(y, m), colInTile = rem(x, m);
  // nchw: lane l is column colInTile + l of the tile, colInTile a multiple
  // of W; the key is (row, colInTile / W). nhwc: (row, column).
  int64_t colGroups = nhwc ? m : m / w;
  Value key =
      add(mul(rowInTile, colGroups), nhwc ? colInTile : div(colInTile, w));
  auto point = [&](int64_t xi, int64_t nu) -> FailureOr<Lanes> {
    Value p = c(xi * a + nu);
    if (nhwc)
      return read(add(mul(add(mul(p, tiles), tile), filters), f), 1);
    return read(add(mul(add(mul(p, filters), f), tiles), tile), 0);
  };
  return selectTree(
      b, loc, key, 0, m * colGroups, w, type,
      [&](int64_t leaf) -> FailureOr<Lanes> {
        int64_t row = leaf / colGroups;
        SmallVector<int64_t> laneCols;
        for (int64_t l = 0; l < w; ++l)
          laneCols.push_back(nhwc ? leaf % colGroups
                                  : (leaf % colGroups) * w + l);
        // Row sums over the points A^T[row] picks, then each lane's
        // column of A^T across.
        return finish(separableSum(
            b, loc, type, w, a, [&](int64_t xi) { return t.getAT(row, xi); },
            [&](int64_t l, int64_t nu) { return t.getAT(laneCols[l], nu); },
            point));
      });
}
