"""CPU self-tests of bench/bench_matmul.py: the ptxas -v and cuobjdump SASS
parsers, the --ptxas report (with the real ptxas where it exists), case
selection, rotation and the summary. No GPU needed.
"""

import json

import pytest

import gpu_harness as H  # noqa: E402


B = H.load_module("bench_matmul", "bench/bench_matmul.py")
GEN = H.load_case_generator("build_gpu_cases_bm")
BENCH = [c.manifest() for c in GEN.matmul_cases.bench_cases()]

PTXAS_V = """\
ptxas info    : 0 bytes gmem
ptxas info    : Compiling entry function 'main_k0' for 'sm_90a'
ptxas info    : Function properties for main_k0
    0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
ptxas info    : Used 20 registers, used 0 barriers
ptxas info    : Compiling entry function 'main_k1' for 'sm_90a'
ptxas info    : Function properties for main_k1
    24 bytes stack frame, 16 bytes spill stores, 8 bytes spill loads
ptxas info    : Used 255 registers, used 1 barriers, 73728 bytes smem, 400 bytes cmem[0]
ptxas info    : Compile time = 3.503 ms
"""

SASS = """\

Fatbin elf code:
================
arch = sm_90a
code version = [1,8]
host = linux
compile_size = 64bit

\tcode for sm_90a
\t\tFunction : main_k1
\t.headerflags\t@"EF_CUDA_TEXMODE_UNIFIED EF_CUDA_64BIT_ADDRESS EF_CUDA_SM90"
        /*0000*/                   LDC R1, c[0x0][0x28] ;                   /* 0x00000a00ff017b82 */
                                                                            /* 0x000fe20000000800 */
        /*0010*/                   LDGSTS.E.BYPASS.LTC128B.128 [R3], desc[UR4][R4.64] ;
        /*0020*/                   LDSM.16.M88.4 R8, [R2] ;
        /*0030*/              @!P1 HMMA.16816.F32 R4, R8, R12, R4 ;
        /*0040*/               @P0 HMMA.16816.F32 R16, R8, R14, R16 ;
        /*0050*/                   BAR.SYNC.DEFER_BLOCKING 0x0 ;
        /*0060*/                   STL.64 [R1], R4 ;
        /*0070*/                   LDL.64 R4, [R1] ;
        /*0080*/                   LDG.E.128 R4, desc[UR4][R2.64] ;
        /*0090*/                   STG.E.128 desc[UR4][R2.64], R4 ;
        /*00a0*/                   FFMA R4, R5, R6, R4 ;
        /*00b0*/             @!UP0 EXIT ;
        /*00c0*/                   BRA 0xc0;
\t\t..........

\t\tFunction : main_k0
        /*0000*/                   FFMA R4, R5, R6, R4 ;
        /*0010*/                   EXIT ;
"""

TINY_PTX = """\
.version 8.0
.target sm_90a
.address_size 64
.visible .entry main_k0(.param .u64 p)
{
  .reg .b64 %rd<3>;
  .reg .f32 %f<3>;
  ld.param.u64 %rd1, [p];
  cvta.to.global.u64 %rd2, %rd1;
  ld.global.f32 %f1, [%rd2];
  add.f32 %f2, %f1, %f1;
  st.global.f32 [%rd2], %f2;
  ret;
}
"""


def test_parse_ptxas_verbose():
    f = B.parse_ptxas_verbose(PTXAS_V)
    assert f["main_k0"]["registers"] == 20 and f["main_k0"]["spill_stores"] == 0
    assert f["main_k0"]["smem"] == 0
    k1 = f["main_k1"]
    assert (k1["registers"], k1["spill_stores"], k1["spill_loads"], k1["stack"],
            k1["smem"], k1["barriers"]) == (255, 16, 8, 24, 73728, 1)
    assert k1["spill_line"] == "24 bytes stack frame, 16 bytes spill stores, 8 bytes spill loads"
    assert k1["used_line"].startswith("Used 255 registers")


def test_parse_sass_mix():
    mix = B.parse_sass_mix(SASS)
    k1 = mix["main_k1"]
    assert k1["HMMA"] == 2 and k1["LDSM"] == 1 and k1["LDGSTS"] == 1
    assert k1["LDG"] == 1 and k1["STG"] == 1 and k1["LDL"] == 1 and k1["STL"] == 1
    assert k1["FFMA"] == 1 and k1["BAR"] == 1 and k1["IMMA"] == 0
    assert k1["total"] == 13  # the encoding lines are not instructions
    assert mix["main_k0"]["FFMA"] == 1 and mix["main_k0"]["total"] == 2


def _manifest(tmp_path, with_ptx=True):
    ok = dict(BENCH[0], status="ok")
    uns = dict(BENCH[1], status="unsupported",
               reason="'kgraph.matmul' op has no code generation for sm_90a yet")
    if with_ptx:
        (tmp_path / ok["ptx"]).write_text(TINY_PTX)
    m = {"format": "kgraph-gpu-cases", "version": 1, "target": "sm_90a",
         "cases": [], "bench": [], "matmul": [], "matmul_bench": [ok, uns]}
    (tmp_path / "manifest.json").write_text(json.dumps(m))
    return ok, uns


@pytest.mark.skipif(B.find_tool("ptxas") is None, reason="ptxas not found")
def test_ptxas_mode_with_real_ptxas(tmp_path, capsys):
    ok, uns = _manifest(tmp_path)
    (tmp_path / ok["plan"]).write_text(json.dumps({"kernels": [
        {"name": "main_k0", "grid": [2, 3, 1], "block": [128, 1, 1],
         "shared_bytes": 4096, "args": []}]}))
    out = tmp_path / "r.json"
    assert B.main(["--cases", str(tmp_path), "--ptxas", "--json", str(out)]) == 0
    r = json.loads(out.read_text())
    k = r["ptxas"]["kernels"][ok["name"]]["functions"]["main_k0"]
    assert k["registers"] > 0 and k["spill_stores"] == 0 and k["spill_loads"] == 0
    assert k["dyn_smem"] == 4096 and k["grid"] == [2, 3, 1]
    assert [s["case"] for s in r["skipped"]] == [uns["name"]]
    text = capsys.readouterr().out
    assert f"{ok['name']}" in text and "main_k0" in text and "2x3x1" in text
    assert "unsupported: 'kgraph.matmul' op has no code generation" in text


@pytest.mark.skipif(B.find_tool("ptxas") is None, reason="ptxas not found")
def test_ptxas_mode_reports_assembly_errors(tmp_path):
    ok, _ = _manifest(tmp_path)
    (tmp_path / ok["ptx"]).write_text(TINY_PTX.replace("add.f32", "bogus.f32"))
    out = tmp_path / "r.json"
    assert B.main(["--cases", str(tmp_path), "--ptxas", "--json", str(out)]) == 1
    r = json.loads(out.read_text())
    assert "ptxas failed" in r["ptxas"]["kernels"][ok["name"]]["error"]


def test_error_status_fails_the_ptxas_mode(tmp_path):
    ok, _ = _manifest(tmp_path, with_ptx=False)
    m = json.loads((tmp_path / "manifest.json").read_text())
    m["matmul_bench"][0]["status"] = "error"
    m["matmul_bench"][0]["error"] = "kgraph-opt --tile=sm_90a failed: boom"
    (tmp_path / "manifest.json").write_text(json.dumps(m))
    assert B.main(["--cases", str(tmp_path), "--ptxas", "--json",
                   str(tmp_path / "r.json")]) == 1


def test_missing_section_is_an_error(tmp_path):
    (tmp_path / "manifest.json").write_text(json.dumps(
        {"format": "kgraph-gpu-cases", "version": 1, "target": "sm_90a",
         "cases": [], "bench": []}))
    with pytest.raises(SystemExit, match="no matmul_bench section"):
        B.main(["--cases", str(tmp_path), "--ptxas"])


def test_select_and_rotation():
    sel = B.select(BENCH, ["f16", "tf32"], r"^4096x4096x4096$")
    assert sorted(c["bench_kind"] for c in sel) == ["f16", "tf32"]
    assert len(B.select(BENCH, list(B.KINDS), None)) == 32
    by = {(c["bench_kind"], B.shape_str(c)): c for c in BENCH}
    l2 = 60 * 1024 * 1024
    assert B.rotation_count(by[("f32", "8192x8192x8192")], l2) == 1
    assert B.rotation_count(by[("f16", "3136x64x576")], l2) > 16
    small = by[("f16", "256x1000x2048")]
    per_set = (256 * 2048 + 2048 * 1000) * 2 + 256 * 1000 * 2
    assert B.rotation_count(small, l2) * per_set >= 4 * l2


def test_summarize():
    rows = [{"kind": "f16", "shape": "4096x4096x4096", "ratio": 0.5},
            {"kind": "f16", "shape": "2048x2048x2048", "ratio": 0.8},
            {"kind": "f32", "shape": "1024x1024x1024", "ratio": 0.7},
            {"kind": "bf16", "shape": "4096x4096x4096", "error": "wrong"}]
    at, geo = B.summarize(rows)
    assert at == {"f32": None, "tf32": None, "f16": 0.5, "bf16": None}
    assert geo["f16"] == pytest.approx((0.5 * 0.8) ** 0.5)
    assert geo["tf32"] is None


class _FakeProgram:
    """Stands in for a kgraph Program on the CPU: f32 products (optionally
    wrong at one element)."""

    def __init__(self, wrong=False):
        self.wrong = wrong
        self.calls = 0

    def run(self, inputs, outputs):
        import torch
        a, b = inputs
        res = torch.matmul(a.float(), b.float())
        if self.wrong:
            res[0, 0] += 1.0
        outputs[0].copy_(res.to(outputs[0].dtype))
        self.calls += 1


@pytest.mark.parametrize("kind", ["f32", "tf32", "bf16"])
def test_bench_case_on_the_cpu(kind, monkeypatch):
    torch = pytest.importorskip("torch")
    import kgraph
    prog = _FakeProgram()
    monkeypatch.setattr(kgraph, "load", lambda path: prog)
    case = next(c for c in BENCH if c["bench_kind"] == kind
                and B.shape_str(c) == "3136x64x576")
    times = iter([2.0, 1.0])

    def timer(fn):
        for _ in range(3):
            fn()
        return next(times)

    row = B.bench_case(case, "/nonexistent", timer, 1 << 20, dev=torch.device("cpu"))
    assert "error" not in row, row.get("error")
    assert row["rotation"] >= 1 and prog.calls == 1 + 3
    assert row["kgraph_ms"] == 2.0 and row["cublas_ms"] == 1.0
    assert row["ratio"] == pytest.approx(0.5)
    assert row["kgraph_tflops"] == pytest.approx(2 * 3136 * 64 * 576 / 2.0 / 1e9)
    assert row["rel_err"] < 1e-2
    B.print_rows([row], "test")


def test_bench_case_rejects_a_wrong_kernel(monkeypatch):
    torch = pytest.importorskip("torch")
    import kgraph
    monkeypatch.setattr(kgraph, "load", lambda path: _FakeProgram(wrong=True))
    case = next(c for c in BENCH if c["bench_kind"] == "f32"
                and B.shape_str(c) == "3136x64x576")
    row = B.bench_case(case, "/nonexistent", None, 1 << 20, dev=torch.device("cpu"))
    assert row["error"].startswith("wrong result: 1/200704 element(s) exceed")
    assert "kgraph_ms" not in row
    B.print_rows([row], "test")


def test_main_gpu_path_with_stand_ins(tmp_path, monkeypatch, capsys):
    """main()'s GPU path (table, summary, JSON, exit code) with the GPU and
    bench_case replaced."""
    torch = pytest.importorskip("torch")
    ok, uns = _manifest(tmp_path, with_ptx=False)
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    monkeypatch.setattr(torch.cuda, "get_device_name", lambda *a: "Fake GPU")
    monkeypatch.setattr(torch.cuda, "get_device_properties",
                        lambda *a: type("P", (), {"L2_cache_size": 50 << 20})())
    seen = []

    def fake_bench_case(c, base, timer, l2):
        seen.append((c["name"], timer, l2))
        return {"kind": c["bench_kind"], "shape": B.shape_str(c), "case": c["name"],
                "flops": c["flops"], "kgraph_ms": 2.0, "cublas_ms": 1.0,
                "kgraph_tflops": 1.0, "cublas_tflops": 2.0, "ratio": 0.5,
                "rel_err": 1e-7, "cublas_rel_err": 1e-7}

    monkeypatch.setattr(B, "bench_case", fake_bench_case)
    out = tmp_path / "r.json"
    assert B.main(["--cases", str(tmp_path), "--no-ptxas", "--method", "events",
                   "--json", str(out)]) == 0
    assert seen == [(ok["name"], B.time_events, 50 << 20)]
    r = json.loads(out.read_text())
    assert r["device"] == "Fake GPU" and r["method"] == "events"
    assert r["rows"][0]["ratio"] == 0.5 and r["wrong"] == []
    assert r["skipped"][0]["status"] == "unsupported"
    text = capsys.readouterr().out
    assert "kgraph / cuBLAS at 4096^3:" in text and "skipped 1 bench case(s)" in text

    def wrong_bench_case(c, base, timer, l2):
        return {"kind": c["bench_kind"], "shape": B.shape_str(c), "case": c["name"],
                "error": "wrong result: 1/1 element(s) are NaN"}

    monkeypatch.setattr(B, "bench_case", wrong_bench_case)
    assert B.main(["--cases", str(tmp_path), "--no-ptxas", "--method", "events",
                   "--json", str(out)]) == 1
    assert json.loads(out.read_text())["wrong"] == [ok["name"]]
