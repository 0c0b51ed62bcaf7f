#!/usr/bin/env python3
"""CPU model of the reduction kernel's thread mapping (ReduceTiling.cpp,
ReduceEmitter.cpp): the merged layout, the offsets of (output, reduced
index), which thread loads what for threads_per_row > 1 (lanes, vectors,
xor shuffles over aligned lane groups, per-warp shared-memory partials, the
clamped last row) and for threads_per_row = 1 (W outputs per thread). Each
simulated kernel must read every input element of every row exactly once
and produce numpy's sum for every output. Run: python3 test/Tools/check_reduce_mapping.py
"""

import itertools
import numpy as np


def layout(shape, axes):
    """(kept runs, reduced runs, outputs, row size); runs are (size, stride)."""
    kept, red, stride, last = [], [], 1, None
    n_out = row = 1
    for d in reversed(range(len(shape))):
        size, is_red = shape[d], d in axes
        if size != 1:
            runs = red if is_red else kept
            if last == is_red:
                runs[-1] = (runs[-1][0] * size, runs[-1][1])
            else:
                runs.append((size, stride))
            last = is_red
            if is_red:
                row *= size
            else:
                n_out *= size
        stride *= size
    return kept[::-1], red[::-1], n_out, row


def run_offset(linear, runs):
    off, inner = 0, 1
    for i in reversed(range(len(runs))):
        c = linear // inner
        if i != 0:
            c %= runs[i][0]
        off += c * runs[i][1]
        inner *= runs[i][0]
    return off


def simulate(shape, axes, T, P, W, G):
    x = np.random.default_rng(0).integers(-50, 50, size=shape).astype(np.int64)
    flat = x.reshape(-1)
    kept, red, n_out, row = layout(shape, axes)
    out = np.full(n_out, 10**9, dtype=np.int64)
    reads = np.zeros(flat.size, dtype=np.int64)
    if T == 1:
        assert n_out % W == 0
        for b, t in itertools.product(range(G), range(P)):
            for g in range(b * P + t, n_out // W, P * G):
                o = g * W
                base = run_offset(o, kept)
                acc = [0] * W
                for k in range(row):
                    off = base + run_offset(k, red)
                    assert W == 1 or off % W == 0
                    for l in range(W):
                        acc[l] += flat[off + l]
                        reads[off + l] += 1
                for l in range(W):
                    assert out[o + l] == 10**9
                    out[o + l] = acc[l]
    else:
        assert W == 1 or (red[-1][1] == 1 and red[-1][0] % W == 0)
        for b in range(G):
            for rg in range(b, -(-n_out // P), G):
                partial = {}
                for tid in range(T * P):
                    lane, rib = tid % T, tid // T
                    r = rg * P + rib
                    rc = min(r, n_out - 1)
                    base = run_offset(rc, kept)
                    acc = 0
                    for k in range(lane * W, row, T * W):
                        off = base + run_offset(k, red)
                        assert W == 1 or off % W == 0
                        for l in range(W):
                            acc += flat[off + l]
                            if r < n_out:
                                reads[off + l] += 1
                    partial[tid] = acc
                # xor shuffles within aligned groups of min(T, 32) lanes.
                n = min(T, 32)
                v = dict(partial)
                o = n // 2
                while o >= 1:
                    v = {t: v[t] + v[(t & ~31) | ((t % 32) ^ o)] for t in v}
                    o //= 2
                if T > 32:
                    wpr = T // 32
                    smem = {}
                    for tid in v:
                        lane, rib = tid % T, tid // T
                        if lane % 32 == 0:
                            smem[rib * wpr + lane // 32] = v[tid]
                    v2 = {}
                    for tid in v:
                        lane, rib = tid % T, tid // T
                        liw = lane % 32
                        v2[tid] = smem[rib * wpr + min(liw, wpr - 1)] if liw < wpr else 0
                    o = wpr // 2
                    while o >= 1:
                        v2 = {t: v2[t] + v2[(t & ~31) | ((t % 32) ^ o)] for t in v2}
                        o //= 2
                    v = v2
                for tid in v:
                    lane, rib = tid % T, tid // T
                    r = rg * P + rib
                    if lane == 0 and r < n_out:
                        assert out[r] == 10**9
                        out[r] = v[tid]
    ref = x.sum(axis=tuple(axes)).reshape(-1)
    assert (reads == 1).all(), (shape, axes, T, P, W, G)
    assert (out == ref).all(), (shape, axes, T, P, W, G)


CASES = [
    ((37, 1001), [1], 128, 2, 1, 19),
    ((37, 1001), [1], 128, 2, 1, 3),       # grid-stride over row groups
    ((37, 1001), [0], 1, 256, 1, 4),
    ((64, 1024), [0], 1, 128, 8, 1),
    ((3, 5, 1024), [1, 2], 128, 2, 8, 2),
    ((3, 5, 7), [1], 1, 256, 1, 1),
    ((3, 5, 7), [1], 2, 16, 1, 2),         # strided rows shared by 2 threads
    ((4, 6, 8), [0, 2], 32, 1, 1, 6),
    ((4, 6, 8), [0, 2], 64, 1, 1, 2),
    ((100, 128), [1], 16, 2, 8, 50),
    ((4097,), [0], 1024, 1, 1, 1),
    ((2049, 16), [1], 2, 128, 8, 3),
    ((7, 33, 129), [0, 2], 256, 1, 1, 33),
    ((2, 1, 3, 1, 5), [1, 3, 4], 4, 8, 1, 1),  # size-1 axes merge away
]

if __name__ == "__main__":
    for case in CASES:
        simulate(*case)
    print(f"{len(CASES)} reduction mappings check out")
