#!/usr/bin/python3
"""The matmul cost model's register estimate against ptxas's count, per
configuration: how MatmulModel.cpp's register terms were fitted (the
address registers of cp.async wgmma copies, S33).

For each graph (one GEMM group: a kgraph.matmul or kgraph.conv2d), a spread
of the model's ranked candidates (distinct block tiles, warp grids,
instructions; cp.async copies, no stream-K) is pinned in turn, the model's
estimate read from kgraph-tile's report and the kernel compiled and
assembled with ptxas -v. Needs no GPU.

    scripts/model-registers.py [--opt build/bin/kgraph-opt] [--ptxas PTXAS]
        [--per-graph 16] [--target sm_90a] [--json OUT] GRAPH.mlir...

Prints one line per configuration: the model's registers (and blocks per
SM), ptxas's registers and spill bytes; exits 1 if any configuration fails
to compile.
"""

import argparse
import concurrent.futures
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), ".."))
FIELD = re.compile(r"(\w+) = (\[[^\]]*\]|\w+)")
REMARK = re.compile(r"[^:]*:(\d+):\d+: remark: .* (\d+) regs/thread .*? (\d+) blocks/SM")


def fields(config):
    return dict(FIELD.findall(config))


def run(cmd):
    return subprocess.run(cmd, capture_output=True, text=True)


def candidates(opt, graph, target, per_graph):
    """The tiled IR, the index of its GEMM group's line, and a spread of the
    model's ranked cp.async candidates for it."""
    r = run([opt, "--fuse", f"--tile={target}", "--emit=tiled", graph])
    if r.returncode:
        raise RuntimeError(f"{graph}: kgraph-opt failed:\n{r.stderr.strip()}")
    lines = r.stdout.split("\n")
    groups = [i for i, l in enumerate(lines)
              if "kgraph.fused" in l and "matmul_config" in l]
    if len(groups) != 1:
        raise RuntimeError(f"{graph}: {len(groups)} GEMM groups (need one)")
    r = run([opt, "--fuse", f"--tile={target}", "--list-configs=100000", graph])
    if r.returncode:
        raise RuntimeError(f"{graph}: --list-configs failed:\n{r.stderr.strip()}")
    ranked = [c["config"] for g in json.loads(r.stdout)
              if g["problem"].startswith("gemm") for c in g["candidates"]]
    seen, spread = set(), []
    for c in ranked:
        f = fields(c)
        if f.get("copy") == "tma" or f.get("stream_k"):
            continue
        key = tuple(f.get(k) for k in ("tile_m", "tile_n", "tile_k", "warps_m",
                                       "warps_n", "instruction", "load_width"))
        if key not in seen:
            seen.add(key)
            spread.append(c)
    step = max(1, len(spread) // per_graph)
    return lines, groups[0], spread[::step][:per_graph]


def measure(opt, ptxas, target, graph, lines, index, config):
    pinned = list(lines)
    pinned[index] = re.sub(r"#kgraph\.matmul_config<[^>]*>", config, pinned[index])
    row = dict(graph=os.path.basename(graph), config=config)
    with tempfile.TemporaryDirectory() as d:
        src = os.path.join(d, "g.mlir")
        with open(src, "w") as f:
            f.write("\n".join(pinned))
        r = run([opt, f"--pass-pipeline=builtin.module(kgraph-tile{{target={target} report=true}})",
                 src, "-o", os.devnull])
        for l in r.stderr.splitlines():
            m = REMARK.match(l)
            if m and int(m.group(1)) - 1 == index:
                row["model_regs"], row["model_blocks_per_sm"] = int(m.group(2)), int(m.group(3))
        ptx = os.path.join(d, "g.ptx")
        r = run([opt, f"--tile={target}", src, "-o", ptx])
        if r.returncode:
            row["error"] = r.stderr.strip()[-400:]
            return row
        r = run([ptxas, f"-arch={target}", "-v", ptx, "-o", os.devnull])
        if r.returncode:
            row["error"] = r.stderr.strip()[-400:]
            return row
    # The GEMM kernel is the one with the most registers (a graph's other
    # kernels, the stem's space-to-depth copies say, use few).
    regs = [int(x) for x in re.findall(r"Used (\d+) registers", r.stderr)]
    spills = [int(x) for x in re.findall(r"(\d+) bytes spill stores", r.stderr)]
    row["ptxas_regs"] = max(regs) if regs else None
    row["spill_bytes"] = max(spills) if spills else 0
    return row


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("graphs", nargs="+", metavar="GRAPH.mlir")
    ap.add_argument("--opt", default=os.path.join(ROOT, "build", "bin", "kgraph-opt"))
    ap.add_argument("--ptxas", default=shutil.which("ptxas") or "/usr/local/cuda/bin/ptxas")
    ap.add_argument("--target", default="sm_90a")
    ap.add_argument("--per-graph", type=int, default=16)
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    ap.add_argument("--json", help="write the rows here")
    args = ap.parse_args(argv)
    for tool in (args.opt, args.ptxas):
        if not (os.path.isfile(tool) and os.access(tool, os.X_OK)):
            sys.exit(f"model-registers.py: {tool} is not an executable file")
    jobs = []
    try:
        for g in args.graphs:
            lines, index, configs = candidates(args.opt, g, args.target, args.per_graph)
            jobs += [(g, lines, index, c) for c in configs]
    except (RuntimeError, OSError, json.JSONDecodeError) as e:
        sys.exit(f"model-registers.py: {e}")
    rows, failed = [], 0
    with concurrent.futures.ThreadPoolExecutor(max(1, args.jobs)) as ex:
        for row in ex.map(lambda j: measure(args.opt, args.ptxas, args.target, *j), jobs):
            rows.append(row)
            f = fields(row["config"])
            what = (f"{f.get('tile_m')}x{f.get('tile_n')}x{f.get('tile_k')} "
                    f"w{int(f.get('warps_m', 1)) * int(f.get('warps_n', 1))} "
                    f"s{f.get('stages')} {f.get('instruction')}")
            if "error" in row:
                failed += 1
                print(f"{row['graph'][:40]:40s} {what:28s} FAILED: {row['error'].splitlines()[-1]}")
                continue
            print(f"{row['graph'][:40]:40s} {what:28s} model {row.get('model_regs')} "
                  f"({row.get('model_blocks_per_sm')}/SM) ptxas {row['ptxas_regs']} "
                  f"spill {row['spill_bytes']}", flush=True)
    if args.json:
        with open(args.json, "w") as f:
            json.dump(rows, f, indent=1)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
