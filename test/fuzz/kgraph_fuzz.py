#!/usr/bin/env python3
"""Random-graph fuzzer of the whole kgraph pipeline.

For each graph (test/fuzz/graphgen.py, seeded by "<seed>-<index>") and a
target drawn from the compiler's own target list:

  1. kgraph-opt g.mlir                     the graph must verify (else the
                                           generator is wrong);
  2. kgraph-opt --tile=<t> [--fuse] --emit=tiled, both ways: cheap, and when
     both tiled modules are identical the rest is done once;
  3. kgraph-opt --tile=<t> [--fuse] g.mlir -o g.ptx, then
     ptxas -arch=<t> g.ptx (each distinct PTX once per worker).

A finding is: a crash, assertion or stack dump; a hang (timeout); PTX that
ptxas rejects; a graph that compiles without --fuse but not with it; or a
verifier-valid graph that is neither compiled nor rejected with a diagnostic
that names a kgraph op and says what is not supported. A kgraph.concat is
always compiled (written in place, or an elementwise kernel), so its
rejection is a finding; for the other data-movement ops (reshape, transpose,
slice, broadcast_to) "'kgraph.<op>' op has no code generation ..." counts as
a proper rejection. Each finding prints its seed and graph index and is saved with
its stderr under <out>/findings/; `--reproduce SEED-INDEX` runs one graph
again and `--minimize` shrinks a finding's graph while it fails the same way.

ptxas 13 dropped sm_70: a target ptxas does not know is assembled for the
next target of the list it does know (sm_70 PTX for sm_75).

usage:
  kgraph_fuzz.py --opt build/bin/kgraph-opt [--seed S] [--count N | --time SEC]
                 [--workers 2] [--out DIR]
Ends with the line "fuzz: N graphs, F findings" (exit 1 if F > 0).
"""

import argparse
import collections
import hashlib
import json
import multiprocessing
import os
import random
import re
import resource
import shutil
import signal
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import graphgen  # noqa: E402

CRASH_MARKERS = ("Stack dump", "PLEASE submit a bug report", "Assertion",
                 "LLVM ERROR", "UNREACHABLE", "Segmentation fault")
DIAG = re.compile(r"error: '(kgraph\.\w+|arith\.\w+)' op (.*)")
#: Rejections that name the op and say what is not supported.
UNSUPPORTED = [
    # Data-movement ops with no code generation in some group (issue 9 names
    # them); never kgraph.concat, which always compiles.
    (re.compile(r"'kgraph\.(reshape|transpose|slice|broadcast_to)' op "
                r"has no code generation"), "data_movement"),
]


def ptxas_path():
    for p in (shutil.which("ptxas"), "/usr/local/cuda/bin/ptxas"):
        if p and os.path.exists(p):
            return p
    return None


def run(cmd, timeout):
    """(returncode or 'timeout', stderr). ``timeout`` bounds the CPU time
    (RLIMIT_CPU, so a busy shared machine does not turn a slow compile into
    a hang); the wall clock gets ten times as long."""
    def limit():
        resource.setrlimit(resource.RLIMIT_CPU, (int(timeout), int(timeout) + 5))
    try:
        p = subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                           timeout=10 * timeout, text=True, errors="replace",
                           preexec_fn=limit)
        if p.returncode in (-signal.SIGXCPU, -signal.SIGKILL):
            return "timeout", p.stderr + f"\n[more than {timeout:.0f} s of CPU: {' '.join(cmd[:3])} ...]"
        return p.returncode, p.stderr
    except subprocess.TimeoutExpired as e:
        err = e.stderr.decode(errors="replace") if isinstance(e.stderr, bytes) else (e.stderr or "")
        return "timeout", err + f"\n[no result after {timeout:.0f} s: {' '.join(cmd[:3])} ...]"


def list_targets(opt):
    """The SM targets, from kgraph-opt's own diagnostic for an unknown one."""
    p = subprocess.run([opt, "--tile=sm_list_targets", os.devnull, "-o", os.devnull],
                       capture_output=True, text=True)
    m = re.search(r"known targets: (.*)", p.stderr)
    if not m:
        sys.exit(f"cannot read the target list from kgraph-opt: {p.stderr.strip()}")
    return [t.strip() for t in m.group(1).split(",")]


def ptxas_arches(opt, ptxas, targets, tmp):
    """target -> the -arch ptxas assembles its PTX for."""
    probe = os.path.join(tmp, "probe.mlir")
    with open(probe, "w") as f:
        f.write("func.func @main(%x: tensor<4xf32>) -> tensor<4xf32> {\n"
                "  %0 = kgraph.neg %x : tensor<4xf32>\n  return %0 : tensor<4xf32>\n}\n")
    known = {}
    for t in targets:
        ptx = os.path.join(tmp, f"probe_{t}.ptx")
        subprocess.run([opt, f"--tile={t}", probe, "-o", ptx], check=True)
        p = subprocess.run([ptxas, f"-arch={t}", ptx, "-o", os.devnull],
                           capture_output=True, text=True)
        known[t] = p.returncode == 0
    arch = {}
    for i, t in enumerate(targets):
        arch[t] = next((u for u in targets[i:] if known[u]), None)
    return arch


class Config:
    def __init__(self, opt, ptxas, targets, arch, timeout, out):
        self.opt, self.ptxas, self.targets, self.arch = opt, ptxas, targets, arch
        self.timeout, self.out = timeout, out


_CFG = None
_PTX_SEEN = set()


def _init(cfg):
    global _CFG
    _CFG = cfg


def classify_error(rc, err, graph):
    """None when a failed compile is a proper rejection, else the finding's
    kind. A crash is a finding whatever the graph."""
    if rc == "timeout":
        return "hang"
    if rc < 0 or rc > 1 or any(m in err for m in CRASH_MARKERS):
        return "crash"
    m = DIAG.search(err)
    if not m:
        return "rejected_without_op"
    for pattern, _ in UNSUPPORTED:
        if pattern.search(err):
            return None
    return "rejected"


def first_error(err):
    for line in err.splitlines():
        if "error:" in line:
            return line[line.index("error:"):]
    return err.strip().splitlines()[-1] if err.strip() else ""


def check_graph(seed, index, keep=False):
    """Runs one graph; returns a result dict (finding: None or a kind)."""
    cfg = _CFG
    name = f"{seed}-{index}"
    rnd = random.Random(name)
    graph = graphgen.generate(name)
    target = rnd.choice(cfg.targets)
    flags = graphgen.pass_flags(name)
    res = {"name": name, "target": target, "ops": graph.ops, "tags": sorted(graph.tags),
           "finding": None, "outcome": {}, "detail": "", "ptxas_runs": 0, "full_runs": 0}
    tmp = tempfile.mkdtemp(prefix="kgfuzz-")
    try:
        src = os.path.join(tmp, "g.mlir")
        text = f"// kgraph_fuzz graph {name}, target {target}\n" + graph.mlir()
        with open(src, "w") as f:
            f.write(text)

        def finding(kind, detail, err=""):
            res["finding"], res["detail"] = kind, detail
            save_finding(cfg.out, name, kind, target, text, detail, err, flags)
            return res

        rc, err = run([cfg.opt, src, "-o", os.devnull], cfg.timeout)
        if rc != 0:
            kind = classify_error(rc, err, graph)
            if kind in ("crash", "hang"):
                return finding(kind, "verifier: " + first_error(err), err)
            return finding("generator_invalid", first_error(err), err)

        tiled, errs = {}, {}
        for fuse in (False, True):
            out = os.path.join(tmp, f"tiled{int(fuse)}.mlir")
            cmd = [cfg.opt, f"--tile={target}", *flags, "--emit=tiled", src, "-o", out]
            if fuse:
                cmd.insert(2, "--fuse")
            rc, err = run(cmd, cfg.timeout)
            if rc == 0:
                with open(out) as f:
                    tiled[fuse] = f.read()
            else:
                errs[fuse] = (rc, err)

        results = {}
        for fuse in (False, True):
            label = "fuse" if fuse else "nofuse"
            if fuse in errs:
                rc, err = errs[fuse]
                kind = classify_error(rc, err, graph)
                if kind:
                    return finding(kind, f"--emit=tiled {label}: {first_error(err)}", err)
                results[fuse] = "unsupported"
                res["outcome"][label] = "unsupported:" + first_error(err)[:120]
                continue
            if fuse and False in tiled and tiled[True] == tiled[False]:
                results[True] = results[False]
                res["outcome"][label] = res["outcome"]["nofuse"]
                continue
            ptx = os.path.join(tmp, f"g{int(fuse)}.ptx")
            cmd = [cfg.opt, f"--tile={target}", *flags, src, "-o", ptx]
            if fuse:
                cmd.insert(2, "--fuse")
            rc, err = run(cmd, cfg.timeout * 4)
            res["full_runs"] += 1
            if rc != 0:
                kind = classify_error(rc, err, graph)
                if kind:
                    return finding(kind, f"{label}: {first_error(err)}", err)
                results[fuse] = "unsupported"
                res["outcome"][label] = "unsupported:" + first_error(err)[:120]
                continue
            with open(ptx, "rb") as f:
                data = f.read()
            digest = hashlib.sha1(data + target.encode()).hexdigest()
            if digest not in _PTX_SEEN:
                arch = cfg.arch[target]
                if arch is None:
                    return finding("no_ptxas_arch", f"ptxas knows no target at or after {target}")
                rc, err = run([cfg.ptxas, f"-arch={arch}", ptx, "-o", os.devnull], cfg.timeout * 4)
                res["ptxas_runs"] += 1
                if rc != 0:
                    shutil.copy(ptx, os.path.join(cfg.out, "findings", f"ptxas-{name}.ptx"))
                    return finding("ptxas" if rc != "timeout" else "hang",
                                   f"{label}: ptxas -arch={arch}: {first_error(err) or err.strip()[:200]}",
                                   err)
                _PTX_SEEN.add(digest)
            results[fuse] = "compiled"
            res["outcome"][label] = "compiled"
        if results[False] == "compiled" and results[True] != "compiled":
            return finding("fuse_mismatch", "compiles without --fuse, not with it: "
                           + res["outcome"]["fuse"], errs.get(True, (0, ""))[1])
        return res
    finally:
        if not keep:
            shutil.rmtree(tmp, ignore_errors=True)


def save_finding(out, name, kind, target, text, detail, err, flags=()):
    d = os.path.join(out, "findings")
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, f"{kind}-{name}.mlir"), "w") as f:
        f.write(f"// finding: {kind}\n// target: {target}\n// {detail}\n")
        extra = "".join(f" {x}" for x in flags)
        f.write(f"// reproduce: kgraph-opt --tile={target}{extra} [--fuse] this.mlir -o out.ptx\n")
        f.write(text)
    with open(os.path.join(d, f"{kind}-{name}.stderr"), "w") as f:
        f.write(err)


def _worker(job):
    seed, index = job
    try:
        return check_graph(seed, index)
    except Exception as e:  # a bug of the fuzzer itself
        return {"name": f"{seed}-{index}", "finding": "fuzzer_error",
                "detail": repr(e), "target": "", "ops": [], "tags": [], "outcome": {},
                "ptxas_runs": 0, "full_runs": 0}


def minimize(cfg, seed, index, kind):
    """Drops ops of a failing graph (sinks first) while it fails with the same
    kind; writes <out>/findings/min-<kind>-<name>.mlir."""
    _init(cfg)
    name = f"{seed}-{index}"
    graph = graphgen.generate(name)
    target = random.Random(name).choice(cfg.targets)
    flags = graphgen.pass_flags(name)

    def fails(g):
        tmp = tempfile.mkdtemp(prefix="kgmin-")
        try:
            src = os.path.join(tmp, "g.mlir")
            with open(src, "w") as f:
                f.write(g.mlir())
            for fuse in (False, True):
                cmd = [cfg.opt, f"--tile={target}", *flags, src, "-o", os.path.join(tmp, "g.ptx")]
                if fuse:
                    cmd.insert(2, "--fuse")
                rc, err = run(cmd, cfg.timeout * 4)
                if rc != 0 and classify_error(rc, err, g) == kind:
                    return True
                if rc == 0 and kind == "ptxas":
                    rc2, _ = run([cfg.ptxas, f"-arch={cfg.arch[target]}",
                                  os.path.join(tmp, "g.ptx"), "-o", os.devnull], cfg.timeout)
                    if rc2 != 0:
                        return True
            return False
        finally:
            shutil.rmtree(tmp, ignore_errors=True)

    changed = True
    while changed:
        changed = False
        for i in reversed(range(len(graph.nodes))):
            trial = graphgen.Graph(graph.seed)
            trial.args = graph.args
            trial.nodes = graph.nodes[:i] + graph.nodes[i + 1:]
            removed = graph.nodes[i].result.name
            if any(removed == o.name for n in trial.nodes for o in n.operands):
                continue
            outs = [o for o in graph.outputs if o.name != removed]
            used = {o.name for n in trial.nodes for o in n.operands}
            outs += [n.result for n in trial.nodes if n.result.name not in used
                     and n.kind != "constant" and n.result not in outs]
            if not outs:
                continue
            trial.outputs = outs
            if fails(trial):
                graph = trial
                changed = True
                break
    used = {o.name for n in graph.nodes for o in n.operands}
    graph.args = [a for a in graph.args if a.name in used or a in graph.outputs]
    path = os.path.join(cfg.out, "findings", f"min-{kind}-{name}.mlir")
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as f:
        f.write(f"// minimized {kind} of graph {name}, target {target}\n" + graph.mlir())
    print(f"minimized to {len(graph.nodes)} ops: {path}")
    print(graph.mlir())


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--opt", default="kgraph-opt", help="kgraph-opt (default: on PATH)")
    ap.add_argument("--ptxas", default=ptxas_path())
    ap.add_argument("--seed", default=None, help="base seed (default: random, printed)")
    ap.add_argument("--count", type=int, default=None, help="number of graphs")
    ap.add_argument("--time", type=float, default=None, help="stop starting graphs after SEC")
    ap.add_argument("--start", type=int, default=0, help="first graph index")
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--timeout", type=float, default=60, help="seconds per kgraph-opt stage")
    ap.add_argument("--out", default=None, help="findings, stats.json, progress (default: a temp dir)")
    ap.add_argument("--progress", type=int, default=0, help="print a progress line every N graphs")
    ap.add_argument("--reproduce", default=None, help="SEED-INDEX: run one graph, keep its files")
    ap.add_argument("--minimize", default=None, help="SEED-INDEX: shrink a finding")
    ap.add_argument("--print", dest="print_graph", default=None, help="SEED-INDEX: print the graph")
    a = ap.parse_args()

    if a.print_graph:
        print(graphgen.generate(a.print_graph).mlir(), end="")
        return 0
    if not a.ptxas:
        sys.exit("ptxas not found (give --ptxas)")
    out = a.out or tempfile.mkdtemp(prefix="kgraph-fuzz-")
    os.makedirs(os.path.join(out, "findings"), exist_ok=True)
    opt = os.path.abspath(a.opt) if os.path.exists(a.opt) else shutil.which(a.opt) or a.opt
    targets = list_targets(opt)
    with tempfile.TemporaryDirectory() as tmp:
        arch = ptxas_arches(opt, a.ptxas, targets, tmp)
    cfg = Config(opt, a.ptxas, targets, arch, a.timeout, out)

    for which in (a.reproduce, a.minimize):
        if which:
            seed, _, index = which.rpartition("-")
            _init(cfg)
            res = check_graph(seed, int(index), keep=False)
            print(json.dumps(res, indent=1))
            if a.minimize and res["finding"]:
                minimize(cfg, seed, int(index), res["finding"])
            return 1 if res["finding"] else 0

    seed = a.seed if a.seed is not None else str(random.SystemRandom().randrange(1 << 31))
    if a.count is None and a.time is None:
        a.count = 100
    print(f"fuzz: seed {seed}, targets {', '.join(targets)} (ptxas -arch: "
          f"{', '.join(f'{t}->{arch[t]}' for t in targets if arch[t] != t)}), "
          f"{a.workers} workers, out {out}", flush=True)

    def jobs():
        i = a.start
        while a.count is None or i < a.start + a.count:
            if a.time is not None and time.time() - t0 > a.time:
                return
            yield (seed, i)
            i += 1

    stats = {"graphs": 0, "findings": [], "outcomes": collections.Counter(),
             "ops": collections.Counter(), "tags": collections.Counter(),
             "targets": collections.Counter(), "unsupported": collections.Counter(),
             "full_runs": 0, "ptxas_runs": 0}
    t0 = time.time()
    progress = open(os.path.join(out, "progress.log"), "a")
    pool = multiprocessing.Pool(a.workers, initializer=_init, initargs=(cfg,))

    def results():
        """Results as they come, with at most two graphs per worker queued
        (imap would draw the whole job list, past --time, at once)."""
        pending = collections.deque()
        for job in jobs():
            pending.append(pool.apply_async(_worker, (job,)))
            while len(pending) >= 2 * a.workers:
                yield pending.popleft().get()
        while pending:
            yield pending.popleft().get()

    try:
        for res in results():
            stats["graphs"] += 1
            stats["targets"][res["target"]] += 1
            stats["ops"].update(res["ops"])
            stats["tags"].update(res["tags"])
            stats["full_runs"] += res["full_runs"]
            stats["ptxas_runs"] += res["ptxas_runs"]
            for label, o in res["outcome"].items():
                stats["outcomes"][f"{label}:{o.split(':')[0]}"] += 1
                if o.startswith("unsupported"):
                    stats["unsupported"][re.sub(r"\d+", "N", o.split(":", 1)[1][:90])] += 1
            if res["finding"]:
                stats["findings"].append(res)
                print(f"FINDING {res['finding']}: graph {res['name']} (seed {seed}, index "
                      f"{res['name'].rsplit('-', 1)[1]}), target {res['target']}: {res['detail']}"
                      f"\n  saved: {out}/findings/{res['finding']}-{res['name']}.mlir", flush=True)
            n = stats["graphs"]
            if a.progress and n % a.progress == 0:
                dt = time.time() - t0
                line = (f"{time.strftime('%H:%M:%S')} {n} graphs, {len(stats['findings'])} findings, "
                        f"{dt:.0f} s, {n / dt:.2f} graphs/s")
                print(line, flush=True)
                progress.write(line + "\n")
                progress.flush()
                write_stats(out, seed, stats, dt)
    finally:
        pool.terminate()
    dt = time.time() - t0
    write_stats(out, seed, stats, dt)
    n = stats["graphs"]
    oc = stats["outcomes"]
    print(f"fuzz: outcomes nofuse {oc['nofuse:compiled']} compiled / {oc['nofuse:unsupported']} "
          f"unsupported, fuse {oc['fuse:compiled']} compiled / {oc['fuse:unsupported']} unsupported; "
          f"{stats['full_runs']} full compiles, {stats['ptxas_runs']} ptxas runs")
    print(f"fuzz: seed {seed}: {n} graphs, {len(stats['findings'])} findings in {dt:.0f} s "
          f"({n / max(dt, 1e-9):.2f} graphs/s)")
    return 1 if stats["findings"] else 0


def write_stats(out, seed, stats, dt):
    s = dict(stats)
    s["seed"], s["seconds"] = seed, round(dt, 1)
    s["findings"] = [{k: r[k] for k in ("name", "finding", "target", "detail")}
                     for r in stats["findings"]]
    for k in ("outcomes", "ops", "tags", "targets", "unsupported"):
        s[k] = dict(sorted(stats[k].items()))
    with open(os.path.join(out, "stats.json"), "w") as f:
        json.dump(s, f, indent=1)


if __name__ == "__main__":
    sys.exit(main())
