"""The kgraph.conv2d GPU test and benchmark cases (used by build-gpu-cases.py).

Each case is one ``func.func @main(%x, %w)`` returning one ``kgraph.conv2d``.
Manifest entries (section "conv" for the tests, "conv_bench" for
bench/bench_conv.py) carry, besides the fields every case has (name, op,
attrs, inputs with shapes/dtypes/value domains, output, mlir/ptx/plan):

- ``conv``: the geometry ``{"n", "c", "h", "w", "f", "kh", "kw", "oh", "ow",
  "layout", "strides", "padding" [top, bottom, left, right], "dilations",
  "groups"}``;
- ``dims``: ``{"batch": groups, "m": N*OH*OW, "n": F/groups,
  "k": KH*KW*C/groups}``, the implicit GEMM, so test/GPU/matmul_ref.py's
  error bounds (scaled with K) apply unchanged;
- ``combo``: the type combination as for matmul (``f16_f16``, ``f16_f32``,
  ``f32_f32``);
- ``check``: ``"matmul"``.
"""

from case_common import GemmLikeCase, check_unique_names, ttype
from matmul_cases import COMBOS, FLOAT_DOMAIN

#: (name, N, C, H, W, F, KH, KW, strides, padding, dilations, groups): the
#: ten ResNet-50 layers of ../shared/docs/h200-anchors.md (padding "same"
#: for 3x3 and 7x7) at batch 2, then awkward shapes.
RESNET50 = [
    # (C_in, H=W, C_out, kernel, stride)
    (3, 224, 64, 7, 2),
    (64, 56, 64, 1, 1),
    (64, 56, 64, 3, 1),
    (64, 56, 256, 1, 1),
    (256, 56, 64, 1, 1),
    (128, 28, 128, 3, 1),
    (256, 14, 256, 3, 1),
    (512, 7, 512, 3, 1),
    (1024, 14, 256, 1, 1),
    (2048, 7, 512, 1, 1),
]

#: (tag, N, C, H, W, F, KH, KW, strides, padding, dilations, groups)
AWKWARD = [
    ("odd_hw", 2, 16, 13, 11, 24, 3, 3, (1, 1), (1, 1, 1, 1), (1, 1), 1),
    ("stride2", 3, 32, 15, 17, 40, 3, 3, (2, 2), (1, 1, 1, 1), (1, 1), 1),
    ("pad_asym", 2, 16, 9, 10, 32, 3, 3, (1, 1), (2, 0, 0, 1), (1, 1), 1),
    ("dilation2", 2, 16, 17, 15, 16, 3, 3, (1, 1), (2, 2, 2, 2), (2, 2), 1),
    ("groups2", 2, 32, 12, 12, 48, 3, 3, (1, 1), (1, 1, 1, 1), (1, 1), 2),
    ("depthwise", 2, 32, 14, 14, 32, 3, 3, (1, 1), (1, 1, 1, 1), (1, 1), 32),
    ("one_by_one", 2, 64, 7, 9, 40, 1, 1, (1, 1), (0, 0, 0, 0), (1, 1), 1),
    ("one_by_one_s2", 2, 64, 9, 9, 32, 1, 1, (2, 2), (0, 0, 0, 0), (1, 1), 1),
    ("c_not_mult8", 2, 12, 10, 10, 20, 3, 3, (1, 1), (1, 1, 1, 1), (1, 1), 1),
    ("c3_5x5", 1, 3, 19, 23, 8, 5, 5, (2, 1), (2, 2, 1, 1), (1, 1), 1),
    ("all_mixed", 3, 24, 11, 13, 36, 3, 2, (2, 1), (1, 0, 2, 1), (1, 2), 3),
    ("tiny", 1, 1, 1, 1, 1, 1, 1, (1, 1), (0, 0, 0, 0), (1, 1), 1),
]

#: Combos of the tests: f16 (the benchmark type) with f16 and f32 results,
#: f32 (SIMT fma).
TEST_COMBOS = ("f16_f16", "f16_f32", "f32_f32")
LAYOUTS = ("nhwc", "nchw")
TEST_BATCH = 2
BENCH_BATCH = 64
#: The benchmark: f16 NHWC (cuDNN's fast layout, torch channels_last) and
#: f32 NCHW, as in the anchors table.
BENCH_KINDS = {"f16_nhwc": ("f16_f16", "nhwc"), "f32_nchw": ("f32_f32", "nchw")}
#: Memcheck subset: the awkward shapes in f16 (both layouts).
MEMCHECK_COMBOS = ("f16_f16",)


def out_size(size, lo, hi, k, stride, dilation):
    return (size + lo + hi - dilation * (k - 1) - 1) // stride + 1


def resnet_geometry(c, hw, f, k, s):
    p = (k - 1) // 2
    return (c, hw, hw, f, k, k, (s, s), (p, p, p, p), (1, 1), 1)


class ConvCase(GemmLikeCase):
    """One kgraph.conv2d case (see GemmLikeCase; dims: the implicit GEMM,
    batch = groups)."""

    op = "conv2d"

    def __init__(self, name, combo, layout, n, c, h, w, f, kh, kw,
                 strides=(1, 1), padding=(0, 0, 0, 0), dilations=(1, 1),
                 groups=1, bench=False):
        if combo not in COMBOS:
            raise ValueError(f"unknown combo {combo!r}")
        if c % groups or f % groups:
            raise ValueError(f"{name}: groups {groups} must divide C {c} and "
                             f"F {f}")
        in_dt, out_dt, precision = COMBOS[combo]
        oh = out_size(h, padding[0], padding[1], kh, strides[0], dilations[0])
        ow = out_size(w, padding[2], padding[3], kw, strides[1], dilations[1])
        if oh <= 0 or ow <= 0:
            raise ValueError(f"{name}: empty output {oh}x{ow}")
        self.name = name
        self.combo = combo
        self.precision = precision
        self.bench = bench
        self.bench_kind = None
        self.memcheck = False
        self.geometry = {
            "n": n, "c": c, "h": h, "w": w, "f": f, "kh": kh, "kw": kw,
            "oh": oh, "ow": ow, "layout": layout, "strides": list(strides),
            "padding": list(padding), "dilations": list(dilations),
            "groups": groups}
        cg = c // groups
        if layout == "nhwc":
            x_shape, w_shape, o_shape = [n, h, w, c], [f, kh, kw, cg], [n, oh, ow, f]
        else:
            x_shape, w_shape, o_shape = [n, c, h, w], [f, cg, kh, kw], [n, f, oh, ow]
        self.inputs = [
            {"name": "x", "shape": x_shape, "dtype": in_dt,
             "domain": dict(FLOAT_DOMAIN)},
            {"name": "w", "shape": w_shape, "dtype": in_dt,
             "domain": dict(FLOAT_DOMAIN)},
        ]
        self.output = {"shape": o_shape, "dtype": out_dt}
        self.dims = {"batch": groups, "m": n * oh * ow, "n": f // groups,
                     "k": kh * kw * cg}
        self.attrs = {"layout": layout, "strides": list(strides),
                      "padding": list(padding), "dilations": list(dilations),
                      "groups": groups, "precision": precision or "ieee"}

    def body(self):
        x, w = self.inputs
        g = self.geometry
        lst = lambda v: "[" + ", ".join(str(i) for i in v) + "]"  # noqa: E731
        attrs = f" layout = {g['layout']}"
        if g["strides"] != [1, 1]:
            attrs += f" strides = {lst(g['strides'])}"
        if any(g["padding"]):
            attrs += f" padding = {lst(g['padding'])}"
        if g["dilations"] != [1, 1]:
            attrs += f" dilations = {lst(g['dilations'])}"
        if g["groups"] != 1:
            attrs += f" groups = {g['groups']}"
        if self.precision:
            attrs += f" precision = {self.precision}"
        return (f"%r = kgraph.conv2d %x, %w{attrs} : "
                f"{ttype(x['shape'], x['dtype'])}, "
                f"{ttype(w['shape'], w['dtype'])} -> "
                f"{ttype(self.output['shape'], self.output['dtype'])}")

    def extra_manifest(self):
        return {"conv": dict(self.geometry)}


#: wgmma (sm_90a) with pinned configurations (the model gives these
#: mma.sync): (AWKWARD tag or ResNet layer, layout, combo). 128 x 64 blocks
#: of two warpgroups, m64n64k16, 64-deep K tiles, 4 stages (2 for nchw,
#: whose copies are synchronous).
WGMMA_CONV = [
    ((64, 56, 64, 3, 1), "nhwc", "f16_f16"),
    ("odd_hw", "nhwc", "f16_f32"),
    ("stride2", "nhwc", "f16_f16"),
    ("groups2", "nhwc", "f16_f16"),
    ("c_not_mult8", "nhwc", "f16_f16"),
    ("all_mixed", "nhwc", "f16_f32"),
    ("odd_hw", "nchw", "f16_f16"),
]


def wgmma_conv_config(layout, c, groups, k):
    run = c // groups if layout == "nhwc" else 1
    width = 8
    while width > 1 and (run % width or k % width):
        width //= 2
    stages = 4 if layout == "nhwc" else 2
    return ("#kgraph.matmul_config<tile_m = 128, tile_n = 64, tile_k = 64, "
            f"warps_m = 8, warps_n = 1, stages = {stages}, "
            "instruction = wgmma, instruction_shape = [64, 64, 16], "
            f"load_width = {width}, smem_padding = 0>")


#: TMA im2col loads of the input (copy = tma, sm_90a) with pinned
#: configurations: (tag, N, C, H, W, F, KH, KW, strides, padding, dilations,
#: tile_m, tile_k, combo). M blocks start mid-row and mid-image, M is ragged,
#: tile_k 128 loads two 64-channel boxes per tap; strides, asymmetric
#: padding, dilation; a strided 1x1 (im2col) and a plain 1x1 (tiled maps).
TMA_CONV = [
    ("tma_3x3", 3, 64, 13, 11, 72, 3, 3, (1, 1), (1, 1, 1, 1), (1, 1), 128, 64, "f16_f16"),
    ("tma_3x3_k128", 2, 128, 15, 17, 64, 3, 3, (1, 1), (1, 1, 1, 1), (1, 1), 64, 128, "f16_f32"),
    ("tma_stride2", 3, 64, 15, 17, 40, 3, 3, (2, 2), (1, 0, 1, 0), (1, 1), 128, 64, "f16_f16"),
    ("tma_dilation2", 2, 64, 17, 15, 64, 3, 3, (1, 1), (2, 2, 2, 2), (2, 2), 128, 64, "f16_f32"),
    ("tma_7x7_s2", 2, 64, 23, 21, 64, 7, 7, (2, 2), (3, 3, 3, 3), (1, 1), 64, 64, "f16_f16"),
    ("tma_1x1_s2", 2, 128, 9, 11, 72, 1, 1, (2, 2), (0, 0, 0, 0), (1, 1), 128, 128, "f16_f16"),
    ("tma_1x1", 3, 64, 7, 9, 40, 1, 1, (1, 1), (0, 0, 0, 0), (1, 1), 128, 64, "f16_f16"),
]


#: Stream-K grids of TMA convs (persistent blocks over the tiles'
#: iterations): (TMA_CONV tag, stream_k). tma_3x3 has 8 tiles of 9
#: iterations: 5 blocks split tiles, 4 take two whole tiles each;
#: tma_3x3_k128 8 tiles of 9 over 3 blocks (split); tma_dilation2 over 7.
TMA_CONV_STREAM_K = [("tma_3x3", 5), ("tma_3x3", 4), ("tma_3x3_k128", 3),
                     ("tma_dilation2", 7)]


def tma_conv_config(tile_m, tile_k, stream_k=0):
    warps = 4 if tile_m == 64 else 8
    sk = f", stream_k = {stream_k}" if stream_k else ""
    return (f"#kgraph.matmul_config<tile_m = {tile_m}, tile_n = 64, tile_k = {tile_k}, "
            f"warps_m = {warps}, warps_n = 1, stages = 3, "
            "instruction = wgmma, instruction_shape = [64, 64, 16], "
            f"load_width = 8, smem_padding = 0, copy = tma{sk}>")


def resnet_tag(c, hw, f, k, s):
    return f"resnet_c{c}_hw{hw}_f{f}_k{k}_s{s}"


def all_cases():
    """The correctness cases (manifest section "conv")."""
    cases = []
    for combo in TEST_COMBOS:
        for layout in LAYOUTS:
            for layer in RESNET50:
                geo = resnet_geometry(*layer)
                c, h, w, f, kh, kw, st, pad, dil, g = geo
                cases.append(ConvCase(
                    f"conv_{combo}_{layout}_{resnet_tag(*layer)}", combo,
                    layout, TEST_BATCH, c, h, w, f, kh, kw, st, pad, dil, g))
            for tag, n, c, h, w, f, kh, kw, st, pad, dil, g in AWKWARD:
                case = ConvCase(f"conv_{combo}_{layout}_{tag}", combo, layout,
                                n, c, h, w, f, kh, kw, st, pad, dil, g)
                case.memcheck = combo in MEMCHECK_COMBOS
                cases.append(case)
    awkward = {a[0]: a[1:] for a in AWKWARD}
    for which, layout, combo in WGMMA_CONV:
        if isinstance(which, tuple):
            tag = resnet_tag(*which)
            n = TEST_BATCH
            c, h, w, f, kh, kw, st, pad, dil, g = resnet_geometry(*which)
        else:
            tag = which
            n, c, h, w, f, kh, kw, st, pad, dil, g = awkward[which]
        case = ConvCase(f"conv_wgmma_{combo}_{layout}_{tag}", combo, layout,
                        n, c, h, w, f, kh, kw, st, pad, dil, g)
        case.pinned_config = wgmma_conv_config(layout, c, g, kh * kw * c // g)
        case.memcheck = not isinstance(which, tuple)
        cases.append(case)
    for tag, n, c, h, w, f, kh, kw, st, pad, dil, tm, tk, combo in TMA_CONV:
        case = ConvCase(f"conv_tma_{combo}_nhwc_{tag}", combo, "nhwc",
                        n, c, h, w, f, kh, kw, st, pad, dil, 1)
        case.pinned_config = tma_conv_config(tm, tk)
        case.memcheck = True
        cases.append(case)
    tma = {t[0]: t[1:] for t in TMA_CONV}
    for tag, blocks in TMA_CONV_STREAM_K:
        n, c, h, w, f, kh, kw, st, pad, dil, tm, tk, combo = tma[tag]
        case = ConvCase(f"conv_tma_{combo}_nhwc_{tag}_sk{blocks}", combo, "nhwc",
                        n, c, h, w, f, kh, kw, st, pad, dil, 1)
        case.pinned_config = tma_conv_config(tm, tk, blocks)
        case.memcheck = True
        cases.append(case)
    check_unique_names(cases, "conv")
    return cases


def bench_name(kind, layer):
    return f"bench_conv_{kind}_{resnet_tag(*layer)}"


def bench_cases():
    """The benchmark kernels (manifest section "conv_bench"): the ten
    ResNet-50 layers at batch 64 for each bench kind."""
    cases = []
    for kind, (combo, layout) in BENCH_KINDS.items():
        for layer in RESNET50:
            c, h, w, f, kh, kw, st, pad, dil, g = resnet_geometry(*layer)
            case = ConvCase(bench_name(kind, layer), combo, layout,
                            BENCH_BATCH, c, h, w, f, kh, kw, st, pad, dil, g,
                            bench=True)
            case.bench_kind = kind
            cases.append(case)
    return cases
