"""gpu ids, memrefs (loads, stores, views, shared memory), LLVM pointers and
structs."""
import numpy as np

from .memory import (SHARED_DYNAMIC_BASE, KernelError, MemRefVal, SharedMemory, Unsupported,
                     _flat_view, check_bounds, gather, identity_strides, linear, scatter)
from .types import MemRef, Struct, to_register, to_storage

_DIM = {"x": 0, "y": 1, "z": 2}


def _dim(op):
    d = op.cache.get("dim")
    if d is None:
        text = op.attr("dimension")
        d = _DIM[text.strip().rstrip(">").split()[-1][-1]]
        op.cache["dim"] = d
    return d


def h_thread_id(ip, op, env, mask):
    return ip.lanes.tid[_dim(op)]


def h_block_id(ip, op, env, mask):
    return ip.lanes.bid[_dim(op)]


def h_block_dim(ip, op, env, mask):
    return np.int64(ip.lanes.block[_dim(op)])


def h_grid_dim(ip, op, env, mask):
    return np.int64(ip.lanes.grid[_dim(op)])


def h_lane_id(ip, op, env, mask):
    return ip.lanes.lane


def workgroup_buffer(ip, typ, name):
    """A workgroup attribution (block argument) of the kernel."""
    if not isinstance(typ, MemRef) or typ.space != "workgroup":
        raise Unsupported(f"kernel block argument {name} of type {typ}")
    n = int(np.prod(typ.shape)) * typ.elem.bytes
    key = ("wg", name)
    if key not in ip.shared:
        # Static shared memory sits below the dynamic part.
        addr = 0x400 + sum((s.nbytes + 15) // 16 * 16 for k, s in ip.shared.items() if k[0] == "wg")
        ip.shared[key] = SharedMemory(ip.lanes.nblocks, n, addr, f"workgroup {name}")
    return MemRefVal(ip.shared[key], 0, 0, typ.shape, identity_strides(typ.shape), typ.elem, n)


def h_dynamic_shared(ip, op, env, mask):
    key = ("dynamic",)
    if key not in ip.shared:
        ip.shared[key] = SharedMemory(ip.lanes.nblocks, ip.shared_bytes, SHARED_DYNAMIC_BASE,
                                      "dynamic shared memory")
    typ = op.result_types[0]
    return MemRefVal(ip.shared[key], 0, 0, (ip.shared_bytes,), (1,), typ.elem, ip.shared_bytes)


def _uniform_int(op, v, what):
    if np.ndim(v):
        u = np.unique(v)
        if len(u) != 1:
            raise Unsupported(f"line {op.line}: {op.name} with a thread-varying {what}")
        v = u[0]
    return int(v)


def h_view(ip, op, env, mask):
    src = env[op.operands[0]]
    shift = _uniform_int(op, env[op.operands[1]], "byte shift")
    typ = op.result_types[0]
    if len(op.operands) > 2:
        raise Unsupported(f"line {op.line}: memref.view with dynamic sizes")
    nbytes = int(np.prod(typ.shape)) * typ.elem.bytes
    if src.offset != 0:
        raise Unsupported(f"line {op.line}: memref.view of a memref with an offset")
    if shift < 0 or (src.extent is not None and shift + nbytes > src.extent):
        raise KernelError(f"line {op.line}: memref.view of {nbytes} B at byte {shift} "
                          f"outside the {src.extent} B of {src.buf.name}")
    aligned = src.aligned + shift
    if aligned % typ.elem.bytes:
        raise KernelError(f"line {op.line}: memref.view at byte {shift} misaligned for {typ.elem}")
    return MemRefVal(src.buf, aligned, 0, typ.shape, identity_strides(typ.shape), typ.elem, nbytes)


def h_reinterpret_cast(ip, op, env, mask):
    src = env[op.operands[0]]
    if len(op.operands) > 1:
        raise Unsupported(f"line {op.line}: memref.reinterpret_cast with dynamic operands")
    offs = op.array_attr("static_offsets")
    sizes = op.array_attr("static_sizes")
    strides = op.array_attr("static_strides")
    typ = op.result_types[0]
    m = MemRefVal(src.buf, src.aligned, offs[0], sizes, strides, typ.elem, src.extent)
    if src.extent is not None:
        last = offs[0] + sum((s - 1) * st for s, st in zip(sizes, strides)) if all(sizes) else -1
        if offs[0] < 0 or (last + 1) * typ.elem.bytes > src.extent:
            raise KernelError(f"line {op.line}: memref.reinterpret_cast reaches past the "
                              f"{src.extent} B of {src.buf.name}")
    return m


def h_cast(ip, op, env, mask):
    src = env[op.operands[0]]
    typ = op.result_types[0]
    if any(d < 0 for d in typ.shape) or tuple(typ.shape) != tuple(src.shape):
        raise Unsupported(f"line {op.line}: memref.cast changing the shape")
    return src


def h_collapse_shape(ip, op, env, mask):
    src = env[op.operands[0]]
    typ = op.result_types[0]
    if tuple(src.strides) != tuple(identity_strides(src.shape)):
        raise Unsupported(f"line {op.line}: {op.name} of a strided memref")
    return MemRefVal(src.buf, src.aligned, src.offset, typ.shape, identity_strides(typ.shape),
                     typ.elem, src.extent)


def h_extract_aligned_pointer(ip, op, env, mask):
    m = env[op.operands[0]]
    return np.int64(m.buf.addr + m.aligned)


def h_load(ip, op, env, mask):
    vals = [env[o] for o in op.operands]
    return gather(ip, op, vals[0], vals[1:], mask)


def h_store(ip, op, env, mask):
    vals = [env[o] for o in op.operands]
    scatter(ip, op, vals[1], vals[2:], vals[0], mask)


def h_vload(ip, op, env, mask):
    vals = [env[o] for o in op.operands]
    typ = op.result_types[0]
    if typ.rank != 1:
        raise Unsupported(f"line {op.line}: vector.load of {typ}")
    _check_alignment(ip, op, vals[0], vals[1:], typ, mask)
    return gather(ip, op, vals[0], vals[1:], mask, width=typ.shape[0])


def h_vstore(ip, op, env, mask):
    vals = [env[o] for o in op.operands]
    typ = op.operand_types[0]
    if typ.rank != 1:
        raise Unsupported(f"line {op.line}: vector.store of {typ}")
    _check_alignment(ip, op, vals[1], vals[2:], typ, mask)
    scatter(ip, op, vals[1], vals[2:], vals[0], mask, width=typ.shape[0])


#: arith::AtomicRMWKind values memref.atomic_rmw carries (generic form).
_ATOMIC_KINDS = {0: "addf", 1: "addi"}


def h_atomic_rmw(ip, op, env, mask):
    """memref.atomic_rmw on global memory: the active lanes one after the
    other in lane order (each sees its predecessors' updates); returns each
    lane's old value."""
    vals = [env[o] for o in op.operands]
    value, mref, indices = vals[0], vals[1], vals[2:]
    kind = _ATOMIC_KINDS.get(op.int_attr("kind"))
    if kind is None:
        raise Unsupported(f"line {op.line}: memref.atomic_rmw kind {op.attr('kind')}")
    if isinstance(mref.buf, SharedMemory):
        raise Unsupported(f"line {op.line}: memref.atomic_rmw on shared memory")
    check_bounds(op, mref, indices, mask)
    n = ip.lanes.count
    dt, base, _ = _flat_view(mref)
    lin = np.broadcast_to(base + linear(mref, indices), (n,))
    add = np.broadcast_to(to_storage(value, mref.elem), (n,))
    view = mref.buf.data.view(dt)
    written = mref.buf.written.view(np.dtype(f"u{dt.itemsize}"))
    old = np.zeros(n, dt)
    for lane in (range(n) if mask is None else np.flatnonzero(mask)):
        old[lane] = view[lin[lane]]
        view[lin[lane]] = old[lane] + add[lane]
        written[lin[lane]] = np.iinfo(f"u{dt.itemsize}").max
    return to_register(old, mref.elem)


def _check_alignment(ip, op, mref, indices, typ, mask):
    """The `alignment` the op claims holds for the active lanes' addresses."""
    align = op.cache.get("align")
    if align is None:
        align = op.int_attr("alignment", 0)
        op.cache["align"] = align
    if align <= 1:
        return
    lin = mref.offset
    for i, s in zip(indices, mref.strides):
        lin = lin + np.asarray(i, dtype=np.int64) * s
    addr = mref.buf.addr + mref.aligned + np.asarray(lin) * mref.elem.bytes
    bad = (addr % align) != 0
    if mask is not None and np.ndim(bad):
        bad = bad & mask
    if np.any(bad):
        raise KernelError(f"line {op.line}: {op.name} claims alignment {align} but an "
                          f"address is {int(np.asarray(addr).reshape(-1)[np.flatnonzero(bad)[0] if np.ndim(bad) else 0]):#x}")


def h_dealloc(ip, op, env, mask):
    return None


# ---- LLVM pointers and structs --------------------------------------------------

class Ptr:
    """An LLVM pointer: `space` (0 generic/global, 3 shared, 7 shared
    cluster) and integer `addr` (scalar or per lane)."""

    __slots__ = ("space", "addr")

    def __init__(self, space, addr):
        self.space, self.addr = space, addr

    def __repr__(self):
        return f"<ptr {self.space} {self.addr}>"


def h_inttoptr(ip, op, env, mask):
    return Ptr(op.result_types[0].space, np.asarray(env[op.operands[0]], dtype=np.int64))


def h_ptrtoint(ip, op, env, mask):
    return np.asarray(env[op.operands[0]].addr, dtype=np.int64)


def h_addrspacecast(ip, op, env, mask):
    p = env[op.operands[0]]
    to = op.result_types[0].space
    if {p.space, to} != {3, 7} and p.space != to:
        raise Unsupported(f"line {op.line}: addrspacecast from {p.space} to {to}")
    return Ptr(to, p.addr)


def h_zero(ip, op, env, mask):
    typ = op.result_types[0]
    if isinstance(typ, Struct):
        if not all(e.is_float and e.kind == "f32" for e in typ.elems):
            raise Unsupported(f"line {op.line}: llvm.mlir.zero of {typ}")
        return np.zeros(len(typ.elems), np.float32)
    raise Unsupported(f"line {op.line}: llvm.mlir.zero of {typ}")


def h_extractvalue(ip, op, env, mask):
    from .interp import Pending
    s = env[op.operands[0]]
    if isinstance(s, Pending):
        s = s.get(op)
    pos = op.array_attr("position")
    if len(pos) != 1:
        raise Unsupported(f"line {op.line}: llvm.extractvalue at {pos}")
    return np.asarray(s)[..., pos[0]]


def h_insertvalue(ip, op, env, mask):
    from .interp import Pending
    s, v = env[op.operands[0]], env[op.operands[1]]
    if isinstance(s, Pending):
        s = s.get(op)
    pos = op.array_attr("position")
    s = np.asarray(s)
    v = np.asarray(v)
    lead = s.shape[:-1] if s.ndim > 1 else v.shape
    out = np.array(np.broadcast_to(s, tuple(lead) + s.shape[-1:]))
    out[..., pos[0]] = v
    return out


def h_noop(ip, op, env, mask):
    return None


HANDLERS = {
    "gpu.thread_id": h_thread_id,
    "gpu.block_id": h_block_id,
    "gpu.block_dim": h_block_dim,
    "gpu.grid_dim": h_grid_dim,
    "gpu.lane_id": h_lane_id,
    "gpu.dynamic_shared_memory": h_dynamic_shared,
    "memref.view": h_view,
    "memref.reinterpret_cast": h_reinterpret_cast,
    "memref.cast": h_cast,
    "memref.collapse_shape": h_collapse_shape,
    "memref.expand_shape": h_collapse_shape,
    "memref.extract_aligned_pointer_as_index": h_extract_aligned_pointer,
    "memref.load": h_load,
    "memref.store": h_store,
    "vector.load": h_vload,
    "vector.store": h_vstore,
    "memref.atomic_rmw": h_atomic_rmw,
    # The interpreter's memory is sequentially consistent.
    "nvvm.memory.barrier": h_noop,
    "llvm.inttoptr": h_inttoptr,
    "llvm.ptrtoint": h_ptrtoint,
    "llvm.addrspacecast": h_addrspacecast,
    "llvm.mlir.zero": h_zero,
    "llvm.extractvalue": h_extractvalue,
    "llvm.insertvalue": h_insertvalue,
    # Register budgets change no value.
    "nvvm.setmaxregister": h_noop,
}
