"""Warp-collective ops with the PTX ISA's semantics: shfl.sync (gpu.shuffle,
as the NVVM lowering emits it), ldmatrix (nvgpu.ldmatrix: x1/x2/x4,
.trans), mma.sync m16n8k16 / m16n8k8 (f16, bf16), m16n8k8 tf32 and
m16n8k32 s8 (nvgpu.mma.sync, nvvm.mma.sync). The fragment maps are the
ISA's "Matrix Fragments for mma.m16n8k*" tables; every warp that executes
one of these ops must have all 32 lanes active."""
import numpy as np

from .memory import KernelError, Unsupported, race_read
from .types import bf16_to_f32, parse_type, register_dtype, storage_dtype, to_register, wrap_int


def warps(ip, op, mask):
    """Checks that the lanes form whole warps and that each warp is active
    as a whole or not at all; returns the number of warps."""
    lanes = ip.lanes
    if lanes.threads_per_block % 32:
        raise Unsupported(f"line {op.line}: {op.name} in a block of {lanes.threads_per_block} "
                          "threads (not whole warps)")
    if mask is not None:
        m = mask.reshape(-1, 32)
        partial = m.any(axis=1) & ~m.all(axis=1)
        if partial.any():
            w = int(np.flatnonzero(partial)[0])
            raise KernelError(f"line {op.line}: {op.name} executed by part of a warp "
                              f"(lanes {np.flatnonzero(m[w]).tolist()} of warp {w} of the chunk)")
    return lanes.count // 32


def per_lane(ip, v, rank):
    v = np.asarray(v)
    n = ip.lanes.count
    if v.ndim == rank:
        return np.broadcast_to(v, (n,) + v.shape)
    return v


# ---- shuffles ------------------------------------------------------------------

def h_shuffle(ip, op, env, mask):
    val, offset, width = [env[o] for o in op.operands]
    mode = op.cache.get("mode")
    if mode is None:
        mode = op.attr("mode").split()[-1].rstrip(">")
        op.cache["mode"] = mode
    warps(ip, op, mask)
    n = ip.lanes.count
    lane = ip.lanes.lane
    off = np.broadcast_to(np.asarray(offset, dtype=np.int64), (n,)) & 31   # b[4:0]
    w = np.broadcast_to(np.asarray(width, dtype=np.int64), (n,))
    if ((w < 1) | (w > 32)).any():
        raise KernelError(f"line {op.line}: gpu.shuffle width {np.unique(w).tolist()}")
    # The NVVM lowering: member mask 0xffffffff >> (32 - width); clamp
    # (width - 1), or (32 - width) for up, with segment mask 0.
    member = lane < w
    act = np.ones(n, bool) if mask is None else mask
    if (act & ~member).any():
        raise KernelError(f"line {op.line}: gpu.shuffle by a lane outside its member mask")
    if mode == "xor":
        j = lane ^ off
        valid = j <= w - 1
    elif mode == "down":
        j = lane + off
        valid = j <= w - 1
    elif mode == "idx":
        j = off.copy()
        valid = j <= w - 1
    elif mode == "up":
        j = lane - off
        valid = j >= (32 - w)
    else:
        raise Unsupported(f"line {op.line}: gpu.shuffle mode {mode}")
    src = np.where(valid, j, lane)
    base = np.arange(n, dtype=np.int64) - lane
    srcidx = base + src
    # Lanes named in the member mask of an active warp must be active.
    warp_active = act.reshape(-1, 32).any(axis=1).repeat(32)
    if (warp_active & member & ~act).any():
        raise KernelError(f"line {op.line}: gpu.shuffle with inactive lanes in its member mask")
    v = per_lane(ip, val, 0)
    return v[srcidx], valid


# ---- ldmatrix ------------------------------------------------------------------

def h_ldmatrix(ip, op, env, mask):
    vals = [env[o] for o in op.operands]
    m, idx = vals[0], vals[1:]
    if not m.shared:
        raise KernelError(f"line {op.line}: nvgpu.ldmatrix from global memory")
    num = op.int_attr("numTiles")
    trans = op.attr("transpose", "false") == "true"
    typ = op.result_types[0]
    nw = warps(ip, op, mask)
    n = ip.lanes.count
    eb = m.elem.bytes
    if trans and eb != 2:
        raise KernelError(f"line {op.line}: ldmatrix .trans of {m.elem} (b16 only)")
    # Byte offsets of each lane's row in its block's shared allocation.
    lin = m.offset
    for i, s in zip(idx, m.strides):
        lin = lin + np.asarray(i, dtype=np.int64) * s
    off = np.broadcast_to(m.aligned + np.asarray(lin) * eb, (n,))
    used = np.zeros(32, bool)
    used[:8 * num] = True
    act = np.ones(n, bool) if mask is None else mask
    need = act & used[ip.lanes.lane]
    # Each row: 16 bytes inside the memref's innermost dim, 16-byte aligned.
    for d, (i, size) in enumerate(zip(idx, m.shape)):
        i = np.broadcast_to(np.asarray(i, dtype=np.int64), (n,))
        top = size - (16 // eb - 1 if d == len(idx) - 1 else 0)
        if ((i < 0) | (i >= top))[need].any():
            raise KernelError(f"line {op.line}: ldmatrix row outside {list(m.shape)}")
    addr = m.buf.addr + off
    if (addr % 16 != 0)[need].any():
        raise KernelError(f"line {op.line}: ldmatrix row address not 16-byte aligned")
    offs = off.reshape(nw, 32)[:, :8 * num].reshape(nw, num, 8)
    blk = ip.lanes.blk.reshape(nw, 32)[:, 0]
    safe = np.where(need.reshape(nw, 32)[:, :8 * num].reshape(nw, num, 8), offs, m.aligned)
    rows = m.buf.data[blk[:, None, None, None], safe[..., None] + np.arange(16)]  # nw,num,8,16
    rl = np.flatnonzero(need)
    race_read(ip, op, m.buf, ip.lanes.blk[rl], off[rl][:, None] + np.arange(16), ip.lanes.warp[rl])
    l = np.arange(32)
    if not trans:
        # Lane l: bytes 4 (l % 4) .. +4 of row l / 4 of each matrix.
        b = rows[:, :, (l // 4)[:, None], (4 * (l % 4))[:, None] + np.arange(4)]  # nw,num,32,4
        out = b.transpose(0, 2, 1, 3)                                   # nw,32,num,4
    else:
        r16 = np.ascontiguousarray(rows).view(np.uint16)                # nw,num,8,8
        e = np.arange(2)
        out16 = r16[:, :, (2 * (l % 4))[:, None] + e[None, :], (l // 4)[:, None]]  # nw,num,32,2
        out = np.ascontiguousarray(out16.transpose(0, 2, 1, 3)).view(np.uint8)
    raw = np.ascontiguousarray(out).reshape(n, num, 4).view(storage_dtype(typ.elem))
    res = to_register(raw, typ.elem)
    if tuple(res.shape[1:]) != tuple(typ.shape):
        raise KernelError(f"line {op.line}: ldmatrix x{num} of {m.elem} gives "
                          f"{res.shape[1:]}, the op says {typ}")
    return res


# ---- mma.sync --------------------------------------------------------------------

def _frag_a(kind, k, l, i):
    g, t = l // 4, l % 4
    if kind == "b16" and k == 16:
        return g + 8 * ((i // 2) % 2), 2 * t + i % 2 + 8 * (i // 4)
    if kind == "b16" and k == 8:
        return g + 8 * (i // 2), 2 * t + i % 2
    if kind == "tf32" and k == 8:
        return g + 8 * (i % 2), t + 4 * (i // 2)
    if kind == "s8" and k == 32:
        return g + 8 * ((i // 4) % 2), 4 * t + i % 4 + 16 * (i // 8)
    raise Unsupported(f"mma.sync m16n8k{k} {kind}")


def _frag_b(kind, k, l, i):
    g, t = l // 4, l % 4
    if kind == "b16" and k == 16:
        return 2 * t + i % 2 + 8 * (i // 2), g
    if kind == "b16" and k == 8:
        return 2 * t + i, g
    if kind == "tf32" and k == 8:
        return t + 4 * i, g
    if kind == "s8" and k == 32:
        return 4 * t + i % 4 + 16 * (i // 4), g
    raise Unsupported(f"mma.sync m16n8k{k} {kind}")


def _frag_c(l, i):
    return l // 4 + 8 * (i // 2), 2 * (l % 4) + i % 2


_MAPS = {}


def fragment_maps(kind, k):
    key = (kind, k)
    if key not in _MAPS:
        na, nb = 16 * k // 32, k * 8 // 32
        maps = []
        for count, fn, shape in ((na, lambda l, i: _frag_a(kind, k, l, i), (16, k)),
                                 (nb, lambda l, i: _frag_b(kind, k, l, i), (k, 8)),
                                 (4, _frag_c, (16, 8))):
            rows = np.zeros((32, count), np.int64)
            cols = np.zeros((32, count), np.int64)
            seen = np.zeros(shape, np.int64)
            for l in range(32):
                for i in range(count):
                    rows[l, i], cols[l, i] = fn(l, i)
                    seen[rows[l, i], cols[l, i]] += 1
            assert (seen == 1).all(), (kind, k)
            maps.append((rows, cols))
        _MAPS[key] = maps
    return _MAPS[key]


def mma_sync(ip, op, mask, a, b, c, kind, k, acc_elem, tf32=False):
    """D = A B + C of every active warp; a, b, c: per-lane fragments
    [lanes, elements] in the ISA's register order; returns [lanes, 4]."""
    nw = warps(ip, op, mask)
    (ra, ca), (rb, cb), (rc, cc) = fragment_maps(kind, k)
    a = np.asarray(a).reshape(nw, 32, -1)
    b = np.asarray(b).reshape(nw, 32, -1)
    c = np.asarray(c).reshape(nw, 32, -1)
    if a.shape[2] != ra.shape[1] or b.shape[2] != rb.shape[1] or c.shape[2] != 4:
        raise KernelError(f"line {op.line}: mma.sync m16n8k{k} {kind} fragments of "
                          f"{a.shape[2]}, {b.shape[2]}, {c.shape[2]} elements")
    if tf32:
        a = (np.ascontiguousarray(a, np.float32).view(np.uint32) & np.uint32(0xFFFFE000)).view(np.float32)
        b = (np.ascontiguousarray(b, np.float32).view(np.uint32) & np.uint32(0xFFFFE000)).view(np.float32)
    integer = kind == "s8"
    wide = np.int64 if integer else np.float64
    A = np.zeros((nw, 16, k), wide)
    B = np.zeros((nw, k, 8), wide)
    C = np.zeros((nw, 16, 8), wide)
    A[:, ra, ca] = a
    B[:, rb, cb] = b
    C[:, rc, cc] = c
    D = np.matmul(A, B) + C
    d = D[:, rc, cc].reshape(nw * 32, 4)
    if integer:
        return wrap_int(d, 32)
    return d.astype(register_dtype(acc_elem))


def _kind(elem, op):
    if elem.is_float and elem.kind in ("f16", "bf16"):
        return "b16"
    if elem.is_float and elem.kind == "f32":
        return "tf32"
    if elem.is_int and elem.width == 8:
        return "s8"
    raise Unsupported(f"line {op.line}: mma.sync on {elem}")


def h_nvgpu_mma(ip, op, env, mask):
    a, b, c = [env[o] for o in op.operands]
    ta, tb, tc = op.operand_types
    shape = op.array_attr("mmaShape")
    if shape[:2] != [16, 8]:
        raise Unsupported(f"line {op.line}: nvgpu.mma.sync {shape}")
    kind = _kind(ta.elem, op)
    if kind == "tf32" and not op.has("tf32Enabled"):
        raise Unsupported(f"line {op.line}: f32 mma.sync without tf32Enabled")
    n = ip.lanes.count
    a = per_lane(ip, a, ta.rank).reshape(n, -1)
    b = per_lane(ip, b, tb.rank).reshape(n, -1)
    c = per_lane(ip, c, tc.rank).reshape(n, -1)
    d = mma_sync(ip, op, mask, a, b, c, kind, shape[2], tc.elem, tf32=kind == "tf32")
    return d.reshape((n,) + op.result_types[0].shape)


def h_nvvm_mma(ip, op, env, mask):
    vals = [env[o] for o in op.operands]
    seg = op.array_attr("operandSegmentSizes")
    ptx = op.attr("multiplicandAPtxType") or ""
    if "bf16" not in ptx and "f16" not in ptx:
        raise Unsupported(f"line {op.line}: nvvm.mma.sync with {ptx}")
    if "m = 16, n = 8, k = 16" not in (op.attr("shape") or ""):
        raise Unsupported(f"line {op.line}: nvvm.mma.sync shape {op.attr('shape')}")
    if "row" not in op.attr("layoutA") or "col" not in op.attr("layoutB"):
        raise Unsupported(f"line {op.line}: nvvm.mma.sync layouts")
    n = ip.lanes.count
    av, bv, cv = vals[:seg[0]], vals[seg[0]:seg[0] + seg[1]], vals[seg[0] + seg[1]:]
    is_bf16 = "bf16" in ptx

    def unpack(words):
        out = []
        for w in words:
            u = np.broadcast_to(np.asarray(w, dtype=np.int64), (n,)) & 0xFFFFFFFF
            # The first element in the low half (PTX packs .f16x2/.bf16x2 so).
            for half in (u & 0xFFFF, u >> 16):
                h = half.astype(np.uint16)
                out.append(bf16_to_f32(h) if is_bf16 else h.view(np.float16).astype(np.float32))
        return np.stack(out, axis=1)

    a = unpack(av)
    b = unpack(bv)
    ctypes = op.operand_types[seg[0] + seg[1]:]
    if not all(t.is_float and t.kind == "f32" for t in ctypes):
        raise Unsupported(f"line {op.line}: nvvm.mma.sync accumulators {ctypes}")
    c = np.stack([np.broadcast_to(np.asarray(x, np.float32), (n,)) for x in cv], axis=1)
    return mma_sync(ip, op, mask, a, b, c, "b16", 16, parse_type("f32"))

HANDLERS = {
    "gpu.shuffle": h_shuffle,
    "nvgpu.ldmatrix": h_ldmatrix,
    "nvgpu.mma.sync": h_nvgpu_mma,
    "nvvm.mma.sync": h_nvvm_mma,
}
