"""kgraph.concat that is not written in place (issue 10, item 7): a concat
along an inner axis (NCHW channels at batch > 1, the last axis of [B, S, D],
torch.cat(dim=-1)), or along the outermost axis at offsets that are not
16-byte aligned, is an elementwise kernel over its result: each element is
read from the input whose segment of the axis holds it, by a branch on the
axis coordinate (one branch for all vector lanes where every segment is a
multiple of the vector width, else lane by lane). Under --fuse the concat is
read by its elementwise consumers in their kernel, and reads its inputs
through their access maps (slices).

Sizes are odd, segments of size 1 occur, and the dtypes are those of the
elementwise family. CPU_CASES are the small ones that
test/Tools/check_transpose_kernels.py (concat-interp.test) runs in the CPU
interpreter of emitted kernel IR. The reference is torch.cat on float64
(exact for the lone concats).
"""

import torch

from graph_case import GraphCase, Input

EXACT = (0.0, 0.0)


def t(shape, dt):
    return "tensor<" + "x".join(str(d) for d in shape) + "x" + dt + ">"


def cat_shape(shapes, axis):
    out = list(shapes[0])
    out[axis] = sum(s[axis] for s in shapes)
    return out


def lone_concat(name, shapes, axis, dt, flags=("--fuse",)):
    """func @main(%x0, %x1, ...) -> concat(%x0, %x1, ..., axis): one kernel."""
    out = cat_shape(shapes, axis)
    names = [f"x{i}" for i in range(len(shapes))]
    args = ", ".join(f"%{n}: {t(s, dt)}" for n, s in zip(names, shapes))
    mlir = f"""func.func @main({args}) -> {t(out, dt)} {{
  %0 = kgraph.concat {", ".join("%" + n for n in names)} axis = {axis} : {", ".join(t(s, dt) for s in shapes)}
  return %0 : {t(out, dt)}
}}"""
    lo, hi = (-100, 100) if dt in ("i8", "i32") else (-1.0, 1.0)
    return GraphCase(name, mlir, [Input(n, s, dt, lo, hi) for n, s in zip(names, shapes)],
                     lambda *xs, a=axis: torch.cat(xs, a), kernels=1, tol=EXACT,
                     flags=flags)


CASES = [
    # The last axis, odd segments (lane by lane).
    lone_concat("concat_last_f32_odd", [[3, 5], [3, 7]], 1, "f32"),
    # Three inputs on the last axis, one of size 1.
    lone_concat("concat_last3_f16_size1", [[2, 3, 9], [2, 3, 1], [2, 3, 4]], 2, "f16"),
    # NCHW channels at batch 2 (a middle axis), three inputs, one of size 1.
    lone_concat("concat_mid3_f32_size1", [[2, 3, 5, 3], [2, 1, 5, 3], [2, 4, 5, 3]], 1, "f32"),
    # Segments of 48 and 80 f16 elements per batch: one 8-wide vector per step.
    lone_concat("concat_mid_vec_f16", [[2, 3, 4, 4], [2, 5, 4, 4]], 1, "f16"),
    # The last axis in multiples of 4 f32 elements: vectors from three inputs.
    lone_concat("concat_last_vec_f32", [[3, 8], [3, 4], [3, 12]], 1, "f32"),
    # The outermost axis at a 12-byte offset: not a view, a kernel.
    lone_concat("concat_rank1_f32", [[3], [5]], 0, "f32"),
    lone_concat("concat_mid_i8", [[2, 3, 5], [2, 2, 5]], 1, "i8"),
    lone_concat("concat_last_i1", [[4, 3], [4, 6]], 1, "i1"),
    # Without --fuse: neg, concat and exp are three kernels.
    GraphCase(
        "concat_unfused_f32",
        f"""func.func @main(%x: {t([3, 5], "f32")}, %y: {t([3, 6], "f32")}) -> {t([3, 11], "f32")} {{
  %a = kgraph.neg %x : {t([3, 5], "f32")}
  %c = kgraph.concat %a, %y axis = 1 : {t([3, 5], "f32")}, {t([3, 6], "f32")}
  %r = kgraph.exp %c : {t([3, 11], "f32")}
  return %r : {t([3, 11], "f32")}
}}""",
        [Input("x", [3, 5], "f32"), Input("y", [3, 6], "f32")],
        lambda x, y: torch.exp(torch.cat([-x, y], 1)), kernels=3,
        tol=(1e-6, 1e-7), flags=()),
    # NCHW channel concat at batch 2 read by its sigmoid consumer in one
    # kernel; the relu is its own (its result is also returned).
    GraphCase(
        "concat_fused_sigmoid_f16",
        f"""func.func @main(%x: {t([2, 3, 5, 7], "f16")}, %y: {t([2, 4, 5, 7], "f16")}) -> ({t([2, 7, 5, 7], "f16")}, {t([2, 3, 5, 7], "f16")}) {{
  %a = kgraph.relu %x : {t([2, 3, 5, 7], "f16")}
  %c = kgraph.concat %a, %y axis = 1 : {t([2, 3, 5, 7], "f16")}, {t([2, 4, 5, 7], "f16")}
  %r = kgraph.sigmoid %c : {t([2, 7, 5, 7], "f16")}
  return %r, %a : {t([2, 7, 5, 7], "f16")}, {t([2, 3, 5, 7], "f16")}
}}""",
        [Input("x", [2, 3, 5, 7], "f16"), Input("y", [2, 4, 5, 7], "f16")],
        lambda x, y: (torch.sigmoid(torch.cat([torch.relu(x), y], 1)), torch.relu(x)),
        kernels=2, tol=(2e-3, 1e-6)),
    # A concat broadcast along the last dim of its consumer (uniform lanes).
    GraphCase(
        "concat_broadcast_add_f32",
        f"""func.func @main(%x: {t([2, 3, 1], "f32")}, %y: {t([2, 2, 1], "f32")}, %z: {t([2, 5, 8], "f32")}) -> {t([2, 5, 8], "f32")} {{
  %c = kgraph.concat %x, %y axis = 1 : {t([2, 3, 1], "f32")}, {t([2, 2, 1], "f32")}
  %r = kgraph.add %c, %z : {t([2, 5, 1], "f32")}, {t([2, 5, 8], "f32")}
  return %r : {t([2, 5, 8], "f32")}
}}""",
        [Input("x", [2, 3, 1], "f32"), Input("y", [2, 2, 1], "f32"),
         Input("z", [2, 5, 8], "f32")],
        lambda x, y, z: torch.cat([x, y], 1) + z, kernels=1,
        tol=(2.0 ** -23, 0.0)),
    # Odd and even columns swapped by strided slices and a concat, scaled by
    # %y: one kernel reading %x through both slices.
    GraphCase(
        "concat_slices_mul_f32",
        f"""func.func @main(%x: {t([4, 10], "f32")}, %y: {t([4, 10], "f32")}) -> {t([4, 10], "f32")} {{
  %e = kgraph.slice %x offsets = [0, 0] sizes = [4, 5] strides = [1, 2] : {t([4, 10], "f32")}
  %o = kgraph.slice %x offsets = [0, 1] sizes = [4, 5] strides = [1, 2] : {t([4, 10], "f32")}
  %c = kgraph.concat %o, %e axis = 1 : {t([4, 5], "f32")}, {t([4, 5], "f32")}
  %r = kgraph.mul %c, %y : {t([4, 10], "f32")}, {t([4, 10], "f32")}
  return %r : {t([4, 10], "f32")}
}}""",
        [Input("x", [4, 10], "f32"), Input("y", [4, 10], "f32")],
        lambda x, y: torch.cat([x[:, 1::2], x[:, ::2]], 1) * y, kernels=1,
        tol=(2.0 ** -23, 0.0)),
    # Nested: a concat of a concat (each one not written in place: the outer
    # one's offset is 60 bytes), both read by the neg's kernel.
    GraphCase(
        "concat_nested_f32",
        f"""func.func @main(%x: {t([3, 2], "f32")}, %y: {t([3, 3], "f32")}, %w: {t([2, 5], "f32")}) -> {t([5, 5], "f32")} {{
  %a = kgraph.concat %x, %y axis = 1 : {t([3, 2], "f32")}, {t([3, 3], "f32")}
  %b = kgraph.concat %a, %w axis = 0 : {t([3, 5], "f32")}, {t([2, 5], "f32")}
  %r = kgraph.neg %b : {t([5, 5], "f32")}
  return %r : {t([5, 5], "f32")}
}}""",
        [Input("x", [3, 2], "f32"), Input("y", [3, 3], "f32"), Input("w", [2, 5], "f32")],
        lambda x, y, w: -torch.cat([torch.cat([x, y], 1), w], 0), kernels=1,
        tol=EXACT),
]

#: Small enough for the CPU interpreter (no bf16).
CPU_CASES = [c.name for c in CASES]

CASES += [
    # Full-size GPU cases: ResNet/DenseNet-style channel concat (vectors),
    # odd last-axis segments of sizes 129, 3 and 1, bf16, a rank-5 i32 concat.
    lone_concat("concat_channels_nchw_f16", [[8, 64, 28, 28], [8, 32, 28, 28]], 1, "f16"),
    lone_concat("concat_last_odd_f32", [[4, 77, 129], [4, 77, 3], [4, 77, 1]], 2, "f32"),
    lone_concat("concat_mid_bf16", [[3, 17, 33], [3, 5, 33]], 1, "bf16"),
    lone_concat("concat_rank5_i32", [[2, 3, 4, 5, 6], [2, 3, 2, 5, 6], [2, 3, 1, 5, 6]], 2, "i32"),
    # torch.cat(dim=-1) of two [16, 128, 64] halves read by tanh in one kernel.
    GraphCase(
        "concat_last_tanh_f32",
        f"""func.func @main(%x: {t([16, 128, 64], "f32")}, %y: {t([16, 128, 64], "f32")}) -> {t([16, 128, 128], "f32")} {{
  %c = kgraph.concat %x, %y axis = 2 : {t([16, 128, 64], "f32")}, {t([16, 128, 64], "f32")}
  %r = kgraph.tanh %c : {t([16, 128, 128], "f32")}
  return %r : {t([16, 128, 128], "f32")}
}}""",
        [Input("x", [16, 128, 64], "f32"), Input("y", [16, 128, 64], "f32")],
        lambda x, y: torch.tanh(torch.cat([x, y], -1)), kernels=1,
        tol=(1e-6, 1e-6)),
]
