"""Asynchronous copies and MMAs, run as late as the PTX memory model allows
so that a kernel reading their results too early sees stale data or fails:

- cp.async (nvgpu.device_async_copy; nvvm.cp.async.commit.group /
  wait.group): each copy reads its source when issued (global operands do
  not change during a kernel) and lands in shared memory only when a
  cp.async.wait_group of its thread covers its group (zero-filling past
  src-size);
- wgmma.mma_async: returns a pending accumulator; it is computed from
  shared memory (through the matrix descriptors: 128-byte swizzle, K- or
  MN-major canonical layouts) at the wgmma.wait_group that retires its
  group, and reading it before that fails;
- mbarriers (init, arrive, arrive.expect_tx, try_wait.parity) per block,
  with arrival and transaction counts and phases;
- cp.async.bulk.tensor (TMA) tile and im2col loads through the runtime's
  tensor maps: read when issued, written to shared memory with the map's
  swizzle when a thread waits on the mbarrier they complete (out-of-bounds
  elements 0).

Shared-memory bytes written by the generic proxy (st.shared, cp.async) are
"dirty" until a fence.proxy.async of their block; a wgmma reading dirty
bytes fails.
"""
import numpy as np

from . import memory
from .memory import ASYNC, KernelError, Unsupported, race_write, tag, tag_epoch, tag_warp


def mark_dirty(smem, blk, offs):
    smem.dirty[blk, offs] = 1


class MBarrier:
    """An mbarrier at one shared address, in every block of the chunk."""

    def __init__(self, nblk, addr):
        self.addr = addr
        self.inited = np.zeros(nblk, bool)
        self.count = np.zeros(nblk, np.int64)
        self.pending = np.zeros(nblk, np.int64)
        self.tx = np.zeros(nblk, np.int64)
        self.phase = np.zeros(nblk, np.int64)
        self.copies = []          # (block, smem, byte offsets, bytes)

    def advance(self, blocks):
        for b in np.unique(blocks):
            if self.pending[b] == 0 and self.tx[b] == 0:
                self.phase[b] += 1
                self.pending[b] = self.count[b]


class AsyncState:
    def __init__(self, ip):
        self.ip = ip
        n = ip.lanes.count
        self.cp_records = []
        self.cp_committed = np.zeros(n, np.int64)
        self.wg_open = []
        self.wg_groups = []
        self.mbarriers = {}

    # --- cp.async ----------------------------------------------------------------
    def land_cp(self, select, op=None):
        """Lands the copies of the lanes `select(record)` chooses (at op,
        their wait; None at the end of the kernel)."""
        keep = []
        for rec in self.cp_records:
            lanes, groups, smem, blk, offs, data = rec
            now = select(lanes, groups)
            if now.any():
                smem.data[blk[now][:, None], offs[now]] = data[now]
                mark_dirty(smem, blk[now][:, None], offs[now])
                if op is not None:
                    race_write(self.ip, op, smem, blk[now], offs[now], self.ip.lanes.warp[lanes[now]])
            if (~now).any():
                keep.append((lanes[~now], groups[~now], smem, blk[~now], offs[~now], data[~now]))
        self.cp_records = keep

    def finish(self):
        """The end of the kernel: copies still in flight complete."""
        self.land_cp(lambda lanes, groups: np.ones(len(lanes), bool))

    # --- mbarriers -----------------------------------------------------------------
    def mbarrier(self, op, addr, create=False):
        b = self.mbarriers.get(addr)
        if b is None:
            if not create:
                raise KernelError(f"line {op.line}: {op.name} on shared address {addr:#x}, "
                                  "where no mbarrier was initialized")
            b = self.mbarriers[addr] = MBarrier(self.ip.lanes.nblocks, addr)
        return b

    def land_tma(self, bar, blocks=None):
        keep = []
        for rec in bar.copies:
            blk, smem, offs, data, nbytes = rec
            if blocks is None or blk in blocks:
                smem.data[blk, offs] = data
                smem.wtag[blk * smem.row + offs] = tag(-1, ASYNC)
                bar.tx[blk] -= nbytes
            else:
                keep.append(rec)
        bar.copies = keep


def _active(ip, mask):
    return np.arange(ip.lanes.count) if mask is None else np.flatnonzero(mask)


def _lanes_of(v, lanes):
    v = np.asarray(v)
    return v[lanes] if v.ndim else np.broadcast_to(v, lanes.shape)


def _shared_of(ip, op, addr, nbytes):
    """(SharedMemory, byte offset) of a shared-window address range."""
    for s in ip.shared.values():
        if s.addr <= addr and addr + nbytes <= s.addr + s.nbytes:
            return s, addr - s.addr
    raise KernelError(f"line {op.line}: shared access of {nbytes} B at {addr:#x} outside "
                      "every shared allocation")


# ---- cp.async -----------------------------------------------------------------------

def h_async_copy(ip, op, env, mask):
    vals = [env[o] for o in op.operands]
    seg = op.array_attr("operandSegmentSizes")
    dst = vals[0]
    didx = vals[1:1 + seg[1]]
    src = vals[1 + seg[1]]
    sidx = vals[2 + seg[1]:2 + seg[1] + seg[3]]
    src_elems = vals[2 + seg[1] + seg[3]] if seg[4] else None
    n_el = op.int_attr("dstElements")
    if not dst.shared or src.shared:
        raise KernelError(f"line {op.line}: cp.async must copy global to shared memory")
    eb = dst.elem.bytes
    nbytes = n_el * eb
    if nbytes not in (4, 8, 16):
        raise KernelError(f"line {op.line}: cp.async of {nbytes} bytes (4, 8 or 16)")
    if op.has("bypassL1") and nbytes != 16:
        raise KernelError(f"line {op.line}: cp.async.cg (bypassL1) of {nbytes} bytes")
    lanes = _active(ip, mask)
    if not len(lanes):
        return np.int64(0)
    k = len(lanes)
    se = (np.full(k, n_el, np.int64) if src_elems is None
          else _lanes_of(np.asarray(src_elems, np.int64), lanes))
    if ((se < 0) | (se > n_el)).any():
        raise KernelError(f"line {op.line}: cp.async src-size {np.unique(se).tolist()} "
                          f"elements for a {n_el}-element copy")
    # Destination: inside the memref, aligned to the copy size.
    dl = [_lanes_of(np.asarray(i, np.int64), lanes) for i in didx]
    for d, (i, size) in enumerate(zip(dl, dst.shape)):
        top = size - (n_el - 1 if d == len(dl) - 1 else 0)
        if ((i < 0) | (i >= top)).any():
            raise KernelError(f"line {op.line}: cp.async destination index outside "
                              f"{list(dst.shape)}")
    dlin = dst.offset + sum(i * s for i, s in zip(dl, dst.strides))
    doff = dst.aligned + dlin * eb
    if ((dst.buf.addr + doff) % nbytes).any():
        raise KernelError(f"line {op.line}: cp.async destination not {nbytes}-byte aligned")
    # Source: the first se elements, inside the memref.
    sl = [_lanes_of(np.asarray(i, np.int64), lanes) for i in sidx]
    reads = se > 0
    for d, (i, size) in enumerate(zip(sl, src.shape)):
        top = size - (se - 1 if d == len(sl) - 1 else 0)
        if (((i < 0) | (i >= top)) & reads).any():
            raise KernelError(f"line {op.line}: cp.async source index outside "
                              f"{list(src.shape)} ({src.buf.name})")
    slin = src.offset + sum(i * s for i, s in zip(sl, src.strides))
    soff = src.aligned + slin * eb
    if (((src.buf.addr + soff) % nbytes != 0) & reads).any():
        raise KernelError(f"line {op.line}: cp.async source not {nbytes}-byte aligned")
    byte = np.arange(nbytes)
    valid = byte[None, :] < (se * eb)[:, None]
    sidx_b = np.where(valid, soff[:, None] + byte, 0)
    data = np.where(valid, src.buf.data[sidx_b], 0).astype(np.uint8)
    if memory.TRACE is not None:
        memory.TRACE(ip, op, "cp.async", lanes=lanes, src=src.buf, src_bytes=soff[:, None] + byte,
                     dst=dst.buf, dst_bytes=doff[:, None] + byte, valid=valid)
    st = ip.async_state
    blk = ip.lanes.blk[lanes]
    # The copy may land at once: nobody else may still read its bytes.
    race_write(ip, op, dst.buf, blk, doff[:, None] + byte, ip.lanes.warp[lanes])
    st.cp_records.append((lanes, st.cp_committed[lanes].copy(), dst.buf, blk,
                          doff[:, None] + byte, data))
    return np.int64(0)


def h_cp_commit(ip, op, env, mask):
    st = ip.async_state
    if mask is None:
        st.cp_committed += 1
    else:
        st.cp_committed[mask] += 1
    return np.int64(0) if op.results else None


def _cp_wait(ip, op, mask, n):
    st = ip.async_state
    act = np.ones(ip.lanes.count, bool) if mask is None else mask
    committed = st.cp_committed

    def select(lanes, groups):
        return act[lanes] & (groups < committed[lanes] - n)
    st.land_cp(select, op)


def h_cp_wait(ip, op, env, mask):
    _cp_wait(ip, op, mask, op.int_attr("n"))


def h_nvgpu_wait(ip, op, env, mask):
    _cp_wait(ip, op, mask, op.int_attr("numGroups", 0))


# ---- proxy fence --------------------------------------------------------------------

def h_fence_proxy(ip, op, env, mask):
    kind = op.attr("kind") or ""
    if "async" not in kind:
        raise Unsupported(f"line {op.line}: fence.proxy {kind}")
    blocks = np.unique(ip.lanes.blk if mask is None else ip.lanes.blk[mask])
    for s in ip.shared.values():
        s.dirty[blocks] = 0


# ---- wgmma ----------------------------------------------------------------------------

def _warpgroups(ip, op, mask):
    per = ip.lanes.threads_per_block
    if per % 128:
        raise KernelError(f"line {op.line}: {op.name} in a block of {per} threads")
    if mask is None:
        return np.arange(ip.lanes.count // 128)
    m = mask.reshape(-1, 128)
    partial = m.any(axis=1) & ~m.all(axis=1)
    if partial.any():
        raise KernelError(f"line {op.line}: {op.name} executed by part of a warpgroup")
    return np.flatnonzero(m.all(axis=1))


def _shape(op):
    s = op.attr("shape")
    import re
    m = re.search(r'm = (\d+), n = (\d+), k = (\d+)', s)
    return tuple(int(x) for x in m.groups())


def _wgmma_type(op, key):
    t = op.attr(key) or ""
    return t.split("<")[-1].rstrip(">")


def _operand_offsets(desc, rows, ks, kmajor):
    """Shared-window byte addresses the tensor core reads for elements
    (rows[i], ks[j]) of an operand with 16-bit elements (PTX ISA, "Matrix
    Descriptor Format", "Shared Memory Matrix Layout": canonical layouts)."""
    start = (desc & 0x3FFF) << 4
    lbo = ((desc >> 16) & 0x3FFF) << 4
    sbo = ((desc >> 32) & 0x3FFF) << 4
    base_off = (desc >> 49) & 0x7
    swz = (desc >> 62) & 0x3
    if swz != 1:
        raise Unsupported(f"wgmma descriptor swizzle mode {swz} (only 128B is implemented)")
    if base_off:
        raise Unsupported("wgmma descriptor with a base offset")
    mn = rows[:, None]
    k = ks[None, :]
    if kmajor:
        # ((8, m), (T, 2k)) : ((8T, SBO), (1, T)), T = 8 elements (16 B).
        off = (mn % 8) * 128 + (mn // 8) * sbo + (k % 8) * 2 + (k // 8) * 16
    else:
        # ((T, 8, m), (8, k)) : ((1, T, LBO), (8T, SBO)).
        off = (mn % 8) * 2 + ((mn // 8) % 8) * 16 + (mn // 64) * lbo + (k % 8) * 128 + (k // 8) * sbo
    a = start + off
    return a ^ (((a >> 7) & 7) << 4)


class _Wgmma:
    __slots__ = ("pending", "acc", "desc_a", "desc_b", "groups", "blk", "shape", "ka", "kb",
                 "scale_d", "elem", "op", "epoch")


def h_wgmma(ip, op, env, mask):
    from .interp import Pending
    acc, da, db = [env[o] for o in op.operands]
    wgs = _warpgroups(ip, op, mask)
    m, n, k = _shape(op)
    ta, tb, td = _wgmma_type(op, "typeA"), _wgmma_type(op, "typeB"), _wgmma_type(op, "typeD")
    if m != 64 or k != 16 or ta not in ("f16", "bf16") or tb != ta or td != "f32":
        raise Unsupported(f"line {op.line}: wgmma m{m}n{n}k{k} {ta} x {tb} -> {td}")
    for key in ("scaleA", "scaleB"):
        if "one" not in (op.attr(key) or "one"):
            raise Unsupported(f"line {op.line}: wgmma {key} {op.attr(key)}")
    rec = _Wgmma()
    rec.op = op
    rec.pending = Pending(f"the wgmma.mma_async at line {op.line}")
    rec.acc = acc
    cnt = ip.lanes.count
    da = np.broadcast_to(np.asarray(da, np.int64), (cnt,)).reshape(-1, 128)[wgs]
    db = np.broadcast_to(np.asarray(db, np.int64), (cnt,)).reshape(-1, 128)[wgs]
    if (da != da[:, :1]).any() or (db != db[:, :1]).any():
        raise KernelError(f"line {op.line}: wgmma descriptors differ within a warpgroup")
    rec.desc_a, rec.desc_b = da[:, 0], db[:, 0]
    if memory.TRACE is not None:
        memory.TRACE(ip, op, "wgmma", blk=ip.lanes.blk.reshape(-1, 128)[wgs, 0], lanes=wgs * 128,
                     desc_a=rec.desc_a, desc_b=rec.desc_b)
    rec.groups = wgs
    rec.blk = ip.lanes.blk.reshape(-1, 128)[wgs, 0]
    rec.epoch = ip.epoch[rec.blk].copy()
    rec.shape = (m, n, k)
    rec.ka = "row" in op.attr("layoutA")
    rec.kb = "col" in op.attr("layoutB")
    rec.scale_d = "zero" not in (op.attr("scaleD") or "one")
    rec.elem = ta
    ip.async_state.wg_open.append(rec)
    return rec.pending


def _resolve(ip, rec):
    from .interp import Pending
    op = rec.op
    m, n, k = rec.shape
    acc = rec.acc
    if isinstance(acc, Pending):
        if acc.value is None:
            raise KernelError(f"line {op.line}: wgmma accumulates onto a result that is "
                              "still pending in a later group")
        acc = acc.value
    cnt = ip.lanes.count
    acc = np.broadcast_to(np.asarray(acc, np.float32), (cnt, n // 2)).reshape(-1, 128, n // 2)
    out = np.full((cnt // 128, 128, n // 2), np.nan, np.float32)
    t = np.arange(128)
    w, l = t // 32, t % 32
    i = np.arange(n // 2)
    drow = 16 * w[:, None] + l[:, None] // 4 + 8 * ((i[None, :] // 2) % 2)
    dcol = 8 * (i[None, :] // 4) + 2 * (l[:, None] % 4) + i[None, :] % 2
    smems = [s for s in ip.shared.values()]
    for g, blk, da, db, ep in zip(rec.groups, rec.blk, rec.desc_a, rec.desc_b, rec.epoch):
        A = _read_operand(ip, op, smems, blk, int(da), m, k, rec.ka, rec.elem, ep)      # m x k
        Bt = _read_operand(ip, op, smems, blk, int(db), n, k, rec.kb, rec.elem, ep)     # n x k
        D = A @ Bt.T
        if rec.scale_d:
            C = np.zeros((m, n))
            C[drow, dcol] = acc[g]
            D = D + C
        out[g] = D[drow, dcol].astype(np.float32)
    rec.pending.value = out.reshape(cnt, n // 2)


def _read_operand(ip, op, smems, blk, desc, rows, k, kmajor, elem, epoch):
    addr = _operand_offsets(desc, np.arange(rows), np.arange(k), kmajor)
    lo, hi = int(addr.min()), int(addr.max()) + 2
    smem, base = _shared_of(ip, op, lo, hi - lo)
    off = addr - smem.addr
    if off.min() < 0 or off.max() + 2 > smem.nbytes:
        raise KernelError(f"line {op.line}: wgmma operand outside shared memory")
    d = smem.dirty
    if (d[blk, off] | d[blk, off + 1]).any():
        raise KernelError(f"line {op.line}: wgmma reads shared memory written by the generic "
                          "proxy without a fence.proxy.async since")
    # Generic-proxy writes (st.shared, cp.async) in the barrier interval of
    # the issue or later: not ordered before the wgmma (a race).
    b = off[..., None] + np.arange(2)
    wt = smem.wtag[blk * smem.row + b]
    ww, we = tag_warp(wt), tag_epoch(wt)
    bad = (ww >= 0) & (we >= epoch)
    if bad.any():
        raise KernelError(f"line {op.line}: shared-memory race: wgmma of block {blk} reads bytes "
                          f"warp {int(ww[bad][0])} wrote without a barrier before the wgmma "
                          "(or while it was in flight)")
    raw = smem.data[blk, b]
    u16 = np.ascontiguousarray(raw).view(np.uint16)[..., 0]
    if elem == "f16":
        return u16.view(np.float16).astype(np.float64)
    return (u16.astype(np.uint32) << 16).view(np.float32).astype(np.float64)


def h_wgmma_fence(ip, op, env, mask):
    _warpgroups(ip, op, mask)


def h_wgmma_commit(ip, op, env, mask):
    _warpgroups(ip, op, mask)
    st = ip.async_state
    st.wg_groups.append(st.wg_open)
    st.wg_open = []


def h_wgmma_wait(ip, op, env, mask):
    _warpgroups(ip, op, mask)
    n = op.int_attr("group")
    st = ip.async_state
    while len(st.wg_groups) > n:
        for rec in st.wg_groups.pop(0):
            _resolve(ip, rec)


# ---- mbarriers ------------------------------------------------------------------------

def _bar_lanes(ip, op, env, mask):
    p = env[op.operands[0]]
    if p.space != 3:
        raise Unsupported(f"line {op.line}: {op.name} on a pointer in address space {p.space}")
    lanes = _active(ip, mask)
    addrs = _lanes_of(p.addr, lanes)
    return lanes, addrs


def h_mbar_init(ip, op, env, mask):
    lanes, addrs = _bar_lanes(ip, op, env, mask)
    count = _lanes_of(np.asarray(env[op.operands[1]], np.int64), lanes)
    st = ip.async_state
    blk = ip.lanes.blk[lanes]
    for a in np.unique(addrs):
        _shared_of(ip, op, int(a), 8)
        if int(a) % 8:
            raise KernelError(f"line {op.line}: mbarrier at {int(a):#x} not 8-byte aligned")
        bar = st.mbarrier(op, int(a), create=True)
        sel = addrs == a
        for b, c in zip(blk[sel], count[sel]):
            bar.inited[b] = True
            bar.count[b] = bar.pending[b] = c
            bar.tx[b] = 0
            bar.phase[b] = 0


def _arrive(ip, op, lanes, addrs, tx=None):
    st = ip.async_state
    blk = ip.lanes.blk[lanes]
    for a in np.unique(addrs):
        bar = st.mbarrier(op, int(a))
        sel = addrs == a
        bs = blk[sel]
        if not bar.inited[bs].all():
            raise KernelError(f"line {op.line}: arrive on an uninitialized mbarrier")
        if tx is not None:
            np.add.at(bar.tx, bs, tx[sel])
        np.add.at(bar.pending, bs, -1)
        if (bar.pending[bs] < 0).any():
            raise KernelError(f"line {op.line}: more arrivals on the mbarrier at {int(a):#x} "
                              "than its expected count")
        bar.advance(bs)


def h_mbar_arrive(ip, op, env, mask):
    lanes, addrs = _bar_lanes(ip, op, env, mask)
    _arrive(ip, op, lanes, addrs)
    return np.int64(0) if op.results else None


def h_mbar_arrive_tx(ip, op, env, mask):
    lanes, addrs = _bar_lanes(ip, op, env, mask)
    tx = _lanes_of(np.asarray(env[op.operands[1]], np.int64), lanes)
    _arrive(ip, op, lanes, addrs, tx)
    return np.int64(0) if op.results else None


def h_mbar_try_wait(ip, op, env, mask):
    lanes, addrs = _bar_lanes(ip, op, env, mask)
    parity = _lanes_of(np.asarray(env[op.operands[1]], np.int64), lanes) & 1
    st = ip.async_state
    blk = ip.lanes.blk[lanes]
    bars = {int(a): st.mbarrier(op, int(a)) for a in np.unique(addrs)}

    def ready():
        for a, bar in bars.items():
            sel = addrs == a
            bs = np.unique(blk[sel])
            if bar.copies:
                st.land_tma(bar, set(bs.tolist()))
                bar.advance(bs)
            if ((bar.phase[blk[sel]] & 1) == parity[sel]).any():
                return False
        return True

    if not ready():
        yield ("wait", ready, f"mbarrier.try_wait.parity at line {op.line} "
                              f"(address {int(addrs[0]):#x}, parity {int(parity[0])})")


# ---- TMA --------------------------------------------------------------------------------

TMAP_MAGIC = b"KINTERP-TMAP"


class TensorMap:
    """What cuTensorMapEncodeTiled would encode: a global address, the
    element type, dims and box (innermost first), byte strides of dims 1..,
    swizzle and out-of-bounds fill; or, with mode "im2col", what
    cuTensorMapEncodeIm2col would (no box: the pixel bounding box's corners,
    rank - 2 each, innermost first, channels_per_pixel, pixels_per_column,
    element_strides the traversal strides)."""

    def __init__(self, addr, elem, dims, strides, box, swizzle, oob, element_strides=None,
                 mode="tiled", lower_corner=(), upper_corner=(), channels_per_pixel=0,
                 pixels_per_column=0):
        self.addr, self.elem = addr, elem
        self.dims, self.strides, self.box = list(dims), list(strides), list(box or ())
        self.swizzle, self.oob = swizzle, oob
        self.element_strides = list(element_strides or [1] * len(dims))
        self.mode = mode
        self.lower_corner, self.upper_corner = list(lower_corner), list(upper_corner)
        self.channels_per_pixel, self.pixels_per_column = channels_per_pixel, pixels_per_column


def _load_mode(op):
    """The TMA load's mode ("tile", "im2col", ...) from
    `#nvvm.tma_load_mode<...>` (absent: tile)."""
    text = op.attr("mode")
    if not text:
        return "tile"
    return text.strip().rsplit("<", 1)[-1].rstrip(">").strip()


def _tile_elements(op, tm, c):
    """Global element indices (innermost first) of a tiled box at
    coordinates `c`, row-major over the box (the order they land in)."""
    if any(s != 1 for s in tm.element_strides):
        raise Unsupported("TMA element strides other than 1")
    grids = np.meshgrid(*[np.arange(b) for b in reversed(tm.box)], indexing="ij")
    return [cd + g.reshape(-1) for cd, g in zip(c, reversed(grids))], tm.box[0]


def _walk(start, lo, hi, stride, count):
    """Positions along one bounding-box dimension of `count` steps of an
    im2col walk that starts at `start` and restarts at `lo` once it reaches
    `hi`, with the number of restarts before each step (what the next
    dimension advances by)."""
    def row(first):
        # Steps from `first` while below `hi` (at least the first one).
        return max(1, -(-(hi - first) // stride))
    k0, k = row(start), row(lo)
    pos = np.empty(count.shape, np.int64)
    first = count < k0
    pos[first] = start + count[first] * stride
    rest = count[~first] - k0
    pos[~first] = lo + (rest % k) * stride
    carry = np.zeros(count.shape, np.int64)
    carry[~first] = 1 + rest // k
    return pos, carry


def _im2col_elements(op, tm, c, offs):
    """Global element indices (innermost first) of an im2col load at
    coordinates `c` with im2col offsets `offs`: pixel j is the j-th
    position of the walk over the bounding box [lower, dim + upper) of each
    spatial dimension (innermost fastest, by the traversal strides; past the
    outermost spatial one the batch index advances), reading channels
    c[0] .. c[0] + channels_per_pixel - 1 at that position plus the
    offsets; row-major over (pixel, channel)."""
    rank = len(tm.dims)
    if len(offs) != rank - 2:
        raise KernelError(f"line {op.line}: {len(offs)} im2col offsets for a rank-{rank} "
                          f"im2col map (it takes {rank - 2})")
    cpp, ppc = tm.channels_per_pixel, tm.pixels_per_column
    es = tm.element_strides
    if es[0] != 1:
        raise Unsupported(f"line {op.line}: TMA im2col channel element stride {es[0]}")
    steps = np.arange(ppc, dtype=np.int64)
    spatial = []
    for d in range(1, rank - 1):
        lo, hi = tm.lower_corner[d - 1], tm.dims[d] + tm.upper_corner[d - 1]
        pos, steps = _walk(c[d], lo, hi, es[d], steps)
        spatial.append(pos + offs[d - 1])
    batch = c[rank - 1] + steps * es[rank - 1]
    ch = c[0] + np.arange(cpp, dtype=np.int64)
    idx = [np.broadcast_to(ch[None, :], (ppc, cpp)).reshape(-1)]
    idx += [np.repeat(p, cpp) for p in spatial + [batch]]
    return idx, cpp


def h_tma_load(ip, op, env, mask):
    vals = [env[o] for o in op.operands]
    seg = op.array_attr("operandSegmentSizes")
    if any(seg[5:]):
        raise Unsupported(f"line {op.line}: TMA load with multicast, cache hints or a predicate")
    mode = _load_mode(op)
    if mode not in ("tile", "im2col"):
        raise Unsupported(f"line {op.line}: TMA load mode {op.attr('mode')}")
    if mode == "tile" and seg[4]:
        raise KernelError(f"line {op.line}: tile-mode TMA load with {seg[4]} im2col offsets")
    dst, tmap = vals[0], vals[1]
    coords = vals[2:2 + seg[2]]
    bar = vals[2 + seg[2]]
    offsets = vals[3 + seg[2]:3 + seg[2] + seg[4]]
    lanes = _active(ip, mask)
    if not len(lanes):
        return
    st = ip.async_state
    mem = ip.memory
    maps = getattr(mem, "tensor_maps", {})
    for j, lane in enumerate(lanes):
        maddr = int(_lanes_of(np.asarray(tmap.addr), lanes)[j])
        buf, off = mem.find(maddr, 128)
        raw = bytes(buf.data[off:off + 16])
        if not raw.startswith(TMAP_MAGIC):
            raise KernelError(f"line {op.line}: TMA load through {maddr:#x}, which holds no "
                              "tensor map")
        tm = maps[int.from_bytes(raw[12:16], "little")]
        if tm.mode != ("im2col" if mode == "im2col" else "tiled"):
            raise KernelError(f"line {op.line}: {mode}-mode TMA load through a tensor map "
                              f"of mode {tm.mode}")
        c = [int(_lanes_of(np.asarray(x, np.int64), lanes)[j]) for x in coords]
        if len(c) != len(tm.dims):
            raise KernelError(f"line {op.line}: {len(c)} coordinates for a rank-{len(tm.dims)} map")
        eb = tm.elem.bytes
        if mode == "im2col":
            o = [int(_lanes_of(np.asarray(x, np.int64), lanes)[j]) for x in offsets]
            idx, inner = _im2col_elements(op, tm, c, o)
        else:
            idx, inner = _tile_elements(op, tm, c)
        # Element idx[..][e] lands at byte e * eb of the destination; out of
        # bounds -> 0.
        inb = np.ones(idx[0].shape, bool)
        gbyte = np.zeros(idx[0].shape, np.int64)
        for d, (x, dim) in enumerate(zip(idx, tm.dims)):
            inb &= (x >= 0) & (x < dim)
            gbyte += x * (eb if d == 0 else tm.strides[d - 1])
        gaddr = tm.addr + gbyte
        data = np.zeros((idx[0].size, eb), np.uint8)
        if inb.any():
            lo, hi = int(gaddr[inb].min()), int(gaddr[inb].max()) + eb
            gb, goff = mem.find(lo, hi - lo)
            sel = gaddr[inb] - gb.addr
            data[inb] = gb.data[sel[:, None] + np.arange(eb)]
        # The full box (or column) counts, out-of-bounds elements included.
        nbytes = idx[0].size * eb
        daddr = int(_lanes_of(np.asarray(dst.addr), lanes)[j])
        if daddr % 128:
            raise KernelError(f"line {op.line}: TMA destination {daddr:#x} not 128-byte aligned")
        a = daddr + np.arange(idx[0].size, dtype=np.int64) * eb
        if tm.swizzle == "128B":
            # Rows (the inner box dimension, an im2col pixel's channels)
            # of 128 bytes: 16-byte chunk ^= (address bits 7..9).
            if inner * eb != 128:
                what = "inner box" if mode == "tile" else "im2col pixel row"
                raise Unsupported(f"TMA 128B swizzle with a {inner * eb}-byte {what}")
            a = a ^ (((a >> 7) & 7) << 4)
        elif tm.swizzle != "none":
            raise Unsupported(f"TMA swizzle {tm.swizzle}")
        smem, _ = _shared_of(ip, op, int(a.min()), int(a.max() - a.min()) + eb)
        offs = (a - smem.addr)[:, None] + np.arange(eb)
        baddr = int(_lanes_of(np.asarray(bar.addr), lanes)[j])
        mbar = st.mbarrier(op, baddr)
        blk = int(ip.lanes.blk[lane])
        mbar.copies.append((blk, smem, offs.reshape(-1), data.reshape(-1), nbytes))


HANDLERS = {
    "nvgpu.device_async_copy": h_async_copy,
    "nvgpu.device_async_create_group": h_cp_commit,
    "nvgpu.device_async_wait": h_nvgpu_wait,
    "nvvm.cp.async.commit.group": h_cp_commit,
    "nvvm.cp.async.wait.group": h_cp_wait,
    "nvvm.fence.proxy": h_fence_proxy,
    "nvvm.wgmma.fence.aligned": h_wgmma_fence,
    "nvvm.wgmma.mma_async": h_wgmma,
    "nvvm.wgmma.commit.group.sync.aligned": h_wgmma_commit,
    "nvvm.wgmma.wait.group.sync.aligned": h_wgmma_wait,
    "nvvm.mbarrier.init": h_mbar_init,
    "nvvm.mbarrier.arrive": h_mbar_arrive,
    "nvvm.mbarrier.arrive.expect_tx": h_mbar_arrive_tx,
    "nvvm.mbarrier.try_wait.parity": h_mbar_try_wait,
    "nvvm.cp.async.bulk.tensor.shared.cluster.global": h_tma_load,
}
