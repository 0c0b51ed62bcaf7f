#!/usr/bin/env python3
"""Times the direct and Winograd builds of winograd_build.py against cuDNN
(TF32 off) on the same inputs, after checking each against a float64 conv
(outputs poisoned with NaN first). Prints one line per layer; --json writes
the rows."""
import json
import os
import sys

import torch
import torch.nn.functional as F

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "python"))
import kgraph  # noqa: E402
from triton.testing import do_bench  # noqa: E402

torch.backends.cuda.matmul.allow_tf32 = False
torch.backends.cudnn.allow_tf32 = False
torch.backends.cudnn.benchmark = True
d = os.path.abspath(sys.argv[1])
json_out = sys.argv[3] if len(sys.argv) > 3 and sys.argv[2] == "--json" else None
dims = lambda s: [int(v) for v in s.split("x")]
rows, failed = [], False
print(torch.cuda.get_device_name(), flush=True)
for e in json.load(open(os.path.join(d, "variants.json"))):
    n, c, hw = e["n"], e["c"], e["hw"]
    nhwc = e["layout"] == "nhwc"
    gen = torch.Generator(device="cuda").manual_seed(7)
    x = torch.rand(n, c, hw, hw, device="cuda", generator=gen) * 2 - 1
    wt = (torch.rand(c, c, 3, 3, device="cuda", generator=gen) * 2 - 1) / (9 * c) ** 0.5
    b = torch.rand(c, device="cuda", generator=gen) - 0.5
    if nhwc:  # torch's channels_last: the same NCHW view of NHWC storage
        x, wt = x.to(memory_format=torch.channels_last), wt.to(memory_format=torch.channels_last)
    ref = torch.relu(F.conv2d(x.double(), wt.double(), padding=1) + b.double().view(c, 1, 1))
    flops = 2 * n * c * hw * hw * c * 9
    run_ref = lambda: torch.relu(F.conv2d(x, wt, padding=1) + b.view(c, 1, 1))
    ms_ref = do_bench(run_ref, warmup=25, rep=100, return_mode="median")
    row = {"layer": e["layer"], "cudnn_ms": ms_ref}
    line = [f"{e['layer']:<22} cuDNN+bias+relu {ms_ref * 1e3:7.1f} us"]
    # kgraph's tensors: NCHW contiguous, or NHWC (permuted to contiguous).
    store = (lambda v: v.permute(0, 2, 3, 1).contiguous()) if nhwc else (lambda v: v.contiguous())
    inputs = [store(x), store(wt), b if nhwc else b.view(c, 1, 1).contiguous()]
    ref_k = store(ref)
    for name in e["variants"]:
        prog = kgraph.load(os.path.join(d, f"{e['layer']}__{name}.plan.json"))
        y = torch.full(ref_k.shape, float("nan"), device="cuda")
        prog.run(inputs, [y])
        torch.cuda.synchronize()
        err = ((y.double() - ref_k).abs().max() / ref_k.abs().max()).item()
        ok = err < 1e-4 and not torch.isnan(y).any().item()
        failed |= not ok
        ms = do_bench(lambda: prog.run(inputs, [y]), warmup=25, rep=100, return_mode="median")
        row[name] = {"ms": ms, "ratio": ms_ref / ms, "max_rel_err": err, "ok": ok}
        line.append(f"{name} {ms * 1e3:7.1f} us {flops / ms / 1e9:5.1f} TFLOP/s "
                    f"x{ms_ref / ms:.3f} err {err:.1e}{'' if ok else ' WRONG'}")
    rows.append(row)
    print("  ".join(line), flush=True)
if json_out:
    json.dump(rows, open(json_out, "w"), indent=1)
sys.exit(1 if failed else 0)
