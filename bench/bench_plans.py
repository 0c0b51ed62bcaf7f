#!/usr/bin/env python3
"""Times compiled plans of the same function against each other, in one run:
configuration variants of one graph (e.g. pinned with --emit=tiled and
compiled again).

    python3 bench/bench_plans.py BASE.plan.json VARIANT.plan.json ...

(scripts/pin-configs.py builds such variants of a one-kernel graph.)

All plans get the same random inputs (floats in [-1, 1)); each variant's
outputs must match the first plan's (rtol 1e-2, atol 1e-2, which a wrong
index breaks and a different summation order does not), else it is
reported WRONG and the exit status is 1. Times: median of 3 rounds of
triton's do_bench (CUDA events without triton), with the bytes the plan's
kernels move as a fraction of the device-to-device copy bandwidth measured
in the same run.
"""
import os
import statistics
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, "..", "python"))
import benchlib  # noqa: E402


def main(paths):
    if not paths:
        sys.exit("usage: " + next(line.strip() for line in __doc__.splitlines()
                                  if "bench_plans.py" in line))
    import torch
    import kgraph
    from kgraph.runtime import torch_dtype

    benchlib.require_gpu(torch)
    progs = [kgraph.load(p) for p in paths]
    gen = torch.Generator(device="cuda").manual_seed(1)

    def make(spec):
        dt = torch_dtype(spec.dtype)
        if not dt.is_floating_point:
            sys.exit(f"error: {spec} is not a float input")
        return (torch.rand(tuple(spec.shape), device="cuda", generator=gen,
                           dtype=torch.float32) * 2 - 1).to(dt)

    ins = [make(s) for s in progs[0].inputs]
    outs = [[torch.empty(tuple(s.shape), dtype=torch_dtype(s.dtype),
                         device="cuda").fill_(float("nan"))
             for s in p.outputs] for p in progs]
    for p, o in zip(progs, outs):
        p.run(ins, o)
    torch.cuda.synchronize()
    wrong = 0
    for path, o in zip(paths[1:], outs[1:]):
        for a, b in zip(outs[0], o):
            if not torch.allclose(a.float(), b.float(), rtol=1e-2, atol=1e-2):
                print(f"WRONG {os.path.basename(path)}: max |diff| "
                      f"{(a.float() - b.float()).abs().nan_to_num(1e9).max().item():.3g}")
                wrong += 1
    n = 1 << 26
    x = torch.empty(n, device="cuda")
    y = torch.empty_like(x)
    copy_ms = benchlib.time_events(lambda: y.copy_(x), 10, 20, 15)
    copy_gbs = 8 * n / copy_ms / 1e6
    try:
        from triton.testing import do_bench
    except ImportError:
        do_bench = None
    times = [[] for _ in progs]
    for _ in range(3):
        for i, (p, o) in enumerate(zip(progs, outs)):
            fn = (lambda p=p, o=o: p.run(ins, o))
            times[i].append(do_bench(fn, warmup=25, rep=100) if do_bench
                            else benchlib.time_events(fn, 10, 20, 15))
    print(f"copy: {copy_gbs:.0f} GB/s")
    print(f"{'plan':<60} {'ms':>9} {'vs first':>9} {'of copy':>8}")
    base = statistics.median(times[0])
    for path, p, t in zip(paths, progs, times):
        ms = statistics.median(t)
        moved = sum(k.bytes or 0 for k in p.plan.kernels)
        frac = f"{moved / ms / 1e6 / copy_gbs:8.1%}" if moved else "       -"
        print(f"{os.path.basename(path)[:60]:<60} {ms:9.4f} {base / ms:8.2f}x {frac}")
    return 1 if wrong else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
