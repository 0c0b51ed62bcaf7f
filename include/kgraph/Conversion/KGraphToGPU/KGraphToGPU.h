//===- KGraphToGPU.h - kgraph groups to gpu kernels -------------*- C++ -*-===//

#ifndef KGRAPH_CONVERSION_KGRAPHTOGPU_KGRAPHTOGPU_H
#define KGRAPH_CONVERSION_KGRAPHTOGPU_KGRAPHTOGPU_H

#include "kgraph/Dialect/KGraph/IR/KGraphOps.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/NVGPU/IR/NVGPUDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/UB/IR/UBOps.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/Pass/Pass.h"

namespace kgraph {

/// Name of the gpu.module that receives kgraph's kernels.
inline constexpr llvm::StringLiteral kKernelModuleName = "kgraph_kernels";
/// Argument attribute marking a host-function argument as result #i.
inline constexpr llvm::StringLiteral kResultArgAttrName = "kgraph.result";

/// Attribute giving the logical dtype of a buffer stored in another type
/// ("i1" on i8 buffers).
inline constexpr llvm::StringLiteral kDtypeAttrName = "kgraph.dtype";

/// Element type a tensor of `elementType` is stored as in device memory
/// (i1 is stored as one byte).
mlir::Type getStorageElementType(mlir::Type elementType);

/// The kgraph.dtype attribute of a buffer holding tensors of `elementType`
/// when its storage type is another (i1 -> "i1"), else null.
mlir::StringAttr getLogicalDtypeAttr(mlir::Type elementType);

/// Memref type holding a tensor of `type` in device memory.
mlir::MemRefType getStorageMemRefType(mlir::RankedTensorType type);

/// Returns failure (with a diagnostic on the offending op) if the body of an
/// elementwise group holds something the kernel emitter cannot compute.
mlir::LogicalResult checkElementwiseGroup(FusedOp group);

/// Builds the body of `kernel` (whose arguments are the group's input memrefs
/// followed by its result memrefs) computing the elementwise `group` with
/// `config`.
mlir::LogicalResult emitElementwiseKernel(FusedOp group,
                                          ElementwiseConfigAttr config,
                                          mlir::gpu::GPUFuncOp kernel);

/// Returns failure (with a diagnostic) unless `group` is a reduction group
/// (one kgraph.reduce with elementwise producers and consumers, see
/// docs/architecture.md) that the reduction emitter can compile with
/// `config`.
mlir::LogicalResult checkReduceGroup(FusedOp group, ReduceConfigAttr config);

/// Builds the body of `kernel` (arguments: the group's inputs, then its
/// result) computing the reduction `group` with `config`.
mlir::LogicalResult emitReduceKernel(FusedOp group, ReduceConfigAttr config,
                                     mlir::gpu::GPUFuncOp kernel);

/// Builds the body of `kernel` (arguments: the transpose's input, then its
/// result) moving the lone kgraph.transpose of `group` through shared-memory
/// tiles with `config` (TransposeEmitter.cpp); failure with a diagnostic if
/// the group is not such a transpose.
mlir::LogicalResult emitTransposeKernel(FusedOp group,
                                        TransposeConfigAttr config,
                                        mlir::gpu::GPUFuncOp kernel);

struct SMTarget;

/// Patterns of kgraph-legalize-vectors: upstream lowerings of n-D
/// broadcast, shape_cast, bitcast, transpose and strided slices.
void populateLegalizeVectorsPatterns(mlir::RewritePatternSet &patterns);

/// Returns failure (with a diagnostic) unless `group` is one kgraph.matmul
/// or kgraph.conv2d (an implicit GEMM) that the GEMM emitter can compile
/// with `config` (for `target`, if given).
mlir::LogicalResult checkMatmulGroup(FusedOp group, MatmulConfigAttr config,
                                     const SMTarget *target);

/// Launch of a GEMM kernel: the grid (x over N tiles, y over M tiles, z over
/// the batch, which is the group index of a conv2d) and its dynamic shared
/// memory.
struct GemmLaunchShape {
  int64_t gridX = 1, gridY = 1, gridZ = 1;
  int64_t sharedMemoryBytes = 0;
};
/// The launch of the GEMM kernel of `group` (one kgraph.matmul or
/// kgraph.conv2d) with `config`; failure for any other group.
mlir::FailureOr<GemmLaunchShape> getGemmLaunchShape(FusedOp group,
                                                    MatmulConfigAttr config);

/// For a GEMM group with copy = tma: the tensor maps its kernel takes as one
/// extra argument after the group's buffers, the last but for a stream-K
/// kernel's workspace (see TmaPipeline.cpp and docs/launch-plan.md), as
/// dictionaries whose `arg` is the kernel argument (group input) the map
/// describes; null for copy = cp_async; failure for a non-GEMM group.
mlir::FailureOr<mlir::ArrayAttr> getGemmTensorMaps(FusedOp group,
                                                   MatmulConfigAttr config);

/// For a GEMM group with stream_k > 0: the bytes of its kernel's workspace
/// (getStreamKWorkspace); failure for a non-GEMM group.
mlir::FailureOr<int64_t> getGemmWorkspaceBytes(FusedOp group,
                                               MatmulConfigAttr config);

/// Name of the host memref.alloc attribute that marks the buffer of tensor
/// maps of a launch (read by the plan emitter).
inline constexpr llvm::StringLiteral kTensorMapsAttrName = "kgraph.tensor_maps";

/// Unit attribute of the host-side memref.alloc that is a stream-K GEMM
/// kernel's workspace (its last argument): not a plan buffer but a
/// "workspace" kernel argument, zeroed once by the runtime and left zeroed
/// by every launch (docs/launch-plan.md).
inline constexpr llvm::StringLiteral kWorkspaceAttrName = "kgraph.workspace";

/// Names of the host attributes of a kernel that reads only the function's
/// parameters (and what other such kernels computed from them): its
/// gpu.launch_func is `kgraph.once` and the memref.alloc of each of its
/// results `kgraph.derived`. The plan emitter writes them as `"once": true`
/// kernels and `derived` buffers, which a runtime computes once per device
/// after the parameter upload instead of on every call.
inline constexpr llvm::StringLiteral kOnceAttrName = "kgraph.once";

/// Name of the host memref.alloc attribute that holds the elements of a
/// tensor constant kernels do not fold (a DenseElementsAttr): the plan
/// emitter writes the buffer as kind `constant` with its bytes.
inline constexpr llvm::StringLiteral kConstantAttrName = "kgraph.constant";
inline constexpr llvm::StringLiteral kDerivedAttrName = "kgraph.derived";

/// Name of the host gpu.launch_func attribute describing the kernel for the
/// launch plan's profile fields (docs/launch-plan.md): a dictionary with
/// `ops` (the group's ops: `{op = "kgraph.conv2d", loc = "model.py:12"}`),
/// `flops` and `bytes` (getGroupWork) and `compute` (the roofline the
/// kernel's math runs on: getGroupCompute).
inline constexpr llvm::StringLiteral kKernelInfoAttrName = "kgraph.kernel_info";

/// The work model of the launch plan: arithmetic operations and compulsory
/// device-memory traffic of one group.
struct GroupWork {
  /// Operations: 2 per multiply-add of kgraph.matmul / kgraph.conv2d, one
  /// per window element of kgraph.pool2d, one per input element of
  /// kgraph.reduce, one per result element of every other computing op;
  /// data movement and constants count 0.
  int64_t flops = 0;
  /// Bytes of the group's inputs plus its results, each moved once (what
  /// any kernel computing the group must read and write at least).
  int64_t bytes = 0;
};
GroupWork getGroupWork(FusedOp group);

/// The roofline a kernel of `group` under `config` computes on:
/// "tensor_f16" (mma.sync / wgmma on f16 or bf16), "tensor_tf32",
/// "tensor_i8", else "simt" (CUDA-core fp32 lanes).
llvm::StringRef getGroupCompute(FusedOp group, KernelConfigAttrInterface config);

/// `loc` as the launch plan writes it: `file:line:col` (`file:line` when the
/// column is 0), the name of a NameLoc (with its child in parentheses when
/// known), the parts of a FusedLoc joined by ", "; empty when unknown.
std::string formatPlanLocation(mlir::Location loc);

/// Builds the body of `kernel` (arguments: the group's inputs, then its
/// result) computing the matmul or conv2d `group` with `config` on
/// `target`.
mlir::LogicalResult emitMatmulKernel(FusedOp group, MatmulConfigAttr config,
                                     mlir::gpu::GPUFuncOp kernel,
                                     const SMTarget &target);

/// Builds the body of `kernel` (arguments: the group's inputs, then its
/// results) computing the stencil `group` (StencilTiling.h) with `config`:
/// one output tile per block, intermediates in shared memory.
mlir::LogicalResult emitStencilKernel(FusedOp group, StencilConfigAttr config,
                                      mlir::gpu::GPUFuncOp kernel);

/// Succeeds if `group` meets the window-group contract (WindowTiling.h) and
/// `config` fits it on `target`; diagnoses the group otherwise.
mlir::LogicalResult checkWindowKernelGroup(FusedOp group,
                                           WindowConfigAttr config,
                                           const SMTarget &target);

/// Builds the body of `kernel` (arguments: the group's inputs, then its
/// results) computing the window `group` with `config`: W output channels
/// per thread, output pixels strided over the grid.
mlir::LogicalResult emitWindowKernel(FusedOp group, WindowConfigAttr config,
                                     mlir::gpu::GPUFuncOp kernel);

} // namespace kgraph

#endif // KGRAPH_CONVERSION_KGRAPHTOGPU_KGRAPHTOGPU_H
