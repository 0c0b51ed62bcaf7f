"""Shared pieces of the GPU tests and of their CPU self-tests.

``run_with_poison`` is the run loop of test_elementwise.py, test_matmul.py
and test_conv.py: the output poisoned (once per poison value) and followed by
guard elements, the program run, the guard and the result checked, the runs
compared with each other (an element left unwritten shows as a difference
between poisons) and the inputs checked to be unchanged. ``load_module``
imports a script by path (scripts/build-gpu-cases.py, bench/*.py).
"""

import importlib.util
import os

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
#: The case generators (graph_case.py, matmul_cases.py, conv_cases.py,
#: graphs/*.py); scripts/build-gpu-cases.py builds the cases from them.
CASES = os.path.join(REPO, "test", "GPU", "cases")

#: The message of an output element left unwritten (two poisons disagree).
UNWRITTEN = ("results differ between runs with different poison values: "
             "some elements are not written")


def load_module(name, path):
    """The module at ``path`` (relative to the repo root if not absolute),
    imported as ``name``."""
    spec = importlib.util.spec_from_file_location(name, os.path.join(REPO, path))
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def load_case_generator(name):
    """scripts/build-gpu-cases.py, imported as ``name``."""
    return load_module(name, os.path.join("scripts", "build-gpu-cases.py"))


def as_bytes(t):
    """The bytes of ``t`` (contiguous) on the CPU; a 0-d tensor is viewed
    as one element first (torch cannot reinterpret 0-d tensors)."""
    import torch
    return t.contiguous().reshape(-1).view(torch.uint8).cpu()


def poisoned_output(spec, poison, device, guard, torch_dtypes):
    """An output tensor of ``spec`` followed by ``guard`` guard elements, all
    set to ``poison``. An i1 output is a bool view of uint8 storage. Returns
    (output view, whole buffer)."""
    import torch
    numel = 1
    for d in spec["shape"]:
        numel *= d
    dt = spec["dtype"]
    if dt == "i1":
        buf = torch.full((numel + guard,), poison, dtype=torch.uint8, device=device)
        out = buf[:numel].view(torch.bool)
    else:
        buf = torch.full((numel + guard,), poison, dtype=torch_dtypes[dt],
                         device=device)
        out = buf[:numel]
    return out.view(spec["shape"]), buf


def run_with_poison(case, prog, dev_inputs, gpu, seed, *, poisons, guard,
                    torch_dtypes, compare, unwritten=UNWRITTEN):
    """Run ``prog`` on ``dev_inputs`` once per poison value of the output and
    assert: nothing written past the output, ``compare(output on the CPU)``
    is None, every run gives the same bytes (``unwritten`` otherwise), the
    inputs are unchanged."""
    import torch
    name = case["name"]
    before = [as_bytes(x) for x in dev_inputs]
    spec = case["output"]
    results = []
    for poison in poisons:
        out, buf = poisoned_output(spec, poison, gpu, guard, torch_dtypes)
        guard_before = as_bytes(buf[-guard:])
        prog.run(dev_inputs, [out])
        torch.cuda.synchronize(gpu)
        assert torch.equal(as_bytes(buf[-guard:]), guard_before), (
            f"{name}: the kernel wrote past the end of its output")
        err = compare(out.cpu())
        assert err is None, f"{name} (seed {seed}): {err}"
        results.append(as_bytes(out))
    # With two poisons an unwritten element shows as a difference between runs.
    for r in results[1:]:
        assert torch.equal(r, results[0]), f"{name}: {unwritten}"
    for i, (x, b) in enumerate(zip(dev_inputs, before)):
        assert torch.equal(as_bytes(x), b), f"{name}: input {i} was modified"


def skip_or_fail_uncompiled(case):
    """Skip a case kgraph-opt has no code generation for (with its message),
    fail one that did not compile otherwise."""
    import pytest
    status = case.get("status")
    if status == "unsupported":
        pytest.skip(f"unsupported by kgraph-opt: {case.get('reason')}")
    if status != "ok":
        pytest.fail(f"{case['name']} did not compile: {case.get('error')}")
