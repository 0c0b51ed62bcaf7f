#!/usr/bin/env python3
"""Builds configuration variants of a one-kernel graph, for
bench/bench_plans.py: the model's default and each given configuration
pinned on the kernel's group.

    scripts/pin-configs.py KGRAPH_OPT GRAPH.mlir OUTDIR [--target sm_90a]
        [--flags '--space-to-depth-convs'] [--family matmul_config]
        [--prefix v_s2d_] CONFIG...

GRAPH is compiled with --fuse --tile=TARGET --emit=tiled (and --flags);
the `kgraph.config` of its one kernel group (with --family, its one group
whose config is a #kgraph.<family>) is replaced by each CONFIG (a full
attribute, e.g. '#kgraph.window_config<vector_width = 8, block_x = 16,
block_y = 16, grid_size = 784, strip = 4>') and compiled again. Writes
OUTDIR/<prefix>default.{mlir,ptx,plan.json} and
OUTDIR/<prefix><i>.{mlir,ptx,plan.json} (prefix: a_ for the default, v for
the variants, unless --prefix);
prints each variant's config, registers and spills (ptxas -v, when ptxas is
found). A configuration the compiler rejects is reported and skipped
(exit 1 at the end).
"""
import argparse
import os
import re
import shutil
import subprocess
import sys

CONFIG = re.compile(r"kgraph\.config = (#kgraph\.[a-z_]+<[^>]*>)")


def ptxas_report(ptx, target):
    ptxas = shutil.which("ptxas") or "/usr/local/cuda/bin/ptxas"
    if not os.path.exists(ptxas):
        return ""
    arch = "sm_75" if target == "sm_70" else target
    out = subprocess.run([ptxas, f"-arch={arch}", "-v", ptx, "-o", os.devnull],
                         capture_output=True, text=True)
    regs = re.findall(r"Used (\d+) registers", out.stderr)
    spills = re.findall(r"(\d+) bytes spill stores", out.stderr)
    return f"{','.join(regs)} registers, {','.join(spills)} B spilled"


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("kgraph_opt")
    ap.add_argument("graph")
    ap.add_argument("outdir")
    ap.add_argument("configs", nargs="+")
    ap.add_argument("--target", default="sm_90a")
    ap.add_argument("--flags", default="", help="extra kgraph-opt flags (space-separated)")
    ap.add_argument("--family", help="the group whose config is a #kgraph.<FAMILY>")
    ap.add_argument("--prefix", help="output names: PREFIXdefault, PREFIX<i>")
    args = ap.parse_args()
    tiled = subprocess.run([args.kgraph_opt, "--fuse", f"--tile={args.target}",
                            *args.flags.split(), "--emit=tiled", args.graph],
                           capture_output=True, text=True)
    if tiled.returncode != 0:
        sys.exit(f"error: {args.graph} does not compile:\n{tiled.stderr}")
    found = CONFIG.findall(tiled.stdout)
    if args.family:
        found = [c for c in found if c.startswith(f"#kgraph.{args.family}<")]
    if len(found) != 1:
        sys.exit(f"error: {args.graph} has {len(found)} kernel groups"
                 f"{' of ' + args.family if args.family else ''}; variants need exactly one")
    os.makedirs(args.outdir, exist_ok=True)
    failed = 0
    first, rest = ("a_", "v") if args.prefix is None else (args.prefix, args.prefix)
    for name, config in [(first + "default", found[0])] + [
            (f"{rest}{i}", c) for i, c in enumerate(args.configs)]:
        mlir = os.path.join(args.outdir, name + ".mlir")
        with open(mlir, "w") as f:
            f.write(tiled.stdout.replace(found[0], config))
        ptx = os.path.join(args.outdir, name + ".ptx")
        out = subprocess.run([args.kgraph_opt, f"--tile={args.target}", mlir,
                              "-o", ptx], capture_output=True, text=True)
        if out.returncode != 0:
            print(f"{name}: REJECTED {config}\n  {out.stderr.strip()}")
            failed += 1
            continue
        print(f"{name}: {config}  {ptxas_report(ptx, args.target)}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
