"""Inputs, float64 references, tolerances and comparisons of the kgraph.matmul
GPU tests and benchmarks.

Everything here runs on the CPU (or on any torch device) with no kgraph
kernel involved, so it is unit-tested by test_matmul_checker.py on machines
without a GPU.

The reference is the float64 product of the inputs as the kernel sees them
(each already rounded to its dtype, then upcast), so the only errors allowed
are those of the computation itself. Per type combination ("combo", see
test/GPU/cases/matmul_cases.py) the error model is:

- ``u_prod``: relative error of one product: 0 for f16/bf16 (the product of
  two f16 or bf16 values is exact in f32) and i8; 2^-24 for f32 (one
  rounding); 2^-9 for tf32 (each operand truncated or rounded to a 10-bit
  mantissa, relative error below 2^-10 each);
- ``u_acc``: relative error per addition of the f32 accumulation, 2^-22 (twice
  f32's unit roundoff: tensor-core accumulation truncates rather than rounds);
- ``u_out``: the rounding of the result to the output dtype (round to nearest:
  f32 2^-24, f16 2^-11, bf16 2^-8) plus ``atol_out``, the subnormal spacing of
  the output dtype (f16 2^-24: rounding a tiny result to f16 is absolute).

Two checks, both must hold:

- per element, the classic GEMM error bound with S = |A| |B| (the float64
  product of the absolute values):
  ``|out - ref| <= 1.01 ((u_prod + K u_acc) S + u_out |ref|) + atol_out``;
- relative norm ``||out - ref|| / ||ref|| <= norm_prod + 4 sqrt(K) u_acc +
  u_out`` with ``norm_prod`` 1.5e-3 for tf32 (truncated operands bias the
  result by about 7e-4) and u_prod otherwise: errors grow like sqrt(K) when
  they are random, which this bound follows and a wrong tile, operand or
  element does not.

i8 -> i32 is exact. NaN never passes.
"""

import math

import torch

import elementwise_ref as R

TORCH_DTYPES = R.TORCH_DTYPES
POISON = R.POISON
case_seed = R.case_seed

U_ACC = 2.0 ** -22
#: Relative error of one product, per combo (f16/bf16/i8 products are exact).
U_PROD = {"f32_f32": 2.0 ** -24, "f32_tf32": 2.0 ** -9}
#: Norm-wise share of the product errors, per combo.
NORM_PROD = {"f32_f32": 2.0 ** -24, "f32_tf32": 1.5e-3}
#: Unit roundoff of rounding to nearest, per output dtype.
U_OUT = {"f32": 2.0 ** -24, "f16": 2.0 ** -11, "bf16": 2.0 ** -8}
#: Spacing of the subnormals, per output dtype.
ATOL_OUT = {"f32": 2.0 ** -149, "f16": 2.0 ** -24, "bf16": 2.0 ** -133}
SLACK = 1.01
NORM_ACC_FACTOR = 4.0


def k_of(case):
    return case["dims"]["k"]


def is_exact(case):
    return case["output"]["dtype"] in ("i32", "i8")


def tolerance(case):
    """The case's bounds: {"elem_s": factor of S, "elem_ref": factor of |ref|,
    "atol": absolute, "norm": relative norm}; None for exact combos."""
    if is_exact(case):
        return None
    combo, k = case["combo"], k_of(case)
    out_dt = case["output"]["dtype"]
    u_out = U_OUT[out_dt]
    return {
        "elem_s": SLACK * (U_PROD.get(combo, 0.0) + k * U_ACC),
        "elem_ref": SLACK * u_out,
        "atol": ATOL_OUT[out_dt],
        "norm": NORM_PROD.get(combo, 0.0) + NORM_ACC_FACTOR * math.sqrt(k) * U_ACC
        + u_out,
    }


def make_inputs(case, gen):
    """CPU tensors a, b of the case's (stored) shapes and dtypes."""
    return [R.make_input(spec, gen) for spec in case["inputs"]]


def logical(case, a, b):
    """A as [.., M, K] and B as [.., K, N] (undoing the stored transposes),
    upcast to float64."""
    a, b = a.to(torch.float64), b.to(torch.float64)
    if case["attrs"].get("transpose_a"):
        a = a.transpose(-1, -2)
    if case["attrs"].get("transpose_b"):
        b = b.transpose(-1, -2)
    return a, b


def reference(case, a, b):
    """(ref, S): the float64 product and the float64 |A| |B| (None for exact
    combos), of the case's output shape, on a's device."""
    a64, b64 = logical(case, a, b)
    ref = torch.matmul(a64, b64)
    if list(ref.shape) != case["output"]["shape"]:
        raise AssertionError(f"reference of {case['name']} has shape "
                             f"{list(ref.shape)}, the case says "
                             f"{case['output']['shape']}")
    if is_exact(case):
        if not torch.equal(ref, ref.round()) or ref.abs().max() >= 2 ** 31:
            raise AssertionError(f"reference of {case['name']} is not an exact "
                                 f"i32: the input domain is wrong")
        return ref, None
    return ref, torch.matmul(a64.abs(), b64.abs())


#: The index tuple of a flat index (for the messages).
_where = R._where


def rel_norm_error(out, ref):
    """||out - ref|| / ||ref|| in float64 (the absolute norm when ref is 0)."""
    o = out.to(torch.float64)
    r = ref.to(torch.float64)
    rn = r.norm().item()
    dn = (o - r).norm().item()
    return dn / rn if rn > 0 else dn


def compare(case, out, ref, s, norm_scale=1.0):
    """None when ``out`` (the output dtype, any device) passes the case's
    checks against ``ref`` and ``s`` from reference(); otherwise a message
    saying where and by how much. ``norm_scale`` loosens the bounds (the
    benchmarks' quick check)."""
    shape = case["output"]["shape"]
    if list(out.shape) != list(shape):
        return f"shape {list(out.shape)} != {list(shape)}"
    o = out.to(torch.float64).flatten()
    r = ref.to(o.device).flatten()
    # A GEMM of finite inputs defines no NaN or infinity: a non-finite
    # reference means the input domain is wrong (and would accept anything).
    bad = ~torch.isfinite(r.to(torch.float64))
    if bad.any():
        i = int(bad.nonzero()[0])
        return (f"the float64 reference of {case['name']} (kgraph.{case.get('op')}) is "
                f"{r[i].item()!r} at {_where(shape, i)} ({int(bad.sum())} element(s)), "
                f"where kgraph.{case.get('op')} defines no NaN or infinity: the input "
                f"domain is wrong")
    nan = torch.isnan(o)
    if nan.any():
        i = int(nan.nonzero()[0])
        return (f"{int(nan.sum())}/{o.numel()} element(s) are NaN (unwritten "
                f"or wrong), first at {_where(shape, i)}; expected "
                f"{r[i].item()!r}")
    tol = tolerance(case)
    if tol is None:
        return R.exact_mismatch(o != r, o, r, shape)
    inf = torch.isinf(o)
    if inf.any():
        i = int(inf.nonzero()[0])
        return (f"{int(inf.sum())}/{o.numel()} element(s) are infinite, first "
                f"at {_where(shape, i)}; expected {r[i].item()!r}")
    sv = s.to(o.device).flatten()
    diff = (o - r).abs()
    bound = norm_scale * (tol["elem_s"] * sv + tol["elem_ref"] * r.abs()) \
        + tol["atol"]
    over = diff > bound
    if over.any():
        i = int(torch.argmax(diff / bound))
        return (f"{int(over.sum())}/{o.numel()} element(s) exceed the GEMM "
                f"bound |out-ref| <= {norm_scale * tol['elem_s']:.3g} |A||B| + "
                f"{norm_scale * tol['elem_ref']:.3g} |ref| (K={k_of(case)}); "
                f"worst at {_where(shape, i)}: got {o[i].item()!r}, expected "
                f"{r[i].item()!r}, |A||B| {sv[i].item():.4g} (max abs error "
                f"{diff.max().item():.3g})")
    rel = rel_norm_error(o, r)
    limit = norm_scale * tol["norm"]
    if rel > limit:
        return (f"relative error norm ||out-ref||/||ref|| = {rel:.3g} exceeds "
                f"{limit:.3g} for {case['combo']} at K={k_of(case)}")
    return None


def simulate(case, a, b, *, tf32="truncate", acc="f32", out_round=True):
    """What a correct kernel may return (a model for the self-tests):
    operands as the tensor cores read them (tf32: truncated or rounded to
    nearest, ``tf32`` = "truncate" | "round"), the product accumulated in f32
    (``acc`` = "f32") or in float64 ("f64"), then rounded to the output
    dtype."""
    a32, b32 = logical(case, a, b)
    combo = case["combo"]
    if combo == "f32_tf32":
        a32, b32 = _to_tf32(a32, tf32), _to_tf32(b32, tf32)
    if is_exact(case):
        return torch.matmul(a32, b32).round().to(torch.int64).to(torch.int32)
    dt = torch.float32 if acc == "f32" else torch.float64
    res = torch.matmul(a32.to(dt), b32.to(dt))
    out_dt = TORCH_DTYPES[case["output"]["dtype"]]
    return res.to(out_dt) if out_round else res


def _to_tf32(x, mode):
    """f32 -> tf32 (10 explicit mantissa bits), kept in f32."""
    bits = x.to(torch.float32).contiguous().view(torch.int32)
    if mode == "round":
        bits = bits + 0x1000  # add half of the dropped part (no overflow here)
    bits = bits & ~0x1FFF
    return bits.view(torch.float32).to(torch.float64)
