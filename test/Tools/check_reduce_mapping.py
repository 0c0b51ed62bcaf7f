#!/usr/bin/env python3
"""CPU model of the reduction kernel's thread mapping (ReduceTiling.cpp,
ReduceEmitter.cpp): the merged layout, the offsets of (output, reduced
index), which thread loads what for threads_per_row > 1 (lanes, vectors,
xor shuffles over aligned lane groups, per-warp shared-memory partials, the
clamped last row) and for threads_per_row = 1 (W outputs per thread). Each
simulated kernel must read every input element of every row exactly once
and produce numpy's sum for every output.

With a kgraph-opt, each case is also compiled (its config pinned on a
kgraph.fused group) and run in the kernel interpreter (test/Tools/kinterp)
with its accesses traced: every thread's global loads of the input (first
element and vector width, in program order), its shared-memory partial
stores and loads (slots), its output stores, and the output values must be
the model's. Run: python3 test/Tools/check_reduce_mapping.py [KGRAPH_OPT]
(exits 1 on a mismatch).
"""

import itertools
import os
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

#: Event tags of a thread's accesses: (tag, first element or slot, width).
LOAD, SMEM_STORE, SMEM_LOAD, STORE = range(4)


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


def simulate(shape, axes, T, P, W, G, x=None):
    """The kernel's result and, per (block, thread), its accesses in program
    order ([(tag, first, width)]; threads past the last row reduce it
    again, so their loads are listed too)."""
    if x is None:
        x = np.random.default_rng(0).integers(-50, 50, size=shape).astype(np.int64)
    flat = x.reshape(-1)
    kept, red, n_out, row = layout(shape, axes)
    out = np.full(n_out, 10**9, dtype=np.int64)
    reads = np.zeros(flat.size, dtype=np.int64)
    events = {}

    def ev(b, tid, *e):
        events.setdefault((b, tid), []).append(e)
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
                    ev(b, t, LOAD, off, W)
                    for l in range(W):
                        acc[l] += flat[off + l]
                        reads[off + l] += 1
                ev(b, t, STORE, o, W)
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
                        ev(b, tid, LOAD, off, W)
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
                    # One slot per warp of a row; every thread then reads
                    # a slot (clamped) and keeps it in the first wpr lanes.
                    wpr = T // 32
                    smem = {}
                    for tid in v:
                        lane, rib = tid % T, tid // T
                        if lane % 32 == 0:
                            smem[rib * wpr + lane // 32] = v[tid]
                            ev(b, tid, SMEM_STORE, rib * wpr + lane // 32, 1)
                    v2 = {}
                    for tid in v:
                        lane, rib = tid % T, tid // T
                        liw = lane % 32
                        slot = rib * wpr + min(liw, wpr - 1)
                        ev(b, tid, SMEM_LOAD, slot, 1)
                        v2[tid] = smem[slot] if liw < wpr else 0
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
                        ev(b, tid, STORE, r, 1)
    ref = x.sum(axis=tuple(axes)).reshape(-1)
    assert (reads == 1).all(), (shape, axes, T, P, W, G)
    assert (out == ref).all(), (shape, axes, T, P, W, G)
    return out, events


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

# ---- the compiled kernels ----------------------------------------------------------

TARGETS = ("sm_70", "sm_75", "sm_80", "sm_90a")


def case_graph(shape, axes, T, P, W, G, dt):
    """A sum over `axes` with the case's config pinned."""
    def t(s):
        return "tensor<" + "".join(f"{d}x" for d in s) + dt + ">"
    out = [d for i, d in enumerate(shape) if i not in axes]
    cfg = (f"#kgraph.reduce_config<threads_per_row = {T}, rows_per_block = {P}, "
           f"vector_width = {W}, grid_size = {G}>")
    return (f"func.func @main(%a: {t(shape)}) -> {t(out)} {{\n"
            f"  %0 = kgraph.fused (%a) {{kgraph.config = {cfg}}} : ({t(shape)}) -> {t(out)} {{\n"
            f"  ^bb0(%x: {t(shape)}):\n"
            f"    %r = kgraph.reduce sum %x axes = [{', '.join(map(str, axes))}] : {t(shape)}\n"
            f"    kgraph.yield %r : {t(out)}\n  }}\n  return %0 : {t(out)}\n}}\n")


def as_rows(events):
    """{(block, thread): [(tag, first, width)]} as an int array of rows
    (block, thread, tag, first, width), each thread's in program order."""
    rows = [(b, t) + e for (b, t), evs in sorted(events.items()) for e in evs]
    return np.array(rows, np.int64).reshape(-1, 5)


def compiled_events(rec):
    """The traced accesses of the kernel as as_rows rows."""
    from kinterp.memory import SharedMemory
    parts = []
    for e in rec.events:
        if e.kind not in ("load", "store"):
            continue
        shared = isinstance(e.fields["buf"], SharedMemory)
        tag = {("load", False): LOAD, ("store", False): STORE, ("store", True): SMEM_STORE,
               ("load", True): SMEM_LOAD}[(e.kind, shared)]
        el = e.fields["elems"]
        k, w = el.shape
        parts.append(np.stack([e.block, e.thread, np.full(k, tag), el[:, 0], np.full(k, w),
                               np.full(k, e.seq)], axis=1))
    a = np.concatenate(parts) if parts else np.zeros((0, 6), np.int64)
    a = a[np.lexsort((a[:, 5], a[:, 1], a[:, 0]))]
    return a[:, :5]


def check_compiled(opt, case, target):
    """None when the compiled kernel of `case` does what the model does;
    else a message."""
    from check_kernels_interp import compile_graph
    from kinterp.plan import Module, run_plan
    from kinterp.trace import tracing
    shape, axes, T, P, W, G = case
    dt = "f16" if W > 4 else "f32"   # W lanes of 16 bytes at most
    x = np.random.default_rng(0).integers(-50, 50, size=shape).astype(np.int64)
    want, events = simulate(*case, x=x)
    fplan, ir = compile_graph(opt, case_graph(*case, dt), target, False)
    ks = fplan["kernels"]
    if len(ks) != 1:
        return f"{len(ks)} kernels, the model has one"
    threads = T * P
    if ks[0]["grid"] != [G, 1, 1] or ks[0]["block"] != [threads, 1, 1]:
        return (f"launch grid {ks[0]['grid']} block {ks[0]['block']}, the model "
                f"[{G}, 1, 1] x [{threads}, 1, 1]")
    with tracing() as rec:
        outs, unwritten = run_plan(fplan, Module(ir), {0: x.astype(np.float32)})
    got = compiled_events(rec)
    model = as_rows(events)
    if got.shape != model.shape or (got != model).any():
        names = ("input load", "shared store", "shared load", "output store")
        if got.shape == model.shape:
            i = int(np.flatnonzero((got != model).any(axis=1))[0])
        else:
            n = min(len(got), len(model))
            diff = np.flatnonzero((got[:n] != model[:n]).any(axis=1))
            i = int(diff[0]) if len(diff) else n
        def say(a):
            if i >= len(a):
                return "nothing"
            b, t, tag, first, w = a[i].tolist()
            return f"block {b} thread {t} {names[tag]} at {first} width {w}"
        return (f"{len(got)} accesses, the model {len(model)}; access {i}: the kernel: "
                f"{say(got)}; the model: {say(model)}")
    rnd = np.float16 if dt == "f16" else np.float32
    out = np.asarray(outs[0], np.float64).reshape(-1)
    if unwritten[0].any() or (out != want.astype(rnd).astype(np.float64)).any():
        return "the output differs from the model's sums"
    return None


def main(argv):
    opt = argv[1] if len(argv) > 1 else None
    fails = []
    for i, case in enumerate(CASES):
        if not opt:
            simulate(*case)
            continue
        # Each case on one target, in turn (the mapping is the same on all).
        target = TARGETS[i % len(TARGETS)]
        msg = check_compiled(opt, case, target)
        if msg:
            fails.append(f"MISMATCH {case} {target}: {msg}")
    print(f"{len(CASES)} reduction mappings check out")
    if opt:
        for f in fails:
            print(f)
        print(f"{len(CASES) - len(fails)} of {len(CASES)} compiled reduction kernels do what "
              f"the model does")
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
