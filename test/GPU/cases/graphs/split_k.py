"""kgraph-split-k-convs (on by default): deep-K convs over few pixels (a
batch-1 ResNet-50's last stages) as a grouped conv of partial sums over
channel slices, the filter's slices stacked by a copy kernel, and the sum
with the epilogue (bias, residual, relu) fused: 3 kernels. The same layers
with --split-k-convs=false (1 kernel) are benchmarked beside them.
Shapes and channel counts as in ResNet-50; a ragged 5x6 image and odd
filter counts as well."""

import torch.nn.functional as F

from graph_case import GraphCase, Input


def _t(shape, dt):
    return "tensor<" + "x".join(map(str, shape)) + f"x{dt}>"


def conv_case(name, layout, dt, n, c, h, w, f, k, stride, pad, residual, split=True,
              min_gain=None, bench=False):
    oh = (h + pad[0] + pad[1] - k) // stride + 1
    ow = (w + pad[2] + pad[3] - k) // stride + 1
    nhwc = layout == "nhwc"
    xs = [n, h, w, c] if nhwc else [n, c, h, w]
    ws = [f, k, k, c] if nhwc else [f, c, k, k]
    ys = [n, oh, ow, f] if nhwc else [n, f, oh, ow]
    bs = [f] if nhwc else [f, 1, 1]
    args = f"%x: {_t(xs, dt)}, %w: {_t(ws, dt)}, %b: {_t(bs, dt)}"
    inputs = [Input("x", xs, dt), Input("w", ws, dt, -0.05, 0.05), Input("b", bs, dt, -0.5, 0.5)]
    lay = " layout = nhwc" if nhwc else ""
    lines = [f"%y = kgraph.conv2d %x, %w{lay} strides = [{stride}, {stride}] "
             f"padding = [{', '.join(map(str, pad))}] : {_t(xs, dt)}, {_t(ws, dt)} -> {_t(ys, dt)}",
             f"%z = kgraph.add %y, %b : {_t(ys, dt)}, {_t(bs, dt)}"]
    cur = "%z"
    if residual:
        args += f", %r: {_t(ys, dt)}"
        inputs.append(Input("r", ys, dt))
        lines.append(f"%s = kgraph.add %z, %r : {_t(ys, dt)}, {_t(ys, dt)}")
        cur = "%s"
    lines.append(f"%o = kgraph.relu {cur} : {_t(ys, dt)}")
    text = (f"func.func @main({args}) -> {_t(ys, dt)} {{\n  " + "\n  ".join(lines)
            + f"\n  return %o : {_t(ys, dt)}\n}}")

    def ref(x, wt, b, *r):
        if nhwc:
            x, wt = x.permute(0, 3, 1, 2), wt.permute(0, 3, 1, 2)
        y = F.conv2d(F.pad(x, (pad[2], pad[3], pad[0], pad[1])), wt, stride=stride)
        if nhwc:
            y = y.permute(0, 2, 3, 1)
        y = y + b
        if r:
            y = y + r[0]
        return y.relu()
    flags = ["--fuse"]
    if not split:
        flags.append("--split-k-convs=false")
    if min_gain is not None:
        flags.append(f"--split-k-min-gain={min_gain}")
    return GraphCase(name + ("" if split else "_whole"), text, inputs, ref,
                     kernels=3 if split else 1,
                     tol=(1e-2, 5e-3) if dt == "f16" else (1e-4, 1e-5),
                     memcheck=not bench, bench=bench, flags=tuple(flags))


CASES = []
for split in (True, False):
    CASES += [
        # The last stage's 3x3 over 512 channels, with the block's residual.
        conv_case("splitk_nhwc_f16_1x7x7x512_f512_k3p1_res", "nhwc", "f16", 1, 512, 7, 7, 512,
                  3, 1, (1, 1, 1, 1), True, split=split, bench=True),
        # Its first, strided 3x3 (14x14 -> 7x7), nchw f32.
        conv_case("splitk_nchw_f32_1x512x14x14_f512_k3s2p1", "nchw", "f32", 1, 512, 14, 14, 512,
                  3, 2, (1, 1, 1, 1), False, split=split, bench=True),
        # Stage 3's 3x3 over 256 channels and the last stage's 1x1 over 2048
        # channels, both split by default.
        conv_case("splitk_nhwc_f16_1x14x14x256_f256_k3p1", "nhwc", "f16", 1, 256, 14, 14,
                  256, 3, 1, (1, 1, 1, 1), False, split=split, bench=True),
        conv_case("splitk_nhwc_f16_1x7x7x2048_f512_k1_res", "nhwc", "f16", 1, 2048, 7, 7, 512,
                  1, 1, (0, 0, 0, 0), True, split=split, bench=True),
        # Stage 3's 1x1 from 1024 to 256 channels, which the default
        # min-gain (1.25) keeps whole, split at any estimated gain, to
        # measure whether the threshold is right.
        conv_case("splitk_nhwc_f16_1x14x14x1024_f256_k1_gain1", "nhwc", "f16", 1, 1024, 14, 14,
                  256, 1, 1, (0, 0, 0, 0), True, split=split, min_gain=1.0, bench=True),
    ]
# Ragged: a 5x6 image, 40 filters, asymmetric padding.
CASES.append(conv_case("splitk_nhwc_f16_2x5x6x512_f40_k3p1", "nhwc", "f16", 2, 512, 5, 6, 40, 3,
                       1, (1, 1, 0, 1), True))
