#!/usr/bin/env python3
"""Times bench/gemm_variants/streamk_build.py's matmuls against cuBLAS
(torch.matmul, f16) in the same run, after a check against torch in f32
(also after the timed launches: a stream-K kernel's workspace must be
left as it found it)."""
import json
import os
import sys

import torch

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "python"))
import kgraph  # noqa: E402
from triton.testing import do_bench  # noqa: E402

d = os.path.abspath(sys.argv[1])
for e in json.load(open(os.path.join(d, "variants.json"))):
    m, n, k = e["m"], e["n"], e["k"]
    a = torch.randn(m, k, device="cuda", dtype=torch.float16)
    b = torch.randn(k, n, device="cuda", dtype=torch.float16)
    ref = a.float() @ b.float()
    y = torch.empty(m, n, device="cuda", dtype=torch.float16)
    flops = 2 * m * n * k
    ms_ref = do_bench(lambda: torch.matmul(a, b), warmup=25, rep=100, return_mode="median")
    line = [f"{e['name']:<20} cuBLAS {flops / ms_ref / 1e9:6.1f}"]
    for name in e["variants"]:
        prog = kgraph.load(os.path.join(d, f"{e['name']}__{name}.plan.json"))
        errs = []
        for timed in (False, True):
            if timed:
                ms = do_bench(lambda: prog.run([a, b], [y]), warmup=25, rep=100,
                              return_mode="median")
            y.fill_(float("nan"))
            prog.run([a, b], [y])
            errs.append(((y.float() - ref).norm() / ref.norm()).item())
        bad = "" if max(errs) < 1e-2 else f" WRONG {errs}"
        line.append(f"{name} {flops / ms / 1e9:6.1f} ({ms_ref / ms:.2f}{bad})")
    print("  ".join(line), flush=True)
