"""A GEMM with more M tiles than grid y holds (65535): its blocks are
linearized over grid x (MatmulEmitter.cpp, getGemmLaunchShape). The config
is pinned so the model's larger tiles do not avoid the case."""

from graph_case import GraphCase, Input

M, N, K = 2200000, 16, 32


def matmul(a, b):
    return a @ b


CASES = [
    GraphCase(
        "gemm_grid_linearized_f16_2200000x16x32",
        f"""func.func @main(%a: tensor<{M}x{K}xf16>, %b: tensor<{K}x{N}xf16>) -> tensor<{M}x{N}xf32> {{
  %0 = kgraph.fused (%a, %b) {{kgraph.config = #kgraph.matmul_config<tile_m = 32, tile_n = 8, tile_k = 32, warps_m = 2, warps_n = 1, stages = 3, instruction = mma_sync, instruction_shape = [16, 8, 16], load_width = 8, smem_padding = 8>}} : (tensor<{M}x{K}xf16>, tensor<{K}x{N}xf16>) -> tensor<{M}x{N}xf32> {{
  ^bb0(%x: tensor<{M}x{K}xf16>, %y: tensor<{K}x{N}xf16>):
    %r = kgraph.matmul %x, %y : tensor<{M}x{K}xf16>, tensor<{K}x{N}xf16> -> tensor<{M}x{N}xf32>
    kgraph.yield %r : tensor<{M}x{N}xf32>
  }}
  return %0 : tensor<{M}x{N}xf32>
}}""",
        [Input("a", [M, K], "f16"), Input("b", [K, N], "f16")],
        matmul, kernels=1, tol=(1e-5, 1e-5), memcheck=False),
]


def _pinned(name, m, n, k, dt, out, config):
    t = lambda s, e: "tensor<" + "x".join(map(str, s)) + "x" + e + ">"
    ta, tb, tc = t([m, k], dt), t([k, n], dt), t([m, n], out)
    return GraphCase(
        name,
        f"""func.func @main(%a: {ta}, %b: {tb}) -> {tc} {{
  %0 = kgraph.fused (%a, %b) {{kgraph.config = {config}}} : ({ta}, {tb}) -> {tc} {{
  ^bb0(%x: {ta}, %y: {tb}):
    %r = kgraph.matmul %x, %y : {ta}, {tb} -> {tc}
    kgraph.yield %r : {tc}
  }}
  return %0 : {tc}
}}""",
        [Input("a", [m, k], dt), Input("b", [k, n], dt)], matmul, kernels=1,
        # f16 products are exact in f32; the sums round K times.
        tol=(1e-5, 1e-5) if out == "f32" else (2e-3, 2e-3))


# Grouped rasterization (group_m) with a last band shorter than the others
# (8 and 15 M tiles in bands of 3 and 8), for mma.sync and wgmma.
CASES += [
    _pinned("gemm_grid_grouped_mma_f16_1000x256x64", 1000, 256, 64, "f16", "f32",
            "#kgraph.matmul_config<tile_m = 128, tile_n = 128, tile_k = 32, warps_m = 2, warps_n = 2, stages = 3, instruction = mma_sync, instruction_shape = [16, 8, 16], load_width = 8, smem_padding = 8, group_m = 3>"),
    _pinned("gemm_grid_grouped_wgmma_f16_1900x704x320", 1900, 704, 320, "f16", "f32",
            "#kgraph.matmul_config<tile_m = 128, tile_n = 128, tile_k = 64, warps_m = 8, warps_n = 1, stages = 3, instruction = wgmma, instruction_shape = [64, 128, 16], load_width = 8, smem_padding = 0, group_m = 8>"),
]
