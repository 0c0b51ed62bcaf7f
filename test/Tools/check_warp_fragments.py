#!/usr/bin/env python3
"""CPU self-check of the fragment index maps in
lib/Conversion/KGraphToGPU/WarpMma.cpp against the PTX ISA tables.

For mma.sync m16n8k8 .tf32 and m16n8k32 .s8 (class MmaSyncWord) it models
what each lane's registers hold when loaded the way WarpMma.cpp loads them
(ldmatrix without .trans where the stored rows run along K, scalar gathers
otherwise) and compares every element with the ISA's per-element formulas
("Matrix Fragments for mma.m16n8k8", Figures 72/75; "... for mma.m16n8k32",
Figures 88/90). For the SIMT kernel (class FmaSimt) it checks that the
thread tiles cover every warp-tile element exactly once, that the A/B slices
a thread reads are the rows/columns of its accumulators, and that the A
slice loads along K (A not transposed, 16-byte padded rows) touch each bank
through one word at most. Run: python3
test/Tools/check_warp_fragments.py (exits 1 on a mismatch).
"""
import itertools
import sys

FAIL = []


def check(cond, msg):
    if not cond:
        FAIL.append(msg)


# ---- PTX ISA tables: element index i of each operand -> (row, col) ----
def isa_a(lane, i, kind):
    g, t = lane >> 2, lane % 4
    if kind == "tf32":  # a0..a3
        row = g if i in (0, 2) else g + 8
        col = t if i in (0, 1) else t + 4
    else:  # s8 a0..a15
        row = g if (0 <= i < 4 or 8 <= i < 12) else g + 8
        col = t * 4 + (i & 3) + (16 if i >= 8 else 0)
    return row, col


def isa_b(lane, i, kind):  # (k, n)
    g, t = lane >> 2, lane % 4
    if kind == "tf32":
        return (t if i == 0 else t + 4), g
    return t * 4 + (i & 3) + (16 if i >= 4 else 0), g


def isa_c(lane, i):
    g, t = lane >> 2, lane % 4
    return (g if i < 2 else g + 8), t * 2 + (i & 1)


# ---- ldmatrix (b16, no .trans) as a map of 32-bit words ----
def ldmatrix(addr_of_lane, num, lane):
    """Register j of `lane`: word lane % 4 of row lane / 4 of matrix j,
    matrix j's rows addressed by lanes 8j..8j+7. addr_of_lane(L) -> (row,
    first column in elements); returns [(row, word_in_row)] per register."""
    regs = []
    for j in range(num):
        row, col = addr_of_lane(8 * j + lane // 4)
        regs.append((row, col, lane % 4))
    return regs


def mma_word(kind):
    per_word = 1 if kind == "tf32" else 4
    for lane in range(32):
        g, t, l8, q = lane // 4, lane % 4, lane % 8, lane // 8
        # A, ldmatrix path (A stored [m][k], mRow = 0, kOffset = 0).
        def a_addr(L):
            qq, ll = L // 8, L % 8
            return ll + 8 * (qq % 2), 4 * (qq // 2) * per_word
        for r, (row, col, w) in enumerate(ldmatrix(a_addr, 4, lane)):
            for e in range(per_word):
                got = (row, col + w * per_word + e)
                check(got == isa_a(lane, r * per_word + e, kind),
                      f"{kind} A ldmatrix lane {lane} reg {r} elem {e}: {got}")
        # A, scalar gather: register r = row g + 8 (r % 2), k-word t + 4 (r/2).
        for r in range(4):
            for e in range(per_word):
                got = (g + 8 * (r % 2), t * per_word + 4 * (r // 2) * per_word + e)
                check(got == isa_a(lane, r * per_word + e, kind),
                      f"{kind} A gather lane {lane} reg {r} elem {e}: {got}")
        # B, ldmatrix path (B stored [n][k]); the pair layout: matrix q is
        # n-tile q // 2, k-words 4 (q % 2); registers {0,1} -> tile 0.
        def b_addr(L):
            qq, ll = L // 8, L % 8
            return ll + 8 * (qq // 2), 4 * (qq % 2) * per_word
        regs = ldmatrix(b_addr, 4, lane)
        for tile in range(2):
            for r in range(2):
                n, col, w = regs[2 * tile + r]
                for e in range(per_word):
                    k = col + w * per_word + e
                    want_k, want_n = isa_b(lane, r * per_word + e, kind)
                    check((k, n) == (want_k, want_n + 8 * tile),
                          f"{kind} B ldmatrix lane {lane} tile {tile} reg {r}")
        # B, scalar gather: register r = column g, k-word t + 4 r.
        for r in range(2):
            for e in range(per_word):
                got = (t * per_word + 4 * r * per_word + e, g)
                check(got == isa_b(lane, r * per_word + e, kind),
                      f"{kind} B gather lane {lane} reg {r}")
        # C: element (h, e) of vector<2x2> = c[2h + e].
        for h, e in itertools.product(range(2), range(2)):
            check((g + 8 * h, 2 * t + e) == isa_c(lane, 2 * h + e),
                  f"C lane {lane} ({h}, {e})")


def fma_simt(wm, wn, trans_a, trans_b, row_a, row_b):
    lanes_m, lanes_n = (4, 8) if wn >= wm else (8, 4)
    tm, tn = wm // lanes_m, wn // lanes_n
    vm = 1 if not trans_a else min(4, tm)
    vn = 1 if trans_b else min(4, tn)

    def pos(l, lanes, v, idx):
        return (idx // v * lanes + l) * v + idx % v

    seen = {}
    for lane in range(32):
        lm, ln = lane // lanes_n, lane % lanes_n
        rows = [pos(lm, lanes_m, vm, h) for h in range(tm)]
        cols = [pos(ln, lanes_n, vn, c) for c in range(tn)]
        for r, c in itertools.product(rows, cols):
            check((r, c) not in seen, f"fma {wm}x{wn}: ({r},{c}) twice")
            seen[(r, c)] = lane
        # Epilogue: accumulator j row h element e.
        for j in range(tn // vn):
            for h in range(tm):
                for e in range(vn):
                    c = pos(ln, lanes_n, vn, j * vn) + e
                    check(c == cols[j * vn + e] and pos(lm, lanes_m, vm, h) == rows[h],
                          "fma epilogue coordinates")
    check(len(seen) == wm * wn, f"fma {wm}x{wn}: covers {len(seen)}")

    # A rows along K: the 4-word vector loads at k = 0 of one slice index;
    # distinct words in one bank would be a conflict.
    def conflicts(addrs_words):
        banks = {}
        for a in set(addrs_words):
            banks.setdefault(a % 32, set()).add(a)
        return max(len(s) for s in banks.values())
    worst = 1
    if trans_a:
        return worst
    for idx in range(tm):
        words = []
        for lane in range(32):
            m = pos(lane // lanes_n, lanes_m, vm, idx)
            words += [m * row_a + x for x in range(4)]
        worst = max(worst, conflicts(words))
    return worst


def main():
    for kind in ("tf32", "s8"):
        mma_word(kind)
    for wm, wn in [(32, 32), (64, 64), (32, 64), (64, 32), (16, 8)]:
        for ta, tb in itertools.product([False, True], repeat=2):
            w = fma_simt(wm, wn, ta, tb, row_a=20, row_b=68)
            check(w == 1, f"fma {wm}x{wn} ta={ta}: {w}-way A conflicts")
    if FAIL:
        print("\n".join(FAIL[:20]))
        print(f"{len(FAIL)} mismatches")
        return 1
    print("fragment maps match the PTX ISA tables; fma tiles cover the warp "
          "tile once, A slice loads conflict-free")
    return 0


if __name__ == "__main__":
    sys.exit(main())
