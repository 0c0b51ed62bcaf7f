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
import json
import math
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import zlib

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), ".."))
sys.path.insert(0, os.path.join(REPO, "python"))
sys.path.insert(0, os.path.join(REPO, "test", "GPU"))

KINDS = ("f32", "tf32", "f16", "bf16")
#: SASS opcodes counted (by the mnemonic before the first '.').
SASS_OPS = ("HMMA", "IMMA", "HGMMA", "LDSM", "LDGSTS", "LDG", "STG", "LDS",
            "STS", "LDL", "STL", "FFMA", "BAR")
DEFAULT_L2 = 60 * 1024 * 1024
#: Loosening of matmul_ref's bounds for the quick check before timing.
CHECK_SCALE = 4.0
SIZES = {"f32": 4, "f16": 2, "bf16": 2, "i8": 1, "i32": 4}


# --- ptxas and SASS ---------------------------------------------------------------


def find_tool(name):
    """Path of a CUDA tool (ptxas, cuobjdump): PATH, $CUDA_HOME/bin,
    /usr/local/cuda/bin, then the copy bundled with triton; None if absent."""
    found = shutil.which(name)
    if found:
        return found
    dirs = [os.path.join(os.environ[v], "bin") for v in ("CUDA_HOME", "CUDA_PATH")
            if os.environ.get(v)]
    dirs.append("/usr/local/cuda/bin")
    try:
        import importlib.util
        spec = importlib.util.find_spec("triton")
        if spec and spec.submodule_search_locations:
            for loc in spec.submodule_search_locations:
                dirs.append(os.path.join(loc, "backends", "nvidia", "bin"))
    except (ImportError, ValueError):
        pass
    for d in dirs:
        p = os.path.join(d, name)
        if os.path.isfile(p) and os.access(p, os.X_OK):
            return p
    return None


_FN_RE = re.compile(r"Compiling entry function '([^']+)'")
_PROPS_RE = re.compile(r"Function properties for (\S+)")
_FRAME_RE = re.compile(r"(\d+) bytes stack frame, (\d+) bytes spill stores, "
                       r"(\d+) bytes spill loads")
_USED_RE = re.compile(r"Used (\d+) registers")
_SMEM_RE = re.compile(r"(\d+) bytes smem")
_BAR_RE = re.compile(r"used (\d+) barriers")


def parse_ptxas_verbose(text):
    """{function: {"registers", "spill_stores", "spill_loads", "stack",
    "smem", "barriers", "used_line", "spill_line"}} from ``ptxas -v``."""
    funcs = {}
    current = None
    for line in text.splitlines():
        m = _FN_RE.search(line) or _PROPS_RE.search(line)
        if m:
            current = funcs.setdefault(m.group(1), {})
            continue
        if current is None:
            continue
        m = _FRAME_RE.search(line)
        if m:
            current.update(stack=int(m.group(1)), spill_stores=int(m.group(2)),
                           spill_loads=int(m.group(3)),
                           spill_line=line.strip())
            continue
        m = _USED_RE.search(line)
        if m:
            current["registers"] = int(m.group(1))
            current["used_line"] = re.sub(r"^ptxas info\s*:\s*", "", line.strip())
            s = _SMEM_RE.search(line)
            current["smem"] = int(s.group(1)) if s else 0
            b = _BAR_RE.search(line)
            current["barriers"] = int(b.group(1)) if b else 0
    return funcs


_SASS_FN_RE = re.compile(r"^\s*Function\s*:\s*(\S+)")
_SASS_INSN_RE = re.compile(r"^\s*/\*[0-9a-f]{4,}\*/\s+(?:@!?U?P\w+\s+)?([A-Z][A-Z0-9_]*)"
                           r"(?:\.[^\s]*)?[\s;]")


def parse_sass_mix(text):
    """{function: {opcode: count, ..., "total": n}} from ``cuobjdump
    --dump-sass``, for the opcodes of SASS_OPS (plus the total)."""
    mix = {}
    current = None
    for line in text.splitlines():
        m = _SASS_FN_RE.match(line)
        if m:
            current = mix.setdefault(m.group(1), dict.fromkeys(SASS_OPS, 0))
            current["total"] = 0
            continue
        if current is None:
            continue
        m = _SASS_INSN_RE.match(line)
        if m:
            op = m.group(1)
            current["total"] += 1
            if op in current:
                current[op] += 1
    return mix


def analyze_ptx(ptx_path, arch, ptxas, cuobjdump, workdir):
    """ptxas -v (and the SASS mix) of one PTX file: {"functions": {...}} or
    {"error": message}."""
    cubin = os.path.join(workdir, os.path.basename(ptx_path) + ".cubin")
    p = subprocess.run([ptxas, f"-arch={arch}", "-v", ptx_path, "-o", cubin],
                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    if p.returncode != 0:
        return {"error": f"ptxas failed: {p.stdout.strip()[-2000:]}"}
    funcs = parse_ptxas_verbose(p.stdout)
    result = {"functions": funcs}
    if cuobjdump:
        q = subprocess.run([cuobjdump, "--dump-sass", cubin], stdout=subprocess.PIPE,
                           stderr=subprocess.STDOUT, text=True)
        if q.returncode != 0:
            result["sass_error"] = q.stdout.strip()[-2000:]
        else:
            for fn, counts in parse_sass_mix(q.stdout).items():
                funcs.setdefault(fn, {})["sass"] = counts
    return result


def _add_launch(result, plan_path):
    """Each function's launch from the plan: grid, block, dynamic shared
    memory (ptxas only sees the static part)."""
    try:
        with open(plan_path) as f:
            plan = json.load(f)
    except (OSError, ValueError):
        return
    for k in plan.get("kernels", []):
        fn = result.get("functions", {}).get(k.get("name"))
        if fn is not None:
            fn.update(grid=k.get("grid"), block=k.get("block"),
                      dyn_smem=k.get("shared_bytes"))


def ptxas_report(cases, base, arch, workdir=None):
    """Per ok case: analyze_ptx. Returns {"ptxas", "cuobjdump", "arch",
    "kernels": {case: result}} (tools None when missing)."""
    ptxas = find_tool("ptxas")
    cuobjdump = find_tool("cuobjdump")
    report = {"ptxas": ptxas, "cuobjdump": cuobjdump, "arch": arch, "kernels": {}}
    if not ptxas:
        return report
    own = workdir is None
    workdir = workdir or tempfile.mkdtemp(prefix="kgraph-bench-ptxas.")
    try:
        for c in cases:
            if c.get("status") == "ok":
                r = analyze_ptx(os.path.join(base, c["ptx"]), arch, ptxas,
                                cuobjdump, workdir)
                _add_launch(r, os.path.join(base, c["plan"]))
                report["kernels"][c["name"]] = r
    finally:
        if own:
            shutil.rmtree(workdir, ignore_errors=True)
    return report


def print_ptxas_report(report):
    print(f"\nptxas -arch={report['arch']} -v ({report['ptxas'] or 'ptxas not found'})"
          f"; SASS mix: {report['cuobjdump'] or 'cuobjdump not found (no SASS mix)'}")
    if not report["kernels"]:
        print("  (no compiled bench kernel)")
        return
    sass = bool(report["cuobjdump"])
    head = (f"{'case':<34} {'function':<10} {'regs':>4} {'spill st/ld':>11} "
            f"{'smem':>5} {'dyn smem':>8} {'block':>5} {'grid':>13}")
    if sass:
        head += "".join(f" {op:>6}" for op in SASS_OPS) + f" {'total':>6}"
    print(head)
    for name, r in report["kernels"].items():
        if "error" in r:
            print(f"{name:<34} {r['error'].splitlines()[0]}")
            continue
        for fn, f in r["functions"].items():
            spills = f"{f.get('spill_stores', '?')}/{f.get('spill_loads', '?')}"
            block = f.get("block")
            grid = f.get("grid")
            line = (f"{name:<34} {fn:<10} {f.get('registers', '?'):>4} "
                    f"{spills:>11} {f.get('smem', '?'):>5} "
                    f"{f.get('dyn_smem', '?'):>8} "
                    f"{math.prod(block) if block else '?':>5} "
                    f"{'x'.join(map(str, grid)) if grid else '?':>13}")
            if sass and "sass" in f:
                line += "".join(f" {f['sass'][op]:>6}" for op in SASS_OPS) + \
                    f" {f['sass']['total']:>6}"
            print(line)
        if "sass_error" in r:
            print(f"  cuobjdump failed: {r['sass_error'].splitlines()[0]}")


# --- the manifest -------------------------------------------------------------------------


def load_manifest(path):
    if os.path.isdir(path):
        path = os.path.join(path, "manifest.json")
    with open(path) as f:
        manifest = json.load(f)
    if "matmul_bench" not in manifest:
        sys.exit(f"error: {path} has no matmul_bench section (rebuild it with "
                 f"scripts/build-gpu-cases.py, without --no-bench)")
    return manifest, os.path.dirname(os.path.abspath(path))


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


# --- timing ---------------------------------------------------------------------------------


def time_events(fn, warmup=5, inner=10, trials=11):
    import torch
    for _ in range(warmup):
        fn()
    torch.cuda.synchronize()
    times = []
    for _ in range(trials):
        start = torch.cuda.Event(enable_timing=True)
        end = torch.cuda.Event(enable_timing=True)
        start.record()
        for _ in range(inner):
            fn()
        end.record()
        end.synchronize()
        times.append(start.elapsed_time(end) / inner)
    return statistics.median(times)


def time_do_bench(fn):
    from triton.testing import do_bench
    return do_bench(fn, warmup=25, rep=100, return_mode="median")


def set_tf32(torch, on):
    """Let cuBLAS use TF32 for f32 matmuls (or not); returns the setting as
    torch reports it. Torch >= 2.9 has torch.backends.cuda.matmul.fp32_precision
    ("tf32" | "ieee"), the successor of allow_tf32 (which it deprecates, and
    mixing both APIs is an error there): use it when it exists."""
    mm = torch.backends.cuda.matmul
    try:
        getattr(mm, "fp32_precision")
        new_api = True
    except (AttributeError, AssertionError):  # old torch asserts on unknown names
        new_api = False
    if new_api:
        mm.fp32_precision = "tf32" if on else "ieee"
        return f"fp32_precision={mm.fp32_precision}"
    mm.allow_tf32 = on
    return f"allow_tf32={mm.allow_tf32}"


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
    del ref, s, out, cub
    if err:
        row["error"] = f"wrong result: {err}"
        return row

    state = {"i": 0}

    def run_kgraph():
        i = state["i"] = (state["i"] + 1) % nrot
        prog.run([A[i], B[i]], [C[i]])

    def run_cublas():
        i = state["i"] = (state["i"] + 1) % nrot
        torch.matmul(A[i], B[i], out=C[i])

    row["kgraph_ms"] = timer(run_kgraph)
    row["cublas_ms"] = timer(run_cublas)
    row["kgraph_tflops"] = c["flops"] / row["kgraph_ms"] / 1e9
    row["cublas_tflops"] = c["flops"] / row["cublas_ms"] / 1e9
    row["ratio"] = row["kgraph_tflops"] / row["cublas_tflops"]
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
              f"{r['cublas_rel_err']:10.2e}")


def write_json(result, path, default_name):
    if path is None and os.environ.get("OUT"):
        path = os.path.join(os.environ["OUT"], default_name)
    if path:
        with open(path, "w") as f:
            json.dump(result, f, indent=1)
        print(f"wrote {path}")


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--cases", default=os.environ.get("KGRAPH_GPU_CASES",
                                                      os.path.join(REPO, ".gpu")),
                    help="manifest.json or its folder (default .gpu)")
    ap.add_argument("--json", default=None, help="write the results here")
    ap.add_argument("--kinds", default=",".join(KINDS),
                    help="comma-separated subset of f32,tf32,f16,bf16")
    ap.add_argument("--shapes", default=None,
                    help="regex over 'MxNxK' selecting the shapes")
    ap.add_argument("--method", choices=("auto", "do_bench", "events"),
                    default="auto", help="auto: do_bench if triton is importable")
    ap.add_argument("--ptxas", action="store_true",
                    help="only the ptxas/SASS report (no GPU needed)")
    ap.add_argument("--no-ptxas", action="store_true",
                    help="leave the ptxas/SASS report out of the GPU run")
    ap.add_argument("--arch", default=None,
                    help="ptxas -arch (default: the manifest's target)")
    args = ap.parse_args(argv)

    kinds = [k for k in args.kinds.split(",") if k]
    bad = set(kinds) - set(KINDS)
    if bad:
        ap.error(f"unknown kinds {sorted(bad)} (expected some of {KINDS})")
    manifest, base = load_manifest(args.cases)
    cases = select(manifest["matmul_bench"], kinds, args.shapes)
    arch = args.arch or manifest.get("target", "sm_90a")
    skipped = [{"case": c["name"], "kind": c["bench_kind"], "shape": shape_str(c),
                "status": c.get("status"),
                "reason": c.get("reason") or c.get("error")}
               for c in cases if c.get("status") != "ok"]
    errors = [s for s in skipped if s["status"] != "unsupported"]

    report = None
    if args.ptxas or not args.no_ptxas:
        report = ptxas_report(cases, base, arch)
        print_ptxas_report(report)
    if args.ptxas:
        _print_skipped(skipped)
        write_json({"target": manifest.get("target"), "ptxas": report,
                    "skipped": skipped}, args.json, "bench_matmul_ptxas.json")
        return 1 if errors or any("error" in r for r in report["kernels"].values()) \
            else 0

    import torch
    if not torch.cuda.is_available():
        sys.exit("error: no CUDA GPU available (use --ptxas for the report "
                 "that needs none)")
    method = args.method
    if method == "auto":
        try:
            import triton.testing  # noqa: F401
            method = "do_bench"
        except ImportError:
            method = "events"
    timer = time_do_bench if method == "do_bench" else time_events
    props = torch.cuda.get_device_properties(0)
    l2 = getattr(props, "L2_cache_size", 0) or DEFAULT_L2

    rows = []
    for c in cases:
        if c.get("status") != "ok":
            continue
        r = bench_case(c, base, timer, l2)
        rows.append(r)
        if "error" in r:
            print(f"FAILED {c['name']}: {r['error']}", flush=True)
        else:
            print(f"{r['kind']:<5} {r['shape']:<17} kgraph {r['kgraph_tflops']:7.1f}"
                  f" cuBLAS {r['cublas_tflops']:7.1f} TFLOP/s  ratio "
                  f"{r['ratio']:.3f}", flush=True)
    set_tf32(torch, False)
    print(f"\n{torch.cuda.get_device_name()}  target {manifest.get('target')}  "
          f"torch {torch.__version__}")
    print_rows(rows, method)
    _print_skipped(skipped)
    at4096, geo = summarize(rows)
    print("kgraph / cuBLAS at 4096^3: " + ", ".join(
        f"{k} {v:.3f}" if v else f"{k} -" for k, v in at4096.items()))
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
