#!/usr/bin/env python3
"""f16 matmuls with few output tiles and long K (the grids stream-K is for),
compiled with the model's configuration and as stream-K variants of it
(stream_k = 132 persistent blocks; tile 128x128 too; whole tiles per
block at 5 and 4 stages, the persistent loop's control), for
bench/gemm_variants/streamk_run.py to time against cuBLAS (torch.matmul).

    bench/gemm_variants/streamk_build.py OUT_DIR build/bin/kgraph-opt
"""
import json
import os
import re
import subprocess
import sys

out, opt = sys.argv[1], sys.argv[2]
os.makedirs(out, exist_ok=True)
SHAPES = [(256, 256, 32768), (512, 512, 16384), (1024, 1024, 8192), (2048, 1024, 4096),
          (3136, 512, 2048), (4096, 4096, 4096)]
CONFIG = re.compile(r"#kgraph\.matmul_config<[^>]*>")


def mlir(m, n, k):
    return (f"func.func @main(%a: tensor<{m}x{k}xf16>, %b: tensor<{k}x{n}xf16>) -> tensor<{m}x{n}xf16> {{\n"
            f"  %0 = kgraph.matmul %a, %b : tensor<{m}x{k}xf16>, tensor<{k}x{n}xf16> -> tensor<{m}x{n}xf16>\n"
            f"  return %0 : tensor<{m}x{n}xf16>\n}}\n")


manifest = []
for (m, n, k) in SHAPES:
    name = f"mm_{m}x{n}x{k}"
    src = os.path.join(out, name + ".mlir")
    open(src, "w").write(mlir(m, n, k))
    tiled = subprocess.run([opt, "--fuse", "--tile=sm_90a", "--emit=tiled", src],
                           capture_output=True, text=True, check=True).stdout
    chosen = CONFIG.search(tiled).group(0)
    base = re.sub(r", group_m = \d+", "", chosen)
    if "copy = tma" not in base:
        base = base[:-1] + ", copy = tma>"
    t128 = ("#kgraph.matmul_config<tile_m = 128, tile_n = 128, tile_k = 64, warps_m = 4, "
            "warps_n = 1, stages = 5, instruction = wgmma, instruction_shape = [64, 128, 16], "
            "load_width = 8, smem_padding = 0, copy = tma>")
    variants = {"model": [chosen], "t128x128": [t128],
                "t128x128_sk132": [re.sub(r"stages = \d+", f"stages = {s}",
                                          t128[:-1] + ", stream_k = 132>") for s in (5, 4, 3)]}
    # Whole tiles per block (no split, no fixup): the persistent loop's own
    # cost against the data-parallel grid, at 5 and 4 stages.
    tiles = -(-m // 128) * -(-n // 128)
    whole = max(b for b in range(1, 133) if tiles % b == 0)
    if tiles >= 64:
        for s in (5, 4):
            variants[f"t128x128_skwhole{whole}_s{s}"] = [
                re.sub(r"stages = \d+", f"stages = {s}", t128[:-1] + f", stream_k = {whole}>")]
    if n >= 256 and -(-m // 128) * -(-n // 256) >= 132:
        tiles256 = -(-m // 128) * -(-n // 256)
        w256 = max(b for b in range(1, 133) if tiles256 % b == 0)
        t256 = t128.replace("tile_n = 128", "tile_n = 256").replace("warps_m = 4", "warps_m = 8") \
            .replace("[64, 128, 16]", "[64, 256, 16]")
        variants[f"t128x256_skwhole{w256}"] = [
            re.sub(r"stages = \d+", f"stages = {s}", t256[:-1] + f", stream_k = {w256}>")
            for s in (3, 2)]
    if "wgmma" in base:
        variants["sk132"] = [re.sub(r"stages = \d+", f"stages = {s}",
                                    base[:-1] + ", stream_k = 132>") for s in (5, 4, 3, 2)]
    entry = {"name": name, "m": m, "n": n, "k": k, "variants": {}}
    for v, cfgs in variants.items():
        for cfg in cfgs:
            stem = os.path.join(out, f"{name}__{v}")
            open(stem + ".mlir", "w").write(CONFIG.sub(cfg, tiled))
            r = subprocess.run([opt, "--tile=sm_90a", stem + ".mlir", "-o", stem + ".ptx"],
                               capture_output=True, text=True)
            if r.returncode == 0:
                entry["variants"][v] = cfg
                break
        else:
            print(name, v, r.stderr.splitlines()[0] if r.stderr else "failed")
    print(name, {v: c.split("tile_m = ")[1].split(",")[0] + "x" + c.split("tile_n = ")[1].split(",")[0]
                 for v, c in entry["variants"].items()})
    manifest.append(entry)
json.dump(manifest, open(os.path.join(out, "variants.json"), "w"), indent=1)
