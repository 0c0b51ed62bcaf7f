#!/usr/bin/env python3
"""CPU self-check of the wgmma kernel's maps (lib/Conversion/KGraphToGPU/Wgmma.cpp)
against the PTX ISA and CUTLASS's canonical GMMA layouts.

1. Accumulators: the epilogue coordinates of every register of every thread
   of a warpgroup (warpOrigin + finish's grouping of registers 4j..4j+3 +
   elementCoords) equal the ISA's fragment map for the m64nNk16 f32
   accumulator D ("Matrix Fragments for wgmma.mma_async.m64nNk16": thread t,
   warp w = t / 32 of the warpgroup, lane l: register i holds row
   16 w + l / 4 + 8 ((i / 2) % 2), column 8 (i / 4) + 2 (l % 4) + i % 2),
   and cover each slab x N tile exactly once.
2. Operands: for every k16 step, slab and instruction, the address the
   tensor core reads for element (mn, k) - the descriptor's start address
   plus the canonical 128-byte-swizzle layout (K-major
   ((8,m),(T,2)):((8T,SBO),(1,T)), MN-major ((T,8,m),(8,k)):((1,T,LBO),(8T,SBO)),
   T = 8 16-bit elements, then Swizzle<3,4,3> on the byte address: bits 4-6
   ^= bits 7-9) - is the address where the cp.async staging
   (tileIndices) stored that element of the global tile.
3. With a kgraph-opt: GEMMs with pinned wgmma configurations (slabs 1 and
   2, N = 8 to 256, warpgroups along M and N, every operand major, more k
   tiles than stages) compiled for sm_90a and run in the kernel
   interpreter (test/Tools/kinterp) with their accesses traced. The
   epilogue: where the model of getGemmSharedMemoryLayout (GemmModel.cpp)
   stages it (and the kernel's dynamic shared memory is the model's), the
   column pairs each thread writes to the shared result tile, in order,
   are the model's for its registers in order (1., with the warpgroup
   origin) at ((row * (tile_n + 8) + col) * 4) from the tiles' start, and
   each thread's read-back and stores are the row runs of 4 f32 of run
   index tid + step * threads; where it is direct, the output elements each
   thread stores, in order, are the model's for its registers in order
   (with the block tile origin). Either way each output element is stored
   once, with its A @ B value. Every element each cp.async stages lands at
   the model's offset (2.) from a 1024-byte aligned stage base, stage
   kt % stages; and every wgmma's descriptors (start address, leading and
   stride byte offsets, swizzle mode) are the model's for its k tile.
Run: python3 test/Tools/check_wgmma_layout.py [KGRAPH_OPT] (exits 1 on a
mismatch).
"""
import os
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

FAIL = []
EB = 2  # bytes of f16/bf16


def check(cond, msg):
    if not cond and len(FAIL) < 20:
        FAIL.append(msg)
    return cond


# ---- accumulators ----
def isa_d(t, i):
    w, l = t // 32, t % 32
    return 16 * w + l // 4 + 8 * ((i // 2) % 2), 8 * (i // 4) + 2 * (l % 4) + i % 2


def emitter_d(t, slab, n_inst, inst_n, i_struct, reg, wg_row0, wg_col0):
    """Row/col in the block tile as Wgmma.cpp computes them for register
    `reg` of accumulator struct (slab, n) of thread t."""
    warp, lane = t // 32, t % 32
    warp_row = wg_row0 + (warp % 4) * 16  # warpOrigin
    warp_col = wg_col0
    j, h, e = reg // 4, (reg // 2) % 2, reg % 2  # finish: vector j, (h, e)
    per_inst = inst_n // 8
    i = (slab * n_inst + i_struct) * per_inst + j  # epilogue accumulator index
    s, n, jj = i // (n_inst * per_inst), (i // per_inst) % n_inst, i % per_inst
    row = lane // 4 + 64 * s + 8 * h
    col = 2 * (lane % 4) + n * inst_n + 8 * jj + e
    return warp_row + row, warp_col + col


def check_accumulators(slabs, n_inst, inst_n):
    seen = {}
    for t in range(128):
        for s in range(slabs):
            for n in range(n_inst):
                for reg in range(inst_n // 2):
                    r, c = emitter_d(t, s, n_inst, inst_n, n, reg, 0, 0)
                    ir, ic = isa_d(t, reg)
                    check((r, c) == (64 * s + ir, n * inst_n + ic),
                          f"acc slabs={slabs} N={inst_n}: t{t} reg{reg} -> {(r, c)}")
                    seen[(r, c)] = seen.get((r, c), 0) + 1
    total = 64 * slabs * n_inst * inst_n
    check(len(seen) == total and all(v == 1 for v in seen.values()),
          f"acc slabs={slabs} N={inst_n}: coverage {len(seen)} of {total}")


# ---- operands ----
def swizzle128(addr):
    return addr ^ (((addr >> 7) & 7) << 4)


def stored_address(rows, row, col):
    """Byte offset of stored element (row, col) of a tile: tileIndices."""
    block, in_block = col // 64, col % 64
    chunk = (in_block // 8) ^ (row % 8)
    vrow = block * rows + row
    vcol = chunk * 8 + in_block % 8
    return (vrow * 64 + vcol) * EB


def descriptor(k_major, rows, mn0, kk):
    """(start, lbo, sbo) in bytes of the descriptor Wgmma.cpp builds."""
    if k_major:
        return (kk // 64) * rows * 128 + mn0 * 128 + (kk % 64) * EB, 16, 1024
    return (mn0 // 64) * rows * 128 + kk * 128, rows * 128, 1024


def hw_address(k_major, desc, mn, k):
    """Where the tensor core reads element (mn, k) of the instruction's
    operand (mn relative to the descriptor's first row/column)."""
    start, lbo, sbo = desc
    T = 8
    if k_major:
        off = (mn % 8) * 8 * T + (mn // 8) * (sbo // EB) + (k % T) + (k // T) * T
    else:
        off = (mn % 64) + (mn // 64) * (lbo // EB) + (k % 8) * 8 * T + (k // 8) * (sbo // EB)
    return swizzle128(start + off * EB)


def check_operand(name, k_major, mn_extent, tile_k, inst_extent, origins):
    """Operand tile of mn_extent (M or N) x tile_k; instructions read
    inst_extent rows/columns from each origin."""
    rows = mn_extent if k_major else tile_k
    for kk in range(0, tile_k, 16):
        for mn0 in origins:
            desc = descriptor(k_major, rows, mn0, kk)
            for mn in range(inst_extent):
                for k in range(16):
                    gm, gk = mn0 + mn, kk + k
                    want = stored_address(rows, gm, gk) if k_major else \
                        stored_address(rows, gk, gm)
                    got = hw_address(k_major, desc, mn, k)
                    if not check(got == want,
                                 f"{name}: kk={kk} mn0={mn0} ({mn},{k}) read {got} stored {want}"):
                        return


# ---- the compiled kernels ----
def warpgroup_origin(g, tm, tn, warps_m, warps_n):
    """Row and column of warpgroup g's tile in the block tile (warpOrigin:
    warpgroups form a (warps_m / 4) x warps_n grid, row-major)."""
    wg_m, wg_n = tm // (warps_m // 4), tn // warps_n
    return (g // warps_n) * wg_m, (g % warps_n) * wg_n


def stored_shape(is_a, ta, tb, tm, tn, tk):
    """(rows, cols) of an operand's stored tile: cols contiguous in global
    memory (A [m][k] or A^T [k][m]; B [k][n] or B^T [n][k])."""
    if is_a:
        return (tk, tm) if ta else (tm, tk)
    return (tn, tk) if tb else (tk, tn)


def decode(desc):
    """(start address, leading and stride byte offsets, swizzle mode, base
    offset) of a matrix descriptor."""
    d = int(desc)
    return ((d & 0x3FFF) << 4, ((d >> 16) & 0x3FFF) << 4, ((d >> 32) & 0x3FFF) << 4,
            (d >> 62) & 3, (d >> 49) & 7)


#: The staged epilogue's row padding (elements) and read-back run (16
#: bytes of f32), and the 48 KiB a staged block may grow to.
STAGE_PAD, RUN, STAGED_LIMIT = 8, 4, 48 * 1024


def epilogue_layout(tm, tn, tk, stages):
    """(result tile pitch in elements, 0 where the epilogue stores from
    registers; the kernel's dynamic shared memory) of an f16 -> f32 wgmma
    GEMM with cp.async copies: getGemmSharedMemoryLayout's rule, staged
    where the [tm][tn + 8] f32 tile fits over the operand tiles or the
    block stays within 48 KiB."""
    slack = 1024   # the tiles' start aligned to 1024 bytes at run time
    operands = stages * (tm * tk + tk * tn) * EB
    staged = tm * (tn + STAGE_PAD) * 4
    if tn % RUN == 0 and (staged <= operands or slack + staged <= STAGED_LIMIT):
        return tn + STAGE_PAD, slack + max(operands, staged)
    return 0, slack + operands


def thread_order(acc):
    """ACCESS rows sorted by (block, thread, program order, element)."""
    return acc[np.lexsort((acc["elem"], acc["seq"], acc["thread"], acc["block"]))]


def first_diff(name, what, got, model):
    """Reports the first difference of two lists of tuples."""
    if got == model:
        return True
    i = next((i for i, (x, y) in enumerate(zip(got, model)) if x != y), min(len(got), len(model)))
    return check(False, f"{name}: {len(got)} {what}, the model {len(model)}; the kernel's "
                 f"#{i}: {got[i] if i < len(got) else None}, the model's: "
                 f"{model[i] if i < len(model) else None}")


#: (tile_m, tile_n, tile_k, warps_m, warps_n, stages, instruction N,
#: transpose_a, transpose_b, M, N, K): full tiles, K over more tiles than
#: stages where the stage reuse shows.
COMPILED = [
    (128, 64, 64, 8, 1, 3, 64, False, False, 128, 128, 256),   # 2 warpgroups along M
    (128, 128, 64, 4, 1, 2, 128, True, True, 128, 128, 192),   # 2 slabs, A^T, B^T; direct
    (64, 16, 128, 4, 1, 2, 8, False, True, 64, 32, 256),      # N = 8, 2 instructions
    (64, 128, 64, 4, 2, 3, 64, True, False, 64, 128, 192),     # 2 warpgroups along N
    (128, 128, 64, 8, 2, 2, 64, False, True, 128, 256, 128),   # 2 x 2 warpgroups; direct
    (64, 64, 16, 4, 1, 3, 64, True, False, 64, 64, 64),        # MN-major, tile_k 16; grown
    (128, 256, 64, 4, 1, 2, 256, False, False, 128, 256, 64),  # N = 256, 2 slabs; direct
]
# Staged epilogues except where marked direct (the result tile outgrows
# both the operand tiles and 48 KiB); grown: staged in more shared memory
# than the operand tiles take.


def gemm_graph(cfg):
    tm, tn, tk, wm, wn, stages, inst_n, ta, tb, M, N, K = cfg
    sa = [K, M] if ta else [M, K]
    sb = [N, K] if tb else [K, N]

    def t(s, dt):
        return f"tensor<{s[0]}x{s[1]}x{dt}>"
    flags = [f for f, on in (("transpose_a", ta), ("transpose_b", tb)) if on]
    attr = (" {" + ", ".join(flags) + "}") if flags else ""
    config = (f"#kgraph.matmul_config<tile_m = {tm}, tile_n = {tn}, tile_k = {tk}, "
              f"warps_m = {wm}, warps_n = {wn}, stages = {stages}, instruction = wgmma, "
              f"instruction_shape = [64, {inst_n}, 16], load_width = 8, smem_padding = 0>")
    a, b, o = t(sa, "f16"), t(sb, "f16"), t([M, N], "f32")
    return (f"func.func @main(%a: {a}, %b: {b}) -> {o} {{\n"
            f"  %0 = kgraph.fused (%a, %b) {{kgraph.config = {config}}} : ({a}, {b}) -> {o} {{\n"
            f"  ^bb0(%x: {a}, %y: {b}):\n"
            f"    %m = kgraph.matmul %x, %y{attr} : {a}, {b} -> {o}\n"
            f"    kgraph.yield %m : {o}\n  }}\n  return %0 : {o}\n}}\n")


def check_epilogue(name, cfg, rec, origin, tiles_start):
    """The traced epilogue against the model: `origin` per block its tile's
    (row, col) in C, `tiles_start` its tiles' shared-window address (A's
    first stage)."""
    from kinterp.memory import SHARED_DYNAMIC_BASE
    tm, tn, tk, wm, wn, stages, inst_n, ta, tb, M, N, K = cfg
    slabs = tm // (wm // 4) // 64
    n_inst = tn // wn // inst_n
    threads = wm * wn * 32
    pitch, _ = epilogue_layout(tm, tn, tk, stages)
    # Each thread's accumulator elements (block tile coordinates) in
    # register order: accumulator vector i = (slab, instruction, j) after
    # vector i - 1, registers 4j .. 4j + 3 in order.
    regs = {}
    for t in range(threads):
        g0, g1 = warpgroup_origin(t // 128, tm, tn, wm, wn)
        regs[t] = [emitter_d(t % 128, sl, n_inst, inst_n, n, reg, g0, g1)
                   for sl in range(slabs) for n in range(n_inst) for reg in range(inst_n // 2)]
    st = thread_order(rec.accesses("store", "output 0"))
    rows, cols = np.divmod(st["elem"], N)
    got = list(zip(st["block"].tolist(), st["thread"].tolist(), rows.tolist(), cols.tolist()))
    # Every output element stored once, with its A @ B value.
    check(len(np.unique(st["elem"])) == len(st) == M * N and
          (st["value"] == 512 * rows + cols).all(),
          f"{name}: {len(st)} output elements stored ({len(np.unique(st['elem']))} distinct), "
          f"the model {M * N}, each once with its A @ B value")
    sh_st = thread_order(rec.accesses("store", "dynamic shared memory"))
    sh_ld = thread_order(rec.accesses("load", "dynamic shared memory"))
    if not pitch:
        # Direct: each thread's output stores are its registers' elements.
        check(len(sh_st) == len(sh_ld) == 0,
              f"{name}: {len(sh_st)} shared stores, {len(sh_ld)} loads; the model's epilogue "
              f"stores from registers")
        model = [(blk, t, r0 + r, c0 + c) for blk, (r0, c0) in origin.items()
                 for t in range(threads) for r, c in regs[t]]
        first_diff(name, "output stores (block, thread, row, col)", got, model)
        return
    # Staged: the registers' column pairs to [tm][pitch] f32 at the tiles'
    # start, then runs of RUN f32: run tid + step * threads is row
    # idx / (tn / RUN), columns (idx % (tn / RUN)) * RUN on.
    def tile_coords(acc):
        rel = SHARED_DYNAMIC_BASE + acc["elem"] * 4 - np.array([tiles_start[b] for b in
                                                         acc["block"].tolist()], np.int64)
        r, c = np.divmod(rel // 4, pitch)
        return list(zip(acc["block"].tolist(), acc["thread"].tolist(), r.tolist(), c.tolist()))
    check((sh_st["width"] == 2).all() and (sh_ld["width"] == RUN).all(),
          f"{name}: shared stores of widths {sorted(set(sh_st['width'].tolist()))}, loads of "
          f"{sorted(set(sh_ld['width'].tolist()))}; the model pairs, runs of {RUN}")
    model = [(blk, t, r, c) for blk in origin for t in range(threads) for r, c in regs[t]]
    first_diff(name, "staging stores (block, thread, tile row, col)", tile_coords(sh_st), model)
    vals = [512 * (origin[b][0] + r) + origin[b][1] + c for b, _, r, c in model]
    check(len(sh_st) == len(model) and (sh_st["value"] == vals).all(),
          f"{name}: staged values not A @ B")
    per_row, total = tn // RUN, tm * tn // RUN
    runs = {t: [(i // per_row, i % per_row * RUN) for i in range(t, total, threads)]
            for t in range(threads)}
    model = [(blk, t, r, c + e) for blk in origin for t in range(threads)
             for r, c in runs[t] for e in range(RUN)]
    first_diff(name, "read-back loads (block, thread, tile row, col)", tile_coords(sh_ld), model)
    check((st["width"] == RUN).all(),
          f"{name}: output stores of widths {sorted(set(st['width'].tolist()))}, the model {RUN}")
    model = [(blk, t, origin[blk][0] + r, origin[blk][1] + c + e) for blk in origin
             for t in range(threads) for r, c in runs[t] for e in range(RUN)]
    first_diff(name, "output stores (block, thread, row, col)", got, model)


def check_compiled(opt, cfg):
    """Compiles and runs `cfg`, comparing the traced kernel with the model
    (failures go to FAIL)."""
    from check_kernels_interp import compile_graph
    from kinterp.plan import Module, run_plan
    from kinterp.trace import tracing
    tm, tn, tk, wm, wn, stages, inst_n, ta, tb, M, N, K = cfg
    name = f"compiled {tm}x{tn}x{tk} warps {wm}x{wn} N={inst_n} ta={ta} tb={tb}"
    slabs = tm // (wm // 4) // 64
    n_inst = tn // wn // inst_n
    threads = wm * wn * 32
    # D[r][c] = 512 r + c, exact in f16 operands and f32 accumulators.
    A = np.zeros((M, K))
    A[:, 0], A[:, 1] = np.arange(M), 1
    B = np.zeros((K, N))
    B[0, :], B[1, :] = 512, np.arange(N)
    ins = {0: (A.T if ta else A).astype(np.float16), 1: (B.T if tb else B).astype(np.float16)}
    fplan, ir = compile_graph(opt, gemm_graph(cfg), "sm_90a", False)
    ks = fplan["kernels"]
    if not check(len(ks) == 1 and ks[0]["block"] == [threads, 1, 1],
                 f"{name}: kernels {[(k['grid'], k['block']) for k in ks]}, the model one of "
                 f"{threads} threads"):
        return
    pitch, smem = epilogue_layout(tm, tn, tk, stages)
    check(ks[0]["shared_bytes"] == smem,
          f"{name}: {ks[0]['shared_bytes']} bytes of shared memory, the model {smem} "
          f"({'staged' if pitch else 'direct'} epilogue)")
    with tracing() as rec:
        outs, unwritten = run_plan(fplan, Module(ir), ins)
    want = 512 * np.arange(M)[:, None] + np.arange(N)[None, :]
    if not check(not unwritten[0].any() and (outs[0] == want).all(),
                 f"{name}: the output is not A @ B"):
        return
    # 1. Each block's tile origin from its output stores.
    st = rec.accesses("store", "output 0")
    rows, cols = np.divmod(st["elem"], N)
    origin = {}
    for blk in np.unique(st["block"]):
        sel = st["block"] == blk
        origin[int(blk)] = (int(rows[sel].min()) // tm * tm, int(cols[sel].min()) // tn * tn)
    check(sorted(origin.values()) == [(r, c) for r in range(0, M, tm) for c in range(0, N, tn)],
          f"{name}: block tile origins {sorted(origin.values())}")
    # 2. cp.async staging: element (row, col) of k tile kt of an operand
    # lands at base(kt) + stored_address(row, col).
    staged = {True: [], False: []}   # per operand: rows (block, kt, base)
    for e in rec.events_of("cp.async"):
        f = e.fields
        is_a = "input 0" in f["src"].name
        check(bool(f["valid"].all()), f"{name}: a cp.async of a full tile zero-fills")
        g_el = f["src_bytes"][:, ::2] // 2
        dst = f["dst"].addr + f["dst_bytes"][:, ::2]
        width = (M if ta else K) if is_a else (K if tb else N)
        gr, gc = np.divmod(g_el, width)
        r0 = np.array([origin[b][0] for b in e.block.tolist()])[:, None]
        c0 = np.array([origin[b][1] for b in e.block.tolist()])[:, None]
        if is_a:
            row, col, kt = ((gr % tk, gc - r0, gr // tk) if ta else (gr - r0, gc % tk, gc // tk))
        else:
            row, col, kt = ((gr - c0, gc % tk, gc // tk) if tb else (gr % tk, gc - c0, gr // tk))
        srows, scols = stored_shape(is_a, ta, tb, tm, tn, tk)
        if not check(((row >= 0) & (row < srows) & (col >= 0) & (col < scols)).all(),
                     f"{name}: {'A' if is_a else 'B'} elements staged outside their block's "
                     f"tile"):
            return
        base = dst - stored_address(srows, row, col)
        staged[is_a].append(np.stack(np.broadcast_arrays(e.block[:, None], kt, base), -1)
                            .reshape(-1, 3))
    bases = {}
    for is_a in (True, False):
        srows, scols = stored_shape(is_a, ta, tb, tm, tn, tk)
        rows_ = np.concatenate(staged[is_a]) if staged[is_a] else np.zeros((0, 3), np.int64)
        for blk in origin:
            b = []
            for kt in range(K // tk):
                got_b = rows_[(rows_[:, 0] == blk) & (rows_[:, 1] == kt), 2]
                u = np.unique(got_b)
                if not check(len(got_b) == srows * scols and len(u) == 1,
                             f"{name}: block {blk} k tile {kt}: {len(got_b)} {'A' if is_a else 'B'}"
                             f" elements staged (the tile has {srows * scols}), at "
                             f"{len(u)} offsets from the model's layout"):
                    return
                b.append(int(u[0]))
                bases[(blk, is_a, kt)] = b[-1]
            if not check(b[0] % 1024 == 0 and
                         b == [b[0] + (kt % stages) * srows * scols * EB for kt in range(K // tk)],
                         f"{name}: block {blk} {'A' if is_a else 'B'} stage bases {b}"):
                return
    check_epilogue(name, cfg, rec, origin, {blk: bases[(blk, True, 0)] for blk in origin})
    # 3. Descriptors: each warpgroup's wgmmas, k tile after k tile, are the
    # model's (slab, instruction, k step) pairs.
    issued = {}
    for e in rec.events_of("wgmma"):
        for blk, t0, da, db in zip(e.block.tolist(), e.thread.tolist(), e.fields["desc_a"],
                                   e.fields["desc_b"]):
            issued.setdefault((blk, t0 // 128), []).append((decode(da), decode(db)))
    rows_a, rows_b = stored_shape(True, ta, tb, tm, tn, tk)[0], stored_shape(False, ta, tb, tm, tn, tk)[0]
    per_tile = tk // 16 * slabs * n_inst
    for blk in origin:
        for g in range(threads // 128):
            seq = issued.get((blk, g), [])
            check(len(seq) == per_tile * (K // tk),
                  f"{name}: block {blk} warpgroup {g}: {len(seq)} wgmmas, the model "
                  f"{per_tile * (K // tk)}")
            g0, g1 = warpgroup_origin(g, tm, tn, wm, wn)
            for kt in range(K // tk):
                model = []
                for kk in range(0, tk, 16):
                    for sl in range(slabs):
                        for n in range(n_inst):
                            da = descriptor(not ta, rows_a, g0 + 64 * sl, kk)
                            db = descriptor(tb, rows_b, g1 + n * inst_n, kk)
                            model.append((((bases[(blk, True, kt)] + da[0]) & 0x3FFFF,
                                           da[1], da[2], 1, 0),
                                          ((bases[(blk, False, kt)] + db[0]) & 0x3FFFF,
                                           db[1], db[2], 1, 0)))
                got = sorted(seq[kt * per_tile:(kt + 1) * per_tile])
                if not check(got == sorted(model),
                             f"{name}: block {blk} warpgroup {g} k tile {kt}: descriptors "
                             f"(start, lbo, sbo, swizzle, base offset) of A, B "
                             f"{sorted(set(got) - set(model))[:2]} not the model's "
                             f"{sorted(set(model) - set(got))[:2]}"):
                    return


def main(argv):
    opt = argv[1] if len(argv) > 1 else None
    for slabs in (1, 2):
        for inst_n in (8, 64, 128, 256):
            check_accumulators(slabs, 1 if inst_n > 64 else 2, inst_n)
    # A: slabs of 64 rows; B: N-wide instructions.
    for tile_k in (64, 128):
        check_operand(f"A K-major tk={tile_k}", True, 128, tile_k, 64, [0, 64])
        check_operand(f"B^T K-major tk={tile_k}", True, 256, tile_k, 128, [0, 128])
        check_operand(f"B^T K-major N=24 tk={tile_k}", True, 48, tile_k, 24, [0, 24])
    for tile_k in (16, 64):
        check_operand(f"A^T M-major tk={tile_k}", False, 256, tile_k, 64, [0, 64, 128, 192])
        check_operand(f"B N-major tk={tile_k}", False, 256, tile_k, 256, [0])
        check_operand(f"B N-major N=64 tk={tile_k}", False, 128, tile_k, 64, [0, 64])
    if opt:
        for cfg in COMPILED:
            check_compiled(opt, cfg)
    if FAIL:
        print("\n".join(FAIL))
        return 1
    print("wgmma accumulator and operand layouts: OK")
    if opt:
        staged = sum(bool(epilogue_layout(*c[:3], c[5])[0]) for c in COMPILED)
        print(f"{len(COMPILED)} compiled wgmma kernels ({staged} staged epilogues, "
              f"{len(COMPILED) - staged} direct): epilogue, cp.async staging and descriptors "
              f"as the model's")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
