//===- InitAll.cpp - register every kgraph dialect and pass ---------------===//

#include "kgraph/InitAll.h"

#include "kgraph/Dialect/KGraph/IR/KGraphDialect.h"
#include "kgraph/Dialect/KGraph/Transforms/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/DialectRegistry.h"

void kgraph::registerAllDialects(mlir::DialectRegistry &registry) {
  registry.insert<kgraph::KGraphDialect, mlir::arith::ArithDialect,
                  mlir::func::FuncDialect, mlir::math::MathDialect,
                  mlir::scf::SCFDialect, mlir::tensor::TensorDialect>();
}

void kgraph::registerAllPasses() {
  static bool once = [] {
    kgraph::registerKGraphPasses();
    return true;
  }();
  (void)once;
}
