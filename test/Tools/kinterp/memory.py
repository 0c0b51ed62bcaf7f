"""Device memory of the interpreter: global buffers (bytes at fake device
addresses, with a shadow that records which bytes a kernel stored), the
shared memory of the blocks running together, and memref values over
either."""
import numpy as np

from .types import storage_dtype, to_register, to_storage


class KernelError(Exception):
    """The kernel did something a GPU would not do correctly: an
    out-of-bounds access, a barrier not every thread of a block reaches, a
    warp-collective op with inactive lanes, a deadlock, a read of an
    asynchronous result before its wait."""


class Unsupported(Exception):
    """An op (or a form of one) the interpreter does not implement."""


GLOBAL_BASE = 0x7F00_0000_0000
#: Shared-window address of a block's dynamic shared memory: 16 past a
#: 1024-byte boundary, so a kernel that assumes more than the 16-byte
#: alignment CUDA promises computes wrong addresses here.
SHARED_DYNAMIC_BASE = 0x1010


class GlobalBuffer:
    """`nbytes` bytes at device address `addr`; `written` has a byte of
    0xFF for every byte stored since the buffer was made."""

    def __init__(self, nbytes, addr, name, fill=0xFF):
        self.nbytes = nbytes
        size = max(16, (nbytes + 15) // 16 * 16)
        self.data = np.full(size, fill, np.uint8)
        self.written = np.zeros(size, np.uint8)
        self.addr, self.name = addr, name

    def __repr__(self):
        return f"<buffer {self.name} {self.nbytes} B>"


class Memory:
    """The global buffers, by address."""

    def __init__(self):
        self.buffers = []
        self.next_addr = GLOBAL_BASE

    def alloc(self, nbytes, name, fill=0xFF):
        b = GlobalBuffer(nbytes, self.next_addr, name, fill)
        self.next_addr += ((nbytes + 0xFFFF) // 0x10000 + 1) * 0x10000
        self.buffers.append(b)
        return b

    def find(self, addr, nbytes):
        """(buffer, byte offset) holding [addr, addr + nbytes)."""
        for b in self.buffers:
            if b.addr <= addr and addr + nbytes <= b.addr + b.nbytes:
                return b, addr - b.addr
        raise KernelError(f"global access of {nbytes} B at {addr:#x} is outside every buffer")


class SharedMemory:
    """One shared allocation (the dynamic shared memory or a workgroup
    attribution) of every block of the chunk: data[block, byte]; `addr`
    is its shared-window address (the same in every block)."""

    def __init__(self, nblocks, nbytes, addr, name):
        self.nbytes = nbytes
        size = max(16, (nbytes + 15) // 16 * 16)
        # 0xFF bytes: NaN as f32/f16/bf16, -1 as integers.
        self.data = np.full((nblocks, size), 0xFF, np.uint8)
        # Bytes written by the generic proxy since their block's last
        # fence.proxy.async (see ops_async).
        self.dirty = np.zeros((nblocks, size), np.uint8)
        self.addr, self.name = addr, name

    def __repr__(self):
        return f"<shared {self.name} {self.nbytes} B at {self.addr:#x}>"


class MemRefVal:
    """A memref value: `buf` (GlobalBuffer or SharedMemory), `aligned`
    (byte offset of its aligned pointer in buf), `offset` (elements from
    the aligned pointer to element 0), `shape`, `strides` (elements),
    `elem` (Scalar type)."""

    __slots__ = ("buf", "aligned", "offset", "shape", "strides", "elem", "extent")

    def __init__(self, buf, aligned, offset, shape, strides, elem, extent=None):
        self.buf, self.aligned, self.offset = buf, aligned, offset
        self.shape, self.strides, self.elem = tuple(shape), tuple(strides), elem
        # Bytes of buf from the aligned pointer on that the memref may reach.
        self.extent = extent

    @property
    def shared(self):
        return isinstance(self.buf, SharedMemory)

    @property
    def first_byte(self):
        return self.aligned + self.offset * self.elem.bytes

    def __repr__(self):
        return f"<memref {self.shape} {self.elem} of {self.buf} +{self.first_byte}>"


def identity_strides(shape):
    strides, s = [], 1
    for d in reversed(shape):
        strides.append(s)
        s *= max(d, 1)
    return list(reversed(strides))


class Lanes:
    """The threads of one chunk of blocks: per lane its block in the chunk,
    thread and block ids, linear thread id and lane in the warp."""

    def __init__(self, grid, block, first_block, nblocks):
        bx, by, bz = block
        per = bx * by * bz
        self.threads_per_block = per
        self.nblocks = nblocks
        self.count = per * nblocks
        lin_blk = first_block + np.arange(nblocks, dtype=np.int64)
        gx, gy, _ = grid
        self.blk = np.repeat(np.arange(nblocks, dtype=np.int64), per)
        t = np.tile(np.arange(per, dtype=np.int64), nblocks)
        self.lin_tid = t
        self.tid = (t % bx, (t // bx) % by, t // (bx * by))
        b = np.repeat(lin_blk, per)
        self.bid = (b % gx, (b // gx) % gy, b // (gx * gy))
        self.lane = t % 32
        self.block = block
        self.grid = grid


def check_bounds(op, mref, indices, mask, width=1):
    """Raises unless every active lane's indices are inside the memref (the
    innermost one with room for `width` elements)."""
    for d, (i, size) in enumerate(zip(indices, mref.shape)):
        if size < 0:
            continue
        top = size - (width - 1 if d == len(indices) - 1 else 0)
        i = np.asarray(i)
        bad = (i < 0) | (i >= top)
        if mask is not None:
            bad = bad & mask if bad.ndim else (bool(bad) and bool(mask.any()))
        if np.any(bad):
            lane = int(np.flatnonzero(bad)[0]) if np.ndim(bad) else 0
            got = [int(np.asarray(x).reshape(-1)[lane] if np.ndim(x) else x) for x in indices]
            raise KernelError(f"line {op.line}: {op.name} index {got} "
                              f"(width {width}) out of bounds of {list(mref.shape)} "
                              f"({mref.buf.name}, lane {lane})")


def linear(mref, indices):
    """Element offsets from the aligned pointer (array or scalar)."""
    lin = mref.offset
    for i, s in zip(indices, mref.strides):
        lin = lin + np.asarray(i, dtype=np.int64) * s
    return lin


def _flat_view(mref):
    eb = mref.elem.bytes
    dt = storage_dtype(mref.elem)
    if mref.aligned % dt.itemsize:
        raise KernelError(f"{mref.buf.name}: {mref.elem} memref at byte {mref.aligned} is misaligned")
    return dt, mref.aligned // dt.itemsize, eb


def gather(ip, op, mref, indices, mask, width=None):
    """Loads element(s) at `indices` (`width` consecutive along the last
    dim when given) as register values; uniform indices into global memory
    give a uniform value."""
    check_bounds(op, mref, indices, mask, width or 1)
    dt, base, _ = _flat_view(mref)
    lin = base + linear(mref, indices)
    vshape = (width,) if width else ()
    if width:
        lin = np.asarray(lin)[..., None] + np.arange(width, dtype=np.int64)
    buf = mref.buf
    view = buf.data.view(dt)
    if isinstance(buf, SharedMemory):
        n = ip.lanes.count
        lin = np.broadcast_to(lin, (n,) + vshape)
        if mask is not None:
            lin = np.where(mask.reshape((-1,) + (1,) * len(vshape)), lin, base)
        blk = ip.lanes.blk.reshape((-1,) + (1,) * len(vshape))
        raw = view[blk, lin]
    else:
        if mask is not None and np.ndim(lin) > len(vshape):
            lin = np.where(mask.reshape((-1,) + (1,) * len(vshape)), lin, base)
        raw = view[lin]
    return to_register(raw, mref.elem)


def scatter(ip, op, mref, indices, value, mask, width=None):
    """Stores `value` (register values) at `indices` for the active lanes."""
    check_bounds(op, mref, indices, mask, width or 1)
    dt, base, _ = _flat_view(mref)
    lin = base + linear(mref, indices)
    if width:
        lin = np.asarray(lin)[..., None] + np.arange(width, dtype=np.int64)
    n = ip.lanes.count
    vshape = (width,) if width else ()
    lin = np.broadcast_to(lin, (n,) + vshape)
    val = np.broadcast_to(to_storage(value, mref.elem), (n,) + vshape)
    if mask is not None:
        lin, val = lin[mask], val[mask]
        sel = mask
    else:
        sel = slice(None)
    buf = mref.buf
    if isinstance(buf, SharedMemory):
        blk = np.broadcast_to(ip.lanes.blk[sel].reshape((-1,) + (1,) * len(vshape)), lin.shape)
        buf.data.view(dt)[blk, lin] = val
        u = np.dtype(f"u{dt.itemsize}")
        buf.dirty.view(u)[blk, lin] = np.iinfo(u).max
    else:
        buf.data.view(dt)[lin] = val
        buf.written.view(np.dtype(f'u{dt.itemsize}'))[lin] = np.iinfo(f'u{dt.itemsize}').max
