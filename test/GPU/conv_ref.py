"""Inputs, float64 references and comparisons of the kgraph.conv2d GPU tests
and benchmark.

The reference is torch.nn.functional.conv2d in float64 on the inputs as the
kernel sees them (each already rounded to its dtype, then upcast); nhwc
tensors are permuted to nchw for it and the result back. The error bounds
are those of the implicit GEMM (matmul_ref.py, K = KH*KW*C/groups), with
S = conv2d(|x|, |w|): the padding contributes exact zeros. Runs on the CPU
(unit-tested by test_conv_checker.py without a GPU).
"""

import torch

import matmul_ref as MR

TORCH_DTYPES = MR.TORCH_DTYPES
POISON = MR.POISON
case_seed = MR.case_seed
make_inputs = MR.make_inputs
compare = MR.compare


def _to_nchw(case, t):
    return t.permute(0, 3, 1, 2) if case["conv"]["layout"] == "nhwc" else t


def _from_nchw(case, t):
    return t.permute(0, 2, 3, 1) if case["conv"]["layout"] == "nhwc" else t


def conv64(case, x, w):
    """float64 conv2d of the case's stored x and w (any float dtype, any
    device), in the case's output layout."""
    g = case["conv"]
    top, bottom, left, right = g["padding"]
    x64 = _to_nchw(case, x.to(torch.float64))
    w64 = _to_nchw(case, w.to(torch.float64))  # nhwc filter: [F, KH, KW, C/g]
    x64 = torch.nn.functional.pad(x64, (left, right, top, bottom))
    out = torch.nn.functional.conv2d(x64, w64, stride=tuple(g["strides"]),
                                     dilation=tuple(g["dilations"]),
                                     groups=g["groups"])
    return _from_nchw(case, out).contiguous()


def reference(case, x, w):
    """(ref, S): the float64 convolution and conv2d(|x|, |w|), of the case's
    output shape."""
    ref = conv64(case, x, w)
    if list(ref.shape) != case["output"]["shape"]:
        raise AssertionError(f"reference of {case['name']} has shape "
                             f"{list(ref.shape)}, the case says "
                             f"{case['output']['shape']}")
    return ref, conv64(case, x.abs(), w.abs())


def naive(case, x, w):
    """The definition, loop by loop in float64 (for the self-tests: small
    cases only): out[n, f, oh, ow] = sum over c < C/g, kh, kw of
    x[n, g*C/g + c, oh*sh - top + kh*dh, ow*sw - left + kw*dw] * w[f, c, kh, kw]
    with g = f // (F/groups), zero outside the image."""
    geo = case["conv"]
    xs = _to_nchw(case, x.to(torch.float64))
    ws = _to_nchw(case, w.to(torch.float64))
    n, c, h, wd = xs.shape
    f, cg, kh, kw = ws.shape
    sh, sw = geo["strides"]
    dh, dw = geo["dilations"]
    top, _, left, _ = geo["padding"]
    fg = f // geo["groups"]
    out = torch.zeros(n, f, geo["oh"], geo["ow"], dtype=torch.float64)
    for fo in range(f):
        grp = fo // fg
        for i in range(kh):
            for j in range(kw):
                for oh in range(geo["oh"]):
                    ih = oh * sh - top + i * dh
                    if not 0 <= ih < h:
                        continue
                    for ow in range(geo["ow"]):
                        iw = ow * sw - left + j * dw
                        if not 0 <= iw < wd:
                            continue
                        xv = xs[:, grp * cg:(grp + 1) * cg, ih, iw]
                        out[:, fo, oh, ow] += xv @ ws[fo, :, i, j]
    return _from_nchw(case, out).contiguous()


def simulate(case, x, w):
    """What a correct kernel may return (for the self-tests): the
    convolution accumulated in f32, rounded to the output dtype."""
    ref = conv64(case, x.to(torch.float32), w.to(torch.float32))
    return ref.to(torch.float32).to(TORCH_DTYPES[case["output"]["dtype"]])
