#!/usr/bin/env python3
"""The kernel interpreter's sensitivity, tested: each mutation below plants
a miscompile in the emitted kernel IR (the `--emit=gpu` text, as a broken
emitter would produce it) of hand-written cases of test/Tools/kinterp_cases.py,
and check_kernels_interp.py must report a failure for every one of them (a
wrong value, an unwritten element, a race, an out-of-bounds access or a
deadlock). A mutation that no longer applies to a case's IR fails too (the
list must follow the emitters), as does one that makes the IR malformed.

  check_interp_mutations.py build/bin/kgraph-opt [MUTATION ...]

Prints `caught <mutation> <case> <target>: <the checker's message>` per
run and the count last; exit 1 unless every run is caught.
"""
import re
import sys

import check_kernels_interp as cki
import kinterp_cases


def _defs(lines):
    """value name -> index of the line defining it."""
    out = {}
    for i, l in enumerate(lines):
        m = re.match(r'\s*(%[\w$.\-]+)(?::\d+)?\s*=', l)
        if m:
            out[m.group(1)] = i
    return out


def _kernel_args(lines):
    """[(name, type)] of the first gpu.func's block arguments."""
    for i, l in enumerate(lines):
        if '"gpu.func"' in l:
            head = lines[i + 1]
            return re.findall(r'(%arg\d+): (memref<[^>]*(?:<[^>]*>)?[^>]*>)', head)
    return []


def sub(pattern, repl, count=0):
    return lambda ir: re.sub(pattern, repl, ir, count=count)


def drop_lines(pattern):
    return lambda ir: "\n".join(l for l in ir.split("\n") if not re.search(pattern, l))


def reverse_gathers(ir):
    """Each run of consecutive scalar loads from one memref (the lanes of a
    gather) reads its indices in reverse lane order."""
    lines = ir.split("\n")
    pat = re.compile(r'^(\s*%[\w]+ = "memref.load"\()(%\w+), (%\w+)(\).*)$')
    i = 0
    while i < len(lines):
        m = pat.match(lines[i])
        j = i
        while j < len(lines) and (mm := pat.match(lines[j])) and mm.group(2) == (m and m.group(2)):
            j += 1
        if m and j - i >= 2:
            idx = [pat.match(lines[k]).group(3) for k in range(i, j)][::-1]
            for k, x in zip(range(i, j), idx):
                mm = pat.match(lines[k])
                lines[k] = f"{mm.group(1)}{mm.group(2)}, {x}{mm.group(4)}"
            i = j
        else:
            i += 1
    return "\n".join(lines)


def _derived(lines, roots):
    """Values computed from `roots` through loads, extracts and casts."""
    names = set(roots)
    changed = True
    while changed:
        changed = False
        for l in lines:
            m = re.match(r'\s*(%[\w$.\-]+)(:\d+)? = "(memref.load|vector.load|vector.extract|'
                         r'arith.extf|vector.broadcast|vector.to_elements|memref.reinterpret_cast)"\(([^)]*)\)', l)
            if not m:
                continue
            first = m.group(4).split(",")[0].strip()
            res = m.group(1)
            if first in names:
                new = {res} | ({f"{res}#{k}" for k in range(int(m.group(2)[1:]))} if m.group(2) else set())
                if not new <= names:
                    names |= new
                    changed = True
    return names - set(roots)


def drop_add_of(select_arg):
    """The epilogue adds of values read from the kernel argument
    `select_arg(args)` chooses become a copy of the other operand."""
    def f(ir):
        lines = ir.split("\n")
        arg = select_arg(_kernel_args(lines))
        vals = _derived(lines, {arg})
        pat = re.compile(r'^(\s*%[\w]+ = )"arith.addf"\((%[\w#]+), (%[\w#]+)\)(.*)$')
        for i, l in enumerate(lines):
            m = pat.match(l)
            if m and (m.group(2) in vals or m.group(3) in vals):
                keep = m.group(3) if m.group(2) in vals else m.group(2)
                lines[i] = f'{m.group(1)}"arith.maximumf"({keep}, {keep}){m.group(4)}'
        return "\n".join(lines)
    return f


def bias_arg(args):
    # The only rank-1 memref argument of a matmul + bias kernel.
    return [n for n, t in args if re.match(r'memref<\d+x[a-z]\w*>$', t)][0]


def residual_arg(args):
    # The argument of the output's type before the output (the last
    # argument but for a TMA kernel's tensor maps).
    args = [(n, t) for n, t in args if not re.match(r'memref<\d+x128xi8>$', t)]
    out = args[-1][1]
    return [n for n, t in args[:-1] if t == out][-1]


def first_col_bias(ir):
    """Every lane reads the bias at column 0: each load of the bias takes an
    index constant defined at the top of the kernel (so the IR stays valid
    whatever the loads' order and nesting)."""
    lines = ir.split("\n")
    arg = bias_arg(_kernel_args(lines))
    pat = re.compile(r'^(\s*%\w+ = "memref.load"\(' + re.escape(arg) + r', )(%\w+)(\).*)$')
    out, changed, after_func = [], False, False
    for l in lines:
        m = pat.match(l)
        if m:
            l = f"{m.group(1)}%mut_c0{m.group(3)}"
            changed = True
        out.append(l)
        if after_func:
            # The kernel's block header: the constant goes right after it.
            out.append('    %mut_c0 = "arith.constant"() <{value = 0 : index}> : () -> index')
            after_func = False
        if '"gpu.func"' in l:
            after_func = True
    return "\n".join(out) if changed else ir


def cp_wait_less(ir):
    return re.sub(r'("nvvm.cp.async.wait.group"\(\) <\{n = )(\d+)',
                  lambda m: m.group(1) + str(int(m.group(2)) + 1), ir)


def ldmatrix_flip(ir):
    return re.sub(r'(\{numTiles = \d+ : i32, transpose = )(true|false)',
                  lambda m: m.group(1) + ("false" if m.group(2) == "true" else "true"), ir)


def shuffle_offsets(ir):
    """The first xor shuffle of each kernel uses the second one's offset."""
    lines = ir.split("\n")
    pat = re.compile(r'^(\s*%[\w]+:2 = "gpu.shuffle"\(%[\w#]+, )(%\w+)(, .*)$')
    idx = [i for i, l in enumerate(lines) if pat.match(l)]
    if len(idx) >= 2:
        second = pat.match(lines[idx[1]]).group(2)
        m = pat.match(lines[idx[0]])
        lines[idx[0]] = f"{m.group(1)}{second}{m.group(3)}"
    return "\n".join(lines)


def descriptor_sbo(ir):
    """Matrix descriptors with twice their stride byte offset."""
    def bump(m):
        v = int(m.group(2))
        sbo = (v >> 32) & 0x3FFF
        return m.group(1) + str(v + (sbo << 32))
    return re.sub(r'(value = )(46116\d{14}) : i64', lambda m: bump(m) + " : i64", ir)


def swizzle_or(ir):
    return re.sub(r'"arith.xori"\((%\w+), (%\w+)\) : \(index, index\)',
                  r'"arith.ori"(\1, \2) : (index, index)', ir)


def producer_parity(ir):
    return re.sub(r'"arith.xori"\((%\w+), %\w+\) : \(i32, i32\)',
                  r'"arith.ori"(\1, \1) : (i32, i32)', ir)


def _shift_constant(ir, use, type_name, delta, first_only=False):
    """Adds `delta` to the integer constant (of `type_name`) defining the
    operand that the regex `use` captures, for every line matching it (or
    the first only)."""
    lines = ir.split("\n")
    defs = _defs(lines)
    for l in lines:
        m = re.search(use, l)
        if m and m.group(1) in defs:
            k = defs[m.group(1)]
            lines[k] = re.sub(rf'value = (\d+) : {type_name}',
                              lambda c: f"value = {int(c.group(1)) + delta} : {type_name}",
                              lines[k])
            if first_only:
                break
    return "\n".join(lines)


def expect_tx_bytes(ir):
    """The expected transaction bytes of the full barriers off by 2."""
    return _shift_constant(ir, r'"nvvm.mbarrier.arrive.expect_tx"\(%\w+, (%\w+)\)', "i32", 2)


def transpose_tile_index(ir):
    """Reads of the 2-D shared tile swap their two indices."""
    return re.sub(r'"memref.load"\((%arg\d+), (%\w+), (%\w+)\)( <\{[^}]*\}> : '
                  r'\(memref<\d+x\d+xf32, #gpu.address_space<workgroup>>)',
                  r'"memref.load"(\1, \3, \2)\4', ir)


def vector_loop_short(ir):
    """The vector loop of the first kernel stops one vector early."""
    return _shift_constant(ir, r'^\s*"scf.for"\(%\w+, (%\w+), %\w+\)', "index", -1,
                           first_only=True)


def ragged_edge(ir):
    """Bounds checks `<` become `<=`: the ragged edge is stored one past."""
    return re.sub(r'("arith.cmpi"\(%\w+, %\w+\) <\{predicate = )6( : i64)', r'\g<1>7\2', ir)


#: (name, what it plants, mutation, [(case, target[, "fuse": with --fuse])]).
MUTATIONS = [
    ("max_start_zero", "a float max reduction starts at 0, not -inf",
     sub(r'0xFF800000 : f32', '0.000000e+00 : f32'),
     [("reduce_max_neg_rows_f32", "sm_80"), ("reduce_max_neg_long_rows_f32", "sm_90a"),
      ("reduce_max_neg_cols_f16", "sm_75"), ("reduce_min_pos_rows_f32", "sm_70"),
      ("pool_max_neg_nhwc_f16", "sm_80")]),
    ("sum_start_one", "a sum starts at 1",
     sub(r'value = 0\.000000e\+00 : f32', 'value = 1.000000e+00 : f32'),
     [("reduce_sum_rows_f32", "sm_80"), ("reduce_sum_cols_f16", "sm_90a"),
      ("reduce_mean_inner_bf16", "sm_75"), ("reduce_sum_unit_axis_f32", "sm_70")]),
    ("gather_reversed", "broadcast lanes gathered in reverse order", reverse_gathers,
     [("bcast_row_gather_f32", "sm_80"), ("bcast_row_gather_f16", "sm_90a"),
      ("bcast_middle_gather_bf16", "sm_70")]),
    ("bias_dropped", "the GEMM epilogue drops the bias add", drop_add_of(bias_arg),
     [("mm_f32_37x45x40_bias", "sm_70", "fuse"), ("mm_f32_37x45x40_bias", "sm_80", "fuse"),
      ("mm_f16_cp_100x72x136_bias_res", "sm_80"), ("mm_f16_wgmma_130x72x136_bias", "sm_90a"),
      ("mm_f16_nt_20x24x56_bias", "sm_75", "fuse")]),
    ("bias_first_column", "every lane of the epilogue reads the first lane's bias",
     first_col_bias,
     [("mm_f32_37x45x40_bias", "sm_80", "fuse"), ("mm_f32_37x45x40_bias", "sm_70", "fuse")]),
    ("residual_dropped", "the GEMM epilogue drops the residual add", drop_add_of(residual_arg),
     [("mm_f16_cp_100x72x136_bias_res", "sm_80"), ("mm_f16_tma3_100x72x328_bias_res", "sm_90a")]),
    ("barrier_removed", "no block barriers", drop_lines(r'"gpu.barrier"\(\)'),
     [("reduce_max_neg_long_rows_f32", "sm_80"), ("transpose_2d_f32", "sm_80"),
      ("mm_f16_cp_100x72x136_bias_res", "sm_80"), ("mm_f32_simt_cp_40x36x44", "sm_80"),
      ("mm_f16_37x45x40_bias_res", "sm_75"), ("stencil_blur_relu_f32_nchw", "sm_80"),
      ("mm_f16_wgmma_130x72x136_bias", "sm_90a")]),
    ("epilogue_barrier_removed",
     "the TMA kernels' staged epilogue without the consumers' named barriers",
     drop_lines(r'"nvvm.barrier"\('),
     [("mm_f16_tma_130x136x64", "sm_90a"), ("mm_f16_tma3_100x72x328_bias_res", "sm_90a")]),
    ("cp_async_wait_short", "cp.async.wait_group leaves one more group in flight",
     cp_wait_less,
     [("mm_f16_cp_100x72x136_bias_res", "sm_80"), ("mm_i8_cp_40x48x96", "sm_80"),
      ("mm_tf32_cp_50x40x36", "sm_80"), ("conv_nhwc_f16_cp_1x8x8x16_f32_k3p1", "sm_80"),
      ("mm_f16_wgmma_130x72x136_bias", "sm_90a")]),
    ("ldmatrix_transpose_flipped", "ldmatrix with the wrong .trans", ldmatrix_flip,
     [("mm_f16_cp_100x72x136_bias_res", "sm_80"), ("mm_f16_k8_48x40x48", "sm_75"),
      ("mm_bf16_33x17x24_relu", "sm_80")]),
    ("shuffle_offset", "a reduction's first xor shuffle uses the next offset",
     shuffle_offsets,
     [("reduce_max_neg_rows_f32", "sm_80"), ("reduce_sum_i32_long", "sm_80")]),
    ("descriptor_stride", "wgmma matrix descriptors with the wrong stride byte offset",
     descriptor_sbo,
     [("mm_f16_wgmma_130x72x136_bias", "sm_90a"), ("mm_f16_tma_130x136x64", "sm_90a"),
      ("conv_nhwc_f16_wgmma_1x9x9x16_f64_k3p1", "sm_90a")]),
    ("swizzle_broken", "the staging copies' 128-byte swizzle ORs instead of XORs",
     swizzle_or,
     [("mm_f16_wgmma_130x72x136_bias", "sm_90a"), ("mm_f16_wgmma_nt_64x80x64", "sm_90a")]),
    ("producer_parity", "the TMA producer waits on the wrong phase parity", producer_parity,
     [("mm_f16_tma3_100x72x328_bias_res", "sm_90a")]),
    ("expect_tx_bytes", "the full barriers expect the wrong transaction bytes",
     expect_tx_bytes,
     [("mm_f16_tma_130x136x64", "sm_90a"), ("bmm_f16_tma3_2x40x64x72", "sm_90a")]),
    ("proxy_fence_removed", "no fence.proxy.async between cp.async and wgmma",
     drop_lines(r'"nvvm.fence.proxy"'),
     [("mm_f16_wgmma_130x72x136_bias", "sm_90a"), ("mm_bf16_wgmma_tn_72x64x72", "sm_90a")]),
    ("transpose_tile_index", "the transpose kernel reads its tile transposed twice",
     transpose_tile_index, [("transpose_2d_f32", "sm_80")]),
    ("vector_loop_short", "the vectorized loop stops one vector early", vector_loop_short,
     [("bcast_col_f32", "sm_80"), ("elementwise_chain_f16", "sm_90a")]),
    ("ragged_edge", "bounds checks let the ragged edge store one past the end", ragged_edge,
     [("mm_f32_37x45x40_bias", "sm_80"), ("mm_f16_37x45x40_bias_res", "sm_70"),
      ("conv_nchw_f32_2x3x9x8_f5_k3s2", "sm_80")]),
]


def main():
    opt = sys.argv[1]
    only = set(sys.argv[2:])
    unknown = only - {m[0] for m in MUTATIONS}
    if unknown:
        sys.exit(f"unknown mutation(s): {', '.join(sorted(unknown))}")
    runs = {r.name: r for r in kinterp_cases.RUNS}
    caught = bad = 0
    for name, what, fn, cases in MUTATIONS:
        if only and name not in only:
            continue
        for case, target, *fuse in cases:
            fuse = bool(fuse and fuse[0])
            status, msg, _ = cki.check_one(opt, runs[case], target, fuse, mutate=fn)
            first = msg.splitlines()[0] if msg else ""
            if status == "FAIL":
                caught += 1
                print(f"caught {name} {case} {target}: {first[:160]}", flush=True)
            else:
                bad += 1
                word = {"ok": "MISSED"}.get(status, status.upper())
                print(f"{word} {name} ({what}) {case} {target}: {first}", flush=True)
    print(f"mutations: {caught} caught, {bad} not")
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
