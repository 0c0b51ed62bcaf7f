#!/usr/bin/env python3
"""CPU self-check of the GEMM epilogue's input addressing
(MatmulKernelBuilder::loadEpilogueInput in
lib/Conversion/KGraphToGPU/MatmulEpilogue.cpp).

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
checks the condition under which a run of 2 or 4 consecutive columns is
read with one aligned vector load (AccessMap::isContiguousAlong).

The epilogue evaluates runs of consecutive columns of one row: staged
through shared memory (getGemmSharedMemoryLayout in GemmModel.cpp), runs
of 16 bytes of the f32 result, 4 columns; stored from registers (an nchw
conv2d, or a result tile too large for the block's shared memory), the
accumulator fragments' column pairs. With a kgraph-opt, every broadcast
shape of each problem is also compiled as a GEMM (zero operands) plus that
input (arange values) and run in the kernel interpreter
(test/Tools/kinterp): the value of every result element is then the index
the kernel read, which must be the model's; on problems whose block tiles
are all full (pinned configs, mma.sync and wgmma) the kernel's dynamic
shared memory must be the layout model's, and the traced loads of each
input one aligned vector load of the model's run width per run exactly
where the model's condition allows one, single elements otherwise. Run:
python3 test/Tools/check_epilogue_index.py [KGRAPH_OPT] (exits 1 on a
mismatch).
"""
import itertools
import os
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))


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


def input_shapes(out):
    """Every shape that broadcasts to `out`: each dimension 1 or full, rank
    from 0 to the result's."""
    rank = len(out)
    for r in range(rank + 1):
        for mask in itertools.product((0, 1), repeat=r):
            yield tuple(out[rank - r + i] if keep else 1 for i, keep in enumerate(mask))


def gemm_dims(kind, out, groups):
    """(GEMMs, M, N, filters per group) of a problem."""
    if kind == "matmul":
        return (out[0] if len(out) == 3 else 1), out[-2], out[-1], 0
    f = out[3] if kind == "nhwc" else out[1]
    m = out[0] * (out[1] * out[2] if kind == "nhwc" else out[2] * out[3])
    return groups, m, f // groups, f // groups


def run_loads(kind, inp, out, fpg, width):
    """Whether a run of `width` columns (the first a multiple of `width`)
    of input `inp` (padded to the result's rank) is read with one aligned
    vector load (loadEpilogueInput): the channels are the innermost dim,
    and the input is contiguous along them (AccessMap::isContiguousAlong:
    stride 1 there, the extent and every other non-broadcast stride
    multiples of `width`), with runs inside a channel group."""
    if kind == "nchw":
        return False
    cdim, st = len(inp) - 1, strides_of(inp)
    return (inp[cdim] != 1 and out[cdim] % width == 0
            and all(st[d] % width == 0 for d in range(cdim) if inp[d] != 1 and out[d] != 1)
            and (kind == "matmul" or fpg % width == 0))


def check_problem(kind, out, groups, fails):
    rank = len(out)
    gemms, m, n, fpg = gemm_dims(kind, out, groups)
    for inp_shape in input_shapes(out):
            r = len(inp_shape)
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
                # The vector-load condition: each run of `w` columns is
                # `w` consecutive input elements from a multiple of `w`.
                for w in (2, 4):
                    if not run_loads(kind, inp, out, fpg, w):
                        continue
                    for row in range(m):
                        for col in range(0, n - w + 1, w):
                            i = [sum(offset(g, inp, out, st) for g in
                                     groups_of(kind, out, b, row, c, fpg))
                                 for c in range(col, col + w)]
                            if i != list(range(i[0], i[0] + w)) or i[0] % w:
                                fails.append(f"{kind} {out} input {inp_shape}:"
                                             f" columns {col} .. {col + w - 1}"
                                             f" are not an aligned run")
                                return


# ---- the compiled kernels ----------------------------------------------------------

def mm_config(tm, tn, tk, wm, wn, inst, shape, lw=8):
    """A pinned config: (tile_m, tile_n, tile_k, warps_m, warps_n,
    instruction, instruction_shape, load_width); one stage, smem_padding 8
    (0 for wgmma)."""
    return (tm, tn, tk, wm, wn, inst, tuple(shape), lw)


def config_attr(cfg):
    tm, tn, tk, wm, wn, inst, shape, lw = cfg
    return (f"#kgraph.matmul_config<tile_m = {tm}, tile_n = {tn}, tile_k = {tk}, "
            f"warps_m = {wm}, warps_n = {wn}, stages = 1, instruction = {inst}, "
            f"instruction_shape = [{', '.join(map(str, shape))}], load_width = {lw}, "
            f"smem_padding = {0 if inst == 'wgmma' else 8}>")


MMA16 = mm_config(16, 8, 16, 1, 1, "mma_sync", [16, 8, 16])
# An nchw conv2d's im2col gather has contiguous runs of one element.
MMA16_NCHW = mm_config(16, 8, 16, 1, 1, "mma_sync", [16, 8, 16], lw=1)
# Its f32 result tile outgrows the operand tiles and 48 KiB: not staged.
MMA128 = mm_config(128, 128, 16, 2, 2, "mma_sync", [16, 8, 16])
WGMMA64 = mm_config(64, 64, 64, 4, 1, "wgmma", [64, 64, 16])

#: Columns of the f32 result the staged epilogue reads back per run (16
#: bytes), its rows' padding, the 48 KiB a staged block may grow to.
STAGED_RUN, STAGE_PAD, STAGED_LIMIT = 4, 8, 48 * 1024


def epilogue_layout(kind, cfg):
    """(run width: the consecutive columns the epilogue evaluates and loads
    together, dynamic shared memory bytes) of a pinned config, by
    getGemmSharedMemoryLayout's rule for f16 operands and an f32 result:
    staged (runs of STAGED_RUN) unless an nchw conv2d or the result tile
    [tm][tn + 8] fits neither over the operand tiles nor within 48 KiB;
    otherwise stored from registers, the fragments' column pairs."""
    tm, tn, tk, wm, wn, inst, shape, lw = cfg
    pad, slack = (0, 1024) if inst == "wgmma" else (8, 0)
    # One stage of A [tm][tk] and B [tk][tn] (a conv2d's filter: B^T).
    b = tn * (tk + pad) if kind != "matmul" else tk * (tn + pad)
    operands = (tm * (tk + pad) + b) * 2
    staged = tm * (tn + STAGE_PAD) * 4
    if kind != "nchw" and tn % STAGED_RUN == 0 and (
            staged <= operands or slack + staged <= STAGED_LIMIT):
        return STAGED_RUN, slack + max(operands, staged)
    return 2, slack + operands


def compiled_problems():
    """(kind, result shape, groups, target, pinned config or None): the
    model's problems with the default configs (no tile is full: every
    input read element by element), on SIMT (sm_70) and mma.sync (sm_80)
    kernels in turn (each kind gets both), then problems whose block tiles
    are all full."""
    for i, (kind, out, groups) in enumerate(problems()):
        yield kind, out, groups, ("sm_70", "sm_80", "sm_80", "sm_70")[i % 4], None
    yield "matmul", (32, 16), 1, "sm_80", MMA16
    yield "matmul", (2, 16, 16), 1, "sm_80", MMA16
    for groups in (1, 2):
        yield "nhwc", (2, 2, 4, 16), groups, "sm_80", MMA16
        yield "nchw", (2, 16, 2, 4), groups, "sm_80", MMA16_NCHW
    yield "matmul", (128, 128), 1, "sm_80", MMA128
    yield "matmul", (64, 64), 1, "sm_90a", WGMMA64


def problem_graph(kind, out, groups, shapes, config):
    """One function: per input shape a group of the GEMM (f16 operands,
    K = 16 per group, f32 result) plus that input; (text, operand shapes)."""
    def t(s, dt):
        return "tensor<" + "".join(f"{d}x" for d in s) + dt + ">"
    k = 64 if config == WGMMA64 else 16
    if kind == "matmul":
        xs, ws = list(out[:-2]) + [out[-2], k], list(out[:-2]) + [k, out[-1]]
        op = f"kgraph.matmul %a, %b : {t(xs, 'f16')}, {t(ws, 'f16')} -> {t(out, 'f32')}"
    else:
        c = k * groups
        if kind == "nhwc":
            xs, ws = [out[0], out[1], out[2], c], [out[3], 1, 1, k]
        else:
            xs, ws = [out[0], c, out[2], out[3]], [out[1], k, 1, 1]
        g = f" groups = {groups}" if groups != 1 else ""
        op = (f"kgraph.conv2d %a, %b layout = {kind} strides = [1, 1] padding = [0, 0, 0, 0] "
              f"dilations = [1, 1]{g} : {t(xs, 'f16')}, {t(ws, 'f16')} -> {t(out, 'f32')}")
    x, w, o = t(xs, "f16"), t(ws, "f16"), t(out, "f32")
    cfg = f" {{kgraph.config = {config_attr(config)}}}" if config else ""
    args = [f"%x: {x}", f"%w: {w}"] + [f"%e{i}: {t(s, 'f32')}" for i, s in enumerate(shapes)]
    body = "".join(
        f"  %r{i} = kgraph.fused (%x, %w, %e{i}){cfg} : ({x}, {w}, {t(s, 'f32')}) -> {o} {{\n"
        f"  ^bb0(%a: {x}, %b: {w}, %c: {t(s, 'f32')}):\n"
        f"    %g = {op}\n"
        f"    %y = kgraph.add %g, %c : {o}, {t(s, 'f32')}\n"
        f"    kgraph.yield %y : {o}\n  }}\n" for i, s in enumerate(shapes))
    rets = ", ".join(f"%r{i}" for i in range(len(shapes)))
    return (f"func.func @main({', '.join(args)}) -> ({', '.join([o] * len(shapes))}) {{\n"
            f"{body}  return {rets} : {', '.join([o] * len(shapes))}\n}}\n"), xs, ws


def check_compiled(opt, kind, out, groups, target, config, fails):
    """Compiles and runs the problem (failures appended to `fails`)."""
    sys.path.insert(0, HERE)
    from check_kernels_interp import compile_graph
    from kinterp.plan import Module, run_plan
    from kinterp.trace import tracing
    name = f"{kind} out {out} groups {groups} {target}{' pinned' if config else ''}"
    shapes = list(input_shapes(out))
    text, xs, ws = problem_graph(kind, out, groups, shapes, config)
    fplan, ir = compile_graph(opt, text, target, False)
    if len(fplan["kernels"]) != len(shapes) or any(
            k["compute"] not in ("simt", "tensor_f16") for k in fplan["kernels"]):
        fails.append(f"{name}: kernels {[k['compute'] for k in fplan['kernels']]}, the model "
                     f"{len(shapes)} GEMMs")
        return
    # Zero operands: every result element is the input element it read,
    # whose value is its index.
    ins = {0: np.zeros(xs, np.float16), 1: np.zeros(ws, np.float16)}
    for i, s in enumerate(shapes):
        ins[2 + i] = np.arange(int(np.prod(s))).reshape(s).astype(np.float32)
    with tracing() as rec:
        outs, unwritten = run_plan(fplan, Module(ir), ins)
    gemms, m, n, fpg = gemm_dims(kind, out, groups)
    rank = len(out)
    if config:
        run, smem = epilogue_layout(kind, config)
        got = sorted({k["shared_bytes"] for k in fplan["kernels"]})
        if got != [smem]:
            fails.append(f"{name}: {got} bytes of shared memory, the model {smem} "
                         f"({'staged' if run == STAGED_RUN else 'direct'} epilogue)")
    for i, s in enumerate(shapes):
        inp = (1,) * (rank - len(s)) + s
        st = strides_of(inp)
        if unwritten[i].any():
            fails.append(f"{name} input {s}: result elements not written")
            continue
        bad = None
        for b, row, col in itertools.product(range(gemms), range(m), range(n)):
            idx = sum(offset(g, inp, out, st) for g in groups_of(kind, out, b, row, col, fpg))
            got = outs[i][logical(kind, out, b, row, col, fpg)]
            if got != idx:
                bad = f"({b}, {row}, {col}) reads {got}, the model {idx}"
                break
        if bad:
            fails.append(f"{name} input {s}: {bad}")
            continue
        if config:
            # Full tiles: no bounds checks, so the model's conditions alone
            # decide the loads: per run one element where the input is
            # broadcast along the channels, one aligned vector where it is
            # contiguous along them, each element otherwise.
            acc = rec.accesses("load", f"(input {2 + i})")
            widths = set(acc["width"].tolist())
            total = gemms * m * n
            if inp[rank - 1 if kind != "nchw" else 1] == 1:
                w, loads = 1, total // run
            elif run_loads(kind, inp, out, fpg, run):
                w, loads = run, total // run
            else:
                w, loads = 1, total
            if widths != {w}:
                fails.append(f"{name} input {s}: loads of widths {sorted(widths)}, the model "
                             f"[{w}]")
            elif len(acc) // w != loads or (acc["first"] % w).any():
                fails.append(f"{name} input {s}: {len(acc) // w} loads of width {w} "
                             f"({int((acc['first'] % w != 0).sum()) // w} misaligned), the "
                             f"model {loads} (runs of {run}), aligned")


def main(argv):
    opt = argv[1] if len(argv) > 1 else None
    fails = []
    for kind, out, groups in problems():
        check_problem(kind, out, groups, fails)
    if opt:
        for p in compiled_problems():
            check_compiled(opt, *p, fails)
    for f in fails:
        print("MISMATCH", f)
    print(f"{len(fails)} mismatches")
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
