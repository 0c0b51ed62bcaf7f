#!/usr/bin/env python3
"""Runs one compiled plan a few times on random inputs, for a profiler:

    ncu --clock-control none -k regex:NAME python3 bench/run_plan.py CASE.plan.json [N]

Inputs are random (floats in [-1, 1), integers in [0, 4), booleans at
random); outputs are preallocated. Nothing is checked: the GPU tests do that.
"""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "python"))


def main():
    if len(sys.argv) not in (2, 3):
        sys.exit("usage: " + next(line.strip() for line in __doc__.splitlines()
                                  if "run_plan.py" in line))
    import torch
    import kgraph
    from kgraph.runtime import torch_dtype

    prog = kgraph.load(sys.argv[1])
    reps = int(sys.argv[2]) if len(sys.argv) == 3 else 3

    def make(spec, fill):
        dt = torch_dtype(spec.dtype)
        t = torch.empty(tuple(spec.shape), dtype=dt, device="cuda")
        if fill:
            if dt.is_floating_point:
                t.uniform_(-1, 1)
            elif dt == torch.bool:
                t.copy_(torch.rand(t.shape, device="cuda") < 0.5)
            else:
                t.random_(0, 4)
        return t

    ins = [make(s, True) for s in prog.inputs]
    outs = [make(s, False) for s in prog.outputs]
    for _ in range(reps):
        prog.run(ins, outs)
    torch.cuda.synchronize()


if __name__ == "__main__":
    main()
