//===- GPUToPTX.h - kernel modules to one PTX module ------------*- C++ -*-===//

#ifndef KGRAPH_CONVERSION_GPUTOPTX_GPUTOPTX_H
#define KGRAPH_CONVERSION_GPUTOPTX_GPUTOPTX_H

#include "mlir/Support/LLVM.h"
#include "llvm/ADT/StringRef.h"

#include <string>

namespace kgraph {

/// Discardable attribute of a gpu.module that kgraph-split-kernel-modules
/// cut out of another: the symbol name of the module it came from, which
/// kgraph-serialize-kernels gives the joined gpu.binary.
inline constexpr llvm::StringLiteral kSplitFromAttrName = "kgraph.split_from";

/// Links the PTX modules `modules` (same .version, .target and
/// .address_size) into one, in order. A top-level definition that several
/// modules hold with the same text is kept once; a module-local one (no
/// .visible, .extern, .weak or .common) that another module defines
/// differently under the same name is renamed in its module. Fails with
/// `error` on different headers, on an externally visible name defined
/// differently, or on text that is not PTX at module level.
mlir::LogicalResult linkPTX(llvm::ArrayRef<llvm::StringRef> modules,
                            std::string &linked, std::string &error);

} // namespace kgraph

#endif // KGRAPH_CONVERSION_GPUTOPTX_GPUTOPTX_H
