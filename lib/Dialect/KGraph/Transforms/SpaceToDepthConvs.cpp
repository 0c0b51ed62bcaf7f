//===- SpaceToDepthConvs.cpp - strided few-channel convs as stride 1 -------===//
//
// kgraph-space-to-depth-convs (Passes.td): an implicit-GEMM nhwc conv2d with
// stride s > 1 whose input channels fill less than one 16-byte vector per
// pixel (an RGB stem) becomes a stride-1 conv over the space-to-depth
// rearrangement of its input: each s x s block of pixels is one pixel of
// s*s*C channels (zero-padded to a multiple of 16 bytes), and the filter is
// rearranged alike, its taps past KH or KW zero. A tap then loads whole
// vectors, and with 16-byte pixels Hopper's TMA im2col mode can gather it.
//
// Index algebra (rows; columns alike): the conv reads the zero-padded input
// x at rows s*oh + kh - padTop. Shifting the filter by e = -padTop mod s
// zero taps (kh' = kh + e) makes that s*(oh - T) + kh' with T = (padTop +
// e) / s, and with kh' = s*a + p it is row p of block oh - T + a of x: a
// stride-1 conv with padding T over the blocks. x is never copied with
// zero rows before it; only a last partial block gets zero rows after.
//
//===----------------------------------------------------------------------===//

#include "ZeroPadding.h"
#include "kgraph/Dialect/KGraph/Transforms/FusionRules.h"
#include "kgraph/Dialect/KGraph/Transforms/Passes.h"
#include "kgraph/Target/ElementTypes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/IR/Builders.h"

namespace kgraph {
#define GEN_PASS_DEF_KGRAPHSPACETODEPTHCONVS
#include "kgraph/Dialect/KGraph/Transforms/Passes.h.inc"
} // namespace kgraph

using namespace mlir;
using namespace kgraph;

namespace {

/// Bytes one pixel's rearranged channels are padded to (one vector).
constexpr int64_t kVectorBytes = 16;
/// A conv whose rearranged GEMM would do more than this many times its
/// multiply-adds is left alone (a 1x1 strided conv would read every pixel
/// to use one in s*s).
constexpr int64_t kMaxWorkGrowth = 4;

RankedTensorType withShape(Value v, ArrayRef<int64_t> shape) {
  auto type = llvm::cast<RankedTensorType>(v.getType());
  return RankedTensorType::get(shape, type.getElementType());
}

/// `value` [D0, S1, S2, C] with S1 = s1 * B1 and S2 = s2 * B2, its
/// channels padded with `channelPad` zeros, as [D0, B1, B2, s1 * s2 * C']:
/// element (d, i*s1 + p, j*s2 + q, c) at (d, i, j, (p*s2 + q)*C' + c). The
/// zeros are appended to the split view [D0, B1, s1, B2, s2, C], right
/// before the transpose, so the fuser makes the pad and the transpose one
/// copy kernel (a reshape between them would keep them apart).
Value spaceToDepth(OpBuilder &b, Location loc, Value value, int64_t s1,
                   int64_t s2, int64_t channelPad) {
  ArrayRef<int64_t> shape =
      llvm::cast<RankedTensorType>(value.getType()).getShape();
  int64_t d0 = shape[0], b1 = shape[1] / s1, b2 = shape[2] / s2,
          c = shape[3] + channelPad;
  Value split = ReshapeOp::create(
      b, loc, withShape(value, {d0, b1, s1, b2, s2, shape[3]}), value);
  split = padWithZeros(b, loc, split, 5, 0, channelPad);
  Value swapped = TransposeOp::create(
      b, loc, ValueRange{split},
      {b.getNamedAttr("permutation",
                      b.getDenseI64ArrayAttr({0, 1, 3, 2, 4, 5}))});
  return ReshapeOp::create(b, loc, withShape(value, {d0, b1, b2, s1 * s2 * c}),
                           swapped);
}

/// One spatial dim of the rewrite: `shift` zero filter taps put before
/// the first (so the padding before becomes whole blocks), `taps` blocks of
/// filter taps, x's first `keep` rows (those the conv reads) and `tail` zero
/// rows to whole blocks, `blocks` of them, and the new conv's padding.
struct DimPlan {
  int64_t shift = 0, taps = 0, keep = 0, tail = 0, blocks = 0, padBefore = 0,
          padAfter = 0;
};

/// The plan of a dim of `size` rows, padded `padBefore` before, read by
/// `kernel` taps at `stride` for `out` outputs.
DimPlan planDim(int64_t size, int64_t padBefore, int64_t kernel,
                int64_t stride, int64_t out) {
  DimPlan d;
  d.shift = (stride - padBefore % stride) % stride;
  d.padBefore = (padBefore + d.shift) / stride;
  d.taps = (kernel + d.shift + stride - 1) / stride;
  // Output o reads blocks o - padBefore + a, a < taps: x's rows below
  // (out + taps - 1 - padBefore) * stride.
  int64_t needed = out + d.taps - 1;
  d.keep = std::min(size, (needed - d.padBefore) * stride);
  d.blocks = (d.keep + stride - 1) / stride;
  d.tail = d.blocks * stride - d.keep;
  d.padAfter = needed - d.padBefore - d.blocks;
  return d;
}

struct SpaceToDepthConvsPass
    : public kgraph::impl::KGraphSpaceToDepthConvsBase<SpaceToDepthConvsPass> {
  using Base::Base;

  void runOnOperation() override {
    SmallVector<Conv2dOp> convs;
    getOperation().walk([&](Conv2dOp conv) {
      // Implicit GEMMs outside groups, as kgraph-pad-conv-channels.
      if (conv->getParentOfType<FusedOp>() || !isGemmAnchor(conv) ||
          conv.getLayout() != Layout::nhwc || conv.getGroups() != 1)
        return;
      ArrayRef<int64_t> strides = conv.getStrides(),
                        dilations = conv.getDilations();
      if ((strides[0] == 1 && strides[1] == 1) || dilations[0] != 1 ||
          dilations[1] != 1)
        return;
      convs.push_back(conv);
    });
    for (Conv2dOp conv : convs)
      rewrite(conv);
  }

  void rewrite(Conv2dOp conv) {
    auto inType = llvm::cast<RankedTensorType>(conv.getInput().getType());
    auto filterType = llvm::cast<RankedTensorType>(conv.getFilter().getType());
    auto outType = llvm::cast<RankedTensorType>(conv.getType());
    const ElementTypeInfo *info = lookupElementType(inType.getElementType());
    if (!info || info->storageBytes <= 0)
      return;
    int64_t eb = info->storageBytes;
    ArrayRef<int64_t> in = inType.getShape(), filter = filterType.getShape(),
                      out = outType.getShape();
    int64_t channels = in[3];
    if (channels * eb >= kVectorBytes)
      return;
    ArrayRef<int64_t> strides = conv.getStrides(), pad = conv.getPadding();
    int64_t sh = strides[0], sw = strides[1], block = sh * sw;
    DimPlan rows = planDim(in[1], pad[0], filter[1], sh, out[1]);
    DimPlan cols = planDim(in[2], pad[2], filter[2], sw, out[2]);
    if (rows.keep <= 0 || cols.keep <= 0)
      return; // reads padding alone: left to the GEMM as it is
    // Whole vectors per rearranged pixel: pad the channels before the
    // rearrangement (C' with block * C' * eb a vector multiple: the
    // transpose then moves whole vectors) or after it, whichever gives
    // fewer channels; before on a tie.
    int64_t perVector = kVectorBytes / eb;
    auto roundUp = [](int64_t v, int64_t m) { return (v + m - 1) / m * m; };
    int64_t before = channels;
    while ((block * before) % perVector != 0)
      ++before;
    int64_t after = roundUp(block * channels, perVector);
    bool padFirst = block * before <= after;
    int64_t newChannels = padFirst ? block * before : after;
    // Multiply-adds per output: taps x channels against KH*KW*C.
    if (rows.taps * cols.taps * newChannels >
        kMaxWorkGrowth * filter[1] * filter[2] * channels)
      return;

    OpBuilder b(conv);
    Location loc = conv.getLoc();
    int64_t firstPad = padFirst ? before - channels : 0;
    // The input: the rows and columns the conv reads, zeros to whole
    // blocks, rearranged, channels padded.
    Value x = conv.getInput();
    if (rows.keep < in[1] || cols.keep < in[2])
      x = SliceOp::create(
          b, loc, ValueRange{x},
          {b.getNamedAttr("offsets", b.getDenseI64ArrayAttr({0, 0, 0, 0})),
           b.getNamedAttr("sizes", b.getDenseI64ArrayAttr(
                                       {in[0], rows.keep, cols.keep, in[3]})),
           b.getNamedAttr("strides", b.getDenseI64ArrayAttr({1, 1, 1, 1}))});
    x = padWithZeros(b, loc, x, 1, 0, rows.tail);
    x = padWithZeros(b, loc, x, 2, 0, cols.tail);
    x = spaceToDepth(b, loc, x, sh, sw, firstPad);
    x = padWithZeros(b, loc, x, 3, 0,
                     newChannels - block * (channels + firstPad));
    // The filter: the shift's zero taps first, zeros after KH, KW to whole
    // blocks, rearranged like the input.
    Value w = conv.getFilter();
    w = padWithZeros(b, loc, w, 1, rows.shift,
                     rows.taps * sh - filter[1] - rows.shift);
    w = padWithZeros(b, loc, w, 2, cols.shift,
                     cols.taps * sw - filter[2] - cols.shift);
    w = spaceToDepth(b, loc, w, sh, sw, firstPad);
    w = padWithZeros(b, loc, w, 3, 0,
                     newChannels - block * (channels + firstPad));

    SmallVector<NamedAttribute> attrs = {
        b.getNamedAttr("layout", LayoutAttr::get(b.getContext(), Layout::nhwc)),
        b.getNamedAttr("padding",
                       b.getDenseI64ArrayAttr({rows.padBefore, rows.padAfter,
                                               cols.padBefore, cols.padAfter}))};
    if (auto precision = conv.getPrecisionAttr())
      attrs.push_back(b.getNamedAttr("precision", precision));
    Value result = Conv2dOp::create(b, loc, TypeRange{outType},
                                    ValueRange{x, w}, attrs);
    conv.replaceAllUsesWith(result);
    conv.erase();
  }
};

} // namespace
