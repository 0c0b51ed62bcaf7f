"""Parsing and validation of kgraph launch plans (docs/launch-plan.md).

A plan is checked completely when it is loaded, so a malformed plan fails with
a :class:`PlanError` that names the offending field
(``functions[0].buffers[2].dtype``) before anything touches a GPU.

Version 2 plans hold several functions (``functions``) and name a weights
file for their ``parameter`` buffers; a version 1 plan (one function at the
top level) loads as a plan of that one function. A version 3 plan is a
bundle (``kgraph-opt --tile=sm_80,sm_90a``): a ``variants`` list, each a
target, its PTX file and its functions, one weights file for all; it loads
as the plan of its first variant with every variant in ``variants``, and
:meth:`Plan.select_variant` picks the one for a device.
"""

import base64
import binascii
import json
import math
import os
from dataclasses import dataclass, field
from typing import Optional, Tuple

from .dtypes import DTYPES
from .errors import PlanError

PLAN_FORMAT = "kgraph-launch-plan"
#: Plan versions this runtime understands.
SUPPORTED_VERSIONS = (1, 2, 3)

#: Element size in bytes of every plan dtype (i1 is stored one byte per element).
DTYPE_SIZES = {name: d.bytes for name, d in DTYPES.items()}
#: "derived" buffers hold what the plan's "once" kernels compute from the
#: parameters: kept per device like the parameters, written once at load.
#: "constant" buffers hold a tensor constant of the graph, their bytes in the
#: plan ("data", base64): uploaded and kept per device like a parameter.
BUFFER_KINDS = ("input", "output", "intermediate", "parameter", "derived",
                "constant")
#: Buffer kinds of version 1 plans (no parameters).
BUFFER_KINDS_V1 = ("input", "output", "intermediate")
SCALAR_TYPES = ("i32", "i64", "f32")
#: The largest "workspace" argument a plan may ask for (1 GiB).
MAX_WORKSPACE_BYTES = 1 << 30


@dataclass(frozen=True)
class BufferSpec:
    """One device buffer of the plan."""

    id: int
    kind: str
    index: Optional[int]
    shape: Tuple[int, ...]
    dtype: str
    bytes: int
    #: The tensor's name in the weights file (``parameter`` buffers only).
    name: Optional[str] = None
    #: The buffer's bytes (``constant`` buffers only).
    data: Optional[bytes] = field(default=None, repr=False, compare=False)

    @property
    def numel(self) -> int:
        return math.prod(self.shape)

    def describe(self) -> str:
        return f"{self.dtype}{list(self.shape)}"


@dataclass(frozen=True)
class TensorMapSpec:
    """One TMA tensor map (CUtensorMap) the runtime encodes over a buffer:
    dims/box/element_strides innermost first, strides (bytes) of dims 1..
    (docs/launch-plan.md). A "tiled" map (cuTensorMapEncodeTiled) loads
    boxes; an "im2col" map (cuTensorMapEncodeIm2col) has no box but a pixel
    bounding box (lower/upper corner, rank - 2 entries each, innermost
    first) and loads channels_per_pixel channels of pixels_per_column
    pixels."""

    buffer: int
    dtype: str
    dims: Tuple[int, ...]
    strides: Tuple[int, ...]
    box: Tuple[int, ...]
    element_strides: Tuple[int, ...]
    swizzle: str
    interleave: str
    l2_promotion: str
    oob_fill: str
    #: The map's global address is the buffer's plus this (a view).
    byte_offset: int = 0
    #: "tiled" or "im2col". The corners and pixel counts below are an
    #: im2col map's (empty / 0 in a tiled one; an im2col map's box is empty).
    mode: str = "tiled"
    lower_corner: Tuple[int, ...] = ()
    upper_corner: Tuple[int, ...] = ()
    channels_per_pixel: int = 0
    pixels_per_column: int = 0


@dataclass(frozen=True)
class ArgSpec:
    """One kernel parameter: a buffer's device address, a scalar by value,
    or the device address of runtime-built tensor maps."""

    kind: str  # "buffer", "scalar", "tensor_maps" or "workspace"
    buffer: Optional[int] = None
    #: A "buffer" argument is the buffer's address plus this (a view).
    byte_offset: int = 0
    type: Optional[str] = None
    value: Optional[float] = None
    maps: Tuple[TensorMapSpec, ...] = ()
    #: A "workspace" argument's bytes (zeroed once, kept by the kernel).
    bytes: int = 0
    #: A "buffer" argument's address is the buffer's plus this many bytes
    #: (a view into the buffer).
    byte_offset: int = 0


@dataclass(frozen=True)
class OpSpec:
    """One op a kernel computes, with its source location (may be empty)."""

    op: str
    loc: str = ""

    def describe(self) -> str:
        name = self.op[len("kgraph."):] if self.op.startswith("kgraph.") \
            else self.op
        return f"{name} ({self.loc})" if self.loc else name


@dataclass(frozen=True)
class KernelSpec:
    """One kernel launch of the plan."""

    name: str
    grid: Tuple[int, int, int]
    block: Tuple[int, int, int]
    shared_bytes: int
    args: Tuple[ArgSpec, ...]
    #: What the kernel computes, for profiles (absent in older plans): its
    #: ops, the compiler's operation and byte counts, and the roofline its
    #: math runs on ("tensor_f16", "tensor_tf32", "tensor_i8" or "simt").
    ops: Tuple[OpSpec, ...] = ()
    flops: Optional[int] = None
    bytes: Optional[int] = None
    compute: Optional[str] = None
    #: Reads only parameters, constants and derived buffers and writes
    #: derived buffers: run once per device after the parameters and
    #: constants are uploaded, not on every call.
    once: bool = False


@dataclass(frozen=True)
class FunctionPlan:
    """The buffers and kernels of one function of a plan.

    ``inputs`` and ``outputs`` are the input/output buffers ordered by their
    ``index`` (the real inputs: parameters are not passed by the caller);
    ``parameters`` the buffers loaded from the weights file, in plan order.
    ``kernels`` are the launches of every call; ``once_kernels`` (plan
    order) compute the ``derived`` buffers from the parameters, once per
    device.
    """

    name: str
    buffers: Tuple[BufferSpec, ...]
    kernels: Tuple[KernelSpec, ...]
    inputs: Tuple[BufferSpec, ...]
    outputs: Tuple[BufferSpec, ...]
    intermediates: Tuple[BufferSpec, ...]
    parameters: Tuple[BufferSpec, ...] = ()
    derived: Tuple[BufferSpec, ...] = ()
    #: The graph's tensor constants, their bytes in the plan.
    constants: Tuple[BufferSpec, ...] = ()
    once_kernels: Tuple[KernelSpec, ...] = ()

    @property
    def function(self) -> str:
        """The function's name (as version 1 plans called it)."""
        return self.name

    def buffer(self, buffer_id: int) -> BufferSpec:
        return self._by_id()[buffer_id]

    def _by_id(self):
        return {b.id: b for b in self.buffers}


#: Roofline names a kernel's "compute" may take.
COMPUTE_KINDS = ("tensor_f16", "tensor_tf32", "tensor_i8", "simt")


@dataclass(frozen=True)
class Plan:
    """A validated launch plan: one PTX module, its functions.

    ``ptx_path`` is absolute; so is ``weights_path`` (None when no function
    has parameters). ``function``, ``buffers``, ``kernels``, ``inputs``,
    ``outputs``, ``intermediates``, ``parameters`` and ``buffer()`` are those
    of the first function (the only one of a version 1 plan).
    """

    path: str
    version: int
    target: str
    ptx_path: str
    functions: Tuple[FunctionPlan, ...]
    weights_path: Optional[str] = None
    #: A bundle's plans, one per target (version 3); empty otherwise.
    variants: Tuple["Plan", ...] = ()
    #: Who wrote the plan ("kgraph 0.1.0"; None in plans from before the
    #: field).
    producer: Optional[str] = None

    @property
    def targets(self) -> Tuple[str, ...]:
        """The targets the plan has PTX for."""
        return tuple(v.target for v in self.variants) or (self.target,)

    def select_variant(self, major: int, minor: int) -> "Plan":
        """The plan to run on a device of compute capability major.minor:
        this plan unless it is a bundle, else the variant
        :func:`choose_target` picks (a PlanError naming the bundle's
        targets and the device's when none runs there)."""
        if not self.variants:
            return self
        target = choose_target(self.targets, major, minor)
        if target is None:
            raise PlanError(
                f"{self.path}: no variant of this bundle runs on a device of "
                f"compute capability {major}.{minor} (sm_{major}{minor}); "
                f"the bundle has {', '.join(self.targets)}")
        return self.variants[self.targets.index(target)]

    @property
    def function_names(self) -> Tuple[str, ...]:
        return tuple(f.name for f in self.functions)

    def function_plan(self, name: Optional[str] = None) -> FunctionPlan:
        """The function called ``name`` (the first one when None)."""
        if name is None:
            return self.functions[0]
        for f in self.functions:
            if f.name == name:
                return f
        raise PlanError(f"{self.path}: no function '{name}' in the plan "
                        f"(functions: {', '.join(self.function_names)})")

    @property
    def function(self) -> str:
        return self.functions[0].name

    @property
    def buffers(self):
        return self.functions[0].buffers

    @property
    def kernels(self):
        return self.functions[0].kernels

    @property
    def inputs(self):
        return self.functions[0].inputs

    @property
    def outputs(self):
        return self.functions[0].outputs

    @property
    def intermediates(self):
        return self.functions[0].intermediates

    @property
    def parameters(self):
        return self.functions[0].parameters

    def buffer(self, buffer_id: int) -> BufferSpec:
        return self.functions[0].buffer(buffer_id)


def _is_int(v) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


class _Checker:
    """Helpers that raise a PlanError naming the plan file and field."""

    def __init__(self, source: str):
        self.source = source

    def fail(self, where: str, msg: str):
        prefix = f"{self.source}: " if self.source else ""
        raise PlanError(f"{prefix}{where}: {msg}" if where else f"{prefix}{msg}")

    def field(self, obj: dict, key: str, where: str):
        if not isinstance(obj, dict):
            self.fail(where, f"expected an object, got {type(obj).__name__}")
        if key not in obj:
            self.fail(where, f"missing field '{key}'")
        return obj[key]

    def int_field(self, obj, key, where, minimum=0):
        v = self.field(obj, key, where)
        if not _is_int(v) or v < minimum:
            self.fail(f"{where}.{key}" if where else key,
                      f"expected an integer >= {minimum}, got {v!r}")
        return v

    def str_field(self, obj, key, where):
        v = self.field(obj, key, where)
        if not isinstance(v, str) or not v:
            self.fail(f"{where}.{key}" if where else key,
                      f"expected a non-empty string, got {v!r}")
        return v

    def list_field(self, obj, key, where):
        v = self.field(obj, key, where)
        if not isinstance(v, list):
            self.fail(f"{where}.{key}" if where else key,
                      f"expected a list, got {type(v).__name__}")
        return v

    def dims3(self, obj, key, where):
        v = self.list_field(obj, key, where)
        if len(v) != 3 or not all(_is_int(x) and x >= 1 for x in v):
            self.fail(f"{where}.{key}",
                      f"expected three integers >= 1, got {v!r}")
        return tuple(v)


#: Views start at offsets that keep the kernels' 16-byte vector accesses
#: aligned.
BYTE_OFFSET_ALIGNMENT = 16


def _byte_offset(c, obj, where, buf) -> int:
    """The optional "byte_offset" of a buffer argument or tensor map: where a
    view starts in ``buf`` (absent = 0)."""
    if "byte_offset" not in obj:
        return 0
    off = c.int_field(obj, "byte_offset", where)
    if off % BYTE_OFFSET_ALIGNMENT:
        c.fail(f"{where}.byte_offset",
               f"{off} is not a multiple of {BYTE_OFFSET_ALIGNMENT}")
    if off >= buf.bytes:
        c.fail(f"{where}.byte_offset",
               f"{off} is not inside buffer {buf.id} of {buf.bytes} bytes")
    return off


#: Values of the tensor-map enums the plan may name.
TENSOR_MAP_DTYPES = tuple(name for name, d in DTYPES.items()
                          if d.tensor_map is not None)
TENSOR_MAP_SWIZZLES = ("none", "32B", "64B", "128B")
TENSOR_MAP_INTERLEAVES = ("none",)
TENSOR_MAP_L2_PROMOTIONS = ("none", "64B", "128B", "256B")
TENSOR_MAP_OOB_FILLS = ("zero",)
TENSOR_MAP_MODES = ("tiled", "im2col")
#: Limits of im2col maps (cuTensorMapEncodeIm2col).
IM2COL_RANKS = (3, 5)
IM2COL_MAX_CHANNELS = 256
IM2COL_MAX_PIXELS = 1024


def im2col_corner_range(rank: int) -> Tuple[int, int]:
    """The [lo, hi] range of an im2col map's corners: the 16 bits of the
    instruction's offsets shared by its rank - 2 spatial dimensions."""
    bits = 16 // (rank - 2)
    return -(1 << (bits - 1)), (1 << (bits - 1)) - 1


def _tensor_map(c, m, where, buffers_by_id) -> TensorMapSpec:
    bid = c.int_field(m, "buffer", where)
    if bid not in buffers_by_id:
        c.fail(f"{where}.buffer", f"no buffer with id {bid}")
    buf = buffers_by_id[bid]

    def choice(key, allowed):
        v = c.field(m, key, where)
        if v not in allowed:
            c.fail(f"{where}.{key}", f"{v!r} is not one of {list(allowed)}")
        return v

    def ints(key, minimum):
        vs = c.list_field(m, key, where)
        for i, v in enumerate(vs):
            if not _is_int(v) or v < minimum:
                c.fail(f"{where}.{key}[{i}]", f"{v!r} is not an integer "
                                              f">= {minimum}")
        return tuple(vs)

    # An absent mode is a tiled map (the plans from before im2col maps).
    mode = choice("mode", TENSOR_MAP_MODES) if "mode" in m else "tiled"
    im2col = mode == "im2col"
    dtype = choice("dtype", TENSOR_MAP_DTYPES)
    dims = ints("dims", 1)
    strides = ints("strides", 1)
    if im2col and "box" in m:
        c.fail(f"{where}.box", "an im2col map has no box (it loads "
                               "channels_per_pixel x pixels_per_column)")
    box = () if im2col else ints("box", 1)
    estrides = ints("element_strides", 1)
    rank = len(dims)
    lo_rank, hi_rank = IM2COL_RANKS if im2col else (1, 5)
    if not lo_rank <= rank <= hi_rank:
        kind = " for an im2col map" if im2col else ""
        c.fail(f"{where}.dims", f"rank {rank} is not in [{lo_rank}, {hi_rank}]"
                                f"{kind}")
    if len(strides) != rank - 1:
        c.fail(f"{where}.strides", f"needs {rank - 1} strides (dims 1..), got "
                                   f"{len(strides)}")
    sized = (("element_strides", estrides),) if im2col else \
        (("box", box), ("element_strides", estrides))
    for key, vs in sized:
        if len(vs) != rank:
            c.fail(f"{where}.{key}", f"needs {rank} entries, got {len(vs)}")
    for i, s in enumerate(strides):
        if s % 16:
            c.fail(f"{where}.strides[{i}]", f"{s} is not a multiple of 16")
    for i, b in enumerate(box):
        if b > 256:
            c.fail(f"{where}.box[{i}]", f"{b} is more than 256")
    for i, e in enumerate(estrides):
        if e > 8:
            c.fail(f"{where}.element_strides[{i}]", f"{e} is more than 8")
    # TMA copies bytes over the buffer: the map must read the buffer's
    # elements and stay inside it (the hardware does not check the buffer).
    if dtype != buf.dtype:
        c.fail(f"{where}.dtype", f"is {dtype} but buffer {bid} holds {buf.dtype}")
    size = DTYPE_SIZES[dtype]
    offset = _byte_offset(c, m, where, buf)
    extent = dims[0] * size + sum((d - 1) * s for d, s in zip(dims[1:], strides))
    if offset + extent > buf.bytes:
        at = f" from byte {offset}" if offset else ""
        c.fail(where, f"spans {extent} bytes{at} but buffer {bid} has "
                      f"{buf.bytes}")
    fields = {}
    if im2col:
        fields = _im2col_fields(c, m, where, rank, size)
    return TensorMapSpec(bid, dtype, dims, strides, box, estrides,
                         choice("swizzle", TENSOR_MAP_SWIZZLES),
                         choice("interleave", TENSOR_MAP_INTERLEAVES),
                         choice("l2_promotion", TENSOR_MAP_L2_PROMOTIONS),
                         choice("oob_fill", TENSOR_MAP_OOB_FILLS), offset,
                         mode=mode, **fields)


def _im2col_fields(c, m, where, rank, size) -> dict:
    """The corners, channels_per_pixel and pixels_per_column of an im2col
    map of ``rank`` over elements of ``size`` bytes."""
    lo, hi = im2col_corner_range(rank)
    out = {}
    for key in ("lower_corner", "upper_corner"):
        vs = c.list_field(m, key, where)
        if len(vs) != rank - 2:
            c.fail(f"{where}.{key}", f"needs {rank - 2} entries (rank - 2, "
                                     f"innermost first), got {len(vs)}")
        for i, v in enumerate(vs):
            if not _is_int(v) or not lo <= v <= hi:
                c.fail(f"{where}.{key}[{i}]", f"{v!r} is not an integer in "
                                              f"[{lo}, {hi}] (rank {rank})")
        out[key] = tuple(vs)
    cpp = c.int_field(m, "channels_per_pixel", where, 1)
    if cpp > IM2COL_MAX_CHANNELS:
        c.fail(f"{where}.channels_per_pixel",
               f"{cpp} is more than {IM2COL_MAX_CHANNELS}")
    if cpp * size % 16:
        c.fail(f"{where}.channels_per_pixel",
               f"{cpp} channels are {cpp * size} bytes, not a multiple of 16")
    ppc = c.int_field(m, "pixels_per_column", where, 1)
    if ppc > IM2COL_MAX_PIXELS:
        c.fail(f"{where}.pixels_per_column",
               f"{ppc} is more than {IM2COL_MAX_PIXELS}")
    out["channels_per_pixel"], out["pixels_per_column"] = cpp, ppc
    return out


def choose_target(targets, major: int, minor: int) -> Optional[str]:
    """The target of ``targets`` a device of compute capability major.minor
    runs best: the exact one (sm_86 on 8.6), else the architecture-specific
    one of that capability (sm_90a runs only on 9.0), else the highest plain
    target below it (the driver compiles its PTX for the device); None when
    every target is newer than the device or specific to another one."""
    cc = major * 10 + minor
    if f"sm_{cc}" in targets:
        return f"sm_{cc}"
    if f"sm_{cc}a" in targets:
        return f"sm_{cc}a"
    plain = [t for t in targets
             if t.startswith("sm_") and t[3:].isdigit() and int(t[3:]) <= cc]
    return max(plain, key=lambda t: int(t[3:])) if plain else None


def _signature(f: FunctionPlan):
    """What a caller of ``f`` sees: its inputs, outputs and parameters."""
    return tuple((b.kind, b.index, b.shape, b.dtype, b.name)
                 for b in f.inputs + f.outputs + f.parameters)


def _parse_functions(c, data, prefix: str):
    """The ``functions`` list of a version 2 plan or of a bundle variant."""
    entries = c.list_field(data, "functions", prefix[:-1])
    if not entries:
        c.fail(f"{prefix}functions", "the plan has no function")
    functions = []
    for f_i, f in enumerate(entries):
        functions.append(_parse_function(c, f, f"{prefix}functions[{f_i}].", 2))
    names = [f.name for f in functions]
    for f_i, n in enumerate(names):
        if names.index(n) != f_i:
            c.fail(f"{prefix}functions[{f_i}].name", f"duplicate function {n!r}")
    return functions


def _arg_buffers(arg: ArgSpec):
    """The ids of the buffers a kernel argument reaches: its buffer, or the
    buffers its tensor maps describe (none for a scalar)."""
    if arg.kind == "buffer":
        return [arg.buffer]
    return [m.buffer for m in arg.maps]


def _parse_function(c, data, prefix: str, version: int) -> FunctionPlan:
    """One function's buffers and kernels from ``data`` (the plan itself for
    version 1, an entry of ``functions`` for version 2); field names in
    errors start with ``prefix``."""
    def at(field):
        return f"{prefix}{field}"

    name = c.str_field(data, "function" if version == 1 else "name",
                       prefix[:-1] if prefix else "")
    kinds = BUFFER_KINDS_V1 if version == 1 else BUFFER_KINDS

    buffers = []
    seen_ids = set()
    param_names = {}
    for i, b in enumerate(c.list_field(data, "buffers", prefix[:-1])):
        where = at(f"buffers[{i}]")
        bid = c.int_field(b, "id", where)
        if bid in seen_ids:
            c.fail(f"{where}.id", f"duplicate buffer id {bid}")
        seen_ids.add(bid)
        kind = c.field(b, "kind", where)
        if kind not in kinds:
            c.fail(f"{where}.kind", f"unknown buffer kind {kind!r} "
                                    f"(expected one of {list(kinds)})")
        index = None
        if kind in ("input", "output"):
            index = c.int_field(b, "index", where)
        pname = None
        if kind == "parameter":
            pname = c.str_field(b, "name", where)
            if pname in param_names:
                c.fail(f"{where}.name", f"parameter {pname!r} is also buffer "
                                        f"{param_names[pname]}")
            param_names[pname] = bid
        shape = c.list_field(b, "shape", where)
        if not all(_is_int(d) and d >= 0 for d in shape):
            c.fail(f"{where}.shape",
                   f"expected a list of non-negative integers, got {shape!r}")
        dtype = c.field(b, "dtype", where)
        if dtype not in DTYPE_SIZES:
            c.fail(f"{where}.dtype", f"unknown dtype {dtype!r} "
                                     f"(expected one of {list(DTYPE_SIZES)})")
        nbytes = c.int_field(b, "bytes", where)
        want = math.prod(shape) * DTYPE_SIZES[dtype]
        if nbytes != want:
            c.fail(f"{where}.bytes", f"is {nbytes} but shape {shape} of "
                                     f"{dtype} needs {want}")
        payload = None
        if kind == "constant":
            text = c.str_field(b, "data", where)
            try:
                payload = base64.b64decode(text, validate=True)
            except (binascii.Error, ValueError):
                c.fail(f"{where}.data", "is not base64")
            if len(payload) != nbytes:
                c.fail(f"{where}.data", f"holds {len(payload)} bytes but the "
                                        f"buffer has {nbytes}")
        elif "data" in b:
            c.fail(f"{where}.data", f"only constant buffers carry data, not "
                                    f"{kind} buffers")
        buffers.append(BufferSpec(bid, kind, index, tuple(shape), dtype, nbytes,
                                  pname, payload))
    by_id = {b.id: b for b in buffers}

    def ordered(kind):
        bs = sorted((b for b in buffers if b.kind == kind), key=lambda b: b.index)
        for want, b in enumerate(bs):
            if b.index != want:
                c.fail(at("buffers"), f"{kind} indices must be 0..{len(bs) - 1} "
                                      f"each exactly once, got "
                                      f"{[x.index for x in bs]}")
        return tuple(bs)

    inputs, outputs = ordered("input"), ordered("output")
    if not outputs:
        c.fail(at("buffers"), "the plan has no output buffer")

    kernels = []
    for k_i, k in enumerate(c.list_field(data, "kernels", prefix[:-1])):
        where = at(f"kernels[{k_i}]")
        kname = c.str_field(k, "name", where)
        grid = c.dims3(k, "grid", where)
        block = c.dims3(k, "block", where)
        if math.prod(block) > 1024:
            c.fail(f"{where}.block", f"{list(block)} has more than 1024 threads")
        shared = c.int_field(k, "shared_bytes", where)
        args = []
        for a_i, a in enumerate(c.list_field(k, "args", where)):
            awhere = f"{where}.args[{a_i}]"
            akind = c.field(a, "kind", awhere)
            if akind == "buffer":
                bid = c.int_field(a, "buffer", awhere)
                if bid not in seen_ids:
                    c.fail(f"{awhere}.buffer", f"no buffer with id {bid}")
                off = _byte_offset(c, a, awhere,
                                   by_id[bid])
                args.append(ArgSpec("buffer", buffer=bid, byte_offset=off))
            elif akind == "scalar":
                stype = c.field(a, "type", awhere)
                if stype not in SCALAR_TYPES:
                    c.fail(f"{awhere}.type", f"unknown scalar type {stype!r} "
                                             f"(expected one of {list(SCALAR_TYPES)})")
                value = c.field(a, "value", awhere)
                if stype == "f32":
                    ok = isinstance(value, (int, float)) and not isinstance(value, bool)
                else:
                    bits = 32 if stype == "i32" else 64
                    ok = _is_int(value) and -(1 << (bits - 1)) <= value < (1 << bits)
                if not ok:
                    c.fail(f"{awhere}.value", f"{value!r} is not a valid {stype}")
                args.append(ArgSpec("scalar", type=stype, value=value))
            elif akind == "tensor_maps":
                maps = []
                for m_i, m in enumerate(c.list_field(a, "maps", awhere)):
                    maps.append(_tensor_map(c, m, f"{awhere}.maps[{m_i}]",
                                            by_id))
                if not maps:
                    c.fail(f"{awhere}.maps", "no tensor map")
                args.append(ArgSpec("tensor_maps", maps=tuple(maps)))
            elif akind == "workspace":
                nbytes = c.int_field(a, "bytes", awhere)
                if nbytes <= 0 or nbytes > MAX_WORKSPACE_BYTES:
                    c.fail(f"{awhere}.bytes", f"a workspace of {nbytes} bytes "
                                              f"(expected 1 to "
                                              f"{MAX_WORKSPACE_BYTES})")
                args.append(ArgSpec("workspace", bytes=nbytes))
            else:
                c.fail(f"{awhere}.kind", f"unknown argument kind {akind!r} "
                                         f"(expected 'buffer', 'scalar', "
                                         f"'tensor_maps' or 'workspace')")
        ops = []
        if "ops" in k:
            for o_i, o in enumerate(c.list_field(k, "ops", where)):
                owhere = f"{where}.ops[{o_i}]"
                op = c.str_field(o, "op", owhere)
                loc = o.get("loc", "")
                if not isinstance(loc, str):
                    c.fail(f"{owhere}.loc", f"expected a string, got {loc!r}")
                ops.append(OpSpec(op, loc))
        flops = c.int_field(k, "flops", where) if "flops" in k else None
        nbytes = c.int_field(k, "bytes", where) if "bytes" in k else None
        compute = None
        if "compute" in k:
            compute = k["compute"]
            if compute not in COMPUTE_KINDS:
                c.fail(f"{where}.compute", f"{compute!r} is not one of "
                                           f"{list(COMPUTE_KINDS)}")
        once = k.get("once", False)
        if not isinstance(once, bool):
            c.fail(f"{where}.once", f"expected true or false, got {once!r}")
        if once:
            # A once kernel runs before any input exists: everything it
            # touches must be a parameter or constant or derived from them.
            for a_i, a in enumerate(args):
                for bid in _arg_buffers(a):
                    if by_id[bid].kind not in ("parameter", "derived",
                                               "constant"):
                        c.fail(f"{where}.args[{a_i}]",
                               f"a once kernel uses {by_id[bid].kind} buffer "
                               f"{bid} (only parameter, constant and derived "
                               f"buffers)")
        kernels.append(KernelSpec(kname, grid, block, shared, tuple(args),
                                  tuple(ops), flops, nbytes, compute, once))
    if not kernels:
        c.fail(at("kernels"), "the plan has no kernel")
    used_once = {bid for k in kernels if k.once for a in k.args
                 for bid in _arg_buffers(a)}
    for i, b in enumerate(buffers):
        if b.kind == "derived" and b.id not in used_once:
            c.fail(at(f"buffers[{i}]"), f"derived buffer {b.id} is used by no "
                                        f"once kernel (nothing computes it)")
    if all(k.once for k in kernels):
        c.fail(at("kernels"), "every kernel is a once kernel: a call would "
                              "launch nothing")

    return FunctionPlan(
        name=name, buffers=tuple(buffers),
        kernels=tuple(k for k in kernels if not k.once),
        inputs=inputs, outputs=outputs,
        intermediates=tuple(b for b in buffers if b.kind == "intermediate"),
        parameters=tuple(b for b in buffers if b.kind == "parameter"),
        derived=tuple(b for b in buffers if b.kind == "derived"),
        constants=tuple(b for b in buffers if b.kind == "constant"),
        once_kernels=tuple(k for k in kernels if k.once))


def parse_plan(data, base_dir: str = ".", source: str = "",
               check_ptx: bool = True) -> Plan:
    """Validate the decoded JSON ``data`` of a plan and build a :class:`Plan`.

    ``base_dir`` is the folder the ``ptx`` and ``weights`` fields are
    relative to. With ``check_ptx`` the PTX file (and the weights file, when
    the plan names one) must exist.
    """
    c = _Checker(source)
    if not isinstance(data, dict):
        c.fail("", f"a launch plan is a JSON object, got {type(data).__name__}")
    fmt = data.get("format")
    if fmt != PLAN_FORMAT:
        c.fail("format", f"not a kgraph launch plan: format is {fmt!r}, "
                         f"expected {PLAN_FORMAT!r}")
    version = data.get("version")
    if version not in SUPPORTED_VERSIONS or not _is_int(version):
        c.fail("version", f"unsupported launch plan version {version!r} "
                          f"(this runtime knows {list(SUPPORTED_VERSIONS)})")
    if version == 3:
        entries = c.list_field(data, "variants", "")
        if not entries:
            c.fail("variants", "the bundle has no variant")
        parsed = []
        for v_i, v in enumerate(entries):
            where = f"variants[{v_i}]"
            if not isinstance(v, dict):
                c.fail(where, f"expected an object, got {type(v).__name__}")
            vt = c.str_field(v, "target", where)
            if any(vt == t for t, _, _ in parsed):
                c.fail(f"{where}.target", f"duplicate target {vt!r}")
            vptx = c.str_field(v, "ptx", where)
            functions = _parse_functions(c, v, where + ".")
            if parsed and [(f.name, _signature(f)) for f in functions] != \
                    [(f.name, _signature(f)) for f in parsed[0][2]]:
                c.fail(f"{where}.functions", "the functions, their inputs, "
                       "outputs or parameters differ from those of variants[0]")
            parsed.append((vt, vptx, functions))
    else:
        target = c.str_field(data, "target", "")
        ptx = c.str_field(data, "ptx", "")
        if version == 1:
            functions = [_parse_function(c, data, "", 1)]
        else:
            functions = _parse_functions(c, data, "")
        parsed = [(target, ptx, functions)]
    producer = c.str_field(data, "producer", "") if "producer" in data else None
    weights_path = None
    has_params = any(f.parameters for f in parsed[0][2])
    if "weights" in data:
        weights_path = os.path.abspath(
            os.path.join(base_dir, c.str_field(data, "weights", "")))
    elif has_params:
        user = next(f.name for f in parsed[0][2] if f.parameters)
        c.fail("weights", f"function '{user}' has parameter buffers but the "
                          f"plan names no weights file")
    if check_ptx and has_params and not os.path.isfile(weights_path):
        c.fail("weights", f"weights file {weights_path} not found")

    plans = []
    for v_i, (target, ptx, functions) in enumerate(parsed):
        ptx_path = os.path.abspath(os.path.join(base_dir, ptx))
        if check_ptx and not os.path.isfile(ptx_path):
            c.fail(f"variants[{v_i}].ptx" if version == 3 else "ptx",
                   f"PTX file {ptx_path} not found")
        plans.append(Plan(path=source, version=version, target=target,
                          ptx_path=ptx_path, functions=tuple(functions),
                          weights_path=weights_path, producer=producer))
    if version != 3:
        return plans[0]
    first = plans[0]
    return Plan(path=source, version=version, target=first.target,
                ptx_path=first.ptx_path, functions=first.functions,
                weights_path=weights_path, variants=tuple(plans),
                producer=producer)


def load_plan(path: str) -> Plan:
    """Read and validate the plan at ``path`` (PTX must exist beside it)."""
    path = os.fspath(path)
    try:
        with open(path, "r", encoding="utf-8") as f:
            text = f.read()
    except OSError as e:
        raise PlanError(f"cannot read launch plan {path}: {e.strerror}") from e
    try:
        data = json.loads(text)
    except json.JSONDecodeError as e:
        raise PlanError(f"{path}: not valid JSON: {e}") from e
    return parse_plan(data, base_dir=os.path.dirname(os.path.abspath(path)),
                      source=path)
