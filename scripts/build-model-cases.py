#!/usr/bin/python3
"""Import and compile the whole-model GPU test cases (issue 10: models in).

Runs where kgraph-opt exists (not on the GPU machine, which has no MLIR).
For each case it imports a PyTorch (or ONNX) model with kgraph.importers,
compiles it with ``kgraph-opt --fuse --tile=<target>``, and writes into
``<out>/models/``: ``<name>.mlir``, ``<name>.safetensors`` (the weights),
``<name>.ptx`` and ``<name>.plan.json``, ``<name>.state.pt`` (the torch
state dict, so the GPU machine's torch rebuilds the same model as the
reference), and ``models.json`` (the manifest test/GPU/test_models.py
reads): per case the source, layout, dtype, input shapes, tolerance,
kernel count and status ("ok", or "unsupported" with kgraph-opt's message
when a compile needs the data-movement code generation that is not there
yet; the GPU test skips those with that reason; any other failure is an
error and exits 1).

    scripts/build-model-cases.py build/bin/kgraph-opt .gpu [--target sm_90a]
        [--only NAME,...] [--no-large]

``--no-large`` leaves out ResNet-50 and the encoder layer (a quick run).
"""

import argparse
import json
import os
import re
import subprocess
import sys
import time

_HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(_HERE, "..", "python"))
sys.path.insert(0, os.path.join(_HERE, "..", "python", "tests"))

import torch  # noqa: E402

import model_cases  # noqa: E402
from kgraph.importers import import_model  # noqa: E402
sys.path.insert(0, _HERE)
import case_digest  # noqa: E402  (scripts/case_digest.py)

_DATA_MOVEMENT = re.compile(r"has no code generation")


def _resnet50():
    import torchvision
    torch.manual_seed(0)
    return torchvision.models.resnet50().eval()


def _encoder():
    torch.manual_seed(0)
    return torch.nn.TransformerEncoderLayer(768, 12, batch_first=True).eval()


def cases(large=True):
    """(name, dict) of every model case."""
    out = []
    for name, (_, shapes, layouts) in model_cases.CASES.items():
        for layout in layouts:
            out.append((f"{name}_{layout}", {
                "kind": "small", "case": name, "layout": layout, "dtype": "f32",
                "inputs": [list(s) for s in shapes], "tol": 1e-4}))
    for name, layout in (("conv_bn_relu", "nhwc"), ("mlp_gelu", "nchw"), ("head", "nhwc")):
        out.append((f"{name}_{layout}_f16", {
            "kind": "small", "case": name, "layout": layout, "dtype": "f16",
            "inputs": [list(s) for s in model_cases.CASES[name][1]], "tol": 1e-2}))
    if large:
        out += [
            ("resnet50_f32_nchw", {"kind": "resnet50", "layout": "nchw", "dtype": "f32",
                                   "inputs": [[8, 3, 224, 224]], "tol": 1e-4, "max_kernels": 85}),
            ("resnet50_f16_nhwc", {"kind": "resnet50", "layout": "nhwc", "dtype": "f16",
                                   "inputs": [[8, 3, 224, 224]], "tol": 1e-2, "max_kernels": 68}),
            ("resnet50_onnx_f32", {"kind": "resnet50_onnx", "layout": "nchw", "dtype": "f32",
                                   "inputs": [[1, 3, 224, 224]], "tol": 1e-4, "max_kernels": 67}),
            ("encoder_b8_s128_f32", {"kind": "encoder", "layout": "nchw", "dtype": "f32",
                                     "inputs": [[8, 128, 768]], "tol": 1e-4}),
            ("encoder_b8_s128_f16", {"kind": "encoder", "layout": "nchw", "dtype": "f16",
                                     "inputs": [[8, 128, 768]], "tol": 1e-2}),
            ("encoder_b8_s512_f16", {"kind": "encoder", "layout": "nchw", "dtype": "f16",
                                     "inputs": [[8, 512, 768]], "tol": 1e-2}),
        ]
    return out


def build(opt, folder, target, name, c):
    base = os.path.join(folder, name)
    if c["kind"] == "small":
        model, _ = model_cases.make(c["case"])
    elif c["kind"] in ("resnet50", "resnet50_onnx"):
        model = _resnet50()
    else:
        model = _encoder()
    torch.save(model.state_dict(), base + ".state.pt")
    src = model
    if c["kind"] == "resnet50_onnx":
        src = base + ".onnx"
        torch.onnx.export(model, torch.randn(*c["inputs"][0]), src, opset_version=13)
    t0 = time.time()
    r = import_model(src, inputs=None if c["kind"] == "resnet50_onnx" else
                     [(s, "f32") for s in c["inputs"]],
                     dtype=None if c["dtype"] == "f32" else c["dtype"],
                     layout=c["layout"], output=base + ".mlir")
    t1 = time.time()
    p = subprocess.run([opt, "--fuse", f"--tile={target}", base + ".mlir", "-o", base + ".ptx"],
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    t2 = time.time()
    entry = dict(c, name=name, mlir=name + ".mlir", plan=name + ".plan.json",
                 weights=os.path.basename(r.weights) if r.weights else None,
                 state=name + ".state.pt", ops=r.ops, import_s=round(t1 - t0, 2),
                 compile_s=round(t2 - t1, 2), ir_inputs=r.inputs, ir_outputs=r.outputs)
    if p.returncode != 0:
        msg = p.stderr.strip()
        if _DATA_MOVEMENT.search(msg):
            entry.update(status="unsupported", reason=msg.splitlines()[0])
        else:
            entry.update(status="error", reason=msg)
        return entry
    with open(base + ".plan.json") as f:
        plan = json.load(f)
        ks = (plan["functions"][0] if "functions" in plan else plan)["kernels"]
    kernels = len(ks)
    # Kernels per call (once kernels, run at load, left out) at most the
    # count this tree's passes give: more means a fusion was lost.
    per_call = sum(1 for k in ks if not k.get("once"))
    if c.get("max_kernels") is not None and per_call > c["max_kernels"]:
        entry.update(status="error", reason=f"{per_call} kernels per call, expected at most "
                                            f"{c['max_kernels']}")
        return entry
    entry.update(status="ok", kernels=kernels, kernels_per_call=per_call)
    return entry


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("kgraph_opt")
    ap.add_argument("out")
    ap.add_argument("--target", default="sm_90a")
    ap.add_argument("--only", default=None, help="comma-separated case names")
    ap.add_argument("--no-large", action="store_true")
    args = ap.parse_args()
    folder = os.path.join(args.out, "models")
    os.makedirs(folder, exist_ok=True)
    todo = cases(not args.no_large)
    if args.only:
        keep = set(args.only.split(","))
        todo = [(n, c) for n, c in todo if n in keep]
    entries, failed = [], 0
    for name, c in todo:
        e = build(os.path.abspath(args.kgraph_opt), folder, args.target, name, c)
        entries.append(e)
        extra = f"{e.get('kernels')} kernels" if e["status"] == "ok" else e["reason"][:120]
        print(f"{name}: {e['status']} (import {e['import_s']} s, kgraph-opt "
              f"{e['compile_s']} s) {extra}")
        failed += e["status"] == "error"
    with open(os.path.join(folder, "models.json"), "w") as f:
        json.dump({"target": args.target, "built_from": case_digest.built_from(),
                   "cases": entries}, f, indent=1)
    print(f"wrote {folder}/models.json: {len(entries)} cases, "
          f"{sum(e['status'] == 'ok' for e in entries)} ok, "
          f"{sum(e['status'] == 'unsupported' for e in entries)} unsupported, {failed} errors")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
