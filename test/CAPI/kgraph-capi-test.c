/*===- kgraph-capi-test.c - drive kgraph through its C API --------*- C -*-===*\
|*                                                                            *|
|* Links libKGraphCAPI.so alone: loads the dialect through its handle, parses,*|
|* verifies and prints kgraph IR, runs kgraph-form-kernels through a pass     *|
|* manager, and checks that bad IR and unknown passes fail cleanly.           *|
|*                                                                            *|
\*===----------------------------------------------------------------------===*/

// REQUIRES: mlir-dylib
// RUN: kgraph-capi-test 2>&1 | FileCheck %s

#include "kgraph-c/Dialects.h"

#include "mlir-c/Diagnostics.h"
#include "mlir-c/IR.h"
#include "mlir-c/Pass.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void printToStdout(MlirStringRef str, void *userData) {
  (void)userData;
  fwrite(str.data, 1, str.length, stdout);
}

/// Prints diagnostics as "diagnostic: <message>" and swallows them.
static MlirLogicalResult printDiagnostic(MlirDiagnostic diagnostic,
                                         void *userData) {
  (void)userData;
  fprintf(stdout, "diagnostic: ");
  mlirDiagnosticPrint(diagnostic, printToStdout, NULL);
  fprintf(stdout, "\n");
  return mlirLogicalResultSuccess();
}

#define CHECK(cond)                                                            \
  do {                                                                         \
    if (!(cond)) {                                                             \
      fprintf(stderr, "FAILED: %s (line %d)\n", #cond, __LINE__);              \
      exit(1);                                                                 \
    }                                                                          \
  } while (0)

static const char *kModule =
    "func.func @add(%a: tensor<8xf32>, %b: tensor<8xf32>) -> tensor<8xf32> {\n"
    "  %0 = kgraph.add %a, %b : tensor<8xf32>, tensor<8xf32>\n"
    "  return %0 : tensor<8xf32>\n"
    "}\n";

/// The dialect handle loads kgraph into a bare context.
static void testDialectHandle(void) {
  MlirContext ctx = mlirContextCreate();
  MlirDialectHandle handle = mlirGetDialectHandle__kgraph__();
  MlirStringRef ns = mlirDialectHandleGetNamespace(handle);
  CHECK(ns.length == 6 && strncmp(ns.data, "kgraph", 6) == 0);
  mlirDialectHandleRegisterDialect(handle, ctx);
  MlirDialect dialect = mlirDialectHandleLoadDialect(handle, ctx);
  CHECK(!mlirDialectIsNull(dialect));
  CHECK(mlirStringRefEqual(mlirDialectGetNamespace(dialect), ns));
  CHECK(!mlirDialectIsNull(
      mlirContextGetOrLoadDialect(ctx, mlirStringRefCreateFromCString("kgraph"))));
  fprintf(stdout, "loaded dialect: %.*s\n", (int)ns.length, ns.data);
  mlirContextDestroy(ctx);
}
// CHECK-LABEL: loaded dialect: kgraph

/// A context with kgraph and the dialects it uses (func for the test input).
static MlirContext createContext(void) {
  MlirContext ctx = mlirContextCreate();
  MlirDialectRegistry registry = mlirDialectRegistryCreate();
  kgraphRegisterAllDialects(registry);
  mlirContextAppendDialectRegistry(ctx, registry);
  mlirDialectRegistryDestroy(registry);
  mlirDialectHandleLoadDialect(mlirGetDialectHandle__kgraph__(), ctx);
  mlirContextAttachDiagnosticHandler(ctx, printDiagnostic, NULL, NULL);
  return ctx;
}

/// Parse, verify, print, then run kgraph-form-kernels and print again.
static void testParseAndRunPass(void) {
  MlirContext ctx = createContext();
  MlirModule module =
      mlirModuleCreateParse(ctx, mlirStringRefCreateFromCString(kModule));
  CHECK(!mlirModuleIsNull(module));
  MlirOperation op = mlirModuleGetOperation(module);
  CHECK(mlirOperationVerify(op));
  fprintf(stdout, "parsed:\n");
  mlirOperationPrint(op, printToStdout, NULL);
  fprintf(stdout, "\n");

  kgraphRegisterAllPasses();
  MlirPassManager pm = mlirPassManagerCreate(ctx);
  MlirLogicalResult parsed = mlirParsePassPipeline(
      mlirPassManagerGetAsOpPassManager(pm),
      mlirStringRefCreateFromCString(
          "builtin.module(func.func(kgraph-form-kernels))"),
      printToStdout, NULL);
  CHECK(mlirLogicalResultIsSuccess(parsed));
  CHECK(mlirLogicalResultIsSuccess(mlirPassManagerRunOnOp(pm, op)));
  CHECK(mlirOperationVerify(op));
  fprintf(stdout, "after kgraph-form-kernels:\n");
  mlirOperationPrint(op, printToStdout, NULL);
  fprintf(stdout, "\n");

  mlirPassManagerDestroy(pm);
  mlirModuleDestroy(module);
  mlirContextDestroy(ctx);
}
// CHECK-LABEL: parsed:
// CHECK:       func.func @add(%[[A:.*]]: tensor<8xf32>, %[[B:.*]]: tensor<8xf32>)
// CHECK-NEXT:    %[[SUM:.*]] = kgraph.add %[[A]], %[[B]] : tensor<8xf32>, tensor<8xf32>
// CHECK-NEXT:    return %[[SUM]]
// CHECK-LABEL: after kgraph-form-kernels:
// CHECK:       func.func @add(%[[A:.*]]: tensor<8xf32>, %[[B:.*]]: tensor<8xf32>)
// CHECK-NEXT:    %[[G:.*]] = kgraph.fused elementwise (%[[A]], %[[B]]) : (tensor<8xf32>, tensor<8xf32>) -> tensor<8xf32> {
// CHECK-NEXT:    ^bb0(%[[X:.*]]: tensor<8xf32>, %[[Y:.*]]: tensor<8xf32>):
// CHECK-NEXT:      %[[S:.*]] = kgraph.add %[[X]], %[[Y]]
// CHECK-NEXT:      kgraph.yield %[[S]] : tensor<8xf32>
// CHECK-NEXT:    }
// CHECK-NEXT:    return %[[G]]

/// Bad IR yields a diagnostic and a null module; an unknown pass name fails
/// to parse as a pipeline.
static void testErrors(void) {
  MlirContext ctx = createContext();
  MlirModule bad = mlirModuleCreateParse(
      ctx, mlirStringRefCreateFromCString(
               "func.func @f(%a: tensor<8xf32>) {\n"
               "  %0 = kgraph.no_such_op %a : tensor<8xf32>\n"
               "  return\n"
               "}\n"));
  CHECK(mlirModuleIsNull(bad));
  fprintf(stdout, "bad module rejected\n");

  kgraphRegisterAllPasses();
  MlirPassManager pm = mlirPassManagerCreate(ctx);
  fprintf(stdout, "pipeline error: ");
  MlirLogicalResult parsed = mlirParsePassPipeline(
      mlirPassManagerGetAsOpPassManager(pm),
      mlirStringRefCreateFromCString(
          "builtin.module(func.func(kgraph-no-such-pass))"),
      printToStdout, NULL);
  fprintf(stdout, "\n");
  CHECK(mlirLogicalResultIsFailure(parsed));
  mlirPassManagerDestroy(pm);
  mlirContextDestroy(ctx);
}
// CHECK:       diagnostic: {{.*}}kgraph.no_such_op
// CHECK-NEXT:  bad module rejected
// CHECK:       pipeline error: {{.*}}kgraph-no-such-pass
// CHECK:       all kgraph C API checks passed

int main(void) {
  testDialectHandle();
  testParseAndRunPass();
  testErrors();
  fprintf(stdout, "all kgraph C API checks passed\n");
  return 0;
}
