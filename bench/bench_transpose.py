#!/usr/bin/env python3
"""Bandwidth of kgraph's transposes against the device-to-device copy
bandwidth and against torch (``x.permute(...).contiguous()``), all measured
in the same run.

Cases come from the "graphs_bench" section of the manifest: the
``transpose_bench_*`` cases of test/GPU/cases/graphs/transpose.py (8192x8192
[1, 0], NCHW -> NHWC [0, 2, 3, 1] of 64x256x56x56, NHWC -> NCHW [0, 3, 1, 2]
of 64x56x56x256 and the head split [0, 2, 1, 3] of 8x512x12x64, in f32 and
f16). Bytes counted are bytes read plus bytes written (2 x the tensor). The
copy bandwidth is torch's ``dst.copy_(src)`` of a buffer of the same byte
size as each case, measured right before it; the goal is 85% of it or more.

Timing: interleaved rounds (--rounds, median reported), each timing every
contender once with triton's do_bench when importable, else CUDA events
(benchlib). Every kgraph result is first checked bit for bit against torch.

    python3 bench/bench_transpose.py --cases .gpu [--json out.json]

Writes JSON to --json, else to $OUT/bench_transpose.json when $OUT is set.
Exits 1 if a result is wrong or a case failed (not for missing the goal).
"""

import argparse
import os
import re
import statistics
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, "..", "test", "GPU", "cases"))
import benchlib  # noqa: E402
import graph_case as G  # noqa: E402

#: The issue's goal: this fraction of the copy bandwidth.
GOAL = 0.85


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    benchlib.add_cases_args(ap)
    ap.add_argument("--method", choices=("auto", "do_bench", "events"),
                    default="auto")
    ap.add_argument("--filter", default=None, help="only cases matching RX")
    ap.add_argument("--rounds", type=int, default=3)
    args = ap.parse_args(argv)

    import torch
    import kgraph

    benchlib.require_gpu(torch)
    manifest, path, base = benchlib.read_manifest(args.cases)
    cases = [c for c in manifest.get("graphs_bench", [])
             if c["name"].startswith("transpose_bench_")]
    if args.filter:
        cases = [c for c in cases if re.search(args.filter, c["name"])]
    if not cases:
        sys.exit(f"error: {path} has no transpose_bench_* graphs_bench cases")
    method = benchlib.resolve_method(args.method)
    timer = benchlib.timer_of(method)
    benchlib.print_device(torch, manifest)
    dev = torch.device("cuda")

    rows = []
    for c in cases:
        row = {"case": c["name"]}
        rows.append(row)
        if c.get("status") != "ok":
            row["error"] = f"did not compile: {c.get('error') or c.get('reason')}"
            print(f"FAILED {c['name']}: {row['error']}", flush=True)
            continue
        try:
            perm = [int(p) for p in re.search(
                r"permutation = \[([0-9, ]+)\]",
                open(os.path.join(base, c["mlir"])).read()).group(1).split(",")]
            prog = kgraph.load(os.path.join(base, c["plan"]))
            gen = torch.Generator().manual_seed(0)
            (x,) = [v.to(dev) for v in G.make_inputs(torch, c, gen)]
            spec = c["outputs"][0]
            out = torch.empty(spec["shape"], dtype=kgraph.torch_dtype(spec["dtype"]),
                              device=dev)
            prog.run([x], [out])
            if not torch.equal(out, x.permute(*perm).contiguous()):
                row["wrong"] = "differs from x.permute(...).contiguous()"
            src = torch.empty(x.numel() * x.element_size(), dtype=torch.uint8,
                              device=dev)
            dst = torch.empty_like(src)
            contenders = {"kgraph_ms": lambda: prog.run([x], [out]),
                          "torch_ms": lambda: x.permute(*perm).contiguous(),
                          "copy_ms": lambda: dst.copy_(src)}
            times = {k: [] for k in contenders}
            for _ in range(args.rounds):
                for k, fn in contenders.items():
                    times[k].append(timer(fn))
            for k, ts in times.items():
                row[k] = statistics.median(ts)
            moved = 2 * x.numel() * x.element_size()
            row.update({"shape": list(x.shape), "perm": perm,
                        "dtype": c["inputs"][0]["dtype"], "bytes": moved,
                        "kernels": c.get("kernels")})
            for k in ("kgraph", "torch", "copy"):
                row[f"{k}_gbps"] = moved / row[f"{k}_ms"] / 1e6
            row["frac_copy"] = row["kgraph_gbps"] / row["copy_gbps"]
            row["torch_frac_copy"] = row["torch_gbps"] / row["copy_gbps"]
            row["vs_torch"] = row["torch_ms"] / row["kgraph_ms"]
            row["meets_goal"] = row["frac_copy"] >= GOAL
            del src, dst
        except Exception as e:  # report and go on with the other cases
            row["error"] = f"{type(e).__name__}: {e}"
            print(f"FAILED {c['name']}: {row['error']}", flush=True)

    print(f"\ntranspose bandwidth ({method}; GB/s = (read + written) / time; "
          f"goal: kgraph >= {GOAL:.0%} of copy)")
    print(f"{'case':<34} {'perm':<13} {'kgraph':>8} {'copy':>8} "
          f"{'KGRAPH/COPY':>11} {'torch':>8} {'torch/copy':>10} {'vs torch':>8}")
    for r in rows:
        if "error" in r:
            print(f"{r['case']:<34} FAILED: {r['error'][:80]}")
            continue
        perm = "[" + ",".join(str(p) for p in r["perm"]) + "]"
        mark = "" if r["meets_goal"] else "  < goal"
        if "wrong" in r:
            mark += "  WRONG"
        print(f"{r['case']:<34} {perm:<13} {r['kgraph_gbps']:>8.0f} "
              f"{r['copy_gbps']:>8.0f} {r['frac_copy']:>11.1%} "
              f"{r['torch_gbps']:>8.0f} {r['torch_frac_copy']:>10.1%} "
              f"{r['vs_torch']:>7.2f}x{mark}")
    ok = [r for r in rows if "frac_copy" in r]
    if ok:
        worst = min(ok, key=lambda r: r["frac_copy"])
        print(f"worst: {worst['case']} at {worst['frac_copy']:.1%} of copy; "
              f"{sum(r['meets_goal'] for r in ok)} of {len(ok)} cases meet "
              f"the {GOAL:.0%} goal")
    wrong = [r["case"] for r in rows if "wrong" in r]
    errors = [r["case"] for r in rows if "error" in r]
    benchlib.write_json({"target": manifest.get("target"), "method": method,
                         "goal": GOAL, "rows": rows, "wrong": wrong,
                         "errors": errors}, args.json, "bench_transpose.json")
    return 1 if wrong or errors else 0


if __name__ == "__main__":
    sys.exit(main())
