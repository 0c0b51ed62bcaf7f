//===- ZeroPadding.h - zeros around a tensor along one axis ---*- C++ -*-===//
//
// The graph rewrites that pad a conv2d's operands (kgraph-pad-conv-channels,
// kgraph-space-to-depth-convs) put zeros around a tensor with a
// kgraph.concat of splat-zero constants.
//
//===----------------------------------------------------------------------===//

#ifndef KGRAPH_LIB_DIALECT_KGRAPH_TRANSFORMS_ZEROPADDING_H
#define KGRAPH_LIB_DIALECT_KGRAPH_TRANSFORMS_ZEROPADDING_H

#include "mlir/IR/Builders.h"

namespace kgraph {

/// `value` with `before` and `after` zero slices along `axis` (itself when
/// both are 0).
mlir::Value padWithZeros(mlir::OpBuilder &b, mlir::Location loc,
                         mlir::Value value, int64_t axis, int64_t before,
                         int64_t after);

} // namespace kgraph

#endif // KGRAPH_LIB_DIALECT_KGRAPH_TRANSFORMS_ZEROPADDING_H
