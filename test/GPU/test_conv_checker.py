"""CPU self-tests of the kgraph.conv2d cases and of conv_ref.py: the case
list covers the ResNet-50 layers and the awkward shapes, every case's
geometry is consistent with its shapes (and with kgraph.conv2d's output-size
formula), the float64 reference equals the loop-by-loop definition, accepts
what a correct kernel may return and rejects the usual implicit-GEMM bugs.
Needs torch, no GPU.
"""

import pytest

torch = pytest.importorskip("torch")

import conv_ref as CR  # noqa: E402
import gpu_harness as H  # noqa: E402


GEN = H.load_case_generator("build_gpu_cases_conv")
CC = GEN.conv_cases
CASES = [c.manifest() for c in CC.all_cases()]
BY_NAME = {c["name"]: c for c in CASES}
BENCH = [c.manifest() for c in CC.bench_cases()]
#: Small enough for the loop-by-loop reference.
SMALL = [c for c in CASES if c["dims"]["m"] * c["dims"]["n"] * c["dims"]["k"]
         * c["dims"]["batch"] <= 3_000_000]


def _inputs(case, seed=1234):
    gen = torch.Generator().manual_seed(CR.case_seed(seed, case["name"]))
    return CR.make_inputs(case, gen)


def test_suite_is_registered():
    assert "conv" in GEN.SUITES
    assert GEN.SUITES["conv"][2:] == ("conv", "conv_bench")


def test_coverage():
    geos = [c["conv"] for c in CASES]
    assert any(g["strides"] != [1, 1] for g in geos)
    assert any(g["dilations"] == [2, 2] for g in geos)
    assert any(g["groups"] == 2 for g in geos)
    assert any(g["groups"] == g["c"] and g["groups"] > 1 for g in geos)  # depthwise
    assert any(g["kh"] == g["kw"] == 1 for g in geos)
    assert any(g["c"] % 8 for g in geos)
    assert any(g["oh"] % 2 and g["ow"] % 2 for g in geos)
    assert any(len(set(g["padding"])) > 1 for g in geos)
    for layout in ("nhwc", "nchw"):
        for combo in ("f16_f16", "f16_f32", "f32_f32"):
            n = sum(1 for c in CASES if c["conv"]["layout"] == layout
                    and c["combo"] == combo and "resnet" in c["name"]
                    and "config" not in c)
            assert n == 10, (layout, combo, n)
    assert any(c["memcheck"] for c in CASES)


def test_bench_cases():
    assert len(BENCH) == 20
    kinds = {c["bench_kind"] for c in BENCH}
    assert kinds == {"f16_nhwc", "f32_nchw"}
    for c in BENCH:
        assert c["conv"]["n"] == 64
        if c["bench_kind"] == "f16_nhwc":
            assert c["conv"]["layout"] == "nhwc" and c["inputs"][0]["dtype"] == "f16"
            assert c["output"]["dtype"] == "f16"
        else:
            assert c["conv"]["layout"] == "nchw" and c["output"]["dtype"] == "f32"
    # The anchors' stem: 3 -> 64 channels, 224 -> 112, 7x7 stride 2.
    stem = [c for c in BENCH if c["conv"]["c"] == 3]
    assert all(c["conv"]["oh"] == 112 and c["conv"]["kh"] == 7 for c in stem)


@pytest.mark.parametrize("conv", CASES, ids=[c["name"] for c in CASES])
def test_geometry(conv):
    case = conv
    g = case["conv"]
    x, w = case["inputs"]
    cg = g["c"] // g["groups"]
    if g["layout"] == "nhwc":
        assert x["shape"] == [g["n"], g["h"], g["w"], g["c"]]
        assert w["shape"] == [g["f"], g["kh"], g["kw"], cg]
        assert case["output"]["shape"] == [g["n"], g["oh"], g["ow"], g["f"]]
    else:
        assert x["shape"] == [g["n"], g["c"], g["h"], g["w"]]
        assert w["shape"] == [g["f"], cg, g["kh"], g["kw"]]
        assert case["output"]["shape"] == [g["n"], g["f"], g["oh"], g["ow"]]
    t, b, l, r = g["padding"]
    oh = (g["h"] + t + b - g["dilations"][0] * (g["kh"] - 1) - 1) // g["strides"][0] + 1
    ow = (g["w"] + l + r - g["dilations"][1] * (g["kw"] - 1) - 1) // g["strides"][1] + 1
    assert (g["oh"], g["ow"]) == (oh, ow)
    d = case["dims"]
    assert d == {"batch": g["groups"], "m": g["n"] * oh * ow,
                 "n": g["f"] // g["groups"], "k": g["kh"] * g["kw"] * cg}


def test_mlir_text():
    c = BY_NAME["conv_f16_f16_nhwc_all_mixed"]
    text = [x for x in CC.all_cases() if x.name == c["name"]][0].mlir()
    assert ("kgraph.conv2d %x, %w layout = nhwc strides = [2, 1] "
            "padding = [1, 0, 2, 1] dilations = [1, 2] groups = 3 : "
            "tensor<3x11x13x24xf16>, tensor<36x3x2x8xf16> -> "
            "tensor<3x5x14x36xf16>") in text


@pytest.mark.parametrize("conv", SMALL, ids=[c["name"] for c in SMALL])
def test_reference_matches_definition(conv):
    case = conv
    x, w = _inputs(case)
    ref, s = CR.reference(case, x, w)
    assert torch.allclose(ref, CR.naive(case, x, w), rtol=1e-12, atol=1e-12)
    assert (s >= ref.abs() - 1e-12).all()
    assert CR.compare(case, CR.simulate(case, x, w), ref, s) is None


def _case(name):
    return BY_NAME[name]


@pytest.mark.parametrize("name", ["conv_f16_f32_nhwc_all_mixed",
                                  "conv_f16_f32_nchw_all_mixed",
                                  "conv_f16_f16_nhwc_pad_asym"])
def test_rejects_implicit_gemm_bugs(name):
    case = _case(name)
    x, w = _inputs(case)
    ref, s = CR.reference(case, x, w)
    good = CR.simulate(case, x, w)
    assert CR.compare(case, good, ref, s) is None
    g = case["conv"]
    out_dt = CR.TORCH_DTYPES[case["output"]["dtype"]]

    def variant(**changes):
        bad = dict(case, conv=dict(g, **changes))
        return CR.conv64(bad, x, w).to(out_dt)

    # Padding ignored on one side, the wrong dilation, no groups offset.
    p = list(g["padding"])
    p[0], p[1] = p[1], p[0]
    if p != g["padding"]:
        assert CR.compare(case, variant(padding=p), ref, s) is not None
    # One element wrong.
    bad = good.clone()
    bad.view(-1)[7] += 0.5
    assert CR.compare(case, bad, ref, s) is not None
    # Output layout confused (nhwc written as nchw).
    flat = good.contiguous().view(-1)
    if g["layout"] == "nhwc":
        wrong = good.permute(0, 3, 1, 2).contiguous().view(-1).view(good.shape)
    else:
        wrong = good.permute(0, 2, 3, 1).contiguous().view(-1).view(good.shape)
    if not torch.equal(wrong.view(-1), flat):
        assert CR.compare(case, wrong, ref, s) is not None
    # Input channels of the wrong group (group offset dropped).
    if g["groups"] > 1:
        xs = x.clone()
        cg = g["c"] // g["groups"]
        if g["layout"] == "nhwc":
            xs[..., cg:] = x[..., :g["c"] - cg]
        else:
            xs[:, cg:] = x[:, :g["c"] - cg]
        assert CR.compare(case, CR.simulate(case, xs, w), ref, s) is not None


def test_nan_and_unwritten_rejected():
    case = _case("conv_f16_f16_nhwc_odd_hw")
    x, w = _inputs(case)
    ref, s = CR.reference(case, x, w)
    bad = CR.simulate(case, x, w)
    bad.view(-1)[-1] = float("nan")
    assert "NaN" in CR.compare(case, bad, ref, s)
