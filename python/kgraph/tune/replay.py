"""``kgraph.tune replay DB GRAPH... --target SM``: how the current
compiler's model would do on what was measured.

For every kernel of the graphs that has a record in the database (same
problem signature, target and, with ``--gpu``, GPU), it asks the compiler for
its rank-1 configuration now (``kgraph-opt --list-configs=1``, no database)
and looks that configuration up among the record's measured candidates. It
prints, per kernel, the measured time of the model's pick then (the record's
``default``), of its pick now, and of the best measured one, and sums them
weighted by how often the kernel occurs in the graphs. A pick that was never
measured is reported as such and left out of the sums, so a recalibration of
the model is judged on measurements, not on its own estimates.
"""

import math
import statistics

from .db import Database
from .prepare import _list_configs
from .report import latest_records
from ..tools import find_tool


def _measured(record, config):
    for c in record.get("candidates", []):
        if c.get("config") == config and c.get("status") == "ok" and c.get("median_us"):
            return c["median_us"]
    return None


def replay(db_path, graphs, target, gpu=None, opt=None, fuse=True, log=print):
    """Prints the replay table; returns its numbers as a dict."""
    db = Database.load(db_path)
    for w in db.warnings:
        log(f"warning: {w}")
    records = {}
    for r in latest_records(db, gpu, target):
        records.setdefault(r["signature"], r)
    opt = opt or find_tool("kgraph-opt")
    kernels = {}
    for graph in graphs:
        for g in _list_configs(opt, graph, target, 1, fuse):
            if not g.get("candidates"):
                continue
            k = kernels.setdefault(g["signature"], dict(count=0, problem=g.get("problem", ""),
                                                        pick=g["candidates"][0]["config"],
                                                        emitter=g.get("emitter", 0)))
            k["count"] += 1
    rows, unmeasured, unrecorded, stale = [], [], 0, 0
    for sig, k in kernels.items():
        rec = records.get(sig)
        if rec is None:
            unrecorded += 1
            continue
        # Timed with other emitters than this compiler's: not evidence.
        if rec.get("emitter", 0) != k["emitter"]:
            stale += 1
            continue
        cands = [c for c in rec.get("candidates", [])
                 if c.get("status") == "ok" and c.get("median_us")]
        if not cands:
            continue
        best = min(c["median_us"] for c in cands)
        then = _measured(rec, rec.get("default"))
        now = _measured(rec, k["pick"])
        row = dict(problem=rec.get("problem", k["problem"]), count=k["count"],
                   then_us=then, now_us=now, best_us=best,
                   changed=k["pick"] != rec.get("default"))
        (rows if now is not None else unmeasured).append(row)
    log(f"{len(kernels)} distinct kernel(s) in {len(graphs)} graph(s); "
        f"{len(rows) + len(unmeasured)} with a record in {db_path}, "
        f"{unrecorded} without" +
        (f", {stale} with one timed by other emitters (stale, left out)" if stale else ""))
    log(f"{'n':>3} {'then us':>9} {'now us':>9} {'best us':>9} {'now/best':>8}  problem")
    for x in sorted(rows, key=lambda x: -x["now_us"] / x["best_us"]):
        then = f"{x['then_us']:.1f}" if x["then_us"] else "-"
        log(f"{x['count']:3d} {then:>9} {x['now_us']:9.1f} {x['best_us']:9.1f} "
            f"{x['now_us'] / x['best_us']:8.3f}  {'*' if x['changed'] else ' '}"
            f"{x['problem'][:76]}")
    for x in unmeasured:
        log(f"{x['count']:3d} {'':>9} {'unmeasured':>9} {x['best_us']:9.1f} {'-':>8}  "
            f"*{x['problem'][:76]}")
    out = dict(rows=rows, unmeasured=len(unmeasured), unrecorded=unrecorded, stale=stale)
    if rows:
        both = [x for x in rows if x["then_us"]]
        out["geomean_now_over_best"] = math.exp(statistics.fmean(
            math.log(x["now_us"] / x["best_us"]) for x in rows))
        out["sum_now_us"] = sum(x["count"] * x["now_us"] for x in rows)
        out["sum_best_us"] = sum(x["count"] * x["best_us"] for x in rows)
        log(f"the model's pick now, over the best measured: geomean "
            f"{out['geomean_now_over_best']:.3f} over {len(rows)} kernel(s); "
            f"{sum(x['changed'] for x in rows)} pick(s) changed since measured (*)")
        if both:
            out["sum_then_us"] = sum(x["count"] * x["then_us"] for x in both)
            now_b = sum(x["count"] * x["now_us"] for x in both)
            best_b = sum(x["count"] * x["best_us"] for x in both)
            log(f"time summed over the graphs' kernels (count x median): "
                f"then {out['sum_then_us'] / 1e3:.2f} ms, now {now_b / 1e3:.2f} ms, "
                f"best {best_b / 1e3:.2f} ms")
    if unmeasured:
        log(f"{len(unmeasured)} kernel(s) whose pick now was never measured: "
            f"measure them to judge it")
    return out
