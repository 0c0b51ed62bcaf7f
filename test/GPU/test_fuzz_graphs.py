"""GPU correctness of the random-graph cases (manifest section "fuzz",
written by scripts/build-gpu-cases.py from test/fuzz/gpu_cases.py: a fresh
seeded sample per build). Each case is run and checked like a hand-written
graph case (test_graphs.run_case: two poisons, guard elements, untouched
inputs) against its torch reference in float64 on the CPU, rebuilt from the
graph's seed in the manifest entry."""

import os
import sys

import elementwise_ref as ER
import gpu_harness as H
import test_graphs as TG

sys.path.insert(0, H.CASES)
sys.path.insert(0, os.path.join(H.REPO, "test", "fuzz"))
import graph_case as G  # noqa: E402
import gpu_cases  # noqa: E402  (test/fuzz/gpu_cases.py)


def test_fuzz_graph(fuzz_case, seed, cases_dir, request):
    case = fuzz_case
    H.skip_or_fail_uncompiled(case)
    gpu = request.getfixturevalue("gpu")
    import torch
    import kgraph

    prog = kgraph.load(os.path.join(cases_dir, case["plan"]))
    gen = torch.Generator().manual_seed(ER.case_seed(seed, case["name"]))
    inputs = G.make_inputs(torch, case, gen)
    ref_outs = G.reference(torch, case, gpu_cases.find_ref(case), inputs)
    assert len(ref_outs) == len(case["outputs"]), (
        f"the reference returns {len(ref_outs)} values, the program has "
        f"{len(case['outputs'])} outputs")
    dev_inputs = [x.to(gpu) for x in inputs]
    err = TG.run_case(case, prog, dev_inputs, gpu, ref_outs, torch)
    assert err is None, f"(seed {seed}, graph {case['graph']}) {err}"
