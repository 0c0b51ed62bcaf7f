//===- ReduceCombine.h - steps shared by the reduction emitters -*- C++ -*-===//
//
// Private to lib/Conversion/KGraphToGPU: the input offsets, start values and
// combining steps of a reduction, and the combine of a row's partial results
// across its threads (xor shuffles within a warp, one shared-memory slot per
// warp past it), shared by the single-pass kernel (ReduceEmitter.cpp) and the
// multi-reduction kernel (MultiReduceEmitter.cpp). Floats accumulate in f32
// (maximumf, so NaN propagates), integers in i32.
//
//===----------------------------------------------------------------------===//

#ifndef KGRAPH_LIB_CONVERSION_KGRAPHTOGPU_REDUCECOMBINE_H
#define KGRAPH_LIB_CONVERSION_KGRAPHTOGPU_REDUCECOMBINE_H

#include "kgraph/Dialect/KGraph/Transforms/ReduceTiling.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/IR/Builders.h"

namespace kgraph::detail {

/// The input offset of the run coordinates of `linear` (row-major over
/// `runs`; ReduceTiling.h).
mlir::Value emitRunOffset(mlir::OpBuilder &b, mlir::Location loc,
                          mlir::Value linear,
                          llvm::ArrayRef<ReduceLayout::Run> runs);

/// The start value of a `kind` reduction accumulating in `accType`.
mlir::Value emitReduceIdentity(mlir::OpBuilder &b, mlir::Location loc,
                               ReduceKind kind, mlir::Type accType);

/// One combining step of a `kind` reduction (mean sums).
mlir::Value emitReduceCombine(mlir::OpBuilder &b, mlir::Location loc,
                              ReduceKind kind, mlir::Value x, mlir::Value y);

/// The result of a `kind` reduction of `count` elements from its accumulator
/// `acc`: a mean divided by `count`, rounded to `resultType` (the result's
/// element type) and back to compute type.
mlir::Value emitReduceFinish(mlir::OpBuilder &b, mlir::Location loc,
                             ReduceKind kind, mlir::Value acc, int64_t count,
                             mlir::Type resultType);

/// xor-shuffle reduction over aligned groups of `n` lanes (n <= 32): every
/// lane of a group gets the group's total.
mlir::Value emitShuffleReduce(mlir::OpBuilder &b, mlir::Location loc,
                              ReduceKind kind, mlir::Value v, int64_t n);

/// Combines the partial results `v` of the `threads` adjacent threads of
/// each row of a block (`lane`: the thread's index in its row,
/// `rowInBlock`: its row's in the block). Past a warp, through `partials`
/// (a workgroup buffer of one accumulator per warp of the block), between
/// two barriers. Lane 0 of the row gets the total, and with `everyLane`
/// every thread of the row does.
mlir::Value emitRowCombine(mlir::OpBuilder &b, mlir::Location loc,
                           ReduceKind kind, mlir::Value v, int64_t threads,
                           mlir::Value lane, mlir::Value rowInBlock,
                           mlir::Value partials, bool everyLane);

/// Emits the kernel of the multi-reduction group `group` (described by
/// `info`, not single-pass) into `kernel` with the verified `config`
/// (MultiReduceEmitter.cpp).
mlir::LogicalResult emitMultiReduceKernel(FusedOp group,
                                          ReduceConfigAttr config,
                                          const ReduceGroupInfo &info,
                                          mlir::gpu::GPUFuncOp kernel);

} // namespace kgraph::detail

#endif // KGRAPH_LIB_CONVERSION_KGRAPHTOGPU_REDUCECOMBINE_H
