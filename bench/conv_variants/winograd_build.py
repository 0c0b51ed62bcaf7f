#!/usr/bin/env python3
"""The 3x3 stride-1 f32 conv2d layers of ResNet-50 (with a ResNet block's
epilogue: bias, relu) compiled two ways, direct (implicit GEMM on FMA) and
Winograd F(4x4, 3x3), at the given batches and layouts, for one comparison
run on the GPU against cuDNN (bench/RESULTS.md).

    bench/conv_variants/winograd_build.py OUT_DIR build/bin/kgraph-opt [--batch 64,1] [--layout nchw,nhwc]
    python3 bench/conv_variants/winograd_run.py OUT_DIR       # on the GPU
"""
import argparse
import json
import os
import subprocess

p = argparse.ArgumentParser()
p.add_argument("out")
p.add_argument("opt")
p.add_argument("--batch", default="64")
p.add_argument("--layout", default="nchw")
args = p.parse_args()
os.makedirs(args.out, exist_ok=True)
LAYERS = [(64, 56), (128, 28), (256, 14), (512, 7)]  # channels (= filters), H = W
# Winograd forced (the default floors would keep the batch-1 layers direct).
VARIANTS = {"direct": ["--winograd-convs=false"],
            "winograd": ["--winograd-convs", "--winograd-min-macs=0"]}


def t(shape):
    return f"tensor<{'x'.join(map(str, shape))}xf32>"


manifest = []
for layout in args.layout.split(","):
    for n in map(int, args.batch.split(",")):
        for c, hw in LAYERS:
            nhwc = layout == "nhwc"
            x = [n, hw, hw, c] if nhwc else [n, c, hw, hw]
            w = [c, 3, 3, c] if nhwc else [c, c, 3, 3]
            b = [c] if nhwc else [c, 1, 1]
            lay = "layout = nhwc " if nhwc else ""
            graph = (f"func.func @main(%x: {t(x)}, %w: {t(w)}, %b: {t(b)}) -> {t(x)} {{\n"
                     f"  %r = kgraph.conv2d %x, %w {lay}strides = [1, 1] padding = [1, 1, 1, 1]"
                     f" : {t(x)}, {t(w)} -> {t(x)}\n"
                     f"  %s = kgraph.add %r, %b : {t(x)}, {t(b)}\n"
                     f"  %o = kgraph.relu %s : {t(x)}\n  return %o : {t(x)}\n}}\n")
            layer = f"{layout}_b{n}_c{c}_hw{hw}"
            entry = {"layer": layer, "layout": layout, "n": n, "c": c, "hw": hw, "variants": []}
            for name, flags in VARIANTS.items():
                stem = os.path.join(args.out, f"{layer}__{name}")
                open(stem + ".mlir", "w").write(graph)
                r = subprocess.run([args.opt, "--fuse", "--tile=sm_90a", *flags, stem + ".mlir",
                                    "-o", stem + ".ptx"], capture_output=True, text=True)
                if r.returncode == 0:
                    entry["variants"].append(name)
                else:
                    print(f"{layer} {name}: {r.stderr.splitlines()[0] if r.stderr else 'failed'}")
            manifest.append(entry)
json.dump(manifest, open(os.path.join(args.out, "variants.json"), "w"), indent=1)
print(sum(len(e["variants"]) for e in manifest), "builds")
