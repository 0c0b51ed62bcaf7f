#!/usr/bin/env python3
"""conv2d throughput of kgraph (implicit GEMM) against cuDNN (torch conv2d),
measured in the same run, plus what limits each kernel (ptxas registers and
spills, the SASS instruction mix).

Cases come from the "conv_bench" section of the manifest that
scripts/build-gpu-cases.py writes: the ten ResNet-50 layers of
../shared/docs/h200-anchors.md at batch 64, in f16 NHWC (cuDNN through
torch channels_last) and f32 NCHW (cuDNN with TF32 off). Cases kgraph-opt
has no code generation for (f32 until the fma instruction exists) are
skipped and listed.

Every kgraph result is checked first against a float64 conv2d
(test/GPU/conv_ref.py, the bounds loosened 4x): a wrong kernel is not timed
and fails the run. Timing as bench/bench_matmul.py (triton do_bench, else
CUDA events); ratios are kgraph / cuDNN throughput, with their geometric
mean per kind (the issue's target: f16 NHWC >= 0.40). Cases with a tuned
build (scripts/build-tuned-cases.py: the same case compiled with a tuning
database) are checked and timed a second time in the same run.

    python3 bench/bench_conv.py --cases .gpu [--json out.json] [--kinds f16_nhwc]
    python3 bench/bench_conv.py --cases .gpu --ptxas     # no GPU needed

Writes JSON to --json, else to $OUT/bench_conv.json (bench_conv_ptxas.json
for --ptxas) when $OUT is set. Exit 1 if a kgraph result is wrong or a case
failed to compile (status "error").
"""

import argparse
import math
import os
import sys
import zlib

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import benchlib  # noqa: E402
from benchlib import CHECK_SCALE  # noqa: E402

KINDS = ("f16_nhwc", "f32_nchw")


def layer_str(c):
    """The anchors' row name: C_in, H=W, C_out, kernel, stride."""
    g = c["conv"]
    return (f"{g['c']}, {g['h']}, {g['f']}, {g['kh']}x{g['kw']}, "
            f"s{g['strides'][0]}")


def load_manifest(path):
    manifest, path, base = benchlib.read_manifest(path)
    if "conv_bench" not in manifest:
        sys.exit(f"error: {path} has no conv_bench section (rebuild it with "
                 f"scripts/build-gpu-cases.py --suite conv, without --no-bench)")
    return manifest, base


def summarize(rows, key="ratio"):
    """{kind: geometric mean of kgraph/cuDNN} (None if nothing measured);
    key="tuned_ratio": of the tuned builds."""
    geo = {}
    for kind in KINDS:
        rs = [r[key] for r in rows if r["kind"] == kind and r.get(key)]
        geo[kind] = math.exp(sum(map(math.log, rs)) / len(rs)) if rs else None
    return geo


def cudnn_layout(torch, c, t):
    """The stored nhwc tensor as torch's channels_last NCHW view (no copy);
    nchw as is."""
    if c["conv"]["layout"] == "nhwc":
        return t.permute(0, 3, 1, 2)
    return t


def bench_case(c, base, timer, dev=None):
    """One row: correctness of kgraph, then kgraph and cuDNN timings."""
    import torch
    import kgraph
    import conv_ref as CR

    g = c["conv"]
    kind = c["bench_kind"]
    row = {"kind": kind, "layer": layer_str(c), "case": c["name"],
           "flops": c["flops"]}
    dev = dev or torch.device("cuda")
    benchlib.set_tf32(torch, False)
    torch.backends.cudnn.allow_tf32 = False
    in_dt = CR.TORCH_DTYPES[c["inputs"][0]["dtype"]]
    out_dt = CR.TORCH_DTYPES[c["output"]["dtype"]]
    gen = torch.Generator(device=dev).manual_seed(zlib.crc32(c["name"].encode()))
    x = (torch.rand(c["inputs"][0]["shape"], device=dev, generator=gen) * 2 - 1).to(in_dt)
    w = (torch.rand(c["inputs"][1]["shape"], device=dev, generator=gen) * 2 - 1).to(in_dt)
    out = torch.full(c["output"]["shape"], float("nan"), device=dev, dtype=out_dt)

    prog = kgraph.load(os.path.join(base, c["plan"]))
    prog.run([x, w], [out])
    if dev.type == "cuda":
        torch.cuda.synchronize(dev)
    ref, s = CR.reference(c, x, w)
    err = CR.compare(c, out, ref, s, norm_scale=CHECK_SCALE)

    top, bottom, left, right = g["padding"]
    symmetric = top == bottom and left == right
    xc, wc = cudnn_layout(torch, c, x), cudnn_layout(torch, c, w)

    def run_cudnn():
        xi = xc if symmetric else torch.nn.functional.pad(xc, (left, right, top, bottom))
        return torch.nn.functional.conv2d(
            xi, wc, stride=tuple(g["strides"]),
            padding=(top, left) if symmetric else 0,
            dilation=tuple(g["dilations"]), groups=g["groups"])

    cud = run_cudnn()
    cud_stored = cud.permute(0, 2, 3, 1) if g["layout"] == "nhwc" else cud
    import matmul_ref as MR
    row["rel_err"] = MR.rel_norm_error(out, ref)
    row["cudnn_rel_err"] = MR.rel_norm_error(cud_stored, ref)
    # The tuning database's build of the case (scripts/build-tuned-cases.py),
    # checked against the same reference into a poisoned output.
    tuned = None
    if c.get("tuned_plan"):
        tuned = kgraph.load(os.path.join(base, c["tuned_plan"]))
        out_t = torch.full_like(out, float("nan"))
        tuned.run([x, w], [out_t])
        if dev.type == "cuda":
            torch.cuda.synchronize(dev)
        t_err = CR.compare(c, out_t, ref, s, norm_scale=CHECK_SCALE)
        row["tuned_by"] = c.get("tuned_by")
        row["tuned_rel_err"] = MR.rel_norm_error(out_t, ref)
        if t_err:
            row["error"] = f"wrong result of the tuned build: {t_err}"
    del ref, s, cud, cud_stored
    if err:
        row["error"] = f"wrong result: {err}"
    if "error" in row:
        return row

    def run_kgraph():
        prog.run([x, w], [out])

    benchlib.time_against(row, c["flops"], timer, run_kgraph, "cudnn", run_cudnn)
    if tuned is not None:
        benchlib.time_tuned(row, c["flops"], timer,
                            lambda: tuned.run([x, w], [out_t]), "cudnn")
        del out_t
    del x, w, out
    if dev.type == "cuda":
        torch.cuda.empty_cache()
    return row


def print_rows(rows, method):
    print(f"\n{'kind':<9} {'layer (C, HW, F, k, s)':<24} {'kgraph ms':>10} "
          f"{'TFLOP/s':>8} {'cuDNN ms':>9} {'TFLOP/s':>8} {'kg/cuDNN':>8} "
          f"{'rel err':>9} {'cuDNN err':>9}   ({method})")
    for r in rows:
        if "error" in r:
            print(f"{r['kind']:<9} {r['layer']:<24} FAILED: {r['error'][:160]}")
            continue
        print(f"{r['kind']:<9} {r['layer']:<24} {r['kgraph_ms']:10.4f} "
              f"{r['kgraph_tflops']:8.1f} {r['cudnn_ms']:9.4f} "
              f"{r['cudnn_tflops']:8.1f} {r['ratio']:8.3f} {r['rel_err']:9.2e} "
              f"{r['cudnn_rel_err']:9.2e}" + benchlib.tuned_text(r, "cuDNN"))


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    benchlib.add_cases_args(ap)
    benchlib.add_kinds_arg(ap, KINDS, "comma-separated subset of " + ",".join(KINDS))
    benchlib.add_method_ptxas_args(ap)
    args = ap.parse_args(argv)

    kinds = benchlib.parse_kinds(ap, args, KINDS)
    manifest, base = load_manifest(args.cases)
    cases = [c for c in manifest["conv_bench"] if c["bench_kind"] in kinds]
    skipped = benchlib.skipped_cases(cases, "layer", layer_str)
    errors = [s for s in skipped if s["status"] != "unsupported"]

    report, rc = benchlib.ptxas_step(args, manifest, cases, base, _print_skipped,
                                     skipped, errors, "bench_conv_ptxas.json")
    if rc is not None:
        return rc

    import torch
    benchlib.require_gpu(torch)
    method = benchlib.resolve_method(args.method)
    timer = benchlib.timer_of(method)

    rows = benchlib.bench_rows(
        cases, lambda c: bench_case(c, base, timer),
        lambda r: (f"{r['kind']:<9} {r['layer']:<24} kgraph {r['kgraph_tflops']:7.1f}"
                   f" cuDNN {r['cudnn_tflops']:7.1f} TFLOP/s  ratio "
                   f"{r['ratio']:.3f}"))
    benchlib.print_device(torch, manifest)
    print_rows(rows, method)
    _print_skipped(skipped)
    geo = summarize(rows)
    print("kgraph / cuDNN geometric mean: " + ", ".join(
        f"{k} {v:.3f}" if v else f"{k} -" for k, v in geo.items()))
    tuned_geo = summarize(rows, "tuned_ratio")
    if any(tuned_geo.values()):
        print("tuned (tuning database) / cuDNN geometric mean: " + ", ".join(
            f"{k} {v:.3f}" if v else f"{k} -" for k, v in tuned_geo.items()))
    wrong = [r for r in rows if "error" in r]
    result = {"device": torch.cuda.get_device_name(), "torch": torch.__version__,
              "target": manifest.get("target"), "method": method,
              "rows": rows, "skipped": skipped, "geomean_ratio": geo,
              "tuned_geomean_ratio": tuned_geo,
              "wrong": [r["case"] for r in wrong], "ptxas": report}
    benchlib.write_json(result, args.json, "bench_conv.json")
    return 1 if wrong or errors else 0


def _print_skipped(skipped):
    if not skipped:
        return
    print(f"\nskipped {len(skipped)} case(s):")
    for s in skipped:
        reason = (s["reason"] or "").strip().splitlines()
        print(f"  {s['kind']:<9} {s['layer']:<24} {s['status']}: "
              f"{reason[0] if reason else ''}")


if __name__ == "__main__":
    sys.exit(main())
