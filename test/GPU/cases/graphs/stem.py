"""ResNet-50's stem (7x7/2 conv of 3 channels, bias, relu; f16 NHWC) as
written, and with its 3 input channels padded by zeros to 4 and to 8
(kgraph.concat of a splat zero: an input copy kernel, a filter copy
kernel, then a conv whose channels load as 8- or 16-byte vectors; 8 also
takes wgmma). The same function either way, against the same torch
reference (cuDNN's first-layer kernel pads to 4 itself). The benchmarks at
batch 256 measure whether padding pays (issue 12: the stem is 13% of
ResNet-50's time, one element per load) before the compiler does it.
The `s2d` cases compile the stem as written with the defaults, which
rewrite it as a stride-1 4x4 conv over 2x2 pixel blocks of 16 channels
(kgraph-space-to-depth-convs); the others keep it as written
(--space-to-depth-convs=false).
"""

import torch.nn.functional as F

from graph_case import GraphCase, Input


def _t(shape, dt="f16"):
    return "tensor<" + "x".join(map(str, shape)) + f"x{dt}>"


def stem_case(n, h, w, pad_to=3, bench=False, s2d=False):
    oh, ow = (h + 6 - 7) // 2 + 1, (w + 6 - 7) // 2 + 1
    x, wt, out = [n, h, w, 3], [64, 7, 7, 3], [n, oh, ow, 64]
    c = pad_to
    lines = []
    xin, win = "%x", "%w"
    if c > 3:
        lines += [
            f"%zx = arith.constant dense<0.0> : {_t([n, h, w, c - 3])}",
            f"%zw = arith.constant dense<0.0> : {_t([64, 7, 7, c - 3])}",
            f"%xp = kgraph.concat %x, %zx axis = 3 : {_t(x)}, {_t([n, h, w, c - 3])}",
            f"%wp = kgraph.concat %w, %zw axis = 3 : {_t(wt)}, {_t([64, 7, 7, c - 3])}",
        ]
        xin, win = "%xp", "%wp"
    lines += [
        f"%y = kgraph.conv2d {xin}, {win} layout = nhwc strides = [2, 2] padding = [3, 3, 3, 3] : "
        f"{_t([n, h, w, c])}, {_t([64, 7, 7, c])} -> {_t(out)}",
        f"%z = kgraph.add %y, %b : {_t(out)}, {_t([64])}",
        f"%r = kgraph.relu %z : {_t(out)}",
    ]
    text = (f"func.func @main(%x: {_t(x)}, %w: {_t(wt)}, %b: {_t([64])}) -> {_t(out)} {{\n  "
            + "\n  ".join(lines) + f"\n  return %r : {_t(out)}\n}}")

    def ref(x, w, b):
        y = F.conv2d(x.permute(0, 3, 1, 2), w.permute(0, 3, 1, 2), stride=2, padding=3)
        return (y.permute(0, 2, 3, 1) + b).relu()
    name = f"stem_{'s2d' if s2d else f'c{c}'}_f16_{n}x{h}x{w}"
    # kgraph-space-to-depth-convs: the input's channel pad and transpose
    # (one kernel; odd sizes first a zero row and column, another), the
    # filter's zero taps, then its channel pad and transpose, the stride-1
    # conv.
    kernels = 1 if c == 3 else 3
    if s2d:
        kernels = 5 if h % 2 or w % 2 else 4
    return GraphCase(name, text, [Input("x", x, "f16"), Input("w", wt, "f16"),
                                  Input("b", [64], "f16", -0.5, 0.5)],
                     ref, kernels=kernels, tol=(1e-2, 5e-3),
                     memcheck=not bench, bench=bench,
                     flags=("--fuse",) if s2d else ("--fuse", "--space-to-depth-convs=false"))


CASES = [
    stem_case(2, 37, 41),
    stem_case(2, 37, 41, pad_to=4),
    stem_case(2, 37, 41, pad_to=8),
    stem_case(2, 37, 41, s2d=True),
    stem_case(3, 30, 28, s2d=True),
    stem_case(256, 224, 224, bench=True),
    stem_case(256, 224, 224, pad_to=4, bench=True),
    stem_case(256, 224, 224, pad_to=8, bench=True),
    stem_case(256, 224, 224, s2d=True, bench=True),
]
