"""GPU correctness of the whole-graph (fusion) cases of the manifest.

For each case of section "graphs" (test/GPU/cases/graph_case.py,
test/GPU/cases/graphs/*.py; compiled with kgraph-opt --fuse): fresh random
inputs (seeded per run and case), every output poisoned first (NaN, then a
finite sentinel; 0x55/0xAA bytes for integers) and followed by guard
elements, the program run, each output compared with the case's torch
reference evaluated in float64 on the CPU, within the case's tolerance.
Also checks that nothing was written past an output, that every element was
written (the two poisons give the same bytes) and that the inputs were not
modified. The kernel count was checked when the case was built.
"""

import os
import sys

import elementwise_ref as ER
import gpu_harness as H

sys.path.insert(0, H.CASES)
import graph_case as G  # noqa: E402

GUARD = 256
#: Poison values per output dtype: two, so an unwritten element shows.
POISONS = {"f32": (float("nan"), -7.25e30), "f16": (float("nan"), -6.0e4),
           "bf16": (float("nan"), -7.25e30), "i32": (0x55555555, -0x2AAAAAAB),
           "i8": (0x55, -0x56), "i1": (0x55, 0xAA)}


def run_case(case, prog, dev_inputs, gpu, ref_outs, torch):
    """Runs ``prog`` once per poison; returns the message of the first
    problem, or None."""
    name = case["name"]
    before = [H.as_bytes(x) for x in dev_inputs]
    runs = []
    for k in range(2):
        outs, bufs = [], []
        for spec in case["outputs"]:
            dt = spec["dtype"]
            out, buf = H.poisoned_output(spec, POISONS[dt][k], gpu, GUARD,
                                         ER.TORCH_DTYPES)
            outs.append(out)
            bufs.append(buf)
        guards = [H.as_bytes(b[-GUARD:]) for b in bufs]
        prog.run(dev_inputs, outs)
        torch.cuda.synchronize(gpu)
        for i, (b, g) in enumerate(zip(bufs, guards)):
            if not torch.equal(H.as_bytes(b[-GUARD:]), g):
                return f"{name}: the kernel wrote past the end of output {i}"
        for i, (out, spec, ref) in enumerate(zip(outs, case["outputs"], ref_outs)):
            err = G.compare(torch, out.cpu(), ref, spec, case["tol"])
            if err:
                return f"{name}: output {i}: {err}"
        runs.append([H.as_bytes(o) for o in outs])
    for i, (a, b) in enumerate(zip(runs[0], runs[1])):
        if not torch.equal(a, b):
            return f"{name}: output {i}: {H.UNWRITTEN}"
    for i, (x, b) in enumerate(zip(dev_inputs, before)):
        if not torch.equal(H.as_bytes(x), b):
            return f"{name}: input {i} was modified"
    return None


def test_graph(graph_case, seed, cases_dir, request):
    case = graph_case
    H.skip_or_fail_uncompiled(case)
    gpu = request.getfixturevalue("gpu")
    import torch
    import kgraph

    prog = kgraph.load(os.path.join(cases_dir, case["plan"]))
    if case["kernels"] is not None:
        # Every kernel of the PTX, as the case build counts them: a call's
        # and the once kernels run at load.
        spec = prog.plan.function_plan()
        count = len(spec.kernels) + len(spec.once_kernels)
        assert count == case["kernels"], (
            f"the plan has {count} kernels ({len(spec.once_kernels)} once), "
            f"the case expects {case['kernels']}")
    gen = torch.Generator().manual_seed(ER.case_seed(seed, case["name"]))
    inputs = G.make_inputs(torch, case, gen)
    ref_outs = G.reference(torch, case, G.find_ref(case), inputs)
    assert len(ref_outs) == len(case["outputs"]), (
        f"the reference returns {len(ref_outs)} values, the program has "
        f"{len(case['outputs'])} outputs")
    dev_inputs = [x.to(gpu) for x in inputs]
    err = run_case(case, prog, dev_inputs, gpu, ref_outs, torch)
    assert err is None, f"(seed {seed}) {err}"
