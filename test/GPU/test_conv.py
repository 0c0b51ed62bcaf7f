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

import pytest

import conv_ref as CR
from test_matmul import GUARD, _bytes, _poisoned_output


def test_conv(conv_case, seed, cases_dir, request):
    case = conv_case
    status = case.get("status")
    if status == "unsupported":
        pytest.skip(f"unsupported by kgraph-opt: {case.get('reason')}")
    if status != "ok":
        pytest.fail(f"{case['name']} did not compile: {case.get('error')}")
    gpu = request.getfixturevalue("gpu")
    import torch
    import kgraph

    prog = kgraph.load(os.path.join(cases_dir, case["plan"]))
    gen = torch.Generator().manual_seed(CR.case_seed(seed, case["name"]))
    x, w = CR.make_inputs(case, gen)
    ref, s = CR.reference(case, x, w)
    dev_inputs = [x.to(gpu), w.to(gpu)]
    before = [_bytes(t) for t in dev_inputs]

    spec = case["output"]
    results = []
    for poison in CR.POISON[spec["dtype"]]:
        out, buf = _poisoned_output(spec, poison, gpu)
        guard_before = _bytes(buf[-GUARD:])
        prog.run(dev_inputs, [out])
        torch.cuda.synchronize(gpu)
        assert torch.equal(_bytes(buf[-GUARD:]), guard_before), (
            f"{case['name']}: the kernel wrote past the end of its output")
        err = CR.compare(case, out.cpu(), ref, s)
        assert err is None, f"{case['name']} (seed {seed}): {err}"
        results.append(_bytes(out))
    for r in results[1:]:
        assert torch.equal(r, results[0]), (
            f"{case['name']}: results differ between runs with different "
            f"poison values: some elements are not written")
    for i, (t, bb) in enumerate(zip(dev_inputs, before)):
        assert torch.equal(_bytes(t), bb), f"{case['name']}: input {i} was modified"
