//===- KGraphOps.h - kgraph ops ---------------------------------*- C++ -*-===//

#ifndef KGRAPH_DIALECT_KGRAPH_IR_KGRAPHOPS_H
#define KGRAPH_DIALECT_KGRAPH_IR_KGRAPHOPS_H

#include "kgraph/Dialect/KGraph/IR/KGraphDialect.h"
#include "kgraph/Dialect/KGraph/IR/KGraphTraits.h"
#include "mlir/Bytecode/BytecodeOpInterface.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/IR/OpImplementation.h"
#include "mlir/Interfaces/InferTypeOpInterface.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

#include "kgraph/Dialect/KGraph/IR/KGraphEnums.h.inc"

#include "kgraph/Dialect/KGraph/IR/KGraphInterfaces.h"

#define GET_ATTRDEF_CLASSES
#include "kgraph/Dialect/KGraph/IR/KGraphAttrs.h.inc"

#define GET_OP_CLASSES
#include "kgraph/Dialect/KGraph/IR/KGraphOps.h.inc"

#endif // KGRAPH_DIALECT_KGRAPH_IR_KGRAPHOPS_H
