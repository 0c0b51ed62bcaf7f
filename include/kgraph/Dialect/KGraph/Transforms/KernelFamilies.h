//===- KernelFamilies.h - group kinds and configuration spaces --*- C++ -*-===//
//
// The seam between choosing a kernel configuration and emitting the kernel.
// A group's kind (GroupKind: elementwise, gemm, reduce, stencil, transpose;
// copy is reserved) is decided once: kgraph-form-kernels and kgraph-fuse record
// classifyGroup()'s answer on the kgraph.fused op, and every later pass reads
// it. Each kind has one configuration attribute implementing
// KernelConfigAttrInterface (verify, launch, estimate), one selection model
// that enumerates and ranks the legal candidates, and one emitter.
//
//===----------------------------------------------------------------------===//

#ifndef KGRAPH_DIALECT_KGRAPH_TRANSFORMS_KERNELFAMILIES_H
#define KGRAPH_DIALECT_KGRAPH_TRANSFORMS_KERNELFAMILIES_H

#include "kgraph/Dialect/KGraph/IR/KGraphOps.h"

#include "mlir/IR/DialectRegistry.h"
#include "mlir/Support/LLVM.h"
#include "llvm/Support/JSON.h"

#include <string>

namespace kgraph {

struct SMTarget;

/// The kernel family of a group body, as kgraph-form-kernels and kgraph-fuse
/// record it: stencil if it holds a pool2d or a stencil conv2d
/// (isStencilOp), gemm if it holds a matmul or another conv2d, reduce if it
/// holds a reduce; a lone kgraph.transpose is transpose if it moves the
/// innermost dim (TransposeTiling.h), else elementwise (a vector copy through
/// its access map); elementwise if its data-movement ops are all access-map
/// ops (isAccessMapOp) feeding elementwise ops; copy if it holds another
/// data-movement op; else elementwise.
GroupKind classifyGroup(FusedOp group);

/// The kind a pass should treat `group` as: the recorded `kind`, else the
/// family of a pinned kernel configuration that the body can be (a conv2d
/// pinned to the GEMM kernel stays there), else classifyGroup(). Fails with
/// a diagnostic on the group when the recorded kind and a pinned
/// configuration disagree, or a pinned configuration is not one the body can
/// have.
mlir::FailureOr<GroupKind> resolveGroupKind(FusedOp group);

/// The kernel configuration attribute of `group` (its 'kgraph.config'), or
/// a null interface with a diagnostic when it has none or it is not a
/// kernel configuration.
KernelConfigAttrInterface getKernelConfig(FusedOp group);

/// One legal configuration with the model's estimate.
struct ConfigCandidate {
  KernelConfigAttrInterface config;
  KernelEstimate estimate;
};

/// Checks the body of `group` against its family's contract (the
/// diagnostics of each family's analysis: shapes, element types, what may
/// be fused) before any configuration is chosen or verified.
mlir::LogicalResult checkGroupForKind(FusedOp group, GroupKind kind,
                                      const SMTarget &target);

/// The legal configurations of `group` (of kind `kind`) on `target`, best
/// first; rank 1 is the family's default choice. Every candidate passed
/// KernelConfigAttrInterface::verifyForGroup, the check pinned
/// configurations get too. At most `limit` candidates (0: all). Fails with a
/// diagnostic when the group has no kernel on `target`.
mlir::FailureOr<llvm::SmallVector<ConfigCandidate>>
listConfigCandidates(FusedOp group, GroupKind kind, const SMTarget &target,
                     size_t limit = 0);

/// `kgraph-opt --list-configs=N`: for every group of `module` (after kernel
/// formation), `{"function", "group": location, "kind", "pinned"?,
/// "signature", "structure", "shape", "space", "problem" (its ProblemKey
/// and configuration-space version, TuningDB.h), "kernel" (the group alone
/// with the default configuration, printStandaloneKernel), "candidates":
/// [{"config": attribute text, "estimate_us"}...]}`, best first, at most
/// `limit` candidates each. Fails with a diagnostic on a
/// group that has no kernel on `target`.
mlir::FailureOr<llvm::json::Array>
listModuleConfigCandidates(mlir::ModuleOp module, const SMTarget &target,
                           size_t limit);

/// Attaches KernelConfigAttrInterface to the four configuration attributes
/// (kgraph::registerAllDialects calls it; an embedder registering only the
/// dialect must call it too).
void registerKernelConfigModels(mlir::DialectRegistry &registry);

} // namespace kgraph

#endif // KGRAPH_DIALECT_KGRAPH_TRANSFORMS_KERNELFAMILIES_H
