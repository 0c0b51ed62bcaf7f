#!/usr/bin/env python3
"""CPU check of stencil kernels: compiles small stencil groups with
kgraph-opt, runs the emitted kernel in test/Tools/interp_gpu_kernel.py and
compares with a float64 torch reference (conv2d, max_pool2d with -inf
padding, avg_pool2d with count_include_pad=False).

  /usr/bin/python3 test/Tools/check_stencil_kernels.py build/bin/kgraph-opt
"""
import json
import os
import subprocess
import sys
import tempfile

import numpy as np
import torch
import torch.nn.functional as F

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
# The GPU cases: graph_case.py and the stencil cases of graphs/stencil.py.
sys.path.insert(0, os.path.join(HERE, "..", "GPU", "cases"))
sys.path.insert(0, os.path.join(HERE, "..", "GPU", "cases", "graphs"))
import interp_gpu_kernel  # noqa: E402

import stencil  # noqa: E402  (test/GPU/cases/graphs/stencil.py)


def compile_case(opt, mlir, target="sm_80"):
    with tempfile.TemporaryDirectory() as d:
        src = os.path.join(d, "k.mlir")
        with open(src, "w") as f:
            f.write(mlir)
        subprocess.run([opt, f"--tile={target}", src, "-o", os.path.join(d, "k.ptx")], check=True)
        # The one function of the plan (version 2: functions[0]).
        plan = json.load(open(os.path.join(d, "k.plan.json")))["functions"][0]
        gen = subprocess.run(
            [opt, src, "--mlir-print-op-generic", "--pass-pipeline="
             f"builtin.module(func.func(kgraph-form-kernels),kgraph-tile{{target={target}}},"
             "kgraph-lower-to-gpu,canonicalize,cse)"],
            check=True, capture_output=True, text=True).stdout
    return plan, gen


NP = {"f32": np.float32, "f16": np.float16}


def check(opt, case, seed=0):
    plan, gen = compile_case(opt, case.text)
    assert len(plan["kernels"]) == 1, plan["kernels"]
    k = plan["kernels"][0]
    rng = np.random.default_rng(seed)
    inputs = [rng.uniform(i.lo, i.hi, i.shape).astype(NP[i.dtype]) for i in case.inputs]
    bufs = {b["id"]: b for b in plan["buffers"]}
    args, outs = [], []
    for a in k["args"]:
        b = bufs[a["buffer"]]
        if b["kind"] == "input":
            args.append(inputs[b["index"]].astype(np.float32).astype(NP[b["dtype"]]).copy())
        else:
            arr = np.full(b["shape"], np.nan, NP[b["dtype"]])
            args.append(arr)
            outs.append(arr)
    interp_gpu_kernel.run_kernel(gen, args, k["grid"], k["block"])
    ref = case.ref(*[torch.from_numpy(x.astype(np.float64)) for x in inputs])
    if not isinstance(ref, tuple):
        ref = (ref,)
    rtol, atol = case.tol
    ok = True
    for out, r in zip(outs, ref):
        r = r.numpy()
        err = np.abs(out.astype(np.float64) - r)
        bad = ~(err <= atol + rtol * np.abs(r))
        if bad.any():
            ok = False
            idx = np.argwhere(bad)[:5]
            print(f"  {case.name}: {bad.sum()} of {bad.size} wrong, e.g. at {idx.tolist()}: "
                  f"{[float(out[tuple(i)]) for i in idx]} vs {[float(r[tuple(i)]) for i in idx]}")
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
