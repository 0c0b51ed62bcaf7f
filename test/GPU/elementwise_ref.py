"""Inputs, float64 references and comparisons for the elementwise GPU tests.

Everything here runs on the CPU with torch (no GPU needed), so it is
unit-tested by test_checker.py on machines without one.
"""

import math
import zlib

import torch

from kgraph.dtypes import DTYPES

#: The torch dtype of every plan dtype (kgraph's table).
TORCH_DTYPES = {name: getattr(torch, d.torch) for name, d in DTYPES.items()}
INT_RANGE = {"i8": (-128, 127), "i32": (-(2 ** 31), 2 ** 31 - 1)}

#: Per output dtype: (relative norm ||out-ref||/||ref||, elementwise rtol,
#: elementwise atol) for "float" checks: |out-ref| <= atol + rtol*|ref|.
FLOAT_TOLERANCE = {
    "f32": (1e-5, 1e-5, 1e-6),
    "f16": (1e-3, 2e-3, 1e-3),
    "bf16": (1e-2, 1.6e-2, 1e-2),
}

#: Poison values written into outputs before a run; two per integer dtype so
#: that an unwritten element is caught even when the reference equals one.
POISON = {
    "f32": [float("nan")], "f16": [float("nan")], "bf16": [float("nan")],
    "i8": [0x5A, -0x5B], "i32": [0x5A5A5A5A, -0x5A5A5A5B],
    "i1": [0xAB, 0x54],  # bytes that are not a valid bool (0 or 1)
}


#: Where an op's float64 result is NaN or infinite although its inputs are
#: finite (IEEE arithmetic defines one there): op -> a function of the
#: reference's inputs (float64, in the case's order) flagging those
#: elements. A NaN or an infinity anywhere else in a reference means the
#: case's input domain is wrong (reference() fails on it at every seed);
#: where one is defined, the output must have the same one (compare()).
#: The generators' domains avoid all of these today (log, sqrt and rsqrt
#: see positive values, div a nonzero divisor, pow a positive base).
NONFINITE_WHERE = {
    "log": lambda x: x <= 0,             # NaN below 0, -inf at 0
    "sqrt": lambda x: x < 0,             # NaN
    "rsqrt": lambda x: x <= 0,           # +-inf at +-0, NaN below
    "div": lambda a, b: b == 0,          # +-inf, NaN for 0 / 0
    "pow": lambda a, b: ((a < 0) & (b != b.round())) | ((a == 0) & (b < 0)),
}


def nonfinite_expected(case, inputs64):
    """Bool tensor of the output's shape: where the case's op defines a NaN
    or an infinity for these inputs (NONFINITE_WHERE)."""
    shape = case["output"]["shape"]
    where = NONFINITE_WHERE.get(case["op"])
    if where is None:
        return torch.zeros(shape, dtype=torch.bool)
    return torch.broadcast_to(where(*inputs64), shape)


def check_finite(case, values, expected, what, inputs64=()):
    """Raises AssertionError, naming the case, its op and the first element,
    when float tensor ``values`` is NaN or infinite outside ``expected``."""
    bad = ~torch.isfinite(values) & ~expected
    if not bad.any():
        return
    shape = case["output"]["shape"]
    i = int(bad.flatten().nonzero()[0])
    at = _where(shape, i)
    ins = ", ".join(f"{spec['name']} = {torch.broadcast_to(x, shape)[at].item()!r}"
                    for spec, x in zip(case["inputs"], inputs64))
    raise AssertionError(
        f"{case['name']} (kgraph.{case['op']}): the {what} is "
        f"{values.flatten()[i].item()!r} at {at} ({int(bad.sum())} element(s); inputs "
        f"there: {ins}), where kgraph.{case['op']} defines no NaN or infinity: the "
        f"input domain is wrong")


def case_seed(seed, name):
    """A per-case seed derived from the run's seed and the case name."""
    return (seed * 1000003 + zlib.crc32(name.encode())) % (2 ** 63)


def make_input(spec, gen):
    """A CPU tensor of ``spec['dtype']`` drawn from ``spec['domain']``."""
    shape = spec["shape"]
    dom = spec["domain"]
    dist = dom["dist"]
    if dist == "bool":
        return torch.rand(shape, generator=gen, dtype=torch.float64) < 0.5
    if dist == "int":
        v = torch.randint(int(dom["low"]), int(dom["high"]) + 1, shape,
                          generator=gen, dtype=torch.int64).to(torch.float64)
    else:
        u = torch.rand(shape, generator=gen, dtype=torch.float64)
        lo, hi = float(dom["low"]), float(dom["high"])
        if dist == "uniform":
            v = lo + (hi - lo) * u
        elif dist == "nonzero":
            sign = torch.where(torch.rand(shape, generator=gen) < 0.5, -1.0, 1.0)
            v = sign.to(torch.float64) * (lo + (hi - lo) * u)
        elif dist == "mixed":
            small = float(dom["small"])
            s = -small + 2 * small * torch.rand(shape, generator=gen,
                                                dtype=torch.float64)
            pick = torch.rand(shape, generator=gen) < 0.5
            v = torch.where(pick, s, lo + (hi - lo) * u)
        else:
            raise ValueError(f"unknown input domain {dom}")
    dt = spec["dtype"]
    if dt in INT_RANGE:
        lo, hi = INT_RANGE[dt]
        return v.round().clamp(lo, hi).to(torch.int64).to(TORCH_DTYPES[dt])
    return v.to(TORCH_DTYPES[dt])


def upcast(x):
    """float64 for numbers, bool stays bool (the reference's inputs)."""
    return x if x.dtype == torch.bool else x.to(torch.float64)


def cast_to_int(x, dst):
    """float -> int: truncate toward zero, saturate (the kgraph.cast rule)."""
    lo, hi = INT_RANGE[dst]
    return torch.clamp(torch.trunc(x), lo, hi)


def reference(case, inputs64):
    """Evaluate the manifest's reference expression in float64 and round it
    to the output dtype: returns a tensor of the output's torch dtype."""
    ns = {"torch": torch, "math": math, "cast_to_int": cast_to_int}
    for spec, x in zip(case["inputs"], inputs64):
        ns[spec["name"]] = x
    ref = eval(case["reference"], ns)  # noqa: S307 (our own manifest)
    ref = torch.broadcast_to(torch.as_tensor(ref), case["output"]["shape"])
    dt = case["output"]["dtype"]
    expected = None
    if ref.is_floating_point():
        # Finite except where the op defines a NaN or an infinity.
        expected = nonfinite_expected(case, inputs64)
        check_finite(case, ref, expected, "float64 reference", inputs64)
    if dt == "i1":
        return ref.to(torch.bool)
    if dt in INT_RANGE:
        lo, hi = INT_RANGE[dt]
        if not torch.equal(ref, ref.round()) or ref.min() < lo or ref.max() > hi:
            raise AssertionError(f"reference of {case['name']} is not an exact "
                                 f"{dt}: the input domain is wrong")
        return ref.to(torch.int64).to(TORCH_DTYPES[dt])
    out = ref.to(TORCH_DTYPES[dt])  # round to nearest even
    if expected is not None:
        # No overflow to infinity in the rounding either.
        check_finite(case, out.to(torch.float64), expected, f"reference rounded to {dt}",
                     inputs64)
    return out


def _where(shape, flat_index):
    idx = []
    for d in reversed(shape):
        idx.append(flat_index % d)
        flat_index //= d
    return tuple(reversed(idx))


def exact_mismatch(bad, o, r, shape):
    """The exact check's message for the elements ``bad`` flags in the flat
    float64 ``o`` (got) and ``r`` (expected) of ``shape``; None when none."""
    if not bad.any():
        return None
    i = int(bad.nonzero()[0])
    return (f"{int(bad.sum())}/{o.numel()} element(s) differ (exact "
            f"check), first at {_where(shape, i)}: got {o[i].item()!r}, "
            f"expected {r[i].item()!r}")


def compare(case, out, ref):
    """None when ``out`` (CPU, output dtype) matches ``ref`` as the case's
    check demands; otherwise a message saying where and by how much."""
    shape = case["output"]["shape"]
    dt = case["output"]["dtype"]
    if tuple(out.shape) != tuple(ref.shape):
        return f"shape {list(out.shape)} != {list(ref.shape)}"
    if dt == "i1":
        raw = out.view(torch.uint8) if out.dtype == torch.bool else out
        bad = (raw != 0) & (raw != 1)
        if bad.any():
            i = int(bad.flatten().nonzero()[0])
            return (f"{int(bad.sum())} element(s) are not a valid i1 (0 or 1), "
                    f"e.g. at {_where(shape, i)}: byte {int(raw.flatten()[i])}")
        out = raw.to(torch.bool)
    o = out.to(torch.float64).flatten()
    r = ref.to(torch.float64).flatten()
    # A NaN of the reference (where the op defines one, see reference())
    # matches a NaN only; any other NaN of the output is wrong.
    nan_o, nan_r = torch.isnan(o), torch.isnan(r)
    if case["check"] == "exact" or dt not in FLOAT_TOLERANCE:
        return exact_mismatch((o != r) & ~(nan_o & nan_r), o, r, shape)
    norm_tol, rtol, atol = FLOAT_TOLERANCE[dt]
    nan = nan_o & ~nan_r
    if nan.any():
        i = int(nan.nonzero()[0])
        return (f"{int(nan.sum())}/{o.numel()} element(s) are NaN (unwritten "
                f"or wrong), first at {_where(shape, i)}; expected {r[i].item()!r}")
    missing = nan_r & ~nan_o
    if missing.any():
        i = int(missing.nonzero()[0])
        return (f"{int(missing.sum())}/{o.numel()} element(s) are not NaN where the "
                f"reference is (kgraph.{case.get('op')} defines NaN there), first at "
                f"{_where(shape, i)}: got {o[i].item()!r}")
    # Infinities match the same-signed infinity only.
    inf = (torch.isinf(r) | torch.isinf(o)) & ~nan_r
    if (o[inf] != r[inf]).any():
        i = int((inf & (o != r)).nonzero()[0])
        return (f"infinity mismatch at {_where(shape, i)}: got {o[i].item()!r}, "
                f"expected {r[i].item()!r}")
    keep = ~inf & ~nan_r
    o, r = o[keep], r[keep]
    if o.numel() == 0:
        return None
    diff = (o - r).abs()
    bound = atol + rtol * r.abs()
    if (diff > bound).any():
        i = int(torch.argmax(diff - bound))
        return (f"{int((diff > bound).sum())}/{o.numel()} element(s) exceed "
                f"|out-ref| <= {atol:g} + {rtol:g}*|ref|; worst at flat index "
                f"{i}: got {o[i].item()!r}, expected {r[i].item()!r} "
                f"(max abs error {diff.max().item():.3g})")
    rnorm = r.norm().item()
    rel = diff.norm().item() / rnorm if rnorm > 0 else diff.norm().item()
    if rel > norm_tol:
        return (f"relative error norm ||out-ref||/||ref|| = {rel:.3g} exceeds "
                f"{norm_tol:g} for {dt}")
    return None
