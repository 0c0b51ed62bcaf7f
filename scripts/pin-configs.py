#!/usr/bin/env python3
"""Builds configuration variants of a one-kernel graph, for
bench/bench_plans.py: the model's default and each given configuration
pinned on the kernel's group.

    scripts/pin-configs.py KGRAPH_OPT GRAPH.mlir OUTDIR [--target sm_90a] CONFIG...

GRAPH is compiled with --fuse --tile=TARGET --emit=tiled; its one
kgraph.fused group's `kgraph.config` is replaced by each CONFIG (a full
attribute, e.g. '#kgraph.window_config<vector_width = 8, block_x = 16,
block_y = 16, grid_size = 784, strip = 4>') and compiled again. Writes
OUTDIR/a_default.{mlir,ptx,plan.json} and OUTDIR/v<i>.{mlir,ptx,plan.json};
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
    args = ap.parse_args()
    tiled = subprocess.run([args.kgraph_opt, "--fuse", f"--tile={args.target}",
                            "--emit=tiled", args.graph],
                           capture_output=True, text=True)
    if tiled.returncode != 0:
        sys.exit(f"error: {args.graph} does not compile:\n{tiled.stderr}")
    found = CONFIG.findall(tiled.stdout)
    if len(found) != 1:
        sys.exit(f"error: {args.graph} has {len(found)} kernel groups; "
                 "variants need exactly one")
    os.makedirs(args.outdir, exist_ok=True)
    failed = 0
    for name, config in [("a_default", found[0])] + [
            (f"v{i}", c) for i, c in enumerate(args.configs)]:
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
