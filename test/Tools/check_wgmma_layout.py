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
Run: python3 test/Tools/check_wgmma_layout.py (exits 1 on a mismatch).
"""
import sys

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


def main():
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
    if FAIL:
        print("\n".join(FAIL))
        return 1
    print("wgmma accumulator and operand layouts: OK")
    return 0


if __name__ == "__main__":
    sys.exit(main())
