"""Window kernels (docs/architecture.md, "Window kernels"): channels-last
pools of any stride and padding, depthwise and narrow grouped convs, with
fused producers and consumers. Shapes are ragged in pixels and channels;
inputs cover negative-only windows (a max pool's start value). Benchmarks:
ResNet-50's 3x3/2 max pool at batch 256 (issue 12: 18% of the model's time
as a stencil kernel) and a depthwise 3x3 conv, f16 NHWC, against cuDNN
(torch eager) and torch.compile.
"""

import torch
import torch.nn.functional as F

from graph_case import GraphCase, Input


def _t(shape, dt):
    return "tensor<" + "x".join(map(str, shape)) + f"x{dt}>"


def _nchw(x):
    return x.permute(0, 3, 1, 2)


def _nhwc(x):
    return x.permute(0, 2, 3, 1)


def _symmetric(kernel, pad):
    """torch's own padding argument where it can express `pad` (so the eager
    baseline runs no separate pad kernel)."""
    if pad[0] == pad[1] and pad[2] == pad[3] and 2 * pad[0] <= kernel[0] \
            and 2 * pad[2] <= kernel[1]:
        return (pad[0], pad[2])
    return None


def _pool_ref(kind, kernel, stride, pad):
    sym = _symmetric(kernel, pad)

    def pool(x):
        integer = not x.is_floating_point()
        if integer:
            x = x.double()   # the reference of an integer pool: exact in float64
        x = _nchw(x)
        p = (pad[2], pad[3], pad[0], pad[1])
        if kind == "max":
            if sym:
                y = F.max_pool2d(x, kernel, stride, padding=sym)
            else:
                y = F.max_pool2d(F.pad(x, p, value=float("-inf")), kernel, stride)
            y = _nhwc(y)
            return y.long() if integer else y
        if sym:
            return _nhwc(F.avg_pool2d(x, kernel, stride, padding=sym, count_include_pad=False))
        ones = torch.ones_like(x)
        s = F.avg_pool2d(F.pad(x, p), kernel, stride, divisor_override=1)
        cnt = F.avg_pool2d(F.pad(ones, p), kernel, stride, divisor_override=1)
        return _nhwc(s / cnt)
    return pool


def pool_case(kind, shape, kernel, stride, pad, dt="f16", relu=False, lo=-1.0, hi=1.0,
              bench=False):
    n, h, w, c = shape
    oh = (h + pad[0] + pad[1] - kernel[0]) // stride[0] + 1
    ow = (w + pad[2] + pad[3] - kernel[1]) // stride[1] + 1
    out = [n, oh, ow, c]
    body = (f"  %p = kgraph.pool2d {kind} %x kernel = [{kernel[0]}, {kernel[1]}] strides = "
            f"[{stride[0]}, {stride[1]}] padding = [{', '.join(map(str, pad))}] layout = nhwc : "
            f"{_t(shape, dt)}\n")
    res = "%p"
    if relu:
        body += f"  %r = kgraph.relu %p : {_t(out, dt)}\n"
        res = "%r"
    text = (f"func.func @main(%x: {_t(shape, dt)}) -> {_t(out, dt)} {{\n{body}"
            f"  return {res} : {_t(out, dt)}\n}}")
    pool = _pool_ref(kind, kernel, stride, pad)

    def ref(x):
        y = pool(x)
        return torch.relu(y) if relu else y
    name = (f"window_pool_{kind}_{dt}_{'x'.join(map(str, shape))}_k{kernel[0]}{kernel[1]}"
            f"_s{stride[0]}{stride[1]}_p{''.join(map(str, pad))}" + ("_relu" if relu else ""))
    exact = kind == "max" or dt in ("i8", "i32")
    tol = (0.0, 0.0) if exact else ((1e-6, 1e-6) if dt == "f32" else (1e-2, 1e-3))
    return GraphCase(name, text, [Input("x", shape, dt, lo, hi)], ref, kernels=1, tol=tol,
                     memcheck=not bench, bench=bench)


def conv_case(shape, f, k, groups, dt="f16", stride=(1, 1), pad=(0, 0, 0, 0), dil=(1, 1),
              bias=False, relu=False, bench=False):
    n, h, w, c = shape
    cg = c // groups
    oh = (h + pad[0] + pad[1] - dil[0] * (k - 1) - 1) // stride[0] + 1
    ow = (w + pad[2] + pad[3] - dil[1] * (k - 1) - 1) // stride[1] + 1
    out = [n, oh, ow, f]
    ws = [f, k, k, cg]
    args = [f"%x: {_t(shape, dt)}", f"%w: {_t(ws, dt)}"]
    inputs = [Input("x", shape, dt), Input("w", ws, dt)]
    if bias:
        args.append(f"%b: {_t([f], dt)}")
        inputs.append(Input("b", [f], dt, -0.5, 0.5))
    body = (f"  %y = kgraph.conv2d %x, %w layout = nhwc strides = [{stride[0]}, {stride[1]}] "
            f"padding = [{', '.join(map(str, pad))}] dilations = [{dil[0]}, {dil[1]}] "
            f"groups = {groups} : {_t(shape, dt)}, {_t(ws, dt)} -> {_t(out, dt)}\n")
    res = "%y"
    if bias:
        body += f"  %z = kgraph.add %y, %b : {_t(out, dt)}, {_t([f], dt)}\n"
        res = "%z"
    if relu:
        body += f"  %r = kgraph.relu {res} : {_t(out, dt)}\n"
        res = "%r"
    text = (f"func.func @main({', '.join(args)}) -> {_t(out, dt)} {{\n{body}"
            f"  return {res} : {_t(out, dt)}\n}}")

    sym = pad[:2] == pad[2:] and pad[0] == pad[1] and pad[2] == pad[3]

    def ref(x, wt, *rest):
        x, wt = _nchw(x), wt.permute(0, 3, 1, 2)
        if sym:
            y = F.conv2d(x, wt, stride=stride, padding=(pad[0], pad[2]), dilation=dil,
                         groups=groups)
        else:
            y = F.conv2d(F.pad(x, (pad[2], pad[3], pad[0], pad[1])), wt, stride=stride,
                         dilation=dil, groups=groups)
        y = _nhwc(y)
        if bias:
            y = y + rest[0]
        return torch.relu(y) if relu else y
    name = (f"window_conv_{dt}_{'x'.join(map(str, shape))}_f{f}_k{k}_g{groups}"
            f"_s{stride[0]}{stride[1]}_p{''.join(map(str, pad))}_d{dil[0]}{dil[1]}"
            + ("_bias" if bias else "") + ("_relu" if relu else ""))
    # fp16 storage of the result (and of the biased value): a few ulps.
    tol = (1e-5, 1e-5) if dt == "f32" else (1e-2, 2e-3)
    return GraphCase(name, text, inputs, ref, kernels=1, tol=tol, memcheck=not bench,
                     bench=bench)


CASES = [
    # Pools: ResNet's stem pool at a small ragged size; all-negative inputs
    # (a start value of 0 would win); bf16, f32 and i8; a window larger
    # than the unroll limit (14x14 global average pool).
    pool_case("max", [3, 37, 29, 64], (3, 3), (2, 2), (1, 1, 1, 1)),
    pool_case("max", [2, 21, 19, 48], (3, 3), (2, 2), (1, 1, 1, 1), lo=-4.0, hi=-0.25),
    pool_case("max", [2, 15, 17, 24], (2, 2), (2, 2), (0, 0, 0, 0), dt="bf16", relu=True),
    pool_case("avg", [2, 15, 17, 40], (3, 3), (2, 2), (1, 1, 1, 1), dt="f32"),
    pool_case("avg", [1, 11, 13, 12], (2, 3), (3, 3), (0, 1, 2, 2)),
    pool_case("avg", [4, 14, 14, 264], (14, 14), (1, 1), (0, 0, 0, 0), dt="f32"),
    pool_case("max", [2, 9, 11, 7], (3, 3), (1, 1), (1, 1, 1, 1), dt="i8", lo=-128, hi=127),
    # Depthwise and grouped convs: with bias and relu, strides, dilation,
    # 5x5 and 7x7 filters (the 7x7 loads its filter per tap), channel
    # multiplier 2 (gathered loads), 2 input channels per group.
    conv_case([2, 29, 31, 96], 96, 3, 96, pad=(1, 1, 1, 1), bias=True, relu=True),
    conv_case([2, 23, 19, 40], 40, 3, 40, dt="f32", stride=(2, 2), pad=(1, 1, 1, 1)),
    conv_case([1, 17, 18, 32], 32, 5, 32, dt="bf16", dil=(2, 2), pad=(4, 4, 4, 4)),
    conv_case([1, 19, 21, 24], 24, 7, 24, pad=(3, 3, 3, 3), bias=True),
    conv_case([2, 13, 11, 24], 48, 3, 24, dt="f32", pad=(1, 1, 1, 1)),
    conv_case([2, 13, 11, 32], 32, 3, 16, pad=(0, 1, 1, 0)),
    # Benchmarks (issue 12): ResNet-50's max pool at batch 256 and a
    # depthwise 3x3 (groups = C = 128) on 32x56x56, f16 NHWC.
    pool_case("max", [256, 112, 112, 64], (3, 3), (2, 2), (1, 1, 1, 1), bench=True),
    conv_case([32, 56, 56, 128], 128, 3, 128, pad=(1, 1, 1, 1), bench=True),
]
