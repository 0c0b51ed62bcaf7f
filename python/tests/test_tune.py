"""kgraph.tune on the CPU: prepare (with kgraph-opt), database keying,
merging and corruption, near records, the winner rule, measure and ab
against the fake libcuda (whose clock makes kernel times known: 1 + grid
size microseconds per launch), the budget, report, the command line."""

import json
import math
import os
import subprocess
import sys

import pytest

import kgraph
from kgraph import tune
from kgraph.tune import db as tdb
from kgraph.tune.measure import choose, plan_budget, to_record
from kgraph.tune.replay import replay

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.abspath(os.path.join(HERE, "..", ".."))
INPUTS = os.path.join(REPO, "test", "Pipelines", "Inputs")


def _listing(opt, graph, n, *flags):
    """kgraph-opt --list-configs=N of ``graph`` as JSON."""
    r = subprocess.run([opt, *flags, f"--list-configs={n}", str(graph)],
                       capture_output=True, text=True, check=True)
    return json.loads(r.stdout)


def _opt():
    try:
        return kgraph.find_tool("kgraph-opt")
    except kgraph.CompileError as e:
        pytest.fail(f"the tuner's tests need kgraph-opt: {e}")


# --- the fake work units -----------------------------------------------------

#: out = a + b over 5 floats, in one fake_add_f32 launch of `grid` blocks.
def _add_plan(grid, kernel="fake_add_f32"):
    return {
        "format": "kgraph-launch-plan", "version": 1, "target": "sm_90a",
        "ptx": "fake.ptx", "function": "kernel",
        "buffers": [
            {"id": 0, "kind": "input", "index": 0, "shape": [5], "dtype": "f32", "bytes": 20},
            {"id": 1, "kind": "input", "index": 1, "shape": [5], "dtype": "f32", "bytes": 20},
            {"id": 2, "kind": "output", "index": 0, "shape": [5], "dtype": "f32", "bytes": 20},
        ],
        "kernels": [
            {"name": kernel, "grid": [grid, 1, 1], "block": [64, 1, 1], "shared_bytes": 0,
             "args": [{"kind": "buffer", "buffer": 0}, {"kind": "buffer", "buffer": 1},
                      {"kind": "buffer", "buffer": 2},
                      {"kind": "scalar", "type": "i32", "value": 5}]},
        ],
    }


#: out = -a * 1: the wrong answer, as fast as any.
def _neg_plan():
    p = _add_plan(1)
    p["kernels"] = [{"name": "fake_neg_f32", "grid": [1, 1, 1], "block": [64, 1, 1],
                     "shared_bytes": 0,
                     "args": [{"kind": "buffer", "buffer": 0}, {"kind": "buffer", "buffer": 2},
                              {"kind": "scalar", "type": "i64", "value": 5},
                              {"kind": "scalar", "type": "f32", "value": 1.0}]}]
    return p


def _write_units(folder, units, ptx):
    """A prepared folder by hand: units = [(name, signature, [(config,
    plan dict)])]."""
    os.makedirs(folder, exist_ok=True)
    names = []
    for name, sig, cands in units:
        d = os.path.join(folder, name)
        os.makedirs(d)
        with open(os.path.join(d, "fake.ptx"), "w") as f:
            f.write(ptx)
        entries = []
        for i, (config, plan) in enumerate(cands):
            cname = f"c{i:02d}"
            with open(os.path.join(d, cname + ".plan.json"), "w") as f:
                json.dump(plan, f)
            entries.append(dict(name=cname, config=config, rank=i + 1,
                                estimate_us=float(10 + i), source="model",
                                status="ok", plan=cname + ".plan.json"))
        unit = dict(name=name, signature=sig, structure="s" + sig[1:],
                    shape=[5, 5, 5], kind="elementwise", space=1,
                    problem=f"elementwise add ({name})", target="sm_90a",
                    count=1, groups=["x.mlir:1:1"], default=cands[0][0],
                    candidates=entries, share=1.0 / len(units))
        with open(os.path.join(d, "unit.json"), "w") as f:
            json.dump(unit, f)
        names.append(name)
    with open(os.path.join(folder, "tune.json"), "w") as f:
        json.dump(dict(format=1, graph="x.mlir", target="sm_90a", top=4,
                       fuse=True, kernels=names), f)


def _fake_units(tmp_path, ptx):
    folder = str(tmp_path / "units")
    _write_units(folder, [
        # c00 default 5 us; c01 3 us and right; c02 wrong; c03 fails to
        # load (no such kernel); c04 3 us too (tied with c01, later).
        ("k000", "a" * 16, [("#cfg<4>", _add_plan(4)), ("#cfg<2>", _add_plan(2)),
                            ("#cfg<neg>", _neg_plan()),
                            ("#cfg<missing>", _add_plan(1, kernel="fake_missing")),
                            ("#cfg<2b>", _add_plan(2))]),
        # Nothing beats the default: it stays.
        ("k001", "b" * 16, [("#cfg<1>", _add_plan(1)), ("#cfg<1b>", _add_plan(1)),
                            ("#cfg<3>", _add_plan(3))]),
    ], ptx)
    return folder


def test_measure_picks_checks_and_records(fake_cuda, fake_ptx, tmp_path):
    folder = _fake_units(tmp_path, fake_ptx)
    out = []
    results, database = tune.measure(folder, flush_mb=0.001, progress=False,
                                     reps=6, rounds=3, log=out.append)
    r0, r1 = results
    st = {c["name"]: c["status"] for c in r0["candidates"]}
    assert st == {"c00": "ok", "c01": "ok", "c02": "wrong", "c03": "failed",
                  "c04": "ok"}
    c = {c["name"]: c for c in r0["candidates"]}
    assert c["c00"]["median_us"] == pytest.approx(5.0, abs=0.01)
    assert c["c01"]["median_us"] == pytest.approx(3.0, abs=0.01)
    assert c["c01"]["samples"] == 6
    assert "output 0" in c["c02"]["reason"] and "relative error" in c["c02"]["reason"]
    assert "fake_missing" in c["c03"]["reason"]
    # c01 and c04 tie; the first in the model's order wins.
    assert (r0["best"], r0["tied"], r0["speedup"]) == ("#cfg<2>", 2, pytest.approx(5 / 3, rel=1e-3))
    assert r1["best"] == "#cfg<1>" and r1["tied"] == 2 and r1["speedup"] == 1.0
    # The database: one record per kernel with every candidate.
    db_path = os.path.join(folder, "tuning.db.json")
    saved = tdb.Database.load(db_path)
    assert [r["signature"] for r in saved.records] == ["a" * 16, "b" * 16]
    rec = saved.records[0]
    assert rec["gpu"] == "Fake GPU 0" and rec["best"] == "#cfg<2>"
    assert rec["default"] == "#cfg<4>" and len(rec["candidates"]) == 5
    assert {"wrong", "failed"} <= {x["status"] for x in rec["candidates"]}
    assert tdb.check_record(rec) is None
    text = "\n".join(out)
    assert "k000" in text and "1.67x" in text and "c02 wrong" in text
    # Per-unit results stay beside the units (for scale-out and report).
    assert os.path.isfile(os.path.join(folder, "k000", "result.fake-gpu-0.json"))
    # Measuring again adds a newer record of the same key; the newest applies.
    tune.measure(folder, flush_mb=0.001, progress=False, reps=3, rounds=1,
                 log=lambda *_: None)
    again = tdb.Database.load(db_path)
    assert len(again.records) == 4
    latest = again.latest("a" * 16, "sm_90a")
    assert latest["measured_at"] == max(r["measured_at"] for r in again.records
                                        if r["signature"] == "a" * 16)


HANG_PTX = """
.visible .entry fake_hang(.param .u64 a, .param .u64 b, .param .u64 c, .param .u32 n)
{ ret; }
.visible .entry fake_crash(.param .u64 a, .param .u64 b, .param .u64 c, .param .u32 n)
{ ret; }
"""


def test_measure_survives_hangs_and_crashes(fake_cuda, fake_ptx, tmp_path):
    folder = str(tmp_path / "units")
    _write_units(folder, [
        ("k000", "c" * 16, [("#cfg<4>", _add_plan(4)),
                            ("#cfg<hang>", _add_plan(1, kernel="fake_hang")),
                            ("#cfg<crash>", _add_plan(1, kernel="fake_crash")),
                            ("#cfg<2>", _add_plan(2))]),
        # A default that never finishes: the kernel cannot be measured.
        ("k001", "d" * 16, [("#cfg<hang>", _add_plan(1, kernel="fake_hang")),
                            ("#cfg<1>", _add_plan(1))]),
        ("k002", "e" * 16, [("#cfg<3>", _add_plan(3)), ("#cfg<1>", _add_plan(1))]),
    ], fake_ptx + HANG_PTX)
    out = []
    results, database = tune.measure(folder, flush_mb=0.001, progress=False, reps=2,
                                     rounds=1, hang_timeout=8.0, log=out.append)
    r0, r1, r2 = results
    st = {c["name"]: (c["status"], c.get("reason") or "") for c in r0["candidates"]}
    assert st["c01"][0] == "hung" and "did not finish in 8 s" in st["c01"][1]
    assert st["c02"][0] == "crashed" and "exit code" in st["c02"][1]
    assert r0["best"] == "#cfg<2>", r0["candidates"]
    assert "the default was dropped: did not finish" in r1["error"]
    assert r2["best"] == "#cfg<1>"
    # Written after every kernel; the unmeasurable one has no record.
    saved = tdb.Database.load(os.path.join(folder, "tuning.db.json"))
    assert [r["signature"] for r in saved.records] == ["c" * 16, "e" * 16]
    text = "\n".join(out)
    assert "k000: c01 did not finish in 8 s" in text and "measuring k000 again" in text


def test_measure_time_budget_ends_measuring(fake_cuda, fake_ptx, tmp_path):
    folder = _fake_units(tmp_path, fake_ptx)
    results, _ = tune.measure(folder, budget=("seconds", 1e-3), flush_mb=0.001,
                              progress=False, reps=2, rounds=1, log=lambda *_: None)
    assert all(r["error"] == "not measured: the budget was spent" for r in results)
    assert tdb.Database.load(os.path.join(folder, "tuning.db.json")).records == []


def test_select_candidates_spreads_over_estimates():
    from kgraph.tune.prepare import select_candidates
    est = [10, 10, 10, 10, 12, 12, 15, 20, 20, 30]
    ranked = [dict(estimate_us=e) for e in est]
    # 8 slots: 6 spread over the levels (10, 12, 15, 20, 30 -> 5 of them),
    # then the next by rank.
    assert select_candidates(ranked, 8) == [0, 1, 2, 3, 4, 6, 7, 9]
    assert select_candidates(ranked, 1) == [0]
    assert select_candidates(ranked, 100) == list(range(10))
    assert select_candidates([], 4) == []


def test_measure_spreads_over_gpu_workers(fake_cuda, fake_ptx, tmp_path, monkeypatch):
    monkeypatch.setenv("FAKE_CUDA_DEVICES", "2")
    folder = _fake_units(tmp_path, fake_ptx)
    results, database = tune.measure(folder, gpus=[0, 1], flush_mb=0.001,
                                     progress=False, reps=4, rounds=2,
                                     log=lambda *_: None)
    assert [r["unit"] for r in results] == ["k000", "k001"]
    assert {r["gpu"] for r in results} <= {"Fake GPU 0", "Fake GPU 1"}
    assert results[0]["best"] == "#cfg<2>"
    # One worker process on one GPU takes every unit.
    results, _ = tune.measure(folder, gpus=[1], db=str(tmp_path / "one.json"),
                              flush_mb=0.001, progress=False, reps=4, rounds=2,
                              log=lambda *_: None)
    assert {r["gpu"] for r in results} == {"Fake GPU 1"}


def test_measure_budget_limits_candidates(fake_cuda, fake_ptx, tmp_path):
    folder = _fake_units(tmp_path, fake_ptx)
    results, _ = tune.measure(folder, budget=("trials", 4), flush_mb=0.001,
                              progress=False, reps=2, rounds=1, log=lambda *_: None)
    # Each of the two kernels gets half of 4 trials: the default and one.
    for r in results:
        st = [c["status"] for c in r["candidates"]]
        assert st[:2] != ["skipped", "skipped"]
        assert st.count("skipped") == len(st) - 2, st


def test_budget_parsing_and_split():
    assert tune.parse_budget("10m") == ("seconds", 600)
    assert tune.parse_budget("90") == ("seconds", 90)
    assert tune.parse_budget("1h") == ("seconds", 3600)
    assert tune.parse_budget("200t") == ("trials", 200)
    for bad in ("ten minutes", "0s", "-3", "2.5t"):
        with pytest.raises(ValueError):
            tune.parse_budget(bad)
    units = [dict(name="a", share=0.75), dict(name="b", share=0.25)]
    assert plan_budget(units, ("seconds", 100)) == {"a": (75.0, None), "b": (25.0, None)}
    assert plan_budget(units, ("trials", 40)) == {"a": (None, 30), "b": (None, 10)}
    tiny = [dict(name="a", share=0.999), dict(name="b", share=0.001)]
    assert plan_budget(tiny, ("trials", 10))["b"] == (None, 2)


def _c(median, q1=None, q3=None, name="x"):
    return dict(name=name, config=name, median_us=median,
                q1_us=median if q1 is None else q1, q3_us=median if q3 is None else q3)


def test_choose_noise_and_ties():
    d = _c(10.0, 9.9, 10.1, "d")
    # Within 2% of the default: the default stays.
    assert choose([d, _c(9.85, name="a")])[0]["name"] == "d"
    # Clearly faster: it wins.
    assert choose([d, _c(8.0, name="a")])[0]["name"] == "a"
    # Faster median but overlapping quartiles (noise): the default stays.
    assert choose([d, _c(9.5, 9.0, 10.2, name="a")])[0]["name"] == "d"
    # Near-ties among the fast ones break by order, not by the noise.
    best, tied = choose([d, _c(8.05, name="a"), _c(8.0, name="b")])
    assert (best["name"], tied) == ("a", 2)
    best2, _ = choose([d, _c(8.0, name="a"), _c(8.05, name="b")])
    assert best2["name"] == "a"
    # Nothing timed but the default.
    assert choose([d, dict(name="f", config="f", median_us=None)])[0]["name"] == "d"


def test_compare_and_tolerance():
    import numpy as np
    assert tune.tolerance("f16") > tune.tolerance("f32") > 0 == tune.tolerance("i32")
    w = np.array([1.0, -2.0, 3.0, np.nan])
    assert tune.compare(w.copy(), w, "f32") is None
    assert tune.compare(w * (1 + 1e-3), w, "f16") is None
    assert "relative error" in tune.compare(w + 0.5, w, "f32")
    got = w.copy(); got[1] = np.nan
    assert "NaN position" in tune.compare(got, w, "f32")
    assert "differ" in tune.compare(np.array([1, 2]), np.array([1, 3]), "i32")


# --- the database ----------------------------------------------------------------


def _rec(sig="0123456789abcdef", gpu="NVIDIA H200", best="#kgraph.x<1>",
         at="2026-12-02T00:00:00Z", **kw):
    r = dict(signature=sig, structure="f" * 16, shape=[64, 64], kind="gemm",
             target="sm_90a", gpu=gpu, space=1, best=best, default="#kgraph.x<0>",
             measured_at=at, problem="gemm matmul (64x64xf16)")
    r.update(kw)
    return r


def test_database_corruption_is_named(tmp_path):
    p = tmp_path / "db.json"
    with pytest.raises(tdb.TuningDBError, match="cannot read"):
        tdb.Database.load(str(p))
    p.write_text('{"kgraph_tuning_db": 1, "records": [')
    with pytest.raises(tdb.TuningDBError, match="not JSON: .* line 1"):
        tdb.Database.load(str(p))
    p.write_text('{"format": "kgraph-launch-plan"}')
    with pytest.raises(tdb.TuningDBError, match="not a kgraph tuning database"):
        tdb.Database.load(str(p))
    p.write_text('{"kgraph_tuning_db": 99, "records": []}')
    with pytest.raises(tdb.TuningDBError, match="format 99"):
        tdb.Database.load(str(p))
    p.write_bytes(b"\xff\xfe\x00garbage")
    with pytest.raises(tdb.TuningDBError, match="not JSON"):
        tdb.Database.load(str(p))
    bad = _rec(); del bad["best"]
    p.write_text(json.dumps({"kgraph_tuning_db": 1,
                             "records": [_rec(), bad, 7, _rec(space="one")]}))
    db = tdb.Database.load(str(p))
    assert len(db.records) == 1
    assert db.warnings == [f"{p}: record 1 has no 'best'; skipped",
                           f"{p}: record 2 is not an object; skipped",
                           f"{p}: record 3 has no 'space' version (a non-negative "
                           f"integer); skipped"]
    # Missing is fine where a database is about to be written.
    assert tdb.Database.load(str(tmp_path / "new.json"), missing_ok=True).records == []


def test_database_keys_merge_and_near(tmp_path):
    a, b = str(tmp_path / "a.json"), str(tmp_path / "b.json")
    old = _rec(best="#kgraph.x<1>", at="2026-12-01T00:00:00Z")
    new = _rec(best="#kgraph.x<2>", at="2026-12-02T00:00:00Z")
    other_gpu = _rec(gpu="NVIDIA A100", best="#kgraph.x<3>", at="2026-12-01T12:00:00Z")
    other_target = _rec(target="sm_80", best="#kgraph.x<4>")
    tdb.Database([old, other_gpu]).save(a)
    tdb.Database([old, new, other_target]).save(b)
    merged, added, warnings = tune.merge([a, b], str(tmp_path / "m.json"))
    assert added == 4 and warnings == []  # `old` once
    m = tdb.Database.load(str(tmp_path / "m.json"))
    assert len(m.records) == 4
    # The newest of a key applies; of several GPUs, the first by name.
    assert m.latest(old["signature"], "sm_90a", gpu="NVIDIA H200")["best"] == "#kgraph.x<2>"
    assert m.latest(old["signature"], "sm_90a")["best"] == "#kgraph.x<3>"
    assert m.latest(old["signature"], "sm_80")["best"] == "#kgraph.x<4>"
    assert m.latest("feedfeedfeedfeed", "sm_90a") is None
    # Every GPU's winners, newest first: a new GPU's first candidates.
    assert m.configs_for(old["signature"], "sm_90a") == ["#kgraph.x<2>", "#kgraph.x<3>",
                                                        "#kgraph.x<1>"]
    # Near records: same structure, kind, target, space; nearest shape first.
    near1 = _rec(sig="1" * 16, shape=[128, 64], best="#kgraph.x<5>")
    near2 = _rec(sig="2" * 16, shape=[1024, 1024], best="#kgraph.x<6>")
    other = _rec(sig="3" * 16, shape=[64, 64], structure="e" * 16)
    db = tdb.Database([near1, near2, other])
    unit = dict(signature="9" * 16, structure="f" * 16, shape=[64, 64], kind="gemm",
                target="sm_90a", space=1)
    got = db.near(unit)
    assert [r["best"] for _, r in got] == ["#kgraph.x<5>", "#kgraph.x<6>"]
    assert got[0][0] == pytest.approx(0.6931, abs=1e-3)
    # Records timed with other emitters (no "emitter": version 0) are no
    # near records of a unit of version 1.
    assert db.near(dict(unit, emitter=1)) == []
    db = tdb.Database([dict(near1, emitter=1), near2])
    assert [r["best"] for _, r in db.near(dict(unit, emitter=1))] == ["#kgraph.x<5>"]


def test_to_record_keeps_every_candidate():
    result = dict(unit="k0", signature="a" * 16, structure="b" * 16, shape=[1],
                  kind="elementwise", space=1, target="sm_90a", gpu="G",
                  problem="p", measured_at="t", best="#b", best_name="c01", tied=1,
                  speedup=1.5,
                  candidates=[dict(name="c00", config="#a", rank=1, status="ok",
                                   median_us=3.0, plan="c00.plan.json"),
                              dict(name="c01", config="#b", rank=2, status="ok",
                                   median_us=2.0, plan="c01.plan.json"),
                              dict(name="c02", config="#c", rank=3, status="wrong",
                                   reason="output 0: ...", median_us=None)])
    rec = to_record(result)
    assert tdb.check_record(rec) is None
    assert rec["emitter"] == 0   # the unit's emitter version, 0 where absent
    assert to_record(dict(result, emitter=3))["emitter"] == 3
    assert "emitter" in tdb.check_record(dict(rec, emitter=-1))
    assert rec["default"] == "#a" and rec["best"] == "#b" and rec["speedup"] == 1.5
    assert [c["config"] for c in rec["candidates"]] == ["#a", "#b", "#c"]
    assert "median_us" not in rec["candidates"][2]
    assert to_record(dict(result, best=None) if False else
                     {k: v for k, v in result.items() if k != "best"}) is None


# --- prepare, with the compiler ----------------------------------------------------


TWO_SAME = """
func.func @main(%a: tensor<96x80xf16>, %b: tensor<80x72xf16>, %c: tensor<96x80xf16>,
                %x: tensor<1000xf32>) -> (tensor<96x72xf16>, tensor<96x72xf16>, tensor<1000xf32>) {
  %0 = kgraph.matmul %a, %b : tensor<96x80xf16>, tensor<80x72xf16> -> tensor<96x72xf16>
  %1 = kgraph.matmul %c, %b : tensor<96x80xf16>, tensor<80x72xf16> -> tensor<96x72xf16>
  %2 = kgraph.exp %x : tensor<1000xf32>
  return %0, %1, %2 : tensor<96x72xf16>, tensor<96x72xf16>, tensor<1000xf32>
}
"""


def _configs_of_tiled(opt, args):
    r = subprocess.run([opt] + args, capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    import re
    return re.findall(r"kgraph.config = (#kgraph\.\w+<[^>]*>)", r.stdout), r.stderr


def test_prepare_dedupes_compiles_and_keeps_signatures(tmp_path):
    opt = _opt()
    graph = tmp_path / "g.mlir"
    graph.write_text(TWO_SAME)
    out = []
    summary = tune.prepare(str(graph), "sm_90a", str(tmp_path / "w"), top=3,
                           jobs=2, log=out.append)
    assert summary["kernels"] == ["k000", "k001"]
    _, units = tune.load_units(str(tmp_path / "w"))
    gemm, exp = units
    assert (gemm["kind"], gemm["count"], exp["kind"], exp["count"]) == \
        ("gemm", 2, "elementwise", 1)
    assert gemm["share"] + exp["share"] == pytest.approx(1.0)
    assert len(gemm["candidates"]) == 3
    assert all(c["status"] == "ok" for c in gemm["candidates"]), gemm["candidates"]
    for c in gemm["candidates"]:
        folder = gemm["folder"]
        plan = kgraph.load_plan(os.path.join(folder, c["plan"]))
        assert os.path.dirname(plan.ptx_path) == folder  # self-contained
        configs, _ = _configs_of_tiled(opt, ["--tile=sm_90a", "--emit=tiled",
                                             os.path.join(folder, c["name"] + ".mlir")])
        assert configs == [c["config"]]
    # The unit alone has the signature its group has in the graph.
    r = subprocess.run([opt, "--tile=sm_90a", "--list-configs=1",
                        os.path.join(gemm["folder"], "kernel.mlir")],
                       capture_output=True, text=True, check=True)
    assert json.loads(r.stdout)[0]["signature"] == gemm["signature"]
    text = "\n".join(out)
    assert "2 distinct kernel(s) of 3 group(s)" in text and "k000" in text


def test_prepare_seeds_candidates_from_records(tmp_path):
    opt = _opt()
    graph = tmp_path / "g.mlir"
    graph.write_text(TWO_SAME)
    listing = _listing(opt, graph, 12, "--fuse", "--tile=sm_90a")
    g = listing[0]
    far = g["candidates"][-1]["config"]  # not in the top 2
    other_gpu = _rec(sig=g["signature"], structure=g["structure"], shape=g["shape"],
                     kind="gemm", space=g["space"], emitter=g["emitter"], gpu="NVIDIA A100", best=far)
    near = dict(other_gpu, signature="0" * 16, shape=[d * 2 for d in g["shape"]],
                best=g["candidates"][-2]["config"])
    db_path = str(tmp_path / "seed.json")
    tdb.Database([other_gpu, near]).save(db_path)
    tune.prepare(str(graph), "sm_90a", str(tmp_path / "w"), top=2, db=db_path,
                 log=lambda *_: None)
    _, units = tune.load_units(str(tmp_path / "w"))
    assert units[0]["emitter"] == g["emitter"] >= 1   # gemm: the staged epilogue
    cands = units[0]["candidates"]
    distance = len(g["shape"]) * math.log(2)  # every dimension doubled
    assert [c["source"] for c in cands][:3] == [
        "model", "record", f"near record {'0' * 16} (distance {distance:.2f})"]
    assert cands[1]["config"] == far and cands[1]["status"] == "ok"


def test_prepare_errors_are_clear(tmp_path):
    _opt()
    with pytest.raises(kgraph.CompileError, match="no such file"):
        tune.prepare(str(tmp_path / "none.mlir"), "sm_90a", str(tmp_path / "w"))
    bad = tmp_path / "bad.mlir"
    bad.write_text("func.func @main( {")
    with pytest.raises(kgraph.CompileError, match="list-configs"):
        tune.prepare(str(bad), "sm_90a", str(tmp_path / "w"))
    with pytest.raises(kgraph.CompileError, match="unknown target"):
        tune.prepare(os.path.join(INPUTS, "list-configs.mlir"), "sm_99",
                     str(tmp_path / "w"))
    with pytest.raises(kgraph.CompileError, match="not a prepared tuning folder"):
        tune.load_units(str(tmp_path))


def test_tuning_db_applies_and_reports(tmp_path):
    """A record's config is what --emit=tiled shows; a near record serves a
    shape without one; --tuning-report says who chose."""
    opt = _opt()
    graph = tmp_path / "g.mlir"
    graph.write_text(TWO_SAME)
    listing = _listing(opt, graph, 4, "--fuse", "--tile=sm_90a")
    g = listing[0]
    pick = g["candidates"][2]["config"]
    rec = _rec(sig=g["signature"], structure=g["structure"], shape=g["shape"],
               kind="gemm", space=g["space"], emitter=g["emitter"], best=pick, speedup=1.3)
    db_path = str(tmp_path / "db.json")
    tdb.Database([rec]).save(db_path)
    configs, err = _configs_of_tiled(opt, ["--fuse", "--tile=sm_90a", "--emit=tiled",
                                           f"--tuning-db={db_path}", "--tuning-report",
                                           str(graph)])
    assert configs[0] == configs[1] == pick
    assert "configuration from tuning record 0 of NVIDIA H200" in err
    assert "configuration from the model: no tuning record for elementwise exp" in err
    # Another GPU only: no record applies.
    configs, _ = _configs_of_tiled(opt, ["--fuse", "--tile=sm_90a", "--emit=tiled",
                                         f"--tuning-db={db_path}", "--tuning-gpu=NVIDIA A100",
                                         str(graph)])
    assert configs[0] == g["candidates"][0]["config"]
    # A different shape of the same structure takes the near record.
    other = TWO_SAME.replace("96x", "100x")
    g2 = tmp_path / "g2.mlir"
    g2.write_text(other)
    configs, err = _configs_of_tiled(opt, ["--fuse", "--tile=sm_90a", "--emit=tiled",
                                           f"--tuning-db={db_path}", "--tuning-report",
                                           str(g2)])
    assert configs[0] == pick and "near record 0 of NVIDIA H200 (shape distance" in err


# --- ab, report, the command line ---------------------------------------------------


def _write_plan(folder, name, plan, ptx):
    os.makedirs(folder, exist_ok=True)
    with open(os.path.join(folder, "fake.ptx"), "w") as f:
        f.write(ptx)
    path = os.path.join(folder, name)
    with open(path, "w") as f:
        json.dump(plan, f)
    return path


def test_ab_ratio_and_disagreement(fake_cuda, fake_ptx, tmp_path):
    a = _write_plan(str(tmp_path), "a.plan.json", _add_plan(4), fake_ptx)
    b = _write_plan(str(tmp_path), "b.plan.json", _add_plan(2), fake_ptx)
    out = []
    res = tune.ab(a, b, rounds=4, reps=3, flush_mb=0.001, log=out.append)
    assert res["a_median_us"] == pytest.approx(5.0, abs=0.01)
    assert res["ratio"] == pytest.approx(0.6, rel=1e-3)
    lo, hi = res["ci95"]
    assert lo <= res["ratio"] <= hi < 1
    assert "B is faster" in out[-1] and "outputs agree" in out[-1]
    wrong = _write_plan(str(tmp_path), "w.plan.json", _neg_plan(), fake_ptx)
    with pytest.raises(kgraph.KGraphError, match="outputs disagree: output 0"):
        tune.ab(a, wrong, rounds=2, reps=1, flush_mb=0.001, log=lambda *_: None)
    other = _add_plan(2)
    other["buffers"][2]["shape"] = [4]
    other["buffers"][2]["bytes"] = 16
    o = _write_plan(str(tmp_path), "o.plan.json", other, fake_ptx)
    with pytest.raises(kgraph.KGraphError, match="do not compute the same function"):
        tune.ab(a, o, rounds=2, reps=1, flush_mb=0.001, log=lambda *_: None)


def test_report_table_and_plot(fake_cuda, fake_ptx, tmp_path):
    folder = _fake_units(tmp_path, fake_ptx)
    tune.measure(folder, flush_mb=0.001, progress=False, reps=4, rounds=2,
                 log=lambda *_: None)
    out = []
    png = str(tmp_path / "model.png")
    res = tune.report(os.path.join(folder, "tuning.db.json"), png=png, log=out.append)
    text = "\n".join(out)
    assert "2 kernel record(s)" in text
    assert res["rows"][0]["speedup"] == pytest.approx(5 / 3, rel=1e-3)
    assert res["default_kept"] == 1
    assert res["geomean_speedup"] == pytest.approx((5 / 3) ** 0.5, rel=1e-3)
    assert "elementwise: measured / estimated time median" in text
    with open(png, "rb") as f:
        assert f.read(8) == b"\x89PNG\r\n\x1a\n"


def _cli(*args, env=None):
    e = dict(os.environ)
    e["PYTHONPATH"] = os.path.join(REPO, "python")
    e.update(env or {})
    return subprocess.run([sys.executable, "-m", "kgraph.tune"] + list(args),
                          capture_output=True, text=True, env=e)


def test_cli_verbs_and_errors(fake_cuda, fake_ptx, tmp_path):
    folder = _fake_units(tmp_path, fake_ptx)
    r = _cli("measure", folder, "--flush-mb", "0.001", "--reps", "2", "--rounds", "1",
             "--no-progress")
    assert r.returncode == 0, r.stderr
    assert "1.67x" in r.stdout and "record(s) added" in r.stdout
    db = os.path.join(folder, "tuning.db.json")
    r = _cli("merge", db, db, "-o", str(tmp_path / "m.json"))
    assert r.returncode == 0 and "2 record(s) from 2 file(s)" in r.stdout
    r = _cli("report", db)
    assert r.returncode == 0 and "kernel record(s)" in r.stdout
    r = _cli("measure", str(tmp_path / "nothing"))
    assert r.returncode == 1 and "not a prepared tuning folder" in r.stderr
    assert "Traceback" not in r.stderr
    (tmp_path / "bad.json").write_text("[1, 2")
    r = _cli("merge", str(tmp_path / "bad.json"), "-o", str(tmp_path / "x.json"))
    assert r.returncode == 1 and "not JSON" in r.stderr and "Traceback" not in r.stderr
    r = _cli("run", "g.mlir", "--target", "sm_90a", "--db", "d.json", "--budget", "soon")
    assert r.returncode == 2 and "budget 'soon'" in r.stderr
    r = _cli("measure", folder, "--gpus", "0,0")
    assert r.returncode == 2 and "distinct" in r.stderr


# --- kgraph.compile and the benchmarks' tuned builds ----------------------------------


def test_compile_with_tuning_db(tmp_path, monkeypatch):
    """kgraph.compile(tuning_db=) applies the records, says how many groups
    they configured, and recompiles when the database changes."""
    import torch
    opt = _opt()
    monkeypatch.setenv("KGRAPH_CACHE_DIR", str(tmp_path / "cache"))
    model = torch.nn.Sequential(torch.nn.Linear(64, 96), torch.nn.ReLU()).eval()
    x = [torch.randn(32, 64)]

    def build(db=None):  # one call site: the imported IR's locations match
        return kgraph.compile(model, x, target="sm_90a", tuning_db=db)

    plain = build()
    assert plain.tuning is None
    listing = _listing(opt, plain.import_result.mlir, 4, "--fuse", "--tile=sm_90a")
    recs = [_rec(sig=g["signature"], structure=g["structure"], shape=g["shape"],
                 kind=g["kind"], space=g["space"], emitter=g["emitter"], best=g["candidates"][-1]["config"])
            for g in listing]
    db_path = str(tmp_path / "db.json")
    tdb.Database(recs).save(db_path)
    tuned = build(db_path)
    assert tuned.tuning == {"record": len(listing), "near record": 0, "model": 0,
                            "pinned": 0, "skipped": 0}
    assert tuned.plan_path != plain.plan_path
    # Cached: the same counts without compiling again.
    again = build(db_path)
    assert again.plan_path == tuned.plan_path and again.tuning == tuned.tuning
    tdb.Database([]).save(db_path)
    empty = build(db_path)
    assert empty.plan_path != tuned.plan_path and empty.tuning["record"] == 0
    with pytest.raises(kgraph.CompileError, match="no such file"):
        build(str(tmp_path / "none.json"))


def test_build_tuned_cases(tmp_path):
    """scripts/build-tuned-cases.py compiles a manifest's benchmark cases
    with a database and records who chose each configuration."""
    import shutil
    opt = _opt()
    cases = tmp_path / "cases"
    cases.mkdir()
    src = os.path.join(INPUTS, "list-configs-pinned.mlir")
    graph = cases / "bench_a.mlir"
    graph.write_text(open(src).read().replace(
        " {kgraph.config = #kgraph.elementwise_config<block_size = 128, vector_width = 2, "
        "unroll = 2, grid_size = 3>}", ""))
    shutil.copy(graph, cases / "bench_b.mlir")
    manifest = {"target": "sm_80", "conv_bench": [
        {"name": "bench_a", "status": "ok", "mlir": "bench_a.mlir", "plan": "bench_a.plan.json"},
        {"name": "bench_b", "status": "unsupported", "mlir": "bench_b.mlir",
         "plan": "bench_b.plan.json"}], "matmul_bench": []}
    (cases / "manifest.json").write_text(json.dumps(manifest))
    listing = _listing(opt, graph, 3, "--tile=sm_80")
    g = listing[0]
    db_path = str(tmp_path / "db.json")
    tdb.Database([_rec(sig=g["signature"], structure=g["structure"], shape=g["shape"],
                       kind=g["kind"], space=g["space"], emitter=g["emitter"], target="sm_80",
                       best=g["candidates"][1]["config"])]).save(db_path)
    script = os.path.join(REPO, "scripts", "build-tuned-cases.py")
    r = subprocess.run([sys.executable, script, opt, str(cases), db_path],
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "tuned cases: 1 from record" in r.stdout
    m = json.loads((cases / "manifest.json").read_text())
    a, b = m["conv_bench"]
    assert a["tuned_plan"] == "bench_a.tuned.plan.json" and a["tuned_by"] == "record"
    assert "tuned_plan" not in b
    assert (cases / "bench_a.tuned.ptx").is_file()
    r = subprocess.run([sys.executable, script, opt, str(cases), str(tmp_path / "x.json")],
                       capture_output=True, text=True)
    assert r.returncode == 1 and "no such file" in r.stderr


def test_record_keeps_a_pick_measured_as_fast(tmp_path):
    """A record replaces the model's pick only where it measured better than
    that pick beyond noise: a pick the record timed at most the winner's
    third quartile stays, with a remark saying so."""
    opt = _opt()
    graph = tmp_path / "g.mlir"
    graph.write_text(TWO_SAME)
    g = _listing(opt, graph, 4, "--fuse", "--tile=sm_90a")[0]
    pick, other = g["candidates"][0]["config"], g["candidates"][2]["config"]

    def configs_with(pick_median):
        rec = _rec(sig=g["signature"], structure=g["structure"], shape=g["shape"],
                   kind="gemm", space=g["space"], emitter=g["emitter"], best=other, speedup=1.0,
                   candidates=[dict(config=other, median_us=10.0, q3_us=10.3, status="ok"),
                               dict(config=pick, median_us=pick_median, status="ok")])
        db_path = str(tmp_path / "db.json")
        tdb.Database([rec]).save(db_path)
        return _configs_of_tiled(opt, ["--fuse", "--tile=sm_90a", "--emit=tiled",
                                       f"--tuning-db={db_path}", "--tuning-report",
                                       str(graph)])
    configs, err = configs_with(10.2)
    assert configs[0] == pick, err
    assert "measured it as fast as its winner (10.20 us against 10.00 us)" in err
    configs, err = configs_with(11.0)
    assert configs[0] == other and "configuration from tuning record 0" in err, err


# --- replay: the current model's picks looked up in measured records ---------

REPLAY_GRAPH = """
func.func @main(%a: tensor<96x80xf16>, %b: tensor<80x72xf16>, %c: tensor<96x80xf16>,
                %d: tensor<160x48xf16>, %e: tensor<48x40xf16>)
    -> (tensor<96x72xf16>, tensor<96x72xf16>, tensor<160x40xf16>) {
  %0 = kgraph.matmul %a, %b : tensor<96x80xf16>, tensor<80x72xf16> -> tensor<96x72xf16>
  %1 = kgraph.matmul %c, %b : tensor<96x80xf16>, tensor<80x72xf16> -> tensor<96x72xf16>
  %2 = kgraph.matmul %d, %e : tensor<160x48xf16>, tensor<48x40xf16> -> tensor<160x40xf16>
  return %0, %1, %2 : tensor<96x72xf16>, tensor<96x72xf16>, tensor<160x40xf16>
}
"""


def _replay_record(g, default, cands):
    return dict(signature=g["signature"], structure=g["structure"], shape=g["shape"],
                kind=g["kind"], target="sm_90a", gpu="NVIDIA H200", space=g["space"], emitter=g["emitter"],
                best=min(cands, key=lambda c: c[1])[0], default=default,
                measured_at="2026-12-02T00:00:00Z", problem=g["problem"],
                candidates=[dict(config=c, median_us=t, status="ok", rank=i + 1)
                            for i, (c, t) in enumerate(cands)])


def test_replay_looks_up_the_current_pick(tmp_path):
    opt = _opt()
    graph = tmp_path / "g.mlir"
    graph.write_text(REPLAY_GRAPH)
    r = subprocess.run([opt, "--fuse", "--tile=sm_90a", "--list-configs=3", str(graph)],
                       capture_output=True, text=True, check=True)
    groups = {g["signature"]: g for g in json.loads(r.stdout)}
    assert len(groups) == 2  # the two 96x80x72 products are one kernel
    (sig1, g1), (sig2, g2) = sorted(groups.items(), key=lambda kv: kv[1]["shape"])
    pick1, other1 = g1["candidates"][0]["config"], g1["candidates"][1]["config"]
    # Kernel 1: measured when the model picked another config (then 20 us);
    # the current pick was measured at 10, the best at 8.
    rec1 = _replay_record(g1, other1, [(other1, 20.0), (pick1, 10.0), ("#kgraph.z<1>", 8.0)])
    # Kernel 2: the current pick was never measured.
    rec2 = _replay_record(g2, "#kgraph.q<0>", [("#kgraph.q<0>", 5.0)])
    db = tmp_path / "db.json"
    tdb.Database([rec1, rec2]).save(str(db))
    lines = []
    out = replay(str(db), [str(graph)], "sm_90a", opt=opt, log=lines.append)
    text = "\n".join(lines)
    assert out["unmeasured"] == 1 and out["unrecorded"] == 0
    [row] = out["rows"]
    assert (row["then_us"], row["now_us"], row["best_us"]) == (20.0, 10.0, 8.0)
    assert row["changed"] and row["count"] == (2 if g1["shape"][1] == 80 else 1)
    assert abs(out["geomean_now_over_best"] - 1.25) < 1e-9
    assert "1 kernel(s) whose pick now was never measured" in text
    assert "unmeasured" in text and "1.250" in text, text


def test_replay_command_line(tmp_path):
    opt = _opt()
    graph = tmp_path / "g.mlir"
    graph.write_text(REPLAY_GRAPH)
    db = tmp_path / "db.json"
    tdb.Database([]).save(str(db))
    env = dict(os.environ, KGRAPH_OPT=opt)
    r = subprocess.run([sys.executable, "-m", "kgraph.tune", "replay", str(db), str(graph),
                        "--target", "sm_90a"], capture_output=True, text=True, env=env)
    assert r.returncode == 0, r.stderr
    assert "2 distinct kernel(s) in 1 graph(s); 0 with a record" in r.stdout
    r = subprocess.run([sys.executable, "-m", "kgraph.tune", "replay", str(tmp_path / "no.json"),
                        str(graph), "--target", "sm_90a"], capture_output=True, text=True,
                       env=env)
    assert r.returncode == 1 and "Traceback" not in r.stderr
    assert "no.json" in r.stderr, r.stderr
