//===- PadConvChannels.cpp - zero channels up to one vector per pixel -----===//
//
// kgraph-pad-conv-channels (Passes.td): an implicit-GEMM nhwc conv2d whose
// input channels fill less than one vector per pixel reads its input and
// filter through zero-padded copies (kgraph.concat with a splat zero), so
// every filter tap of its im2col gather is one vector load.
//
//===----------------------------------------------------------------------===//

#include "kgraph/Dialect/KGraph/Transforms/FusionRules.h"
#include "kgraph/Dialect/KGraph/Transforms/Passes.h"
#include "kgraph/Target/ElementTypes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/IR/Builders.h"

namespace kgraph {
#define GEN_PASS_DEF_KGRAPHPADCONVCHANNELS
#include "kgraph/Dialect/KGraph/Transforms/Passes.h.inc"
} // namespace kgraph

using namespace mlir;
using namespace kgraph;

namespace {

/// `value` with `extra` zero channels appended along its last dim.
Value padLastDim(OpBuilder &b, Location loc, Value value, int64_t extra) {
  auto type = llvm::cast<RankedTensorType>(value.getType());
  SmallVector<int64_t> zeroShape(type.getShape());
  zeroShape.back() = extra;
  auto zeroType = RankedTensorType::get(zeroShape, type.getElementType());
  Type et = type.getElementType();
  TypedAttr zero = llvm::isa<FloatType>(et) ? TypedAttr(b.getFloatAttr(et, 0.0))
                                            : TypedAttr(b.getIntegerAttr(et, 0));
  Value zeros = arith::ConstantOp::create(
      b, loc, DenseElementsAttr::get(zeroType, zero));
  return ConcatOp::create(b, loc, ValueRange{value, zeros},
                          b.getI64IntegerAttr(type.getRank() - 1));
}

struct PadConvChannelsPass
    : public kgraph::impl::KGraphPadConvChannelsBase<PadConvChannelsPass> {
  using Base::Base;

  void runOnOperation() override {
    if (bytes == 0)
      return;
    if (bytes != 4 && bytes != 8 && bytes != 16) {
      getOperation().emitError()
          << "kgraph-pad-conv-channels: bytes must be 0, 4, 8 or 16, got "
          << unsigned(bytes);
      return signalPassFailure();
    }
    SmallVector<Conv2dOp> convs;
    getOperation().walk([&](Conv2dOp conv) {
      // Only the implicit GEMMs outside groups: a stencil or window op
      // reads its channels its own way, and grouped ops are decided.
      if (conv->getParentOfType<FusedOp>() || !isGemmAnchor(conv) ||
          conv.getLayout() != Layout::nhwc || conv.getGroups() != 1)
        return;
      convs.push_back(conv);
    });
    for (Conv2dOp conv : convs) {
      auto inType = llvm::cast<RankedTensorType>(conv.getInput().getType());
      const ElementTypeInfo *info =
          lookupElementType(inType.getElementType());
      if (!info || info->storageBytes <= 0 || bytes % info->storageBytes != 0)
        continue;
      int64_t channels = inType.getShape().back();
      int64_t padded = int64_t(bytes) / info->storageBytes;
      if (channels >= padded)
        continue;
      OpBuilder b(conv);
      Location loc = conv.getLoc();
      Value input = padLastDim(b, loc, conv.getInput(), padded - channels);
      Value filter = padLastDim(b, loc, conv.getFilter(), padded - channels);
      conv.getInputMutable().assign(input);
      conv.getFilterMutable().assign(filter);
    }
  }
};

} // namespace
