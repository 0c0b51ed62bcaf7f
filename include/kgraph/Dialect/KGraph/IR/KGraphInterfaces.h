//===- KGraphInterfaces.h - kernel-config interface -------------*- C++ -*-===//
//
// The C++ side of KGraphInterfaces.td: the launch shape and estimate a
// kernel configuration reports.
//
//===----------------------------------------------------------------------===//

#ifndef KGRAPH_DIALECT_KGRAPH_IR_KGRAPHINTERFACES_H
#define KGRAPH_DIALECT_KGRAPH_IR_KGRAPHINTERFACES_H

#include "mlir/IR/Attributes.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/Support/LLVM.h"

#include <array>
#include <cstdint>

namespace kgraph {
struct SMTarget;

/// How a kernel is launched: grid and block extents (x, y, z) and bytes of
/// dynamic shared memory.
struct KernelLaunch {
  std::array<int64_t, 3> grid = {1, 1, 1};
  std::array<int64_t, 3> block = {1, 1, 1};
  int64_t sharedMemoryBytes = 0;
};

/// A selection model's estimate for one configuration: what one block needs
/// and how long the kernel should take on the target's reference part.
struct KernelEstimate {
  int64_t sharedMemoryBytes = 0;
  int64_t registersPerThread = 0;
  int64_t threadsPerBlock = 0;
  double microseconds = 0;
};
} // namespace kgraph

#include "kgraph/Dialect/KGraph/IR/KGraphAttrInterfaces.h.inc"

#endif // KGRAPH_DIALECT_KGRAPH_IR_KGRAPHINTERFACES_H
