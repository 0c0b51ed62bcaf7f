#!/usr/bin/env python3
"""CPU check of stencil kernels: compiles small stencil groups with
kgraph-opt, runs the emitted kernel in the kernel interpreter
(test/Tools/kinterp) and
compares with a float64 torch reference (conv2d, max_pool2d with -inf
padding, avg_pool2d with count_include_pad=False).

  /usr/bin/python3 test/Tools/check_stencil_kernels.py build/bin/kgraph-opt
"""
import os
import sys

import numpy as np
import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
# The GPU cases: graph_case.py and the stencil cases of graphs/stencil.py.
sys.path.insert(0, os.path.join(HERE, "..", "GPU", "cases"))
sys.path.insert(0, os.path.join(HERE, "..", "GPU", "cases", "graphs"))
from check_kernels_interp import compile_graph, compare, make_inputs  # noqa: E402
from kinterp.plan import Module, run_plan  # noqa: E402

import stencil  # noqa: E402  (test/GPU/cases/graphs/stencil.py)


def check(opt, case, seed=0):
    plan, gen = compile_graph(opt, case.text, "sm_80", fuse=False)
    assert len(plan["kernels"]) == 1, plan["kernels"]
    rng = np.random.default_rng(seed)
    inputs = make_inputs(rng, [(i.shape, i.dtype, i.lo, i.hi) for i in case.inputs])
    outs, unwritten = run_plan(plan, Module(gen), dict(enumerate(inputs)))
    ref = case.ref(*[torch.from_numpy(x.astype(np.float64)) for x in inputs])
    if not isinstance(ref, tuple):
        ref = (ref,)
    out_bufs = {b["index"]: b for b in plan["buffers"] if b["kind"] == "output"}
    ok = True
    for n, r in enumerate(ref):
        b = out_bufs[n]
        msg = compare(outs[n], r, b["shape"], b["dtype"], case.tol, unwritten[n])
        if msg:
            ok = False
            print(f"  {case.name}: output {n}: {msg}")
    return ok


def main():
    opt = sys.argv[1]
    names = sys.argv[2:]
    failures = 0
    for case in stencil.CPU_CASES:
        if names and case.name not in names:
            continue
        ok = check(opt, case)
        print(("ok   " if ok else "FAIL ") + case.name, flush=True)
        failures += not ok
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
