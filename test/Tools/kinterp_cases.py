"""Hand-written graphs for test/Tools/check_kernels_interp.py: small
shapes of every kernel family kgraph emits, and the cases that once let
miscompiles through (issue 14): float max reductions over all-negative
inputs (a start value of 0 instead of -inf), sums (the start value 0),
size-1 reduction axes, broadcasts read through gathers (their lane order),
GEMM epilogues (bias, residual), ragged M/N/K, conv2d in both layouts.

Each Run: name, MLIR, inputs [(shape, dtype, lo, hi)], a torch reference
on float64 (int64, bool) inputs, (rtol, atol), extra flags, targets.
GEMMs pin configurations where the default for a tiny shape would not
reach the path (cp.async pipelines, wgmma, TMA).
"""
import math
import re

import torch
import torch.nn.functional as F

from check_kernels_interp import TARGETS, Run


def t(shape, dt):
    return "tensor<" + "".join(f"{d}x" for d in shape) + dt + ">"


def rnd(x, dt):
    """x rounded to dt and widened again (what a kernel stores)."""
    tdt = {"f32": torch.float32, "f16": torch.float16, "bf16": torch.bfloat16}[dt]
    return x.to(tdt).to(torch.float64)


U = {"f32": 2.0 ** -24, "f16": 2.0 ** -11, "bf16": 2.0 ** -8}


def gemm_tol(k, dt, roundings=1, tf32=False):
    """f32 accumulation of products of inputs in [-1, 1] (|sum| grows like
    sqrt(k)), then `roundings` roundings to dt."""
    u = U[dt]
    acc = (2.0 ** -11 if tf32 else 2.0 ** -22) * k
    return (2.5 * roundings * u + 1e-6, acc + u * 4 * math.sqrt(k) + 2 * u)


RUNS = []


def add(*a, **k):
    RUNS.append(Run(*a, **k))


# ---- reductions ----------------------------------------------------------------------

def reduce_case(name, shape, dt, kind, axes, keep=False, lo=-1.0, hi=1.0, pre="", tol=None):
    out = [1 if d in axes else s for d, s in enumerate(shape)] if keep else \
        [s for d, s in enumerate(shape) if d not in axes]
    kd = " keep_dims" if keep else ""
    body = f"  %r = kgraph.reduce {kind} %x axes = [{', '.join(map(str, axes))}]{kd} : {t(shape, dt)}\n"
    text = f"func.func @main(%x: {t(shape, dt)}) -> {t(out, dt)} {{\n{body}  return %r : {t(out, dt)}\n}}\n"

    def ref(x):
        if kind == "sum":
            y = x.sum(dim=axes, keepdim=keep)
        elif kind == "mean":
            y = x.mean(dim=axes, keepdim=keep)
        else:
            y = x
            for a in sorted(axes, reverse=True):
                y = y.amax(dim=a, keepdim=keep)
        return y if dt in ("i8", "i32") else rnd(y, dt)
    n = math.prod(shape[a] for a in axes)
    if tol is None:
        if dt in ("i8", "i32"):
            tol = (0.0, 0.0)
        elif kind == "max":
            tol = (U[dt], 0.0)   # exact up to the final rounding
        else:
            tol = (2 * U[dt], 4 * U[dt] * math.sqrt(n) * max(abs(lo), abs(hi)) + 1e-7)
    add(name, text, [(shape, dt, lo, hi)], ref, tol)


# Max over all-negative rows: a start value of 0 would win everywhere.
reduce_case("reduce_max_neg_rows_f32", [7, 300], "f32", "max", [1], lo=-3.0, hi=-0.5)
reduce_case("reduce_max_neg_long_rows_f32", [3, 4100], "f32", "max", [1], lo=-3.0, hi=-0.5)
reduce_case("reduce_max_neg_cols_f16", [37, 9], "f16", "max", [0], lo=-3.0, hi=-0.5)
reduce_case("reduce_max_neg_middle_bf16", [4, 33, 5], "bf16", "max", [1], keep=True, lo=-3.0, hi=-0.5)
reduce_case("reduce_max_neg_all_f32", [5, 7, 3], "f32", "max", [0, 1, 2], lo=-9.0, hi=-1.0)
reduce_case("reduce_max_neg_i32", [6, 50], "i32", "max", [1], lo=-1000, hi=-3)
# All-positive inputs: a min written as -max(-x).
add("reduce_min_pos_rows_f32",
    f"func.func @main(%x: {t([9, 130], 'f32')}) -> {t([9], 'f32')} {{\n"
    f"  %n = kgraph.neg %x : {t([9, 130], 'f32')}\n"
    f"  %m = kgraph.reduce max %n axes = [1] : {t([9, 130], 'f32')}\n"
    f"  %r = kgraph.neg %m : {t([9], 'f32')}\n"
    f"  return %r : {t([9], 'f32')}\n}}\n",
    [([9, 130], "f32", 0.5, 3.0)], lambda x: x.amin(dim=1), (0.0, 0.0))
# Sums: any start value other than 0 shows.
reduce_case("reduce_sum_rows_f32", [5, 77], "f32", "sum", [1])
reduce_case("reduce_sum_cols_f16", [40, 24], "f16", "sum", [0])
reduce_case("reduce_sum_two_axes_i8", [3, 5, 7], "i8", "sum", [0, 2], lo=-8, hi=8)
reduce_case("reduce_mean_inner_bf16", [6, 10, 18], "bf16", "mean", [2], keep=True)
reduce_case("reduce_sum_i32_long", [2, 3000], "i32", "sum", [1], lo=-1000, hi=1000)
# Size-1 reduction axes.
reduce_case("reduce_sum_unit_axis_f32", [5, 1, 7], "f32", "sum", [1])
reduce_case("reduce_max_unit_axis_neg_f32", [4, 1, 9], "f32", "max", [1], keep=True, lo=-2.0, hi=-1.0)
reduce_case("reduce_max_unit_axes_all_f16", [1, 1], "f16", "max", [0, 1], lo=-2.0, hi=-1.0)
reduce_case("reduce_mean_unit_axis_f32", [3, 1], "f32", "mean", [1])
# A reduction with producers and a consumer (fused with --fuse).
add("reduce_fused_chain_f32",
    f"func.func @main(%x: {t([6, 45], 'f32')}, %b: {t([45], 'f32')}) -> {t([6], 'f32')} {{\n"
    f"  %s = kgraph.add %x, %b : {t([6, 45], 'f32')}, {t([45], 'f32')}\n"
    f"  %e = kgraph.exp %s : {t([6, 45], 'f32')}\n"
    f"  %m = kgraph.reduce sum %e axes = [1] : {t([6, 45], 'f32')}\n"
    f"  %c = arith.constant dense<0.5> : tensor<f32>\n"
    f"  %r = kgraph.mul %m, %c : {t([6], 'f32')}, tensor<f32>\n"
    f"  return %r : {t([6], 'f32')}\n}}\n",
    [([6, 45], "f32", -1.0, 1.0), ([45], "f32", -1.0, 1.0)],
    lambda x, b: torch.exp(x + b).sum(dim=1) * 0.5, (1e-5, 1e-5))


# ---- multi-reduction groups (issue 12) ------------------------------------------------

def rows(name, args, body, outs, ref, tol, config=None):
    """A graph over `args` [(name, shape, dtype, lo, hi)] whose `body` (op
    lines on %name) defines `outs` [(value, shape, dtype)]; with `config`,
    the ops are one kgraph.fused group pinned to it."""
    sig = ", ".join(f"%{n}: {t(sh, d)}" for n, sh, d, _, _ in args)
    rtypes = ", ".join(t(sh, d) for _, sh, d in outs)
    values = ", ".join(f"%{v}" for v, _, _ in outs)
    lines = "".join(f"  {l}\n" for l in body)
    if config:
        for n, *_ in args:
            lines = re.sub(rf"%{n}\b", f"%{n}_", lines)
        k = len(outs)
        res = "%0" if k == 1 else f"%0:{k}"
        rets = "%0" if k == 1 else ", ".join(f"%0#{i}" for i in range(k))
        lines = (f"  {res} = kgraph.fused ({', '.join(f'%{n}' for n, *_ in args)}) "
                 f"{{kgraph.config = {config}}} : ({', '.join(t(sh, d) for _, sh, d, _, _ in args)})"
                 f" -> ({rtypes}) {{\n  ^bb0({', '.join(f'%{n}_: {t(sh, d)}' for n, sh, d, _, _ in args)}):\n"
                 + lines.replace("  ", "    ", 1).replace("\n  ", "\n    ")
                 + f"    kgraph.yield {values} : {rtypes}\n  }}\n")
        values = rets
    text = f"func.func @main({sig}) -> ({rtypes}) {{\n{lines}  return {values} : {rtypes}\n}}\n"
    add(name, text, [a[1:] for a in args], ref, tol)


def rcfg(threads, rows_, width, grid, held):
    return (f"#kgraph.reduce_config<threads_per_row = {threads}, rows_per_block = {rows_}, "
            f"vector_width = {width}, grid_size = {grid}, row_vectors = {held}>")


def softmax(name, shape, dt, axes, log=False, config=None, lo=-3.0, hi=3.0):
    """softmax (log-softmax) over `axes`, each value rounded to `dt` as the
    kernel rounds it."""
    ty = t(shape, dt)
    kept = [1 if d in axes else s for d, s in enumerate(shape)]
    ax = ", ".join(map(str, axes))
    body = [f"%m = kgraph.reduce max %x axes = [{ax}] keep_dims : {ty}",
            f"%d = kgraph.sub %x, %m : {ty}, {t(kept, dt)}",
            f"%e = kgraph.exp %d : {ty}",
            f"%s = kgraph.reduce sum %e axes = [{ax}] keep_dims : {ty}"]
    if log:
        body += [f"%l = kgraph.log %s : {t(kept, dt)}", f"%o = kgraph.sub %d, %l : {ty}, {t(kept, dt)}"]
    else:
        body += [f"%o = kgraph.div %e, %s : {ty}, {t(kept, dt)}"]

    def ref(x):
        d = rnd(x - x.amax(dim=tuple(axes), keepdim=True), dt)
        e = rnd(torch.exp(d), dt)
        s_ = rnd(e.sum(dim=tuple(axes), keepdim=True), dt)
        return rnd(d - rnd(torch.log(s_), dt), dt) if log else rnd(e / s_, dt)
    n = math.prod(shape[a] for a in axes)
    rows(name, [("x", shape, dt, lo, hi)], body, [("o", shape, dt)], ref,
         (2 * U[dt] + U["f32"] * math.sqrt(n), U[dt]), config)


def layer_norm(name, shape, dt, axes, rms=False, affine=True, config=None):
    """(x - mean) * rsqrt(var + eps) * g + b over `axes` (the trailing
    dims); with `rms`, x * rsqrt(mean(x^2) + eps) * g."""
    ty = t(shape, dt)
    kept = [1 if d in axes else s for d, s in enumerate(shape)]
    inner = shape[min(axes):]
    ax = ", ".join(map(str, axes))
    tk, ti = t(kept, dt), t(inner, dt)
    body = [f"%eps = arith.constant dense<1.0e-5> : {t([], dt)}"]
    if rms:
        body += [f"%sq = kgraph.mul %x, %x : {ty}, {ty}",
                 f"%v = kgraph.reduce mean %sq axes = [{ax}] keep_dims : {ty}"]
        d = "%x"
    else:
        body += [f"%mu = kgraph.reduce mean %x axes = [{ax}] keep_dims : {ty}",
                 f"%d = kgraph.sub %x, %mu : {ty}, {tk}",
                 f"%sq = kgraph.mul %d, %d : {ty}, {ty}",
                 f"%v = kgraph.reduce mean %sq axes = [{ax}] keep_dims : {ty}"]
        d = "%d"
    body += [f"%ve = kgraph.add %v, %eps : {tk}, {t([], dt)}",
             f"%r = kgraph.rsqrt %ve : {tk}",
             f"%y = kgraph.mul {d}, %r : {ty}, {tk}"]
    args = [("x", shape, dt, -3.0, 3.0)]
    out = "%y"
    if affine:
        body += [f"%yg = kgraph.mul %y, %g : {ty}, {ti}"]
        args.append(("g", inner, dt, 0.5, 1.5))
        out = "%yg"
        if not rms:
            body += [f"%yb = kgraph.add %yg, %b : {ty}, {ti}"]
            args.append(("b", inner, dt, -0.5, 0.5))
            out = "%yb"
    dims = tuple(axes)

    def ref(x, g=None, b=None):
        eps = rnd(torch.tensor(1e-5, dtype=torch.float64), dt)
        if rms:
            d_ = x
            v = rnd(rnd(x * x, dt).mean(dim=dims, keepdim=True), dt)
        else:
            d_ = rnd(x - rnd(x.mean(dim=dims, keepdim=True), dt), dt)
            v = rnd(rnd(d_ * d_, dt).mean(dim=dims, keepdim=True), dt)
        y = rnd(d_ * rnd(torch.rsqrt(rnd(v + eps, dt)), dt), dt)
        if g is not None:
            y = rnd(y * g, dt)
        if b is not None:
            y = rnd(y + b, dt)
        return y
    rows(name, args, body, [(out[1:], shape, dt)], ref, (2 * U[dt] + 1e-6, 2 * U[dt]), config)


# Chosen configurations: rows held in registers, partly filled last vectors
# (300 = 75 vectors over 32 threads), rows of more than a warp (shared
# memory), odd rows (scalar loads), f16/bf16 vectors, a row over two axes,
# strided rows (a middle axis), one row of everything, size-1 axes, many
# short rows per block (the last block's rows past the end).
softmax("softmax_rows_f32", [7, 300], "f32", [1])
softmax("softmax_long_rows_f32", [3, 4100], "f32", [1])
softmax("log_softmax_odd_f16", [5, 77], "f16", [1], log=True)
softmax("softmax_middle_bf16", [4, 33, 5], "bf16", [1])
softmax("softmax_all_f32", [5, 7, 3], "f32", [0, 1, 2])
softmax("softmax_unit_axis_f32", [5, 1, 7], "f32", [1])
softmax("softmax_short_rows_f32", [100, 24], "f32", [1])
layer_norm("layer_norm_f16", [9, 64], "f16", [1])
layer_norm("layer_norm_two_axes_bf16", [6, 10, 18], "bf16", [1, 2])
layer_norm("rms_norm_odd_f32", [5, 33], "f32", [1], rms=True)
# Pinned: re-reading the rows (row_vectors = 0) within a warp and past one,
# a thread holding whole rows, and a block per row with one partly filled
# vector per thread.
softmax("softmax_stream_f32", [3, 130], "f32", [1], config=rcfg(32, 1, 2, 3, 0))
softmax("log_softmax_stream_smem_f16", [5, 200], "f16", [1], log=True,
        config=rcfg(64, 2, 8, 3, 0))
layer_norm("layer_norm_thread_rows_f16", [40, 16], "f16", [1], config=rcfg(1, 64, 8, 1, 2))
softmax("softmax_held_smem_f32", [3, 300], "f32", [1], config=rcfg(128, 1, 4, 3, 1))
# Standard deviation down the columns, with the standardized values: two
# results (per row and over the rows), strided rows.
rows("std_cols_two_results_f32", [("x", [37, 9], "f32", -2.0, 2.0)],
     [f"%mu = kgraph.reduce mean %x axes = [0] keep_dims : {t([37, 9], 'f32')}",
      f"%d = kgraph.sub %x, %mu : {t([37, 9], 'f32')}, {t([1, 9], 'f32')}",
      f"%sq = kgraph.mul %d, %d : {t([37, 9], 'f32')}, {t([37, 9], 'f32')}",
      f"%v = kgraph.reduce mean %sq axes = [0] keep_dims : {t([37, 9], 'f32')}",
      f"%sd = kgraph.sqrt %v : {t([1, 9], 'f32')}",
      f"%z = kgraph.div %d, %sd : {t([37, 9], 'f32')}, {t([1, 9], 'f32')}"],
     [("sd", [1, 9], "f32"), ("z", [37, 9], "f32")],
     lambda x: (x.std(dim=0, unbiased=False, keepdim=True),
                (x - x.mean(dim=0, keepdim=True)) / x.std(dim=0, unbiased=False, keepdim=True)),
     (1e-5, 1e-6))
# Variance as E[x^2] - E[x]^2: two sibling reductions of the same rows.
rows("variance_siblings_f32", [("x", [6, 45], "f32", -2.0, 2.0)],
     [f"%mu = kgraph.reduce mean %x axes = [1] : {t([6, 45], 'f32')}",
      f"%sq = kgraph.mul %x, %x : {t([6, 45], 'f32')}, {t([6, 45], 'f32')}",
      f"%m2 = kgraph.reduce mean %sq axes = [1] : {t([6, 45], 'f32')}",
      f"%mm = kgraph.mul %mu, %mu : {t([6], 'f32')}, {t([6], 'f32')}",
      f"%v = kgraph.sub %m2, %mm : {t([6], 'f32')}, {t([6], 'f32')}"],
     [("v", [6], "f32"), ("mu", [6], "f32")],
     lambda x: (x.var(dim=1, unbiased=False), x.mean(dim=1)), (1e-5, 2e-6))
# Integers: a max, then a sum of the differences, both used over the rows.
rows("max_sum_rows_i32", [("x", [6, 50], "i32", -1000, 1000)],
     [f"%m = kgraph.reduce max %x axes = [1] keep_dims : {t([6, 50], 'i32')}",
      f"%d = kgraph.sub %x, %m : {t([6, 50], 'i32')}, {t([6, 1], 'i32')}",
      f"%s = kgraph.reduce sum %d axes = [1] keep_dims : {t([6, 50], 'i32')}",
      f"%o = kgraph.add %d, %s : {t([6, 50], 'i32')}, {t([6, 1], 'i32')}"],
     [("o", [6, 50], "i32")],
     lambda x: (x - x.amax(dim=1, keepdim=True)) + (x - x.amax(dim=1, keepdim=True)).sum(dim=1, keepdim=True),
     (0.0, 0.0))


# ---- elementwise and broadcasting ------------------------------------------------------

def binary(name, op, sa, sb, dt, ref, lo=-2.0, hi=2.0, tol=None):
    out = list(torch.broadcast_shapes(tuple(sa), tuple(sb)))
    text = (f"func.func @main(%a: {t(sa, dt)}, %b: {t(sb, dt)}) -> {t(out, dt)} {{\n"
            f"  %r = kgraph.{op} %a, %b : {t(sa, dt)}, {t(sb, dt)}\n"
            f"  return %r : {t(out, dt)}\n}}\n")
    tol = tol or ((0.0, 0.0) if dt in ("i8", "i32") else (U[dt] * 1.01, 0.0))
    wrap = (lambda a, b: ref(a, b)) if dt in ("i8", "i32") else (lambda a, b: rnd(ref(a, b), dt))
    add(name, text, [(sa, dt, lo, hi), (sb, dt, lo, hi)], wrap, tol)


# Rows whose length is not a multiple of the vector width: gathers, whose
# lane order matters (a reversed gather swaps neighbours).
binary("bcast_row_gather_f32", "sub", [5, 37], [37], "f32", lambda a, b: a - b)
binary("bcast_row_gather_f16", "sub", [3, 4, 13], [1, 13], "f16", lambda a, b: a - b)
binary("bcast_col_f32", "sub", [6, 40], [6, 1], "f32", lambda a, b: a - b)
binary("bcast_middle_gather_bf16", "sub", [3, 5, 7], [3, 1, 7], "bf16", lambda a, b: a - b)
binary("bcast_scalar_f32", "div", [9, 11], [], "f32", lambda a, b: a / b, lo=0.5, hi=2.0)
# i8 arithmetic wraps.
binary("bcast_outer_i8", "sub", [7, 33], [7, 1], "i8", lambda a, b: ((a - b + 128) % 256) - 128,
       lo=-100, hi=100)
binary("bcast_both_i32", "mul", [4, 1, 6], [1, 5, 1], "i32", lambda a, b: a * b, lo=-1000, hi=1000)
binary("max_neg_f32", "max", [17, 3], [3], "f32", torch.maximum, lo=-3.0, hi=-0.5)
add("elementwise_chain_f16",
    f"func.func @main(%a: {t([3, 57], 'f16')}, %b: {t([57], 'f16')}) -> {t([3, 57], 'f32')} {{\n"
    f"  %m = kgraph.mul %a, %b : {t([3, 57], 'f16')}, {t([57], 'f16')}\n"
    f"  %g = kgraph.gelu %m : {t([3, 57], 'f16')}\n"
    f"  %s = kgraph.sigmoid %g : {t([3, 57], 'f16')}\n"
    f"  %c = kgraph.cast %s : {t([3, 57], 'f16')} to {t([3, 57], 'f32')}\n"
    f"  return %c : {t([3, 57], 'f32')}\n}}\n",
    [([3, 57], "f16", -2.0, 2.0), ([57], "f16", -2.0, 2.0)],
    lambda a, b: rnd(torch.sigmoid(rnd(F.gelu(rnd(a * b, "f16")), "f16")), "f16"),
    (2 * U["f16"], 2 * U["f16"]))
add("compare_select_i1",
    f"func.func @main(%a: {t([5, 19], 'f32')}, %b: {t([19], 'f32')}) -> ({t([5, 19], 'i1')}, {t([5, 19], 'f32')}) {{\n"
    f"  %c = kgraph.compare lt, %a, %b : {t([5, 19], 'f32')}, {t([19], 'f32')}\n"
    f"  %s = kgraph.select %c, %a, %b : {t([5, 19], 'i1')}, {t([5, 19], 'f32')}, {t([19], 'f32')}\n"
    f"  return %c, %s : {t([5, 19], 'i1')}, {t([5, 19], 'f32')}\n}}\n",
    [([5, 19], "f32", -1.0, 1.0), ([19], "f32", -1.0, 1.0)],
    lambda a, b: (a < b, torch.where(a < b, a, b)), (0.0, 0.0))
add("cast_f32_to_i8_saturate",
    f"func.func @main(%a: {t([70], 'f32')}) -> {t([70], 'i8')} {{\n"
    f"  %c = kgraph.cast %a : {t([70], 'f32')} to {t([70], 'i8')}\n"
    f"  return %c : {t([70], 'i8')}\n}}\n",
    [([70], "f32", -300.0, 300.0)], lambda a: torch.clamp(torch.trunc(a), -128, 127), (0.0, 0.0))


# ---- data movement -----------------------------------------------------------------------

add("transpose_2d_f32",
    f"func.func @main(%a: {t([37, 45], 'f32')}) -> {t([45, 37], 'f32')} {{\n"
    f"  %r = kgraph.transpose %a, permutation = [1, 0] : {t([37, 45], 'f32')}\n"
    f"  return %r : {t([45, 37], 'f32')}\n}}\n",
    [([37, 45], "f32", -1.0, 1.0)], lambda a: a.t(), (0.0, 0.0))
add("transpose_add_f16",
    f"func.func @main(%a: {t([2, 9, 13], 'f16')}, %b: {t([13, 9], 'f16')}) -> {t([2, 13, 9], 'f16')} {{\n"
    f"  %p = kgraph.transpose %a, permutation = [0, 2, 1] : {t([2, 9, 13], 'f16')}\n"
    f"  %r = kgraph.add %p, %b : {t([2, 13, 9], 'f16')}, {t([13, 9], 'f16')}\n"
    f"  return %r : {t([2, 13, 9], 'f16')}\n}}\n",
    [([2, 9, 13], "f16", -1.0, 1.0), ([13, 9], "f16", -1.0, 1.0)],
    lambda a, b: rnd(a.transpose(1, 2) + b, "f16"), (U["f16"], 0.0))
add("concat_inner_f32",
    f"func.func @main(%a: {t([5, 7], 'f32')}, %b: {t([5, 3], 'f32')}) -> {t([5, 10], 'f32')} {{\n"
    f"  %r = kgraph.concat %a, %b axis = 1 : {t([5, 7], 'f32')}, {t([5, 3], 'f32')}\n"
    f"  return %r : {t([5, 10], 'f32')}\n}}\n",
    [([5, 7], "f32", -1.0, 1.0), ([5, 3], "f32", -1.0, 1.0)],
    lambda a, b: torch.cat([a, b], dim=1), (0.0, 0.0))

# A data-movement chain (a slice, a channel pad, a transpose that keeps the
# innermost dim: one copy kernel with --fuse, formConcatChainGroups) and a
# transpose that moves the innermost dim of a concat (its own tiled
# transpose kernel).
add("movement_chain_f16",
    f"func.func @main(%x: {t([2, 6, 5, 3], 'f16')}, %v: {t([6, 8], 'f32')}) -> "
    f"({t([2, 5, 4, 4], 'f16')}, {t([8, 7], 'f32')}) {{\n"
    f"  %s = kgraph.slice %x offsets = [0, 1, 0, 0] sizes = [2, 4, 5, 3] strides = [1, 1, 1, 1] : {t([2, 6, 5, 3], 'f16')}\n"
    f"  %z = arith.constant dense<0.0> : {t([2, 4, 5, 1], 'f16')}\n"
    f"  %c = kgraph.concat %s, %z axis = 3 : {t([2, 4, 5, 3], 'f16')}, {t([2, 4, 5, 1], 'f16')}\n"
    f"  %r = kgraph.transpose %c, permutation = [0, 2, 1, 3] : {t([2, 4, 5, 4], 'f16')}\n"
    f"  %zv = arith.constant dense<0.0> : {t([1, 8], 'f32')}\n"
    f"  %cv = kgraph.concat %v, %zv axis = 0 : {t([6, 8], 'f32')}, {t([1, 8], 'f32')}\n"
    f"  %tv = kgraph.transpose %cv, permutation = [1, 0] : {t([7, 8], 'f32')}\n"
    f"  return %r, %tv : {t([2, 5, 4, 4], 'f16')}, {t([8, 7], 'f32')}\n}}\n",
    [([2, 6, 5, 3], "f16", -1.0, 1.0), ([6, 8], "f32", -1.0, 1.0)],
    lambda x, v: (torch.cat([x[:, 1:5], torch.zeros(2, 4, 5, 1, dtype=x.dtype)], dim=3)
                  .permute(0, 2, 1, 3),
                  torch.cat([v, torch.zeros(1, 8, dtype=v.dtype)], dim=0).t()),
    (0.0, 0.0))

# ---- GEMM ------------------------------------------------------------------------------------

def mm_config(tm, tn, tk, wm, wn, stages, inst, shape, lw, pad, extra=""):
    return (f"#kgraph.matmul_config<tile_m = {tm}, tile_n = {tn}, tile_k = {tk}, warps_m = {wm}, "
            f"warps_n = {wn}, stages = {stages}, instruction = {inst}, instruction_shape = "
            f"[{', '.join(map(str, shape))}], load_width = {lw}, smem_padding = {pad}{extra}>")


def gemm(name, m, n, k, dt, acc=None, ta=False, tb=False, batch=None, bias=False,
         residual=False, relu=False, config=None, targets=TARGETS, precision=None):
    """matmul (+ bias[n]) (+ residual[m, n]) (relu), pinned to `config`
    when given (one kgraph.fused group)."""
    acc = acc or ("i32" if dt == "i8" else dt)
    lead = [batch] if batch else []
    sa = lead + ([k, m] if ta else [m, k])
    sb = lead + ([n, k] if tb else [k, n])
    so = lead + [m, n]
    args = [("a", sa, dt), ("b", sb, dt)]
    if bias:
        args.append(("bias", [n], acc))
    if residual:
        args.append(("res", so, acc))
    flags = [f for f, on in (("transpose_a", ta), ("transpose_b", tb)) if on]
    attr = (" {" + ", ".join(flags) + "}") if flags else ""
    prec = f" precision = {precision}" if precision else ""
    lines = [f"%m = kgraph.matmul %a_, %b_{prec}{attr} : {t(sa, dt)}, {t(sb, dt)} -> {t(so, acc)}"]
    # (%x_ are the group's block arguments; without a group, the function's.)
    cur = "%m"
    if bias:
        lines.append(f"%bs = kgraph.add {cur}, %bias_ : {t(so, acc)}, {t([n], acc)}")
        cur = "%bs"
    if residual:
        lines.append(f"%rs = kgraph.add {cur}, %res_ : {t(so, acc)}, {t(so, acc)}")
        cur = "%rs"
    if relu:
        lines.append(f"%rl = kgraph.relu {cur} : {t(so, acc)}")
        cur = "%rl"
    sig = ", ".join(f"%{nm}: {t(s, d)}" for nm, s, d in args)
    types = ", ".join(t(s, d) for _, s, d in args)
    if config:
        names = ", ".join(f"%{nm}" for nm, _, _ in args)
        bargs = ", ".join(f"%{nm}_: {t(s, d)}" for nm, s, d in args)
        body = "\n    ".join(lines)
        text = (f"func.func @main({sig}) -> {t(so, acc)} {{\n"
                f"  %0 = kgraph.fused ({names}) {{kgraph.config = {config}}} : ({types}) -> {t(so, acc)} {{\n"
                f"  ^bb0({bargs}):\n    {body}\n    kgraph.yield {cur} : {t(so, acc)}\n  }}\n"
                f"  return %0 : {t(so, acc)}\n}}\n")
    else:
        body = "\n  ".join(l.replace("%a_", "%a").replace("%b_", "%b").replace("%bias_", "%bias")
                            .replace("%res_", "%res") for l in lines)
        text = f"func.func @main({sig}) -> {t(so, acc)} {{\n  {body}\n  return {cur} : {t(so, acc)}\n}}\n"
    integer = dt == "i8"
    lo, hi = (-8, 8) if integer else (-1.0, 1.0)
    inputs = [(sa, dt, lo, hi), (sb, dt, lo, hi)]
    if bias:
        inputs.append(([n], acc, *((-100, 100) if integer else (-0.5, 0.5))))
    if residual:
        inputs.append((so, acc, *((-100, 100) if integer else (-1.0, 1.0))))
    tf32 = precision == "tf32"

    def ref(a, b, *rest):
        x = a.transpose(-1, -2) if ta else a
        y = b.transpose(-1, -2) if tb else b
        if tf32:   # the tensor cores drop the low 13 mantissa bits
            x = _tf32(x)
            y = _tf32(y)
        out = x @ y
        if integer:
            out = ((out + 2 ** 31) % 2 ** 32) - 2 ** 31
        else:
            out = rnd(out, acc)
        i = 0
        if bias:
            out = out + rest[i]
            i += 1
            out = out if integer else rnd(out, acc)
        if residual:
            out = out + rest[i]
            out = out if integer else rnd(out, acc)
        if relu:
            out = torch.relu(out)
        return out
    tol = (0.0, 0.0) if integer else gemm_tol(k, acc, 1 + bias + residual, tf32)
    add(name, text, inputs, ref, tol, targets=targets,
        fuse=(False, True) if not config else (False,))


def _tf32(x):
    import numpy as np
    f = x.to(torch.float32).numpy().copy()
    f.view(np.uint32)[...] &= np.uint32(0xFFFFE000)
    return torch.from_numpy(f).to(torch.float64)


# Default configurations on every target: SIMT fma (sm_70), mma.sync k8
# (sm_75) and k16 (sm_80, sm_90a); odd sizes (element-wise copies).
gemm("mm_f16_37x45x40_bias_res", 37, 45, 40, "f16", bias=True, residual=True)
gemm("mm_f32_37x45x40_bias", 37, 45, 40, "f32", bias=True)
gemm("mm_bf16_33x17x24_relu", 33, 17, 24, "bf16", acc="f32", relu=True)
# relu(x + bias) against relu(x) + bias: the epilogue's order, per target.
gemm("mm_f16_45x40x56_bias_relu", 45, 40, 56, "f16", acc="f32", bias=True, relu=True)
gemm("mm_f16_f32acc_tn_37x48x40", 37, 48, 40, "f16", acc="f32", ta=True)
gemm("mm_f16_nt_20x24x56_bias", 20, 24, 56, "f16", tb=True, bias=True)
gemm("bmm_f32_2x19x13x11", 19, 13, 11, "f32", batch=2)
gemm("mm_i8_29x40x48_bias", 29, 40, 48, "i8", bias=True)
gemm("mm_tf32_37x24x40", 37, 24, 40, "f32", precision="tf32")
# cp.async pipelines (sm_80): 16-byte rows, ragged M/N/K against the tiles,
# more k tiles than stages.
CP = mm_config(64, 32, 32, 2, 2, 3, "mma_sync", [16, 8, 16], 8, 8)
gemm("mm_f16_cp_100x72x136_bias_res", 100, 72, 136, "f16", acc="f32", bias=True, residual=True,
     config=CP, targets=["sm_80", "sm_90a"])
gemm("mm_bf16_cp_tn_72x40x104", 72, 40, 104, "bf16", acc="f32", ta=True, config=CP,
     targets=["sm_80"])
gemm("mm_f16_cp_nt_45x56x72", 45, 56, 72, "f16", acc="f32", tb=True,
     config=mm_config(32, 64, 32, 1, 2, 4, "mma_sync", [16, 8, 16], 8, 8), targets=["sm_80"])
gemm("mm_f16_cp_tt_40x48x64", 40, 48, 64, "f16", ta=True, tb=True,
     config=mm_config(32, 32, 32, 2, 2, 2, "mma_sync", [16, 8, 16], 8, 8), targets=["sm_80"])
gemm("mm_tf32_cp_50x40x36", 50, 40, 36, "f32", precision="tf32",
     config=mm_config(32, 32, 16, 2, 2, 3, "mma_sync", [16, 8, 8], 4, 4), targets=["sm_80"])
gemm("mm_i8_cp_40x48x96", 40, 48, 96, "i8",
     config=mm_config(32, 32, 64, 2, 2, 3, "mma_sync", [16, 8, 32], 16, 16), targets=["sm_80"])
gemm("mm_f16_k8_48x40x48", 48, 40, 48, "f16", acc="f32",
     config=mm_config(32, 32, 32, 2, 2, 1, "mma_sync", [16, 8, 8], 8, 8), targets=["sm_75"])
gemm("mm_f32_simt_cp_40x36x44", 40, 36, 44, "f32",
     config=mm_config(32, 32, 16, 2, 2, 3, "fma", [1, 1, 1], 4, 4), targets=["sm_80"])
# wgmma (sm_90a): cp.async staging into the swizzled layout, both operand
# majors; then TMA + mbarrier pipelines (a producer warpgroup).
WG = mm_config(128, 64, 64, 8, 1, 3, "wgmma", [64, 64, 16], 8, 0)
gemm("mm_f16_wgmma_130x72x136_bias", 130, 72, 136, "f16", acc="f32", bias=True, config=WG,
     targets=["sm_90a"])
gemm("mm_bf16_wgmma_tn_72x64x72", 72, 64, 72, "bf16", acc="f32", ta=True, config=WG,
     targets=["sm_90a"])
gemm("mm_f16_wgmma_nt_64x80x64", 64, 80, 64, "f16", acc="f32", tb=True, config=WG,
     targets=["sm_90a"])
TMA = mm_config(128, 128, 64, 4, 1, 2, "wgmma", [64, 128, 16], 8, 0, ", copy = tma")
TMA3 = mm_config(128, 64, 64, 8, 1, 3, "wgmma", [64, 64, 16], 8, 0, ", copy = tma")
gemm("mm_f16_tma_130x136x64", 130, 136, 64, "f16", config=TMA, targets=["sm_90a"])
gemm("mm_f16_tma3_100x72x328_bias_res", 100, 72, 328, "f16", acc="f32", bias=True,
     residual=True, config=TMA3, targets=["sm_90a"])
gemm("mm_bf16_tma3_tt_72x64x200", 72, 64, 200, "bf16", acc="f32", ta=True, tb=True,
     config=TMA3, targets=["sm_90a"])
gemm("bmm_f16_tma3_2x40x64x72", 40, 64, 72, "f16", acc="f32", batch=2, config=TMA3,
     targets=["sm_90a"])
gemm("mm_f16_tma3_130x64x72_bias_relu", 130, 64, 72, "f16", bias=True, relu=True, config=TMA3,
     targets=["sm_90a"])
# Stream-K (stream_k = B persistent blocks): tiles split across blocks,
# finished by the last to arrive (partials summed from the workspace), with
# and without a wgmma in flight (3 / 2 stages), a tile spanning 3 blocks,
# batches, transposes, more blocks than iterations (empty blocks).
def sk(config, blocks):
    return config[:-1] + f", stream_k = {blocks}>"


gemm("mm_f16_tma3_sk5_130x136x328_bias_res", 130, 136, 328, "f16", acc="f32", bias=True,
     residual=True, config=sk(TMA3, 5), targets=["sm_90a"])
gemm("mm_f16_tma_sk3_130x136x200_relu", 130, 136, 200, "f16", relu=True, config=sk(TMA, 3),
     targets=["sm_90a"])
gemm("mm_f16_tma3_sk4_64x64x1000", 64, 64, 1000, "f16", acc="f32", config=sk(TMA3, 4),
     targets=["sm_90a"])
gemm("bmm_bf16_tma3_sk7_tt_2x72x64x200", 72, 64, 200, "bf16", acc="f32", ta=True, tb=True,
     batch=2, config=sk(TMA3, 7), targets=["sm_90a"])
gemm("mm_f16_tma3_sk40_100x72x136", 100, 72, 136, "f16", config=sk(TMA3, 40),
     targets=["sm_90a"])
# The schedule's split remainder (getStreamKSchedule): rounds of whole tiles
# and then a tile split into a head and one piece, the pool's idle blocks
# (bias, residual); a head and two pieces after a round (2 stages, no wgmma
# in flight); six tiles whose six pieces one pool block takes in turn; four
# pieces of one tile, seven pool blocks idle; batched transposed bf16.
gemm("mm_f16_tma3_sk5split_130x136x1000_bias_res", 130, 136, 1000, "f16", acc="f32",
     bias=True, residual=True, config=sk(TMA3, 5), targets=["sm_90a"])
gemm("mm_f16_tma_sk3split_200x136x1200_relu", 200, 136, 1200, "f16", relu=True,
     config=sk(TMA, 3), targets=["sm_90a"])
gemm("mm_f16_tma3_sk7pool_130x136x4000", 130, 136, 4000, "f16", acc="f32", config=sk(TMA3, 7),
     targets=["sm_90a"])
gemm("mm_f16_tma3_sk12pieces_64x64x4000", 64, 64, 4000, "f16", acc="f32", config=sk(TMA3, 12),
     targets=["sm_90a"])
gemm("bmm_bf16_tma3_sk7split_tt_2x72x64x1000", 72, 64, 1000, "bf16", acc="f32", ta=True, tb=True,
     batch=2, config=sk(TMA3, 7), targets=["sm_90a"])
# Whole tiles per block (B divides the tiles: the persistent data-parallel
# grid the model picks for short-K grids of several waves): each block's
# second tile's loads run under its first tile's epilogue.
gemm("mm_f16_tma3_sk3whole_130x136x328_bias_res", 130, 136, 328, "f16", acc="f32",
     bias=True, residual=True, config=sk(TMA3, 3), targets=["sm_90a"])


# ---- conv2d ----------------------------------------------------------------------------------

def conv(name, n, c, h, w, f, kh, kw, layout, dt, acc=None, stride=(1, 1), pad=(0, 0, 0, 0),
         dil=(1, 1), groups=1, bias=False, targets=TARGETS, config=None, flags=(), tol=None):
    acc = acc or dt
    oh = (h + pad[0] + pad[1] - dil[0] * (kh - 1) - 1) // stride[0] + 1
    ow = (w + pad[2] + pad[3] - dil[1] * (kw - 1) - 1) // stride[1] + 1
    cg = c // groups
    xs = [n, h, w, c] if layout == "nhwc" else [n, c, h, w]
    ws = [f, kh, kw, cg] if layout == "nhwc" else [f, cg, kh, kw]
    os_ = [n, oh, ow, f] if layout == "nhwc" else [n, f, oh, ow]
    attrs = (f" layout = {layout} strides = [{stride[0]}, {stride[1]}] padding = "
             f"[{', '.join(map(str, pad))}] dilations = [{dil[0]}, {dil[1]}]")
    if groups != 1:
        attrs += f" groups = {groups}"
    args = [("x", xs, dt), ("w", ws, dt)] + ([("b", [f] if layout == "nhwc" else [f, 1, 1], acc)] if bias else [])
    sig = ", ".join(f"%{a}: {t(s, d)}" for a, s, d in args)
    lines = [f"%y = kgraph.conv2d %x_, %w_{attrs} : {t(xs, dt)}, {t(ws, dt)} -> {t(os_, acc)}"]
    cur = "%y"
    if bias:
        lines.append(f"%z = kgraph.add %y, %b_ : {t(os_, acc)}, {t(args[2][1], acc)}")
        cur = "%z"
    if config:
        names = ", ".join(f"%{a}" for a, _, _ in args)
        bargs = ", ".join(f"%{a}_: {t(s, d)}" for a, s, d in args)
        types = ", ".join(t(s, d) for _, s, d in args)
        text = (f"func.func @main({sig}) -> {t(os_, acc)} {{\n"
                f"  %0 = kgraph.fused ({names}) {{kgraph.config = {config}}} : ({types}) -> {t(os_, acc)} {{\n"
                f"  ^bb0({bargs}):\n    " + "\n    ".join(lines) +
                f"\n    kgraph.yield {cur} : {t(os_, acc)}\n  }}\n  return %0 : {t(os_, acc)}\n}}\n")
    else:
        body = "\n  ".join(l.replace("%x_", "%x").replace("%w_", "%w").replace("%b_", "%b") for l in lines)
        text = f"func.func @main({sig}) -> {t(os_, acc)} {{\n  {body}\n  return {cur} : {t(os_, acc)}\n}}\n"

    def ref(x, wt, *rest):
        if layout == "nhwc":
            x = x.permute(0, 3, 1, 2)
            wt = wt.permute(0, 3, 1, 2)
        x = F.pad(x, (pad[2], pad[3], pad[0], pad[1]))
        y = F.conv2d(x, wt, stride=stride, dilation=dil, groups=groups)
        if layout == "nhwc":
            y = y.permute(0, 2, 3, 1)
        y = rnd(y, acc)
        if bias:
            y = rnd(y + rest[0], acc)
        return y
    inputs = [(xs, dt, -1.0, 1.0), (ws, dt, -1.0, 1.0)] + ([(args[2][1], acc, -0.5, 0.5)] if bias else [])
    add(name, text, inputs, ref, tol or gemm_tol(kh * kw * cg, acc, 1 + bias), flags=flags,
        targets=targets, fuse=(False, True) if not config else (False,))


conv("conv_nhwc_f16_1x7x7x8_f16_k3p1_bias", 1, 8, 7, 7, 16, 3, 3, "nhwc", "f16",
     pad=(1, 1, 1, 1), bias=True)
conv("conv_nchw_f32_2x3x9x8_f5_k3s2", 2, 3, 9, 8, 5, 3, 3, "nchw", "f32", stride=(2, 2))
conv("conv_nhwc_f32_1x6x6x4_f6_k2d2_g2", 1, 4, 6, 6, 6, 2, 2, "nhwc", "f32", dil=(2, 2),
     groups=2, pad=(1, 0, 0, 1))
conv("conv_nchw_f16_1x16x5x5_f8_k1", 1, 16, 5, 5, 8, 1, 1, "nchw", "f16", acc="f32")
conv("conv_nhwc_bf16_2x5x5x8_f8_k3s2p1", 2, 8, 5, 5, 8, 3, 3, "nhwc", "bf16", acc="f32",
     stride=(2, 2), pad=(1, 1, 1, 1))
conv("conv_nhwc_f16_wgmma_1x9x9x16_f64_k3p1", 1, 16, 9, 9, 64, 3, 3, "nhwc", "f16", acc="f32",
     pad=(1, 1, 1, 1), targets=["sm_90a"],
     config=mm_config(128, 64, 64, 8, 1, 3, "wgmma", [64, 64, 16], 8, 0))
# TMA im2col loads of the input (copy = tma on sm_90a): M blocks starting
# mid-row and mid-image, ragged M, two 64-channel boxes per k tile (tile_k
# 128), strides, asymmetric padding, dilation; a strided 1x1 (im2col) and a
# plain 1x1 (tiled maps over [N*H*W][C]).
TMA_T64 = mm_config(64, 64, 128, 4, 1, 3, "wgmma", [64, 64, 16], 8, 0, ", copy = tma")
conv("conv_nhwc_f16_tma_2x9x11x128_f72_k3p1_bias", 2, 128, 9, 11, 72, 3, 3, "nhwc", "f16",
     acc="f32", pad=(1, 1, 1, 1), bias=True, targets=["sm_90a"], config=TMA3)
conv("conv_nhwc_f16_tma_2x13x13x128_f64_k3s2p10", 2, 128, 13, 13, 64, 3, 3, "nhwc", "f16",
     stride=(2, 2), pad=(1, 0, 1, 0), targets=["sm_90a"], config=TMA_T64)
conv("conv_nhwc_bf16_tma_1x10x9x64_f64_k3d2p2", 1, 64, 10, 9, 64, 3, 3, "nhwc", "bf16",
     acc="f32", dil=(2, 2), pad=(2, 2, 2, 2), targets=["sm_90a"], config=TMA3)
conv("conv_nhwc_f16_tma_2x9x9x64_f64_k1s2", 2, 64, 9, 9, 64, 1, 1, "nhwc", "f16",
     stride=(2, 2), targets=["sm_90a"], config=TMA3)
conv("conv_nhwc_f16_tma_2x7x7x64_f64_k1", 2, 64, 7, 7, 64, 1, 1, "nhwc", "f16",
     targets=["sm_90a"], config=TMA3)
conv("conv_nhwc_f16_tma_sk6_2x9x11x128_f72_k3p1_bias", 2, 128, 9, 11, 72, 3, 3, "nhwc",
     "f16", acc="f32", pad=(1, 1, 1, 1), bias=True, targets=["sm_90a"], config=sk(TMA3, 6))
conv("conv_nhwc_f16_tma_sk2whole_2x9x11x128_f72_k3p1_bias", 2, 128, 9, 11, 72, 3, 3,
     "nhwc", "f16", acc="f32", pad=(1, 1, 1, 1), bias=True, targets=["sm_90a"],
     config=sk(TMA3, 2))
conv("conv_nhwc_f16_cp_1x8x8x16_f32_k3p1", 1, 16, 8, 8, 32, 3, 3, "nhwc", "f16", acc="f32",
     pad=(1, 1, 1, 1), targets=["sm_80"],
     config=mm_config(64, 32, 32, 2, 2, 3, "mma_sync", [16, 8, 16], 8, 8))


# kgraph-split-k-convs (on by default): deep-K convs over few pixels become
# a grouped conv of partial sums over channel slices and their sum, into
# which the bias, residual and relu fuse. The shapes are ones the model
# splits on every target (lit test split-k-convs-pipeline.test checks it).
def splitk_case(name, layout, dt, n, c, h, w, f, k, stride, pad, residual=False,
                params=False):
    """params: the filter and bias are model parameters, so the filter's
    rearrangement is a once kernel (run first, into a derived buffer)."""
    oh = (h + pad[0] + pad[1] - k) // stride + 1
    ow = (w + pad[2] + pad[3] - k) // stride + 1
    xs = [n, h, w, c] if layout == "nhwc" else [n, c, h, w]
    ws = [f, k, k, c] if layout == "nhwc" else [f, c, k, k]
    ys = [n, oh, ow, f] if layout == "nhwc" else [n, f, oh, ow]
    bs = [f] if layout == "nhwc" else [f, 1, 1]
    mark = (lambda i: f' {{kgraph.param = "arg{i}"}}') if params else (lambda i: "")
    args = f"%x: {t(xs, dt)}, %w: {t(ws, dt)}{mark(1)}, %b: {t(bs, dt)}{mark(2)}"
    inputs = [(xs, dt, -1.0, 1.0), (ws, dt, -1.0, 1.0), (bs, dt, -0.5, 0.5)]
    body = (f"  %y = kgraph.conv2d %x, %w layout = {layout} strides = [{stride}, {stride}] "
            f"padding = [{', '.join(map(str, pad))}] : {t(xs, dt)}, {t(ws, dt)} -> {t(ys, dt)}\n"
            f"  %z = kgraph.add %y, %b : {t(ys, dt)}, {t(bs, dt)}\n")
    cur = "%z"
    if residual:
        args += f", %r: {t(ys, dt)}"
        inputs.append((ys, dt, -1.0, 1.0))
        body += f"  %s = kgraph.add %z, %r : {t(ys, dt)}, {t(ys, dt)}\n"
        cur = "%s"
    body += f"  %o = kgraph.relu {cur} : {t(ys, dt)}\n"

    def ref(x, wt, b, *r):
        if layout == "nhwc":
            x, wt = x.permute(0, 3, 1, 2), wt.permute(0, 3, 1, 2)
        y = F.conv2d(F.pad(x, (pad[2], pad[3], pad[0], pad[1])), wt, stride=stride)
        if layout == "nhwc":
            y = y.permute(0, 2, 3, 1)
        y = rnd(rnd(y, dt) + b, dt)
        if r:
            y = rnd(y + r[0], dt)
        return torch.relu(y)
    add(name, f"func.func @main({args}) -> {t(ys, dt)} {{\n{body}  return %o : {t(ys, dt)}\n}}\n",
        inputs, ref, gemm_tol(k * k * c, dt, 3 if residual else 2), flags=("--split-k-convs",))


splitk_case("splitk_nhwc_f16_1x3x3x256_f40_k3p1_res", "nhwc", "f16", 1, 256, 3, 3, 40, 3, 1,
            (1, 1, 1, 1), residual=True)
splitk_case("splitk_nchw_f32_1x256x5x4_f24_k3s2p1", "nchw", "f32", 1, 256, 5, 4, 24, 3, 2,
            (1, 1, 1, 0))
splitk_case("splitk_params_nhwc_f16_1x3x3x256_f40_k3p1_res", "nhwc", "f16", 1, 256, 3, 3,
            40, 3, 1, (1, 1, 1, 1), residual=True, params=True)


# ---- stencils and pooling --------------------------------------------------------------------

add("stencil_blur_relu_f32_nchw",
    f"func.func @main(%x: {t([1, 1, 11, 13], 'f32')}, %w: {t([1, 1, 3, 3], 'f32')}) -> {t([1, 1, 11, 13], 'f32')} {{\n"
    f"  %y = kgraph.conv2d %x, %w strides = [1, 1] padding = [1, 1, 1, 1] dilations = [1, 1] : "
    f"{t([1, 1, 11, 13], 'f32')}, {t([1, 1, 3, 3], 'f32')} -> {t([1, 1, 11, 13], 'f32')}\n"
    f"  %r = kgraph.relu %y : {t([1, 1, 11, 13], 'f32')}\n"
    f"  return %r : {t([1, 1, 11, 13], 'f32')}\n}}\n",
    [([1, 1, 11, 13], "f32", -1.0, 1.0), ([1, 1, 3, 3], "f32", -1.0, 1.0)],
    lambda x, w: torch.relu(F.conv2d(F.pad(x, (1, 1, 1, 1)), w)), (1e-6, 1e-6))
# A stencil chain whose first value is read again by the last stage (a
# skip connection): blur, max pool, avg pool, + blur, relu in one kernel.
# Shared memory is shared by liveness (the avg pool's region takes the
# staged input's bytes), never a value some later stage still reads.
_S = [1, 2, 13, 11]
add("stencil_skip_chain_f32_nchw",
    f"func.func @main(%x: {t(_S, 'f32')}, %w: {t([2, 2, 3, 3], 'f32')}) -> {t(_S, 'f32')} {{\n"
    f"  %b = kgraph.conv2d %x, %w padding = [1, 1, 1, 1] : {t(_S, 'f32')}, {t([2, 2, 3, 3], 'f32')} -> {t(_S, 'f32')}\n"
    f"  %m = kgraph.pool2d max %b kernel = [3, 3] padding = [1, 1, 1, 1] : {t(_S, 'f32')}\n"
    f"  %a = kgraph.pool2d avg %m kernel = [3, 3] padding = [1, 1, 1, 1] : {t(_S, 'f32')}\n"
    f"  %s = kgraph.add %a, %b : {t(_S, 'f32')}, {t(_S, 'f32')}\n"
    f"  %r = kgraph.relu %s : {t(_S, 'f32')}\n"
    f"  return %r : {t(_S, 'f32')}\n}}\n",
    [(_S, "f32", -1.0, 1.0), ([2, 2, 3, 3], "f32", -1.0, 1.0)],
    lambda x, w: torch.relu(_skip_chain(x, w)), (1e-5, 1e-5))

# Constant filters the stencil kernel applies separably (StencilTiling.h's
# getStencilFilterSlice): a rank-one 5x5 slice with fractional and negative
# weights, a rank-two slice (tap by tap), an all-zero slice and a 1x5 row
# inside a 5x5 slice; then a 3x3 max pool and a 3x3/2 avg pool that
# combine row maxima and sums (the avg pool's rows at stride 2).
_SEP_U, _SEP_V = [0.25, 0.5, 1.0, 0.5, 0.25], [1.0, -2.0, 3.0, -2.0, 1.0]
_SEP_W = torch.zeros(2, 2, 5, 5, dtype=torch.float64)
_SEP_W[0, 0] = torch.outer(torch.tensor(_SEP_U, dtype=torch.float64), torch.tensor(_SEP_V, dtype=torch.float64))
_SEP_W[0, 1] = _SEP_W[0, 0] + torch.eye(5, dtype=torch.float64)
_SEP_W[1, 1, 2] = torch.tensor([1.0, 2.0, -1.0, 0.5, 3.0], dtype=torch.float64)
_SEP_S, _SEP_O = [1, 2, 13, 11], [1, 2, 7, 6]


def _dense(x):
    return "[" + ", ".join(_dense(v) for v in x) + "]" if isinstance(x, list) else repr(float(x))


def _sep_chain(x):
    b = F.conv2d(F.pad(x, (2, 2, 2, 2)), _SEP_W)
    m = F.max_pool2d(F.pad(b, (1, 1, 1, 1), value=-math.inf), 3, 1)
    ones = torch.ones_like(m)
    return (F.avg_pool2d(F.pad(m, (1, 1, 1, 1)), 3, 2, divisor_override=1)
            / F.avg_pool2d(F.pad(ones, (1, 1, 1, 1)), 3, 2, divisor_override=1))


add("stencil_separable_filters_f32_nchw",
    f"func.func @main(%x: {t(_SEP_S, 'f32')}) -> {t(_SEP_O, 'f32')} {{\n"
    f"  %w = arith.constant dense<{_dense(_SEP_W.tolist())}> : {t([2, 2, 5, 5], 'f32')}\n"
    f"  %b = kgraph.conv2d %x, %w padding = [2, 2, 2, 2] : {t(_SEP_S, 'f32')}, {t([2, 2, 5, 5], 'f32')} -> {t(_SEP_S, 'f32')}\n"
    f"  %m = kgraph.pool2d max %b kernel = [3, 3] padding = [1, 1, 1, 1] : {t(_SEP_S, 'f32')}\n"
    f"  %a = kgraph.pool2d avg %m kernel = [3, 3] strides = [2, 2] padding = [1, 1, 1, 1] : {t(_SEP_S, 'f32')}\n"
    f"  return %a : {t(_SEP_O, 'f32')}\n}}\n",
    [(_SEP_S, "f32", -1.0, 1.0)], _sep_chain, (1e-5, 1e-5))


def _skip_chain(x, w):
    b = F.conv2d(F.pad(x, (1, 1, 1, 1)), w)
    m = F.max_pool2d(F.pad(b, (1, 1, 1, 1), value=-math.inf), 3, 1)
    ones = torch.ones_like(m)
    a = (F.avg_pool2d(F.pad(m, (1, 1, 1, 1)), 3, 1, divisor_override=1)
         / F.avg_pool2d(F.pad(ones, (1, 1, 1, 1)), 3, 1, divisor_override=1))
    return a + b


add("pool_max_neg_nhwc_f16",
    f"func.func @main(%x: {t([1, 7, 9, 3], 'f16')}) -> {t([1, 4, 5, 3], 'f16')} {{\n"
    f"  %y = kgraph.pool2d max %x kernel = [3, 3] strides = [2, 2] padding = [1, 1, 1, 1] layout = nhwc : {t([1, 7, 9, 3], 'f16')}\n"
    f"  return %y : {t([1, 4, 5, 3], 'f16')}\n}}\n",
    [([1, 7, 9, 3], "f16", -3.0, -0.5)],
    lambda x: F.max_pool2d(F.pad(x.permute(0, 3, 1, 2), (1, 1, 1, 1), value=-math.inf), 3, 2).permute(0, 2, 3, 1),
    (0.0, 0.0))
# An integer conv2d of stencil shape (same size, <= 4 channels) is an
# implicit GEMM, not a stencil op (fuzz graph 20261201-88733): the stencil
# emitter computes floats. Its abs feeds an integer max pool.
add("conv_i8_stencil_shape_abs_pool_max_nhwc",
    f"func.func @main(%x: {t([1, 12, 9, 4], 'i8')}, %w: {t([2, 2, 3, 4], 'i8')}) -> {t([1, 6, 6, 2], 'i32')} {{\n"
    f"  %y = kgraph.conv2d %x, %w layout = nhwc strides = [1, 1] padding = [0, 1, 0, 2] dilations = [1, 1] : "
    f"{t([1, 12, 9, 4], 'i8')}, {t([2, 2, 3, 4], 'i8')} -> {t([1, 12, 9, 2], 'i32')}\n"
    f"  %a = kgraph.abs %y : {t([1, 12, 9, 2], 'i32')}\n"
    f"  %p = kgraph.pool2d max %a kernel = [2, 3] strides = [2, 2] padding = [0, 0, 2, 2] layout = nhwc : {t([1, 12, 9, 2], 'i32')}\n"
    f"  return %p : {t([1, 6, 6, 2], 'i32')}\n}}\n",
    [([1, 12, 9, 4], "i8", -128, 127), ([2, 2, 3, 4], "i8", -128, 127)],
    # float64 is exact for these sums; every pooling window holds a real
    # element and abs is >= 0, so padding the pool with 0 is exact too.
    lambda x, w: F.max_pool2d(F.pad(F.conv2d(F.pad(x.double().permute(0, 3, 1, 2), (0, 2, 0, 1)),
                                            w.double().permute(0, 3, 1, 2)).abs(), (2, 2, 0, 0)),
                              (2, 3), 2).permute(0, 2, 3, 1).long(),
    (0.0, 0.0))


# ---- window kernels: channels-last pools and depthwise/grouped conv2d ------------------------

def nchw(x):
    return x.permute(0, 3, 1, 2)


def nhwc(x):
    return x.permute(0, 2, 3, 1)


def pool_nhwc(name, kind, shape, dt, kernel, stride, pad, lo=-1.0, hi=1.0, relu=False,
              targets=TARGETS):
    """A channels-last pool2d (ragged everything: the window kernel's case),
    optionally with a relu consumer."""
    n, h, w, c = shape
    oh = (h + pad[0] + pad[1] - kernel[0]) // stride[0] + 1
    ow = (w + pad[2] + pad[3] - kernel[1]) // stride[1] + 1
    out = [n, oh, ow, c]
    lines = (f"  %y = kgraph.pool2d {kind} %x kernel = [{kernel[0]}, {kernel[1]}] strides = "
             f"[{stride[0]}, {stride[1]}] padding = [{', '.join(map(str, pad))}] layout = nhwc : "
             f"{t(shape, dt)}\n")
    res = "%y"
    if relu:
        lines += f"  %r = kgraph.relu %y : {t(out, dt)}\n"
        res = "%r"
    text = f"func.func @main(%x: {t(shape, dt)}) -> {t(out, dt)} {{\n{lines}  return {res} : {t(out, dt)}\n}}\n"
    integer = dt in ("i8", "i32")

    def ref(x):
        xp = nchw(x.double())
        if kind == "max":
            y = F.max_pool2d(F.pad(xp, (pad[2], pad[3], pad[0], pad[1]), value=-math.inf),
                             kernel, stride)
        else:
            ones = torch.ones_like(xp)
            s = F.avg_pool2d(F.pad(xp, (pad[2], pad[3], pad[0], pad[1])), kernel, stride,
                             divisor_override=1)
            cnt = F.avg_pool2d(F.pad(ones, (pad[2], pad[3], pad[0], pad[1])), kernel, stride,
                               divisor_override=1)
            y = s / cnt
        y = nhwc(y)
        if integer:
            y = y.long()
        else:
            y = rnd(y, dt)
        return torch.relu(y) if relu else y
    tol = (0.0, 0.0) if integer or kind == "max" else (2 * U[dt], 1e-7)
    add(name, text, [(shape, dt, lo, hi)], ref, tol, targets=targets)


# Max over all-negative windows (a start value of 0 would win), ragged
# pixel counts, channel counts that leave W = 8, 4, 2 and 1.
pool_nhwc("window_pool_max_neg_f16_2x13x21x64_k3s2p1", "max", [2, 13, 21, 64], "f16",
          (3, 3), (2, 2), (1, 1, 1, 1), lo=-3.0, hi=-0.5)
pool_nhwc("window_pool_max_f32_1x9x7x12_k3s2p1_relu", "max", [1, 9, 7, 12], "f32",
          (3, 3), (2, 2), (1, 1, 1, 1), relu=True)
pool_nhwc("window_pool_avg_bf16_2x7x8x40_k3s2p1", "avg", [2, 7, 8, 40], "bf16",
          (3, 3), (2, 2), (1, 1, 1, 1))
pool_nhwc("window_pool_avg_f16_1x5x6x10_k2s3p02", "avg", [1, 5, 6, 10], "f16",
          (2, 3), (3, 3), (0, 1, 2, 2))
pool_nhwc("window_pool_max_i8_2x6x5x7_k3s1p1", "max", [2, 6, 5, 7], "i8",
          (3, 3), (1, 1), (1, 1, 1, 1), lo=-128, hi=127)
# A window too large to unroll (12x12 taps loop over rows).
pool_nhwc("window_pool_avg_f32_1x12x12x8_k12_global", "avg", [1, 12, 12, 8], "f32",
          (12, 12), (1, 1), (0, 0, 0, 0))
# Depthwise (groups = C) with bias + relu, stride and dilation; grouped
# convs with 2 input channels per group (uniform loads) and with 2 output
# channels per group (gathered loads); an i8 depthwise conv to i32.
conv("window_dw_nhwc_f16_2x9x11x24_k3p1_bias", 2, 24, 9, 11, 24, 3, 3, "nhwc", "f16",
     pad=(1, 1, 1, 1), groups=24, bias=True)
conv("window_dw_nhwc_f32_1x10x9x8_k3s2d2p2", 1, 8, 10, 9, 8, 3, 3, "nhwc", "f32",
     stride=(2, 2), dil=(2, 2), pad=(2, 1, 2, 0), groups=8)
conv("window_grouped_nhwc_bf16_1x7x6x16_f8_g8", 1, 16, 7, 6, 8, 3, 3, "nhwc", "bf16",
     acc="f32", pad=(1, 1, 1, 1), groups=8)
conv("window_grouped_nhwc_f32_1x6x5x6_f12_g6", 1, 6, 6, 5, 12, 3, 3, "nhwc", "f32",
     pad=(1, 1, 1, 1), groups=6)
conv("window_dw_nhwc_f16_1x9x9x16_k7p3", 1, 16, 9, 9, 16, 7, 7, "nhwc", "f16",
     pad=(3, 3, 3, 3), groups=16)
# 16 input channels per group: an implicit GEMM (one per group), not a
# window op.
conv("conv_nhwc_f32_1x5x5x32_f8_k3_g2_gemm", 1, 32, 5, 5, 8, 3, 3, "nhwc", "f32",
     pad=(1, 1, 1, 1), groups=2)
# An i8 depthwise conv accumulating in i32 (exact), with an i32 bias.
add("window_dw_nhwc_i8_2x7x6x16_k3s2p1_bias_i32",
    f"func.func @main(%x: {t([2, 7, 6, 16], 'i8')}, %w: {t([16, 3, 3, 1], 'i8')}, %b: {t([16], 'i32')}) -> {t([2, 4, 3, 16], 'i32')} {{\n"
    f"  %y = kgraph.conv2d %x, %w layout = nhwc strides = [2, 2] padding = [1, 1, 1, 1] groups = 16 : "
    f"{t([2, 7, 6, 16], 'i8')}, {t([16, 3, 3, 1], 'i8')} -> {t([2, 4, 3, 16], 'i32')}\n"
    f"  %z = kgraph.add %y, %b : {t([2, 4, 3, 16], 'i32')}, {t([16], 'i32')}\n"
    f"  return %z : {t([2, 4, 3, 16], 'i32')}\n}}\n",
    [([2, 7, 6, 16], "i8", -128, 127), ([16, 3, 3, 1], "i8", -128, 127), ([16], "i32", -1000, 1000)],
    lambda x, w, b: (F.conv2d(x.double().permute(0, 3, 1, 2), w.double().permute(0, 3, 1, 2),
                              stride=2, padding=1, groups=16).permute(0, 2, 3, 1) + b).long(),
    (0.0, 0.0))
# Strips (window_config strip = R): R pixels of a row share their windows'
# columns. Pinned: a ragged last strip (OW = 11, R = 3) with a bias, several
# strips per thread (grid smaller than the strips); stride and dilation 2
# (columns r * 2 + kw * 2 overlap); uniform loads (2 input channels per
# group); gathered loads (2 output channels per group); R = OW.
def wcfg(width, bx, by, grid, strip):
    return (f"#kgraph.window_config<vector_width = {width}, block_x = {bx}, "
            f"block_y = {by}, grid_size = {grid}, strip = {strip}>")


conv("window_strip3_dw_nhwc_f16_2x9x11x24_k3p1_bias", 2, 24, 9, 11, 24, 3, 3, "nhwc", "f16",
     pad=(1, 1, 1, 1), groups=24, bias=True, config=wcfg(8, 3, 32, 2, 3))
conv("window_strip2_dw_nhwc_f32_1x10x9x8_k3s2d2p2", 1, 8, 10, 9, 8, 3, 3, "nhwc", "f32",
     stride=(2, 2), dil=(2, 2), pad=(2, 1, 2, 0), groups=8, config=wcfg(4, 2, 16, 1, 2))
conv("window_strip4_grouped_nhwc_bf16_1x7x6x16_f8_g8", 1, 16, 7, 6, 8, 3, 3, "nhwc", "bf16",
     acc="f32", pad=(1, 1, 1, 1), groups=8, config=wcfg(4, 2, 16, 1, 4))
conv("window_strip2_grouped_nhwc_f32_1x6x5x6_f12_g6", 1, 6, 6, 5, 12, 3, 3, "nhwc", "f32",
     pad=(1, 1, 1, 1), groups=6, config=wcfg(4, 3, 32, 1, 2))
conv("window_strip5_dw_nhwc_f16_1x9x5x16_k5p2", 1, 16, 9, 5, 16, 5, 5, "nhwc", "f16",
     pad=(2, 2, 2, 2), groups=16, config=wcfg(8, 2, 16, 2, 5))
# Producers of a window op's input evaluated per tap: a per-channel scale
# (a broadcast operand read at the tap's channels) and a relu feeding a max
# pool, a residual added after it; the scale is a group input (--fuse: one
# kernel).
add("window_pool_producers_f16_2x9x10x16",
    f"func.func @main(%x: {t([2, 9, 10, 16], 'f16')}, %s: {t([16], 'f16')}, %r: {t([2, 5, 5, 16], 'f16')}) -> {t([2, 5, 5, 16], 'f16')} {{\n"
    f"  %m = kgraph.mul %x, %s : {t([2, 9, 10, 16], 'f16')}, {t([16], 'f16')}\n"
    f"  %a = kgraph.relu %m : {t([2, 9, 10, 16], 'f16')}\n"
    f"  %p = kgraph.pool2d max %a kernel = [3, 3] strides = [2, 2] padding = [1, 1, 1, 1] layout = nhwc : {t([2, 9, 10, 16], 'f16')}\n"
    f"  %y = kgraph.add %p, %r : {t([2, 5, 5, 16], 'f16')}, {t([2, 5, 5, 16], 'f16')}\n"
    f"  return %y : {t([2, 5, 5, 16], 'f16')}\n}}\n",
    [([2, 9, 10, 16], "f16", -1.0, 1.0), ([16], "f16", -2.0, 2.0), ([2, 5, 5, 16], "f16", -1.0, 1.0)],
    lambda x, s, r: rnd(rnd(nhwc(F.max_pool2d(nchw(torch.relu(rnd(x * s, "f16"))), 3, 2, 1)), "f16") + r, "f16"),
    (U["f16"], 1e-7))


# ---- kgraph-pad-conv-channels -----------------------------------------------------------------

# A stem-like conv of 3 channels with bias and relu, its channels padded with
# zeros to one 16-byte vector (f16: 8, f32: 4) by --pad-conv-channels=16:
# the same function (the zero channels add 0 * 0), three kernels.
for dt, acc in (("f16", "f16"), ("f32", "f32")):
    add(f"pad_channels_stem_{dt}_2x13x11x3_f16_k7s2p3",
        f"func.func @main(%x: {t([2, 13, 11, 3], dt)}, %w: {t([16, 7, 7, 3], dt)}, %b: {t([16], dt)}) -> {t([2, 7, 6, 16], dt)} {{\n"
        f"  %y = kgraph.conv2d %x, %w layout = nhwc strides = [2, 2] padding = [3, 3, 3, 3] : "
        f"{t([2, 13, 11, 3], dt)}, {t([16, 7, 7, 3], dt)} -> {t([2, 7, 6, 16], dt)}\n"
        f"  %z = kgraph.add %y, %b : {t([2, 7, 6, 16], dt)}, {t([16], dt)}\n"
        f"  %r = kgraph.relu %z : {t([2, 7, 6, 16], dt)}\n"
        f"  return %r : {t([2, 7, 6, 16], dt)}\n}}\n",
        [([2, 13, 11, 3], dt, -1.0, 1.0), ([16, 7, 7, 3], dt, -1.0, 1.0), ([16], dt, -0.5, 0.5)],
        lambda x, w, b, dt=dt: torch.relu(rnd(rnd(nhwc(F.conv2d(nchw(x), w.permute(0, 3, 1, 2), stride=2,
                                                              padding=3)), dt) + b, dt)),
        gemm_tol(147, acc, 2), flags=("--pad-conv-channels=16",))


# ---- kgraph-winograd-convs ---------------------------------------------------------------------
# 3x3 stride-1 f32 convs as Winograd F(4x4, 3x3) (--winograd-convs): filter
# and input transforms, 36 batched GEMMs, the output transform with the
# epilogue. Images of partial tiles (OH, OW not multiples of 4), lanes that
# straddle tiles (OW not a multiple of the vector width), asymmetric
# padding, both layouts. The transforms' constants (up to 8, down to 1/24)
# lose a few more ulps than the direct sum: the bound is 8x the GEMM's.


def wino_tol(k):
    r, a = gemm_tol(k, "f32", 2)
    return (8 * r, 8 * a)


# The layers are small: the channel and work floors (64, 2^29) are lowered.
WINO = ("--winograd-convs", "--winograd-min-channels=16", "--winograd-min-macs=0")
conv("wino_nchw_f32_2x16x10x10_f16_p1_bias", 2, 16, 10, 10, 16, 3, 3, "nchw", "f32",
     pad=(1, 1, 1, 1), bias=True, flags=WINO, tol=wino_tol(144))
conv("wino_nchw_f32_1x16x8x8_f32_p1", 1, 16, 8, 8, 32, 3, 3, "nchw", "f32",
     pad=(1, 1, 1, 1), flags=WINO, targets=("sm_90a",), tol=wino_tol(144))
conv("wino_nchw_f32_1x20x7x9_f16_p0211", 1, 20, 7, 9, 16, 3, 3, "nchw", "f32",
     pad=(0, 2, 1, 1), flags=WINO, targets=("sm_90a",), tol=wino_tol(180))
conv("wino_nhwc_f32_2x10x9x16_f24_p1_bias", 2, 16, 10, 9, 24, 3, 3, "nhwc", "f32",
     pad=(1, 1, 1, 1), bias=True, flags=WINO, targets=("sm_90a",), tol=wino_tol(144))
conv("wino_nhwc_f32_1x6x13x18_f16_p0", 1, 18, 6, 13, 16, 3, 3, "nhwc", "f32",
     flags=WINO, targets=("sm_90a",), tol=wino_tol(162))
# Odd innermost dims of the input transform (9 tiles; 17 channels): one
# lane per thread.
conv("wino_nchw_f32_1x16x10x10_f16_p1", 1, 16, 10, 10, 16, 3, 3, "nchw", "f32",
     pad=(1, 1, 1, 1), flags=WINO, targets=("sm_90a",), tol=wino_tol(144))
conv("wino_nhwc_f32_1x7x7x17_f16_p1", 1, 17, 7, 7, 16, 3, 3, "nhwc", "f32",
     pad=(1, 1, 1, 1), flags=WINO, targets=("sm_90a",), tol=wino_tol(153))



def wino_ops(name, n, c, h, w, f, layout, m, pad, input_config=None):
    """The three transform ops written by hand (F(m x m, 3 x 3), m = 2 or
    4, which the pass does not pick), around a batched matmul; the input
    transform's group pinned to `input_config` where given."""
    a = m + 2
    oh, ow = h + pad[0] + pad[1] - 2, w + pad[2] + pad[3] - 2
    tiles = n * -(-oh // m) * -(-ow // m)
    nhwc = layout == "nhwc"
    xs, ws = ([n, h, w, c], [f, 3, 3, c]) if nhwc else ([n, c, h, w], [f, c, 3, 3])
    ys = [n, oh, ow, f] if nhwc else [n, f, oh, ow]
    vs = [a * a, tiles, c] if nhwc else [a * a, c, tiles]
    ms = [a * a, tiles, f] if nhwc else [a * a, f, tiles]
    us = [a * a, f, c]
    lay = f" layout = {layout}" if nhwc else ""
    mm = (f"%m = kgraph.matmul %v, %u {{transpose_b}} : {t(vs, 'f32')}, {t(us, 'f32')} -> {t(ms, 'f32')}"
          if nhwc else
          f"%m = kgraph.matmul %u, %v : {t(us, 'f32')}, {t(vs, 'f32')} -> {t(ms, 'f32')}")
    text = (f"func.func @main(%x: {t(xs, 'f32')}, %w: {t(ws, 'f32')}) -> {t(ys, 'f32')} {{\n"
            f"  %u = kgraph.winograd_filter %w{lay} output_tile = {m} : {t(ws, 'f32')} -> {t(us, 'f32')}\n"
            + (f"  %v = kgraph.fused (%x) {{kgraph.config = {input_config}}} : ({t(xs, 'f32')}) -> {t(vs, 'f32')} {{\n"
               f"  ^bb0(%x_: {t(xs, 'f32')}):\n" if input_config else "") +
            f"  {'  %v_' if input_config else '%v'} = kgraph.winograd_input {'%x_' if input_config else '%x'}{lay}"
            f" padding = [{', '.join(map(str, pad))}] output_tile = {m}"
            f" : {t(xs, 'f32')} -> {t(vs, 'f32')}\n"
            + (f"    kgraph.yield %v_ : {t(vs, 'f32')}\n  }}\n" if input_config else "") +
            f"  {mm}\n"
            f"  %y = kgraph.winograd_output %m{lay} output_tile = {m} : {t(ms, 'f32')} -> {t(ys, 'f32')}\n"
            f"  return %y : {t(ys, 'f32')}\n}}\n")

    def ref(x, wt):
        if nhwc:
            x, wt = x.permute(0, 3, 1, 2), wt.permute(0, 3, 1, 2)
        y = F.conv2d(F.pad(x, (pad[2], pad[3], pad[0], pad[1])), wt)
        return rnd(y.permute(0, 2, 3, 1) if nhwc else y, "f32")
    add(name, text, [(xs, "f32", -1.0, 1.0), (ws, "f32", -1.0, 1.0)], ref,
        wino_tol(9 * c), targets=("sm_90a",))


wino_ops("wino_ops_f2_nchw_1x8x6x7_f8_p1", 1, 8, 6, 7, 8, "nchw", 2, (1, 1, 1, 1))
wino_ops("wino_ops_f2_nhwc_2x5x6x8_f4_p0101", 2, 8, 5, 6, 4, "nhwc", 2, (0, 1, 0, 1))
wino_ops("wino_ops_f4_nhwc_1x9x6x4_f8_p1", 1, 4, 9, 6, 8, "nhwc", 4, (1, 1, 1, 1))
# Whole-tile input transforms under pinned configurations: unrolled
# grid-stride trips, the one-step loop after them, one lane and two.
wino_ops("wino_ops_f4_nchw_2x8x9x9_f8_p1_unroll2", 2, 8, 9, 9, 8, "nchw", 4, (1, 1, 1, 1),
         "#kgraph.elementwise_config<block_size = 32, vector_width = 2, unroll = 2, grid_size = 1>")
wino_ops("wino_ops_f4_nhwc_1x9x6x6_f8_p1_unroll2", 1, 6, 9, 6, 8, "nhwc", 4, (1, 1, 1, 1),
         "#kgraph.elementwise_config<block_size = 32, vector_width = 1, unroll = 2, grid_size = 1>")

# ---- kgraph-space-to-depth-convs --------------------------------------------------------------

# Strided few-channel convs rewritten by --space-to-depth-convs as stride-1
# convs over the space-to-depth input: the stem with bias and relu on odd
# sizes (a last partial block of zero rows and columns), a 3x3/2 conv whose
# padding shifts the filter by a zero tap, a stride of 2 along rows only,
# a 2x2/2 conv that never reads the last row and column (sliced off), and
# padding of whole blocks (4 at stride 2).
def s2d_case(name, dt, n, h, w, c, f, kh, kw, strides, pad, bias_relu=False):
    oh = (h + pad[0] + pad[1] - kh) // strides[0] + 1
    ow = (w + pad[2] + pad[3] - kw) // strides[1] + 1
    xs, ws, ys = [n, h, w, c], [f, kh, kw, c], [n, oh, ow, f]
    body = (f"  %y = kgraph.conv2d %x, %w layout = nhwc strides = [{strides[0]}, {strides[1]}] "
            f"padding = [{', '.join(map(str, pad))}] : {t(xs, dt)}, {t(ws, dt)} -> {t(ys, dt)}\n")
    args = f"%x: {t(xs, dt)}, %w: {t(ws, dt)}"
    inputs = [(xs, dt, -1.0, 1.0), (ws, dt, -1.0, 1.0)]
    out = "%y"
    if bias_relu:
        args += f", %b: {t([f], dt)}"
        inputs.append(([f], dt, -0.5, 0.5))
        body += (f"  %z = kgraph.add %y, %b : {t(ys, dt)}, {t([f], dt)}\n"
                 f"  %r = kgraph.relu %z : {t(ys, dt)}\n")
        out = "%r"

    def ref(x, wt, *b, dt=dt):
        y = F.pad(nchw(x), (pad[2], pad[3], pad[0], pad[1]))
        y = rnd(nhwc(F.conv2d(y, wt.permute(0, 3, 1, 2), stride=tuple(strides))), dt)
        return torch.relu(rnd(y + b[0], dt)) if b else y
    add(name, f"func.func @main({args}) -> {t(ys, dt)} {{\n{body}  return {out} : {t(ys, dt)}\n}}\n",
        inputs, ref, gemm_tol(kh * kw * c, dt, 2 if bias_relu else 1),
        flags=("--space-to-depth-convs",))


for dt in ("f16", "f32"):
    s2d_case(f"s2d_stem_{dt}_2x13x11x3_f16_k7s2p3", dt, 2, 13, 11, 3, 16, 7, 7, (2, 2), (3, 3, 3, 3),
             bias_relu=True)
s2d_case("s2d_bf16_2x9x10x3_f8_k3s2p1", "bf16", 2, 9, 10, 3, 8, 3, 3, (2, 2), (1, 1, 1, 1))
s2d_case("s2d_f16_1x10x7x2_f4_k5s21p2211", "f16", 1, 10, 7, 2, 4, 5, 5, (2, 1), (2, 2, 1, 1))
s2d_case("s2d_f16_1x17x9x3_f8_k2s2", "f16", 1, 17, 9, 3, 8, 2, 2, (2, 2), (0, 0, 0, 0))
s2d_case("s2d_f32_1x8x9x1_f4_k3s2p4", "f32", 1, 8, 9, 1, 4, 3, 3, (2, 2), (4, 0, 4, 1))
s2d_case("s2d_f16_1x12x12x3_f8_k5s3p1", "f16", 1, 12, 12, 3, 8, 5, 5, (3, 3), (1, 1, 1, 1))

# ---- tensor constants -----------------------------------------------------------------------
# Non-splat arith.constant tensors are plan buffers of kind "constant" (their
# bytes in the plan): read by elementwise kernels under broadcasting and
# through a view, as a GEMM's B operand (TMA on sm_90a), as a returned value
# (a copy kernel), as an i1 select mask, and transposed by a once kernel
# (only constants in) before a GEMM. Values are multiples of 1/8 in [-2, 2]
# (exact in f16), fixed by the case's own generator.


def _const_values(shape, dt, seed):
    g = torch.Generator().manual_seed(seed)
    n = math.prod(shape)
    if dt == "i1":
        return torch.randint(0, 2, (n,), generator=g).reshape(shape).to(torch.bool)
    if dt in ("i32", "i8"):
        return torch.randint(-50, 50, (n,), generator=g).reshape(shape).to(torch.int64)
    return (torch.randint(-16, 17, (n,), generator=g).to(torch.float64) / 8).reshape(shape)


def _dense(v, dt):
    """`v` as an MLIR dense literal of element type dt."""
    def lit(x):
        if dt == "i1":
            return "true" if bool(x) else "false"
        return str(int(x)) if dt in ("i32", "i8") else repr(float(x))

    def nest(a):
        return "[" + ", ".join(nest(e) if e.dim() else lit(e.item()) for e in a) + "]"
    return f"dense<{nest(v)}> : {t(list(v.shape), dt)}"


_cb = _const_values([7], "f32", 1)
_cs = _const_values([5, 1], "f32", 2)
add("const_add_mul_f32_5x7",
    "func.func @main(%x: tensor<5x7xf32>) -> tensor<5x7xf32> {\n"
    f"  %b = arith.constant {_dense(_cb, 'f32')}\n"
    f"  %s = arith.constant {_dense(_cs, 'f32')}\n"
    "  %y = kgraph.add %x, %b : tensor<5x7xf32>, tensor<7xf32>\n"
    "  %z = kgraph.mul %y, %s : tensor<5x7xf32>, tensor<5x1xf32>\n"
    "  return %z : tensor<5x7xf32>\n}\n",
    [([5, 7], "f32", -1.0, 1.0)], lambda x: rnd(rnd(x + _cb, "f32") * _cs, "f32"), (1e-6, 1e-6))

_cw = _const_values([13, 24], "f16", 3)
_cbias = _const_values([24], "f32", 4)
add("const_matmul_f16_9x13x24_bias",
    "func.func @main(%x: tensor<9x13xf16>) -> tensor<9x24xf32> {\n"
    f"  %w = arith.constant {_dense(_cw, 'f16')}\n"
    f"  %b = arith.constant {_dense(_cbias, 'f32')}\n"
    "  %m = kgraph.matmul %x, %w : tensor<9x13xf16>, tensor<13x24xf16> -> tensor<9x24xf32>\n"
    "  %y = kgraph.add %m, %b : tensor<9x24xf32>, tensor<24xf32>\n"
    "  return %y : tensor<9x24xf32>\n}\n",
    [([9, 13], "f16", -1.0, 1.0)], lambda x: rnd(x @ _cw + _cbias, "f32"),
    gemm_tol(13, "f32", 2, tf32=False))

# A transposed constant weight: the transpose reads only a constant, so it
# is a once kernel writing a derived buffer; the GEMM reads that.
_cwt = _const_values([24, 16], "f32", 5)
add("const_once_transpose_matmul_f32_6x16x24",
    "func.func @main(%x: tensor<6x16xf32>) -> tensor<6x24xf32> {\n"
    f"  %w = arith.constant {_dense(_cwt, 'f32')}\n"
    "  %t = kgraph.transpose %w, permutation = [1, 0] : tensor<24x16xf32>\n"
    "  %y = kgraph.matmul %x, %t : tensor<6x16xf32>, tensor<16x24xf32> -> tensor<6x24xf32>\n"
    "  %r = kgraph.relu %y : tensor<6x24xf32>\n"
    "  return %r : tensor<6x24xf32>\n}\n",
    [([6, 16], "f32", -1.0, 1.0)], lambda x: torch.relu(rnd(x @ _cwt.T, "f32")),
    gemm_tol(16, "f32"))

_cm = _const_values([4, 6], "i1", 6)
_ci = _const_values([2, 3], "i32", 7)
_cr = _const_values([3, 2], "f32", 8)
add("const_select_view_return_4x6",
    "func.func @main(%x: tensor<4x6xf32>, %y: tensor<6xf32>) -> (tensor<4x6xf32>, tensor<2x3xi32>, tensor<6xf32>) {\n"
    f"  %m = arith.constant {_dense(_cm, 'i1')}\n"
    f"  %i = arith.constant {_dense(_ci, 'i32')}\n"
    f"  %c = arith.constant {_dense(_cr, 'f32')}\n"
    "  %s = kgraph.select %m, %x, %y : tensor<4x6xi1>, tensor<4x6xf32>, tensor<6xf32>\n"
    "  %v = kgraph.reshape %c : tensor<3x2xf32> to tensor<6xf32>\n"
    "  %a = kgraph.add %y, %v : tensor<6xf32>, tensor<6xf32>\n"
    "  return %s, %i, %a : tensor<4x6xf32>, tensor<2x3xi32>, tensor<6xf32>\n}\n",
    [([4, 6], "f32", -1.0, 1.0), ([6], "f32", -1.0, 1.0)],
    lambda x, y: (torch.where(_cm, x, y), _ci, rnd(y + _cr.reshape(6), "f32")), (1e-6, 1e-6))

# A GEMM-kind conv2d (16 channels: no stencil) with a constant filter.
_cf = _const_values([8, 3, 3, 16], "f16", 9)
add("const_conv_nhwc_f16_1x6x6x16_f8",
    "func.func @main(%x: tensor<1x6x6x16xf16>) -> tensor<1x6x6x8xf32> {\n"
    f"  %w = arith.constant {_dense(_cf, 'f16')}\n"
    "  %y = kgraph.conv2d %x, %w layout = nhwc padding = [1, 1, 1, 1] : tensor<1x6x6x16xf16>, tensor<8x3x3x16xf16> -> tensor<1x6x6x8xf32>\n"
    "  return %y : tensor<1x6x6x8xf32>\n}\n",
    [([1, 6, 6, 16], "f16", -1.0, 1.0)],
    lambda x: rnd(F.conv2d(x.permute(0, 3, 1, 2), _cf.permute(0, 3, 1, 2), padding=1).permute(0, 2, 3, 1), "f32"),
    gemm_tol(144, "f32"))

# Splat constants as GEMM operands (fuzz finding 1248825608-419): the GEMM
# kernels load both operands from memory, so such a splat is a "constant"
# buffer, not cloned into the group; a splat elsewhere in the same group
# (the epilogue's add) is still folded.
add("splat_matmul_b_f16_9x13x24",
    "func.func @main(%x: tensor<9x13xf16>) -> tensor<9x24xf32> {\n"
    "  %w = arith.constant dense<0.375> : tensor<13x24xf16>\n"
    "  %h = arith.constant dense<-1.5> : tensor<24xf32>\n"
    "  %m = kgraph.matmul %x, %w : tensor<9x13xf16>, tensor<13x24xf16> -> tensor<9x24xf32>\n"
    "  %y = kgraph.add %m, %h : tensor<9x24xf32>, tensor<24xf32>\n"
    "  return %y : tensor<9x24xf32>\n}\n",
    [([9, 13], "f16", -1.0, 1.0)], lambda x: rnd(x @ torch.full((13, 24), 0.375, dtype=torch.float64) - 1.5, "f32"),
    gemm_tol(13, "f32", 2))
add("splat_conv_input_nchw_f16_2x16x7x7_f8",
    "func.func @main(%w: tensor<8x16x3x3xf16>) -> tensor<2x8x5x5xf32> {\n"
    "  %x = arith.constant dense<-0.25> : tensor<2x16x7x7xf16>\n"
    "  %y = kgraph.conv2d %x, %w : tensor<2x16x7x7xf16>, tensor<8x16x3x3xf16> -> tensor<2x8x5x5xf32>\n"
    "  return %y : tensor<2x8x5x5xf32>\n}\n",
    [([8, 16, 3, 3], "f16", -1.0, 1.0)],
    lambda w: rnd(F.conv2d(torch.full((2, 16, 7, 7), -0.25, dtype=torch.float64), w), "f32"),
    gemm_tol(144, "f32"))
# The finding's shape: a 1x1x1x1 splat filter, strided and dilated, NCHW.
add("splat_conv_filter_1x1_nchw_f16_3x1x27x9",
    "func.func @main(%x: tensor<3x1x27x9xf16>) -> tensor<3x1x30x3xf32> {\n"
    "  %w = arith.constant dense<3.25> : tensor<1x1x1x1xf16>\n"
    "  %y = kgraph.conv2d %x, %w layout = nchw strides = [1, 4] padding = [3, 0, 0, 0] dilations = [1, 3] : tensor<3x1x27x9xf16>, tensor<1x1x1x1xf16> -> tensor<3x1x30x3xf32>\n"
    "  return %y : tensor<3x1x30x3xf32>\n}\n",
    [([3, 1, 27, 9], "f16", -1.0, 1.0)],
    lambda x: rnd(F.conv2d(F.pad(x, (0, 0, 3, 0)), torch.full((1, 1, 1, 1), 3.25, dtype=torch.float64),
                           stride=(1, 4), dilation=(1, 3)), "f32"),
    gemm_tol(1, "f32"))
# A stencil conv2d (depthwise, 4 channels) keeps folding its splat filter.
add("splat_conv_stencil_filter_nchw_f32_2x4x9x9",
    "func.func @main(%x: tensor<2x4x9x9xf32>) -> tensor<2x4x9x9xf32> {\n"
    "  %w = arith.constant dense<0.125> : tensor<4x1x3x3xf32>\n"
    "  %y = kgraph.conv2d %x, %w padding = [1, 1, 1, 1] groups = 4 : tensor<2x4x9x9xf32>, tensor<4x1x3x3xf32> -> tensor<2x4x9x9xf32>\n"
    "  return %y : tensor<2x4x9x9xf32>\n}\n",
    [([2, 4, 9, 9], "f32", -1.0, 1.0)],
    lambda x: rnd(F.conv2d(x, torch.full((4, 1, 3, 3), 0.125, dtype=torch.float64), padding=1, groups=4), "f32"),
    (1e-5, 1e-5))
# A strided NCHW pool2d of a splat (the lone-pool stencil kernel loads its
# input: a buffer) and a tiled-shape transpose of a splat (left to the
# elementwise kernel, which folds it); each once crashed or was rejected.
add("splat_pool_nchw_s2_f32_2x3x9x9",
    "func.func @main(%x: tensor<2x3x4x4xf32>) -> tensor<2x3x4x4xf32> {\n"
    "  %c = arith.constant dense<0.75> : tensor<2x3x9x9xf32>\n"
    "  %p = kgraph.pool2d max %c kernel = [3, 3] strides = [2, 2] : tensor<2x3x9x9xf32>\n"
    "  %y = kgraph.add %p, %x : tensor<2x3x4x4xf32>, tensor<2x3x4x4xf32>\n"
    "  return %y : tensor<2x3x4x4xf32>\n}\n",
    [([2, 3, 4, 4], "f32", -1.0, 1.0)], lambda x: rnd(x + 0.75, "f32"), (1e-6, 1e-6))
add("splat_transpose_f16_40x72",
    "func.func @main(%x: tensor<72x40xf16>) -> (tensor<72x40xf16>, tensor<72x40xf16>) {\n"
    "  %c = arith.constant dense<-2.5> : tensor<40x72xf16>\n"
    "  %t = kgraph.transpose %c, permutation = [1, 0] : tensor<40x72xf16>\n"
    "  %y = kgraph.mul %t, %x : tensor<72x40xf16>, tensor<72x40xf16>\n"
    "  return %t, %y : tensor<72x40xf16>, tensor<72x40xf16>\n}\n",
    [([72, 40], "f16", -1.0, 1.0)],
    lambda x: (torch.full((72, 40), -2.5, dtype=torch.float64), rnd(x * -2.5, "f16")), (1e-3, 1e-3))
# A reshape (a view) of a splat read by a kernel; a slice of a splat as a
# matmul's B, which --fuse reads in place; a deep-K conv2d with a splat
# filter through --split-k-convs (whose filter rearrangement views it).
add("splat_reshape_add_f32_12",
    "func.func @main(%x: tensor<12xf32>) -> tensor<12xf32> {\n"
    "  %c = arith.constant dense<1.25> : tensor<3x4xf32>\n"
    "  %r = kgraph.reshape %c : tensor<3x4xf32> to tensor<12xf32>\n"
    "  %y = kgraph.add %x, %r : tensor<12xf32>, tensor<12xf32>\n"
    "  return %y : tensor<12xf32>\n}\n",
    [([12], "f32", -1.0, 1.0)], lambda x: rnd(x + 1.25, "f32"), (1e-6, 1e-6))
add("splat_slice_matmul_b_f16_4x9x16_n7",
    "func.func @main(%a: tensor<4x9x16xf16>) -> tensor<4x9x7xf32> {\n"
    "  %c = arith.constant dense<-0.125> : tensor<6x17x22xf16>\n"
    "  %b = kgraph.slice %c offsets = [1, 7, 2] sizes = [4, 7, 16] strides = [1, 1, 1] : tensor<6x17x22xf16>\n"
    "  %y = kgraph.matmul %a, %b {transpose_b} : tensor<4x9x16xf16>, tensor<4x7x16xf16> -> tensor<4x9x7xf32>\n"
    "  return %y : tensor<4x9x7xf32>\n}\n",
    [([4, 9, 16], "f16", -1.0, 1.0)],
    lambda a: rnd(a @ torch.full((4, 16, 7), -0.125, dtype=torch.float64), "f32"), gemm_tol(16, "f32"))
add("splat_splitk_nhwc_f32_1x3x3x256_f24_k3p1",
    "func.func @main(%x: tensor<1x3x3x256xf32>) -> tensor<1x3x3x24xf32> {\n"
    "  %w = arith.constant dense<0.75> : tensor<24x3x3x256xf32>\n"
    "  %y = kgraph.conv2d %x, %w layout = nhwc padding = [1, 1, 1, 1] : tensor<1x3x3x256xf32>, tensor<24x3x3x256xf32> -> tensor<1x3x3x24xf32>\n"
    "  return %y : tensor<1x3x3x24xf32>\n}\n",
    [([1, 3, 3, 256], "f32", -1.0, 1.0)],
    lambda x: rnd(F.conv2d(x.permute(0, 3, 1, 2), torch.full((24, 256, 3, 3), 0.75, dtype=torch.float64),
                           padding=1).permute(0, 2, 3, 1), "f32"),
    gemm_tol(2304, "f32"), flags=("--split-k-convs",))
# Casts of splats before a matmul (fuzz cr2c7x1m-1443.1: --fuse took a cast
# of a cast of a splat as a three-op prologue): a cast of a splat stays its
# own kernel; a slice of a splat read in place below a cast is a buffer.
add("splat_cast_prologue_i8_31x1x9",
    "func.func @main(%b: tensor<31x9xi8>, %s: tensor<4x8xf32>) -> (tensor<1x9xi32>, tensor<3x8xf32>) {\n"
    "  %c = arith.constant dense<-5> : tensor<31x1xi32>\n"
    "  %v = kgraph.cast %c : tensor<31x1xi32> to tensor<31x1xi8>\n"
    "  %w = kgraph.cast %v : tensor<31x1xi8> to tensor<31x1xi8>\n"
    "  %y = kgraph.matmul %w, %b {transpose_a} : tensor<31x1xi8>, tensor<31x9xi8> -> tensor<1x9xi32>\n"
    "  %d = arith.constant dense<0.5> : tensor<5x6xf16>\n"
    "  %e = kgraph.slice %d offsets = [1, 2] sizes = [3, 4] strides = [1, 1] : tensor<5x6xf16>\n"
    "  %f = kgraph.cast %e : tensor<3x4xf16> to tensor<3x4xf32>\n"
    "  %z = kgraph.matmul %f, %s : tensor<3x4xf32>, tensor<4x8xf32> -> tensor<3x8xf32>\n"
    "  return %y, %z : tensor<1x9xi32>, tensor<3x8xf32>\n}\n",
    [([31, 9], "i8", -3, 3), ([4, 8], "f32", -1.0, 1.0)],
    lambda b, s: (torch.full((1, 31), -5, dtype=torch.int64) @ b,
                  rnd(torch.full((3, 4), 0.5, dtype=torch.float64) @ s, "f32")),
    (1e-5, 1e-5))
