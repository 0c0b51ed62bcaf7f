#!/usr/bin/env python3
"""The f32 NCHW 3x3 stride-1 ResNet-50 conv2d benchmark layers compiled two
ways, direct (implicit GEMM on FMA) and Winograd F(4x4, 3x3)
(--winograd-convs), with the epilogue of a ResNet block (bias, relu), for
one comparison run on the GPU against cuDNN (bench/RESULTS.md).

    bench/conv_variants/winograd_build.py .gpu OUT_DIR build/bin/kgraph-opt   # here
    python3 bench/conv_variants/winograd_run.py OUT_DIR                       # on the GPU
"""
import glob
import json
import os
import re
import subprocess
import sys

cases_dir, out, opt = sys.argv[1], sys.argv[2], sys.argv[3]
os.makedirs(out, exist_ok=True)
VARIANTS = {"direct": [], "winograd": ["--winograd-convs"]}
manifest = []
for path in sorted(glob.glob(os.path.join(cases_dir, "bench_conv_f32_nchw_*_k3_s1.mlir"))):
    layer = os.path.basename(path)[len("bench_conv_f32_nchw_resnet_"):-len(".mlir")]
    text = open(path).read()
    x, w, y = re.search(r"%x: tensor<([0-9x]+)xf32>, %w: tensor<([0-9x]+)xf32>\) -> tensor<([0-9x]+)xf32>",
                        text).groups()
    f = int(y.split("x")[1])
    # The block's epilogue: a per-channel bias, then relu.
    body = re.search(r"  %r = kgraph.conv2d .*\n", text).group(0)
    graph = (f"func.func @main(%x: tensor<{x}xf32>, %w: tensor<{w}xf32>, %b: tensor<{f}x1x1xf32>)"
             f" -> tensor<{y}xf32> {{\n{body}"
             f"  %s = kgraph.add %r, %b : tensor<{y}xf32>, tensor<{f}x1x1xf32>\n"
             f"  %o = kgraph.relu %s : tensor<{y}xf32>\n  return %o : tensor<{y}xf32>\n}}\n")
    entry = {"layer": layer, "input": x, "filter": w, "output": y, "variants": []}
    for name, flags in VARIANTS.items():
        stem = os.path.join(out, f"{layer}__{name}")
        open(stem + ".mlir", "w").write(graph)
        r = subprocess.run([opt, "--fuse", "--tile=sm_90a", *flags, stem + ".mlir", "-o", stem + ".ptx"],
                           capture_output=True, text=True)
        if r.returncode == 0:
            entry["variants"].append(name)
        else:
            print(f"{layer} {name}: {r.stderr.splitlines()[0] if r.stderr else 'failed'}")
    manifest.append(entry)
json.dump(manifest, open(os.path.join(out, "variants.json"), "w"), indent=1)
print(sum(len(e["variants"]) for e in manifest), "builds")
