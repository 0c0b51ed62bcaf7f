//===- Passes.h - kgraph conversion passes ----------------------*- C++ -*-===//

#ifndef KGRAPH_CONVERSION_PASSES_H
#define KGRAPH_CONVERSION_PASSES_H

#include "kgraph/Conversion/KGraphToGPU/KGraphToGPU.h"

namespace kgraph {

#define GEN_PASS_DECL
#include "kgraph/Conversion/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "kgraph/Conversion/Passes.h.inc"

} // namespace kgraph

#endif // KGRAPH_CONVERSION_PASSES_H
