"""wgmma GEMMs with pinned `copy = tma` configurations (TmaPipeline.cpp:
TMA loads by a producer warpgroup on full/empty mbarriers, consumer
warpgroups running wgmma). Ragged M/N/K (TMA zero-fills out-of-bounds
boxes), f16 and bf16, transposed operands, batches, the bias + relu
epilogue, and the issue-5 benchmark: f16 matmul + bias + relu at 8192^3.

Shapes keep every operand row a multiple of 16 bytes (the tensor maps'
global strides). A hang of one of these kernels means a broken mbarrier
protocol (see TmaPipeline.cpp's header).
"""

import math

import torch

from graph_case import GraphCase, Input

U_OUT = {"f16": 2.0 ** -11, "bf16": 2.0 ** -8}

SMALL = ("tile_m = 128, tile_n = 128, tile_k = 64, warps_m = 8, warps_n = 1, "
         "stages = 4, instruction = wgmma, instruction_shape = [64, 128, 16], "
         "load_width = 8, smem_padding = 0, copy = tma")
BIG = ("tile_m = 256, tile_n = 128, tile_k = 64, warps_m = 8, warps_n = 1, "
       "stages = 4, instruction = wgmma, instruction_shape = [64, 128, 16], "
       "load_width = 8, smem_padding = 0, group_m = 8, copy = tma")


def gemm_tol(k, dt, roundings=2):
    """As test/GPU/cases/graphs/epilogue.py: f32 accumulation of inputs in
    [-1, 1], then `roundings` roundings to dt."""
    u = U_OUT[dt]
    s = k / 3.0
    atol = 1.01 * (k * 2.0 ** -22 * s) + u * 5 * math.sqrt(k / 9.0) + 2 * u
    return (1.01 * roundings * u + 2.0 ** -22, atol)


def t(shape, dt):
    return "tensor<" + "x".join(str(d) for d in shape) + "x" + dt + ">"


def case(name, m, n, k, dt, ta=False, tb=False, batch=None, bias=False,
         config=SMALL, bench=False):
    lead = [batch] if batch else []
    sa = lead + ([k, m] if ta else [m, k])
    sb = lead + ([n, k] if tb else [k, n])
    tr = t(lead + [m, n], dt)
    args = [("a", t(sa, dt)), ("b", t(sb, dt))]
    if bias:
        args.append(("bias", t([n], dt)))
    sig = ", ".join(f"%{nm}: {ty}" for nm, ty in args)
    types = ", ".join(ty for _, ty in args)
    names = ", ".join(f"%{nm}" for nm, _ in args)
    bargs = ", ".join(f"%{nm}_: {ty}" for nm, ty in args)
    attrs = [a for a, on in (("transpose_a", ta), ("transpose_b", tb)) if on]
    attr = " {" + ", ".join(attrs) + "}" if attrs else ""
    body = f"%m = kgraph.matmul %a_, %b_{attr} : {args[0][1]}, {args[1][1]} -> {tr}"
    result = "%m"
    if bias:
        body += (f"\n    %s = kgraph.add %m, %bias_ : {tr}, {t([n], dt)}"
                 f"\n    %r = kgraph.relu %s : {tr}")
        result = "%r"
    text = f"""func.func @main({sig}) -> {tr} {{
  %0 = kgraph.fused ({names}) {{kgraph.config = #kgraph.matmul_config<{config}>}} : ({types}) -> {tr} {{
  ^bb0({bargs}):
    {body}
    kgraph.yield {result} : {tr}
  }}
  return %0 : {tr}
}}"""
    inputs = [Input("a", sa, dt), Input("b", sb, dt)]
    if bias:
        inputs.append(Input("bias", [n], dt, lo=-0.5, hi=0.5))

    def ref(a, b, *rest):
        x = a.transpose(-1, -2) if ta else a
        y = b.transpose(-1, -2) if tb else b
        out = x @ y
        return torch.relu(out + rest[0]) if bias else out

    return GraphCase(name, text, inputs, ref, kernels=1,
                     tol=gemm_tol(k, dt, 2 if bias else 1),
                     memcheck=not bench, bench=bench)


CASES = [
    # Start here: one tile, no ragged edge, then ragged M/N/K.
    case("tma_mm_f16_128x128x64", 128, 128, 64, "f16"),
    case("tma_mm_f16_1000x712x328", 1000, 712, 328, "f16"),
    case("tma_mm_bf16_1000x712x328", 1000, 712, 328, "bf16"),
    case("tma_mm_tn_f16_1000x712x328", 1000, 712, 328, "f16", ta=True),
    case("tma_mm_nt_bf16_1000x712x328", 1000, 712, 328, "bf16", tb=True),
    case("tma_mm_tt_f16_264x136x200", 264, 136, 200, "f16", ta=True, tb=True),
    case("tma_bmm_f16_3x200x136x104", 200, 136, 104, "f16", batch=3),
    case("tma_mm_bias_relu_f16_1000x712x328", 1000, 712, 328, "f16",
         bias=True),
    case("tma_mm_bias_relu_bf16_257x136x64", 257, 136, 64, "bf16", bias=True),
    # More k tiles than stages (the rings wrap several times).
    case("tma_mm_f16_256x256x2048", 256, 256, 2048, "f16", config=BIG),
    # Issue 5: beat torch eager (1.857 ms on the H200).
    case("tma_mm_bias_relu_f16_8192x8192x8192", 8192, 8192, 8192, "f16",
         bias=True, config=BIG, bench=True),
]
