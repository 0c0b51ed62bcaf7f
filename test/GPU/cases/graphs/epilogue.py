"""GEMM and conv2d groups with epilogues and prologues (issue 5, contract
kind 2): matmul / conv2d + bias, residual, activations and casts computed on
the accumulators before the one store, and casts / scales of the matmul
operands applied while the tiles are staged.

The groups are written already fused (kgraph.fused), so each case checks the
GEMM emitter's epilogue and prologue independently of kgraph-fuse; the
kernel count is the number of groups.

Tolerances follow test/GPU/matmul_ref.py: with inputs in [-1, 1] the f32
accumulation error is at most K * 2^-22 * S with S = sum |a| |b| <= K / 3
(|a| |b| averages 1/4), plus the rounding of the GEMM result to its dtype
(absolute: up to 5 sigma of a K-term sum, sigma = sqrt(K / 9)) and of each
epilogue op (relative). Conv weights are drawn in [-w, w] with
w = 2 / sqrt(K) so that activations stay O(1) through the bottleneck block.
"""

import math

import torch
import torch.nn.functional as F

from graph_case import GraphCase, Input

U_OUT = {"f32": 2.0 ** -24, "f16": 2.0 ** -11, "bf16": 2.0 ** -8}


def gemm_tol(k, dt, roundings=2, scale=1.0):
    """(rtol, atol) of a depth-k GEMM of inputs in [-scale, scale] (as
    products) followed by `roundings` epilogue roundings to dt."""
    u = U_OUT[dt]
    s = k / 3.0 * scale
    atol = 1.01 * (k * 2.0 ** -22 * s) + u * 5 * math.sqrt(k / 9.0) * scale + 2 * u
    return (1.01 * roundings * u + 2.0 ** -22, atol)


def t(shape, dt):
    return "tensor<" + "x".join(str(d) for d in shape) + "x" + dt + ">"


def conv_nhwc(x, w, stride=1, pad=0, groups=1):
    """kgraph.conv2d layout = nhwc: x [N, H, W, C], w [F, KH, KW, C/g]."""
    y = F.conv2d(x.permute(0, 3, 1, 2), w.permute(0, 3, 1, 2), stride=stride,
                 padding=pad, groups=groups)
    return y.permute(0, 2, 3, 1)


def cast(x, dtype):
    """kgraph.cast between float types: rounds to dtype, computed on in x's
    own dtype afterwards (float64 on the CPU reference)."""
    return x.to(dtype).to(x.dtype)


# --- matmul -----------------------------------------------------------------


def one_group(args, anchor, body, result_type, **fmt):
    """A func whose one fused group takes `args` ([(name, type)], block
    arguments %<name>_), computes the `anchor` line, then `body` (MLIR lines
    formatted with the block arguments and `fmt`) ending in %r of type
    `result_type`, and yields %r."""
    sig = ", ".join(f"%{nm}: {ty}" for nm, ty in args)
    types = ", ".join(ty for _, ty in args)
    names = ", ".join(f"%{nm}" for nm, _ in args)
    bargs = ", ".join(f"%{nm}_: {ty}" for nm, ty in args)
    lines = "\n    ".join(body.format(**{nm: f"%{nm}_" for nm, _ in args},
                                      **fmt).strip().splitlines())
    return f"""func.func @main({sig}) -> {result_type} {{
  %0 = kgraph.fused ({names}) : ({types}) -> {result_type} {{
  ^bb0({bargs}):
    {anchor}
    {lines}
    kgraph.yield %r : {result_type}
  }}
  return %0 : {result_type}
}}"""


def mm_group(m, n, k, dt, body, extra, out_dt=None, batch=None, acc_dt=None):
    """A func with one fused group: %x [B?, M, K] @ %y [B?, K, N] -> %m of
    acc_dt, then `body` (MLIR lines using %m, the extra block arguments and
    ending in %r of out_dt). `extra`: [(name, shape, dtype)]."""
    out_dt = out_dt or dt
    acc_dt = acc_dt or dt
    lead = [batch] if batch else []
    ta, tb = t(lead + [m, k], dt), t(lead + [k, n], dt)
    tm, tr = t(lead + [m, n], acc_dt), t(lead + [m, n], out_dt)
    args = [("a", ta), ("b", tb)] + [(nm, t(s, d)) for nm, s, d in extra]
    return one_group(args, f"%m = kgraph.matmul %a_, %b_ : {ta}, {tb} -> {tm}",
                     body, tr, tm=tm, tr=tr)


BIAS_RELU = """
%s = kgraph.add %m, {bias} : {tm}, BIAS
%r = kgraph.relu %s : {tr}
"""


def bias_relu_case(name, m, n, k, dt, batch=None, bench=False):
    lead = [batch] if batch else []
    text = mm_group(m, n, k, dt, BIAS_RELU.replace("BIAS", t([n], dt)),
                    [("bias", [n], dt)], batch=batch)
    return GraphCase(
        name, text,
        [Input("a", lead + [m, k], dt), Input("b", lead + [k, n], dt),
         Input("bias", [n], dt, lo=-0.5, hi=0.5)],
        lambda a, b, bias: torch.relu(a @ b + bias), kernels=1,
        tol=gemm_tol(k, dt), memcheck=not bench, bench=bench)


def unary_case(name, op_line, ref, dt="f32", m=100, n=200, k=72):
    text = mm_group(m, n, k, dt, op_line, [])
    return GraphCase(name, text, [Input("a", [m, k], dt),
                                  Input("b", [k, n], dt)],
                     lambda a, b: ref(a @ b), kernels=1, tol=gemm_tol(k, dt))


def _scale_residual_relu(a, b, res):
    return torch.relu((a @ b) * 0.5 + res)


def _bias_cast(a, b, bias):
    return cast(a @ b + bias, torch.float16)


def _prologue(a, b):
    return cast(a, torch.float16) @ (b * 0.5)


MM_CASES = [
    bias_relu_case("epi_mm_bias_relu_f16_100x200x72", 100, 200, 72, "f16"),
    bias_relu_case("epi_mm_bias_relu_bf16_257x129x64", 257, 129, 64, "bf16"),
    bias_relu_case("epi_mm_bias_relu_f32_100x200x72", 100, 200, 72, "f32"),
    bias_relu_case("epi_bmm_bias_relu_f16_3x100x200x72", 100, 200, 72, "f16",
                   batch=3),
    unary_case("epi_mm_gelu_f32_100x200x72",
               "%r = kgraph.gelu %m : {tr}", F.gelu),
    unary_case("epi_mm_gelu_tanh_f16_257x129x64",
               "%r = kgraph.gelu %m {{approximate}} : {tr}",
               lambda x: F.gelu(x, approximate="tanh"), "f16", 257, 129, 64),
    unary_case("epi_mm_sigmoid_f32_257x129x64",
               "%r = kgraph.sigmoid %m : {tr}", torch.sigmoid, "f32",
               257, 129, 64),
    unary_case("epi_mm_tanh_bf16_100x200x72",
               "%r = kgraph.tanh %m : {tr}", torch.tanh, "bf16"),
    unary_case("epi_mm_clamp_f32_100x200x72",
               "%r = kgraph.clamp %m {{max = 5.000000e-01 : f64, min = -5.000000e-01 : f64}} : {tr}",
               lambda x: torch.clamp(x, -0.5, 0.5)),
    GraphCase(
        "epi_mm_scale_residual_relu_f16_257x129x64",
        mm_group(257, 129, 64, "f16", """
%h = arith.constant dense<5.000000e-01> : tensor<f16>
%s = kgraph.mul %m, %h : {tm}, tensor<f16>
%q = kgraph.add %s, {res} : {tm}, {tm}
%r = kgraph.relu %q : {tr}
""", [("res", [257, 129], "f16")]),
        [Input("a", [257, 64], "f16"), Input("b", [64, 129], "f16"),
         Input("res", [257, 129], "f16")],
        _scale_residual_relu, kernels=1, tol=gemm_tol(64, "f16", 3)),
    GraphCase(
        "epi_mm_bias_cast_f32_to_f16_100x200x72",
        mm_group(100, 200, 72, "f32", """
%s = kgraph.add %m, {bias} : {tm}, tensor<200xf32>
%r = kgraph.cast %s : {tm} to {tr}
""", [("bias", [200], "f32")], out_dt="f16"),
        [Input("a", [100, 72], "f32"), Input("b", [72, 200], "f32"),
         Input("bias", [200], "f32", lo=-0.5, hi=0.5)],
        _bias_cast, kernels=1, tol=gemm_tol(72, "f16", 1)),
    GraphCase(
        "epi_mm_prologue_cast_scale_f16_100x200x72",
        """func.func @main(%a: tensor<100x72xf32>, %b: tensor<72x200xf16>) -> tensor<100x200xf32> {
  %0 = kgraph.fused (%a, %b) : (tensor<100x72xf32>, tensor<72x200xf16>) -> tensor<100x200xf32> {
  ^bb0(%x: tensor<100x72xf32>, %y: tensor<72x200xf16>):
    %h = arith.constant dense<5.000000e-01> : tensor<f16>
    %xh = kgraph.cast %x : tensor<100x72xf32> to tensor<100x72xf16>
    %ys = kgraph.mul %y, %h : tensor<72x200xf16>, tensor<f16>
    %m = kgraph.matmul %xh, %ys : tensor<100x72xf16>, tensor<72x200xf16> -> tensor<100x200xf32>
    kgraph.yield %m : tensor<100x200xf32>
  }
  return %0 : tensor<100x200xf32>
}""",
        [Input("a", [100, 72], "f32"), Input("b", [72, 200], "f16")],
        _prologue, kernels=1, tol=gemm_tol(72, "f32", 1)),
]


# --- conv2d -----------------------------------------------------------------


def conv_group(x_shape, w_shape, out_shape, dt, attrs, body, extra):
    """One fused group: %c = conv2d(%x, %w) then `body` ending in %r."""
    tx, tw, to = t(x_shape, dt), t(w_shape, dt), t(out_shape, dt)
    args = [("x", tx), ("w", tw)] + [(nm, t(s, d)) for nm, s, d in extra]
    return one_group(
        args, f"%c = kgraph.conv2d %x_, %w_ {attrs}: {tx}, {tw} -> {to}",
        body, to, to=to)


def wrange(k):
    return 2.0 / math.sqrt(k)


def conv_bias_relu_case(name, n, c, h, f, kh, dt, nhwc=True, stride=1, pad=0,
                        groups=1, residual=False, bench=False):
    oh = (h + 2 * pad - kh) // stride + 1
    k = kh * kh * c // groups
    attrs = ("layout = nhwc " if nhwc else "")
    if stride != 1:
        attrs += f"strides = [{stride}, {stride}] "
    if pad:
        attrs += f"padding = [{pad}, {pad}, {pad}, {pad}] "
    if groups != 1:
        attrs += f"groups = {groups} "
    if nhwc:
        xs, ws, os_ = [n, h, h, c], [f, kh, kh, c // groups], [n, oh, oh, f]
        bias = [f]
    else:
        xs, ws, os_ = [n, c, h, h], [f, c // groups, kh, kh], [n, f, oh, oh]
        bias = [1, f, 1, 1]
    body = "%s = kgraph.add %c, {bias} : {to}, " + t(bias, dt) + "\n"
    extra = [("bias", bias, dt)]
    if residual:
        body += "%q = kgraph.add %s, {res} : {to}, {to}\n%r = kgraph.relu %q : {to}"
        extra.append(("res", os_, dt))
    else:
        body += "%r = kgraph.relu %s : {to}"
    wr = wrange(k)
    inputs = [Input("x", xs, dt), Input("w", ws, dt, lo=-wr, hi=wr),
              Input("bias", bias, dt, lo=-0.5, hi=0.5)]
    if residual:
        inputs.append(Input("res", os_, dt))

    def ref(x, w, b, *res):
        if nhwc:
            y = conv_nhwc(x, w, stride, pad, groups)
        else:
            y = F.conv2d(x, w, stride=stride, padding=pad, groups=groups)
        y = y + b
        if res:
            y = y + res[0]
        return torch.relu(y)

    return GraphCase(name, conv_group(xs, ws, os_, dt, attrs, body, extra),
                     inputs, ref, kernels=1,
                     tol=gemm_tol(k, dt, 3 if residual else 2, scale=wr),
                     memcheck=not bench, bench=bench)


CONV_CASES = [
    conv_bias_relu_case("epi_conv_nhwc_bias_relu_f16_2x15x15x32_f48_3x3p1",
                        2, 32, 15, 48, 3, "f16", pad=1),
    conv_bias_relu_case("epi_conv_nhwc_bias_relu_f32_2x15x15x32_f48_3x3p1",
                        2, 32, 15, 48, 3, "f32", pad=1),
    conv_bias_relu_case("epi_conv_nhwc_bias_relu_bf16_s2_g2_2x9x9x32_f64",
                        2, 32, 9, 64, 3, "bf16", stride=2, pad=1, groups=2),
    conv_bias_relu_case("epi_conv_nchw_bias_relu_f16_2x16x13x13_f24_3x3",
                        2, 16, 13, 24, 3, "f16", nhwc=False),
    conv_bias_relu_case("epi_conv_nchw_bias_relu_f32_s2_g2_2x16x13x13_f24",
                        2, 16, 13, 24, 3, "f32", nhwc=False, stride=2, pad=1,
                        groups=2),
    conv_bias_relu_case("epi_conv_nhwc_bias_residual_relu_f16_3x10x10x64_f64",
                        3, 64, 10, 64, 3, "f16", pad=1, residual=True),
]


# --- ResNet-50 bottleneck block ------------------------------------------------


def bottleneck_mlir(n, h, c, mid, dt="f16"):
    """1x1 conv + bias + relu, 3x3 conv pad 1 + bias + relu, 1x1 conv +
    bias, + block input, relu: nhwc, three GEMM groups."""
    tx, tm = t([n, h, h, c], dt), t([n, h, h, mid], dt)
    w1, w2, w3 = t([mid, 1, 1, c], dt), t([mid, 3, 3, mid], dt), t([c, 1, 1, mid], dt)
    bm, bc = t([mid], dt), t([c], dt)
    return f"""func.func @main(%x: {tx}, %w1: {w1}, %b1: {bm}, %w2: {w2}, %b2: {bm}, %w3: {w3}, %b3: {bc}) -> {tx} {{
  %y1 = kgraph.fused (%x, %w1, %b1) : ({tx}, {w1}, {bm}) -> {tm} {{
  ^bb0(%i: {tx}, %f: {w1}, %b: {bm}):
    %c = kgraph.conv2d %i, %f layout = nhwc : {tx}, {w1} -> {tm}
    %s = kgraph.add %c, %b : {tm}, {bm}
    %r = kgraph.relu %s : {tm}
    kgraph.yield %r : {tm}
  }}
  %y2 = kgraph.fused (%y1, %w2, %b2) : ({tm}, {w2}, {bm}) -> {tm} {{
  ^bb0(%i: {tm}, %f: {w2}, %b: {bm}):
    %c = kgraph.conv2d %i, %f layout = nhwc padding = [1, 1, 1, 1] : {tm}, {w2} -> {tm}
    %s = kgraph.add %c, %b : {tm}, {bm}
    %r = kgraph.relu %s : {tm}
    kgraph.yield %r : {tm}
  }}
  %y3 = kgraph.fused (%y2, %w3, %b3, %x) : ({tm}, {w3}, {bc}, {tx}) -> {tx} {{
  ^bb0(%i: {tm}, %f: {w3}, %b: {bc}, %res: {tx}):
    %c = kgraph.conv2d %i, %f layout = nhwc : {tm}, {w3} -> {tx}
    %s = kgraph.add %c, %b : {tx}, {bc}
    %q = kgraph.add %s, %res : {tx}, {tx}
    %r = kgraph.relu %q : {tx}
    kgraph.yield %r : {tx}
  }}
  return %y3 : {tx}
}}"""


def bottleneck_ref(x, w1, b1, w2, b2, w3, b3):
    y = torch.relu(conv_nhwc(x, w1) + b1)
    y = torch.relu(conv_nhwc(y, w2, pad=1) + b2)
    return torch.relu(conv_nhwc(y, w3) + b3 + x)


def bottleneck_case(name, n, h, c, mid, bench):
    r1, r2, r3 = wrange(c), wrange(9 * mid), wrange(mid)
    return GraphCase(
        name, bottleneck_mlir(n, h, c, mid),
        [Input("x", [n, h, h, c], "f16"),
         Input("w1", [mid, 1, 1, c], "f16", lo=-r1, hi=r1),
         Input("b1", [mid], "f16", lo=-0.5, hi=0.5),
         Input("w2", [mid, 3, 3, mid], "f16", lo=-r2, hi=r2),
         Input("b2", [mid], "f16", lo=-0.5, hi=0.5),
         Input("w3", [c, 1, 1, mid], "f16", lo=-r3, hi=r3),
         Input("b3", [c], "f16", lo=-0.5, hi=0.5)],
        bottleneck_ref, kernels=3,
        # Three f16 stages, each rounding its GEMM result, bias sum and
        # relu (and the last the residual sum) with O(1) activations.
        tol=(2e-2, 2e-2), memcheck=not bench, bench=bench)


CASES = MM_CASES + CONV_CASES + [
    bottleneck_case("epi_resnet_bottleneck_f16_n2_14x14_256_64", 2, 14, 256,
                    64, bench=False),
    bias_relu_case("epi_bench_mm_bias_relu_f16_8192", 8192, 8192, 8192,
                   "f16", bench=True),
    bottleneck_case("epi_bench_resnet_bottleneck_f16_n64_56x56_256_64", 64,
                    56, 256, 64, bench=True),
    # Issue 12's strided conv row: an Inception-style 3x3/2 reduction,
    # 96 -> 128 channels at 35x35, batch 64, with bias and relu (torch eager:
    # cuDNN's channels-last conv, then the bias and relu).
    conv_bias_relu_case("epi_bench_conv_s2_bias_relu_f16_n64_35x35_96_128", 64,
                        96, 35, 128, 3, "f16", stride=2, bench=True),
]
