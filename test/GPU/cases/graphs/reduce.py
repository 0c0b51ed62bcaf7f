"""Reduction groups (issue 5, item 4): every reduction kind (sum, max, mean)
and axis pattern (last axis, axis 0, middle axis, two inner axes, axes that
are not adjacent, everything) at odd sizes, in f32/f16/bf16/i8/i32, with
elementwise producers evaluated while loading and consumers applied before
the store; a row-softmax-like pair (2 kernels); and the sum-of-squares
benchmark against torch eager and torch.compile.

Multi-reduction groups (issue 12): softmax, log-softmax, layer norm, RMS
norm, variance and standard deviation written as plain graphs and fused
into one kernel each (kernels=1) at odd shapes, in f32/f16/bf16, over the
last axis, a middle axis, the columns and a whole tensor, held in
registers or (rows of 65537) re-read per reduction; and the benchmarks of
row softmax f32 4096x4096 and layer norm f32 8192x1024.

Groups with producers or consumers are written as kgraph.fused by hand, so
the kernel counts do not depend on the fusion pass."""

import torch

from graph_case import GraphCase, Input


def _t(shape, dt):
    return "tensor<" + "x".join(str(d) for d in shape) + ("x" if shape else "") + dt + ">"


def lone(name, shape, dt, kind, axes, keep_dims, ref, tol, lo=-1.0, hi=1.0):
    """A single kgraph.reduce (one kernel)."""
    out = [1 if d in axes else s for d, s in enumerate(shape)] if keep_dims \
        else [s for d, s in enumerate(shape) if d not in axes]
    kd = " keep_dims" if keep_dims else ""
    mlir = f"""func.func @main(%x: {_t(shape, dt)}) -> {_t(out, dt)} {{
  %r = kgraph.reduce {kind} %x axes = [{", ".join(map(str, axes))}]{kd} : {_t(shape, dt)}
  return %r : {_t(out, dt)}
}}"""
    return GraphCase(name, mlir, [Input("x", shape, dt, lo=lo, hi=hi)], ref,
                     kernels=1, tol=tol)


def _sum(axes, keep=False):
    return lambda x: x.sum(dim=axes, keepdim=keep)


def _max(axes, keep=False):
    return lambda x: x.amax(dim=axes, keepdim=keep)


def _mean(axes, keep=False):
    return lambda x: x.mean(dim=axes, keepdim=keep)


def producer_chain(x, s, b):
    # sum(relu(x * s + b)) over the last axis, then * 0.5 (consumer).
    return torch.relu(x * s + b).sum(dim=1) * 0.5


def softmax_pair(x):
    m = x.amax(dim=1, keepdim=True)
    return m, 1.0 / torch.exp(x - m).sum(dim=1, keepdim=True)


def column_norm(x):
    return torch.sqrt((x * x).sum(dim=0))


def centered_max(x, c):
    # max over the middle axis of |x - c|, c broadcast along that axis.
    return (x - c).abs().amax(dim=1)


def sum_squares(x):
    return (x * x).sum(dim=-1)


CASES = [
    lone("reduce_sum_last_f32_37x1001", [37, 1001], "f32", "sum", [1], False,
         _sum([1]), tol=(1e-5, 1e-4)),
    lone("reduce_sum_last_keep_f16_37x1001", [37, 1001], "f16", "sum", [1],
         True, _sum([1], True), tol=(2e-3, 2e-2)),
    lone("reduce_max_axis0_f16_37x1001", [37, 1001], "f16", "max", [0], False,
         _max([0]), tol=(0, 0)),
    lone("reduce_max_axis0_f32_33x4096", [33, 4096], "f32", "max", [0], False,
         _max([0]), tol=(0, 0)),
    lone("reduce_mean_inner2_bf16_3x5x1023", [3, 5, 1023], "bf16", "mean",
         [1, 2], True, _mean([1, 2], True), tol=(1e-2, 1e-3)),
    lone("reduce_mean_inner2_f32_3x5x1024", [3, 5, 1024], "f32", "mean",
         [1, 2], False, _mean([1, 2]), tol=(1e-5, 1e-6)),
    lone("reduce_mean_middle_f32_3x5x1023", [3, 5, 1023], "f32", "mean", [1],
         True, _mean([1], True), tol=(1e-5, 1e-6)),
    lone("reduce_max_middle_i32_3x5x1023", [3, 5, 1023], "i32", "max", [1],
         False, _max([1]), tol=(0, 0), lo=-1000, hi=1000),
    lone("reduce_sum_outer_inner_f32_7x33x129", [7, 33, 129], "f32", "sum",
         [0, 2], False, _sum([0, 2]), tol=(1e-5, 1e-4)),
    lone("reduce_mean_axis0_f32_4097x3", [4097, 3], "f32", "mean", [0], False,
         _mean([0]), tol=(1e-5, 1e-6)),
    lone("reduce_sum_all_i32_4097", [4097], "i32", "sum", [0], False,
         _sum([0]), tol=(0, 0), lo=-100, hi=100),
    lone("reduce_max_all_bf16_4097", [4097], "bf16", "max", [0], False,
         _max([0]), tol=(0, 0)),
    lone("reduce_sum_last_i32_255x128", [255, 128], "i32", "sum", [1], False,
         _sum([1]), tol=(0, 0), lo=-1000, hi=1000),
    lone("reduce_max_last_i8_255x128", [255, 128], "i8", "max", [1], False,
         _max([1]), tol=(0, 0), lo=-128, hi=127),
    # Integer max of negated values down columns: ptxas 13.0 fused the
    # chain into VIMNMX3s that dropped the middle operand's negation
    # (random graph a9ba1d6-294.1); kgraph writes integer neg as not + add.
    GraphCase(
        "reduce_max_of_neg_axis0_i32_33x33",
        """func.func @main(%x: tensor<33x33xi32>) -> tensor<33xi32> {
  %r = kgraph.fused (%x) : (tensor<33x33xi32>) -> tensor<33xi32> {
  ^bb0(%a: tensor<33x33xi32>):
    %n = kgraph.neg %a : tensor<33x33xi32>
    %m = kgraph.reduce max %n axes = [0] : tensor<33x33xi32>
    kgraph.yield %m : tensor<33xi32>
  }
  return %r : tensor<33xi32>
}""",
        [Input("x", [33, 33], "i32", lo=-1000, hi=1000)],
        lambda x: (-x).amax(dim=0), kernels=1, tol=(0, 0)),
    lone("reduce_sum_short_rows_f16_2049x16", [2049, 16], "f16", "sum", [1],
         False, _sum([1]), tol=(2e-3, 2e-3)),
    # Start values (issue 14): a max whose true maximum is negative (a start
    # of 0 instead of -inf would win), a min written as -max(-x) over
    # positive values, a sum of positive values (a start of 1 would show),
    # and reductions over size-1 axes (the start value meets one element).
    lone("reduce_max_negative_last_f32_37x1001", [37, 1001], "f32", "max", [1],
         False, _max([1]), tol=(0, 0), lo=-100.0, hi=-1.0),
    lone("reduce_max_negative_axis0_f16_33x129", [33, 129], "f16", "max", [0],
         False, _max([0]), tol=(0, 0), lo=-8.0, hi=-0.5),
    lone("reduce_max_negative_all_i32_4097", [4097], "i32", "max", [0], False,
         _max([0]), tol=(0, 0), lo=-1000, hi=-1),
    lone("reduce_max_negative_last_i8_37x65", [37, 65], "i8", "max", [1], False,
         _max([1]), tol=(0, 0), lo=-128, hi=-1),
    GraphCase(
        "reduce_min_positive_last_f32_37x1001",
        """func.func @main(%x: tensor<37x1001xf32>) -> tensor<37xf32> {
  %r = kgraph.fused (%x) : (tensor<37x1001xf32>) -> tensor<37xf32> {
  ^bb0(%a: tensor<37x1001xf32>):
    %n = kgraph.neg %a : tensor<37x1001xf32>
    %m = kgraph.reduce max %n axes = [1] : tensor<37x1001xf32>
    %p = kgraph.neg %m : tensor<37xf32>
    kgraph.yield %p : tensor<37xf32>
  }
  return %r : tensor<37xf32>
}""",
        [Input("x", [37, 1001], "f32", lo=1.0, hi=100.0)],
        lambda x: x.amin(dim=1), kernels=1, tol=(0, 0)),
    lone("reduce_sum_positive_last_f32_37x1001", [37, 1001], "f32", "sum", [1],
         False, _sum([1]), tol=(1e-5, 1e-5), lo=1.0, hi=2.0),
    lone("reduce_sum_size1_axis_f32_37x1x65", [37, 1, 65], "f32", "sum", [1],
         False, _sum([1]), tol=(0, 0)),
    lone("reduce_max_size1_axis_keep_f16_5x1x33", [5, 1, 33], "f16", "max", [1],
         True, _max([1], True), tol=(0, 0), lo=-4.0, hi=-1.0),
    lone("reduce_mean_size1_last_f32_129x1", [129, 1], "f32", "mean", [1],
         False, _mean([1]), tol=(0, 0)),
    lone("reduce_max_size1_all_i32_1x1", [1, 1], "i32", "max", [0, 1], False,
         _max([0, 1]), tol=(0, 0), lo=-50, hi=-10),
    GraphCase(
        "reduce_producers_consumer_f16_37x1001",
        """func.func @main(%x: tensor<37x1001xf16>, %s: tensor<37x1xf16>, %b: tensor<1001xf16>) -> tensor<37xf16> {
  %r = kgraph.fused (%x, %s, %b) : (tensor<37x1001xf16>, tensor<37x1xf16>, tensor<1001xf16>) -> tensor<37xf16> {
  ^bb0(%a: tensor<37x1001xf16>, %c: tensor<37x1xf16>, %d: tensor<1001xf16>):
    %m = kgraph.mul %a, %c : tensor<37x1001xf16>, tensor<37x1xf16>
    %p = kgraph.add %m, %d : tensor<37x1001xf16>, tensor<1001xf16>
    %q = kgraph.relu %p : tensor<37x1001xf16>
    %sum = kgraph.reduce sum %q axes = [1] : tensor<37x1001xf16>
    %half = arith.constant dense<0.5> : tensor<f16>
    %h = kgraph.mul %sum, %half : tensor<37xf16>, tensor<f16>
    kgraph.yield %h : tensor<37xf16>
  }
  return %r : tensor<37xf16>
}""",
        [Input("x", [37, 1001], "f16"), Input("s", [37, 1], "f16"),
         Input("b", [1001], "f16", lo=-0.5, hi=0.5)],
        producer_chain, kernels=1, tol=(5e-3, 5e-2)),
    GraphCase(
        "reduce_softmax_pair_f32_37x1001",
        """func.func @main(%x: tensor<37x1001xf32>) -> (tensor<37x1xf32>, tensor<37x1xf32>) {
  %m = kgraph.fused (%x) : (tensor<37x1001xf32>) -> tensor<37x1xf32> {
  ^bb0(%a: tensor<37x1001xf32>):
    %mx = kgraph.reduce max %a axes = [1] keep_dims : tensor<37x1001xf32>
    kgraph.yield %mx : tensor<37x1xf32>
  }
  %r = kgraph.fused (%x, %m) : (tensor<37x1001xf32>, tensor<37x1xf32>) -> tensor<37x1xf32> {
  ^bb0(%a: tensor<37x1001xf32>, %b: tensor<37x1xf32>):
    %d = kgraph.sub %a, %b : tensor<37x1001xf32>, tensor<37x1xf32>
    %e = kgraph.exp %d : tensor<37x1001xf32>
    %s = kgraph.reduce sum %e axes = [1] keep_dims : tensor<37x1001xf32>
    %one = arith.constant dense<1.0> : tensor<f32>
    %inv = kgraph.div %one, %s : tensor<f32>, tensor<37x1xf32>
    kgraph.yield %inv : tensor<37x1xf32>
  }
  return %m, %r : tensor<37x1xf32>, tensor<37x1xf32>
}""",
        [Input("x", [37, 1001], "f32", lo=-5.0, hi=5.0)],
        softmax_pair, kernels=2, tol=(1e-5, 1e-7)),
    GraphCase(
        "reduce_column_norm_f32_511x1024",
        """func.func @main(%x: tensor<511x1024xf32>) -> tensor<1024xf32> {
  %r = kgraph.fused (%x) : (tensor<511x1024xf32>) -> tensor<1024xf32> {
  ^bb0(%a: tensor<511x1024xf32>):
    %sq = kgraph.mul %a, %a : tensor<511x1024xf32>, tensor<511x1024xf32>
    %s = kgraph.reduce sum %sq axes = [0] : tensor<511x1024xf32>
    %n = kgraph.sqrt %s : tensor<1024xf32>
    kgraph.yield %n : tensor<1024xf32>
  }
  return %r : tensor<1024xf32>
}""",
        [Input("x", [511, 1024], "f32")],
        column_norm, kernels=1, tol=(1e-5, 1e-6)),
    GraphCase(
        "reduce_centered_max_middle_bf16_3x37x1023",
        """func.func @main(%x: tensor<3x37x1023xbf16>, %c: tensor<3x1x1023xbf16>) -> tensor<3x1023xbf16> {
  %r = kgraph.fused (%x, %c) : (tensor<3x37x1023xbf16>, tensor<3x1x1023xbf16>) -> tensor<3x1023xbf16> {
  ^bb0(%a: tensor<3x37x1023xbf16>, %b: tensor<3x1x1023xbf16>):
    %d = kgraph.sub %a, %b : tensor<3x37x1023xbf16>, tensor<3x1x1023xbf16>
    %ab = kgraph.abs %d : tensor<3x37x1023xbf16>
    %m = kgraph.reduce max %ab axes = [1] : tensor<3x37x1023xbf16>
    kgraph.yield %m : tensor<3x1023xbf16>
  }
  return %r : tensor<3x1023xbf16>
}""",
        [Input("x", [3, 37, 1023], "bf16"), Input("c", [3, 1, 1023], "bf16")],
        centered_max, kernels=1, tol=(1e-2, 1e-2)),
    GraphCase(
        "reduce_sum_squares_f32_8192x8192",
        """func.func @main(%x: tensor<8192x8192xf32>) -> tensor<8192xf32> {
  %r = kgraph.fused (%x) : (tensor<8192x8192xf32>) -> tensor<8192xf32> {
  ^bb0(%a: tensor<8192x8192xf32>):
    %sq = kgraph.mul %a, %a : tensor<8192x8192xf32>, tensor<8192x8192xf32>
    %s = kgraph.reduce sum %sq axes = [1] : tensor<8192x8192xf32>
    kgraph.yield %s : tensor<8192xf32>
  }
  return %r : tensor<8192xf32>
}""",
        [Input("x", [8192, 8192], "f32")],
        sum_squares, kernels=1, tol=(1e-5, 1e-4), memcheck=False, bench=True),

]


# ---- multi-reduction groups (issue 12) ------------------------------------------------

def _kept(shape, axes):
    return [1 if d in axes else n for d, n in enumerate(shape)]


def softmax_case(name, shape, dt, axes, log=False, tol=(2e-6, 1e-9), lo=-5.0, hi=5.0,
                 bench=False, memcheck=True):
    """softmax (log-softmax) over `axes` as its ops: max, x - max, exp, sum,
    divide (log of the sum, subtract); one kernel with --fuse."""
    ty, tk = _t(shape, dt), _t(_kept(shape, axes), dt)
    ax = ", ".join(map(str, axes))
    last = (f"  %l = kgraph.log %s : {tk}\n  %o = kgraph.sub %d, %l : {ty}, {tk}\n" if log
            else f"  %o = kgraph.div %e, %s : {ty}, {tk}\n")
    mlir = f"""func.func @main(%x: {ty}) -> {ty} {{
  %m = kgraph.reduce max %x axes = [{ax}] keep_dims : {ty}
  %d = kgraph.sub %x, %m : {ty}, {tk}
  %e = kgraph.exp %d : {ty}
  %s = kgraph.reduce sum %e axes = [{ax}] keep_dims : {ty}
{last}  return %o : {ty}
}}"""
    dims = tuple(axes)

    def ref(x):
        return (torch.log_softmax if log else torch.softmax)(x.flatten(dims[0], dims[-1]), dims[0]) \
            .reshape(x.shape) if len(dims) > 1 else (torch.log_softmax if log else torch.softmax)(x, dims[0])
    return GraphCase(name, mlir, [Input("x", shape, dt, lo=lo, hi=hi)], ref, kernels=1,
                     tol=tol, memcheck=memcheck and not bench, bench=bench)


def norm_case(name, shape, dt, rms=False, tol=(2e-6, 2e-6), bench=False):
    """Layer norm (RMS norm) over the last axis as its ops, with gamma (and
    beta): one kernel with --fuse."""
    n = shape[-1]
    ty, tk, tg = _t(shape, dt), _t(shape[:-1] + [1], dt), _t([n], dt)
    ax = len(shape) - 1
    if rms:
        body = f"""  %sq = kgraph.mul %x, %x : {ty}, {ty}
  %v = kgraph.reduce mean %sq axes = [{ax}] keep_dims : {ty}
  %ve = kgraph.add %v, %eps : {tk}, {_t([], dt)}
  %r = kgraph.rsqrt %ve : {tk}
  %y = kgraph.mul %x, %r : {ty}, {tk}
  %o = kgraph.mul %y, %g : {ty}, {tg}
"""
        args, inputs = f"%x: {ty}, %g: {tg}", [Input("x", shape, dt, lo=-3.0, hi=3.0),
                                                Input("g", [n], dt, lo=0.5, hi=1.5)]
    else:
        body = f"""  %mu = kgraph.reduce mean %x axes = [{ax}] keep_dims : {ty}
  %d = kgraph.sub %x, %mu : {ty}, {tk}
  %sq = kgraph.mul %d, %d : {ty}, {ty}
  %v = kgraph.reduce mean %sq axes = [{ax}] keep_dims : {ty}
  %ve = kgraph.add %v, %eps : {tk}, {_t([], dt)}
  %r = kgraph.rsqrt %ve : {tk}
  %y = kgraph.mul %d, %r : {ty}, {tk}
  %yg = kgraph.mul %y, %g : {ty}, {tg}
  %o = kgraph.add %yg, %b : {ty}, {tg}
"""
        args = f"%x: {ty}, %g: {tg}, %b: {tg}"
        inputs = [Input("x", shape, dt, lo=-3.0, hi=3.0), Input("g", [n], dt, lo=0.5, hi=1.5),
                  Input("b", [n], dt, lo=-0.5, hi=0.5)]
    mlir = f"""func.func @main({args}) -> {ty} {{
  %eps = arith.constant dense<1.0e-5> : {_t([], dt)}
{body}  return %o : {ty}
}}"""

    def ref(x, g, b=None):
        if rms:
            return x * torch.rsqrt((x * x).mean(dim=-1, keepdim=True) + 1e-5) * g
        return torch.nn.functional.layer_norm(x, [n], g, b, 1e-5)
    return GraphCase(name, mlir, inputs, ref, kernels=1, tol=tol, memcheck=not bench,
                     bench=bench)


def std_columns(x):
    sd = x.std(dim=0, unbiased=False, keepdim=True)
    return sd, (x - x.mean(dim=0, keepdim=True)) / sd


def variance_siblings(x):
    return x.var(dim=1, unbiased=False), x.mean(dim=1)


MULTI = [
    softmax_case("reduce_softmax_f32_37x1001", [37, 1001], "f32", [1]),
    softmax_case("reduce_softmax_f16_127x512", [127, 512], "f16", [1], tol=(3e-3, 1e-5)),
    softmax_case("reduce_log_softmax_bf16_65x77", [65, 77], "bf16", [1], log=True,
                 tol=(2e-2, 5e-2)),
    softmax_case("reduce_softmax_middle_f32_4x33x129", [4, 33, 129], "f32", [1]),
    softmax_case("reduce_softmax_all_f32_4097", [4097], "f32", [0]),
    softmax_case("reduce_softmax_size1_axis_f16_5x1x7", [5, 1, 7], "f16", [1], tol=(0, 0)),
    # Rows of 65537 f32 are too long for registers: re-read per reduction
    # (a multi-reduction group needs 128 such rows, isMultiReductionProfitable).
    softmax_case("reduce_softmax_long_rows_f32_128x65537", [128, 65537], "f32", [1],
                 memcheck=False),
    softmax_case("reduce_log_softmax_two_axes_f32_6x7x300", [6, 7, 300], "f32", [1, 2],
                 log=True, tol=(1e-6, 1e-6)),
    norm_case("reduce_layer_norm_f32_33x1000", [33, 1000], "f32"),
    norm_case("reduce_layer_norm_f16_85x768", [85, 768], "f16", tol=(5e-3, 1e-2)),
    norm_case("reduce_rms_norm_bf16_15x4096", [15, 4096], "bf16", rms=True, tol=(2e-2, 5e-2)),
    GraphCase(
        "reduce_std_columns_two_results_f32_1001x37",
        """func.func @main(%x: tensor<1001x37xf32>) -> (tensor<1x37xf32>, tensor<1001x37xf32>) {
  %mu = kgraph.reduce mean %x axes = [0] keep_dims : tensor<1001x37xf32>
  %d = kgraph.sub %x, %mu : tensor<1001x37xf32>, tensor<1x37xf32>
  %sq = kgraph.mul %d, %d : tensor<1001x37xf32>, tensor<1001x37xf32>
  %v = kgraph.reduce mean %sq axes = [0] keep_dims : tensor<1001x37xf32>
  %sd = kgraph.sqrt %v : tensor<1x37xf32>
  %z = kgraph.div %d, %sd : tensor<1001x37xf32>, tensor<1x37xf32>
  return %sd, %z : tensor<1x37xf32>, tensor<1001x37xf32>
}""",
        [Input("x", [1001, 37], "f32", lo=-2.0, hi=2.0)], std_columns, kernels=1,
        tol=(2e-6, 2e-6)),
    GraphCase(
        "reduce_variance_siblings_f32_37x1001",
        """func.func @main(%x: tensor<37x1001xf32>) -> (tensor<37xf32>, tensor<37xf32>) {
  %mu = kgraph.reduce mean %x axes = [1] : tensor<37x1001xf32>
  %sq = kgraph.mul %x, %x : tensor<37x1001xf32>, tensor<37x1001xf32>
  %m2 = kgraph.reduce mean %sq axes = [1] : tensor<37x1001xf32>
  %mm = kgraph.mul %mu, %mu : tensor<37xf32>, tensor<37xf32>
  %v = kgraph.sub %m2, %mm : tensor<37xf32>, tensor<37xf32>
  return %v, %mu : tensor<37xf32>, tensor<37xf32>
}""",
        [Input("x", [37, 1001], "f32", lo=-2.0, hi=2.0)], variance_siblings, kernels=1,
        tol=(1e-5, 1e-6)),
    # Benchmarks (issue 12): one kernel each, the input read and the result
    # written once.
    softmax_case("reduce_softmax_f32_4096x4096", [4096, 4096], "f32", [1], bench=True),
    norm_case("reduce_layer_norm_f32_8192x1024", [8192, 1024], "f32", bench=True),
]

CASES += MULTI
