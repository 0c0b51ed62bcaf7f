// Misused `kgraph.param` / `kgraph.weights` attributes (docs/launch-plan.md).
// RUN: kgraph-opt %s --split-input-file --verify-diagnostics

// expected-error @+1 {{'func.func' op 'kgraph.param' of argument #0 must be a string (the tensor's name in the weights file), got 3 : i64}}
func.func @not_a_string(%b: tensor<8xf32> {kgraph.param = 3}) -> tensor<8xf32> {
  return %b : tensor<8xf32>
}

// -----

// expected-error @+1 {{'func.func' op 'kgraph.param' of argument #1 must be a non-empty name}}
func.func @empty(%a: tensor<8xf32>, %b: tensor<8xf32> {kgraph.param = ""}) -> tensor<8xf32> {
  return %a : tensor<8xf32>
}

// -----

// expected-error @+1 {{'func.func' op 'kgraph.param' of argument #0 must be on a statically shaped tensor argument, got 'f32'}}
func.func @scalar(%b: f32 {kgraph.param = "s"}) -> f32 {
  return %b : f32
}

// -----

// expected-error @+1 {{'func.func' op 'kgraph.param' of argument #0 must be on a statically shaped tensor argument, got 'tensor<?xf32>'}}
func.func @dynamic(%b: tensor<?xf32> {kgraph.param = "d"}) -> tensor<?xf32> {
  return %b : tensor<?xf32>
}

// -----

// expected-error @+1 {{'func.func' op parameter 'w' is bound to arguments #0 and #2}}
func.func @duplicate(%a: tensor<8xf32> {kgraph.param = "w"}, %x: tensor<8xf32>,
                     %b: tensor<8xf32> {kgraph.param = "w"}) -> tensor<8xf32> {
  return %x : tensor<8xf32>
}

// -----

gpu.module @kernels {
  // expected-error @+1 {{'gpu.func' op 'kgraph.param' is only valid on a func.func argument}}
  gpu.func @k(%b: memref<8xf32> {kgraph.param = "w"}) kernel {
    gpu.return
  }
}

// -----

// expected-error @+1 {{'builtin.module' op 'kgraph.weights' must be a non-empty string (the weights file's path), got 1 : i64}}
module attributes {kgraph.weights = 1} {
}

// -----

// expected-error @+1 {{'builtin.module' op 'kgraph.weights' must be a non-empty string (the weights file's path), got ""}}
module attributes {kgraph.weights = ""} {
}

// -----

module {
  // expected-error @+1 {{'func.func' op 'kgraph.weights' is only valid on a builtin.module}}
  func.func @f() attributes {kgraph.weights = "w.safetensors"} {
    return
  }
}
