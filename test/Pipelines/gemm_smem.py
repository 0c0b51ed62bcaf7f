"""Checks that the GEMM model's shared memory is the emitted kernel's.

For a compiled case (its .mlir, the kgraph-opt flags it was compiled with
and the .plan.json written beside its PTX): the case is tiled again
(``--emit=tiled``), kgraph-tile{report=true} remarks the model's estimate of
every GEMM group of the tiled IR (``matmul smem N B, ...``), and each figure
must equal the ``shared_bytes`` of that group's kernel in the plan (groups
and kernels are in the same order, one kernel per group).

    gemm_smem.py KGRAPH_OPT TARGET CASE.mlir PLAN.json [FLAG...]

prints "N GEMM kernels agree" or one line per mismatch (exit 1). Also
imported by scripts/build-gpu-cases.py, which checks every GPU case.
"""

import json
import os
import re
import subprocess
import sys
import tempfile

#: The kernel-config attribute of every group of the tiled IR, in order.
_CONFIG = re.compile(r"kgraph\.config = #kgraph\.(\w+)_config<")
#: kgraph-tile{report=true}'s remark on a GEMM group.
_REMARK = re.compile(r"remark: (?:matmul|conv2d) smem (\d+) B")


def _run(cmd, stdin=None):
    p = subprocess.run(cmd, input=stdin, stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, text=True)
    return p.returncode, p.stdout, p.stderr


def check(kgraph_opt, target, mlir, plan, flags=()):
    """Returns (number of GEMM kernels checked, list of mismatches)."""
    flags = [f for f in flags if not f.startswith("--tile")]
    # The tiled IR goes to a file of a scratch folder: -o names a file.
    with tempfile.TemporaryDirectory() as scratch:
        out = os.path.join(scratch, "tiled.mlir")
        rc, _, err = _run([kgraph_opt, f"--tile={target}", *flags,
                           "--emit=tiled", mlir, "-o", out])
        if rc != 0:
            return 0, [f"{mlir}: --emit=tiled failed: {err.strip()}"]
        with open(out) as f:
            tiled = f.read()
    kinds = _CONFIG.findall(tiled)
    if "matmul" not in kinds:
        return 0, []
    rc, _, err = _run([kgraph_opt, "--mlir-print-op-on-diagnostic=false",
                       "--pass-pipeline=builtin.module(kgraph-tile{target="
                       f"{target} report=true}})", "-o", "/dev/null"],
                      stdin=tiled)
    if rc != 0:
        return 0, [f"{mlir}: kgraph-tile on the tiled IR failed: "
                   f"{err.strip()}"]
    model = [int(n) for n in _REMARK.findall(err)]
    with open(plan) as f:
        data = json.load(f)
    # Every function's kernels, in module order (version 1: the one's).
    # A concat written in place outside any group fills its constant
    # segments with a kernel of its own, which has no ops and no group.
    kernels = [k for fn in data.get("functions", [data]) for k in fn["kernels"]
               if k.get("ops") != []]
    errors = []
    if len(kernels) != len(kinds):
        return 0, [f"{plan}: {len(kernels)} kernels but {len(kinds)} groups "
                   f"in the tiled IR"]
    gemm = [k for k, kind in zip(kernels, kinds) if kind == "matmul"]
    if len(model) != len(gemm):
        return 0, [f"{mlir}: {len(model)} model remarks for {len(gemm)} "
                   f"GEMM groups"]
    for kernel, bytes_ in zip(gemm, model):
        if kernel["shared_bytes"] != bytes_:
            errors.append(f"{plan}: kernel {kernel['name']} has "
                          f"{kernel['shared_bytes']} bytes of dynamic shared "
                          f"memory, the model {bytes_}")
    return len(gemm), errors


def main():
    kgraph_opt, target, mlir, plan, *flags = sys.argv[1:]
    n, errors = check(kgraph_opt, target, mlir, plan, flags)
    for e in errors:
        print(e)
    if errors:
        sys.exit(1)
    print(f"{n} GEMM kernels agree")


if __name__ == "__main__":
    main()
