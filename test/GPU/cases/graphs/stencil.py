"""Stencil groups (issue 5): the edge-detection chain as one kernel, lone
pool2d (max/avg, strides, padding, nchw/nhwc) and a 2-channel stencil chain.

The chains are written as one hand-made kgraph.fused group (kernels=1): the
fusion pass is not on this branch. The edge chain quantizes its image to the
integers {-2, ..., 2} (trunc(2x)) and uses integer filters (5x5 binomial,
Sobel), so everything up to the squared magnitude is exact in f32 and the
non-maximum suppression (an equality test against the 3x3 max pool) decides
like the float64 reference except at sqrt ties, which these magnitudes do
not produce.

CPU_CASES are tiny versions that test/Tools/check_stencil_kernels.py runs in the
CPU interpreter of emitted kernels.
"""

import torch
import torch.nn.functional as F

from graph_case import GraphCase, Input

BINOMIAL5 = [1.0, 4.0, 6.0, 4.0, 1.0]
GAUSS5 = [[a * b for b in BINOMIAL5] for a in BINOMIAL5]  # sums to 256
SOBEL_X = [[-1.0, 0.0, 1.0], [-2.0, 0.0, 2.0], [-1.0, 0.0, 1.0]]
SOBEL_Y = [[-1.0, -2.0, -1.0], [0.0, 0.0, 0.0], [1.0, 2.0, 1.0]]
THRESHOLD = 60.5


def _dense(rows):
    return "[[[" + ", ".join("[" + ", ".join(f"{v:.1f}" for v in r) + "]" for r in rows) + "]]]"


def _t(shape, dt):
    return "tensor<" + "x".join(str(d) for d in shape) + "x" + dt + ">"


def _nchw(x, layout):
    return x if layout == "nchw" else x.permute(0, 3, 1, 2)


def _back(x, layout):
    return x if layout == "nchw" else x.permute(0, 2, 3, 1).contiguous()


def _config(config):
    """` {kgraph.config = ...}` pinning a stencil config (th, tw, bx, by, rows
    [, cols])."""
    if not config:
        return ""
    th, tw, bx, by, r = config[:5]
    cols = f", cols_per_thread = {config[5]}" if len(config) > 5 else ""
    return (f" {{kgraph.config = #kgraph.stencil_config<tile_h = {th}, tile_w = {tw}, "
            f"block_x = {bx}, block_y = {by}, rows_per_thread = {r}{cols}>}}")


def _tiled(config):
    """Name suffix of a pinned config: _tiled, _tiled_r{rows}c{cols} with
    cols_per_thread."""
    if not config:
        return ""
    if len(config) > 5:
        return f"_tiled_{config[0]}x{config[1]}r{config[4]}c{config[5]}"
    return "_tiled"


def edges_mlir(n, h, w, layout="nchw", config=None):
    img = [n, 1, h, w] if layout == "nchw" else [n, h, w, 1]
    T = _t(img, "f32")
    I = _t(img, "i32")
    B = _t(img, "i1")
    lay = "" if layout == "nchw" else " layout = nhwc"

    def filt(rows):
        k = len(rows)
        if layout == "nchw":
            return (f"arith.constant dense<{_dense(rows)}> : tensor<1x1x{k}x{k}xf32>",
                    f"tensor<1x1x{k}x{k}xf32>")
        text = "[[" + ", ".join("[" + ", ".join(f"[{v:.1f}]" for v in r) + "]" for r in rows) + "]]"
        return f"arith.constant dense<{text}> : tensor<1x{k}x{k}x1xf32>", f"tensor<1x{k}x{k}x1xf32>"

    g, gt = filt(GAUSS5)
    sx, st = filt(SOBEL_X)
    sy, _ = filt(SOBEL_Y)
    return f"""func.func @main(%img: {T}) -> {T} {{
  %r = kgraph.fused (%img){_config(config)} : ({T}) -> {T} {{
  ^bb0(%x: {T}):
    %two = arith.constant dense<2.0> : tensor<f32>
    %x2 = kgraph.mul %x, %two : {T}, tensor<f32>
    %xi = kgraph.cast %x2 : {T} to {I}
    %q = kgraph.cast %xi : {I} to {T}
    %g = {g}
    %sx = {sx}
    %sy = {sy}
    %b = kgraph.conv2d %q, %g{lay} padding = [2, 2, 2, 2] : {T}, {gt} -> {T}
    %gx = kgraph.conv2d %b, %sx{lay} padding = [1, 1, 1, 1] : {T}, {st} -> {T}
    %gy = kgraph.conv2d %b, %sy{lay} padding = [1, 1, 1, 1] : {T}, {st} -> {T}
    %gx2 = kgraph.mul %gx, %gx : {T}, {T}
    %gy2 = kgraph.mul %gy, %gy : {T}, {T}
    %s = kgraph.add %gx2, %gy2 : {T}, {T}
    %m = kgraph.sqrt %s : {T}
    %p = kgraph.pool2d max %m kernel = [3, 3] padding = [1, 1, 1, 1]{lay} : {T}
    %eq = kgraph.compare eq, %m, %p : {T}, {T}
    %t = arith.constant dense<{THRESHOLD}> : tensor<f32>
    %gt = kgraph.compare gt, %m, %t : {T}, tensor<f32>
    %z = arith.constant dense<0.0> : tensor<f32>
    %s1 = kgraph.select %gt, %m, %z : {B}, {T}, tensor<f32>
    %o = kgraph.select %eq, %s1, %z : {B}, {T}, tensor<f32>
    kgraph.yield %o : {T}
  }}
  return %r : {T}
}}"""


def edges_ref(layout):
    # The filters are made once per device and dtype, not per call: the torch
    # baselines of the benchmark time the chain, not host-to-device copies.
    filters = {}

    def k(name, rows, x):
        key = (name, x.device, x.dtype)
        if key not in filters:
            filters[key] = torch.tensor(rows, dtype=x.dtype, device=x.device)[None, None]
        return filters[key]

    def ref(img):
        x = _nchw(img, layout)
        q = torch.trunc(x * 2.0)
        b = F.conv2d(q, k("gauss", GAUSS5, x), padding=2)
        gx = F.conv2d(b, k("sobel_x", SOBEL_X, x), padding=1)
        gy = F.conv2d(b, k("sobel_y", SOBEL_Y, x), padding=1)
        m = torch.sqrt(gx * gx + gy * gy)
        p = F.max_pool2d(F.pad(m, (1, 1, 1, 1), value=float("-inf")), 3, stride=1)
        keep = (m == p) & (m > THRESHOLD)
        return _back(torch.where(keep, m, torch.zeros_like(m)), layout)
    return ref


def pool_mlir(kind, shape, kernel, strides, padding, layout, dt="f32", config=None):
    T = _t(shape, dt)
    n, c, h, w = shape if layout == "nchw" else (shape[0], shape[3], shape[1], shape[2])
    oh = (h + padding[0] + padding[1] - kernel[0]) // strides[0] + 1
    ow = (w + padding[2] + padding[3] - kernel[1]) // strides[1] + 1
    out = [n, c, oh, ow] if layout == "nchw" else [n, oh, ow, c]
    lay = "" if layout == "nchw" else " layout = nhwc"
    op = f"kgraph.pool2d {kind} %x kernel = {list(kernel)} strides = {list(strides)} padding = {list(padding)}{lay} : {T}"
    if config:
        return f"""func.func @main(%arg: {T}) -> {_t(out, dt)} {{
  %0 = kgraph.fused (%arg){_config(config)} : ({T}) -> {_t(out, dt)} {{
  ^bb0(%x: {T}):
    %p = {op}
    kgraph.yield %p : {_t(out, dt)}
  }}
  return %0 : {_t(out, dt)}
}}"""
    return f"""func.func @main(%x: {T}) -> {_t(out, dt)} {{
  %0 = {op}
  return %0 : {_t(out, dt)}
}}"""


def pool_ref(kind, kernel, strides, padding, layout):
    def ref(x):
        x = _nchw(x, layout)
        if kind == "max":
            xp = F.pad(x, (padding[2], padding[3], padding[0], padding[1]), value=float("-inf"))
            y = F.max_pool2d(xp, kernel, stride=strides)
        else:
            # count_include_pad=False, with asymmetric padding: sum / count.
            pad = (padding[2], padding[3], padding[0], padding[1])
            ones = torch.ones_like(x)
            s = F.avg_pool2d(F.pad(x, pad), kernel, stride=strides, divisor_override=1)
            cnt = F.avg_pool2d(F.pad(ones, pad), kernel, stride=strides, divisor_override=1)
            y = s / cnt
        return _back(y, layout)
    return ref


def pool_case(kind, shape, kernel, strides, padding, layout, dt="f32", bench=False, config=None):
    name = (f"stencil_pool_{kind}_{dt}_{layout}_{'x'.join(map(str, shape))}_k{kernel[0]}{kernel[1]}"
            f"_s{strides[0]}{strides[1]}_p{''.join(map(str, padding))}")
    tol = (1e-6, 1e-6) if dt == "f32" else (2e-3, 2e-3)
    name += _tiled(config)
    return GraphCase(name, pool_mlir(kind, shape, kernel, strides, padding, layout, dt, config),
                     [Input("x", shape, dt)], pool_ref(kind, kernel, strides, padding, layout),
                     kernels=1, tol=tol, memcheck=not bench, bench=bench)


def two_channel_mlir(n, h, w, layout, dt, config=None):
    """conv 3x3 (2 -> 2 channels, weights as inputs) + bias-free relu, then
    a 3x3 avg pool (count_include_pad=False) and a 2 -> 1 channel 1x1
    conv added to the relu output of channel 0 via broadcasting."""
    sh = (lambda c: [n, c, h, w]) if layout == "nchw" else (lambda c: [n, h, w, c])
    fs = (lambda f, c, k: [f, c, k, k]) if layout == "nchw" else (lambda f, c, k: [f, k, k, c])
    T2, T1 = _t(sh(2), dt), _t(sh(1), dt)
    W3, W1 = _t(fs(2, 2, 3), dt), _t(fs(1, 2, 1), dt)
    lay = "" if layout == "nchw" else " layout = nhwc"
    return f"""func.func @main(%x: {T2}, %w: {W3}, %v: {W1}) -> ({T2}, {T2}) {{
  %r:2 = kgraph.fused (%x, %w, %v){_config(config)} : ({T2}, {W3}, {W1}) -> ({T2}, {T2}) {{
  ^bb0(%a: {T2}, %wa: {W3}, %va: {W1}):
    %c = kgraph.conv2d %a, %wa{lay} padding = [1, 1, 1, 1] : {T2}, {W3} -> {T2}
    %r = kgraph.relu %c : {T2}
    %p = kgraph.pool2d avg %r kernel = [3, 3] padding = [1, 1, 1, 1]{lay} : {T2}
    %d = kgraph.conv2d %p, %va{lay} : {T2}, {W1} -> {T1}
    %e = kgraph.add %r, %d : {T2}, {T1}
    kgraph.yield %p, %e : {T2}, {T2}
  }}
  return %r#0, %r#1 : {T2}, {T2}
}}"""


def two_channel_ref(layout):
    def ref(x, w, v):
        x = _nchw(x, layout)
        if layout == "nhwc":
            w, v = w.permute(0, 3, 1, 2), v.permute(0, 3, 1, 2)
        r = torch.relu(F.conv2d(x, w, padding=1))
        p = F.avg_pool2d(r, 3, stride=1, padding=1, count_include_pad=False)
        d = F.conv2d(p, v)
        return _back(p, layout), _back(r + d, layout)
    return ref


def two_channel_case(n, h, w, layout, dt, config=None):
    sh = [n, 2, h, w] if layout == "nchw" else [n, h, w, 2]
    fs3 = [2, 2, 3, 3] if layout == "nchw" else [2, 3, 3, 2]
    fs1 = [1, 2, 1, 1] if layout == "nchw" else [1, 1, 1, 2]
    tol = (1e-5, 1e-5) if dt == "f32" else (1e-2, 1e-2)
    return GraphCase(f"stencil_two_channel_{dt}_{layout}_{n}x{h}x{w}" + _tiled(config),
                     two_channel_mlir(n, h, w, layout, dt, config),
                     [Input("x", sh, dt), Input("w", fs3, dt), Input("v", fs1, dt)],
                     two_channel_ref(layout), kernels=1, tol=tol)


def edges_case(n, h, w, layout="nchw", bench=False, config=None):
    shape = [n, 1, h, w] if layout == "nchw" else [n, h, w, 1]
    return GraphCase(f"stencil_edges_f32_{layout}_{n}x{h}x{w}" + _tiled(config),
                     edges_mlir(n, h, w, layout, config),
                     [Input("img", shape, "f32")], edges_ref(layout), kernels=1,
                     tol=(1e-6, 1e-6), memcheck=not bench, bench=bench)


CASES = [
    edges_case(2, 67, 129),
    edges_case(1, 45, 70, "nhwc"),
    edges_case(2, 67, 129, config=(8, 32, 32, 2, 2)),
    edges_case(8, 4096, 4096, bench=True),
    # Strips of 4 columns (shared-memory rows as float4): image rows a
    # multiple of 4 wide (vector global loads and stores) and not.
    edges_case(2, 67, 132, config=(16, 64, 16, 16, 4, 4)),
    edges_case(2, 67, 129, config=(8, 32, 32, 2, 2, 4)),
    edges_case(1, 45, 70, "nhwc", config=(16, 32, 16, 8, 2, 2)),
    # The benchmark's variants: the one-column default of session 19 (c1),
    # 4 columns, a wider tile and taller strips (the default is 64x64r4c2).
    edges_case(8, 4096, 4096, bench=True, config=(64, 64, 64, 4, 4, 1)),
    edges_case(8, 4096, 4096, bench=True, config=(64, 64, 16, 16, 4, 4)),
    edges_case(8, 4096, 4096, bench=True, config=(64, 128, 32, 8, 4, 4)),
    edges_case(8, 4096, 4096, bench=True, config=(64, 64, 16, 8, 8, 4)),
    pool_case("max", [2, 3, 33, 65], (3, 3), (1, 1), (1, 1, 1, 1), "nchw"),
    pool_case("avg", [2, 3, 33, 65], (3, 3), (1, 1), (1, 1, 1, 1), "nchw"),
    pool_case("max", [2, 33, 65, 3], (3, 3), (2, 2), (1, 0, 1, 0), "nhwc"),
    pool_case("avg", [2, 33, 65, 3], (3, 3), (2, 2), (1, 1, 0, 1), "nhwc"),
    pool_case("max", [1, 16, 32, 32], (2, 2), (2, 2), (0, 0, 0, 0), "nchw", "f16"),
    pool_case("avg", [2, 10, 31, 17], (5, 3), (2, 1), (2, 2, 1, 1), "nchw"),
    pool_case("max", [2, 32, 56, 56], (3, 3), (2, 2), (1, 1, 1, 1), "nhwc", "f16"),
    two_channel_case(2, 37, 70, "nchw", "f32"),
    two_channel_case(1, 29, 40, "nhwc", "f16"),
    two_channel_case(2, 37, 70, "nhwc", "f32", config=(4, 16, 16, 2, 1)),
    two_channel_case(2, 37, 72, "nchw", "f32", config=(8, 32, 8, 4, 2, 4)),
    pool_case("max", [2, 33, 65, 3], (3, 3), (2, 2), (1, 0, 1, 0), "nhwc", config=(8, 16, 8, 4, 2, 2)),
    pool_case("avg", [2, 3, 33, 65], (3, 3), (2, 2), (1, 1, 1, 1), "nchw", config=(4, 8, 32, 1, 2)),
    # More images x channel blocks than grid z holds (1000 x 85, fuzz graph
    # 20261201-97979): they ride along grid x.
    pool_case("avg", [1000, 255, 2, 2], (5, 5), (1, 1), (2, 2, 2, 2), "nchw", "f16"),
]

# Tiny shapes for the CPU interpreter (test/Tools/check_stencil_kernels.py).
CPU_CASES = [
    edges_case(1, 9, 13),
    edges_case(1, 7, 10, "nhwc"),
    pool_case("max", [1, 2, 7, 9], (3, 3), (1, 1), (1, 1, 1, 1), "nchw"),
    pool_case("avg", [1, 2, 7, 9], (3, 3), (1, 1), (1, 1, 1, 1), "nchw"),
    pool_case("max", [1, 9, 11, 5], (3, 3), (2, 2), (1, 0, 1, 0), "nhwc"),
    pool_case("avg", [1, 9, 11, 3], (3, 2), (2, 1), (1, 1, 0, 1), "nhwc"),
    pool_case("avg", [1, 2, 7, 9], (2, 2), (2, 2), (0, 0, 0, 0), "nchw", "f16"),
    two_channel_case(1, 6, 11, "nchw", "f32"),
    two_channel_case(1, 5, 9, "nhwc", "f16"),
    # Pinned small tiles: several blocks per image, partial tiles at the edges.
    edges_case(2, 9, 11, config=(4, 4, 32, 1, 2)),
    edges_case(1, 7, 10, "nhwc", config=(2, 8, 32, 1, 1)),
    pool_case("max", [2, 9, 11, 5], (3, 3), (2, 2), (1, 0, 1, 0), "nhwc", config=(2, 4, 32, 1, 2)),
    pool_case("avg", [1, 2, 9, 7], (3, 3), (1, 1), (1, 1, 1, 1), "nchw", config=(4, 4, 32, 1, 4)),
    two_channel_case(1, 7, 9, "nchw", "f32", config=(4, 4, 32, 1, 2)),
    # Strips of 2 or 4 columns: rows as vectors in shared memory, and in
    # global memory where the image width is a multiple of the strip's.
    edges_case(2, 9, 12, config=(4, 8, 32, 1, 2, 4)),
    edges_case(1, 9, 13, config=(4, 8, 32, 1, 2, 4)),
    edges_case(1, 7, 10, "nhwc", config=(2, 8, 32, 1, 1, 2)),
    pool_case("max", [2, 9, 11, 5], (3, 3), (2, 2), (1, 0, 1, 0), "nhwc", config=(2, 4, 32, 1, 2, 2)),
    pool_case("avg", [1, 2, 9, 8], (3, 3), (1, 1), (1, 1, 1, 1), "nchw", config=(4, 4, 32, 1, 2, 4)),
    pool_case("avg", [1, 2, 9, 11], (3, 2), (2, 1), (1, 1, 0, 1), "nchw", config=(2, 8, 32, 1, 1, 4)),
    two_channel_case(1, 7, 12, "nchw", "f32", config=(4, 8, 32, 1, 2, 4)),
    two_channel_case(1, 5, 9, "nhwc", "f16", config=(2, 4, 32, 1, 2, 2)),
    # Images of many small tiles (blocks inside the image, at its edges and
    # corners, partial tiles), 1-, 2- and 4-column strips, a strided pool.
    edges_case(1, 40, 48, config=(4, 8, 32, 1, 2, 4)),
    edges_case(1, 38, 42, "nhwc", config=(4, 4, 32, 1, 2, 2)),
    edges_case(1, 36, 37, config=(4, 4, 32, 1, 2)),
    pool_case("max", [1, 3, 50, 46], (3, 3), (2, 2), (1, 1, 1, 1), "nchw", config=(2, 4, 32, 1, 2, 2)),
    pool_case("avg", [1, 30, 26, 3], (3, 3), (1, 1), (1, 1, 1, 1), "nhwc", config=(4, 4, 32, 1, 2)),
    two_channel_case(1, 30, 74, "nchw", "f32", config=(4, 8, 32, 1, 2, 2)),
]
