//===- SplitKernelModules.cpp - one gpu.module per kernel -----------------===//
//
// The pass manager runs a pipeline nested on gpu.module on every module in
// parallel, and kgraph-serialize-kernels compiles modules in parallel: a
// module per kernel is what lets the nvvm and binary stages use every core.
// kgraph-serialize-kernels joins the pieces again into one gpu.binary.
//
//===----------------------------------------------------------------------===//

#include "kgraph/Conversion/GPUToPTX/GPUToPTX.h"
#include "kgraph/Conversion/Passes.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/IR/AttrTypeSubElements.h"
#include "mlir/IR/SymbolTable.h"

namespace kgraph {
#define GEN_PASS_DEF_KGRAPHSPLITKERNELMODULES
#include "kgraph/Conversion/Passes.h.inc"
} // namespace kgraph

using namespace mlir;
using namespace kgraph;

/// Moves every kernel of `module` but the first into a module of its own,
/// inserted after `module` in kernel order; returns the new module of each
/// moved kernel. A module holding anything but kernels (device functions,
/// globals the kernels may share) stays whole.
static DenseMap<StringAttr, StringAttr> splitModule(gpu::GPUModuleOp module,
                                                    SymbolTable &symbols) {
  DenseMap<StringAttr, StringAttr> moved;
  SmallVector<gpu::GPUFuncOp> kernels;
  for (Operation &op : module.getBody()->getOperations()) {
    auto func = llvm::dyn_cast<gpu::GPUFuncOp>(op);
    if (!func || !func.isKernel())
      return moved;
    kernels.push_back(func);
  }
  if (kernels.size() < 2)
    return moved;
  // A piece of a piece still names the first module.
  auto origin = module->getAttrOfType<StringAttr>(kSplitFromAttrName);
  if (!origin)
    origin = module.getSymNameAttr();
  OpBuilder builder(module);
  builder.setInsertionPointAfter(module);
  for (gpu::GPUFuncOp kernel : llvm::drop_begin(kernels)) {
    auto piece = llvm::cast<gpu::GPUModuleOp>(builder.cloneWithoutRegions(*module));
    piece.getBodyRegion().emplaceBlock();
    piece.setName((origin.getValue() + "_" + kernel.getName()).str());
    symbols.insert(piece, Block::iterator(piece));
    piece->setAttr(kSplitFromAttrName, origin);
    kernel->moveBefore(piece.getBody(), piece.getBody()->end());
    moved[kernel.getNameAttr()] = piece.getSymNameAttr();
    builder.setInsertionPointAfter(piece);
  }
  return moved;
}

namespace {
struct SplitKernelModulesPass
    : public kgraph::impl::KGraphSplitKernelModulesBase<
          SplitKernelModulesPass> {
  void runOnOperation() override {
    ModuleOp top = getOperation();
    SymbolTable symbols(top);
    // Where each moved kernel went: @module::@kernel -> @piece::@kernel.
    DenseMap<std::pair<StringAttr, StringAttr>, StringAttr> moves;
    for (auto module :
         llvm::make_early_inc_range(top.getOps<gpu::GPUModuleOp>()))
      for (auto [kernel, piece] : splitModule(module, symbols))
        moves[{module.getSymNameAttr(), kernel}] = piece;
    if (moves.empty())
      return;
    // Every reference to a moved kernel (gpu.launch_func's, any other).
    AttrTypeReplacer replacer;
    replacer.addReplacement([&](SymbolRefAttr ref) -> std::optional<Attribute> {
      if (ref.getNestedReferences().size() != 1)
        return std::nullopt;
      auto it = moves.find({ref.getRootReference(), ref.getLeafReference()});
      if (it == moves.end())
        return std::nullopt;
      return SymbolRefAttr::get(it->second, ref.getNestedReferences());
    });
    // Kernel bodies never name a kernel: only what is outside the modules.
    top->walk<WalkOrder::PreOrder>([&](Operation *op) {
      if (llvm::isa<gpu::GPUModuleOp>(op))
        return WalkResult::skip();
      replacer.replaceElementsIn(op);
      return WalkResult::advance();
    });
  }
};
} // namespace
