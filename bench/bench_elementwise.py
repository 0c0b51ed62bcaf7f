#!/usr/bin/env python3
"""Bandwidth of kgraph's elementwise kernels against torch eager and against
the device-to-device copy bandwidth, all measured in the same run.

Cases come from the "bench" section of the manifest that
scripts/build-gpu-cases.py writes (add of two 64M-element f32 tensors, exp of
one). Bytes counted are bytes read plus bytes written: 3*4*N for add,
2*4*N for exp and for the copy (torch copy_ of a same-size buffer).

Timing: CUDA events around --inner back-to-back calls (so launch overhead is
hidden the same way for every contender), after --warmup calls; the median
over --trials such batches. The buffers (256 MiB each) are far larger than the
L2 cache, so no cache flush is needed. --method do_bench uses
triton.testing.do_bench (median) instead.

    python3 bench/bench_elementwise.py --cases .gpu [--json out.json]

Writes JSON to --json, else to $OUT/bench_elementwise.json when $OUT is set.
"""

import argparse
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import benchlib  # noqa: E402
from benchlib import time_events  # noqa: E402


def time_do_bench(fn, warmup, inner, trials):
    return benchlib.time_do_bench(fn, rep=200)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    benchlib.add_cases_args(ap)
    ap.add_argument("--method", choices=("events", "do_bench"), default="events")
    ap.add_argument("--warmup", type=int, default=10)
    ap.add_argument("--inner", type=int, default=20)
    ap.add_argument("--trials", type=int, default=15)
    args = ap.parse_args(argv)

    import torch
    import kgraph

    manifest, path, base = benchlib.read_manifest(args.cases)
    benches = {c["op"]: c for c in manifest.get("bench", [])}
    missing = {"add", "exp"} - set(benches)
    if missing:
        sys.exit(f"error: {path} has no bench case for {sorted(missing)} "
                 f"(rebuild without --no-bench)")
    for c in benches.values():
        if c.get("status") != "ok":
            sys.exit(f"error: bench case {c['name']} did not compile: {c.get('error')}")

    timer = time_events if args.method == "events" else time_do_bench
    dev = torch.device("cuda")
    n = 1
    for d in benches["add"]["output"]["shape"]:
        n *= d
    gen = torch.Generator(device=dev).manual_seed(0)
    a = torch.rand(n, device=dev, generator=gen) * 20 - 10
    b = torch.rand(n, device=dev, generator=gen) * 20 - 10
    c = torch.empty_like(a)
    shape = benches["add"]["inputs"][0]["shape"]
    a, b, c = a.view(shape), b.view(shape), c.view(shape)

    add = kgraph.load(os.path.join(base, benches["add"]["plan"]))
    exp = kgraph.load(os.path.join(base, benches["exp"]["plan"]))

    # Correctness first: a fast wrong kernel is not a result.
    add.run([a, b], [c])
    torch.testing.assert_close(c, a + b, rtol=0, atol=0)
    exp.run([a], [c])
    torch.testing.assert_close(c, torch.exp(a), rtol=1e-5, atol=1e-6)

    elem = 4
    rows = []

    def measure(name, fn, nbytes):
        ms = timer(fn, args.warmup, args.inner, args.trials)
        rows.append({"kernel": name, "ms": ms, "bytes": nbytes,
                     "gbps": nbytes / ms / 1e6})

    measure("copy (torch copy_)", lambda: c.copy_(a), 2 * elem * n)
    measure("add kgraph", lambda: add.run([a, b], [c]), 3 * elem * n)
    measure("add torch", lambda: torch.add(a, b, out=c), 3 * elem * n)
    measure("exp kgraph", lambda: exp.run([a], [c]), 2 * elem * n)
    measure("exp torch", lambda: torch.exp(a, out=c), 2 * elem * n)

    by = {r["kernel"]: r for r in rows}
    copy_bw = by["copy (torch copy_)"]["gbps"]
    for r in rows:
        r["frac_copy"] = r["gbps"] / copy_bw
        op = r["kernel"].split()[0]
        torch_row = by.get(f"{op} torch")
        r["vs_torch"] = (torch_row["ms"] / r["ms"]) if torch_row and \
            r["kernel"].endswith("kgraph") else None

    print(f"\n{torch.cuda.get_device_name()}  N={n} f32  method={args.method} "
          f"(median of {args.trials} x {args.inner} calls)")
    print(f"{'kernel':<20} {'ms':>9} {'GB/s':>9} {'of copy':>8} {'torch/kgraph':>13}")
    for r in rows:
        vs = f"{r['vs_torch']:.3f}" if r["vs_torch"] is not None else ""
        print(f"{r['kernel']:<20} {r['ms']:9.4f} {r['gbps']:9.1f} "
              f"{r['frac_copy']:8.1%} {vs:>13}")

    result = {"device": torch.cuda.get_device_name(), "n": n, "dtype": "f32",
              "method": args.method, "trials": args.trials, "inner": args.inner,
              "target": manifest.get("target"), "rows": rows,
              "add_frac_copy": by["add kgraph"]["frac_copy"],
              "exp_frac_copy": by["exp kgraph"]["frac_copy"],
              "add_vs_torch": by["add kgraph"]["vs_torch"],
              "exp_vs_torch": by["exp kgraph"]["vs_torch"]}
    benchlib.write_json(result, args.json, "bench_elementwise.json")
    return 0


if __name__ == "__main__":
    sys.exit(main())
