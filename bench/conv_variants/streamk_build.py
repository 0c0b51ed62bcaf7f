#!/usr/bin/env python3
"""Stream-K variants (stream_k = persistent blocks) of the ResNet-50 f16
NHWC conv2d benchmark layers whose model pick is a TMA kernel, next to the
pick, in bench/conv_variants/build.py's manifest format (run.py times them).

    bench/conv_variants/streamk_build.py .gpu OUT_DIR build/bin/kgraph-opt [BLOCKS ...]
    bench/conv_variants/streamk_build.py --persistent .gpu OUT_DIR build/bin/kgraph-opt

--persistent: every layer (whatever its pick's copy engine), and only
grids of whole tiles: each tile shape as a data-parallel TMA grid and as
persistent grids of one block per SM (the largest divisor of the tiles
between 3/4 of the SMs and all of them) and of two (between 3/2 of the SMs
and twice them, 2 stages so that two blocks fit).
"""
import glob
import json
import os
import re
import subprocess
import sys

args = sys.argv[1:]
persistent = "--persistent" in args
if persistent:
    args.remove("--persistent")
cases_dir, out, opt = args[0], args[1], args[2]
blocks = [int(b) for b in args[3:]] or [132]
SMS = 132
os.makedirs(out, exist_ok=True)
CONFIG = re.compile(r"#kgraph\.matmul_config<[^>]*>")


def field(cfg, key):
    return int(re.search(key + r" = (\d+)", cfg).group(1))


def with_fields(cfg, **kv):
    for k, v in kv.items():
        cfg = re.sub(k + r" = \d+", f"{k} = {v}", cfg)
    return cfg


def divisor(tiles, lo, hi):
    """The largest divisor of `tiles` in [lo, hi] below `tiles`, or 0."""
    return next((d for d in range(min(hi, tiles - 1), lo - 1, -1) if tiles % d == 0), 0)


def tile_base(chosen, pick, m, n):
    """The model's pick `chosen` (tile `pick`) with an m x n tile: the
    instruction's N follows it, and another shape gets one warpgroup per
    128 x 128 of the tile (the pick keeps its own warps)."""
    base = with_fields(chosen, tile_m=m, tile_n=n)
    base = re.sub(r"instruction_shape = \[64, \d+, 16\]",
                  f"instruction_shape = [64, {min(n, 256)}, 16]", base)
    if (m, n) != pick:
        base = with_fields(base, warps_m=4 * max(1, m * n // (128 * 128)), warps_n=1)
    return base


def add_persistent(candidates, chosen, pick, m, n, pixels, f_out):
    """Tile m x n as a data-parallel TMA grid and as persistent grids of
    whole tiles, one and two blocks per SM."""
    base = re.sub(r", (copy = \w+|stream_k = \d+)", "", tile_base(chosen, pick, m, n))
    base = re.sub(r", group_m = \d+", "", base)[:-1] + ", copy = tma>"
    candidates[f"t{m}x{n}_tma"] = [with_fields(base, stages=s) for s in (5, 4, 3, 2)]
    tiles = -(-pixels // m) * -(-f_out // n)
    for lo, hi, stages in ((-(-3 * SMS // 4), SMS, (5, 4, 3, 2)),
                           (-(-3 * SMS // 2), 2 * SMS, (2,))):
        b = divisor(tiles, lo, hi)
        if b:
            sk = base[:-1] + f", stream_k = {b}>"
            candidates[f"t{m}x{n}_pw{b}"] = [with_fields(sk, stages=s) for s in stages]


manifest = []
for path in sorted(glob.glob(os.path.join(cases_dir, "bench_conv_f16_nhwc_*.mlir"))):
    layer = os.path.basename(path)[len("bench_conv_f16_nhwc_resnet_"):-len(".mlir")]
    tiled = subprocess.run([opt, "--tile=sm_90a", "--emit=tiled", path],
                           capture_output=True, text=True, check=True).stdout
    chosen = CONFIG.search(tiled).group(0)
    if "copy = tma" not in chosen and not persistent:
        continue
    src = open(path).read()
    shapes = re.search(r"func.func @main\(%\w+: tensor<([0-9x]+)xf16>, %\w+: "
                       r"tensor<([0-9x]+)xf16>\) -> tensor<([0-9x]+)x(\w+)>", src)
    entry = {"layer": layer, "input": shapes.group(1), "filter": shapes.group(2),
             "output": shapes.group(3), "out_dtype": shapes.group(4),
             "conv": re.search(r"kgraph.conv2d [^:]*", src).group(0), "variants": {}}
    candidates = {"model": [chosen]}
    tm, tn = field(chosen, "tile_m"), field(chosen, "tile_n")
    f_out = int(shapes.group(3).split("x")[-1])
    shapes_tried = {(tm, tn), (128, 128)}
    if f_out >= 256:
        shapes_tried.add((128, 256))
    out_dims = [int(x) for x in shapes.group(3).split("x")]
    pixels = out_dims[0] * out_dims[1] * out_dims[2]
    if persistent:
        shapes_tried |= {(256, 64), (128, 64)}
    for (m, n) in sorted(shapes_tried):
        if persistent:
            add_persistent(candidates, chosen, (tm, tn), m, n, pixels, f_out)
            continue
        base = tile_base(chosen, (tm, tn), m, n)
        if (m, n) != (tm, tn):
            candidates[f"t{m}x{n}"] = [with_fields(base, stages=s) for s in (5, 4, 3)]
        for b in blocks:
            sk = re.sub(r", group_m = \d+", "", base)[:-1] + f", stream_k = {b}>"
            candidates[f"t{m}x{n}_sk{b}"] = [with_fields(sk, stages=s)
                                             for s in (5, 4, 3, 2)]
            if (m, n) == (128, 128):
                # 4 stages too: S25-1 found the 5-stage persistent loop slow.
                candidates[f"t{m}x{n}_sk{b}_s4"] = [with_fields(sk, stages=4)]
        # Whole tiles per block (a persistent data-parallel grid: the next
        # tile's loads under this one's epilogue) where a block count of at
        # least 3/4 of the SMs divides the tiles.
        tiles = -(-pixels // m) * -(-f_out // n)
        whole = divisor(tiles, -(-3 * max(blocks) // 4), max(blocks))
        if whole:
            sk = re.sub(r", group_m = \d+", "", base)[:-1] + f", stream_k = {whole}>"
            candidates[f"t{m}x{n}_skwhole{whole}"] = [with_fields(sk, stages=s)
                                                      for s in (5, 4, 3, 2)]
    for name, cfgs in candidates.items():
        for cfg in cfgs:
            stem = os.path.join(out, f"{layer}__{name}")
            open(stem + ".mlir", "w").write(CONFIG.sub(cfg, tiled))
            r = subprocess.run([opt, "--tile=sm_90a", stem + ".mlir", "-o", stem + ".ptx"],
                               capture_output=True, text=True)
            if r.returncode == 0:
                entry["variants"][name] = cfg
                break
        else:
            print(f"{layer} {name}: {r.stderr.splitlines()[0] if r.stderr else 'failed'}")
    manifest.append(entry)
    print(layer, {k: re.search(r"stages = (\d+)", v).group(1) for k, v in entry["variants"].items()})
json.dump(manifest, open(os.path.join(out, "variants.json"), "w"), indent=1)
print(sum(len(e["variants"]) for e in manifest), "kernels")
