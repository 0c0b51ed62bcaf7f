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

struct SMTarget;

/// Returns failure (with a diagnostic) unless `group` is one kgraph.matmul
/// that the GEMM emitter can compile with `config` (for `target`, if given).
mlir::LogicalResult checkMatmulGroup(FusedOp group, MatmulConfigAttr config,
                                     const SMTarget *target);

/// Dynamic shared memory the GEMM kernel of `op` uses with `config`.
int64_t getMatmulSharedMemoryBytes(MatmulOp op, MatmulConfigAttr config);

/// Builds the body of `kernel` (arguments: the group's inputs, then its
/// result) computing the matmul `group` with `config` on `target`.
mlir::LogicalResult emitMatmulKernel(FusedOp group, MatmulConfigAttr config,
                                     mlir::gpu::GPUFuncOp kernel,
                                     const SMTarget &target);

} // namespace kgraph

#endif // KGRAPH_CONVERSION_KGRAPHTOGPU_KGRAPHTOGPU_H
