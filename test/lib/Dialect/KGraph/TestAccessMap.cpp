//===- TestAccessMap.cpp - test pass of kgraph::AccessMap ------------------===//
//
// kgraph-test-access-map: for every function returning the result of a chain
// of kgraph.transpose / kgraph.slice / kgraph.broadcast_to ops on one of its
// arguments, builds the AccessMap from the returned value to that argument
// (composing the ops' maps; with `kgraph.test.activation = "nchw"|"nhwc"` on
// the function, read at logical (N, C, H, W) coordinates of the returned
// activation), and
//   - remarks on the map: its print() form, contiguous and uniform extents,
//     preservesFlatIndex, isUniform, and for every `kgraph.test.width` W,
//     which output dims isContiguousAlong(d, W) holds for;
//   - checks it against the ops themselves, element by element: every output
//     element's linear operand index must be the one the ops' own
//     definitions give (an error names the first element that differs);
//   - emits its index arithmetic as functions for FileCheck:
//     @<name>_linear(%flat) (the flat output index as one coordinate group,
//     outer dim first), @<name>_indices(%d0, ...) (emitIndices), and with
//     `kgraph.test.groups = [[first, count], ...]` @<name>_groups(%g0, ...)
//     (those coordinate groups, inner dim first).
//
//===----------------------------------------------------------------------===//

#include "kgraph/Dialect/KGraph/IR/AccessMap.h"
#include "kgraph/Dialect/KGraph/IR/KGraphOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/Pass.h"
#include "llvm/Support/raw_ostream.h"

using namespace mlir;
using namespace kgraph;

namespace {

/// The input coordinates `op` reads for its output coordinates `out`,
/// straight from the op's definition (independent of AccessMap).
SmallVector<int64_t> readCoords(Operation *op, ArrayRef<int64_t> out) {
  auto inShape = llvm::cast<RankedTensorType>(op->getOperand(0).getType())
                     .getShape();
  SmallVector<int64_t> in(inShape.size(), 0);
  if (auto t = llvm::dyn_cast<TransposeOp>(op)) {
    // result[i0, ..., in] = input[j] with j[permutation[k]] = ik.
    for (auto [k, p] : llvm::enumerate(t.getPermutation()))
      in[p] = out[k];
  } else if (auto s = llvm::dyn_cast<SliceOp>(op)) {
    for (size_t d = 0; d < in.size(); ++d)
      in[d] = s.getOffsets()[d] + out[d] * s.getStrides()[d];
  } else {
    size_t lead = out.size() - in.size();
    for (size_t d = 0; d < in.size(); ++d)
      in[d] = inShape[d] == 1 ? 0 : out[lead + d];
  }
  return in;
}

int64_t rowMajorIndex(ArrayRef<int64_t> shape, ArrayRef<int64_t> coords) {
  int64_t index = 0;
  for (auto [size, c] : llvm::zip(shape, coords))
    index = index * size + c;
  return index;
}

struct TestAccessMapPass
    : public PassWrapper<TestAccessMapPass, OperationPass<ModuleOp>> {
  MLIR_DEFINE_EXPLICIT_INTERNAL_INLINE_TYPE_ID(TestAccessMapPass)

  StringRef getArgument() const final { return "kgraph-test-access-map"; }
  StringRef getDescription() const final {
    return "Build, check and emit the AccessMap of data movement chains";
  }
  void getDependentDialects(DialectRegistry &registry) const override {
    registry.insert<arith::ArithDialect, func::FuncDialect>();
  }

  void runOnOperation() override {
    SmallVector<func::FuncOp> funcs(getOperation().getOps<func::FuncOp>());
    for (func::FuncOp func : funcs)
      if (failed(runOnFunction(func)))
        return signalPassFailure();
  }

  LogicalResult runOnFunction(func::FuncOp func) {
    if (func.isExternal())
      return success();
    auto ret = llvm::dyn_cast<func::ReturnOp>(
        func.getBody().front().getTerminator());
    if (!ret || ret.getNumOperands() != 1)
      return func.emitOpError("must return one value");
    // The ops from the returned value back to a function argument.
    SmallVector<Operation *> chain;
    Value v = ret.getOperand(0);
    while (Operation *op = v.getDefiningOp()) {
      if (!llvm::isa<TransposeOp, SliceOp, BroadcastToOp>(op))
        return op->emitOpError("is not a transpose, slice or broadcast_to");
      chain.push_back(op);
      v = op->getOperand(0);
    }
    ArrayRef<int64_t> resultShape =
        llvm::cast<RankedTensorType>(ret.getOperand(0).getType()).getShape();

    std::optional<Layout> layout;
    if (auto attr = func->getAttrOfType<StringAttr>("kgraph.test.activation")) {
      if (attr.getValue() != "nchw" && attr.getValue() != "nhwc")
        return func.emitOpError("kgraph.test.activation must be nchw or nhwc");
      if (resultShape.size() != 4)
        return func.emitOpError("returns no 4-D activation");
      layout = attr.getValue() == "nhwc" ? Layout::nhwc : Layout::nchw;
    }
    AccessMap map = layout ? AccessMap::activation(resultShape, *layout)
                           : AccessMap::identity(resultShape);
    for (Operation *op : chain)
      map = map.compose(*AccessMap::forDataMovementOp(op));

    // Check every output element against the ops' own definitions.
    ArrayRef<int64_t> outShape = map.getOutShape();
    int64_t total = 1;
    for (int64_t s : outShape)
      total *= s;
    SmallVector<int64_t> out(outShape.size(), 0);
    for (int64_t flat = 0; flat < total; ++flat) {
      for (int64_t d = outShape.size() - 1, rest = flat; d >= 0; --d) {
        out[d] = rest % outShape[d];
        rest /= outShape[d];
      }
      SmallVector<int64_t> coords(out);
      if (layout) {
        // Logical (n, c, h, w) to the stored order.
        if (*layout == Layout::nhwc)
          coords = {out[0], out[2], out[3], out[1]};
      }
      for (Operation *op : chain)
        coords = readCoords(op, coords);
      int64_t expected = rowMajorIndex(map.getOperandShape(), coords);
      if (int64_t got = map.getLinearIndex(out); got != expected) {
        InFlightDiagnostic diag = func.emitError("access map reads element ");
        diag << got << " at output element " << flat << "; the ops read "
             << expected;
        return diag;
      }
    }

    std::string text;
    llvm::raw_string_ostream os(text);
    map.print(os);
    os << "; contiguous " << map.getContiguousExtent() << ", uniform "
       << map.getUniformExtent();
    if (map.preservesFlatIndex())
      os << ", flat order kept";
    if (map.isUniform())
      os << ", one element";
    if (auto widths = func->getAttrOfType<DenseI64ArrayAttr>("kgraph.test.width"))
      for (int64_t w : widths.asArrayRef()) {
        os << "; vector " << w << " along";
        bool any = false;
        for (int64_t d = 0; d < map.getOutRank(); ++d)
          if (map.isContiguousAlong(d, w)) {
            os << " d" << d;
            any = true;
          }
        if (!any)
          os << " none";
      }
    func.emitRemark(text);

    emitFunctions(func, map);
    return success();
  }

  /// A function @<name>_<suffix>(%args: index...) -> (results) built by
  /// `body` from its arguments.
  void makeFunction(func::FuncOp after, StringRef suffix, int64_t numArgs,
                    function_ref<SmallVector<Value>(OpBuilder &, ValueRange)>
                        body) {
    OpBuilder b(after->getContext());
    b.setInsertionPointAfter(after);
    Location loc = after.getLoc();
    IndexType index = b.getIndexType();
    SmallVector<Type> args(numArgs, index);
    auto func = func::FuncOp::create(
        b, loc, (after.getName() + "_" + suffix).str(),
        b.getFunctionType(args, {}));
    Block *entry = func.addEntryBlock();
    b.setInsertionPointToStart(entry);
    SmallVector<Value> results = body(b, entry->getArguments());
    func::ReturnOp::create(b, loc, results);
    func.setType(b.getFunctionType(args, ValueRange(results).getTypes()));
  }

  void emitFunctions(func::FuncOp func, const AccessMap &map) {
    Location loc = func.getLoc();
    if (auto groups =
            func->getAttrOfType<ArrayAttr>("kgraph.test.groups")) {
      makeFunction(func, "groups", groups.size(),
                   [&](OpBuilder &b, ValueRange args) {
                     SmallVector<CoordGroup> coordGroups;
                     for (auto [g, arg] : llvm::zip(groups, args)) {
                       auto fc = llvm::cast<DenseI64ArrayAttr>(g).asArrayRef();
                       coordGroups.push_back({fc[0], fc[1], arg});
                     }
                     Value idx = map.emitLinearIndex(
                         b, loc, coordGroups, Value(), TermOrder::InnerFirst);
                     if (!idx)
                       idx = arith::ConstantIndexOp::create(b, loc, 0);
                     return SmallVector<Value>{idx};
                   });
    }
    makeFunction(func, "indices", map.getOutRank(),
                 [&](OpBuilder &b, ValueRange args) {
                   return map.emitIndices(b, loc, SmallVector<Value>(args));
                 });
    makeFunction(func, "linear", 1, [&](OpBuilder &b, ValueRange args) {
      Value idx = map.emitLinearIndex(b, loc, {{0, map.getOutRank(), args[0]}});
      if (!idx)
        idx = arith::ConstantIndexOp::create(b, loc, 0);
      return SmallVector<Value>{idx};
    });
  }
};

} // namespace

namespace kgraph::test {
void registerTestAccessMapPass() { PassRegistration<TestAccessMapPass>(); }
} // namespace kgraph::test
