//===- KGraphInterfaces.td - kernel-config interface -------*- tablegen -*-===//
//
// The one interface every kernel configuration attribute implements: what a
// configuration means for its kernel family, asked by tiling, the candidate
// list and the lowering alike, so none of them switches over config types.
//
//===----------------------------------------------------------------------===//

#ifndef KGRAPH_DIALECT_KGRAPH_IR_KGRAPHINTERFACES_TD
#define KGRAPH_DIALECT_KGRAPH_IR_KGRAPHINTERFACES_TD

include "mlir/IR/OpBase.td"

def KGraph_KernelConfigAttrInterface
    : AttrInterface<"KernelConfigAttrInterface"> {
  let cppNamespace = "::kgraph";
  let description = [{
    A kernel configuration (`kgraph.config` on a `kgraph.fused` group):
    `#kgraph.elementwise_config`, `#kgraph.matmul_config`,
    `#kgraph.reduce_config` or `#kgraph.stencil_config`. The models live
    beside each family's selection model (lib/Dialect/KGraph/Transforms/
    KernelConfigModels.cpp) and are attached by
    `kgraph::registerKernelConfigModels`, which `kgraph::registerAllDialects`
    calls. Adding a kernel family is one config attribute with a model, one
    selection model (candidates) and one emitter.
  }];
  // `group` is the kgraph.fused op the configuration is (to be) attached to.
  let methods = [
    InterfaceMethod<[{
        The kernel family (group kind) this configuration belongs to, which
        also names the emitter that lowers it.
      }], "::kgraph::GroupKind", "getGroupKind">,
    InterfaceMethod<[{
        The one legality check of a configuration on `group` for `target`,
        for pinned, listed and chosen configurations alike; reports through
        `emitError`.
      }], "::mlir::LogicalResult", "verifyForGroup",
      (ins "::mlir::Operation *":$group, "const ::kgraph::SMTarget &":$target,
           "::llvm::function_ref<::mlir::InFlightDiagnostic()>":$emitError)>,
    InterfaceMethod<[{
        Grid, block and dynamic shared memory of the kernel of `group`. Only
        meaningful for a configuration that verifyForGroup accepted.
      }], "::kgraph::KernelLaunch", "getLaunch",
      (ins "::mlir::Operation *":$group, "const ::kgraph::SMTarget &":$target)>,
    InterfaceMethod<[{
        The selection model's estimate of one block's resources and of the
        kernel's time on `target`.
      }], "::kgraph::KernelEstimate", "estimate",
      (ins "::mlir::Operation *":$group, "const ::kgraph::SMTarget &":$target)>,
  ];
}

#endif // KGRAPH_DIALECT_KGRAPH_IR_KGRAPHINTERFACES_TD
