"""CPU self-tests of the graph-case harness (test/GPU/cases/graph_case.py): the
comparison catches what it must, inputs respect their ranges, the kernel
count reads PTX right, and every case module loads with a reference that
runs in float64 on the CPU (bench cases excluded: they are large)."""

import os
import sys

import pytest

import gpu_harness as H

sys.path.insert(0, H.CASES)
import graph_case as G  # noqa: E402

torch = pytest.importorskip("torch")


def spec(shape, dtype):
    return {"shape": list(shape), "dtype": dtype}


def test_compare_accepts_within_tolerance():
    ref = torch.tensor([1.0, -2.0, 0.0], dtype=torch.float64)
    out = torch.tensor([1.0 + 1e-6, -2.0, 1e-7], dtype=torch.float32)
    assert G.compare(torch, out, ref, spec([3], "f32"), (1e-5, 1e-6)) is None


def test_compare_rejects_outside_tolerance():
    ref = torch.tensor([1.0, 2.0], dtype=torch.float64)
    out = torch.tensor([1.0, 2.01], dtype=torch.float32)
    msg = G.compare(torch, out, ref, spec([2], "f32"), (1e-3, 0.0))
    assert msg and "flat index 1" in msg


def test_compare_nan_and_inf():
    ref = torch.tensor([1.0, 2.0, 3.0], dtype=torch.float64)
    assert G.compare(torch, ref.float(), ref, spec([3], "f32"), (0, 0)) is None
    poisoned = torch.tensor([1.0, 2.0, float("nan")])
    assert "NaN mismatch" in G.compare(torch, poisoned, ref, spec([3], "f32"), (1, 1))
    wrong_inf = torch.tensor([1.0, float("-inf"), 3.0])
    assert "infinity" in G.compare(torch, wrong_inf, ref, spec([3], "f32"), (1, 1))


def test_compare_rejects_a_non_finite_reference():
    # No op of the graphs defines a NaN or an infinity on their domains: one
    # in the reference is a wrong domain, even where the output has it too.
    for bad in (float("nan"), float("inf"), float("-inf")):
        ref = torch.tensor([1.0, bad, 3.0], dtype=torch.float64)
        msg = G.compare(torch, ref.float(), ref, spec([3], "f32"), (1, 1))
        assert msg and f"reference is {bad} at flat index 1" in msg and "domains" in msg


def test_compare_integers_exact_and_shapes():
    ref = torch.tensor([1, 2, 3])
    assert G.compare(torch, torch.tensor([1, 2, 3], dtype=torch.int32), ref,
                     spec([3], "i32"), (0, 0)) is None
    assert "differ" in G.compare(torch, torch.tensor([1, 2, 4], dtype=torch.int32),
                                 ref, spec([3], "i32"), (0, 0))
    assert "shape" in G.compare(torch, torch.zeros(2), ref.double(),
                                spec([3], "f32"), (0, 0))


def test_make_inputs_ranges_and_dtypes():
    entry = {"inputs": [G.Input("a", [1000], "f16", lo=2, hi=3).manifest(),
                        G.Input("b", [1000], "i8", lo=-4, hi=4).manifest(),
                        G.Input("c", [10], "i1").manifest()]}
    a, b, c = G.make_inputs(torch, entry, torch.Generator().manual_seed(1))
    assert a.dtype == torch.float16 and float(a.min()) >= 2 and float(a.max()) <= 3
    assert b.dtype == torch.int8 and int(b.min()) >= -4 and int(b.max()) <= 4
    assert c.dtype == torch.bool


def test_count_kernels():
    ptx = ".visible .entry main_k0(\n)\n{\n}\n.visible .entry main_k1(\n)\n.func f()\n"
    assert G.count_kernels(ptx) == 2


def test_case_validation():
    with pytest.raises(ValueError):
        G.GraphCase("Bad-Name", "", [], None)
    with pytest.raises(ValueError):
        G.Input("x", [1], "f64")


def _small_cases():
    return [c for c in G.load_cases() if not c.bench]


@pytest.mark.parametrize("gcase", _small_cases(), ids=lambda c: c.name)
def test_reference_runs_in_float64(gcase):
    case = gcase
    entry = {"inputs": [i.manifest() for i in case.inputs]}
    inputs = G.make_inputs(torch, entry, torch.Generator().manual_seed(0))
    outs = G.reference(torch, entry, case.ref, inputs)
    assert outs and all(isinstance(o, torch.Tensor) for o in outs)
    for o in outs:
        if o.is_floating_point():
            assert o.dtype == torch.float64, f"{case.name}: reference not in float64"
    assert "func.func @main" in case.text
