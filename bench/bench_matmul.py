#!/usr/bin/env python3
"""GEMM throughput of kgraph.matmul against cuBLAS (torch.matmul), measured in
the same run, plus what limits each kernel (ptxas registers and spills, the
SASS instruction mix).

Cases come from the "matmul_bench" section of the manifest that
scripts/build-gpu-cases.py writes: f32 (precision ieee), tf32, f16 -> f16 and
bf16 -> bf16, A [M,K] x B [K,N] at 1024^3, 2048^3, 4096^3, 8192^3 and the odd
shapes of ../shared/docs/h200-anchors.md (16384x1024x4096, 8192x3072x768,
256x1000x2048, 3136x64x576; M x N x K). cuBLAS runs the same product with TF32
allowed for the tf32 rows and not for f32 (torch.backends.cuda.matmul:
fp32_precision "tf32"/"ieee" where torch has it, else allow_tf32).
Cases kgraph-opt has no code generation for are skipped and listed.

Every kgraph result is checked first (poisoned output, float64 reference on
the GPU, the bounds of test/GPU/matmul_ref.py loosened 4x): a wrong kernel is
not timed and fails the run. cuBLAS's error is reported too (for f32 it shows
whether TF32 really was off).

Timing: triton.testing.do_bench (median; it flushes the L2 before each call)
when triton is importable, else CUDA events around back-to-back calls
(median of trials). Inputs and outputs rotate over enough copies to exceed
4x the L2 (60 MB on the H200) when one set is smaller. TFLOP/s = 2 B M N K /
time.

    python3 bench/bench_matmul.py --cases .gpu [--json out.json] [--kinds f16,bf16]
    python3 bench/bench_matmul.py --cases .gpu --ptxas     # no GPU needed

``--ptxas`` only assembles each bench kernel's PTX with ``ptxas -arch=<target>
-v`` and reports registers, spills, stack and shared memory per kernel, and,
where cuobjdump exists (CUDA toolkit or triton's bundled copy), the SASS
instruction mix of the cubin (HMMA, IMMA, HGMMA, LDSM, LDGSTS, LDG, STG, LDS,
STS, LDL, STL, FFMA, BAR). The GPU run includes the same report.

Writes JSON to --json, else to $OUT/bench_matmul.json (bench_matmul_ptxas.json
for --ptxas) when $OUT is set. Exit 1 if a kgraph result is wrong or a case
failed to compile (status "error").
"""

import argparse
import math
import os
import re
import sys
import zlib

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import benchlib  # noqa: E402
# Also bench_matmul's own names for its self-tests (test/GPU/test_bench_matmul.py).
from benchlib import (CHECK_SCALE, REPO, SASS_OPS, find_tool, parse_ptxas_verbose,  # noqa: E402,F401
                      parse_sass_mix, print_ptxas_report, ptxas_report, set_tf32,
                      time_do_bench, time_events, write_json)

KINDS = ("f32", "tf32", "f16", "bf16")
DEFAULT_L2 = 60 * 1024 * 1024
SIZES = {"f32": 4, "f16": 2, "bf16": 2, "i8": 1, "i32": 4}


# --- the manifest -------------------------------------------------------------------------


def load_manifest(path):
    manifest, path, base = benchlib.read_manifest(path)
    if "matmul_bench" not in manifest:
        sys.exit(f"error: {path} has no matmul_bench section (rebuild it with "
                 f"scripts/build-gpu-cases.py, without --no-bench)")
    return manifest, base


def select(cases, kinds, shapes_rx):
    rx = re.compile(shapes_rx) if shapes_rx else None
    out = []
    for c in cases:
        if c.get("bench_kind") not in kinds:
            continue
        d = c["dims"]
        if rx and not rx.search(f"{d['m']}x{d['n']}x{d['k']}"):
            continue
        out.append(c)
    return out


def shape_str(c):
    d = c["dims"]
    return f"{d['m']}x{d['n']}x{d['k']}"


def rotation_count(c, l2_bytes):
    """Copies of (A, B, C) to rotate over so that they exceed 4x the L2."""
    d = c["dims"]
    in_sz, out_sz = SIZES[c["inputs"][0]["dtype"]], SIZES[c["output"]["dtype"]]
    per_set = (d["m"] * d["k"] + d["k"] * d["n"]) * in_sz + d["m"] * d["n"] * out_sz
    return max(1, min(64, math.ceil(4 * l2_bytes / per_set)))


def summarize(rows):
    """{kind: kgraph/cuBLAS at 4096^3 (None if not measured)} and the
    geometric mean of the ratios per kind."""
    at4096, geo = {}, {}
    for kind in KINDS:
        rs = [r for r in rows if r["kind"] == kind and r.get("ratio")]
        at4096[kind] = next((r["ratio"] for r in rs if r["shape"] == "4096x4096x4096"),
                            None)
        geo[kind] = (math.exp(sum(math.log(r["ratio"]) for r in rs) / len(rs))
                     if rs else None)
    return at4096, geo


def bench_case(c, base, timer, l2_bytes, dev=None):
    """One row: correctness of kgraph, then kgraph and cuBLAS timings
    (``dev``: the CUDA device; the self-tests pass the CPU with a stand-in
    program and timer)."""
    import torch
    import kgraph
    import matmul_ref as MR

    d = c["dims"]
    m, n, k = d["m"], d["n"], d["k"]
    kind = c["bench_kind"]
    row = {"kind": kind, "shape": shape_str(c), "m": m, "n": n, "k": k,
           "case": c["name"], "flops": c["flops"]}
    in_dt = MR.TORCH_DTYPES[c["inputs"][0]["dtype"]]
    out_dt = MR.TORCH_DTYPES[c["output"]["dtype"]]
    dev = dev or torch.device("cuda")
    row["cublas_tf32"] = set_tf32(torch, kind == "tf32")

    gen = torch.Generator(device=dev).manual_seed(zlib.crc32(c["name"].encode()))
    nrot = rotation_count(c, l2_bytes)
    row["rotation"] = nrot
    A = [(torch.rand(m, k, device=dev, generator=gen) * 2 - 1).to(in_dt)
         for _ in range(nrot)]
    B = [(torch.rand(k, n, device=dev, generator=gen) * 2 - 1).to(in_dt)
         for _ in range(nrot)]
    C = [torch.empty(m, n, device=dev, dtype=out_dt) for _ in range(nrot)]

    prog = kgraph.load(os.path.join(base, c["plan"]))
    # Correctness first: a fast wrong kernel is not a result.
    out = torch.full((m, n), float("nan"), device=dev, dtype=out_dt)
    prog.run([A[0], B[0]], [out])
    if dev.type == "cuda":
        torch.cuda.synchronize(dev)
    ref, s = MR.reference(c, A[0], B[0])
    err = MR.compare(c, out, ref, s, norm_scale=CHECK_SCALE)
    row["rel_err"] = MR.rel_norm_error(out, ref)
    cub = torch.matmul(A[0], B[0])
    row["cublas_rel_err"] = MR.rel_norm_error(cub, ref)
    # The tuning database's build (scripts/build-tuned-cases.py), checked
    # against the same reference into a poisoned output.
    tuned = None
    if c.get("tuned_plan"):
        tuned = kgraph.load(os.path.join(base, c["tuned_plan"]))
        out.fill_(float("nan"))
        tuned.run([A[0], B[0]], [out])
        if dev.type == "cuda":
            torch.cuda.synchronize(dev)
        t_err = MR.compare(c, out, ref, s, norm_scale=CHECK_SCALE)
        row["tuned_by"] = c.get("tuned_by")
        row["tuned_rel_err"] = MR.rel_norm_error(out, ref)
        if t_err:
            row["error"] = f"wrong result of the tuned build: {t_err}"
    del ref, s, out, cub
    if err:
        row["error"] = f"wrong result: {err}"
    if "error" in row:
        return row

    state = {"i": 0}

    def run_kgraph():
        i = state["i"] = (state["i"] + 1) % nrot
        prog.run([A[i], B[i]], [C[i]])

    def run_cublas():
        i = state["i"] = (state["i"] + 1) % nrot
        torch.matmul(A[i], B[i], out=C[i])

    benchlib.time_against(row, c["flops"], timer, run_kgraph, "cublas", run_cublas)
    if tuned is not None:
        def run_tuned():
            i = state["i"] = (state["i"] + 1) % nrot
            tuned.run([A[i], B[i]], [C[i]])
        benchlib.time_tuned(row, c["flops"], timer, run_tuned, "cublas")
    del A, B, C
    if dev.type == "cuda":
        torch.cuda.empty_cache()
    return row


def print_rows(rows, method):
    print(f"\n{'type':<5} {'M x N x K':<17} {'kgraph ms':>10} {'TFLOP/s':>8} "
          f"{'cuBLAS ms':>10} {'TFLOP/s':>8} {'kg/cuBLAS':>9} {'rel err':>9} "
          f"{'cuBLAS err':>10}   ({method})")
    for r in rows:
        if "error" in r:
            print(f"{r['kind']:<5} {r['shape']:<17} FAILED: {r['error'][:160]}")
            continue
        print(f"{r['kind']:<5} {r['shape']:<17} {r['kgraph_ms']:10.4f} "
              f"{r['kgraph_tflops']:8.1f} {r['cublas_ms']:10.4f} "
              f"{r['cublas_tflops']:8.1f} {r['ratio']:9.3f} {r['rel_err']:9.2e} "
              f"{r['cublas_rel_err']:10.2e}" + benchlib.tuned_text(r, "cuBLAS"))


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    benchlib.add_cases_args(ap)
    benchlib.add_kinds_arg(ap, KINDS, "comma-separated subset of f32,tf32,f16,bf16")
    ap.add_argument("--shapes", default=None,
                    help="regex over 'MxNxK' selecting the shapes")
    benchlib.add_method_ptxas_args(ap)
    args = ap.parse_args(argv)

    kinds = benchlib.parse_kinds(ap, args, KINDS)
    manifest, base = load_manifest(args.cases)
    cases = select(manifest["matmul_bench"], kinds, args.shapes)
    skipped = benchlib.skipped_cases(cases, "shape", shape_str)
    errors = [s for s in skipped if s["status"] != "unsupported"]

    report, rc = benchlib.ptxas_step(args, manifest, cases, base, _print_skipped,
                                     skipped, errors, "bench_matmul_ptxas.json")
    if rc is not None:
        return rc

    import torch
    benchlib.require_gpu(torch)
    method = benchlib.resolve_method(args.method)
    timer = benchlib.timer_of(method)
    props = torch.cuda.get_device_properties(0)
    l2 = getattr(props, "L2_cache_size", 0) or DEFAULT_L2

    rows = benchlib.bench_rows(
        cases, lambda c: bench_case(c, base, timer, l2),
        lambda r: (f"{r['kind']:<5} {r['shape']:<17} kgraph {r['kgraph_tflops']:7.1f}"
                   f" cuBLAS {r['cublas_tflops']:7.1f} TFLOP/s  ratio "
                   f"{r['ratio']:.3f}"))
    set_tf32(torch, False)
    benchlib.print_device(torch, manifest)
    print_rows(rows, method)
    _print_skipped(skipped)
    at4096, geo = summarize(rows)
    print("kgraph / cuBLAS at 4096^3: " + ", ".join(
        f"{k} {v:.3f}" if v else f"{k} -" for k, v in at4096.items()))
    tuned = [r for r in rows if r.get("tuned_ratio")]
    if tuned:
        g_def = math.exp(sum(math.log(r["ratio"]) for r in tuned) / len(tuned))
        g_tun = math.exp(sum(math.log(r["tuned_ratio"]) for r in tuned) / len(tuned))
        print(f"tuned builds ({len(tuned)} cases): kgraph / cuBLAS geometric mean "
              f"{g_def:.3f} default, {g_tun:.3f} tuned")
    for r in rows:
        if r["kind"] == "f32" and r.get("cublas_rel_err", 0) > 1e-4:
            print(f"warning: cuBLAS f32 {r['shape']} has relative error "
                  f"{r['cublas_rel_err']:.2e}: TF32 was not off")
    wrong = [r for r in rows if "error" in r]
    result = {"device": torch.cuda.get_device_name(), "torch": torch.__version__,
              "target": manifest.get("target"), "method": method, "l2_bytes": l2,
              "rows": rows, "skipped": skipped, "ratio_4096": at4096,
              "geomean_ratio": geo, "wrong": [r["case"] for r in wrong],
              "ptxas": report}
    write_json(result, args.json, "bench_matmul.json")
    return 1 if wrong or errors else 0


def _one_line(reason):
    """The diagnostic of a compiler message, without file:line:col."""
    if not reason:
        return ""
    for line in reason.splitlines():
        if "error:" in line:
            return re.sub(r"^.*?\berror: ", "", line.strip())
    return reason.splitlines()[0]


def _print_skipped(skipped):
    if not skipped:
        return
    print(f"\nskipped {len(skipped)} bench case(s):")
    reasons = {}
    for s in skipped:
        reasons.setdefault((s["status"], _one_line(s["reason"])), []).append(
            f"{s['kind']} {s['shape']}")
    for (status, reason), which in reasons.items():
        print(f"  {status}: {reason}\n    {', '.join(which)}")


if __name__ == "__main__":
    sys.exit(main())
