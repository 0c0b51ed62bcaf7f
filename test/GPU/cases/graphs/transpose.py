"""kgraph.transpose and the data-movement ops read through access maps
(issue 10, item 7).

- Lone transposes of several ranks, permutations and dtypes (f32, f16, i32,
  i8, i1), on shapes that are multiples of no tile or vector width: the
  tiled shared-memory kernel where the permutation moves the innermost dim,
  the elementwise copy through the access map where it keeps it (the head
  split [0, 2, 1, 3]), a batch larger than the grid's z limit (the kernel's
  batch loop).
- Fusion (--fuse): transposes, strided slices and broadcasts read by
  elementwise consumers in one kernel; a transposed matmul operand folded
  into the transpose flag; a transposed residual read by a GEMM epilogue.
- Benchmark cases (bench=True; bench/bench_transpose.py and
  bench/bench_graphs.py): the transposes of the issue at full size.

The reference is torch's permute / slicing on float64 (exact: data movement
only), so tolerances are zero except where an op rounds to its type or a
matmul accumulates.
"""

import torch

from graph_case import GraphCase, Input

EXACT = (0.0, 0.0)


def t(shape, dt):
    return "tensor<" + "x".join(str(d) for d in shape) + "x" + dt + ">"


def permuted(shape, perm):
    return [shape[p] for p in perm]


def lone_transpose(name, shape, perm, dt, bench=False, flags=("--fuse",)):
    """func @main(%x) -> transpose(%x, perm): one kernel."""
    out = permuted(shape, perm)
    perm_text = ", ".join(str(p) for p in perm)
    mlir = f"""func.func @main(%x: {t(shape, dt)}) -> {t(out, dt)} {{
  %0 = kgraph.transpose %x, permutation = [{perm_text}] : {t(shape, dt)}
  return %0 : {t(out, dt)}
}}"""
    lo, hi = (-100, 100) if dt in ("i8", "i32") else (-1.0, 1.0)
    return GraphCase(name, mlir, [Input("x", shape, dt, lo, hi)],
                     lambda x, p=tuple(perm): x.permute(*p).contiguous(),
                     kernels=1, tol=EXACT, bench=bench, flags=flags,
                     memcheck=not bench)


def gemm_tol(k):
    """f16 operands, f32 accumulation and result (test/GPU/matmul_ref.py)."""
    s = k / 3.0
    return (2.0 ** -22 + 2.0 ** -23, 1.01 * (k * 2.0 ** -22 * s) + 2.0 ** -22)


CASES = [
    # The tiled kernel: 2-D, odd extents (vector width 1), both dtypes.
    lone_transpose("transpose_2d_f32_odd", [37, 1001], [1, 0], "f32"),
    lone_transpose("transpose_2d_f16", [1000, 520], [1, 0], "f16"),
    lone_transpose("transpose_2d_f32_vec", [96, 200], [1, 0], "f32"),
    lone_transpose("transpose_2d_i1", [33, 65], [1, 0], "i1"),
    lone_transpose("transpose_2d_i8", [130, 48], [1, 0], "i8"),
    # NCHW <-> NHWC (merged to [N, C, HW] / [N, HW, C]) with odd sizes.
    lone_transpose("transpose_nchw_nhwc_f32", [2, 35, 9, 11], [0, 2, 3, 1], "f32"),
    lone_transpose("transpose_nhwc_nchw_f16", [2, 9, 11, 35], [0, 3, 1, 2], "f16"),
    lone_transpose("transpose_nchw_nhwc_i32", [3, 64, 7, 8], [0, 2, 3, 1], "i32"),
    # A general rank-5 permutation: two batch dims between the tiled ones.
    lone_transpose("transpose_rank5_i32", [3, 4, 5, 6, 7], [4, 2, 0, 3, 1], "i32"),
    lone_transpose("transpose_rank3_outer_f32", [5, 3, 33], [2, 1, 0], "f32"),
    # A batch of more than 65535 tiles along grid z (the batch loop).
    lone_transpose("transpose_big_batch_i8", [70000, 2, 3], [0, 2, 1], "i8"),
    # The innermost dim stays: the elementwise copy through the access map.
    lone_transpose("transpose_heads_f32", [2, 17, 3, 64], [0, 2, 1, 3], "f32"),
    lone_transpose("transpose_heads_odd_f16", [2, 5, 3, 7], [0, 2, 1, 3], "f16"),
    # Only size-1 dims move: a copy.
    lone_transpose("transpose_unit_dims_f32", [1, 37, 1], [2, 1, 0], "f32"),
    # Without --fuse the transpose is its own kernel all the same.
    lone_transpose("transpose_unfused_f16", [64, 96], [1, 0], "f16", flags=()),
]

# x -> transpose -> add(bias) -> relu: one elementwise kernel.
CASES.append(GraphCase(
    "transpose_add_relu_f32",
    f"""func.func @main(%x: {t([64, 97], "f32")}, %b: {t([64], "f32")}) -> {t([97, 64], "f32")} {{
  %0 = kgraph.transpose %x, permutation = [1, 0] : {t([64, 97], "f32")}
  %1 = kgraph.add %0, %b : {t([97, 64], "f32")}, {t([64], "f32")}
  %2 = kgraph.relu %1 : {t([97, 64], "f32")}
  return %2 : {t([97, 64], "f32")}
}}""",
    [Input("x", [64, 97], "f32"), Input("b", [64], "f32")],
    # The add rounds to f32 (the reference does not).
    lambda x, b: torch.relu(x.t() + b), kernels=1, tol=(2.0 ** -23, 0.0)))

# NCHW -> NHWC in f16, a strided slice and a broadcast, all in one kernel.
CASES.append(GraphCase(
    "transpose_slice_broadcast_f16",
    f"""func.func @main(%x: {t([2, 8, 6, 10], "f16")}, %y: {t([2, 12, 10, 20], "f16")}, %s: {t([1, 8], "f16")}) -> {t([2, 6, 10, 8], "f16")} {{
  %0 = kgraph.transpose %x, permutation = [0, 2, 3, 1] : {t([2, 8, 6, 10], "f16")}
  %1 = kgraph.slice %y offsets = [0, 1, 0, 1] sizes = [2, 6, 10, 8] strides = [1, 2, 1, 2] : {t([2, 12, 10, 20], "f16")}
  %2 = kgraph.broadcast_to %s : {t([1, 8], "f16")} to {t([2, 6, 10, 8], "f16")}
  %3 = kgraph.mul %0, %2 : {t([2, 6, 10, 8], "f16")}, {t([2, 6, 10, 8], "f16")}
  %4 = kgraph.add %3, %1 : {t([2, 6, 10, 8], "f16")}, {t([2, 6, 10, 8], "f16")}
  return %4 : {t([2, 6, 10, 8], "f16")}
}}""",
    [Input("x", [2, 8, 6, 10], "f16"), Input("y", [2, 12, 10, 20], "f16"),
     Input("s", [1, 8], "f16")],
    # The product is rounded to f16 before the add, as kgraph.mul does.
    lambda x, y, s: ((x.permute(0, 2, 3, 1) * s).to(torch.float16).to(x.dtype)
                     + y[:, 1:13:2, :, 1:17:2]),
    kernels=1, tol=(2.0 ** -10, 2.0 ** -14)))

# matmul(a, transpose(b)): one GEMM kernel with transpose_b.
CASES.append(GraphCase(
    "transpose_matmul_b_f16",
    f"""func.func @main(%a: {t([64, 40], "f16")}, %b: {t([72, 40], "f16")}) -> {t([64, 72], "f32")} {{
  %0 = kgraph.transpose %b, permutation = [1, 0] : {t([72, 40], "f16")}
  %1 = kgraph.matmul %a, %0 : {t([64, 40], "f16")}, {t([40, 72], "f16")} -> {t([64, 72], "f32")}
  return %1 : {t([64, 72], "f32")}
}}""",
    [Input("a", [64, 40], "f16"), Input("b", [72, 40], "f16")],
    lambda a, b: a @ b.t(), kernels=1, tol=gemm_tol(40)))

# A batched matmul(transpose(a), b): transpose_a.
CASES.append(GraphCase(
    "transpose_matmul_a_batched_f32",
    f"""func.func @main(%a: {t([2, 40, 64], "f32")}, %b: {t([2, 40, 72], "f32")}) -> {t([2, 64, 72], "f32")} {{
  %0 = kgraph.transpose %a, permutation = [0, 2, 1] : {t([2, 40, 64], "f32")}
  %1 = kgraph.matmul %0, %b : {t([2, 64, 40], "f32")}, {t([2, 40, 72], "f32")} -> {t([2, 64, 72], "f32")}
  return %1 : {t([2, 64, 72], "f32")}
}}""",
    [Input("a", [2, 40, 64], "f32"), Input("b", [2, 40, 72], "f32")],
    lambda a, b: a.transpose(1, 2) @ b, kernels=1, tol=gemm_tol(40)))

# matmul + transposed residual + relu: the epilogue reads the residual
# through the transpose's access map.
CASES.append(GraphCase(
    "transpose_epilogue_residual_f16",
    f"""func.func @main(%a: {t([64, 32], "f16")}, %b: {t([32, 72], "f16")}, %r: {t([72, 64], "f32")}) -> {t([64, 72], "f32")} {{
  %0 = kgraph.matmul %a, %b : {t([64, 32], "f16")}, {t([32, 72], "f16")} -> {t([64, 72], "f32")}
  %1 = kgraph.transpose %r, permutation = [1, 0] : {t([72, 64], "f32")}
  %2 = kgraph.add %0, %1 : {t([64, 72], "f32")}, {t([64, 72], "f32")}
  %3 = kgraph.relu %2 : {t([64, 72], "f32")}
  return %3 : {t([64, 72], "f32")}
}}""",
    [Input("a", [64, 32], "f16"), Input("b", [32, 72], "f16"),
     Input("r", [72, 64], "f32")],
    lambda a, b, r: torch.relu(a @ b + r.t()), kernels=1, tol=gemm_tol(32)))

# Benchmarks (the shapes; bench/bench_transpose.py).
BENCH_SHAPES = [
    ("2d_8192", [8192, 8192], [1, 0]),
    ("nchw_nhwc", [64, 256, 56, 56], [0, 2, 3, 1]),
    ("nhwc_nchw", [64, 56, 56, 256], [0, 3, 1, 2]),
    ("heads", [8, 512, 12, 64], [0, 2, 1, 3]),
]
for _name, _shape, _perm in BENCH_SHAPES:
    for _dt in ("f32", "f16"):
        CASES.append(lone_transpose(f"transpose_bench_{_name}_{_dt}", _shape,
                                    _perm, _dt, bench=True))

# A lone strided slice, a lone misaligned contiguous slice (not a view: its
# first element is 4 bytes past a 16-byte boundary) and a lone broadcast_to
# returned as results: elementwise copies through their access maps.
CASES.append(GraphCase(
    "slice_strided_lone_f32",
    f"""func.func @main(%x: {t([9, 15], "f32")}) -> {t([4, 5], "f32")} {{
  %0 = kgraph.slice %x offsets = [1, 2] sizes = [4, 5] strides = [2, 3] : {t([9, 15], "f32")}
  return %0 : {t([4, 5], "f32")}
}}""",
    [Input("x", [9, 15], "f32")],
    lambda x: x[1:9:2, 2:15:3], kernels=1, tol=(0.0, 0.0)))
CASES.append(GraphCase(
    "slice_misaligned_lone_f32",
    f"""func.func @main(%x: {t([7, 13], "f32")}) -> {t([3, 13], "f32")} {{
  %0 = kgraph.slice %x offsets = [1, 0] sizes = [3, 13] strides = [1, 1] : {t([7, 13], "f32")}
  return %0 : {t([3, 13], "f32")}
}}""",
    [Input("x", [7, 13], "f32")],
    lambda x: x[1:4, :], kernels=1, tol=(0.0, 0.0)))
CASES.append(GraphCase(
    "broadcast_to_lone_f16",
    f"""func.func @main(%x: {t([5, 1, 7], "f16")}) -> {t([3, 5, 6, 7], "f16")} {{
  %0 = kgraph.broadcast_to %x : {t([5, 1, 7], "f16")} to {t([3, 5, 6, 7], "f16")}
  return %0 : {t([3, 5, 6, 7], "f16")}
}}""",
    [Input("x", [5, 1, 7], "f16")],
    lambda x: x.expand(3, 5, 6, 7), kernels=1, tol=(0.0, 0.0)))
