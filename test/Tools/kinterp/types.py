"""MLIR types of the kernels, and how their values are held.

Register values are numpy arrays: f32 as float32, f16 as float16, bf16 as
float32 holding bf16 values (numpy has no bf16), f64 as float64, integers
of any width and index as int64 (signed, wrapped to the width), i1 as bool.
A value of a thread-varying SSA name has a leading lane axis; a uniform one
(constants, values computed from them) has none. Vector dimensions follow.
"""
import re
from functools import lru_cache

import numpy as np


class TypeError_(Exception):
    pass


def scan_top(text, i=0):
    """Yields (index, character, depth after it) for each character of
    `text` from `i` outside strings, where depth counts the open brackets
    (`->` is not a closing bracket, strings are skipped whole)."""
    depth, n = 0, len(text)
    while i < n:
        c = text[i]
        if c == '"':
            i += 1
            while i < n and text[i] != '"':
                i += 2 if text[i] == "\\" else 1
        elif c == "-" and i + 1 < n and text[i + 1] == ">":
            i += 1
        elif c in "([{<":
            depth += 1
        elif c in ")]}>":
            depth -= 1
        yield i, c, depth
        i += 1


def split_top(text, sep):
    """`text` split at `sep` outside brackets and strings."""
    out, start = [], 0
    for i, c, depth in scan_top(text):
        if c == sep and depth == 0:
            out.append(text[start:i])
            start = i + 1
    out.append(text[start:])
    return out


class Type:
    rank = 0          # vector rank (dims after the lane axis)
    is_float = False
    is_int = False

    def __repr__(self):
        return self.text


class Scalar(Type):
    """f16 bf16 f32 f64 tf32 iN index."""

    def __init__(self, text):
        self.text = text
        if text == "index":
            self.is_int, self.width, self.kind = True, 64, "index"
        elif text.startswith("i"):
            self.is_int, self.width, self.kind = True, int(text[1:]), "int"
        elif text in ("f16", "bf16", "f32", "f64", "tf32"):
            self.is_float, self.kind = True, text
            self.width = {"f16": 16, "bf16": 16, "f32": 32, "f64": 64, "tf32": 32}[text]
        else:
            raise TypeError_(f"unsupported scalar type {text}")

    @property
    def bytes(self):
        return max(1, self.width // 8)


class Vector(Type):
    def __init__(self, text, shape, elem):
        self.text, self.shape, self.elem = text, tuple(shape), elem
        self.rank = len(shape)
        self.is_float, self.is_int = elem.is_float, elem.is_int


class MemRef(Type):
    """shape (-1 for ?), elem, strides/offset (None: identity), space
    ("global" or "workgroup")."""

    def __init__(self, text, shape, elem, strides, offset, space):
        self.text, self.shape, self.elem = text, tuple(shape), elem
        self.strides, self.offset, self.space = strides, offset, space


class Struct(Type):
    def __init__(self, text, elems):
        self.text, self.elems = text, elems


class Ptr(Type):
    def __init__(self, text, space):
        self.text, self.space = text, space


class Opaque(Type):
    """Tokens and other types whose values carry no data the interpreter
    uses (`!nvgpu.device.async.token`)."""

    def __init__(self, text):
        self.text = text


_VEC = re.compile(r'^vector<((?:\[?\d+\]?x)+)(.+)>$')


@lru_cache(maxsize=None)
def parse_type(text):
    t = text.strip()
    if t.startswith("vector<"):
        m = _VEC.match(t)
        if not m:
            raise TypeError_(f"unsupported vector type {t}")
        dims = [int(d.strip("[]")) for d in m.group(1).split("x") if d]
        return Vector(t, dims, parse_type(m.group(2)))
    if t.startswith("memref<"):
        parts = split_top(t[len("memref<"):-1], ",")
        head = parts[0].strip()
        dims = head.split("x")
        elem = parse_type(dims[-1])
        shape = [-1 if d == "?" else int(d) for d in dims[:-1]]
        strides = offset = None
        space = "global"
        for p in parts[1:]:
            p = p.strip()
            if p.startswith("strided<"):
                m = re.match(r'strided<\[([^\]]*)\](?:,\s*offset:\s*(\?|-?\d+))?>', p)
                strides = [int(s) for s in m.group(1).split(",") if s.strip()]
                offset = int(m.group(2)) if m.group(2) and m.group(2) != "?" else 0
                if "?" in m.group(1) or m.group(2) == "?":
                    raise TypeError_(f"dynamic strides are unsupported: {t}")
            elif "workgroup" in p or p == "3":
                space = "workgroup"
            elif p in ("1", "0") or "global" in p:
                space = "global"
            elif p.startswith("affine_map") or p.startswith("#"):
                raise TypeError_(f"unsupported memref layout/space {p} in {t}")
            else:
                raise TypeError_(f"unsupported memref attribute {p} in {t}")
        return MemRef(t, shape, elem, strides, offset, space)
    if t.startswith("!llvm.struct<("):
        inner = t[len("!llvm.struct<("):-2]
        return Struct(t, [parse_type(x) for x in split_top(inner, ",") if x.strip()])
    if t.startswith("!llvm.ptr"):
        m = re.match(r'^!llvm\.ptr(?:<(\d+)>)?$', t)
        if not m:
            raise TypeError_(f"unsupported pointer type {t}")
        return Ptr(t, int(m.group(1) or 0))
    if t.startswith("!"):
        return Opaque(t)
    return Scalar(t)


# ---- element storage ----------------------------------------------------------

_STORAGE = {"f16": np.float16, "bf16": np.uint16, "f32": np.float32, "f64": np.float64,
            "tf32": np.float32}


def storage_dtype(elem):
    """numpy dtype of `elem` in memory."""
    if elem.is_float:
        return np.dtype(_STORAGE[elem.kind])
    w = elem.width
    if w == 1 or w == 8:
        return np.dtype(np.int8)
    return np.dtype({16: np.int16, 32: np.int32, 64: np.int64}[w])


def register_dtype(elem):
    if elem.is_float:
        return np.dtype({"f16": np.float16, "bf16": np.float32, "f32": np.float32,
                         "f64": np.float64, "tf32": np.float32}[elem.kind])
    if elem.width == 1:
        return np.dtype(np.bool_)
    return np.dtype(np.int64)


def bf16_to_f32(bits):
    b = np.asarray(bits)
    out = (np.array(b, ndmin=1).astype(np.uint16).astype(np.uint32) << np.uint32(16)).view(np.float32)
    return out.reshape(b.shape)


def f32_to_bf16_bits(x):
    """Round-to-nearest-even of float32 values to bf16 bit patterns."""
    shape = np.shape(x)
    x = np.array(x, dtype=np.float32, ndmin=1)
    u = x.view(np.uint32).astype(np.uint64)
    rounded = ((u + np.uint64(0x7FFF) + ((u >> np.uint64(16)) & np.uint64(1)))
               >> np.uint64(16)).astype(np.uint16)
    nan = np.isnan(x)
    if nan.any():
        rounded = np.where(nan, ((u >> np.uint64(16)) | np.uint64(0x40)).astype(np.uint16), rounded)
    return rounded.reshape(shape)


def round_bf16(x):
    return bf16_to_f32(f32_to_bf16_bits(x))


def to_register(raw, elem):
    """Values read from memory (storage dtype) as register values."""
    if elem.is_float:
        if elem.kind == "bf16":
            return bf16_to_f32(raw)
        return raw.astype(register_dtype(elem), copy=False)
    if elem.width == 1:
        return raw != 0
    return raw.astype(np.int64)


def to_storage(val, elem):
    """Register values as the storage dtype."""
    if elem.is_float:
        if elem.kind == "bf16":
            return f32_to_bf16_bits(val)
        return np.asarray(val).astype(storage_dtype(elem))
    return np.asarray(val).astype(np.int64).astype(storage_dtype(elem))


def wrap_int(x, width):
    """Signed two's-complement wrap of int64 values to `width` bits."""
    if width >= 64:
        return x
    if width == 1:
        return (np.asarray(x) & 1).astype(np.bool_)
    half = 1 << (width - 1)
    return ((np.asarray(x, dtype=np.int64) + half) & ((1 << width) - 1)) - half


def to_unsigned(x, width):
    """int64 values as unsigned `width`-bit numbers (uint64)."""
    x = np.asarray(x)
    if x.dtype == np.bool_:
        return x.astype(np.uint64)
    u = x.astype(np.int64).astype(np.uint64)
    if width >= 64:
        return u
    return u & np.uint64((1 << width) - 1)
