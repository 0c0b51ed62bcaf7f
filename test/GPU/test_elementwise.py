"""GPU correctness of every elementwise case of the manifest.

For each case compiled by scripts/build-gpu-cases.py: fresh random inputs
(seeded per run, the seed is in the pytest header), outputs poisoned first and
written through Program.run, compared against a float64 torch reference
rounded to the output dtype. Also checks that no element was left unwritten,
nothing was written past the output, and the inputs were not modified.
Skipped (with the reason) without a GPU or without a manifest.
"""

import os

import pytest

import elementwise_ref as R
import gpu_harness as H

#: Elements of poison after each output: a kernel writing past its end
#: changes them.
GUARD = 64


def test_case(case, gpu, seed, cases_dir):
    import torch
    import kgraph

    if case.get("status") != "ok":
        pytest.fail(f"{case['name']} did not compile: {case.get('error')}")
    prog = kgraph.load(os.path.join(cases_dir, case["plan"]))

    gen = torch.Generator().manual_seed(R.case_seed(seed, case["name"]))
    host_inputs = [R.make_input(spec, gen) for spec in case["inputs"]]
    dev_inputs = [x.to(gpu) for x in host_inputs]
    ref = R.reference(case, [R.upcast(x) for x in host_inputs])
    H.run_with_poison(case, prog, dev_inputs, gpu, seed,
                      poisons=R.POISON[case["output"]["dtype"]], guard=GUARD,
                      torch_dtypes=R.TORCH_DTYPES,
                      compare=lambda out: R.compare(case, out, ref))


def test_call_returns_torch_on_device(gpu, cases_dir, request):
    """Program(*inputs) allocates outputs on the inputs' device (torch), and
    returns numpy for numpy inputs; both agree with run()."""
    import numpy as np
    import torch
    import kgraph

    manifest = request.config.kgraph_manifest
    if manifest is None:
        pytest.skip(request.config.kgraph_manifest_error)
    case = next((c for c in manifest["cases"]
                 if c["name"] == "add_f32_37x1000_1000" and c["status"] == "ok"),
                None)
    if case is None:
        pytest.skip("case add_f32_37x1000_1000 is not in the manifest")
    prog = kgraph.load(os.path.join(cases_dir, case["plan"]))
    a = torch.randn(37, 1000, device=gpu)
    b = torch.randn(1000, device=gpu)
    out = prog(a, b)
    assert out.device == a.device and out.dtype == torch.float32
    torch.testing.assert_close(out, a + b, rtol=0, atol=0)
    out_np = prog(a.cpu().numpy(), b.cpu().numpy())
    assert isinstance(out_np, np.ndarray)
    np.testing.assert_array_equal(out_np, (a + b).cpu().numpy())
    # CPU tensors in, CPU tensors out.
    out_cpu = prog(a.cpu(), b.cpu())
    assert out_cpu.device.type == "cpu"
    torch.testing.assert_close(out_cpu, (a + b).cpu(), rtol=0, atol=0)
    # A misaligned (offset) input view is copied to an aligned buffer.
    big = torch.randn(37 * 1000 + 1, device=gpu)
    a2 = big[1:].view(37, 1000)
    torch.testing.assert_close(prog(a2, b), a2 + b, rtol=0, atol=0)
    with pytest.raises(kgraph.ShapeError):
        prog(b, a)
