"""``kgraph.tune prepare``: the distinct kernels of a graph and their top
candidates, compiled on the CPU into self-contained work units.

A work folder holds ``tune.json`` (what was prepared: graph, target, the
kernels) and one folder per distinct kernel (``k000``...), deduplicated by
problem signature::

    k000/unit.json        key, problem, count in the graph, candidates
    k000/kernel.mlir      the group alone (func @kernel), default config
    k000/c00.mlir|.ptx|.plan.json   candidate 0 = the model's default
    k000/c01...           the next candidates

Everything ``measure`` needs is in the folder (no compiler, no graph), so
folders can be copied to other machines and measured there.
"""

import concurrent.futures
import datetime
import json
import os
import shutil
import subprocess

from ..errors import CompileError
from ..tools import find_tool
from .db import Database

UNITS_FORMAT = 1


def _list_configs(opt, graph, target, top, fuse):
    cmd = [opt, f"--tile={target}", f"--list-configs={top}", graph]
    if fuse:
        cmd.insert(1, "--fuse")
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode:
        raise CompileError(f"{' '.join(cmd)} failed (exit {r.returncode}):\n"
                           f"{r.stderr.strip()}")
    try:
        return json.loads(r.stdout)
    except json.JSONDecodeError as e:
        raise CompileError(f"{' '.join(cmd)}: output is not JSON: {e}") from None


def select_candidates(ranked, top):
    """``top`` of the model's ranked candidates, spread over the model's
    distinct estimates: candidates of one estimate are configurations the
    model cannot tell apart (tile_k, warp grid, stages of one block tile),
    so measuring only the first ``top`` by rank would time variations of
    one shape. The first of each estimate level, best level first, fills
    three quarters of the slots; the rest follow by rank. Returns indices
    into ``ranked`` (0, the default, first), in rank order."""
    if not ranked:
        return []
    top = min(top, len(ranked))
    picked, levels = [0], {ranked[0]["estimate_us"]}
    spread = top - top // 4
    for i, c in enumerate(ranked):
        if len(picked) >= spread:
            break
        if c["estimate_us"] not in levels:
            levels.add(c["estimate_us"])
            picked.append(i)
    for i in range(len(ranked)):
        if len(picked) >= top:
            break
        if i not in picked:
            picked.append(i)
    return sorted(picked)


def _pinned_text(kernel_text, default, config):
    """The kernel module with ``config`` in place of the default one."""
    if kernel_text.count(default) != 1:
        raise CompileError("the kernel module does not name its default "
                           "configuration exactly once; cannot pin another")
    return kernel_text.replace(default, config)


def find_ptxas():
    """ptxas on PATH, under $CUDA_HOME or /usr/local/cuda; None if absent."""
    found = shutil.which("ptxas")
    if found:
        return found
    for root in (os.environ.get("CUDA_HOME"), os.environ.get("CUDA_PATH"),
                 "/usr/local/cuda"):
        if root:
            p = os.path.join(root, "bin", "ptxas")
            if os.path.isfile(p) and os.access(p, os.X_OK):
                return p
    return None


def _compile(opt, ptxas, folder, name, target, timeout):
    """(why it failed or None, whether a cubin was written): kgraph-opt,
    then ptxas for the target when there is one (so the GPU machine does not
    spend its time compiling PTX; a cubin ptxas cannot make is no failure,
    measure then loads the PTX)."""
    mlir = os.path.join(folder, name + ".mlir")
    ptx = os.path.join(folder, name + ".ptx")
    cmd = [opt, f"--tile={target}", mlir, "-o", ptx]
    try:
        r = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return f"compile timed out after {timeout} s", False
    if r.returncode:
        lines = [l for l in r.stderr.strip().splitlines() if l.strip()]
        return "compile failed: " + (lines[0] if lines else f"exit {r.returncode}"), False
    if not ptxas:
        return None, False
    try:
        r = subprocess.run([ptxas, f"-arch={target}", ptx, "-o",
                            os.path.join(folder, name + ".cubin")],
                           capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return None, False
    return None, r.returncode == 0


def prepare(graphs, target, out, top=8, fuse=True, db=None, jobs=None,
            opt=None, timeout=600, cubin=True, log=print):
    """Prepares the work units of ``graphs`` (a kgraph MLIR file or a list
    of them: kernels shared by several are measured once) for ``target`` in
    folder ``out``: for each distinct kernel ``top`` of the model's ranked
    candidates (``select_candidates``), plus (with ``db``, a Database or a path) the
    configurations recorded for that kernel on other GPUs and the winners of
    its nearest recorded shapes, first after the default. Compiles them in
    parallel (``jobs`` processes, default every core), and with ``cubin``
    assembles each with ptxas where it is found. Returns the ``tune.json``
    dict."""
    if top < 1:
        raise ValueError(f"--top must be at least 1, got {top}")
    opt = opt or find_tool("kgraph-opt")
    graphs = [graphs] if isinstance(graphs, str) else list(graphs)
    if not graphs:
        raise CompileError("prepare needs at least one graph")
    for graph in graphs:
        if not os.path.isfile(graph):
            raise CompileError(f"{graph}: no such file")
    if isinstance(db, str):
        db = Database.load(db)
        for w in db.warnings:
            log(f"warning: {w}")
    groups = []
    for graph in graphs:
        for g in _list_configs(opt, graph, target, max(8 * top, 64), fuse):
            g["graph"] = os.path.basename(graph)
            groups.append(g)
    if os.path.exists(os.path.join(out, "tune.json")):
        shutil.rmtree(out)
    os.makedirs(out, exist_ok=True)

    # Distinct kernels, in graph order; each group's share of the graph is
    # its count times the model's estimate of its default.
    units, by_sig = [], {}
    for g in groups:
        sig = g["signature"]
        if sig in by_sig:
            u = by_sig[sig]
            u["count"] += 1
            u["groups"].append(g["group"])
            if g["graph"] not in u["graphs"]:
                u["graphs"].append(g["graph"])
            continue
        cands = g["candidates"]
        default = cands[0]["config"]
        entries = [dict(config=cands[i]["config"], rank=i + 1,
                        estimate_us=cands[i]["estimate_us"], source="model")
                   for i in select_candidates(cands, top)]
        if db is not None:
            extra = [(c, "record") for c in db.configs_for(sig, target)]
            unit_key = dict(signature=sig, structure=g["structure"],
                            shape=g["shape"], kind=g["kind"], target=target,
                            space=g["space"], emitter=g.get("emitter", 0))
            extra += [(r["best"], f"near record {r['signature']} "
                                  f"(distance {d:.2f})")
                      for d, r in db.near(unit_key)]
            known = {e["config"] for e in entries}
            pos = 1
            for config, source in extra:
                if config in known:
                    continue
                known.add(config)
                entries.insert(pos, dict(config=config, rank=None,
                                         estimate_us=None, source=source))
                pos += 1
        u = dict(name=f"k{len(units):03d}", signature=sig,
                 structure=g["structure"], shape=g["shape"], kind=g["kind"],
                 space=g["space"], emitter=g.get("emitter", 0),
                 problem=g["problem"], target=target,
                 count=1, groups=[g["group"]], graphs=[g["graph"]],
                 default=default, candidates=entries, kernel=g["kernel"])
        by_sig[sig] = u
        units.append(u)

    jobs_list = []
    for u in units:
        folder = os.path.join(out, u["name"])
        os.makedirs(folder, exist_ok=True)
        with open(os.path.join(folder, "kernel.mlir"), "w") as f:
            f.write(u["kernel"])
        for i, c in enumerate(u["candidates"]):
            c["name"] = f"c{i:02d}"
            with open(os.path.join(folder, c["name"] + ".mlir"), "w") as f:
                f.write(_pinned_text(u["kernel"], u["default"], c["config"]))
            jobs_list.append((u, c, folder))

    jobs = jobs or os.cpu_count() or 1
    ptxas = find_ptxas() if cubin else None
    with concurrent.futures.ThreadPoolExecutor(max_workers=jobs) as pool:
        futures = {pool.submit(_compile, opt, ptxas, folder, c["name"], target,
                               timeout): (u, c)
                   for u, c, folder in jobs_list}
        for fut in concurrent.futures.as_completed(futures):
            u, c = futures[fut]
            why, has_cubin = fut.result()
            if why:
                c.update(status="failed", reason=why)
            else:
                c.update(status="ok", plan=c["name"] + ".plan.json")
                if has_cubin:
                    c["cubin"] = c["name"] + ".cubin"

    total_est = sum(u["count"] * (u["candidates"][0]["estimate_us"] or 0)
                    for u in units) or 1.0
    for u in units:
        u["share"] = u["count"] * (u["candidates"][0]["estimate_us"] or 0) / total_est
        del u["kernel"]
        with open(os.path.join(out, u["name"], "unit.json"), "w") as f:
            json.dump(u, f, indent=1)
    summary = dict(format=UNITS_FORMAT, graphs=[os.path.abspath(g) for g in graphs],
                   target=target, top=top, fuse=fuse,
                   prepared_at=_now(), kernels=[u["name"] for u in units])
    with open(os.path.join(out, "tune.json"), "w") as f:
        json.dump(summary, f, indent=1)

    what = graphs[0] if len(graphs) == 1 else f"{len(graphs)} graphs"
    log(f"prepared {len(units)} distinct kernel(s) of {len(groups)} group(s) "
        f"of {what} for {target} in {out}:")
    log(f"  {'unit':5} {'kind':11} {'count':>5} {'share':>6} {'cands':>5} "
        f"{'failed':>6}  problem")
    for u in units:
        failed = sum(c["status"] != "ok" for c in u["candidates"])
        log(f"  {u['name']:5} {u['kind']:11} {u['count']:5d} "
            f"{100 * u['share']:5.1f}% {len(u['candidates']):5d} {failed:6d}  "
            f"{u['problem']}")
        for c in u["candidates"]:
            if c["status"] != "ok" and c["name"] == "c00":
                log(f"    the default does not compile: {c['reason']}")
    return summary


def _now():
    return datetime.datetime.now(datetime.timezone.utc).strftime(
        "%Y-%m-%dT%H:%M:%SZ")


def load_units(folder):
    """(tune.json, [unit dicts]) of a prepared folder; a clear error if it
    is not one."""
    path = os.path.join(folder, "tune.json")
    try:
        with open(path) as f:
            summary = json.load(f)
    except OSError as e:
        raise CompileError(f"{folder}: not a prepared tuning folder (cannot "
                           f"read tune.json: {e.strerror}); run "
                           f"'python3 -m kgraph.tune prepare' first") from None
    except json.JSONDecodeError as e:
        raise CompileError(f"{path}: not JSON: {e}") from None
    if not isinstance(summary, dict) or summary.get("format") != UNITS_FORMAT:
        raise CompileError(f"{path}: not a tuning folder of format "
                           f"{UNITS_FORMAT}")
    units = []
    for name in summary.get("kernels", []):
        upath = os.path.join(folder, name, "unit.json")
        try:
            with open(upath) as f:
                u = json.load(f)
        except (OSError, json.JSONDecodeError) as e:
            raise CompileError(f"{upath}: cannot read the work unit: {e}") from None
        u["folder"] = os.path.join(folder, name)
        units.append(u)
    return summary, units
