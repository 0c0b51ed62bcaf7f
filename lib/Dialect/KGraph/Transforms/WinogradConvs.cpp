//===- WinogradConvs.cpp - 3x3 FMA convs as Winograd F(4x4, 3x3) ----------===//
//
// kgraph-winograd-convs (Passes.td): a 3x3, stride-1 conv2d whose GEMM runs
// on FMA (no tensor-core operand kind for its element type: f32 without
// tf32) becomes the Winograd F(4x4, 3x3) form: the filter's transform
// (parameters only: computed once at load), the input tiles' transform, one
// batched GEMM over channels per transformed point (36 of them), and the
// output transform, into which the conv's epilogue fuses. Each output tile
// of 4x4 pixels then costs 36 multiply-adds per channel pair instead of 144.
//
//===----------------------------------------------------------------------===//

#include "kgraph/Dialect/KGraph/IR/KGraphOps.h"
#include "kgraph/Dialect/KGraph/IR/Winograd.h"
#include "kgraph/Dialect/KGraph/Transforms/FusionRules.h"
#include "kgraph/Dialect/KGraph/Transforms/Passes.h"
#include "kgraph/Target/ElementTypes.h"

#include "mlir/IR/Builders.h"

namespace kgraph {
#define GEN_PASS_DEF_KGRAPHWINOGRADCONVS
#include "kgraph/Dialect/KGraph/Transforms/Passes.h.inc"
} // namespace kgraph

using namespace mlir;
using namespace kgraph;

namespace {

/// Output tile of the rewrite: F(4x4, 3x3).
constexpr int64_t kOutputTile = 4;

struct WinogradConvsPass
    : public kgraph::impl::KGraphWinogradConvsBase<WinogradConvsPass> {
  using KGraphWinogradConvsBase::KGraphWinogradConvsBase;

  void runOnOperation() override {
    SmallVector<Conv2dOp> convs;
    getOperation().walk([&](Conv2dOp conv) {
      if (!conv->getParentOfType<FusedOp>() && isCandidate(conv))
        convs.push_back(conv);
    });
    for (Conv2dOp conv : convs)
      rewrite(conv);
  }

  /// A 3x3, stride-1, undilated, ungrouped conv on FMA with enough
  /// channels both ways and enough multiply-adds for the per-point GEMMs to
  /// be worth their transforms and launches.
  bool isCandidate(Conv2dOp conv) {
    auto in = llvm::cast<RankedTensorType>(conv.getInput().getType());
    auto filter = llvm::cast<RankedTensorType>(conv.getFilter().getType());
    auto out = llvm::cast<RankedTensorType>(conv.getType());
    const ElementTypeInfo *info = lookupElementType(in.getElementType());
    if (!info || !info->isFloat || out.getElementType() != in.getElementType())
      return false;
    bool tf32 = conv.getPrecision() && *conv.getPrecision() == Precision::tf32;
    if (getMmaOperandType(in.getElementType(), tf32))
      return false;
    if (conv.getGroups() != 1 ||
        llvm::any_of(conv.getStrides(), [](int64_t s) { return s != 1; }) ||
        llvm::any_of(conv.getDilations(), [](int64_t d) { return d != 1; }))
      return false;
    bool nhwc = conv.getLayout() == Layout::nhwc;
    ArrayRef<int64_t> f = filter.getShape();
    if ((nhwc ? f[1] : f[2]) != 3 || (nhwc ? f[2] : f[3]) != 3)
      return false;
    int64_t channels = nhwc ? f[3] : f[1];
    ArrayRef<int64_t> y = out.getShape();
    int64_t macs = y[0] * y[1] * y[2] * y[3] * channels * 9;
    return channels >= minChannels && f[0] >= minChannels && macs >= minMacs;
  }

  void rewrite(Conv2dOp conv) {
    OpBuilder b(conv);
    Location loc = conv.getLoc();
    Layout layout = conv.getLayout();
    bool nhwc = layout == Layout::nhwc;
    auto in = llvm::cast<RankedTensorType>(conv.getInput().getType());
    auto out = llvm::cast<RankedTensorType>(conv.getType());
    Type element = in.getElementType();
    ArrayRef<int64_t> f = conv.getFilter().getType().getShape();
    ArrayRef<int64_t> y = out.getShape();
    const WinogradTransform &t = *lookupWinogradTransform(kOutputTile);
    int64_t points = t.alpha * t.alpha;
    int64_t filters = f[0], channels = nhwc ? f[3] : f[1];
    int64_t tiles = y[0] * getWinogradTiles(nhwc ? y[1] : y[2], t.m) *
                    getWinogradTiles(nhwc ? y[2] : y[3], t.m);
    auto layoutAttr =
        b.getNamedAttr("layout", LayoutAttr::get(b.getContext(), layout));
    auto tileAttr = b.getNamedAttr("output_tile", b.getI64IntegerAttr(t.m));

    Value u = WinogradFilterOp::create(
        b, loc, RankedTensorType::get({points, filters, channels}, element),
        ValueRange{conv.getFilter()},
        ArrayRef<NamedAttribute>{layoutAttr, tileAttr});
    SmallVector<int64_t> vShape =
        nhwc ? SmallVector<int64_t>{points, tiles, channels}
             : SmallVector<int64_t>{points, channels, tiles};
    Value v = WinogradInputOp::create(
        b, loc, RankedTensorType::get(vShape, element),
        ValueRange{conv.getInput()},
        ArrayRef<NamedAttribute>{
            layoutAttr, b.getNamedAttr("padding", conv.getPaddingAttr()),
            tileAttr});
    // nchw: [F, C] x [C, T] per point; nhwc: [T, C] x [C, F] (the filter's
    // transform read transposed).
    SmallVector<int64_t> mShape =
        nhwc ? SmallVector<int64_t>{points, tiles, filters}
             : SmallVector<int64_t>{points, filters, tiles};
    SmallVector<NamedAttribute> mmAttrs;
    if (nhwc)
      mmAttrs.push_back(b.getNamedAttr("transpose_b", b.getUnitAttr()));
    if (auto precision = conv.getPrecisionAttr())
      mmAttrs.push_back(b.getNamedAttr("precision", precision));
    Value m =
        MatmulOp::create(b, loc, RankedTensorType::get(mShape, element),
                         nhwc ? ValueRange{v, u} : ValueRange{u, v}, mmAttrs);
    Value result = WinogradOutputOp::create(
        b, loc, out, ValueRange{m},
        ArrayRef<NamedAttribute>{layoutAttr, tileAttr});
    conv.replaceAllUsesWith(result);
    conv.erase();
  }
};

} // namespace
