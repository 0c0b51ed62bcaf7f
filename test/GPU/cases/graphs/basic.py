"""Small graphs that check the harness end to end (several outputs, a
boolean input, an integer chain)."""

import torch

from graph_case import GraphCase, Input


def two_outputs(x, y):
    s = x + y
    return s, torch.relu(s) * y


def masked(c, x):
    return torch.where(c, x, -x)


def int_chain(a, b):
    return torch.maximum(a * b - 3, torch.zeros_like(a))


CASES = [
    GraphCase(
        "basic_two_outputs_f32_1000",
        """func.func @main(%x: tensor<1000xf32>, %y: tensor<1000xf32>) -> (tensor<1000xf32>, tensor<1000xf32>) {
  %s = kgraph.add %x, %y : tensor<1000xf32>, tensor<1000xf32>
  %r = kgraph.relu %s : tensor<1000xf32>
  %m = kgraph.mul %r, %y : tensor<1000xf32>, tensor<1000xf32>
  return %s, %m : tensor<1000xf32>, tensor<1000xf32>
}""",
        [Input("x", [1000], "f32"), Input("y", [1000], "f32")],
        two_outputs, kernels=1, tol=(1e-6, 1e-7)),
    GraphCase(
        "basic_select_bool_f16_37x1001",
        """func.func @main(%c: tensor<37x1001xi1>, %x: tensor<37x1001xf16>) -> tensor<37x1001xf16> {
  %n = kgraph.neg %x : tensor<37x1001xf16>
  %r = kgraph.select %c, %x, %n : tensor<37x1001xi1>, tensor<37x1001xf16>, tensor<37x1001xf16>
  return %r : tensor<37x1001xf16>
}""",
        [Input("c", [37, 1001], "i1"), Input("x", [37, 1001], "f16")],
        masked, kernels=1, tol=(0, 0)),
    GraphCase(
        "basic_int_chain_i32_4097",
        """func.func @main(%a: tensor<4097xi32>, %b: tensor<4097xi32>) -> tensor<4097xi32> {
  %p = kgraph.mul %a, %b : tensor<4097xi32>, tensor<4097xi32>
  %t = arith.constant dense<3> : tensor<1xi32>
  %d = kgraph.sub %p, %t : tensor<4097xi32>, tensor<1xi32>
  %z = arith.constant dense<0> : tensor<1xi32>
  %r = kgraph.max %d, %z : tensor<4097xi32>, tensor<1xi32>
  return %r : tensor<4097xi32>
}""",
        [Input("a", [4097], "i32", lo=-1000, hi=1000),
         Input("b", [4097], "i32", lo=-1000, hi=1000)],
        int_chain, kernels=1, tol=(0, 0)),
]
