// Upstream mlir-opt (linked against libMLIR.so) loads kgraph from
// libKGraphPlugin.so: the dialect plugin makes kgraph IR parse, the pass
// plugin makes kgraph passes available by name.

// REQUIRES: mlir-dylib
// RUN: mlir-opt --load-dialect-plugin=%kgraph_plugin %s | FileCheck %s --check-prefix=PARSE
// RUN: mlir-opt --load-dialect-plugin=%kgraph_plugin %s | mlir-opt --load-dialect-plugin=%kgraph_plugin | FileCheck %s --check-prefix=PARSE
// RUN: mlir-opt --load-dialect-plugin=%kgraph_plugin --load-pass-plugin=%kgraph_plugin --pass-pipeline='builtin.module(func.func(kgraph-form-kernels))' %s | FileCheck %s --check-prefix=FORM

// Without the plugin, upstream mlir-opt knows neither the dialect nor the pass.
// RUN: not mlir-opt %s 2>&1 | FileCheck %s --check-prefix=NODIALECT
// RUN: not mlir-opt --load-dialect-plugin=%kgraph_plugin --pass-pipeline='builtin.module(func.func(kgraph-form-kernels))' %s 2>&1 | FileCheck %s --check-prefix=NOPASS

// NODIALECT: error: Dialect `kgraph' not found for custom op 'kgraph.add'
// NOPASS: 'kgraph-form-kernels' does not refer to a registered pass or pass pipeline

// PARSE-LABEL: func.func @add
// PARSE-SAME:    (%[[A:.*]]: tensor<4x8xf32>, %[[B:.*]]: tensor<8xf32>)
// PARSE-NEXT:    %[[SUM:.*]] = kgraph.add %[[A]], %[[B]] : tensor<4x8xf32>, tensor<8xf32>
// PARSE-NEXT:    return %[[SUM]] : tensor<4x8xf32>

// FORM-LABEL: func.func @add
// FORM-SAME:    (%[[A:.*]]: tensor<4x8xf32>, %[[B:.*]]: tensor<8xf32>)
// FORM-NEXT:    %[[G:.*]] = kgraph.fused elementwise (%[[A]], %[[B]]) : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32> {
// FORM-NEXT:    ^bb0(%[[X:.*]]: tensor<4x8xf32>, %[[Y:.*]]: tensor<8xf32>):
// FORM-NEXT:      %[[S:.*]] = kgraph.add %[[X]], %[[Y]] : tensor<4x8xf32>, tensor<8xf32>
// FORM-NEXT:      kgraph.yield %[[S]] : tensor<4x8xf32>
// FORM-NEXT:    }
// FORM-NEXT:    return %[[G]] : tensor<4x8xf32>
func.func @add(%a: tensor<4x8xf32>, %b: tensor<8xf32>) -> tensor<4x8xf32> {
  %0 = kgraph.add %a, %b : tensor<4x8xf32>, tensor<8xf32>
  return %0 : tensor<4x8xf32>
}
