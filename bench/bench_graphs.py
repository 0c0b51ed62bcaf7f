#!/usr/bin/env python3
"""Whole graphs compiled with --fuse against torch eager and torch.compile,
all timed in the same run, in interleaved rounds (median of --rounds, 3).

Cases come from the "graphs_bench" section of the manifest (bench=True cases
of test/GPU/cases/graphs/*.py). For each: the kgraph program, the case's torch
reference run eagerly on the GPU in the inputs' own dtypes, and
torch.compile of the same reference. Also reported: the kernel count, the
bytes the graph must move at least (inputs read once, outputs written once)
as a fraction of the device-to-device copy bandwidth measured in the same
run (%copy), and against a copy of the same byte count timed in the same
rounds (%copyN: small problems pay launch and ramp costs a 2 GB copy does
not), and a check of kgraph's outputs against torch eager's (with 4x the
case's tolerance, since eager rounds differently; a mismatch is reported as
WRONG and fails the run).

    python3 bench/bench_graphs.py --cases .gpu [--json out.json] [--filter RX]
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


def nbytes(t):
    return t.numel() * t.element_size()


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    benchlib.add_cases_args(ap)
    ap.add_argument("--method", choices=("auto", "do_bench", "events"),
                    default="auto")
    ap.add_argument("--filter", default=None, help="only cases matching RX")
    ap.add_argument("--no-compile", action="store_true",
                    help="leave torch.compile out")
    ap.add_argument("--rounds", type=int, default=3,
                    help="interleaved timing rounds; medians are reported")
    ap.add_argument("--no-cudnn-benchmark", action="store_true",
                    help="leave torch.backends.cudnn.benchmark off (default: "
                         "on, so torch's convolutions get cuDNN's fastest "
                         "algorithm for each shape)")
    args = ap.parse_args(argv)

    import torch
    import kgraph

    benchlib.require_gpu(torch)
    manifest, path, base = benchlib.read_manifest(args.cases)
    cases = manifest.get("graphs_bench", [])
    if args.filter:
        cases = [c for c in cases if re.search(args.filter, c["name"])]
    if not cases:
        sys.exit(f"error: {path} has no graphs_bench cases")
    method = benchlib.resolve_method(args.method)
    timer = benchlib.timer_of(method)
    benchlib.print_device(torch, manifest)
    torch.backends.cudnn.benchmark = not args.no_cudnn_benchmark
    print(f"torch.backends.cudnn.benchmark = {torch.backends.cudnn.benchmark}")
    # f32 references in f32: torch lets cuDNN convs (and, by setting, cuBLAS)
    # round f32 operands to TF32, which is neither what kgraph's f32 kernels
    # compute nor within the checks' f32 tolerance.
    benchlib.set_tf32(torch, False)
    torch.backends.cudnn.allow_tf32 = False
    dev = torch.device("cuda")

    # Copy bandwidth: 1 GiB read + 1 GiB written.
    src = torch.empty(256 * 1024 * 1024, dtype=torch.float32, device=dev)
    dst = torch.empty_like(src)
    copy_ms = timer(lambda: dst.copy_(src))
    copy_bw = 2 * nbytes(src) / copy_ms / 1e6  # GB/s
    del src, dst
    print(f"copy bandwidth {copy_bw:.0f} GB/s ({method})")

    rows, wrong = [], []
    print(f"{'case':<40} {'kern':>4} {'kgraph ms':>10} {'eager ms':>9} "
          f"{'compile ms':>10} {'vs eager':>8} {'vs comp':>8} {'%copy':>6} "
          f"{'%copyN':>6}")
    for c in cases:
        row = {"case": c["name"], "kernels": c.get("kernels")}
        rows.append(row)
        if c.get("status") != "ok":
            row["error"] = f"did not compile: {c.get('error') or c.get('reason')}"
            print(f"FAILED {c['name']}: {row['error']}")
            continue
        try:
            prog = kgraph.load(os.path.join(base, c["plan"]))
            ref = G.find_ref(c)
            gen = torch.Generator().manual_seed(0)
            xs = [x.to(dev) for x in G.make_inputs(torch, c, gen)]
            outs = [torch.empty(o["shape"], dtype=kgraph.torch_dtype(o["dtype"]),
                                device=dev) for o in c["outputs"]]
            prog.run(xs, outs)
            eager = ref(*xs)
            eager = list(eager) if isinstance(eager, (tuple, list)) else [eager]
            torch.cuda.synchronize()
            rtol, atol = c["tol"]
            for i, (o, e) in enumerate(zip(outs, eager)):
                err = G.compare(torch, o.cpu(), e.cpu(), c["outputs"][i],
                                (4 * rtol, 4 * atol))
                if err:
                    row["wrong"] = f"output {i} against torch eager: {err}"
                    wrong.append(c["name"])
            moved = sum(nbytes(x) for x in xs) + sum(nbytes(o) for o in outs)
            # A copy of the same bytes (half read, half written): small
            # problems pay launch and ramp costs a 2 GB copy does not.
            csrc = torch.empty(max(1, moved // 8), dtype=torch.float32, device=dev)
            cdst = torch.empty_like(csrc)
            contenders = {"kgraph_ms": lambda: prog.run(xs, outs),
                          "eager_ms": lambda: ref(*xs),
                          "copy_same_ms": lambda: cdst.copy_(csrc)}
            if not args.no_compile:
                compiled = torch.compile(ref)
                compiled(*xs)
                contenders["compile_ms"] = lambda: compiled(*xs)
            # Interleaved rounds: each round times every contender once, so
            # a slow spell of the GPU (clocks, a neighbour) hits all of them;
            # the median of the rounds is reported.
            times = {k: [] for k in contenders}
            for _ in range(args.rounds):
                for k, fn in contenders.items():
                    times[k].append(timer(fn))
            for k, ts in times.items():
                row[k] = statistics.median(ts)
                row[k.replace("_ms", "_rounds_ms")] = ts
            del csrc, cdst
            row["bytes"] = moved
            row["frac_copy"] = moved / row["kgraph_ms"] / 1e6 / copy_bw
            row["frac_copy_same"] = row["copy_same_ms"] / row["kgraph_ms"]
            row["vs_eager"] = row["eager_ms"] / row["kgraph_ms"]
            if "compile_ms" in row:
                row["vs_compile"] = row["compile_ms"] / row["kgraph_ms"]
        except Exception as e:  # report and go on with the other cases
            row["error"] = f"{type(e).__name__}: {e}"
            print(f"FAILED {c['name']}: {row['error']}")
            continue
        print(f"{c['name']:<40} {row['kernels'] or '?':>4} {row['kgraph_ms']:>10.4f} "
              f"{row['eager_ms']:>9.4f} {row.get('compile_ms', float('nan')):>10.4f} "
              f"{row['vs_eager']:>7.2f}x {row.get('vs_compile', float('nan')):>7.2f}x "
              f"{row['frac_copy']:>6.1%} {row['frac_copy_same']:>6.1%}"
              + ("  WRONG" if "wrong" in row else ""),
              flush=True)
        if "wrong" in row:
            print(f"  {row['wrong']}")
    errors = [r["case"] for r in rows if "error" in r]
    benchlib.write_json({"target": manifest.get("target"), "method": method,
                         "cudnn_benchmark": torch.backends.cudnn.benchmark,
                         "copy_gbps": copy_bw, "rows": rows, "wrong": wrong,
                         "errors": errors}, args.json, "bench_graphs.json")
    return 1 if wrong or errors else 0


if __name__ == "__main__":
    sys.exit(main())
