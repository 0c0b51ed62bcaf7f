"""measure --explain on the CPU: a fake Nsight Compute CLI (written per
test) checks its arguments, runs the child command against the fake
libcuda, and prints ncu's ``--csv --page raw`` format with values made
from the launches the child really made (FAKE_CUDA_TRACE): for a launch of
grid g, duration 1 + g us, achieved occupancy 10 g %, L2 hit 100 - 10 g %,
DRAM 5 g %, GMMA pipe 2.5 g % (HMMA n/a), or on a fake pre-Hopper GPU
(FAKE_NCU_MODE=nogmma, which rejects the GMMA metric) HMMA 3 g %."""

import json
import os
import sys
import time

import pytest

from kgraph import tune
from kgraph.tune import db as tdb
from kgraph.tune import explain as tex

from test_tune import _add_plan, _cli, _fake_units, _write_units

FAKE_NCU = r'''#!{python}
import os, subprocess, sys, time
args = sys.argv[1:]
log = os.environ.get("FAKE_NCU_LOG")
if log:
    with open(log, "a") as f:
        f.write(" ".join(args) + "\n")
opts, i = {{}}, 0
while i < len(args) and args[i].startswith("--"):
    if args[i] == "--csv":
        opts["csv"] = True
        i += 1
    else:
        opts[args[i]] = args[i + 1]
        i += 2
app = args[i:]
if (opts.get("--clock-control") != "none" or not opts.get("csv") or
        opts.get("--page") != "raw" or not app):
    print("==ERROR== fake ncu: bad arguments " + " ".join(args), file=sys.stderr)
    sys.exit(2)
mode = os.environ.get("FAKE_NCU_MODE", "ok")
metrics = opts["--metrics"].split(",")
gmma = "sm__pipe_tensor_op_gmma_cycles_active.avg.pct_of_peak_sustained_active"
if mode == "fail":
    print("==PROF== Connected to process 4242")
    print("==ERROR== LibraryNotLoaded: the profiler's injection library was "
          "not loaded", file=sys.stderr)
    sys.exit(1)
if mode == "hang":
    with open(os.environ["FAKE_NCU_PID"], "w") as f:
        f.write(str(os.getpid()))
    time.sleep(600)
if mode == "kill-worker" and os.path.exists(os.environ["FAKE_NCU_ONCE"]):
    os.unlink(os.environ["FAKE_NCU_ONCE"])
    os.kill(os.getppid(), 9)
    sys.exit(1)
if mode == "nogmma" and gmma in metrics:
    print("==ERROR== Failed to find metric " + gmma, file=sys.stderr)
    sys.exit(1)
trace = os.path.join(os.environ["FAKE_NCU_DIR"], "trace.%d" % os.getpid())
env = dict(os.environ, FAKE_CUDA_TRACE=trace)
print("==PROF== Connected to process 4242 (" + app[0] + ")")
rc = subprocess.run(app, env=env).returncode
launches = []
if os.path.exists(trace):
    with open(trace) as f:
        launches = [line.split() for line in f if line.strip()]
    os.unlink(trace)
skip, count = int(opts["--launch-skip"]), int(opts["--launch-count"])
launches = launches[skip:skip + count]
def value(m, g):
    if m == "gpu__time_duration.sum":
        return "{{:,.0f}}".format((1 + g) * 1000)  # nanoseconds, grouped
    if m.startswith("sm__warps_active"):
        return "%.2f" % (10.0 * g)
    if m.startswith("lts__t_sector_hit_rate"):
        return "%.2f" % (100.0 - 10.0 * g)
    if m.startswith("dram__throughput"):
        return "%.2f" % (5.0 * g)
    if m == gmma:
        return "%.2f" % (2.5 * g)
    if "hmma" in m:
        return "%.2f" % (3.0 * g) if mode == "nogmma" else "n/a"
    return "n/a"
for k, (name, gx, gy, gz) in enumerate(launches):
    print('==PROF== Profiling "%s" - %d: 0%%....50%%....100%% - 3 passes' % (name, k))
print("==PROF== Disconnected from process 4242")
cols = ["ID", "Process ID", "Process Name", "Host Name", "Kernel Name",
        "Context", "Stream", "Block Size", "Grid Size", "Device", "CC"] + metrics
q = lambda xs: ",".join('"%s"' % x for x in xs)
print(q(cols))
print(q([""] * 11 + ["nsecond" if m.startswith("gpu__time") else "%"
                     for m in metrics]))
for k, (name, gx, gy, gz) in enumerate(launches):
    g = int(gx) * int(gy) * int(gz)
    print(q([k, 4242, "python3", "127.0.0.1", name + "(float *, int)", 1, 7,
             "(64, 1, 1)", "(%s, %s, %s)" % (gx, gy, gz), 0, "9.0"] +
            [value(m, g) for m in metrics]))
sys.exit(rc)
'''


@pytest.fixture
def fake_ncu(tmp_path, monkeypatch):
    """The fake ncu's path; its argument lines go to FAKE_NCU_LOG."""
    d = tmp_path / "ncu"
    d.mkdir()
    path = d / "ncu"
    path.write_text(FAKE_NCU.format(python=sys.executable))
    path.chmod(0o755)
    monkeypatch.setenv("FAKE_NCU_DIR", str(d))
    monkeypatch.setenv("FAKE_NCU_LOG", str(d / "args.log"))
    monkeypatch.delenv("FAKE_NCU_MODE", raising=False)
    return str(path)


def _signals(db_path):
    """{(signature, candidate config): signals} of a database."""
    out = {}
    for r in tdb.Database.load(db_path).records:
        for c in r["candidates"]:
            if "signals" in c:
                out[(r["signature"][0], c["config"])] = c["signals"]
    return out


def test_parse_raw_csv_reads_ncus_format():
    text = "\n".join([
        "==PROF== Connected to process 77 (/usr/bin/python3)",
        '==PROF== Profiling "gemm_k" - 0: 0%....50%....100% - 9 passes',
        "some output of the application",
        '"ID","Process ID","Process Name","Host Name","Kernel Name","Context",'
        '"Stream","Block Size","Grid Size","Device","CC",'
        '"dram__throughput.avg.pct_of_peak_sustained_elapsed",'
        '"gpu__time_duration.sum","lts__t_sector_hit_rate.pct",'
        '"sm__pipe_tensor_op_gmma_cycles_active.avg.pct_of_peak_sustained_active"',
        '"","","","","","","","","","","","%","msecond","%",""',
        '"0","77","python3","h","gemm_k(CUtensorMap_st, float *)","1","7",'
        '"(384, 1, 1)","(132, 1, 1)","0","9.0","12.50","1.25","87.01","n/a"',
        '"1","77","python3","h","epilogue","1","7","(128, 1, 1)","(1, 1, 1)",'
        '"0","9.0","1,234.5","0.5","","61.00"',
        "==PROF== Disconnected from process 77",
    ])
    rows = tex.parse_raw_csv(text)
    assert [name for name, _ in rows] == ["gemm_k", "epilogue"]
    a, b = rows[0][1], rows[1][1]
    assert a["gpu__time_duration.sum"] == pytest.approx(1250.0)  # ms -> us
    assert a["dram__throughput.avg.pct_of_peak_sustained_elapsed"] == 12.5
    assert a["sm__pipe_tensor_op_gmma_cycles_active.avg.pct_of_peak_sustained_active"] is None
    assert b["dram__throughput.avg.pct_of_peak_sustained_elapsed"] == 1234.5
    assert b["lts__t_sector_hit_rate.pct"] is None
    assert tex.parse_raw_csv("==ERROR== ERR_NVGPUCTRPERM - no permission") == []


def test_aggregate_weights_by_duration():
    m = tex.METRICS
    rows = [("a", {tex.DURATION: 3.0, m["occupancy_pct"]: 40.0,
                   m["tensor_gmma_pct"]: 50.0, m["tensor_hmma_pct"]: None}),
            ("b", {tex.DURATION: 1.0, m["occupancy_pct"]: 80.0,
                   m["tensor_hmma_pct"]: 10.0})]
    s = tex.aggregate(rows)
    assert s["duration_us"] == 4.0
    assert s["occupancy_pct"] == pytest.approx(50.0)  # (40*3 + 80*1) / 4
    assert s["tensor_pct"] == pytest.approx(40.0)  # (50*3 + 10*1) / 4
    assert "l2_hit_pct" not in s and "dram_pct" not in s
    assert [k["name"] for k in s["kernels"]] == ["a", "b"]
    assert s["kernels"][0]["tensor_pct"] == 50.0 and "tensor_hmma_pct" not in s["kernels"][0]


def _units_with_two_kernels(tmp_path, ptx):
    """k000 of _fake_units, and k001 whose default runs two launches (grid
    4, then grid 1: 5 + 2 us) and loses to one launch of grid 2."""
    two = _add_plan(4)
    two["kernels"].append(dict(two["kernels"][0], grid=[1, 1, 1]))
    folder = str(tmp_path / "units")
    _write_units(folder, [
        ("k000", "a" * 16, [("#cfg<4>", _add_plan(4)), ("#cfg<2>", _add_plan(2)),
                            ("#cfg<1b>", _add_plan(1))]),
        ("k001", "b" * 16, [("#cfg<two>", two), ("#cfg<2>", _add_plan(2))]),
        ("k002", "c" * 16, [("#cfg<1>", _add_plan(1)), ("#cfg<3>", _add_plan(3))]),
    ], ptx)
    return folder


def test_explain_records_signals_of_default_and_winner(fake_cuda, fake_ptx,
                                                       fake_ncu, tmp_path):
    folder = _units_with_two_kernels(tmp_path, fake_ptx)
    r = _cli("measure", folder, "--flush-mb", "0.001", "--reps", "4", "--rounds",
             "2", "--no-progress", "--explain", "--ncu", fake_ncu)
    assert r.returncode == 0, r.stderr
    assert "warning" not in r.stdout + r.stderr
    assert "hardware signals (Nsight Compute) recorded for 3 of 3" in r.stdout
    db_path = os.path.join(folder, "tuning.db.json")
    sig = _signals(db_path)
    # k000: the default (grid 4) and the winner (grid 1) only.
    assert set(sig) == {("a", "#cfg<4>"), ("a", "#cfg<1b>"), ("b", "#cfg<two>"),
                        ("b", "#cfg<2>"), ("c", "#cfg<1>")}
    d, w = sig[("a", "#cfg<4>")], sig[("a", "#cfg<1b>")]
    assert (d["occupancy_pct"], d["l2_hit_pct"], d["dram_pct"], d["tensor_pct"],
            d["duration_us"]) == (40.0, 60.0, 20.0, 10.0, 5.0)
    assert (w["occupancy_pct"], w["l2_hit_pct"], w["tensor_gmma_pct"]) == (10.0, 90.0, 2.5)
    assert "tensor_hmma_pct" not in w  # n/a
    # Two kernels: the values weighted by duration, each kernel's kept.
    two = sig[("b", "#cfg<two>")]
    assert two["duration_us"] == 7.0
    assert two["occupancy_pct"] == pytest.approx((40 * 5 + 10 * 2) / 7, abs=0.01)
    assert [(k["name"], k["occupancy_pct"]) for k in two["kernels"]] == \
        [("fake_add_f32", 40.0), ("fake_add_f32", 10.0)]
    # The default kept (k002): its signals alone.
    assert ("c", "#cfg<3>") not in sig
    # ncu ran once per kernel, clocks left alone, the second round profiled.
    with open(os.path.join(os.path.dirname(fake_ncu), "args.log")) as f:
        calls = f.read().splitlines()
    assert len(calls) == 3
    assert all("--clock-control none" in c and "--page raw" in c for c in calls)
    assert "--launch-skip 3 --launch-count 3" in calls[1]  # 2 + 1 launches
    for metric in list(tex.METRICS.values()) + [tex.DURATION]:
        assert metric in calls[0]
    # The records still apply as before; the report says why.
    assert tdb.Database.load(db_path).warnings == []
    r = _cli("report", db_path)
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    at = lines.index(next(x for x in lines if x.startswith("why (Nsight Compute")))
    why = lines[at + 2:at + 5]
    assert "40.0 -> 10.0" in why[0] and "60.0 -> 90.0" in why[0] and "(k000)" in why[0]
    assert "31.4 -> 20.0" in why[1] and "(k001)" in why[1]
    assert "10.0 kept" in why[2] and "(k002)" in why[2]
    res = tune.report(db_path, log=lambda *_: None)
    assert [x["speedup"] for x in res["why"]] == sorted(
        (x["speedup"] for x in res["why"]), reverse=True)


def test_explain_without_ncu_warns_and_measures(fake_cuda, fake_ptx, tmp_path,
                                                 monkeypatch):
    folder = _fake_units(tmp_path, fake_ptx)
    monkeypatch.setenv("PATH", str(tmp_path))
    monkeypatch.setattr(tex, "SEARCH", ())
    out = []
    results, _ = tune.measure(folder, flush_mb=0.001, progress=False, reps=2,
                              rounds=1, explain=True, log=out.append)
    warnings = [x for x in out if x.startswith("warning")]
    assert warnings == ["warning: --explain: Nsight Compute (ncu) not found on "
                        "PATH; measuring without hardware signals"]
    assert results[0]["best"] == "#cfg<2>"
    assert not _signals(os.path.join(folder, "tuning.db.json"))
    assert not any("hardware signals (Nsight" in x for x in out)
    # A --ncu that is not there: the same, through the command line.
    r = _cli("measure", folder, "--flush-mb", "0.001", "--reps", "2", "--rounds",
             "1", "--no-progress", "--ncu", str(tmp_path / "none" / "ncu"))
    assert r.returncode == 0 and "Traceback" not in r.stderr
    assert "warning: --explain: --ncu " in r.stdout and "not an executable file" in r.stdout
    assert "record(s) added" in r.stdout


def test_explain_failing_ncu_warns_once(fake_cuda, fake_ptx, fake_ncu, tmp_path,
                                        monkeypatch):
    monkeypatch.setenv("FAKE_NCU_MODE", "fail")
    folder = _fake_units(tmp_path, fake_ptx)
    out = []
    results, _ = tune.measure(folder, flush_mb=0.001, progress=False, reps=2,
                              rounds=1, explain=True, ncu=fake_ncu, log=out.append)
    warnings = [x for x in out if x.startswith("warning")]
    assert len(warnings) == 1, out
    assert "Nsight Compute failed on k000: LibraryNotLoaded" in warnings[0]
    assert "profiled 0 of 2 kernel launch(es)" in warnings[0]
    assert [r["best"] for r in results] == ["#cfg<2>", "#cfg<1>"]
    db_path = os.path.join(folder, "tuning.db.json")
    assert len(tdb.Database.load(db_path).records) == 2 and not _signals(db_path)
    # After the first failure ncu is not tried again.
    with open(os.path.join(os.path.dirname(fake_ncu), "args.log")) as f:
        assert len(f.read().splitlines()) == 1
    assert "hardware signals (Nsight Compute) recorded for 0 of 2" in out[-1]


def test_explain_hanging_ncu_is_killed(fake_cuda, fake_ptx, fake_ncu, tmp_path,
                                       monkeypatch):
    """A hung ncu is killed after --explain-timeout; the watchdog (whose
    timeout is shorter here) keeps its hands off a worker that waits for
    ncu."""
    monkeypatch.setenv("FAKE_NCU_MODE", "hang")
    pid_file = tmp_path / "ncu.pid"
    monkeypatch.setenv("FAKE_NCU_PID", str(pid_file))
    folder = _fake_units(tmp_path, fake_ptx)
    out = []
    start = time.monotonic()
    results, _ = tune.measure(folder, flush_mb=0.001, progress=False, reps=2,
                              rounds=1, explain=True, ncu=fake_ncu,
                              explain_timeout=8, hang_timeout=5, log=out.append)
    assert time.monotonic() - start < 60
    warnings = [x for x in out if x.startswith("warning")]
    assert len(warnings) == 1 and "ncu did not finish in 8 s and was killed" in warnings[0]
    assert not any("measuring k000 again" in x for x in out), out
    assert [r["best"] for r in results] == ["#cfg<2>", "#cfg<1>"]
    assert all(c["status"] != "hung" for r in results for c in r["candidates"])
    with pytest.raises(ProcessLookupError):
        os.kill(int(pid_file.read_text()), 0)


def test_explain_retries_without_a_metric_ncu_lacks(fake_cuda, fake_ptx, fake_ncu,
                                                    tmp_path, monkeypatch):
    monkeypatch.setenv("FAKE_NCU_MODE", "nogmma")
    folder = _fake_units(tmp_path, fake_ptx)
    out = []
    tune.measure(folder, flush_mb=0.001, progress=False, reps=2, rounds=1,
                 explain=True, ncu=fake_ncu, log=out.append)
    assert not [x for x in out if x.startswith("warning")], out
    d = _signals(os.path.join(folder, "tuning.db.json"))[("a", "#cfg<4>")]
    assert d["tensor_pct"] == d["tensor_hmma_pct"] == 12.0 and "tensor_gmma_pct" not in d
    with open(os.path.join(os.path.dirname(fake_ncu), "args.log")) as f:
        calls = f.read().splitlines()
    gmma = tex.METRICS["tensor_gmma_pct"]
    assert gmma in calls[0] and gmma not in calls[1]


def test_report_without_or_with_malformed_signals(tmp_path):
    rec = dict(signature="a" * 16, structure="b" * 16, shape=[4], kind="gemm",
               target="sm_90a", gpu="G", space=1, best="#b", default="#a",
               speedup=1.5, problem="p",
               candidates=[dict(config="#a", median_us=3.0, signals="odd"),
                           dict(config="#b", median_us=2.0,
                                signals={"occupancy_pct": 50.0})])
    path = str(tmp_path / "db.json")
    tdb.Database([rec, dict(rec, signature="c" * 16, candidates=[
        dict(c, signals=None) for c in rec["candidates"]])]).save(path)
    out = []
    res = tune.report(path, log=out.append)
    assert "why" not in res and not any(x.startswith("why") for x in out)
    assert len(res["rows"]) == 2
    with open(path) as f:
        data = json.load(f)
    data["records"][0]["candidates"][0]["signals"] = {"occupancy_pct": 25.0}
    with open(path, "w") as f:
        json.dump(data, f)
    res = tune.report(path, log=out.append)
    assert res["why"][0]["default"] == {"occupancy_pct": 25.0}
    assert any("25.0 -> 50.0" in x for x in out)


def test_explain_worker_death_measures_again_without_it(fake_cuda, fake_ptx, fake_ncu,
                                                        tmp_path, monkeypatch):
    """A worker that dies while ncu runs (here ncu kills it, once): its unit
    is measured again without --explain, the next one with it."""
    monkeypatch.setenv("FAKE_NCU_MODE", "kill-worker")
    once = tmp_path / "once"
    once.write_text("")
    monkeypatch.setenv("FAKE_NCU_ONCE", str(once))
    folder = _fake_units(tmp_path, fake_ptx)
    out = []
    results, _ = tune.measure(folder, flush_mb=0.001, progress=False, reps=2,
                              rounds=1, explain=True, ncu=fake_ncu, log=out.append)
    assert any(x.startswith("k000: its worker crashed while Nsight Compute ran")
               and "measuring k000 again without --explain" in x for x in out), out
    assert [r["best"] for r in results] == ["#cfg<2>", "#cfg<1>"]
    assert all(c["status"] == "ok" for c in results[0]["candidates"][:2])
    sig = _signals(os.path.join(folder, "tuning.db.json"))
    assert set(sig) == {("b", "#cfg<1>")}
