//===- PadConvChannels.cpp - zero channels up to one vector per pixel -----===//
//
// kgraph-pad-conv-channels (Passes.td): an implicit-GEMM nhwc conv2d whose
// input channels fill less than one vector per pixel reads its input and
// filter through zero-padded copies (kgraph.concat with a splat zero), so
// every filter tap of its im2col gather is one vector load.
//
//===----------------------------------------------------------------------===//

#include "ZeroPadding.h"
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

Value kgraph::padWithZeros(OpBuilder &b, Location loc, Value value,
                           int64_t axis, int64_t before, int64_t after) {
  if (before == 0 && after == 0)
    return value;
  auto type = llvm::cast<RankedTensorType>(value.getType());
  auto zeros = [&](int64_t n) -> Value {
    SmallVector<int64_t> shape(type.getShape());
    shape[axis] = n;
    auto zeroType = RankedTensorType::get(shape, type.getElementType());
    return arith::ConstantOp::create(
        b, loc, llvm::cast<TypedAttr>(b.getZeroAttr(zeroType)));
  };
  SmallVector<Value> parts;
  if (before > 0)
    parts.push_back(zeros(before));
  parts.push_back(value);
  if (after > 0)
    parts.push_back(zeros(after));
  return ConcatOp::create(b, loc, parts, b.getI64IntegerAttr(axis));
}

namespace {

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
      Value input =
          padWithZeros(b, loc, conv.getInput(), 3, 0, padded - channels);
      Value filter =
          padWithZeros(b, loc, conv.getFilter(), 3, 0, padded - channels);
      conv.getInputMutable().assign(input);
      conv.getFilterMutable().assign(filter);
    }
  }
};

} // namespace
