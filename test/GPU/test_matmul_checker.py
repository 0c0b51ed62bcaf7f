"""CPU self-tests of the kgraph.matmul cases and of matmul_ref.py: the case
list covers what it must and writes the fixed op syntax, the generator marks
"no code generation" failures as unsupported (and nothing else), every
case's float64 reference is well formed and accepts what a correct kernel may
return, and the checks reject the usual GEMM bugs. Needs torch, no GPU.
"""

import json
import re
import stat
import sys

import pytest

torch = pytest.importorskip("torch")

import matmul_ref as MR  # noqa: E402
import gpu_harness as H  # noqa: E402


GEN = H.load_case_generator("build_gpu_cases_mm")
MC = GEN.matmul_cases
CASES = [c.manifest() for c in MC.all_cases()]
BY_NAME = {c["name"]: c for c in CASES}
BENCH = [c.manifest() for c in MC.bench_cases()]


def _inputs(case, seed=1234):
    gen = torch.Generator().manual_seed(MR.case_seed(seed, case["name"]))
    return MR.make_inputs(case, gen)


# --- the case list ------------------------------------------------------------


def test_every_combo_and_shape_is_covered():
    want_shapes = [(128, 128, 64), (1, 1, 1), (7, 13, 5), (33, 65, 17),
                   (100, 200, 300), (127, 129, 255), (3136, 64, 576),
                   (256, 1000, 2048)]
    for combo in ("f16_f32", "f16_f16", "bf16_f32", "bf16_bf16", "f32_f32",
                  "f32_tf32", "i8_i32"):
        have = {(c["dims"]["m"], c["dims"]["n"], c["dims"]["k"])
                for c in CASES if c["combo"] == combo and c["dims"]["batch"] is None
                and not c["attrs"]["transpose_a"] and not c["attrs"]["transpose_b"]}
        assert set(want_shapes) <= have, combo
        batched = {(c["dims"]["batch"], c["dims"]["m"], c["dims"]["n"], c["dims"]["k"])
                   for c in CASES if c["combo"] == combo and c["dims"]["batch"]}
        assert {(3, 65, 33, 17), (8, 128, 128, 128)} <= batched, combo
    ks = {c["dims"]["k"] for c in CASES}
    assert {17, 255} <= ks and any(k % 8 for k in ks)
    assert any(c["dims"]["m"] % 2 and c["dims"]["n"] % 2 for c in CASES)


def test_f16_transposes_all_four_layouts_on_several_shapes():
    layouts = {}
    for c in CASES:
        if c["combo"] == "f16_f32" and c["dims"]["batch"] is None:
            key = (c["dims"]["m"], c["dims"]["n"], c["dims"]["k"])
            layouts.setdefault(key, set()).add(
                (c["attrs"]["transpose_a"], c["attrs"]["transpose_b"]))
    full = [k for k, v in layouts.items() if len(v) == 4]
    assert len(full) >= 2, layouts


def test_stored_shapes_follow_the_transposes():
    c = BY_NAME["matmul_f16_f32_33x65x17_tatb"]
    assert c["inputs"][0]["shape"] == [17, 33]   # A stored [K, M]
    assert c["inputs"][1]["shape"] == [65, 17]   # B stored [N, K]
    assert c["output"]["shape"] == [33, 65]
    c = BY_NAME["matmul_batched_f16_f32_3x65x33x17_tatb"]
    assert c["inputs"][0]["shape"] == [3, 17, 65]
    assert c["inputs"][1]["shape"] == [3, 33, 17]
    assert c["output"]["shape"] == [3, 65, 33]


def test_mlir_uses_the_fixed_syntax():
    objs = {c.name: c for c in MC.all_cases()}
    assert objs["matmul_f16_f32_7x13x5"].body() == (
        "%r = kgraph.matmul %a, %b : tensor<7x5xf16>, tensor<5x13xf16> -> "
        "tensor<7x13xf32>")
    assert objs["matmul_f32_tf32_33x65x17_tatb"].body() == (
        "%r = kgraph.matmul %a, %b precision = tf32 {transpose_a, transpose_b} : "
        "tensor<17x33xf32>, tensor<65x17xf32> -> tensor<33x65xf32>")
    assert objs["matmul_f32_f32_ieee_33x65x17"].body().startswith(
        "%r = kgraph.matmul %a, %b precision = ieee : ")
    assert "{transpose_b}" in objs["matmul_i8_i32_33x65x17_tb"].body()
    text = objs["matmul_batched_i8_i32_3x65x33x17"].mlir()
    assert "func.func @main(%a: tensor<3x65x17xi8>, %b: tensor<3x17x33xi8>) -> " \
           "tensor<3x65x33xi32>" in text
    assert "return %r : tensor<3x65x33xi32>" in text
    line = re.compile(r"^%r = kgraph\.matmul %a, %b( precision = (ieee|tf32))?"
                      r"( \{transpose_a(, transpose_b)?\}| \{transpose_b\})? : "
                      r"tensor<[0-9x]+(f16|bf16|f32|i8)>, tensor<[0-9x]+\5> -> "
                      r"tensor<[0-9x]+(f16|bf16|f32|i32)>$")
    for c in MC.all_cases() + MC.bench_cases():
        assert line.match(c.body()), c.body()
        if c.precision == "tf32":
            assert c.inputs[0]["dtype"] == "f32"


def test_names_are_unique_and_memcheck_subset_is_small():
    names = [c["name"] for c in CASES + BENCH]
    assert len(names) == len(set(names))
    mc = [c for c in CASES if c["memcheck"]]
    assert 10 <= len(mc) <= 45
    # Stream-K grids need several 128x128 tiles of several k tiles: their
    # memcheck cases are the 200x136x520 ones.
    plain = [c for c in mc if "streamk" not in c["name"]]
    assert max(c["flops"] for c in plain) <= 2 * 3 * 65 * 33 * 17
    assert max(c["flops"] for c in mc) <= 2 * 200 * 136 * 520
    assert {c["combo"] for c in mc} == set(MC.COMBOS)
    assert any(c["attrs"]["transpose_a"] for c in mc)
    assert any(c["dims"]["batch"] for c in mc)


def test_bench_cases():
    kinds = {}
    for c in BENCH:
        kinds.setdefault(c["bench_kind"], []).append(
            (c["dims"]["m"], c["dims"]["n"], c["dims"]["k"]))
        assert c["inputs"][0]["dtype"] == c["output"]["dtype"] or \
            c["combo"] == "i8_i32"
        assert c["attrs"]["precision"] == ("tf32" if c["bench_kind"] == "tf32"
                                           else "ieee")
        assert c["name"] == MC.bench_name(c["bench_kind"], *kinds[c["bench_kind"]][-1])
    assert set(kinds) == {"f32", "tf32", "f16", "bf16"}
    for shapes in kinds.values():
        assert shapes == [(1024,) * 3, (2048,) * 3, (4096,) * 3, (8192,) * 3,
                          (16384, 1024, 4096), (8192, 3072, 768),
                          (256, 1000, 2048), (3136, 64, 576)]


# --- the generator with a stand-in kgraph-opt ----------------------------------

FAKE_OPT = r'''#!{python}
"""Stand-in kgraph-opt: parses nothing, fails i8 matmuls with "no code
generation", transpose_a matmuls with another error, compiles the rest into
an empty PTX and a plan of the function's signature."""
import json, os, re, sys
args = sys.argv[1:]
tile = [a for a in args if a.startswith("--tile=")]
src = [a for a in args if a.endswith(".mlir")][0]
out = args[args.index("-o") + 1]
text = open(src).read()
if "BROKEN" in text:
    print(src + ":1:1: error: custom op 'BROKEN' is unknown"); sys.exit(1)
if not tile:
    sys.exit(0)
if "kgraph.matmul" in text and "xi8>" in text:
    print(src + ":3:8: error: 'kgraph.matmul' op has no code generation for "
          "sm_90a yet: only elementwise kernels are lowered")
    print(src + ":3:8: note: see current operation: ...")
    sys.exit(1)
if "transpose_a" in text:
    print(src + ":3:8: error: 'kgraph.matmul' op failed to tile"); sys.exit(1)
sig = re.search(r"func.func @main\((.*)\) -> (\S+) \{{", text)
def tt(t):
    m = re.match(r"tensor<((?:\d+x)*)(\w+)>", t)
    shape = [int(d) for d in m.group(1).split("x") if d]
    return shape, m.group(2)
size = {{"f32": 4, "f16": 2, "bf16": 2, "i8": 1, "i32": 4, "i1": 1}}
bufs = []
for i, arg in enumerate(re.findall(r"%\w+: (tensor<[^>]*>)", sig.group(1))):
    shape, dt = tt(arg)
    n = 1
    for d in shape: n *= d
    bufs.append({{"id": i, "kind": "input", "index": i, "shape": shape,
                 "dtype": dt, "bytes": n * size[dt]}})
shape, dt = tt(sig.group(2))
n = 1
for d in shape: n *= d
bufs.append({{"id": len(bufs), "kind": "output", "index": 0, "shape": shape,
             "dtype": dt, "bytes": n * size[dt]}})
open(out, "w").write("// fake\n")
plan = {{"format": "kgraph-launch-plan", "version": 1, "target": "sm_90a",
        "ptx": os.path.basename(out), "function": "main", "buffers": bufs,
        "kernels": [{{"name": "main_k0", "grid": [1, 1, 1], "block": [32, 1, 1],
                     "shared_bytes": 0, "args": [{{"kind": "buffer", "buffer": 0}}]}}]}}
json.dump(plan, open(out[:-len(".ptx")] + ".plan.json", "w"))
'''


@pytest.fixture()
def fake_opt(tmp_path):
    path = tmp_path / "fake-kgraph-opt"
    path.write_text(FAKE_OPT.format(python=sys.executable))
    path.chmod(path.stat().st_mode | stat.S_IEXEC)
    return str(path)


def test_build_case_statuses(fake_opt, tmp_path):
    cases = {c.name: c for c in MC.all_cases()}
    out = str(tmp_path)
    assert GEN.build_case(cases["matmul_f16_f32_7x13x5"], fake_opt, out,
                          "sm_90a", False) == ("ok", "")
    status, msg = GEN.build_case(cases["matmul_i8_i32_7x13x5"], fake_opt, out,
                                 "sm_90a", False)
    assert status == "unsupported"
    assert msg == ("'kgraph.matmul' op has no code generation for sm_90a yet: "
                   "only elementwise kernels are lowered")
    status, msg = GEN.build_case(cases["matmul_f16_f32_33x65x17_ta"], fake_opt,
                                 out, "sm_90a", False)
    assert status == "error" and "failed to tile" in msg
    broken = MC.MatmulCase("f16_f32", 7, 13, 5)
    broken.body = lambda: "%r = BROKEN"
    status, msg = GEN.build_case(broken, fake_opt, out, "sm_90a", False)
    assert status == "error" and "does not parse/verify" in msg


def test_generator_writes_unsupported_cases_and_keeps_other_suite(fake_opt, tmp_path):
    out = tmp_path / "cases"
    out.mkdir()
    old = {"format": "kgraph-gpu-cases", "version": 1, "target": "sm_90a",
           "cases": [{"name": "kept_elementwise"}], "bench": [{"name": "kept_bench"}]}
    (out / "manifest.json").write_text(json.dumps(old))
    rc = GEN.main([fake_opt, str(out), "--suite", "matmul", "-j", "2",
                   "--filter", r"_(7x13x5|33x65x17_ta)$"])
    assert rc == 1  # the transpose_a case fails with another error
    m = json.loads((out / "manifest.json").read_text())
    assert m["cases"] == old["cases"] and m["bench"] == old["bench"]
    by = {c["name"]: c for c in m["matmul"]}
    assert by["matmul_f16_f32_7x13x5"]["status"] == "ok"
    assert (out / "matmul_f16_f32_7x13x5.plan.json").is_file()
    u = by["matmul_i8_i32_7x13x5"]
    assert u["status"] == "unsupported" and "no code generation" in u["reason"]
    assert by["matmul_f16_f32_33x65x17_ta"]["status"] == "error"
    assert m["matmul_bench"] == []
    # Without errors the generator succeeds while cases are unsupported.
    rc = GEN.main([fake_opt, str(out), "--suite", "matmul", "--no-bench",
                   "--filter", r"^matmul_i8_i32_7x13x5$"])
    assert rc == 0
    # A different target does not keep the old sections.
    rc = GEN.main([fake_opt, str(out), "--suite", "matmul", "--target", "sm_80",
                   "--filter", r"^matmul_f16_f32_7x13x5$"])
    m = json.loads((out / "manifest.json").read_text())
    assert rc == 0 and m["cases"] == [] and m["target"] == "sm_80"


def test_list_and_suite_selection(capsys):
    assert GEN.main(["/nonexistent", "/nonexistent", "--suite", "matmul",
                     "--list"]) == 0
    names = capsys.readouterr().out.split()
    assert len(names) == len(CASES) + len(BENCH)
    assert all(n.startswith(("matmul_", "bench_matmul_")) for n in names)
    assert GEN.main(["/nonexistent", "/nonexistent", "--list", "--no-bench"]) == 0
    names = capsys.readouterr().out.split()
    assert "matmul_f16_f32_7x13x5" in names and "add_f32_1_1" in names
    assert not any(n.startswith("bench_") for n in names)


# --- references and checks ------------------------------------------------------


@pytest.mark.parametrize("mcase", CASES, ids=[c["name"] for c in CASES])
def test_reference_accepts_a_correct_kernel(mcase):
    case = mcase
    a, b = _inputs(case)
    for spec, x in zip(case["inputs"], (a, b)):
        assert list(x.shape) == spec["shape"]
        assert x.dtype == MR.TORCH_DTYPES[spec["dtype"]]
        if spec["dtype"] == "i8":
            assert int(x.min()) >= -8 and int(x.max()) <= 8
        else:
            assert float(x.float().abs().max()) <= 1.0
    ref, s = MR.reference(case, a, b)
    assert list(ref.shape) == case["output"]["shape"] and ref.dtype == torch.float64
    modes = ("truncate", "round") if case["combo"] == "f32_tf32" else ("truncate",)
    for mode in modes:
        out = MR.simulate(case, a, b, tf32=mode)
        assert out.dtype == MR.TORCH_DTYPES[case["output"]["dtype"]]
        assert MR.compare(case, out, ref, s) is None, mode
    # Poisoned outputs never pass.
    for poison in MR.POISON[case["output"]["dtype"]]:
        bad = torch.full(ref.shape, poison, dtype=MR.TORCH_DTYPES[case["output"]["dtype"]])
        if case["output"]["dtype"] == "i32" and torch.equal(bad.double(), ref):
            continue
        assert MR.compare(case, bad, ref, s) is not None


def _case(name):
    return BY_NAME[name]


def test_catches_one_unwritten_element():
    case = _case("matmul_batched_f16_f32_3x65x33x17")
    a, b = _inputs(case)
    ref, s = MR.reference(case, a, b)
    out = MR.simulate(case, a, b)
    out[2, 64, 32] = float("nan")
    assert "1/6435 element(s) are NaN" in MR.compare(case, out, ref, s)
    assert "(2, 64, 32)" in MR.compare(case, out, ref, s)


@pytest.mark.parametrize("name,tail", [("matmul_f16_f32_33x65x17", 1),
                                       ("matmul_f16_f16_127x129x255", 7),
                                       ("matmul_f32_f32_100x200x300", 4),
                                       ("matmul_bf16_bf16_256x1000x2048", 8)])
def test_catches_a_dropped_k_tail(name, tail):
    """A kernel that skips the K remainder (K not a multiple of its tile)."""
    case = _case(name)
    a, b = _inputs(case)
    ref, s = MR.reference(case, a, b)
    k = case["dims"]["k"]
    short = dict(case, dims=dict(case["dims"], k=k - tail),
                 inputs=[dict(case["inputs"][0], shape=[case["dims"]["m"], k - tail]),
                         dict(case["inputs"][1], shape=[k - tail, case["dims"]["n"]])])
    out = MR.simulate(short, a[:, : k - tail], b[: k - tail, :])
    assert MR.compare(case, out, ref, s) is not None


def test_catches_an_ignored_transpose():
    case = _case("matmul_f16_f32_128x128x64_tb")
    a, b = _inputs(case)
    ref, s = MR.reference(case, a, b)
    wrong = dict(case, attrs=dict(case["attrs"], transpose_b=False))
    # B stored [128, 64] read as [K=64, N=128] row-major: the same bytes.
    out = MR.simulate(wrong, a, b.reshape(64, 128))
    assert MR.compare(case, out, ref, s) is not None


def test_catches_batch_mixup():
    case = _case("matmul_batched_f32_f32_8x128x128x128")
    a, b = _inputs(case)
    ref, s = MR.reference(case, a, b)
    out = MR.simulate(case, a, b)
    out[5] = out[4]
    assert "exceed" in MR.compare(case, out, ref, s)


def test_catches_f16_accumulation():
    """f16 -> f16 must accumulate in f32 (issue 4): f16 partial sums fail."""
    case = _case("matmul_f16_f16_127x129x255")
    a, b = _inputs(case)
    ref, s = MR.reference(case, a, b)
    acc = torch.zeros(127, 129, dtype=torch.float16)
    a16, b16 = a.float(), b.float()
    for k in range(0, 255, 16):  # f32 inside one mma k-step, f16 across them
        acc = (acc.float() + a16[:, k:k + 16] @ b16[k:k + 16, :]).half()
    assert MR.compare(case, acc, ref, s) is not None


def test_catches_tf32_where_ieee_is_asked():
    case = _case("matmul_f32_f32_3136x64x576")
    a, b = _inputs(case)
    ref, s = MR.reference(case, a, b)
    tf32_case = dict(case, combo="f32_tf32")
    assert MR.compare(case, MR.simulate(tf32_case, a, b, tf32="round"), ref, s) \
        is not None
    assert MR.compare(tf32_case, MR.simulate(tf32_case, a, b), ref, s) is None


def test_catches_truncating_output_conversion():
    """Results are rounded to nearest, not toward zero."""
    case = _case("matmul_bf16_bf16_127x129x255")
    a, b = _inputs(case)
    ref, s = MR.reference(case, a, b)
    acc = MR.simulate(case, a, b, out_round=False).float().contiguous()
    rz = (acc.view(torch.int32) & ~0xFFFF).view(torch.float32).to(torch.bfloat16)
    assert MR.compare(case, rz, ref, s) is not None


def test_catches_one_slightly_wrong_element():
    case = _case("matmul_f32_f32_256x1000x2048")
    a, b = _inputs(case)
    ref, s = MR.reference(case, a, b)
    out = MR.simulate(case, a, b)
    out[100, 999] += 1e-3 * s[100, 999].item()
    msg = MR.compare(case, out, ref, s)
    assert "1/256000 element(s) exceed the GEMM bound" in msg and "(100, 999)" in msg


def test_i8_is_exact():
    case = _case("matmul_i8_i32_256x1000x2048")
    a, b = _inputs(case)
    ref, s = MR.reference(case, a, b)
    assert s is None and ref.abs().max() > 200  # a real range of results
    out = MR.simulate(case, a, b)
    assert MR.compare(case, out, ref, s) is None
    out[0, 0] += 1
    assert "1/256000 element(s) differ (exact check), first at (0, 0)" in \
        MR.compare(case, out, ref, s)


def test_tolerances_scale_with_k():
    f32 = [MR.tolerance(_case(f"matmul_f32_f32_{s}"))["norm"]
           for s in ("1x1x1", "100x200x300", "256x1000x2048")]
    assert f32[0] < f32[1] < f32[2] and 1e-5 < f32[2] < 1e-4
    assert 1e-3 <= MR.tolerance(_case("matmul_f32_tf32_33x65x17"))["norm"] < 2e-3
    assert MR.tolerance(_case("matmul_f16_f32_256x1000x2048"))["norm"] < 1e-4
    assert 4e-4 < MR.tolerance(_case("matmul_f16_f16_1x1x1"))["norm"] < 1e-3
    assert 3e-3 < MR.tolerance(_case("matmul_bf16_bf16_1x1x1"))["norm"] < 1e-2
    assert MR.tolerance(_case("matmul_i8_i32_1x1x1")) is None
    big, small = (MR.tolerance(_case(f"matmul_f16_f32_{s}"))["elem_s"]
                  for s in ("256x1000x2048", "33x65x17"))
    assert big / small == pytest.approx(2048 / 17, rel=1e-9)


def test_norm_scale_loosens():
    case = _case("matmul_f32_tf32_127x129x255")
    a, b = _inputs(case)
    ref, s = MR.reference(case, a, b)
    out = MR.simulate(case, a, b) * (1 + 3e-3)
    assert MR.compare(case, out, ref, s) is not None
    assert MR.compare(case, out, ref, s, norm_scale=4) is None

