"""``kgraph.tune report DB``: where the analytic model's pick was slowest
against the best measured candidate, how well its estimates rank the
measured times, why the winner won where ``measure --explain`` recorded the
hardware signals, and a plot of estimate against measurement for
recalibrating it."""

import math
import statistics

from .db import Database, applying, record_key


def _spearman(xs, ys):
    def ranks(v):
        order = sorted(range(len(v)), key=lambda i: v[i])
        r = [0.0] * len(v)
        i = 0
        while i < len(order):
            j = i
            while j + 1 < len(order) and v[order[j + 1]] == v[order[i]]:
                j += 1
            for k in range(i, j + 1):
                r[order[k]] = (i + j) / 2
            i = j + 1
        return r
    if len(xs) < 3:
        return None
    rx, ry = ranks(xs), ranks(ys)
    mx, my = statistics.fmean(rx), statistics.fmean(ry)
    num = sum((a - mx) * (b - my) for a, b in zip(rx, ry))
    den = math.sqrt(sum((a - mx) ** 2 for a in rx) * sum((b - my) ** 2 for b in ry))
    return num / den if den else None


def latest_records(db, gpu=None, target=None):
    """The record of every key that applies (the newest), filtered."""
    by_key = {}
    for r in db.records:
        if (gpu and r["gpu"] != gpu) or (target and r["target"] != target):
            continue
        by_key.setdefault(record_key(r), []).append(r)
    return [applying(recs) for recs in by_key.values()]


def report(db_path, png=None, gpu=None, target=None, log=print):
    """Prints the report of ``db_path`` and writes the plot to ``png`` (when
    matplotlib is present); returns its numbers as a dict."""
    db = Database.load(db_path)
    for w in db.warnings:
        log(f"warning: {w}")
    recs = latest_records(db, gpu, target)
    rows, points, corrs, calib = [], [], [], {}
    for r in recs:
        cands = [c for c in r.get("candidates", []) if c.get("median_us")]
        default = next((c for c in r.get("candidates", [])
                        if c.get("config") == r.get("default")), None)
        best = next((c for c in cands if c["config"] == r["best"]), None)
        fastest = min(cands, key=lambda c: c["median_us"]) if cands else None
        if default and default.get("median_us") and fastest:
            rows.append(dict(problem=r.get("problem", r["signature"]),
                             gpu=r["gpu"], target=r["target"],
                             default_us=default["median_us"],
                             best_us=best["median_us"] if best else None,
                             fastest_us=fastest["median_us"],
                             speedup=r.get("speedup", 1.0),
                             best_rank=best.get("rank") if best else None,
                             kind=r["kind"], timed=len(cands)))
        est = [(c["estimate_us"], c["median_us"], c["config"] == r["best"])
               for c in cands if c.get("estimate_us")]
        for e, m, won in est:
            points.append((r["kind"], e, m, won))
            calib.setdefault(r["kind"], []).append(m / e)
        rho = _spearman([e for e, _, _ in est], [m for _, m, _ in est])
        if rho is not None:
            corrs.append(rho)
    rows.sort(key=lambda x: -x["speedup"])
    why = _why_rows(recs)
    log(f"{len(recs)} kernel record(s) in {db_path}"
        + (f" (gpu {gpu})" if gpu else "") + (f" (target {target})" if target else ""))
    log(f"{'speedup':>7} {'default us':>10} {'best us':>9} {'rank':>4} "
        f"{'timed':>5}  problem")
    for x in rows:
        rank = "-" if x["best_rank"] is None else str(x["best_rank"])
        best = f"{x['best_us']:.2f}" if x["best_us"] else "-"
        log(f"{x['speedup']:7.2f} {x['default_us']:10.2f} {best:>9} {rank:>4} "
            f"{x['timed']:5d}  {x['problem'][:80]}")
    out = dict(rows=rows)
    if rows:
        geo = math.exp(statistics.fmean(math.log(x["speedup"]) for x in rows))
        kept = sum(x["speedup"] == 1.0 for x in rows)
        out.update(geomean_speedup=geo, default_kept=kept)
        log(f"geomean speedup over the model's pick {geo:.3f}; the model's "
            f"pick kept for {kept} of {len(rows)}")
    if corrs:
        out["spearman_median"] = statistics.median(corrs)
        log(f"rank correlation of estimate and measured time per kernel "
            f"(Spearman): median {out['spearman_median']:.2f} over {len(corrs)}")
    if calib:
        out["measured_over_estimate"] = {k: statistics.median(v)
                                         for k, v in calib.items()}
        for k, v in sorted(calib.items()):
            log(f"  {k}: measured / estimated time median "
                f"{statistics.median(v):.2f} (n={len(v)}; the model's scale "
                f"for recalibration)")
    if why:
        out["why"] = why
        _log_why(why, log)
    if png:
        out["png"] = _plot(points, png, log)
    return out


#: The signals the "why" table shows: (heading, signal name).
WHY_COLUMNS = (("occupancy %", "occupancy_pct"), ("L2 hit %", "l2_hit_pct"),
               ("DRAM %", "dram_pct"), ("tensor %", "tensor_pct"))


def _signals(c):
    """A candidate's recorded signals (``measure --explain``) as {name:
    number}; None if it has none (or they are malformed)."""
    sig = c.get("signals") if c else None
    if not isinstance(sig, dict):
        return None
    return {k: v for k, v in sig.items()
            if isinstance(v, (int, float)) and not isinstance(v, bool)}


def _why_rows(recs):
    """The records whose default and winner have signals: problem,
    speedup, and both candidates' signals, largest speedup first."""
    out = []
    for r in recs:
        cands = r.get("candidates", [])
        default = next((c for c in cands if c.get("config") == r.get("default")), None)
        best = next((c for c in cands if c.get("config") == r["best"]), None)
        d, b = _signals(default), _signals(best)
        if d is None or b is None:
            continue
        out.append(dict(problem=r.get("problem", r["signature"]),
                        speedup=r.get("speedup", 1.0), default=d, best=b,
                        kept=r["best"] == r.get("default")))
    out.sort(key=lambda x: -x["speedup"])
    return out


def _log_why(why, log):
    log("why (Nsight Compute, measure --explain): the default's signals -> "
        "the winner's")
    log(f"{'speedup':>7} " + " ".join(f"{h:>13}" for h, _ in WHY_COLUMNS) +
        "  problem")
    for x in why:
        cells = []
        for _, k in WHY_COLUMNS:
            a, b = x["default"].get(k), x["best"].get(k)
            if a is None and b is None:
                cells.append("-")
            elif x["kept"]:
                cells.append(f"{a:.1f} kept" if a is not None else "-")
            else:
                cells.append(f"{_num(a)} -> {_num(b)}")
        log(f"{x['speedup']:7.2f} " + " ".join(f"{c:>13}" for c in cells) +
            f"  {x['problem'][:60]}")


def _num(v):
    return "?" if v is None else f"{v:.1f}"


def _plot(points, png, log):
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        log("matplotlib is not installed: no plot written")
        return None
    fig, ax = plt.subplots(figsize=(6, 5))
    kinds = sorted({p[0] for p in points})
    for k in kinds:
        xs = [p[1] for p in points if p[0] == k]
        ys = [p[2] for p in points if p[0] == k]
        ax.scatter(xs, ys, s=10, label=k, alpha=0.7)
    if points:
        lo = min(min(p[1], p[2]) for p in points)
        hi = max(max(p[1], p[2]) for p in points)
        ax.plot([lo, hi], [lo, hi], "k--", linewidth=0.8, label="measured = estimate")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("model estimate (us)")
    ax.set_ylabel("measured median (us)")
    ax.set_title("kgraph: estimate against measurement, every candidate")
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(png, dpi=120)
    plt.close(fig)
    log(f"plot written to {png}")
    return png
