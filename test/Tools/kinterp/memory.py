"""Device memory of the interpreter: global buffers (bytes at fake device
addresses, with a shadow that records which bytes a kernel stored), the
shared memory of the blocks running together, and memref values over
either."""
import numpy as np

from .types import storage_dtype, to_register, to_storage


#: A tracing hook (None: off) for the CPU models of test/Tools that compare
#: a compiled kernel's thread mapping with theirs: called as
#: TRACE(ip, op, kind, **fields) for every access of the active lanes.
#:   "load", "store" (memref/vector loads and stores, global or shared):
#:     buf (GlobalBuffer or SharedMemory), lanes [k] (indices into ip.lanes),
#:     elems [k, w] (element indices from the start of buf, in the access's
#:     storage type), values [k, w] (stores: the stored values, in storage
#:     form; loads: None);
#:   "cp.async" (ops_async): lanes, src (GlobalBuffer), src_bytes [k, n],
#:     dst (SharedMemory), dst_bytes [k, n] (byte offsets in each), valid
#:     [k, n] (the bytes read, not zero-filled);
#:   "wgmma" (ops_async): blk [g] (blocks in the chunk), lanes [g] (the first
#:     lane of each warpgroup), desc_a, desc_b [g] (the matrix descriptors).
TRACE = None


def trace_access(ip, op, kind, buf, lin, mask, width, values=None):
    """Calls TRACE for a gather or scatter: `lin` the element indices
    (uniform, per lane, with a trailing width axis when `width`) before
    masking; `values` per active lane."""
    n = ip.lanes.count
    w = width or 1
    e = np.broadcast_to(np.asarray(lin, np.int64), (n,) + ((width,) if width else ()))
    lanes = np.arange(n) if mask is None else np.flatnonzero(mask)
    if values is not None:
        values = np.asarray(values).reshape(len(lanes), w)
    TRACE(ip, op, kind, buf=buf, lanes=lanes, elems=e.reshape(n, w)[lanes], values=values)


class KernelError(Exception):
    """The kernel did something a GPU would not do correctly: an
    out-of-bounds access, a barrier not every thread of a block reaches, a
    warp-collective op with inactive lanes, a deadlock, a read of an
    asynchronous result before its wait."""


class Unsupported(Exception):
    """An op (or a form of one) the interpreter does not implement."""


class UndefinedValue(Exception):
    """The IR uses a value it never defines (malformed IR)."""


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
        # Race detection (race_read, race_write): per byte (flat over
        # [block, byte]) the warp that last wrote it and the warp(s) that
        # read it, with their barrier intervals (tag()).
        self.wtag = np.full(nblocks * size, -1, np.int64)
        self.rtag = np.full(nblocks * size, -1, np.int64)
        self.row = size
        self.addr, self.name = addr, name

    def __repr__(self):
        return f"<shared {self.name} {self.nbytes} B at {self.addr:#x}>"


#: The reader of a byte read by several warps in one barrier interval.
MANY = -2
#: The writer of bytes the async proxy (TMA) wrote: ordered by mbarriers.
ASYNC = -3


def tag(epoch, warp):
    """A race-detection tag: warp (or MANY, ASYNC) in barrier interval
    epoch; -1: none."""
    return (np.asarray(epoch, np.int64) << 12) | (np.asarray(warp, np.int64) + 16)


def tag_warp(t):
    return (t & 0xFFF) - 16


def tag_epoch(t):
    return t >> 12


def race_read(ip, op, smem, blk, offs, warp):
    """Shared-memory bytes `offs` ([k, n]) of blocks `blk` ([k]) read by
    warps `warp` ([k]): fails on a byte another warp wrote since the last
    barrier of the block; records the readers."""
    fi = blk[:, None] * smem.row + offs
    ep = ip.epoch[blk].astype(np.int64)[:, None]
    mine = tag(ep, warp[:, None])
    wt = smem.wtag[fi]
    # Same interval (tag >> 12), another warp, not the async proxy.
    bad = ((wt >> 12) == ep) & (wt != mine) & ((wt & 0xFFF) != ASYNC + 16)
    if bad.any():
        _race(op, smem, fi, np.broadcast_to(warp[:, None], fi.shape), bad, tag_warp(wt),
              "reads", "wrote")
    rt = smem.rtag[fi]
    new = np.where(((rt >> 12) == ep) & (rt != mine), tag(ep, MANY), mine)
    smem.rtag[fi] = new
    back = smem.rtag[fi]
    multi = back != new
    if multi.any():
        smem.rtag[fi[multi]] = tag(np.broadcast_to(ep, fi.shape)[multi], MANY)


def race_write(ip, op, smem, blk, offs, warp, writer=None):
    """Bytes written by warps `warp`: fails on a byte another warp read or
    wrote since the block's last barrier; records the writer (`writer`
    overrides the warp, e.g. ASYNC)."""
    fi = blk[:, None] * smem.row + offs
    ep = ip.epoch[blk].astype(np.int64)[:, None]
    mine = tag(ep, warp[:, None])
    if writer is None:
        wt = smem.wtag[fi]
        bad = ((wt >> 12) == ep) & (wt != mine) & ((wt & 0xFFF) != ASYNC + 16)
        if bad.any():
            _race(op, smem, fi, np.broadcast_to(warp[:, None], fi.shape), bad, tag_warp(wt),
                  "writes", "wrote")
        rt = smem.rtag[fi]
        bad = ((rt >> 12) == ep) & (rt != mine)
        if bad.any():
            _race(op, smem, fi, np.broadcast_to(warp[:, None], fi.shape), bad, tag_warp(rt),
                  "writes", "read")
        val = np.broadcast_to(mine, fi.shape)
    else:
        val = np.broadcast_to(tag(ep, writer), fi.shape)
    smem.wtag[fi] = val
    if writer is None:
        back = smem.wtag[fi]
        if (back != val).any():
            i = tuple(np.argwhere(back != val)[0])
            raise KernelError(f"line {op.line}: shared-memory race: {op.name}: warps "
                              f"{int(tag_warp(val[i]))} and {int(tag_warp(back[i]))} of block "
                              f"{int(fi[i] // smem.row)} write byte {int(fi[i] % smem.row)} of "
                              f"{smem.name} in one op")


def _race(op, smem, fi, warp, bad, other, what, did):
    fi, warp, bad, other = fi.reshape(-1), warp.reshape(-1), bad.reshape(-1), other.reshape(-1)
    i = int(np.flatnonzero(bad)[0])
    o = int(other[i])
    who = "several warps" if o == MANY else f"warp {o}"
    raise KernelError(f"line {op.line}: shared-memory race: {op.name}: warp {int(warp[i])} of "
                      f"block {int(fi[i] // smem.row)} {what} byte {int(fi[i] % smem.row)} of "
                      f"{smem.name}, which {who} {did} since the last barrier")


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
        self.warp = (t // 32).astype(np.int32)
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
    if TRACE is not None:
        trace_access(ip, op, "load", buf, lin, mask, width)
    if isinstance(buf, SharedMemory):
        n = ip.lanes.count
        lin = np.broadcast_to(lin, (n,) + vshape)
        if mask is not None:
            lin = np.where(mask.reshape((-1,) + (1,) * len(vshape)), lin, base)
        blk = ip.lanes.blk.reshape((-1,) + (1,) * len(vshape))
        raw = view[blk, lin]
        lanes = np.arange(n) if mask is None else np.flatnonzero(mask)
        isz = dt.itemsize
        offs = (lin[lanes].reshape(len(lanes), -1)[:, :, None] * isz + np.arange(isz)).reshape(len(lanes), -1)
        race_read(ip, op, buf, ip.lanes.blk[lanes], offs, ip.lanes.warp[lanes])
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
    if TRACE is not None:
        trace_access(ip, op, "store", mref.buf, lin, mask, width,
                     val if mask is None else val[mask])
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
        isz = dt.itemsize
        k = lin.shape[0]
        offs = (lin.reshape(k, -1)[:, :, None] * isz + np.arange(isz)).reshape(k, -1)
        race_write(ip, op, buf, blk.reshape(k, -1)[:, 0], offs, ip.lanes.warp[sel])
    else:
        buf.data.view(dt)[lin] = val
        buf.written.view(np.dtype(f'u{dt.itemsize}'))[lin] = np.iinfo(f'u{dt.itemsize}').max
