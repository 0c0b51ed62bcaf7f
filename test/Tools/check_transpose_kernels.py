#!/usr/bin/env python3
"""CPU check of transpose kernels and of data-movement ops fused into
elementwise kernels: compiles small cases of test/GPU/cases/graphs/
transpose.py (or of another module of that folder, its CPU_CASES: concat.py)
with kgraph-opt (their own flags: --fuse or not), runs every kernel of the
launch plan in order in test/Tools/interp_gpu_kernel.py, and compares the
outputs with the float64 torch reference.

  /usr/bin/python3 test/Tools/check_transpose_kernels.py build/bin/kgraph-opt [concat]
"""
import json
import os
import subprocess
import sys
import tempfile

import numpy as np
import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, "..", "GPU", "cases"))
sys.path.insert(0, os.path.join(HERE, "..", "GPU", "cases", "graphs"))
import importlib  # noqa: E402

import interp_gpu_kernel  # noqa: E402

#: Cases small enough for the interpreter (no matmul, no bf16).
CPU_CASES = [
    "transpose_2d_f32_odd", "transpose_2d_f32_vec", "transpose_2d_i1",
    "transpose_2d_i8", "transpose_nchw_nhwc_f32", "transpose_nhwc_nchw_f16",
    "transpose_rank5_i32", "transpose_rank3_outer_f32",
    "transpose_heads_f32", "transpose_heads_odd_f16",
    "transpose_unit_dims_f32", "transpose_unfused_f16",
    "transpose_add_relu_f32", "transpose_slice_broadcast_f16",
    "slice_strided_lone_f32", "slice_misaligned_lone_f32",
    "broadcast_to_lone_f16",
]
NP = {"f32": np.float32, "f16": np.float16, "i8": np.int8, "i32": np.int32,
      "i1": np.int8}
TARGET = "sm_80"


def compile_case(opt, case):
    flags = case.flags
    fuse = "func.func(kgraph-fuse)," if "--fuse" in flags else ""
    with tempfile.TemporaryDirectory() as d:
        src = os.path.join(d, "k.mlir")
        with open(src, "w") as f:
            f.write(case.text)
        subprocess.run([opt, *flags, f"--tile={TARGET}", src, "-o",
                        os.path.join(d, "k.ptx")], check=True)
        plan = json.load(open(os.path.join(d, "k.plan.json")))
        gen = subprocess.run(
            [opt, src, "--mlir-print-op-generic", "--pass-pipeline="
             f"builtin.module({fuse}func.func(kgraph-form-kernels),"
             f"kgraph-tile{{target={TARGET}}},kgraph-lower-to-gpu,canonicalize,cse)"],
            check=True, capture_output=True, text=True).stdout
    return plan, gen


def make_input(rng, i):
    if i.dtype == "i1":
        return (rng.uniform(0, 1, i.shape) < 0.5).astype(np.int8)
    if i.dtype in ("i8", "i32"):
        return rng.integers(int(i.lo), int(i.hi) + 1, i.shape).astype(NP[i.dtype])
    return rng.uniform(i.lo, i.hi, i.shape).astype(NP[i.dtype])


def check(opt, case, seed=0):
    plan, gen = compile_case(opt, case)
    # Plan version 2 holds one entry per function; version 1 is the function.
    fplan = plan["functions"][0] if "functions" in plan else plan
    rng = np.random.default_rng(seed)
    inputs = [make_input(rng, i) for i in case.inputs]
    buffers = {}
    outputs = {}
    for b in fplan["buffers"]:
        if b["kind"] == "input":
            buffers[b["id"]] = inputs[b["index"]].copy()
        else:
            dt = NP[b["dtype"]]
            fill = np.nan if np.issubdtype(dt, np.floating) else 99
            buffers[b["id"]] = np.full(b["shape"], fill, dt)
            if b["kind"] == "output":
                outputs[b["index"]] = buffers[b["id"]]
    for k in fplan["kernels"]:
        args = [buffers[a["buffer"]] for a in k["args"]]
        interp_gpu_kernel.run_kernel(gen, args, k["grid"], k["block"], k["name"])
    wide = []
    for i, x in zip(case.inputs, inputs):
        t = torch.from_numpy(x.astype(np.float64 if i.dtype in ("f32", "f16") else np.int64))
        wide.append(t != 0 if i.dtype == "i1" else t)
    ref = case.ref(*wide)
    refs = list(ref) if isinstance(ref, (tuple, list)) else [ref]
    rtol, atol = case.tol
    ok = True
    for n, r in enumerate(refs):
        out = outputs[n].astype(np.float64)
        r = r.to(torch.float64).numpy()
        bad = ~(np.abs(out - r) <= atol + rtol * np.abs(r))
        if bad.any():
            ok = False
            idx = np.argwhere(bad)[:5]
            print(f"  {case.name}: {bad.sum()} of {bad.size} wrong, e.g. at "
                  f"{idx.tolist()}: {[float(out[tuple(i)]) for i in idx]} vs "
                  f"{[float(r[tuple(i)]) for i in idx]}")
    return ok, len(fplan["kernels"])


def main():
    opt = sys.argv[1]
    # test/GPU/cases/graphs/<module>.py; transpose.py's list is CPU_CASES here.
    module = importlib.import_module(sys.argv[2] if len(sys.argv) > 2 else "transpose")
    cases = {c.name: c for c in module.CASES}
    failures = 0
    for name in getattr(module, "CPU_CASES", CPU_CASES):
        ok, kernels = check(opt, cases[name])
        print(f"{'ok  ' if ok else 'FAIL'} {name} ({kernels} kernel{'s' if kernels != 1 else ''})",
              flush=True)
        failures += not ok
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
