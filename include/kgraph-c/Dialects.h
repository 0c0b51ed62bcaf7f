/*===- kgraph-c/Dialects.h - C API for the kgraph dialect ---------*- C -*-===*\
|*                                                                            *|
|* The C entry points of libKGraphCAPI.so: the kgraph dialect handle and the  *|
|* registration hooks an embedding compiler (or Python through ctypes) calls  *|
|* before parsing kgraph IR or running kgraph passes. libKGraphCAPI.so also   *|
|* carries MLIR's core C API (mlir-c/IR.h, mlir-c/Pass.h), so a C program     *|
|* links this one library.                                                    *|
|*                                                                            *|
\*===----------------------------------------------------------------------===*/

#ifndef KGRAPH_C_DIALECTS_H
#define KGRAPH_C_DIALECTS_H

#include "mlir-c/IR.h"

#ifdef __cplusplus
extern "C" {
#endif

/// The handle of the kgraph dialect: `mlirGetDialectHandle__kgraph__()`.
MLIR_DECLARE_CAPI_DIALECT_REGISTRATION(KGraph, kgraph);

/// Adds the kgraph dialect and the upstream dialects kgraph IR uses (func,
/// arith, math, scf, tensor) to `registry`; see kgraph::registerAllDialects.
MLIR_CAPI_EXPORTED void kgraphRegisterAllDialects(MlirDialectRegistry registry);

/// Registers every kgraph pass and pipeline with MLIR's global pass registry,
/// so pipeline strings such as `func.func(kgraph-form-kernels)` parse.
/// Idempotent.
MLIR_CAPI_EXPORTED void kgraphRegisterAllPasses(void);

#ifdef __cplusplus
}
#endif

#endif /* KGRAPH_C_DIALECTS_H */
