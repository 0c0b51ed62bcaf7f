"""kgraph.tune replay: the current model's picks looked up in measured
records (the check a model recalibration is judged by)."""

import json
import subprocess
import sys

import pytest

import kgraph
from kgraph.tune import db as tdb
from kgraph.tune.replay import replay

GRAPH = """
func.func @main(%a: tensor<96x80xf16>, %b: tensor<80x72xf16>, %c: tensor<96x80xf16>,
                %d: tensor<160x48xf16>, %e: tensor<48x40xf16>)
    -> (tensor<96x72xf16>, tensor<96x72xf16>, tensor<160x40xf16>) {
  %0 = kgraph.matmul %a, %b : tensor<96x80xf16>, tensor<80x72xf16> -> tensor<96x72xf16>
  %1 = kgraph.matmul %c, %b : tensor<96x80xf16>, tensor<80x72xf16> -> tensor<96x72xf16>
  %2 = kgraph.matmul %d, %e : tensor<160x48xf16>, tensor<48x40xf16> -> tensor<160x40xf16>
  return %0, %1, %2 : tensor<96x72xf16>, tensor<96x72xf16>, tensor<160x40xf16>
}
"""


def _opt():
    try:
        return kgraph.find_tool("kgraph-opt")
    except kgraph.CompileError as e:
        pytest.fail(f"the tuner's tests need kgraph-opt: {e}")


def _record(g, default, cands):
    return dict(signature=g["signature"], structure=g["structure"], shape=g["shape"],
                kind=g["kind"], target="sm_90a", gpu="NVIDIA H200", space=g["space"],
                best=min(cands, key=lambda c: c[1])[0], default=default,
                measured_at="2026-12-02T00:00:00Z", problem=g["problem"],
                candidates=[dict(config=c, median_us=t, status="ok", rank=i + 1)
                            for i, (c, t) in enumerate(cands)])


def test_replay_looks_up_the_current_pick(tmp_path):
    opt = _opt()
    graph = tmp_path / "g.mlir"
    graph.write_text(GRAPH)
    r = subprocess.run([opt, "--fuse", "--tile=sm_90a", "--list-configs=3", str(graph)],
                       capture_output=True, text=True, check=True)
    groups = {g["signature"]: g for g in json.loads(r.stdout)}
    assert len(groups) == 2  # the two 96x80x72 products are one kernel
    (sig1, g1), (sig2, g2) = sorted(groups.items(), key=lambda kv: kv[1]["shape"])
    pick1, other1 = g1["candidates"][0]["config"], g1["candidates"][1]["config"]
    # Kernel 1: measured when the model picked another config (then 20 us);
    # the current pick was measured at 10, the best at 8.
    rec1 = _record(g1, other1, [(other1, 20.0), (pick1, 10.0), ("#kgraph.z<1>", 8.0)])
    # Kernel 2: the current pick was never measured.
    rec2 = _record(g2, "#kgraph.q<0>", [("#kgraph.q<0>", 5.0)])
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
    graph.write_text(GRAPH)
    db = tmp_path / "db.json"
    tdb.Database([]).save(str(db))
    env = dict(__import__("os").environ, KGRAPH_OPT=opt)
    r = subprocess.run([sys.executable, "-m", "kgraph.tune", "replay", str(db), str(graph),
                        "--target", "sm_90a"], capture_output=True, text=True, env=env)
    assert r.returncode == 0, r.stderr
    assert "2 distinct kernel(s) in 1 graph(s); 0 with a record" in r.stdout
    r = subprocess.run([sys.executable, "-m", "kgraph.tune", "replay", str(tmp_path / "no.json"),
                        str(graph), "--target", "sm_90a"], capture_output=True, text=True,
                       env=env)
    assert r.returncode == 1 and "Traceback" not in r.stderr
    assert "no.json" in r.stderr, r.stderr
