#!/usr/bin/env python3
"""Times every conv2d variant bench/conv_variants/build.py compiled against
cuDNN (torch channels_last, f16) in the same run, after a correctness check
against torch on the same inputs."""
import json
import os
import re
import sys

import torch
import torch.nn.functional as F

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "python"))
import kgraph  # noqa: E402
from triton.testing import do_bench  # noqa: E402

d = os.path.abspath(sys.argv[1])
dims = lambda s: [int(x) for x in s.split("x")]
for e in json.load(open(os.path.join(d, "variants.json"))):
    n, h, w, c = dims(e["input"])
    f, kh, kw, _ = dims(e["filter"])
    stride = int(re.search(r"strides = \[(\d+)", e["conv"]).group(1)) if "strides" in e["conv"] else 1
    pad = [int(x) for x in re.search(r"padding = \[([^\]]*)\]", e["conv"]).group(1).split(",")] \
        if "padding" in e["conv"] else [0, 0, 0, 0]
    x = torch.randn(n, h, w, c, device="cuda", dtype=torch.float16)
    wt = torch.randn(f, kh, kw, c, device="cuda", dtype=torch.float16)
    xc = x.permute(0, 3, 1, 2)  # NCHW view, channels_last memory
    wc = wt.permute(0, 3, 1, 2)
    ref = F.conv2d(xc.float(), wc.float(), stride=stride, padding=(pad[0], pad[2]))
    out_dtype = torch.float32 if e["out_dtype"] == "f32" else torch.float16
    y = torch.empty(dims(e["output"]), device="cuda", dtype=out_dtype)
    flops = 2 * ref.numel() * c * kh * kw
    ms_ref = do_bench(lambda: F.conv2d(xc, wc, stride=stride, padding=(pad[0], pad[2])),
                      warmup=25, rep=100, return_mode="median")
    line = [f"{e['layer']:<22} cuDNN {flops / ms_ref / 1e9:6.1f}"]
    for name in e["variants"]:
        prog = kgraph.load(os.path.join(d, f"{e['layer']}__{name}.plan.json"))
        y.fill_(float("nan"))
        prog.run([x, wt], [y])
        got = y.permute(0, 3, 1, 2).float()
        err = ((got - ref).norm() / ref.norm()).item()
        ms = do_bench(lambda: prog.run([x, wt], [y]), warmup=25, rep=100, return_mode="median")
        # Again after the timed launches (a stream-K kernel's workspace
        # must be left as it found it).
        y.fill_(float("nan"))
        prog.run([x, wt], [y])
        err = max(err, ((y.permute(0, 3, 1, 2).float() - ref).norm() / ref.norm()).item())
        line.append(f"{name} {flops / ms / 1e9:6.1f} ({ms_ref / ms:.2f}{'' if err < 1e-2 else ' WRONG'})")
    print("  ".join(line), flush=True)
