"""Runs a launch plan (docs/launch-plan.md) in the interpreter, as the
runtime would on a GPU: allocates its buffers (outputs and intermediates
poisoned: 0xFF bytes, NaN in every float type), builds the tensor maps of
`tensor_maps` arguments, and launches the kernels of the kernel IR (the
`--emit=gpu` module in generic form) in order."""
import base64

import numpy as np

from .interp import run_kernel
from .memory import KernelError, Memory, MemRefVal, identity_strides
from .ops_async import TMAP_MAGIC, TensorMap
from .parser import find_kernels, parse_module
from .types import MemRef, bf16_to_f32, f32_to_bf16_bits, parse_type

#: numpy dtype of each plan dtype in memory.
STORAGE = {"f32": np.float32, "f16": np.float16, "bf16": np.uint16, "i8": np.int8,
           "i32": np.int32, "i1": np.int8, "f64": np.float64, "i64": np.int64}
_ELEM = {"f32": "f32", "f16": "f16", "bf16": "bf16", "i8": "i8", "i32": "i32", "i1": "i8"}
#: Poison byte of unwritten buffers: 0xFF is NaN in f32/f16/bf16; integer
#: outputs are checked through the written-byte shadow instead.
POISON = 0xFF


def to_storage(x, dtype):
    """A numpy array of a plan dtype's values (bf16 given as floats) as its
    bytes in memory."""
    if dtype == "bf16":
        return f32_to_bf16_bits(np.asarray(x, np.float32))
    if dtype == "i1":
        return (np.asarray(x) != 0).astype(np.int8)
    return np.asarray(x).astype(STORAGE[dtype])


def from_storage(raw, dtype):
    if dtype == "bf16":
        return bf16_to_f32(raw)
    return raw


def tensor_map(kernel, j, m, addr, elem):
    """The TensorMap of plan map entry `m` (the `j`-th of a kernel's
    `tensor_maps` argument) at global address `addr`: a tiled map's box, or
    an im2col map's corners and pixel counts (it has no box)."""
    mode = m.get("mode", "tiled")
    common = (m.get("swizzle", "none"), m.get("oob_fill", "zero"), m.get("element_strides"))
    if mode == "tiled":
        return TensorMap(addr, elem, m["dims"], m["strides"], m["box"], *common)
    if mode != "im2col" or "box" in m:
        raise KernelError(f"{kernel}: tensor map {j} of mode {mode!r}"
                          + (" with a box" if "box" in m else ""))
    return TensorMap(addr, elem, m["dims"], m["strides"], (), *common, mode="im2col",
                     lower_corner=m["lower_corner"], upper_corner=m["upper_corner"],
                     channels_per_pixel=m["channels_per_pixel"],
                     pixels_per_column=m["pixels_per_column"])


class Module:
    """The kernels of a generic-form module text."""

    def __init__(self, text):
        self.blocks = parse_module(text)
        self.kernels = find_kernels(self.blocks)


def run_plan(fplan, module, inputs, params=None, max_lanes=None, on_kernel=None):
    """Runs the kernels of `fplan` (one entry of a plan's `functions`) of
    `module` (Module) on `inputs` (numpy arrays by input index, in their
    plan dtypes; bf16 as float values). Returns (outputs by index as numpy
    arrays, {output index: bool array of the elements no kernel wrote})."""
    mem = Memory()
    mem.tensor_maps = {}
    bufs = {}
    workspaces = {}
    for b in fplan["buffers"]:
        n = b["bytes"]
        buf = mem.alloc(n, f"buffer {b['id']} ({b['kind']} {b.get('index', b.get('name', ''))})",
                        POISON)
        if b["kind"] == "input":
            data = to_storage(inputs[b["index"]], b["dtype"])
            if data.nbytes != n:
                raise ValueError(f"input {b['index']}: {data.nbytes} bytes for a "
                                 f"{n}-byte buffer")
            buf.data[:n] = np.ascontiguousarray(data).view(np.uint8).reshape(-1)
        elif b["kind"] == "parameter":
            if not params or b["name"] not in params:
                raise ValueError(f"parameter {b['name']} has no value")
            data = to_storage(params[b["name"]], b["dtype"])
            buf.data[:n] = np.ascontiguousarray(data).view(np.uint8).reshape(-1)
        elif b["kind"] == "constant":
            data = np.frombuffer(base64.b64decode(b["data"]), dtype=np.uint8)
            if data.size != n:
                raise ValueError(f"constant buffer {b['id']}: {data.size} bytes "
                                 f"for a {n}-byte buffer")
            buf.data[:n] = data
        bufs[b["id"]] = (buf, b)
    # As the runtime does: the once kernels (parameters -> derived buffers)
    # first, then a call's kernels, each in plan order.
    kernels = [k for k in fplan["kernels"] if k.get("once")] + \
        [k for k in fplan["kernels"] if not k.get("once")]
    for k in kernels:
        func = module.kernels.get(k["name"])
        if func is None:
            raise KernelError(f"the plan's kernel {k['name']} is not in the kernel IR")
        entry = func.regions[0][0]
        types = entry.arg_types
        args = []
        for i, a in enumerate(k["args"]):
            t = types[i]
            if a["kind"] == "buffer":
                buf, desc = bufs[a["buffer"]]
                off = a.get("byte_offset", 0)
                if not isinstance(t, MemRef):
                    raise KernelError(f"{k['name']}: argument {i} is a buffer, the kernel "
                                      f"takes {t}")
                if off % 16 or off < 0 or off > buf.nbytes:
                    raise KernelError(f"{k['name']}: byte_offset {off} of buffer {a['buffer']}")
                need = int(np.prod(t.shape)) * t.elem.bytes
                if need > buf.nbytes - off:
                    raise KernelError(f"{k['name']}: argument {i} ({t}) needs {need} B, buffer "
                                      f"{a['buffer']} has {buf.nbytes - off} past byte {off}")
                args.append(MemRefVal(buf, off, 0, t.shape, identity_strides(t.shape), t.elem,
                                      buf.nbytes - off))
            elif a["kind"] == "scalar":
                ty = a["type"]
                args.append(np.float32(a["value"]) if ty == "f32" else np.int64(a["value"]))
            elif a["kind"] == "tensor_maps":
                maps = a["maps"]
                mb = mem.alloc(128 * len(maps), f"tensor maps of {k['name']}", 0)
                for j, m in enumerate(maps):
                    gbuf, gdesc = bufs[m["buffer"]]
                    if m["dtype"] != gdesc["dtype"]:
                        raise KernelError(f"{k['name']}: tensor map {j} of dtype {m['dtype']} "
                                          f"over a {gdesc['dtype']} buffer")
                    elem = parse_type(_ELEM[m["dtype"]])
                    off = m.get("byte_offset", 0)
                    reach = m["dims"][0] * elem.bytes + sum(
                        (d - 1) * s for d, s in zip(m["dims"][1:], m["strides"]))
                    if off + reach > gdesc["bytes"]:
                        raise KernelError(f"{k['name']}: tensor map {j} reaches past buffer "
                                          f"{m['buffer']}")
                    mid = len(mem.tensor_maps)
                    mem.tensor_maps[mid] = tensor_map(k["name"], j, m, gbuf.addr + off, elem)
                    tag = TMAP_MAGIC + mid.to_bytes(4, "little")
                    mb.data[128 * j:128 * j + 16] = np.frombuffer(tag, np.uint8)
                if not isinstance(t, MemRef):
                    raise KernelError(f"{k['name']}: tensor maps argument {i} vs {t}")
                args.append(MemRefVal(mb, 0, 0, t.shape, identity_strides(t.shape), t.elem,
                                      mb.nbytes))
            elif a["kind"] == "workspace":
                # Zeroed once per kernel and kept, as the runtime does.
                ws = workspaces.get((k["name"], i))
                if ws is None:
                    ws = mem.alloc(a["bytes"], f"workspace of {k['name']}", 0)
                    workspaces[(k["name"], i)] = ws
                if not isinstance(t, MemRef) or int(np.prod(t.shape)) * t.elem.bytes > ws.nbytes:
                    raise KernelError(f"{k['name']}: workspace argument {i} vs {t}")
                args.append(MemRefVal(ws, 0, 0, t.shape, identity_strides(t.shape), t.elem,
                                      ws.nbytes))
            else:
                raise KernelError(f"{k['name']}: unknown argument kind {a['kind']}")
        if on_kernel:
            on_kernel(k)
        if not any(a["kind"] == "workspace" for a in k["args"]):
            with np.errstate(all="ignore"):
                run_kernel(func, args, k["grid"], k["block"], k.get("shared_bytes", 0), mem,
                           k["name"], max_lanes=max_lanes)
            continue
        # A persistent (stream-K) block's loops run as many times as its
        # share of the work says, so blocks are not run in lockstep but one
        # at a time: first in block order, then again from the same inputs
        # in reverse order (the workspace as the first launch left it).
        # Either order decides differently who finishes a split tile; the
        # results must be the same bit for bit.
        lanes = int(np.prod(k["block"]))
        spaces = {id(w) for w in workspaces.values()}
        others = [b for b in mem.buffers if id(b) not in spaces]
        before = [(b.data.copy(), b.written.copy()) for b in others]
        with np.errstate(all="ignore"):
            run_kernel(func, args, k["grid"], k["block"], k.get("shared_bytes", 0), mem,
                       k["name"], max_lanes=lanes)
        first = [(b.data.copy(), b.written.copy()) for b in others]
        for b, (data, written) in zip(others, before):
            b.data[:], b.written[:] = data, written
        with np.errstate(all="ignore"):
            run_kernel(func, args, k["grid"], k["block"], k.get("shared_bytes", 0), mem,
                       k["name"], max_lanes=lanes, reverse=True)
        for b, (data, written) in zip(others, first):
            if not (np.array_equal(b.data, data) and np.array_equal(b.written, written)):
                raise KernelError(f"{k['name']}: a second launch with its blocks in reverse "
                                  f"order changed {b.name}")
    outputs, unwritten = {}, {}
    for bid, (buf, b) in bufs.items():
        if b["kind"] != "output":
            continue
        n = b["bytes"]
        dt = np.dtype(STORAGE[b["dtype"]])
        raw = buf.data[:n].view(dt).reshape(b["shape"])
        outputs[b["index"]] = from_storage(raw.copy(), b["dtype"])
        w = buf.written[:n].reshape(-1, dt.itemsize)
        unwritten[b["index"]] = ~(w == 0xFF).all(axis=1).reshape(b["shape"])
    return outputs, unwritten


def run_arrays(module, name, arrays, grid, block, shared_bytes=0, max_lanes=None):
    """Runs kernel `name` of `module` (Module) on numpy `arrays` (one per
    memref argument, in their storage dtypes; bf16 as uint16 bits), which
    are updated in place. Returns {argument index: bool array of the
    elements the kernel stored}."""
    func = module.kernels.get(name)
    if func is None:
        raise KernelError(f"no kernel {name} in the module")
    types = func.regions[0][0].arg_types
    mem = Memory()
    bufs, args = [], []
    for i, a in enumerate(arrays):
        a = np.ascontiguousarray(a)
        buf = mem.alloc(a.nbytes, f"argument {i}", 0)
        buf.data[:a.nbytes] = a.view(np.uint8).reshape(-1)
        t = types[i]
        args.append(MemRefVal(buf, 0, 0, t.shape, identity_strides(t.shape), t.elem, a.nbytes))
        bufs.append(buf)
    with np.errstate(all="ignore"):
        run_kernel(func, args, grid, block, shared_bytes, mem, name, max_lanes=max_lanes)
    written = {}
    for i, (a, buf) in enumerate(zip(arrays, bufs)):
        n = a.nbytes
        a.reshape(-1).view(np.uint8)[:] = buf.data[:n]
        w = buf.written[:n].reshape(-1, a.itemsize)
        written[i] = (w == 0xFF).all(axis=1).reshape(a.shape)
    return written
