#!/usr/bin/env python3
"""CPU self-check of the GEMM epilogue's input addressing
(MatmulKernelBuilder::loadEpilogueInput in
lib/Conversion/KGraphToGPU/MatmulEmitter.cpp).

An epilogue input of shape S broadcasts (numpy, right-aligned) to the GEMM
result; the kernel knows each accumulator element as GEMM (batch, row, col)
and reads the input at an index built from coordinate groups: consecutive
result dimensions with one linear index (matmul: (batch?), row, col; nhwc
conv2d: (n, oh, ow) = row, channel = batch * F/groups + col; nchw conv2d:
n = row / (OH*OW), (oh, ow) = row % (OH*OW), channel). A group adds nothing
where S is 1 along all of it, linear * innermost stride where S equals the
result along all of it, and per-dimension coordinates otherwise. This
models that computation and compares it, for every element of small
problems over many broadcast shapes, with numpy's own broadcasting; it also
checks the condition under which two consecutive columns are read with one
aligned vector load. Run: python3 test/Tools/check_epilogue_index.py (exits 1
on a mismatch).
"""
import itertools
import sys

import numpy as np


def strides_of(shape):
    s = [1] * len(shape)
    for d in range(len(shape) - 2, -1, -1):
        s[d] = s[d + 1] * shape[d + 1]
    return s


def offset(group, inp, out, strides):
    first, count, linear = group
    dims = range(first, first + count)
    if all(inp[d] == 1 for d in dims):
        return 0
    if all(inp[d] == out[d] for d in dims):
        return linear * strides[first + count - 1]
    total, inner = 0, 1
    for d in reversed(dims):
        if inp[d] != 1:
            coord = linear // inner
            if d != first:
                coord %= out[d]
            total += coord * strides[d]
        inner *= out[d]
    return total


def groups_of(kind, out, batch, row, col, fpg):
    """The coordinate groups of GEMM element (batch, row, col)."""
    if kind == "matmul":
        rank = len(out)
        g = [(0, 1, batch)] if rank == 3 else []
        return g + [(rank - 2, 1, row), (rank - 1, 1, col)]
    channel = batch * fpg + col
    if kind == "nhwc":
        return [(0, 3, row), (3, 1, channel)]
    pixels = out[2] * out[3]
    return [(0, 1, row // pixels), (2, 2, row % pixels), (1, 1, channel)]


def logical(kind, out, batch, row, col, fpg):
    """The result coordinates of GEMM element (batch, row, col)."""
    if kind == "matmul":
        return ((batch,) if len(out) == 3 else ()) + (row, col)
    c = batch * fpg + col
    if kind == "nhwc":
        n, p = divmod(row, out[1] * out[2])
        return (n, p // out[2], p % out[2], c)
    n, p = divmod(row, out[2] * out[3])
    return (n, c, p // out[3], p % out[3])


def problems():
    yield "matmul", (5, 6), 1
    yield "matmul", (3, 4, 6), 1
    for groups in (1, 2):
        yield "nhwc", (2, 3, 5, 4), groups
        yield "nchw", (2, 4, 3, 5), groups


def check_problem(kind, out, groups, fails):
    rank = len(out)
    if kind == "matmul":
        gemms = out[0] if rank == 3 else 1
        m, n = out[-2], out[-1]
        fpg = 0
    else:
        f = out[3] if kind == "nhwc" else out[1]
        fpg = f // groups
        gemms = groups
        m = out[0] * (out[1] * out[2] if kind == "nhwc" else out[2] * out[3])
        n = fpg
    # Every shape that broadcasts to `out`: each dimension 1 or full, rank
    # from 0 to the result's.
    for r in range(rank + 1):
        for mask in itertools.product((0, 1), repeat=r):
            inp_shape = tuple(out[rank - r + i] if keep else 1
                              for i, keep in enumerate(mask))
            data = np.arange(int(np.prod(inp_shape)) if r else 1)
            data = data.reshape(inp_shape)
            full = np.broadcast_to(data, out)
            inp = (1,) * (rank - r) + inp_shape
            st = strides_of(inp)
            for b in range(gemms):
                for row in range(m):
                    for col in range(n):
                        idx = sum(offset(g, inp, out, st) for g in
                                  groups_of(kind, out, b, row, col, fpg))
                        want = full[logical(kind, out, b, row, col, fpg)]
                        flat = data.reshape(-1)
                        if not 0 <= idx < flat.size or flat[idx] != want:
                            fails.append(f"{kind} out {out} groups {groups} "
                                         f"input {inp_shape}: ({b}, {row}, "
                                         f"{col}) reads {idx}")
                            return
                # The vector-load condition: columns col, col + 1 (col
                # even) are consecutive input elements.
                cdim = rank - 1 if kind != "nchw" else 1
                if (kind != "nchw" and inp[cdim] != 1 and inp[cdim] % 2 == 0
                        and (kind == "matmul" or fpg % 2 == 0)):
                    for row in range(m):
                        for col in range(0, n - 1, 2):
                            i0, i1 = (sum(offset(g, inp, out, st) for g in
                                          groups_of(kind, out, b, row, c, fpg))
                                      for c in (col, col + 1))
                            if i1 != i0 + 1 or i0 % 2:
                                fails.append(f"{kind} {out} input {inp_shape}:"
                                             f" columns {col}, {col + 1} are"
                                             f" not an aligned pair")
                                return


def main():
    fails = []
    for kind, out, groups in problems():
        check_problem(kind, out, groups, fails)
    for f in fails:
        print("MISMATCH", f)
    print(f"{len(fails)} mismatches")
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main())
