#!/usr/bin/env python3
"""Pinned-configuration variants of the ResNet-50 f16 NHWC conv2d benchmark
layers, next to the tiling model's own choice, for one exploration run on
the GPU (bench/RESULTS.md, "conv2d variants").

    bench/conv_variants/build.py .gpu OUT_DIR build/bin/kgraph-opt   # here
    python3 bench/conv_variants/run.py OUT_DIR                       # on the GPU

Reads the bench_conv_f16_nhwc_*.mlir cases that scripts/build-gpu-cases.py
wrote into the first folder.
"""
import glob
import json
import os
import re
import subprocess
import sys

cases_dir, out, opt = sys.argv[1], sys.argv[2], sys.argv[3]
os.makedirs(out, exist_ok=True)
VARIANTS = {  # name: (tile_m, tile_n, tile_k, warps_m, warps_n, stages)
    "t128x128x32_w2x2_s4": (128, 128, 32, 2, 2, 4),
    "t128x64x32_w2x2_s4": (128, 64, 32, 2, 2, 4),
    "t64x128x32_w2x2_s4": (64, 128, 32, 2, 2, 4),
    "t128x128x64_w2x2_s3": (128, 128, 64, 2, 2, 3),
}
CONFIG = re.compile(r"#kgraph\.matmul_config<[^>]*>")
manifest = []
for path in sorted(glob.glob(os.path.join(cases_dir, "bench_conv_f16_nhwc_*.mlir"))):
    layer = os.path.basename(path)[len("bench_conv_f16_nhwc_resnet_"):-len(".mlir")]
    tiled = subprocess.run([opt, "--tile=sm_90a", "--emit=tiled", path],
                           capture_output=True, text=True, check=True).stdout
    chosen = CONFIG.search(tiled).group(0)
    shapes = re.search(r"func.func @main\(%\w+: tensor<([0-9x]+)xf16>, %\w+: tensor<([0-9x]+)xf16>\) -> tensor<([0-9x]+)x(\w+)>",
                       open(path).read())
    attrs = re.search(r"kgraph.conv2d [^:]*", open(path).read()).group(0)
    entry = {"layer": layer, "input": shapes.group(1), "filter": shapes.group(2),
             "output": shapes.group(3), "out_dtype": shapes.group(4),
             "conv": attrs, "variants": {}}
    configs = {"model": chosen}
    lw = re.search(r"load_width = (\d+)", chosen).group(1)
    for name, (tm, tn, tk, wm, wn, st) in VARIANTS.items():
        configs[name] = (f"#kgraph.matmul_config<tile_m = {tm}, tile_n = {tn}, tile_k = {tk}, "
                         f"warps_m = {wm}, warps_n = {wn}, stages = {st}, instruction = mma_sync, "
                         f"instruction_shape = [16, 8, 16], load_width = {lw}, smem_padding = 8>")
    for name, cfg in configs.items():
        text = CONFIG.sub(cfg, tiled)
        stem = os.path.join(out, f"{layer}__{name}")
        open(stem + ".mlir", "w").write(text)
        r = subprocess.run([opt, "--tile=sm_90a", stem + ".mlir", "-o", stem + ".ptx"],
                           capture_output=True, text=True)
        if r.returncode == 0:
            entry["variants"][name] = cfg
        else:
            print(f"{layer} {name}: {r.stderr.splitlines()[0] if r.stderr else 'failed'}")
    manifest.append(entry)
json.dump(manifest, open(os.path.join(out, "variants.json"), "w"), indent=1)
print(sum(len(e["variants"]) for e in manifest), "kernels")
