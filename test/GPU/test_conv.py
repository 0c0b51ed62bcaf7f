"""GPU correctness of every kgraph.conv2d case of the manifest.

For each case compiled by scripts/build-gpu-cases.py (section "conv"):
fresh random inputs (uniform in [-1, 1], seeded per run), the output
poisoned first (two NaN patterns) and followed by guard elements, run
through Program.run, compared against the float64 torch conv2d of the upcast
inputs (conv_ref.py) with the implicit GEMM's error bounds (matmul_ref.py,
K = KH*KW*C/groups). Also checks that nothing was written past the output,
that every element was written, and that the inputs were not modified.

Cases kgraph-opt has no code generation for (status "unsupported", e.g.
f32 until the fma instruction exists) are skipped with the compiler's
message; cases that failed to compile otherwise fail.
"""

import os

import conv_ref as CR
import gpu_harness as H
from test_matmul import GUARD


def test_conv(conv_case, seed, cases_dir, request):
    case = conv_case
    H.skip_or_fail_uncompiled(case)
    gpu = request.getfixturevalue("gpu")
    import torch
    import kgraph

    prog = kgraph.load(os.path.join(cases_dir, case["plan"]))
    gen = torch.Generator().manual_seed(CR.case_seed(seed, case["name"]))
    x, w = CR.make_inputs(case, gen)
    ref, s = CR.reference(case, x, w)
    dev_inputs = [x.to(gpu), w.to(gpu)]
    H.run_with_poison(case, prog, dev_inputs, gpu, seed,
                      poisons=CR.POISON[case["output"]["dtype"]], guard=GUARD,
                      torch_dtypes=CR.TORCH_DTYPES,
                      compare=lambda out: CR.compare(case, out, ref, s))
