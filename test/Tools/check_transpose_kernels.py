#!/usr/bin/env python3
"""CPU check of transpose kernels and of data-movement ops fused into
elementwise kernels: compiles small cases of test/GPU/cases/graphs/
transpose.py (or of another module of that folder, its CPU_CASES: concat.py)
with kgraph-opt (their own flags: --fuse or not), runs every kernel of the
launch plan in order in the kernel interpreter (test/Tools/kinterp), and compares the
outputs with the float64 torch reference.

  /usr/bin/python3 test/Tools/check_transpose_kernels.py build/bin/kgraph-opt [concat]
"""
import importlib
import os
import sys

import numpy as np
import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, "..", "GPU", "cases"))
sys.path.insert(0, os.path.join(HERE, "..", "GPU", "cases", "graphs"))
from check_kernels_interp import compile_graph, compare, make_inputs  # noqa: E402
from kinterp.plan import Module, run_plan  # noqa: E402

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
TARGET = "sm_80"


def check(opt, case, seed=0):
    fplan, gen = compile_graph(opt, case.text, TARGET, "--fuse" in case.flags, case.flags)
    rng = np.random.default_rng(seed)
    inputs = make_inputs(rng, [(i.shape, i.dtype, i.lo, i.hi) for i in case.inputs])
    outs, unwritten = run_plan(fplan, Module(gen), dict(enumerate(inputs)))
    wide = []
    for i, x in zip(case.inputs, inputs):
        t = torch.from_numpy(x.astype(np.float64 if i.dtype in ("f32", "f16") else np.int64))
        wide.append(t != 0 if i.dtype == "i1" else t)
    ref = case.ref(*wide)
    refs = list(ref) if isinstance(ref, (tuple, list)) else [ref]
    out_bufs = {b["index"]: b for b in fplan["buffers"] if b["kind"] == "output"}
    ok = True
    for n, r in enumerate(refs):
        b = out_bufs[n]
        msg = compare(outs[n], r.to(torch.float64), b["shape"], b["dtype"], case.tol, unwritten[n])
        if msg:
            ok = False
            print(f"  {case.name}: output {n}: {msg}")
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
