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

import pytest

import matmul_ref as MR

#: Elements of poison after the output: a kernel writing past its end
#: changes them.
GUARD = 256


def _poisoned_output(spec, poison, device):
    """(output view of ``spec``, whole buffer with GUARD more elements), all
    set to ``poison``."""
    import torch
    numel = 1
    for d in spec["shape"]:
        numel *= d
    buf = torch.full((numel + GUARD,), poison, dtype=MR.TORCH_DTYPES[spec["dtype"]],
                     device=device)
    return buf[:numel].view(spec["shape"]), buf


def _bytes(t):
    import torch
    return t.contiguous().view(torch.uint8).cpu()


def test_matmul(matmul_case, seed, cases_dir, request):
    case = matmul_case
    status = case.get("status")
    # Before asking for the GPU: the reason shows on machines without one too.
    if status == "unsupported":
        pytest.skip(f"unsupported by kgraph-opt: {case.get('reason')}")
    if status != "ok":
        pytest.fail(f"{case['name']} did not compile: {case.get('error')}")
    gpu = request.getfixturevalue("gpu")
    import torch
    import kgraph

    prog = kgraph.load(os.path.join(cases_dir, case["plan"]))

    gen = torch.Generator().manual_seed(MR.case_seed(seed, case["name"]))
    a, b = MR.make_inputs(case, gen)
    ref, s = MR.reference(case, a, b)
    dev_inputs = [a.to(gpu), b.to(gpu)]
    before = [_bytes(x) for x in dev_inputs]

    spec = case["output"]
    results = []
    for poison in MR.POISON[spec["dtype"]]:
        out, buf = _poisoned_output(spec, poison, gpu)
        guard_before = _bytes(buf[-GUARD:])
        prog.run(dev_inputs, [out])
        torch.cuda.synchronize(gpu)
        assert torch.equal(_bytes(buf[-GUARD:]), guard_before), (
            f"{case['name']}: the kernel wrote past the end of its output")
        err = MR.compare(case, out.cpu(), ref, s)
        assert err is None, f"{case['name']} (seed {seed}): {err}"
        results.append(_bytes(out))
    # With two poisons an unwritten element shows as a difference between runs.
    for r in results[1:]:
        assert torch.equal(r, results[0]), (
            f"{case['name']}: results differ between runs with different "
            f"poison values: some elements are not written (or the kernel is "
            f"not deterministic)")
    for i, (x, bb) in enumerate(zip(dev_inputs, before)):
        assert torch.equal(_bytes(x), bb), f"{case['name']}: input {i} was modified"
