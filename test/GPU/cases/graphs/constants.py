"""Tensor constants written in the graph (arith.constant, not splats):
plan buffers of kind "constant" whose bytes the plan carries, uploaded once
per device. A GEMM whose B and bias are constants, a broadcast constant
and an i1 constant mask, a constant transposed by a once kernel before a
GEMM, and a returned constant. The values come from a fixed generator
(multiples of 1/8, exact in f16)."""

import math

import torch

from graph_case import GraphCase, Input


def _t(shape, dt):
    return "tensor<" + "x".join(map(str, shape)) + f"x{dt}>"


def _values(shape, dt, seed):
    g = torch.Generator().manual_seed(seed)
    n = math.prod(shape)
    if dt == "i1":
        return torch.randint(0, 2, (n,), generator=g).reshape(shape).to(torch.bool)
    return (torch.randint(-16, 17, (n,), generator=g).to(torch.float64) / 8).reshape(shape)


def _dense(v, dt):
    def lit(x):
        return ("true" if x else "false") if dt == "i1" else repr(float(x))

    def nest(a):
        return "[" + ", ".join(nest(e) if e.dim() else lit(e.item()) for e in a) + "]"
    return f"dense<{nest(v)}> : {_t(list(v.shape), dt)}"


W = _values([64, 96], "f16", 1) / 8
B = _values([96], "f32", 2)
C = _values([33], "f32", 3)
M = _values([17, 33], "i1", 4)
WT = _values([40, 24], "f32", 5) / 4

CASES = [
    GraphCase(
        "const_matmul_f16_200x64x96_bias",
        f"""func.func @main(%x: {_t([200, 64], 'f16')}) -> {_t([200, 96], 'f32')} {{
  %w = arith.constant {_dense(W, 'f16')}
  %b = arith.constant {_dense(B, 'f32')}
  %m = kgraph.matmul %x, %w : {_t([200, 64], 'f16')}, {_t([64, 96], 'f16')} -> {_t([200, 96], 'f32')}
  %y = kgraph.add %m, %b : {_t([200, 96], 'f32')}, {_t([96], 'f32')}
  return %y : {_t([200, 96], 'f32')}
}}""",
        [Input("x", [200, 64], "f16")], lambda x: x @ W + B, kernels=1, tol=(1e-3, 1e-3)),
    GraphCase(
        "const_mask_bias_f32_17x33",
        f"""func.func @main(%x: {_t([17, 33], 'f32')}) -> {_t([17, 33], 'f32')} {{
  %c = arith.constant {_dense(C, 'f32')}
  %m = arith.constant {_dense(M, 'i1')}
  %z = arith.constant dense<0.0> : {_t([17, 33], 'f32')}
  %y = kgraph.add %x, %c : {_t([17, 33], 'f32')}, {_t([33], 'f32')}
  %s = kgraph.select %m, %y, %z : {_t([17, 33], 'i1')}, {_t([17, 33], 'f32')}, {_t([17, 33], 'f32')}
  return %s : {_t([17, 33], 'f32')}
}}""",
        [Input("x", [17, 33], "f32")], lambda x: torch.where(M, x + C, 0.0), kernels=1),
    # Without --fuse the transpose reads only the constant: a once kernel
    # (3 kernels: it, the GEMM, the copy of the returned constant).
    GraphCase(
        "const_once_transpose_matmul_f32_50x24x40",
        f"""func.func @main(%x: {_t([50, 24], 'f32')}) -> ({_t([50, 40], 'f32')}, {_t([33], 'f32')}) {{
  %w = arith.constant {_dense(WT, 'f32')}
  %c = arith.constant {_dense(C, 'f32')}
  %t = kgraph.transpose %w, permutation = [1, 0] : {_t([40, 24], 'f32')}
  %y = kgraph.matmul %x, %t : {_t([50, 24], 'f32')}, {_t([24, 40], 'f32')} -> {_t([50, 40], 'f32')}
  return %y, %c : {_t([50, 40], 'f32')}, {_t([33], 'f32')}
}}""",
        [Input("x", [50, 24], "f32")], lambda x: (x @ WT.T, C), kernels=3, tol=(1e-5, 1e-5),
        flags=()),
]
