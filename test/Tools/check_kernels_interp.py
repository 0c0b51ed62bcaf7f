#!/usr/bin/env python3
"""CPU check of generated kernels: compiles graphs with kgraph-opt for a
target (with and without --fuse), runs every kernel of the launch plan in
order in the kernel interpreter (test/Tools/kinterp) on seeded random
inputs, and compares the outputs with a float64 torch reference. Outputs
start poisoned (NaN bytes); an output element no kernel wrote fails.

  # the hand-written cases of test/Tools/kinterp_cases.py (every family)
  check_kernels_interp.py build/bin/kgraph-opt --cases [NAME ...]
  # GPU graph cases of test/GPU/cases/graphs small enough for the CPU
  check_kernels_interp.py build/bin/kgraph-opt --graphs [MODULE ...]
  # random graphs of the fuzzer's generator at small shapes, a new seed
  # each run unless --seed (printed), at most --time seconds
  check_kernels_interp.py build/bin/kgraph-opt --fuzz 300 --time 120
  # random stream-K GEMMs (shapes, block counts, epilogues), same seeding
  check_kernels_interp.py build/bin/kgraph-opt --streamk 40
  # mutation: the IR of the cases with FROM (a regex) replaced by TO must
  # fail the comparison (exit 0 only if every run that the pattern
  # changes fails)
  check_kernels_interp.py build/bin/kgraph-opt --cases NAME --mutate FROM TO

Each run prints `ok   <case> <target> [fuse]` or `FAIL ...` with the
first mismatch; the last line counts them. Exit 1 on any failure.
"""
import argparse
import json
import math
import os
import random
import re
import subprocess
import sys
import tempfile
import time
import zlib

import numpy as np
import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, "..", "GPU", "cases"))
sys.path.insert(0, os.path.join(HERE, "..", "fuzz"))

from kinterp.memory import KernelError, UndefinedValue, Unsupported  # noqa: E402
from kinterp.parser import ParseError  # noqa: E402
from kinterp.plan import Module, run_plan  # noqa: E402
from kinterp.types import round_bf16  # noqa: E402

TARGETS = ("sm_70", "sm_75", "sm_80", "sm_90a")
NP = {"f32": np.float32, "f16": np.float16, "bf16": np.float32, "i8": np.int8,
      "i32": np.int32, "i1": np.int8}


class CompileError(Exception):
    pass


def compile_graph(opt, text, target, fuse, flags=()):
    """(plan function entry, --emit=gpu IR in generic form)."""
    opt = os.path.abspath(opt) if os.sep in opt else opt
    fl = ["--fuse"] if fuse else []
    fl += [f for f in flags if f != "--fuse"]
    with tempfile.TemporaryDirectory() as d:
        src = os.path.join(d, "g.mlir")
        if "kgraph.param" in text:
            # Parameters need a weights file; the interpreter takes their
            # values from the run's inputs (check_one), so it may be empty.
            text = f'module attributes {{kgraph.weights = "w.safetensors"}} {{\n{text}}}\n'
            open(os.path.join(d, "w.safetensors"), "w").close()
        with open(src, "w") as f:
            f.write(text)
        # Relative paths: the locations in the plan and IR do not depend on d.
        p = subprocess.run([opt, *fl, f"--tile={target}", "g.mlir", "-o", "g.ptx"],
                           capture_output=True, text=True, cwd=d)
        if p.returncode:
            raise CompileError(p.stderr.strip().splitlines()[0] if p.stderr.strip() else
                               f"kgraph-opt exit {p.returncode}")
        plan = json.load(open(os.path.join(d, "g.plan.json")))
        fplan = plan["functions"][0] if "functions" in plan else plan
        g = subprocess.run([opt, *fl, f"--tile={target}", "--emit=gpu",
                            "--mlir-print-op-generic", "g.mlir"], capture_output=True, text=True,
                           cwd=d)
        if g.returncode:
            raise CompileError(g.stderr.strip().splitlines()[0])
    return fplan, g.stdout


def make_inputs(rng, specs):
    """numpy inputs (plan dtypes; bf16 as rounded float32) for
    [(shape, dtype, lo, hi)]."""
    xs = []
    for shape, dt, lo, hi in specs:
        if dt == "i1":
            xs.append((rng.uniform(0, 1, shape) < 0.5).astype(np.int8))
        elif dt in ("i8", "i32"):
            xs.append(rng.integers(int(lo), int(hi) + 1, shape).astype(NP[dt]))
        else:
            x = rng.uniform(lo, hi, shape)
            xs.append(round_bf16(x.astype(np.float32)) if dt == "bf16" else x.astype(NP[dt]))
    return xs


def wide(x, dt):
    if dt == "i1":
        return torch.from_numpy(x != 0)
    if dt in ("i8", "i32"):
        return torch.from_numpy(x.astype(np.int64))
    return torch.from_numpy(np.asarray(x, np.float64))


def compare(out, ref, shape, dt, tol, unwritten):
    """None when the output matches; else a message."""
    if unwritten is not None and unwritten.any():
        idx = np.argwhere(unwritten)[:3].tolist()
        return f"{int(unwritten.sum())} of {unwritten.size} elements never written, e.g. {idx}"
    o = np.asarray(out)
    r = ref.detach().numpy() if isinstance(ref, torch.Tensor) else np.asarray(ref)
    if list(r.shape) != list(shape):
        return f"the reference has shape {list(r.shape)}, the output {list(shape)}"
    if dt in ("i1", "i8", "i32"):
        o = (o != 0) if dt == "i1" else o.astype(np.int64)
        r = r.astype(bool) if dt == "i1" else r.astype(np.int64)
        bad = o != r
        if bad.any():
            i = np.argwhere(bad)[0]
            return (f"{int(bad.sum())} of {bad.size} elements differ; first at {i.tolist()}: "
                    f"{o[tuple(i)]}, expected {r[tuple(i)]}")
        return None
    o = o.astype(np.float64)
    r = r.astype(np.float64)
    rtol, atol = tol
    # No op of these graphs defines a NaN or an infinity on their input
    # domains: a non-finite reference means a domain is wrong (and would
    # accept any output there).
    bad = ~np.isfinite(r)
    if bad.any():
        i = np.argwhere(bad)[0]
        return (f"the float64 reference is {r[tuple(i)]} at {i.tolist()} ({int(bad.sum())} "
                f"element(s)), where no op of the graph defines a NaN or an infinity: the "
                f"input domain is wrong")
    nan_o, nan_r = np.isnan(o), np.isnan(r)
    if (nan_o != nan_r).any():
        i = np.argwhere(nan_o != nan_r)[0]
        return (f"NaN mismatch ({int((nan_o != nan_r).sum())} elements); first at {i.tolist()}: "
                f"{o[tuple(i)]}, expected {r[tuple(i)]}")
    o = np.where(nan_o, 0, o)
    r = np.where(nan_r, 0, r)
    inf = np.isinf(o) | np.isinf(r)
    if (inf & (o != r)).any():
        i = np.argwhere(inf & (o != r))[0]
        return f"infinity mismatch at {i.tolist()}: {o[tuple(i)]}, expected {r[tuple(i)]}"
    with np.errstate(invalid="ignore"):
        err = np.where(inf, 0, np.abs(o - r))
        bound = atol + rtol * np.where(inf, 0, np.abs(r))
    excess = err - bound
    if (excess > 0).any():
        i = np.unravel_index(int(np.argmax(excess)), excess.shape)
        return (f"{int((excess > 0).sum())} of {o.size} elements outside |out - ref| <= "
                f"{atol:.3g} + {rtol:.3g} |ref|; worst at {list(i)}: {o[i]!r}, expected {r[i]!r}")
    return None


class Run:
    """One graph to check: name, MLIR text, inputs [(shape, dtype, lo,
    hi)], ref (torch float64 function), tol, extra flags, targets. A run
    with its own checks sets make_inputs (seed -> numpy inputs) and check
    (outputs by index, inputs -> None or a message) instead."""

    make_inputs = None
    check = None

    def __init__(self, name, text, inputs, ref, tol, flags=(), targets=TARGETS, fuse=(False, True)):
        self.name, self.text, self.inputs, self.ref = name, text, inputs, ref
        self.tol, self.flags, self.targets, self.fuse = tol, list(flags), list(targets), fuse


def mutate_text(ir, mutate):
    """`mutate` (a (regex, replacement) pair or a function of the IR text)
    applied; returns (text, whether it changed)."""
    if mutate is None:
        return ir, 0
    if callable(mutate):
        new = mutate(ir)
        return new, int(new != ir)
    pat, repl = mutate
    return re.subn(pat, repl, ir)


def check_one(opt, run, target, fuse, seed=0, mutate=None, verbose=False, compiled=None):
    """(status, message, kernels): status ok | FAIL | unchanged (the
    mutation did not apply) | rejected (the compiler refused the graph)."""
    try:
        fplan, ir = compiled or compile_graph(opt, run.text, target, fuse, run.flags)
    except CompileError as e:
        return "rejected", str(e), 0
    ir, n = mutate_text(ir, mutate)
    if mutate is not None and n == 0:
        return "unchanged", "the mutation matches nothing", len(fplan["kernels"])
    rng = np.random.default_rng(seed)
    xs = run.make_inputs(seed) if run.make_inputs else make_inputs(rng, run.inputs)
    # Arguments marked {kgraph.param = "argN"} are parameters (N: the
    # argument's position, its value xs[N]); the others are the real
    # inputs, in order.
    params = {b["name"]: xs[int(b["name"][3:])] for b in fplan["buffers"]
              if b["kind"] == "parameter"}
    param_pos = {int(n[3:]) for n in params}
    real = [x for i, x in enumerate(xs) if i not in param_pos]
    ins = {}
    in_bufs = [b for b in fplan["buffers"] if b["kind"] == "input"]
    for b in in_bufs:
        ins[b["index"]] = real[b["index"]]
    try:
        module = Module(ir)
    except ParseError as e:
        return "invalid", f"the kernel IR does not parse: {e}", len(fplan["kernels"])
    try:
        outs, unwritten = run_plan(fplan, module, ins, params)
    except UndefinedValue as e:
        return "invalid", str(e), len(fplan["kernels"])
    except (KernelError, Unsupported) as e:
        kind = "unsupported" if isinstance(e, Unsupported) else "kernel error"
        return "FAIL", f"{kind}: {e}", len(fplan["kernels"])
    except Exception:   # a bug of the interpreter: say where
        import traceback
        tb = traceback.format_exc()
        if not verbose:
            tb = tb.strip().splitlines()[-1] + " (--verbose: the traceback)"
        return "FAIL", "interpreter error: " + tb, len(fplan["kernels"])
    out_bufs = {b["index"]: b for b in fplan["buffers"] if b["kind"] == "output"}
    if run.check:
        if any(u.any() for u in unwritten.values()):
            i = next(i for i, u in unwritten.items() if u.any())
            return "FAIL", f"output {i}: {compare(None, None, None, None, None, unwritten[i])}", \
                len(fplan["kernels"])
        msg = run.check(outs, xs)
        return ("FAIL", msg, len(fplan["kernels"])) if msg else ("ok", "", len(fplan["kernels"]))
    refs = run.ref(*[wide(x, spec[1]) for x, spec in zip(xs, run.inputs)])
    refs = list(refs) if isinstance(refs, (tuple, list)) else [refs]
    if len(refs) != len(out_bufs):
        return "FAIL", f"{len(out_bufs)} outputs, the reference has {len(refs)}", 0
    for i, r in enumerate(refs):
        b = out_bufs[i]
        msg = compare(outs[i], r, b["shape"], b["dtype"], run.tol, unwritten[i])
        if msg:
            return "FAIL", f"output {i}: {msg}", len(fplan["kernels"])
    return "ok", "", len(fplan["kernels"])


def check_graph(opt, run, seed=0, mutate=None, verbose=False, deadline=None):
    """Checks `run` on each of its targets, with and without --fuse (the
    second is skipped when it compiles to the same plan and IR). Returns
    (lines to print, counts); counts["timeout"] when the deadline passed
    before it started."""
    counts = {"ok": 0, "FAIL": 0, "rejected": 0, "unchanged": 0, "same": 0, "invalid": 0}
    lines = []
    if deadline and time.time() > deadline:
        counts["timeout"] = True
        return lines, counts
    for target in run.targets:
        done = {}
        for fuse in run.fuse:
            t0 = time.time()
            try:
                compiled = compile_graph(opt, run.text, target, fuse, run.flags)
            except CompileError as e:
                compiled = None
                err = str(e)
            label = f"{run.name} {target}{' --fuse' if fuse else ''}"
            if compiled is None:
                status, msg, k = "rejected", err, 0
            else:
                key = json.dumps(compiled[0]["kernels"], sort_keys=True) + compiled[1]
                if key in done:
                    counts["same"] += 1
                    continue
                done[key] = True
                status, msg, k = check_one(opt, run, target, fuse, seed, mutate,
                                           verbose=verbose, compiled=compiled)
            counts[status] += 1
            dt = time.time() - t0
            if status == "ok":
                lines.append(f"ok   {label} ({k} kernel{'s' if k != 1 else ''}, {dt:.1f} s)")
            elif status == "FAIL":
                lines.append(f"FAIL {label}: {msg}")
                if run.name.startswith("fuzz-"):
                    lines.append(f"  again: check_kernels_interp.py OPT --fuzz-graph {run.name[5:]}"
                                 "\n  the graph:\n" + "".join("    " + l + "\n" for l in
                                                             run.text.splitlines()))
            else:
                lines.append(f"{status} {label}: {msg}")
    return lines, counts


_POOL_ARGS = None


def _pool_check(i):
    opt, runs, seed, mutate, verbose, deadline = _POOL_ARGS
    return check_graph(opt, runs[i], seed, mutate, verbose, deadline)


def check_runs(opt, runs, seed=0, mutate=None, deadline=None, out=sys.stdout, verbose=False,
               workers=1):
    """Checks every (run, target, fuse), on `workers` processes; prints a
    line per check in the order of `runs`; returns the counts."""
    global _POOL_ARGS
    counts = {"ok": 0, "FAIL": 0, "rejected": 0, "unchanged": 0, "same": 0, "invalid": 0,
              "graphs": 0}
    if workers > 1:
        import concurrent.futures
        import multiprocessing
        _POOL_ARGS = (opt, runs, seed, mutate, verbose, deadline)
        pool = concurrent.futures.ProcessPoolExecutor(
            workers, mp_context=multiprocessing.get_context("fork"))
        results = pool.map(_pool_check, range(len(runs)))
    else:
        pool = None
        results = (check_graph(opt, r, seed, mutate, verbose, deadline) for r in runs)
    try:
        for lines, c in results:
            if c.pop("timeout", False):
                counts["timeout"] = True
                continue
            counts["graphs"] += 1
            for k, v in c.items():
                counts[k] += v
            for line in lines:
                print(line, file=out, flush=True)
    finally:
        if pool:
            pool.shutdown(cancel_futures=True)
    return counts


# ---- sources of runs ------------------------------------------------------------------

def hand_written(names=()):
    import kinterp_cases
    runs = kinterp_cases.RUNS
    if names:
        unknown = set(names) - {r.name for r in runs}
        if unknown:
            sys.exit(f"unknown case(s): {', '.join(sorted(unknown))}")
        runs = [r for r in runs if r.name in names]
    return runs


#: GPU graph cases (test/GPU/cases/graphs) the CPU runs: inputs of at most
#: this many elements.
GRAPH_MAX_ELEMENTS = 1 << 16
GRAPH_TARGETS = ("sm_90a", "sm_80")


def graph_runs(modules=(), names=(), max_elements=GRAPH_MAX_ELEMENTS):
    """The GPU graph cases small enough for the interpreter, with their own
    flags, each on one of the targets the GPU check builds."""
    import graph_case
    runs = []
    for c in graph_case.load_cases(list(modules) or None):
        if names and c.name not in names:
            continue
        # Benchmark cases are sized for the GPU (the N-body's 8192 bodies
        # are small inputs but 200M interpreted multiply-adds).
        if c.bench or max(math.prod(i.shape) for i in c.inputs) > max_elements:
            continue
        # Pinned wgmma / TMA configurations exist on sm_90a only.
        hopper = "instruction = wgmma" in c.text or "copy = tma" in c.text
        # One target each, drawn from the name (pinned wgmma / TMA: sm_90a).
        target = ("sm_90a" if hopper else
                  GRAPH_TARGETS[zlib.crc32(c.name.encode()) % len(GRAPH_TARGETS)])
        runs.append(Run(c.name, c.text, [(i.shape, i.dtype, i.lo, i.hi) for i in c.inputs],
                        c.ref, c.tol, flags=c.flags, targets=(target,),
                        fuse=("--fuse" in c.flags,)))
    return runs


#: GPU matmul and conv2d cases (test/GPU/cases/{matmul,conv}_cases.py) the
#: CPU runs: at most this many flops.
GEMM_MAX_FLOPS = 1 << 22


def gemm_case_runs(max_flops=GEMM_MAX_FLOPS):
    """The GPU matmul and conv2d cases small enough for the interpreter,
    with their own inputs, references and checks (test/GPU/matmul_ref.py,
    conv_ref.py), each on one target drawn from its name (pinned wgmma
    configs: sm_90a)."""
    sys.path.insert(0, os.path.join(HERE, "..", "GPU"))
    # The references' dtype table is the runtime's (python/kgraph/dtypes.py).
    sys.path.insert(0, os.path.join(HERE, "..", "..", "python"))
    import conv_cases
    import conv_ref
    import matmul_cases
    import matmul_ref
    runs = []
    for cases, R in ((matmul_cases.all_cases(), matmul_ref), (conv_cases.all_cases(), conv_ref)):
        for c in cases:
            if c.flops > max_flops:
                continue
            entry = c.manifest()
            text = c.mlir()
            hopper = "instruction = wgmma" in text
            # A target drawn from the name: any sample of the cases mixes them.
            target = "sm_90a" if hopper else TARGETS[zlib.crc32(c.name.encode()) % len(TARGETS)]
            run = Run(c.name, text, None, None, None, targets=[target], fuse=(False,))
            run.make_inputs, run.check = _gemm_hooks(entry, R)
            runs.append(run)
    return runs


def _gemm_hooks(entry, R):
    def make(seed):
        gen = torch.Generator().manual_seed(R.case_seed(seed, entry["name"]))
        xs = R.make_inputs(entry, gen)
        return [x.to(torch.float32).numpy() if x.dtype == torch.bfloat16 else x.numpy()
                for x in xs]

    def check(outs, xs):
        tdt = {"f32": torch.float32, "f16": torch.float16, "bf16": torch.bfloat16,
               "i32": torch.int32, "i8": torch.int8}
        ts = [torch.from_numpy(np.ascontiguousarray(x)).to(tdt[spec["dtype"]])
              for x, spec in zip(xs, entry["inputs"])]
        ref, s = R.reference(entry, *ts)
        out = torch.from_numpy(np.ascontiguousarray(outs[0])).to(tdt[entry["output"]["dtype"]])
        msg = R.compare(entry, out, ref, s)
        return f"output 0: {msg}" if msg else None
    return make, check


def fuzz_runs(seed, count, subs=()):
    """Small random graphs of the fuzzer's generator (graphgen.gpu_graph with
    small dims; or the graphs of the sub-seeds `subs`), each on a target
    drawn from its name."""
    import graphgen
    runs = []
    todo = [(None, s) for s in subs] or [(f"{seed}-{i}", None) for i in range(count)]
    for name, sub in todo:
        if sub is None:
            g, sub = graphgen.gpu_graph(name, small=True)
        else:
            g = graphgen.generate(sub, allow_data_movement=False, small=True)
        if g is None:
            continue
        rnd = random.Random(f"target-{sub}")
        target = rnd.choice(TARGETS)
        inputs = [(a.shape, a.dtype, *g.input_domain[a.name]) for a in g.args]
        ref = graphgen.torch_ref(g)
        runs.append(Run(f"fuzz-{sub}", g.mlir(), inputs, ref, graphgen.tolerance(g),
                        flags=graphgen.pass_flags(sub), targets=[target]))
    return runs


def streamk_runs(seed, count):
    """Random stream-K GEMMs (getStreamKSchedule's rounds, heads and pieces
    over random shapes and block counts), pinned to a TMA wgmma config on
    sm_90a: f16/bf16, batches, transposes, bias, residual and relu at
    random; extents multiples of 8 (TMA's 16-byte row pitch)."""
    import kinterp_cases as kc
    rnd = random.Random(f"streamk-{seed}")
    runs = []
    for i in range(count):
        dt = rnd.choice(["f16", "bf16"])
        config = rnd.choice([kc.TMA, kc.TMA3])
        m, n = 8 * rnd.randint(1, 40), 8 * rnd.randint(1, 40)
        k = 8 * rnd.randint(1, max(1, min(600, 2 ** 24 // (m * n))))
        batch = rnd.choice([None, None, 2])
        tm, tn = (128, 128) if config == kc.TMA else (128, 64)
        tiles = (batch or 1) * -(-m // tm) * -(-n // tn)
        # Fewer blocks than tiles (rounds, then the rest) or more (splits).
        blocks = rnd.choice([rnd.randint(1, max(1, tiles - 1)), rnd.randint(tiles, 3 * tiles + 8)])
        before = len(kc.RUNS)
        kc.gemm(f"streamk-{seed}-{i}_{dt}_{m}x{n}x{k}", m, n, k, dt, acc=rnd.choice([None, "f32"]),
                ta=rnd.random() < 0.25, tb=rnd.random() < 0.25, batch=batch,
                bias=rnd.random() < 0.3, residual=rnd.random() < 0.3, relu=rnd.random() < 0.3,
                config=config[:-1] + f", stream_k = {blocks}>", targets=["sm_90a"])
        runs += kc.RUNS[before:]
        del kc.RUNS[before:]
    return runs


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("opt")
    ap.add_argument("--cases", nargs="*", help="hand-written cases (all, or these names)")
    ap.add_argument("--graphs", nargs="*", help="GPU graph cases (of these modules of "
                    "test/GPU/cases/graphs, default all) small enough for the CPU")
    ap.add_argument("--graph", action="append", default=[], help="only this GPU graph case")
    ap.add_argument("--gemm-cases", action="store_true",
                    help="the GPU matmul and conv2d cases small enough for the CPU")
    ap.add_argument("--fuzz", type=int, help="this many random graphs")
    ap.add_argument("--streamk", type=int, metavar="N",
                    help="this many random stream-K GEMMs (seeded by --seed)")
    ap.add_argument("--seed", help="fuzz seed ([0-9a-z]; default: new each run)")
    ap.add_argument("--fuzz-graph", action="append", default=[],
                    help="the fuzz graph of this sub-seed (as printed: SEED-I[.T])")
    ap.add_argument("--time", type=float, help="stop starting runs after this many seconds")
    ap.add_argument("--targets", help="comma-separated targets to keep")
    ap.add_argument("--sample", type=int, default=1, metavar="K",
                    help="every K-th graph only")
    ap.add_argument("--one-target", action="store_true",
                    help="each graph on one of its targets only (taken in turn)")
    ap.add_argument("--mutate", nargs=2, metavar=("FROM", "TO"))
    ap.add_argument("--input-seed", type=int, default=0)
    ap.add_argument("--verbose", action="store_true", help="tracebacks of interpreter errors")
    ap.add_argument("--workers", type=int, default=1, help="check graphs on this many processes")
    args = ap.parse_args()
    runs = []
    if args.cases is not None:
        runs += hand_written(args.cases)
    if args.graphs is not None:
        runs += graph_runs(args.graphs, args.graph)
    if args.gemm_cases:
        runs += gemm_case_runs()
    if args.fuzz_graph:
        runs += fuzz_runs(None, 0, args.fuzz_graph)
    seed = args.seed or "".join(random.SystemRandom().choice("0123456789abcdefghijklmnopqrstuvwxyz")
                                for _ in range(8))
    if args.fuzz:
        print(f"interp fuzz: seed {seed}, {args.fuzz} graphs", flush=True)
        runs += fuzz_runs(seed, args.fuzz)
    if args.streamk:
        print(f"interp stream-K: seed {seed}, {args.streamk} GEMMs", flush=True)
        runs += streamk_runs(seed, args.streamk)
    runs = runs[::max(1, args.sample)]
    if args.targets:
        keep = args.targets.split(",")
        for r in runs:
            r.targets = [t for t in r.targets if t in keep]
    if args.one_target:
        for i, r in enumerate(runs):
            r.targets = r.targets[i % len(r.targets):][:1] if r.targets else []
    deadline = time.time() + args.time if args.time else None
    t0 = time.time()
    mutate = tuple(args.mutate) if args.mutate else None
    counts = check_runs(args.opt, runs, args.input_seed, mutate, deadline, verbose=args.verbose,
                        workers=args.workers)
    dt = time.time() - t0
    note = (f", stopped at the time limit after {counts['graphs']} of {len(runs)} graphs"
            if counts.get("timeout") else "")
    if mutate is not None:
        # A mutation must make every run it changes fail.
        print(f"interp mutation: {counts['FAIL']} caught, {counts['ok']} missed, "
              f"{counts['unchanged']} unchanged, {counts['invalid']} invalid, "
              f"{counts['rejected']} rejected ({dt:.0f} s{note})")
        sys.exit(0 if counts["ok"] == 0 and counts["invalid"] == 0 and counts["FAIL"] > 0 else 1)
    total = sum(counts[k] for k in ("ok", "FAIL", "rejected", "same"))
    print(f"interp: {total} runs: {counts['ok']} ok, {counts['same']} same as without --fuse, "
          f"{counts['FAIL']} failed, {counts['rejected']} rejected by the compiler "
          f"({dt:.0f} s{note})")
    bad = counts["FAIL"] or ((args.cases is not None or args.graphs is not None
                              or args.gemm_cases) and counts["rejected"])
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
