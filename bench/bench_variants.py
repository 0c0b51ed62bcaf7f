#!/usr/bin/env python3
"""Times launch-configuration variants of the elementwise benchmarks against
the device-to-device copy bandwidth, in one run.

    python3 bench/bench_variants.py .gpu/variants

Every ``<op>_b<block>_v<vector>_g<grid>_u<unroll>.plan.json`` in the folder (made by
scripts/build-bench-variants.sh) is checked against torch, then timed with
CUDA events (median over trials of back-to-back batches).
"""

import glob
import os
import sys

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), ".."))
sys.path.insert(0, os.path.join(REPO, "python"))
sys.path.insert(0, os.path.dirname(__file__))

from benchlib import time_events  # noqa: E402


def main(folder):
    import torch
    import kgraph

    plans = sorted(glob.glob(os.path.join(folder, "*_b*_g*_u*.plan.json")))
    if not plans:
        sys.exit(f"error: no variant plans in {folder}")
    n = 67108864
    gen = torch.Generator(device="cuda").manual_seed(1)
    a = torch.rand(n, device="cuda", generator=gen) * 20 - 10
    b = torch.rand(n, device="cuda", generator=gen) * 20 - 10
    c = torch.empty_like(a)
    copy_ms = time_events(lambda: c.copy_(a), 10, 20, 15)
    copy_bw = 8 * n / copy_ms / 1e6
    print(f"copy: {copy_ms:.4f} ms  {copy_bw:.1f} GB/s")
    print(f"{'variant':<32} {'ms':>8} {'GB/s':>8} {'of copy':>8}")
    for plan in plans:
        name = os.path.basename(plan)[: -len(".plan.json")]
        prog = kgraph.load(plan)
        op = name.split("_")[0]
        c.fill_(float("nan"))
        if op == "add":
            prog.run([a, b], [c])
            torch.testing.assert_close(c, a + b, rtol=0, atol=0)
            fn, nbytes = (lambda p=prog: p.run([a, b], [c])), 12 * n
        else:
            prog.run([a], [c])
            torch.testing.assert_close(c, torch.exp(a), rtol=1e-5, atol=1e-6)
            fn, nbytes = (lambda p=prog: p.run([a], [c])), 8 * n
        ms = time_events(fn, 10, 20, 15)
        bw = nbytes / ms / 1e6
        print(f"{name:<32} {ms:8.4f} {bw:8.1f} {bw / copy_bw:8.1%}")


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else os.path.join(REPO, ".gpu", "variants"))
