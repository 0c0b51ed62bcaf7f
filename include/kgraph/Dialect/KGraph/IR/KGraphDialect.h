//===- KGraphDialect.h - kgraph dialect -------------------------*- C++ -*-===//

#ifndef KGRAPH_DIALECT_KGRAPH_IR_KGRAPHDIALECT_H
#define KGRAPH_DIALECT_KGRAPH_IR_KGRAPHDIALECT_H

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/IR/Dialect.h"

#include "kgraph/Dialect/KGraph/IR/KGraphDialect.h.inc"

#endif // KGRAPH_DIALECT_KGRAPH_IR_KGRAPHDIALECT_H
