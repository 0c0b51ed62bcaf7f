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
