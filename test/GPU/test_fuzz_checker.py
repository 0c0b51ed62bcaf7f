"""CPU self-tests of the random-graph GPU cases (test/fuzz/gpu_cases.py,
test/fuzz/graphgen.py): a sample is reproducible from its seed, every case's
torch reference runs in float64 on the CPU on inputs drawn from the case's
domains and returns the outputs' shapes, finite where the graph is float,
the reference rebuilt from a manifest entry alone matches the one the case
was built with, and the tolerances are exact for integer graphs."""

import os
import sys

import pytest

import gpu_harness as H

sys.path.insert(0, H.CASES)
sys.path.insert(0, os.path.join(H.REPO, "test", "fuzz"))
import graph_case as G  # noqa: E402
import gpu_cases  # noqa: E402
import graphgen  # noqa: E402

torch = pytest.importorskip("torch")

SEED = "c1"
CASES = gpu_cases.sample(SEED, 40)


def entry_of(case):
    """The manifest entry the build would write (outputs from the graph)."""
    e = case.manifest()
    e["outputs"] = [{"shape": list(o.shape), "dtype": o.dtype} for o in case.graph.outputs]
    return e


def test_sample_is_reproducible():
    again = gpu_cases.sample(SEED, 40)
    assert [c.name for c in again] == [c.name for c in CASES]
    assert [c.mlir() for c in again] == [c.mlir() for c in CASES]
    assert len(CASES) >= 35   # few seeds fail to give a well-conditioned graph


def test_sample_covers_the_op_families():
    ops = {k for c in gpu_cases.sample("c2", 150) for k in c.graph.ops}
    for k in ("matmul", "conv2d", "pool2d", "reduce", "add", "cast", "select", "clamp"):
        assert k in ops, f"no {k} in 150 GPU fuzz cases"
    assert not ops & set(graphgen.DATA_MOVEMENT)


@pytest.mark.parametrize("fcase", CASES, ids=[c.name for c in CASES])
def test_reference_runs_on_the_cpu(fcase):
    case = fcase
    e = entry_of(case)
    gen = torch.Generator().manual_seed(7)
    inputs = G.make_inputs(torch, e, gen)
    for x, i in zip(inputs, e["inputs"]):
        if i["dtype"] in ("i8", "i32"):
            assert int(x.min()) >= i["lo"] and int(x.max()) <= i["hi"]
    outs = G.reference(torch, e, gpu_cases.find_ref(e), inputs)
    assert len(outs) == len(e["outputs"])
    for o, spec in zip(outs, e["outputs"]):
        assert list(o.shape) == spec["shape"]
        if spec["dtype"] in ("f32", "f16", "bf16"):
            assert torch.isfinite(o).all(), f"{case.name}: non-finite reference"
    # The reference of the manifest entry is the case's own.
    direct = G.reference(torch, e, graphgen.torch_ref(case.graph), inputs)
    for a, b in zip(outs, direct):
        assert torch.equal(a, b)
    rtol, atol = case.tol
    floats = any(v.dtype in ("f32", "f16", "bf16")
                 for v in case.graph.args + [n.result for n in case.graph.nodes])
    assert (rtol > 0) == floats and 0 <= rtol < 0.5 and atol >= 0


def test_name_and_seed_round_trip():
    c = gpu_cases.make_case("zz9", 3)
    assert c.name == "fuzz_zz9_3" and c.manifest()["graph"].startswith("zz9-3")
    with pytest.raises(ValueError):
        gpu_cases.sample("Bad-Seed", 1)


@pytest.mark.parametrize("lo,hi,want", [(-300.0, -294.0, -128), (300.0, 1300.0, 127),
                                        (-300.0, 700.0, None), (-0.5, 0.5, 0)])
def test_integer_clamp_bounds_saturate(lo, hi, want):
    # kgraph.clamp on i8: bounds outside the type's range saturate to it (a
    # range wholly below it gives -128, not -294 wrapped to -38, as found on
    # the GPU with graph 8ab795d-132.3).
    from types import SimpleNamespace as NS
    x = torch.tensor([-128, -5, 0, 7, 127], dtype=torch.int64)
    a = NS(name="a", dtype="i8")
    n = NS(kind="clamp", attrs={"min": lo, "max": hi}, operands=[a],
           result=NS(name="r", dtype="i8"))
    got = graphgen._eval_node(torch, None, n, {"a": x})
    assert got.tolist() == (x.tolist() if want is None else [want] * 5)


def test_clamp_magnitude_follows_its_range():
    """A clamp whose range lies away from zero lifts its values to the range
    (fuzz seed 5e3a91c2, graph 260.1: clamp to [-300, -299], then a matmul
    whose sums cancel to ~5 from summands of ~300); one around zero bounds
    them by its operand. The tolerance then covers an f32 sum of the
    products in another order."""
    V, N = graphgen.Value, graphgen.Node
    g = graphgen.Graph("t")
    a1, a3 = V("a1", (32, 32), "f32"), V("a3", (32, 31), "f32")
    g.args = [a1, a3]
    g.input_domain = {"a1": (-2.0, 2.0), "a3": (-1.0, 1.0)}
    v2, v5 = V("v2", (32, 32), "f32"), V("v5", (32, 32), "f32")
    v4 = V("v4", (32, 31), "f32")
    g.nodes = [N("clamp", [a1], {"min": -300.0, "max": -299.0}, v2, ""),
               N("clamp", [a1], {"min": -1.0, "max": 6.0}, v5, ""),
               N("matmul", [v2, a3], {"transpose_a": False, "transpose_b": False}, v4, "")]
    g.outputs = [v4]
    mags = graphgen.magnitudes(g)
    assert mags["v2"] == 299.0 and mags["v5"] == 2.0
    rtol, atol = graphgen.tolerance(g)
    gen = torch.Generator().manual_seed(5)
    a = torch.full((32, 32), -299.0, dtype=torch.float64)
    b = torch.rand(32, 31, generator=gen, dtype=torch.float64) * 2 - 1
    ref = a @ b
    # f32 partial sums, one order and its reverse: what two kernels may do.
    for order in (range(32), reversed(range(32))):
        acc = torch.zeros(32, 31, dtype=torch.float32)
        for k in order:
            acc = acc + a[:, k:k + 1].float() * b[k:k + 1, :].float()
        assert ((acc.double() - ref).abs() <= atol + rtol * ref.abs()).all()
