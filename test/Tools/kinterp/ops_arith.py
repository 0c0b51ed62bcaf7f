"""arith, math, ub and vector ops: per-lane arithmetic with the rounding of
the result type (f32 ops in float32, f16 in float16, bf16 computed in f32
and rounded to nearest even, math functions in float64 then rounded;
integers wrapped to their width)."""
import math
import re
import struct

import numpy as np
import torch

from .memory import Unsupported
from .types import (Scalar, Vector, bf16_to_f32, register_dtype, round_bf16, storage_dtype,
                    to_register, to_storage, to_unsigned, wrap_int)


def elem_of(t):
    return t.elem if isinstance(t, Vector) else t


def operands(env, op):
    return [env[o] for o in op.operands]


def round_float(x, elem):
    """float values (any float dtype) rounded to the float type `elem`."""
    k = elem.kind
    if k == "f32" or k == "tf32":
        return np.asarray(x).astype(np.float32)
    if k == "f16":
        # numpy rounds float64 or float32 to float16 directly (one rounding).
        return np.asarray(x).astype(np.float16)
    if k == "bf16":
        a = np.asarray(x)
        if a.dtype == np.float64:
            a = _f64_to_f32_toward_zero_sticky(a)
        return round_bf16(a.astype(np.float32))
    if k == "f64":
        return np.asarray(x).astype(np.float64)
    raise Unsupported(f"float type {k}")


def _f64_to_f32_toward_zero_sticky(a):
    """float64 -> float32 rounding to odd, so that a second rounding to a
    narrower type (bf16) is the correct single rounding."""
    f = a.astype(np.float32)
    back = f.astype(np.float64)
    inexact = (back != a) & np.isfinite(a)
    if inexact.any():
        bits = f.view(np.uint32).copy()
        # Toward zero first: step back one ulp where rounding went away from zero.
        away = inexact & (np.abs(back) > np.abs(a))
        bits[away] -= 1
        bits[inexact] |= 1
        f = bits.view(np.float32)
    return f


# ---- constants -----------------------------------------------------------------

def _float_from_text(text, elem):
    t = text.strip()
    if t.startswith("0x") or t.startswith("-0x"):
        v = int(t, 16)
        w = elem.width
        if elem.kind == "f32":
            return np.frombuffer(struct.pack("<I", v & 0xFFFFFFFF), np.float32)[0]
        if elem.kind == "f16":
            return np.frombuffer(struct.pack("<H", v & 0xFFFF), np.float16)[0]
        if elem.kind == "bf16":
            return bf16_to_f32(np.uint16(v & 0xFFFF))[()]
        if elem.kind == "f64":
            return np.frombuffer(struct.pack("<Q", v & ((1 << 64) - 1)), np.float64)[0]
        raise Unsupported(f"hex float constant of {elem} ({w} bits)")
    if t in ("inf", "+inf"):
        v = math.inf
    elif t == "-inf":
        v = -math.inf
    elif t == "nan":
        v = math.nan
    else:
        v = float(t)
    return round_float(np.float64(v), elem)[()]


def _scalar_from_text(text, elem):
    t = text.strip()
    if elem.is_float:
        return _float_from_text(t, elem)
    if t in ("true", "false"):
        v = 1 if t == "true" else 0
    else:
        v = int(t, 0)
    if elem.width == 1:
        return np.bool_(v & 1)
    return np.int64(wrap_int(np.int64(v), elem.width))


def _nested(text):
    """A dense literal's nested lists of element texts."""
    t = text.strip()
    if not t.startswith("["):
        return t
    out, depth, start = [], 0, 1
    for i, c in enumerate(t):
        if c == "[":
            depth += 1
        elif c == "]":
            depth -= 1
            if depth == 0:
                part = t[start:i].strip()
                if part:
                    out.append(part)
        elif c == "," and depth == 1:
            out.append(t[start:i].strip())
            start = i + 1
    return [_nested(p) for p in out]


def _flatten(x):
    if isinstance(x, list):
        for y in x:
            yield from _flatten(y)
    else:
        yield x


def constant_value(op):
    v = op.cache.get("const")
    if v is not None:
        return v
    text = op.attr("value")
    typ = op.result_types[0]
    m = re.match(r'^(.*?)\s*:\s*([^:]+)$', text, re.S)
    lit = m.group(1) if m else text
    if isinstance(typ, Vector):
        dm = re.match(r'^dense<(.*)>$', lit.strip(), re.S)
        if not dm:
            raise Unsupported(f"line {op.line}: vector constant {lit[:60]!r}")
        body = dm.group(1).strip()
        elem = typ.elem
        if body.startswith('"0x'):
            raw = bytes.fromhex(body.strip('"')[2:])
            arr = np.frombuffer(raw, storage_dtype(elem))
            n = int(np.prod(typ.shape))
            if arr.size == 1:
                arr = np.repeat(arr, n)
            v = to_register(arr.reshape(typ.shape), elem)
        else:
            nested = _nested(body)
            if isinstance(nested, list):
                flat = [_scalar_from_text(x, elem) for x in _flatten(nested)]
                v = np.array(flat, dtype=register_dtype(elem)).reshape(typ.shape)
            else:
                v = np.full(typ.shape, _scalar_from_text(nested, elem), register_dtype(elem))
    elif isinstance(typ, Scalar):
        v = _scalar_from_text(lit, typ)
    else:
        raise Unsupported(f"line {op.line}: arith.constant of type {typ}")
    op.cache["const"] = v
    return v


def h_constant(ip, op, env, mask):
    return constant_value(op)


def h_poison(ip, op, env, mask):
    typ = op.result_types[0]
    elem = elem_of(typ)
    shape = typ.shape if isinstance(typ, Vector) else ()
    if elem.is_float:
        return np.full(shape, np.nan, register_dtype(elem))
    if elem.width == 1:
        return np.zeros(shape, bool)
    return np.full(shape, wrap_int(np.int64(0x5A5A5A5A5A5A5A5A), elem.width), np.int64)


# ---- floats --------------------------------------------------------------------

def _fbin(fn):
    def h(ip, op, env, mask):
        a, b = operands(env, op)
        elem = elem_of(op.result_types[0])
        r = fn(a, b)
        if elem.kind == "bf16":
            return round_bf16(r)
        return r
    return h


def h_negf(ip, op, env, mask):
    return -env[op.operands[0]]


def _fmath(fn):
    """math op computed in float64, rounded to the result type."""
    def h(ip, op, env, mask):
        xs = [np.asarray(x, dtype=np.float64) for x in operands(env, op)]
        return round_float(fn(*xs), elem_of(op.result_types[0]))
    return h


def _torch_f64(fn):
    def f(x):
        return fn(torch.from_numpy(np.ascontiguousarray(np.asarray(x, np.float64)))).numpy()
    return f


def h_fma(ip, op, env, mask):
    a, b, c = [np.asarray(x, dtype=np.float64) for x in operands(env, op)]
    return round_float(a * b + c, elem_of(op.result_types[0]))


def h_absf(ip, op, env, mask):
    return np.abs(env[op.operands[0]])


_CMPF = {
    0: lambda a, b: np.zeros(np.broadcast(a, b).shape, bool),
    1: lambda a, b: a == b, 2: lambda a, b: a > b, 3: lambda a, b: a >= b,
    4: lambda a, b: a < b, 5: lambda a, b: a <= b,
    6: lambda a, b: (a != b) & ~np.isnan(a) & ~np.isnan(b),
    7: lambda a, b: ~np.isnan(a) & ~np.isnan(b),
    8: lambda a, b: (a == b) | np.isnan(a) | np.isnan(b),
    9: lambda a, b: ~(a <= b), 10: lambda a, b: ~(a < b), 11: lambda a, b: ~(a >= b),
    12: lambda a, b: ~(a > b), 13: lambda a, b: a != b,
    14: lambda a, b: np.isnan(a) | np.isnan(b),
    15: lambda a, b: np.ones(np.broadcast(a, b).shape, bool),
}


def _predicate(op):
    p = op.cache.get("pred")
    if p is None:
        p = op.int_attr("predicate")
        op.cache["pred"] = p
    return p


def h_cmpf(ip, op, env, mask):
    a, b = operands(env, op)
    return np.asarray(_CMPF[_predicate(op)](a, b))


# ---- integers ------------------------------------------------------------------

def _ints(x):
    x = np.asarray(x)
    return x.astype(np.int64) if x.dtype == np.bool_ else x


def _signed(u):
    """uint64 values as int64 (two's complement)."""
    return np.asarray(u).astype(np.uint64).astype(np.int64)


def _width(op):
    e = elem_of(op.result_types[0])
    return e.width


def _ibin(fn, unsigned=False):
    def h(ip, op, env, mask):
        a, b = operands(env, op)
        w = _width(op)
        if unsigned:
            r = _signed(fn(to_unsigned(a, w), to_unsigned(b, w)))
        else:
            r = fn(_ints(a), _ints(b))
        return wrap_int(r, w)
    return h


def _udiv(a, b):
    b = np.where(b == 0, np.uint64(1), b)
    return a // b


def _urem(a, b):
    b = np.where(b == 0, np.uint64(1), b)
    return a % b


def _sdiv(a, b):
    b = np.where(b == 0, 1, b)
    q = np.abs(a) // np.abs(b)
    return np.where((a < 0) != (b < 0), -q, q)


def _srem(a, b):
    b = np.where(b == 0, 1, b)
    return a - _sdiv(a, b) * b


def _sfloordiv(a, b):
    b = np.where(b == 0, 1, b)
    return a // b


def _sceildiv(a, b):
    b = np.where(b == 0, 1, b)
    return -((-a) // b)


def _uceildiv(a, b):
    b = np.where(b == 0, np.uint64(1), b)
    return (a + b - np.uint64(1)) // b


def _bitwise(fn):
    def h(ip, op, env, mask):
        a, b = operands(env, op)
        a, b = np.asarray(a), np.asarray(b)
        if a.dtype == np.bool_ and b.dtype == np.bool_:
            return fn(a, b)
        return wrap_int(fn(_ints(a), _ints(b)), _width(op))
    return h


def h_shli(ip, op, env, mask):
    a, b = [_ints(x) for x in operands(env, op)]
    w = _width(op)
    return wrap_int(np.where(b >= w, 0, np.left_shift(a, np.clip(b, 0, 63))), w)


def h_shrui(ip, op, env, mask):
    a, b = operands(env, op)
    w = _width(op)
    ua = to_unsigned(a, w)
    ub = to_unsigned(b, w)
    r = np.where(ub >= w, np.uint64(0), np.right_shift(ua, np.minimum(ub, np.uint64(63))))
    return wrap_int(_signed(r), w)


def h_shrsi(ip, op, env, mask):
    a, b = [_ints(x) for x in operands(env, op)]
    return wrap_int(np.right_shift(a, np.clip(b, 0, 63)), _width(op))


_CMPI = {0: np.equal, 1: np.not_equal, 2: np.less, 3: np.less_equal, 4: np.greater,
         5: np.greater_equal}


def h_cmpi(ip, op, env, mask):
    a, b = operands(env, op)
    p = _predicate(op)
    if p < 6:
        return np.asarray(_CMPI[p](_ints(a), _ints(b)))
    w = elem_of(op.operand_types[0]).width
    ua, ub = to_unsigned(a, w), to_unsigned(b, w)
    return np.asarray({6: np.less, 7: np.less_equal, 8: np.greater, 9: np.greater_equal}[p](ua, ub))


def h_select(ip, op, env, mask):
    c, a, b = operands(env, op)
    rank = getattr(op.result_types[0], "rank", 0)
    c = np.asarray(c)
    ctype = op.operand_types[0]
    if np.ndim(c) and getattr(ctype, "rank", 0) == 0 and rank:
        c = c.reshape((-1,) + (1,) * rank)
    return np.where(c, a, b)


def h_absi(ip, op, env, mask):
    return wrap_int(np.abs(_ints(env[op.operands[0]])), _width(op))


# ---- casts ---------------------------------------------------------------------

def h_extf(ip, op, env, mask):
    x = env[op.operands[0]]
    return round_float(np.asarray(x), elem_of(op.result_types[0]))


def h_truncf(ip, op, env, mask):
    return round_float(np.asarray(env[op.operands[0]]), elem_of(op.result_types[0]))


def h_sitofp(ip, op, env, mask):
    x = _ints(env[op.operands[0]])
    dst = elem_of(op.result_types[0])
    if dst.kind == "bf16":
        return round_float(np.asarray(x, dtype=np.float64), dst)
    return np.asarray(x).astype(register_dtype(dst))


def h_uitofp(ip, op, env, mask):
    w = elem_of(op.operand_types[0]).width
    x = to_unsigned(env[op.operands[0]], w).astype(np.float64)
    return round_float(x, elem_of(op.result_types[0]))


def _fptoint(x, width, signed):
    x = np.asarray(x, dtype=np.float64)
    t = np.trunc(np.where(np.isnan(x), 0.0, x))
    if signed:
        lo, hi = -(2.0 ** (width - 1)), 2.0 ** (width - 1) - 1
    else:
        lo, hi = 0.0, 2.0 ** width - 1
    r = np.clip(t, lo, hi)
    if width >= 64:
        return r.astype(np.int64)
    return wrap_int(r.astype(np.int64), width)


def h_fptosi(ip, op, env, mask):
    # PTX cvt.rzi: toward zero, saturating, NaN -> 0.
    return _fptoint(env[op.operands[0]], _width(op), True)


def h_call_intrinsic(ip, op, env, mask):
    """LLVM intrinsics the kernels call by name: llvm.nvvm.f2i.rz is PTX's
    cvt.rzi.s32.f32 (toward zero, saturating, NaN -> 0), as arith.fptosi
    is taken here."""
    name = (op.attr("intrin") or "").strip('"')
    if name == "llvm.nvvm.f2i.rz":
        return _fptoint(env[op.operands[0]], 32, True)
    raise Unsupported(f"line {op.line}: llvm.call_intrinsic {name!r}")


def h_fptoui(ip, op, env, mask):
    return _fptoint(env[op.operands[0]], _width(op), False)


def h_extsi(ip, op, env, mask):
    x = _ints(env[op.operands[0]])
    return wrap_int(x, _width(op))


def h_extui(ip, op, env, mask):
    w = elem_of(op.operand_types[0]).width
    return wrap_int(_signed(to_unsigned(env[op.operands[0]], w)), _width(op))


def h_trunci(ip, op, env, mask):
    return wrap_int(_ints(env[op.operands[0]]), _width(op))


def h_index_cast(ip, op, env, mask):
    return wrap_int(_ints(env[op.operands[0]]), _width(op))


def h_index_castui(ip, op, env, mask):
    w = elem_of(op.operand_types[0]).width
    return wrap_int(_signed(to_unsigned(env[op.operands[0]], w)), _width(op))


def _bits_of(x, elem):
    """Register values as their storage bit patterns (numpy storage dtype)."""
    return np.ascontiguousarray(to_storage(np.asarray(x), elem))


def h_bitcast(ip, op, env, mask):
    x = env[op.operands[0]]
    src = elem_of(op.operand_types[0])
    dst = elem_of(op.result_types[0])
    raw = _bits_of(x, src)
    sdt = storage_dtype(dst)
    if raw.ndim == 0:
        out = raw.reshape(1).view(sdt).reshape(())
    else:
        out = raw.view(sdt)
    return to_register(out, dst)


# ---- vector --------------------------------------------------------------------

_DYN = -9223372036854775808


def _positions(op, env, key):
    pos = op.cache.get(key)
    if pos is None:
        pos = op.array_attr(key)
        op.cache[key] = pos
    if _DYN in pos:
        raise Unsupported(f"line {op.line}: {op.name} with dynamic positions")
    return pos


def h_vextract(ip, op, env, mask):
    v = env[op.operands[0]]
    pos = _positions(op, env, "static_position")
    return np.asarray(v)[(Ellipsis,) + tuple(pos) + (slice(None),) * op.result_types[0].rank] \
        if pos else np.asarray(v)


def h_vinsert(ip, op, env, mask):
    src, dest = operands(env, op)
    pos = _positions(op, env, "static_position")
    dtype = op.result_types[0]
    srank = getattr(op.operand_types[0], "rank", 0)
    src = np.asarray(src)
    dest = np.asarray(dest)
    lead_d = dest.shape[:dest.ndim - dtype.rank]
    lead_s = src.shape[:src.ndim - srank]
    lead = lead_d if len(lead_d) >= len(lead_s) else lead_s
    out = np.array(np.broadcast_to(dest, lead + dtype.shape))
    out[(Ellipsis,) + tuple(pos) + (slice(None),) * srank] = src
    return out


def h_from_elements(ip, op, env, mask):
    xs = [np.asarray(x) for x in operands(env, op)]
    typ = op.result_types[0]
    lead = ()
    for x in xs:
        if x.ndim:
            lead = x.shape
            break
    arr = np.stack([np.broadcast_to(x, lead) for x in xs], axis=-1)
    return arr.reshape(lead + typ.shape).astype(register_dtype(typ.elem), copy=False)


def h_to_elements(ip, op, env, mask):
    v = np.asarray(env[op.operands[0]])
    typ = op.operand_types[0]
    lead = v.shape[:v.ndim - typ.rank]
    flat = v.reshape(lead + (-1,))
    out = [flat[..., i] for i in range(flat.shape[-1])]
    return out if len(out) != 1 else out[0]


def h_broadcast(ip, op, env, mask):
    x = np.asarray(env[op.operands[0]])
    typ = op.result_types[0]
    srank = getattr(op.operand_types[0], "rank", 0)
    lead = x.shape[:x.ndim - srank]
    inner = x.reshape(lead + (1,) * (typ.rank - srank) + x.shape[x.ndim - srank:])
    return np.broadcast_to(inner, lead + typ.shape).astype(register_dtype(typ.elem), copy=False)


def h_vbitcast(ip, op, env, mask):
    x = np.asarray(env[op.operands[0]])
    src, dst = op.operand_types[0], op.result_types[0]
    raw = _bits_of(x, src.elem)
    out = raw.view(storage_dtype(dst.elem))
    lead = x.shape[:x.ndim - src.rank]
    return to_register(out.reshape(lead + dst.shape), dst.elem)


def h_shape_cast(ip, op, env, mask):
    x = np.asarray(env[op.operands[0]])
    src, dst = op.operand_types[0], op.result_types[0]
    lead = x.shape[:x.ndim - src.rank]
    return x.reshape(lead + dst.shape)


def h_vfma(ip, op, env, mask):
    return h_fma(ip, op, env, mask)


HANDLERS = {
    "arith.constant": h_constant,
    "ub.poison": h_poison,
    "llvm.mlir.poison": h_poison,
    "llvm.mlir.undef": h_poison,
    "arith.addf": _fbin(lambda a, b: a + b),
    "arith.subf": _fbin(lambda a, b: a - b),
    "arith.mulf": _fbin(lambda a, b: a * b),
    "arith.divf": _fbin(lambda a, b: a / b),
    "arith.remf": _fbin(np.fmod),
    # np.maximum / np.minimum propagate NaN, as maximumf / minimumf do.
    "arith.maximumf": _fbin(np.maximum),
    "arith.minimumf": _fbin(np.minimum),
    "arith.maxnumf": _fbin(np.fmax),
    "arith.minnumf": _fbin(np.fmin),
    "arith.negf": h_negf,
    "arith.cmpf": h_cmpf,
    "math.fma": h_fma,
    "vector.fma": h_vfma,
    "math.absf": h_absf,
    "math.sqrt": _fmath(np.sqrt),
    "math.rsqrt": _fmath(lambda x: 1.0 / np.sqrt(x)),
    "math.exp": _fmath(np.exp),
    "math.exp2": _fmath(np.exp2),
    "math.expm1": _fmath(np.expm1),
    "math.log": _fmath(np.log),
    "math.log2": _fmath(np.log2),
    "math.log1p": _fmath(np.log1p),
    "math.tanh": _fmath(np.tanh),
    "math.sin": _fmath(np.sin),
    "math.cos": _fmath(np.cos),
    "math.erf": _fmath(_torch_f64(torch.special.erf)),
    "math.erfc": _fmath(_torch_f64(torch.special.erfc)),
    "math.powf": _fmath(np.power),
    "math.floor": _fmath(np.floor),
    "math.ceil": _fmath(np.ceil),
    "math.copysign": _fmath(np.copysign),
    "arith.addi": _ibin(lambda a, b: a + b),
    "arith.subi": _ibin(lambda a, b: a - b),
    "arith.muli": _ibin(lambda a, b: a * b),
    "arith.divsi": _ibin(_sdiv),
    "arith.remsi": _ibin(_srem),
    "arith.floordivsi": _ibin(_sfloordiv),
    "arith.ceildivsi": _ibin(_sceildiv),
    "arith.divui": _ibin(_udiv, unsigned=True),
    "arith.remui": _ibin(_urem, unsigned=True),
    "arith.ceildivui": _ibin(_uceildiv, unsigned=True),
    "arith.maxsi": _ibin(np.maximum),
    "arith.minsi": _ibin(np.minimum),
    "arith.maxui": _ibin(np.maximum, unsigned=True),
    "arith.minui": _ibin(np.minimum, unsigned=True),
    "arith.andi": _bitwise(np.bitwise_and),
    "arith.ori": _bitwise(np.bitwise_or),
    "arith.xori": _bitwise(np.bitwise_xor),
    "arith.shli": h_shli,
    "arith.shrui": h_shrui,
    "arith.shrsi": h_shrsi,
    "arith.cmpi": h_cmpi,
    "arith.select": h_select,
    "math.absi": h_absi,
    "arith.extf": h_extf,
    "arith.truncf": h_truncf,
    "arith.sitofp": h_sitofp,
    "arith.uitofp": h_uitofp,
    "arith.fptosi": h_fptosi,
    "llvm.call_intrinsic": h_call_intrinsic,
    "arith.fptoui": h_fptoui,
    "arith.extsi": h_extsi,
    "arith.extui": h_extui,
    "arith.trunci": h_trunci,
    "arith.index_cast": h_index_cast,
    "arith.index_castui": h_index_castui,
    "arith.bitcast": h_bitcast,
    "vector.extract": h_vextract,
    "vector.insert": h_vinsert,
    "vector.from_elements": h_from_elements,
    "vector.to_elements": h_to_elements,
    "vector.broadcast": h_broadcast,
    "vector.splat": h_broadcast,
    "vector.bitcast": h_vbitcast,
    "vector.shape_cast": h_shape_cast,
}
