#!/usr/bin/env python3
"""GEMM configuration variants with the configuration pinned in the IR, for
exploring the tiling space on the GPU in one run (the numbers in
bench/RESULTS.md, "GEMM variants").

    bench/gemm_variants/build.py OUT_DIR build/bin/kgraph-opt [TARGET]  # here
    python3 bench/gemm_variants/run.py OUT_DIR                  # on the GPU
    ncu ... python3 bench/gemm_variants/one.py OUT_DIR NAME     # one kernel, 4096^3 f16

Each case: (name, batch, M, N, K, transpose_a, transpose_b, input type,
output type, (tile_m, tile_n, tile_k, warps_m, warps_n, stages)); wgmma
cases add (instruction N, group_m[, copy]) to the tile tuple. The tuple
selects a configuration from the compiler's candidates for the problem
(kgraph-opt --list-configs, bench/configspace.py): the best-ranked one with
those parameters is pinned, in the compiler's own text. A tuple that no
legal candidate has is reported and left out (the 16-warp mma.sync tiles
of the 2026-11-30 runs are outside the space the model enumerates).
"""
import json
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import configspace  # noqa: E402

out = sys.argv[1]; K = sys.argv[2]
target = sys.argv[3] if len(sys.argv) > 3 else "sm_90a"
os.makedirs(out, exist_ok=True)
cases = [
 # name, B, M, N, K, ta, tb, in, out, tile
 ("nn_256", 0, 256, 256, 256, 0, 0, "f16", "f32", (128,128,32,2,2,3)),
 ("nn_odd", 0, 100, 200, 304, 0, 0, "f16", "f32", (128,128,32,2,2,3)),
 ("nn_odd2", 0, 257, 129, 72, 0, 0, "f16", "f16", (64,64,32,2,2,2)),
 ("tn_odd", 0, 100, 200, 304, 1, 0, "f16", "f32", (128,128,32,2,2,3)),
 ("nt_odd", 0, 100, 200, 304, 0, 1, "bf16", "f32", (128,128,32,2,2,3)),
 ("tt_odd", 0, 96, 136, 48, 1, 1, "bf16", "bf16", (64,128,32,2,2,2)),
 ("batch", 3, 65, 40, 24, 0, 0, "f16", "f32", (64,64,16,2,2,2)),
 ("s1", 0, 130, 70, 40, 0, 0, "f16", "f32", (64,64,32,2,2,1)),
 ("perf4096", 0, 4096, 4096, 4096, 0, 0, "f16", "f32", (128,128,32,2,2,4)),
 ("perf4096_256x128_w8", 0, 4096, 4096, 4096, 0, 0, "f16", "f32", (256,128,32,2,4,3)),
 # wgmma (sm_90a): block rasterization (group_m) and tile shapes.
 ("wg_odd_g4", 0, 1000, 700, 320, 0, 0, "f16", "f16", (128,128,64,8,1,3,128,4)),
 ("wg_odd_g8", 0, 1800, 1000, 256, 0, 0, "bf16", "f32", (128,256,64,4,2,4,128,8)),
 ("perfwg8192_128x256_g1", 0, 8192, 8192, 8192, 0, 0, "f16", "f16", (128,256,64,4,2,4,128,1)),
 ("perfwg8192_128x256_g8", 0, 8192, 8192, 8192, 0, 0, "f16", "f16", (128,256,64,4,2,4,128,8)),
 ("perfwg8192_128x256_g16", 0, 8192, 8192, 8192, 0, 0, "f16", "f16", (128,256,64,4,2,4,128,16)),
 ("perfwg8192_128x256_g32", 0, 8192, 8192, 8192, 0, 0, "f16", "f16", (128,256,64,4,2,4,128,32)),
 ("perfwg8192_128x128_s3_g8", 0, 8192, 8192, 8192, 0, 0, "f16", "f16", (128,128,64,8,1,3,128,8)),
 ("perfwg8192_256x128_g8", 0, 8192, 8192, 8192, 0, 0, "f16", "f16", (256,128,64,8,1,4,128,8)),
 ("perfwg8192_128x256_s3_g8", 0, 8192, 8192, 8192, 0, 0, "f16", "f16", (128,256,64,4,2,3,128,8)),
 ("perfwg4096_128x256_g1", 0, 4096, 4096, 4096, 0, 0, "f16", "f16", (128,256,64,4,2,4,128,1)),
 ("perfwg4096_128x256_g8", 0, 4096, 4096, 4096, 0, 0, "f16", "f16", (128,256,64,4,2,4,128,8)),
 ("perfwg4096_128x256_g16", 0, 4096, 4096, 4096, 0, 0, "f16", "f16", (128,256,64,4,2,4,128,16)),
 # TMA loads from a producer warpgroup (copy = tma).
 ("tma_odd", 0, 1000, 712, 328, 0, 0, "f16", "f16", (128,256,64,4,2,4,128,4,"tma")),
 ("perftma8192_256x128_g4", 0, 8192, 8192, 8192, 0, 0, "f16", "f16", (256,128,64,8,1,4,128,4,"tma")),
 ("perftma8192_256x128_g8", 0, 8192, 8192, 8192, 0, 0, "f16", "f16", (256,128,64,8,1,4,128,8,"tma")),
 ("perftma8192_256x128_g16", 0, 8192, 8192, 8192, 0, 0, "f16", "f16", (256,128,64,8,1,4,128,16,"tma")),
 ("perftma8192_256x128_s3_g8", 0, 8192, 8192, 8192, 0, 0, "f16", "f16", (256,128,64,8,1,3,128,8,"tma")),
 ("perftma8192_128x256_g8", 0, 8192, 8192, 8192, 0, 0, "f16", "f16", (128,256,64,4,2,4,128,8,"tma")),
 ("perftma8192_128x256_g16", 0, 8192, 8192, 8192, 0, 0, "f16", "f16", (128,256,64,4,2,4,128,16,"tma")),
 ("perftma4096_256x128_g8", 0, 4096, 4096, 4096, 0, 0, "f16", "f16", (256,128,64,8,1,4,128,8,"tma")),
 ("perftma4096_128x256_g8", 0, 4096, 4096, 4096, 0, 0, "f16", "f16", (128,256,64,4,2,4,128,8,"tma")),
]


def selector(tile):
    """The candidate parameters a case's tile tuple asks for; None: the
    parameter is left at its default (not printed)."""
    tm, tn, tk, wm, wn, st = tile[:6]
    want = dict(tile_m=tm, tile_n=tn, tile_k=tk, warps_m=wm, warps_n=wn, stages=st)
    if len(tile) == 6:
        want["instruction"] = "mma_sync"
    else:
        copy = tile[8] if len(tile) > 8 else "cp_async"
        want.update(instruction="wgmma", instruction_shape=[64, tile[6], 16],
                    group_m=tile[7] if tile[7] > 1 else None,
                    copy=None if copy == "cp_async" else copy)
    return want


def t(shape, elem):
    return "tensor<" + "x".join(map(str, shape)) + "x" + elem + ">"


man, missing = [], []
for name, B, M, N, Kd, ta, tb, ti, to, tile in cases:
    def shp(a, b):
        return ([B] if B else []) + [a, b]
    A = shp(Kd, M) if ta else shp(M, Kd)
    Bm = shp(N, Kd) if tb else shp(Kd, N)
    C = shp(M, N)
    attrs = [a for a, on in (("transpose_a", ta), ("transpose_b", tb)) if on]
    ad = (" {" + ", ".join(attrs) + "}") if attrs else ""
    graph = os.path.join(out, name + ".graph.mlir")
    with open(graph, "w") as f:
        f.write(f"""func.func @main(%a: {t(A, ti)}, %b: {t(Bm, ti)}) -> {t(C, to)} {{
  %0 = kgraph.matmul %a, %b{ad} : {t(A, ti)}, {t(Bm, ti)} -> {t(C, to)}
  return %0 : {t(C, to)}
}}
""")
    try:
        groups = configspace.list_configs(K, graph, target)
        want = selector(tile)
        cand = configspace.pick(groups[0]["candidates"], **want)
        if cand is None:
            missing.append(name)
            print(name, "skipped: no legal candidate has", want)
            continue
        p = os.path.join(out, name + ".mlir")
        with open(p, "w") as f:
            f.write(configspace.pin(configspace.tiled_ir(K, graph, target), groups,
                                    {0: cand["config"]}))
        configspace.compile_pinned(K, p, target, os.path.join(out, name + ".ptx"))
    except configspace.ConfigSpaceError as e:
        print(name, "FAILED", str(e)[:2000])
        continue
    man.append(dict(name=name, B=B, M=M, N=N, K=Kd, ta=ta, tb=tb, ti=ti, to=to, A=A, Bs=Bm, C=C,
                    config=cand["config"]))
json.dump(man, open(os.path.join(out, "mm.json"), "w"), indent=1)
print(len(man), "cases" + (f"; not candidates: {', '.join(missing)}" if missing else ""))
