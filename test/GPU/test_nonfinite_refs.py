"""CPU self-tests of how the references of the GPU and interpreter tests treat
NaN and infinity (issue 14): a reference is finite except where its op
defines a NaN or an infinity (elementwise_ref.NONFINITE_WHERE); anywhere
else one fails naming the case and op, at every seed; where one is
defined, the output must have the same one (NaN for NaN, the same-signed
infinity). Needs torch, no GPU."""

import os
import sys

import pytest

torch = pytest.importorskip("torch")

import elementwise_ref as R  # noqa: E402
import gpu_harness as H  # noqa: E402
import matmul_ref as MR  # noqa: E402

sys.path.insert(0, os.path.join(H.REPO, "test", "Tools"))

GEN = H.load_case_generator("build_gpu_cases")
CASES = {c["name"]: c for c in (g.manifest() for g in GEN.all_cases())}
NAN, INF = float("nan"), float("inf")


def test_reference_fails_on_a_nan_or_inf_the_op_does_not_define():
    case = CASES["exp_f32_7"]
    x = torch.tensor([0.0, 1.0, 1000.0, 2.0, 3.0, 4.0, 5.0], dtype=torch.float64)
    with pytest.raises(AssertionError, match=r"exp_f32_7 \(kgraph.exp\): the float64 "
                       r"reference is inf at \(2,\).*x = 1000.0.*input domain is wrong"):
        R.reference(case, [x])
    # A finite float64 value that overflows the output type is no better.
    with pytest.raises(AssertionError, match=r"exp_f16_7 \(kgraph.exp\): the reference "
                       r"rounded to f16 is inf at \(2,\)"):
        R.reference(CASES["exp_f16_7"], [torch.tensor([0.0, 1.0, 12.0, 2, 3, 4, 5],
                                                      dtype=torch.float64)])


def test_where_the_op_defines_them_outputs_must_match_exactly():
    case = CASES["log_f32_7"]
    x = torch.tensor([-1.0, 0.0, 1.0, 2.0, 3.0, 4.0, 5.0], dtype=torch.float64)
    ref = R.reference(case, [x])
    assert torch.isnan(ref[0]) and ref[1].item() == -INF
    assert R.compare(case, ref.clone(), ref) is None
    not_nan = ref.clone()
    not_nan[0] = 0.0
    assert "are not NaN where the reference is" in R.compare(case, not_nan, ref)
    wrong_sign = ref.clone()
    wrong_sign[1] = INF
    assert "infinity mismatch at (1,)" in R.compare(case, wrong_sign, ref)
    finite = ref.clone()
    finite[1] = -3.4e38
    assert "infinity mismatch at (1,)" in R.compare(case, finite, ref)
    nan_elsewhere = ref.clone()
    nan_elsewhere[3] = NAN
    assert "are NaN (unwritten or wrong), first at (3,)" in R.compare(case, nan_elsewhere, ref)
    # The finite elements keep their tolerance.
    off = ref.clone()
    off[4] += 0.01
    assert "exceed" in R.compare(case, off, ref)
    # div by zero, sqrt and rsqrt of negatives, pow of a negative base.
    for name, ins in (("div_f32_7_7", [[1.0, -1, 0, 1, 1, 1, 1], [0.0, 0, 0, 1, 2, 3, 4]]),
                      ("sqrt_f32_7", [[-1.0, 0, 1, 2, 3, 4, 5]]),
                      ("rsqrt_f32_7", [[-1.0, 0, -0.0, 2, 3, 4, 5]]),
                      ("pow_f32_7_7", [[-2.0, 0, 2, 2, 2, 2, 2], [0.5, -1, 1, 1, 1, 1, 1]])):
        ref = R.reference(CASES[name], [torch.tensor(v, dtype=torch.float64) for v in ins])
        assert not torch.isfinite(ref[:3]).all() and R.compare(CASES[name], ref, ref) is None


def test_exact_checks_match_nan_to_nan_only():
    case = CASES["cast_f32_to_f16_7"]
    ref = torch.tensor([NAN, 1, 2, 3, 4, 5, 6], dtype=torch.float16)
    assert R.compare(case, ref.clone(), ref) is None
    out = ref.clone()
    out[0] = 0.0
    assert "differ (exact check), first at (0,)" in R.compare(case, out, ref)


def test_op_domains_keep_references_finite_at_every_seed():
    # The ops that can give a NaN or an infinity: their cases' domains avoid
    # it (reference() would raise) at several seeds.
    for case in CASES.values():
        if case["op"] not in R.NONFINITE_WHERE and case["op"] != "exp":
            continue
        for seed in (1, 2, 3):
            gen = torch.Generator().manual_seed(R.case_seed(seed, case["name"]))
            xs = [R.make_input(s, gen) for s in case["inputs"]]
            ref = R.reference(case, [R.upcast(x) for x in xs])
            assert torch.isfinite(ref.to(torch.float64)).all(), case["name"]


def test_gemm_and_interpreter_references_must_be_finite():
    case = {"name": "mm", "op": "matmul", "combo": "f32_f32",
            "dims": {"batch": None, "m": 1, "n": 3, "k": 4},
            "output": {"shape": [1, 3], "dtype": "f32"}}
    for bad in (NAN, INF):
        ref = torch.tensor([[1.0, bad, 3.0]], dtype=torch.float64)
        msg = MR.compare(case, ref.float(), ref, torch.ones(1, 3))
        assert msg and "reference of mm (kgraph.matmul) is" in msg and "(0, 1)" in msg
    import numpy as np
    import check_kernels_interp as C
    for bad in (NAN, -INF):
        ref = np.array([1.0, bad])
        msg = C.compare(ref.astype(np.float32), ref, [2], "f32", (0.0, 0.0), None)
        assert msg and f"reference is {bad} at [1]" in msg
