"""GPU correctness of every kgraph.matmul case of the manifest.

For each case compiled by scripts/build-gpu-cases.py (section "matmul"):
fresh random inputs (floats uniform in [-1, 1], i8 in [-8, 8]; seeded per
run, the seed is in the pytest header), outputs poisoned first (NaN; two
sentinels for i32) and followed by guard elements, written through
Program.run, compared against the float64 product of the upcast inputs with
the per-type bounds of matmul_ref.py (scaled with K; i8 -> i32 exact). Also
checks that nothing was written past the output, that every element was
written, and that the inputs were not modified.

Cases kgraph-opt has no code generation for (status "unsupported") are
skipped with the compiler's message; cases that failed to compile otherwise
fail. Everything is skipped (with the reason) without a GPU or a manifest.
"""

import os

import gpu_harness as H
import matmul_ref as MR

#: Elements of poison after the output: a kernel writing past its end
#: changes them.
GUARD = 256


def test_matmul(matmul_case, seed, cases_dir, request):
    case = matmul_case
    # Before asking for the GPU: the reason shows on machines without one too.
    H.skip_or_fail_uncompiled(case)
    gpu = request.getfixturevalue("gpu")
    import torch
    import kgraph

    prog = kgraph.load(os.path.join(cases_dir, case["plan"]))

    gen = torch.Generator().manual_seed(MR.case_seed(seed, case["name"]))
    a, b = MR.make_inputs(case, gen)
    ref, s = MR.reference(case, a, b)
    dev_inputs = [a.to(gpu), b.to(gpu)]
    H.run_with_poison(case, prog, dev_inputs, gpu, seed,
                      poisons=MR.POISON[case["output"]["dtype"]], guard=GUARD,
                      torch_dtypes=MR.TORCH_DTYPES,
                      compare=lambda out: MR.compare(case, out, ref, s),
                      unwritten=H.UNWRITTEN + " (or the kernel is not deterministic)")
