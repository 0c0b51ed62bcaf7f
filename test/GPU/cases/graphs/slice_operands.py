"""Strided slices as GEMM operands (issue 10, item 7): a kgraph.slice with
unit steps along the last dim (Q, K or V of a fused QKV projection, a block
of columns of a wider weight) feeding a kgraph.matmul is read in place by
the GEMM kernel: its input at the slice's offset, row and batch strides
(MatmulProblem::layoutA/layoutB), no copy kernel. Covered: A and B sliced,
both at once with a transposed B (Q K^T), batches, a row step, offsets that
leave only narrower vector loads, the TMA path (the tensor map's strides and
byte_offset), a slice also used elsewhere (cloned into the GEMM group), and
f16, bf16 and f32. Shapes are not multiples of any tile.
"""

from graph_case import GraphCase, Input, load_module

gemm_tol = load_module("epilogue").gemm_tol


def t(shape, dt):
    return "tensor<" + "x".join(str(d) for d in shape) + "x" + dt + ">"


def slice_text(name, src, offsets, sizes, steps, dt):
    def arr(v):
        return "[" + ", ".join(str(x) for x in v) + "]"
    return (f"  %{name} = kgraph.slice %{src} offsets = {arr(offsets)} "
            f"sizes = {arr(sizes)} strides = {arr(steps)} : {t(SHAPES[src], dt)}")


SHAPES = {}


def torch_slice(x, offsets, sizes, steps):
    index = tuple(slice(o, o + (s - 1) * st + 1, st)
                  for o, s, st in zip(offsets, sizes, steps))
    return x[index]


def sliced_a(name, dt, xshape, offsets, sizes, steps, n, tol_k=None,
             flags=("--fuse",)):
    """A = slice of x, B = w [K, N]: x_slice @ w."""
    SHAPES["x"] = xshape
    k = sizes[-1]
    lead = sizes[:-2]
    wshape = lead + [k, n]
    out = sizes[:-1] + [n]
    text = "\n".join([
        f"func.func @main(%x: {t(xshape, dt)}, %w: {t(wshape, dt)}) -> {t(out, dt)} {{",
        slice_text("a", "x", offsets, sizes, steps, dt),
        f"  %r = kgraph.matmul %a, %w : {t(sizes, dt)}, {t(wshape, dt)} -> {t(out, dt)}",
        f"  return %r : {t(out, dt)}",
        "}"])
    return GraphCase(
        name, text, [Input("x", xshape, dt), Input("w", wshape, dt)],
        lambda x, w: torch_slice(x, offsets, sizes, steps) @ w, kernels=1,
        tol=gemm_tol(tol_k or k, dt, 1), flags=flags)


def qk(name, dt, xshape, width, tol=None):
    """q = x[..., 0:width], k = x[..., width:2*width]: q @ k^T (transpose_b)."""
    SHAPES["x"] = xshape
    rank = len(xshape)
    lead, rows = xshape[:-2], xshape[-2]
    sizes = lead + [rows, width]
    zeros = [0] * (rank - 1)
    ones = [1] * rank
    out = lead + [rows, rows]
    text = "\n".join([
        f"func.func @main(%x: {t(xshape, dt)}) -> {t(out, dt)} {{",
        slice_text("q", "x", zeros + [0], sizes, ones, dt),
        slice_text("k", "x", zeros + [width], sizes, ones, dt),
        f"  %r = kgraph.matmul %q, %k {{transpose_b}} : {t(sizes, dt)}, {t(sizes, dt)} -> {t(out, dt)}",
        f"  return %r : {t(out, dt)}",
        "}"])
    return GraphCase(
        name, text, [Input("x", xshape, dt)],
        lambda x: x[..., :width] @ x[..., width:2 * width].transpose(-1, -2),
        kernels=1, tol=tol or gemm_tol(width, dt, 1))


def sliced_b(name, dt, m, wshape, offsets, sizes):
    """B = slice of w [K, N_all]: a @ w_slice."""
    SHAPES["w"] = wshape
    k, n = sizes
    text = "\n".join([
        f"func.func @main(%a: {t([m, k], dt)}, %w: {t(wshape, dt)}) -> {t([m, n], dt)} {{",
        slice_text("b", "w", offsets, sizes, [1, 1], dt),
        f"  %r = kgraph.matmul %a, %b : {t([m, k], dt)}, {t(sizes, dt)} -> {t([m, n], dt)}",
        f"  return %r : {t([m, n], dt)}",
        "}"])
    return GraphCase(
        name, text, [Input("a", [m, k], dt), Input("w", wshape, dt)],
        lambda a, w: a @ torch_slice(w, offsets, sizes, [1, 1]), kernels=1,
        tol=gemm_tol(k, dt, 1))


def shared_slice(x, w):
    a = x[:, 24:56]
    return a @ w, a * 2.0


CASES = [
    # The middle third of a [261, 216] matrix (K = 72): mma.sync with
    # 16-byte loads.
    sliced_a("slice_a_f16", "f16", [261, 216], [0, 72], [261, 72], [1, 1], 40),
    # Q K^T of a fused [N, 3E] projection, both operands sliced.
    qk("slice_qk_f16", "f16", [261, 216], 72),
    qk("slice_qk_batched_bf16", "bf16", [3, 70, 144], 48),
    # Large enough for wgmma with TMA: the tensor map of A has the row
    # stride 2304 * 2 bytes and a byte_offset of 768 * 2.
    sliced_a("slice_a_tma_f16", "f16", [1000, 2304], [0, 768], [1000, 768],
             [1, 1], 520),
    # Offset 33 and row stride 99 f32 elements: 4-byte loads only.
    sliced_a("slice_a_misaligned_f32", "f32", [37, 99], [0, 33], [37, 33],
             [1, 1], 29),
    # Every other row, from row 1, columns 8 .. 8 + 40.
    sliced_a("slice_a_row_step_f16", "f16", [101, 64], [1, 8], [50, 40],
             [2, 1], 45),
    # A batched A: batches 1 and 3 of 4 (batch step 2), columns 16 .. 48.
    sliced_a("slice_a_batch_step_f16", "f16", [4, 33, 64], [1, 0, 16],
             [2, 33, 32], [2, 1, 1], 27),
    # B is columns 40 .. 80 of a [64, 120] weight.
    sliced_b("slice_b_bf16", "bf16", 77, [64, 120], [0, 40], [64, 40]),
    # The slice is also scaled and returned: the GEMM reads its own copy of
    # the slice in place, the elementwise kernel reads the slice through its
    # access map (two kernels, no copy).
    GraphCase(
        "slice_shared_f16",
        """func.func @main(%x: tensor<45x80xf16>, %w: tensor<32x19xf16>) -> (tensor<45x19xf16>, tensor<45x32xf16>) {
  %a = kgraph.slice %x offsets = [0, 24] sizes = [45, 32] strides = [1, 1] : tensor<45x80xf16>
  %r = kgraph.matmul %a, %w : tensor<45x32xf16>, tensor<32x19xf16> -> tensor<45x19xf16>
  %c = arith.constant dense<2.0> : tensor<f16>
  %s = kgraph.mul %a, %c : tensor<45x32xf16>, tensor<f16>
  return %r, %s : tensor<45x19xf16>, tensor<45x32xf16>
}""",
        [Input("x", [45, 80], "f16"), Input("w", [32, 19], "f16")],
        shared_slice, kernels=2, tol=gemm_tol(32, "f16", 1)),
]
