#!/usr/bin/env python3
"""GEMM configuration variants with the configuration pinned in the IR, for
exploring the tiling space on the GPU in one run (the numbers in
bench/RESULTS.md, "GEMM variants").

    bench/gemm_variants/build.py OUT_DIR build/bin/kgraph-opt   # here
    python3 bench/gemm_variants/run.py OUT_DIR                  # on the GPU
    ncu ... python3 bench/gemm_variants/one.py OUT_DIR NAME     # one kernel, 4096^3 f16

Each case: (name, batch, M, N, K, transpose_a, transpose_b, input type,
output type, (tile_m, tile_n, tile_k, warps_m, warps_n, stages)); wgmma
cases add (instruction N, group_m[, copy]) to the tile tuple.
"""
import sys, os, subprocess, json
out = sys.argv[1]; K = sys.argv[2]
os.makedirs(out, exist_ok=True)
cfg = "#kgraph.matmul_config<tile_m = {tm}, tile_n = {tn}, tile_k = {tk}, warps_m = {wm}, warps_n = {wn}, stages = {st}, instruction = mma_sync, instruction_shape = [16, 8, 16], load_width = {lw}, smem_padding = 8>"
# wgmma variants: tile (tm, tn, tk, wm, wn, st, instruction N, group_m).
wgcfg = "#kgraph.matmul_config<tile_m = {tm}, tile_n = {tn}, tile_k = {tk}, warps_m = {wm}, warps_n = {wn}, stages = {st}, instruction = wgmma, instruction_shape = [64, {inn}, 16], load_width = {lw}, smem_padding = 0, group_m = {gm}, copy = {cp}>"
cases = [
 # name, B, M, N, K, ta, tb, in, out, tile
 ("nn_256", 0, 256, 256, 256, 0, 0, "f16", "f32", (128,128,32,2,2,3)),
 ("nn_odd", 0, 100, 200, 304, 0, 0, "f16", "f32", (128,128,32,2,2,3)),
 ("nn_odd2", 0, 257, 129, 72, 0, 0, "f16", "f16", (64,64,32,2,2,2)),
 ("tn_odd", 0, 100, 200, 304, 1, 0, "f16", "f32", (128,128,32,2,2,3)),
 ("nt_odd", 0, 100, 200, 304, 0, 1, "bf16", "f32", (128,128,32,2,2,3)),
 ("tt_odd", 0, 96, 136, 48, 1, 1, "bf16", "bf16", (64,128,32,2,2,4)),
 ("batch", 3, 65, 40, 24, 0, 0, "f16", "f32", (64,64,16,2,2,2)),
 ("s1", 0, 130, 70, 40, 0, 0, "f16", "f32", (64,64,32,2,2,1)),
 ("perf4096", 0, 4096, 4096, 4096, 0, 0, "f16", "f32", (128,128,32,2,2,4)),
 ("perf4096_256x128_w16", 0, 4096, 4096, 4096, 0, 0, "f16", "f32", (256,128,32,4,4,3)),
 ("perf4096_256x128_w16s4", 0, 4096, 4096, 4096, 0, 0, "f16", "f32", (256,128,32,4,4,4)),
 ("perf4096_128x256_w16", 0, 4096, 4096, 4096, 0, 0, "f16", "f32", (128,256,32,4,4,3)),
 ("perf4096_256x128_w8", 0, 4096, 4096, 4096, 0, 0, "f16", "f32", (256,128,32,2,4,3)),
 ("perf4096_256x256_w16", 0, 4096, 4096, 4096, 0, 0, "f16", "f32", (256,256,32,4,4,2)),
 ("perf4096_256x128_w16k64", 0, 4096, 4096, 4096, 0, 0, "f16", "f32", (256,128,64,4,4,2)),
 # wgmma (sm_90a): block rasterization (group_m) and tile shapes.
 ("wg_odd_g3", 0, 1000, 700, 320, 0, 0, "f16", "f16", (128,128,64,8,1,3,128,3)),
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
 ("tma_odd", 0, 1000, 712, 328, 0, 0, "f16", "f16", (256,128,64,8,1,4,128,8,"tma")),
 ("perftma8192_256x128_g4", 0, 8192, 8192, 8192, 0, 0, "f16", "f16", (256,128,64,8,1,4,128,4,"tma")),
 ("perftma8192_256x128_g8", 0, 8192, 8192, 8192, 0, 0, "f16", "f16", (256,128,64,8,1,4,128,8,"tma")),
 ("perftma8192_256x128_g16", 0, 8192, 8192, 8192, 0, 0, "f16", "f16", (256,128,64,8,1,4,128,16,"tma")),
 ("perftma8192_256x128_s3_g8", 0, 8192, 8192, 8192, 0, 0, "f16", "f16", (256,128,64,8,1,3,128,8,"tma")),
 ("perftma8192_128x256_g8", 0, 8192, 8192, 8192, 0, 0, "f16", "f16", (128,256,64,4,2,4,128,8,"tma")),
 ("perftma8192_128x256_g16", 0, 8192, 8192, 8192, 0, 0, "f16", "f16", (128,256,64,4,2,4,128,16,"tma")),
 ("perftma4096_256x128_g8", 0, 4096, 4096, 4096, 0, 0, "f16", "f16", (256,128,64,8,1,4,128,8,"tma")),
 ("perftma4096_128x256_g8", 0, 4096, 4096, 4096, 0, 0, "f16", "f16", (128,256,64,4,2,4,128,8,"tma")),
]
man = []
for name, B, M, N, Kd, ta, tb, ti, to, tile in cases:
    tm, tn, tk, wm, wn, st = tile[:6]
    def shp(a, b):
        return ([B] if B else []) + [a, b]
    A = shp(Kd, M) if ta else shp(M, Kd)
    Bm = shp(N, Kd) if tb else shp(Kd, N)
    C = shp(M, N)
    t = lambda s, e: "tensor<" + "x".join(map(str, s)) + "x" + e + ">"
    attrs = []
    if ta: attrs.append("transpose_a")
    if tb: attrs.append("transpose_b")
    ad = (" {" + ", ".join(attrs) + "}") if attrs else ""
    # contiguous dims for load width
    def lwfor(n):
        w = 8
        while n % w: w //= 2
        return w
    lw = min(lwfor(M if ta else Kd), lwfor(Kd if tb else N))
    if len(tile) > 6:
        c = wgcfg.format(tm=tm, tn=tn, tk=tk, wm=wm, wn=wn, st=st, lw=lw,
                         inn=tile[6], gm=tile[7],
                         cp=tile[8] if len(tile) > 8 else "cp_async")
    else:
        c = cfg.format(tm=tm, tn=tn, tk=tk, wm=wm, wn=wn, st=st, lw=lw)
    mlir = f'''module attributes {{kgraph.target = "sm_90a"}} {{
func.func @main(%a: {t(A,ti)}, %b: {t(Bm,ti)}) -> {t(C,to)} {{
  %0 = kgraph.fused (%a, %b) {{kgraph.config = {c}}} : ({t(A,ti)}, {t(Bm,ti)}) -> {t(C,to)} {{
  ^bb0(%x: {t(A,ti)}, %y: {t(Bm,ti)}):
    %r = kgraph.matmul %x, %y{ad} : {t(A,ti)}, {t(Bm,ti)} -> {t(C,to)}
    kgraph.yield %r : {t(C,to)}
  }}
  return %0 : {t(C,to)}
}}
}}
'''
    p = os.path.join(out, name + ".mlir")
    open(p, "w").write(mlir)
    r = subprocess.run([K, "--tile=sm_90a", p, "-o", os.path.join(out, name + ".ptx")], capture_output=True, text=True)
    if r.returncode:
        print(name, "FAILED", r.stderr[:2000]); continue
    man.append(dict(name=name, B=B, M=M, N=N, K=Kd, ta=ta, tb=tb, ti=ti, to=to, A=A, Bs=Bm, C=C))
json.dump(man, open(os.path.join(out, "mm.json"), "w"), indent=1)
print(len(man), "cases")
