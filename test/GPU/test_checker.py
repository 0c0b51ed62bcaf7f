"""CPU self-tests of elementwise_ref.py and of the generated case list: every
case's inputs and float64 reference are well formed, the reference passes its
own comparison, and poisoned or perturbed outputs fail it. Needs torch, no GPU.
"""

import pytest

torch = pytest.importorskip("torch")

import elementwise_ref as R  # noqa: E402
import gpu_harness as H  # noqa: E402


GEN = H.load_case_generator("build_gpu_cases")
CASES = [c.manifest() for c in GEN.all_cases()]


@pytest.mark.parametrize("gcase", CASES, ids=[c["name"] for c in CASES])
def test_reference_is_well_formed(gcase):
    case = gcase
    gen = torch.Generator().manual_seed(R.case_seed(1234, case["name"]))
    xs = [R.make_input(s, gen) for s in case["inputs"]]
    for s, x in zip(case["inputs"], xs):
        assert list(x.shape) == s["shape"] and x.dtype == R.TORCH_DTYPES[s["dtype"]]
    ref = R.reference(case, [R.upcast(x) for x in xs])
    assert list(ref.shape) == case["output"]["shape"]
    assert ref.dtype == R.TORCH_DTYPES[case["output"]["dtype"]]
    if ref.is_floating_point():
        assert torch.isfinite(ref.to(torch.float64)).all(), "domain gives inf/nan"
    assert R.compare(case, ref.clone(), ref) is None
    # A NaN-poisoned (or sentinel-poisoned) output never passes.
    dt = case["output"]["dtype"]
    for poison in R.POISON[dt]:
        if dt == "i1":
            bad = torch.full(ref.shape, poison, dtype=torch.uint8).view(torch.bool)
        else:
            bad = torch.full(ref.shape, poison, dtype=ref.dtype)
            if torch.equal(bad, ref):
                continue
        assert R.compare(case, bad, ref) is not None


def test_compare_catches_one_unwritten_element():
    case = next(c for c in CASES if c["name"] == "exp_f32_3x5x1023")
    gen = torch.Generator().manual_seed(1)
    x = R.make_input(case["inputs"][0], gen)
    ref = R.reference(case, [R.upcast(x)])
    out = ref.clone()
    out[2, 4, 1022] = float("nan")
    msg = R.compare(case, out, ref)
    assert "1/15345 element(s) are NaN" in msg and "(2, 4, 1022)" in msg


def test_float_tolerance_per_dtype():
    case = {"name": "t", "check": "float", "output": {"shape": [4], "dtype": "bf16"}}
    ref = torch.tensor([1.0, 2.0, 3.0, 4.0], dtype=torch.bfloat16)
    one_ulp = torch.tensor([1.0078125, 2.0, 3.0, 4.0], dtype=torch.bfloat16)
    assert R.compare(case, one_ulp, ref) is None
    assert R.compare(case, torch.tensor([1.0, 2.0, 3.0, 4.5], dtype=torch.bfloat16),
                     ref) is not None
    case["output"]["dtype"] = "f32"
    ref32 = ref.float()
    assert R.compare(case, ref32 * (1 + 2e-6), ref32) is None
    assert "exceed" in R.compare(case, ref32 * (1 + 1e-4), ref32)


def test_exact_check_catches_one_ulp():
    case = next(c for c in CASES if c["name"] == "cast_f32_to_f16_4097")
    ref = torch.ones(4097, dtype=torch.float16)
    out = ref.clone()
    out[4096] = 1.0009765625  # one f16 ulp
    assert "1/4097 element(s) differ (exact check), first at (4096,)" in R.compare(case, out, ref)


def test_invalid_bool_bytes():
    case = next(c for c in CASES if c["op"] == "compare")
    ref = torch.zeros(case["output"]["shape"], dtype=torch.bool)
    raw = torch.zeros(case["output"]["shape"], dtype=torch.uint8)
    raw.view(-1)[5] = 2
    assert "not a valid i1" in R.compare(case, raw.view(torch.bool), ref)


def test_cast_to_int_truncates_and_saturates():
    x = torch.tensor([-1e10, -129.5, -2.7, -0.5, 0.5, 2.7, 127.9, 1e10], dtype=torch.float64)
    assert R.cast_to_int(x, "i8").tolist() == [-128, -128, -2, 0, 0, 2, 127, 127]
    assert R.cast_to_int(x, "i32").tolist()[0] == -(2 ** 31)
    assert R.cast_to_int(x, "i32").tolist()[-1] == 2 ** 31 - 1


def test_saturation_is_exercised():
    """The float->int cast inputs really go beyond the int range."""
    case = next(c for c in CASES if c["name"] == "cast_f32_to_i32_4097")
    x = R.make_input(case["inputs"][0], torch.Generator().manual_seed(3))
    assert (x.double() > 2 ** 31).any() and (x.double() < -(2 ** 31)).any()
    assert ((x.double().abs() < 10) & (x.double() != x.double().trunc())).any()


def test_gelu_references():
    x = torch.tensor([-3.0, -1.0, 0.0, 0.5, 2.0], dtype=torch.float64)
    exact = eval(GEN.UNARY_REF["gelu"], {"torch": torch, "math": __import__("math"), "x": x})
    tanh = eval(GEN.GELU_TANH_REF, {"torch": torch, "math": __import__("math"), "x": x})
    torch.testing.assert_close(exact, torch.nn.functional.gelu(x))
    torch.testing.assert_close(tanh, torch.nn.functional.gelu(x, approximate="tanh"))


def test_seed_differs_per_case():
    assert R.case_seed(1, "a") != R.case_seed(1, "b")
    assert R.case_seed(1, "a") != R.case_seed(2, "a")
