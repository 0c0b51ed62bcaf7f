"""Shared pieces of the benchmarks (bench_elementwise.py, bench_matmul.py,
bench_conv.py, bench_variants.py): timing (CUDA events or triton's
do_bench), cuBLAS's TF32 switch, the manifest, the command line and the
steps common to the GEMM-like benchmarks (the ptxas/SASS report of their
kernels, the skipped cases, the timed loop, the JSON).
"""

import json
import math
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), ".."))
sys.path.insert(0, os.path.join(REPO, "python"))
sys.path.insert(0, os.path.join(REPO, "test", "GPU"))

#: Loosening of the reference's bounds (matmul_ref.py) for the quick check of
#: a kgraph result before it is timed: a fast wrong kernel is not a result.
CHECK_SCALE = 4.0
#: SASS opcodes counted (by the mnemonic before the first '.').
SASS_OPS = ("HMMA", "IMMA", "HGMMA", "LDSM", "LDGSTS", "LDG", "STG", "LDS",
            "STS", "LDL", "STL", "FFMA", "BAR")


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


def time_do_bench(fn, rep=100):
    from triton.testing import do_bench
    return do_bench(fn, warmup=25, rep=rep, return_mode="median")


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



# --- the manifest and the command line ---------------------------------------------------


def read_manifest(path):
    """(manifest, path of manifest.json, its folder) of --cases (the
    manifest or its folder)."""
    if os.path.isdir(path):
        path = os.path.join(path, "manifest.json")
    with open(path) as f:
        manifest = json.load(f)
    return manifest, path, os.path.dirname(os.path.abspath(path))


def add_cases_args(ap):
    """--cases and --json."""
    ap.add_argument("--cases", default=os.environ.get("KGRAPH_GPU_CASES",
                                                      os.path.join(REPO, ".gpu")),
                    help="manifest.json or its folder (default .gpu)")
    ap.add_argument("--json", default=None, help="write the results here")


def add_kinds_arg(ap, kinds, help):
    ap.add_argument("--kinds", default=",".join(kinds), help=help)


def add_method_ptxas_args(ap):
    """--method (auto|do_bench|events), --ptxas, --no-ptxas, --arch."""
    ap.add_argument("--method", choices=("auto", "do_bench", "events"),
                    default="auto", help="auto: do_bench if triton is importable")
    ap.add_argument("--ptxas", action="store_true",
                    help="only the ptxas/SASS report (no GPU needed)")
    ap.add_argument("--no-ptxas", action="store_true",
                    help="leave the ptxas/SASS report out of the GPU run")
    ap.add_argument("--arch", default=None,
                    help="ptxas -arch (default: the manifest's target)")


def parse_kinds(ap, args, all_kinds):
    """The --kinds list; an argparse error for unknown ones."""
    kinds = [k for k in args.kinds.split(",") if k]
    bad = set(kinds) - set(all_kinds)
    if bad:
        ap.error(f"unknown kinds {sorted(bad)} (expected some of {all_kinds})")
    return kinds


def write_json(result, path, default_name):
    """``result`` to ``path``, else to $OUT/``default_name`` when $OUT is set."""
    if path is None and os.environ.get("OUT"):
        path = os.path.join(os.environ["OUT"], default_name)
    if path:
        with open(path, "w") as f:
            json.dump(result, f, indent=1)
        print(f"wrote {path}")


# --- the steps of the GEMM-like benchmarks ---------------------------------------------


def skipped_cases(cases, where_key, where):
    """The cases that are not "ok", as reported: case, kind, ``where_key``
    (``where(case)``: the shape or the layer), status, reason."""
    return [{"case": c["name"], "kind": c["bench_kind"], where_key: where(c),
             "status": c.get("status"),
             "reason": c.get("reason") or c.get("error")}
            for c in cases if c.get("status") != "ok"]


def ptxas_step(args, manifest, cases, base, print_skipped, skipped, errors,
               ptxas_json):
    """The ptxas/SASS report (unless --no-ptxas). Returns (report, exit code
    of the --ptxas-only run, or None when the GPU run follows)."""
    arch = args.arch or manifest.get("target", "sm_90a")
    report = None
    if args.ptxas or not args.no_ptxas:
        report = ptxas_report(cases, base, arch)
        print_ptxas_report(report)
    if not args.ptxas:
        return report, None
    print_skipped(skipped)
    write_json({"target": manifest.get("target"), "ptxas": report,
                "skipped": skipped}, args.json, ptxas_json)
    return report, (1 if errors or any("error" in r for r in report["kernels"].values())
                    else 0)


def require_gpu(torch):
    if not torch.cuda.is_available():
        sys.exit("error: no CUDA GPU available (use --ptxas for the report "
                 "that needs none)")


def resolve_method(method):
    """--method with auto resolved: do_bench if triton is importable."""
    if method == "auto":
        try:
            import triton.testing  # noqa: F401
            method = "do_bench"
        except ImportError:
            method = "events"
    return method


def timer_of(method):
    return time_do_bench if method == "do_bench" else time_events


def bench_rows(cases, bench_one, progress):
    """``bench_one(case)`` for every ok case, each row printed as it comes
    (FAILED with its error, else ``progress(row)``)."""
    rows = []
    for c in cases:
        if c.get("status") != "ok":
            continue
        r = bench_one(c)
        rows.append(r)
        if "error" in r:
            print(f"FAILED {c['name']}: {r['error']}", flush=True)
        else:
            print(progress(r), flush=True)
    return rows


def time_against(row, flops, timer, run_kgraph, other, run_other):
    """Times kgraph and ``other`` (cublas, cudnn) into ``row``: <name>_ms,
    <name>_tflops, and ratio = kgraph / other throughput."""
    row["kgraph_ms"] = timer(run_kgraph)
    row[f"{other}_ms"] = timer(run_other)
    row["kgraph_tflops"] = flops / row["kgraph_ms"] / 1e9
    row[f"{other}_tflops"] = flops / row[f"{other}_ms"] / 1e9
    row["ratio"] = row["kgraph_tflops"] / row[f"{other}_tflops"]


def time_tuned(row, flops, timer, run_tuned, other):
    """Times a case's tuned build (scripts/build-tuned-cases.py) into ``row``
    after time_against: tuned_ms, tuned_tflops, tuned_ratio (against
    ``other``'s throughput) and tuned_vs_default (the default's time over
    the tuned one's)."""
    row["tuned_ms"] = timer(run_tuned)
    row["tuned_tflops"] = flops / row["tuned_ms"] / 1e9
    row["tuned_ratio"] = row["tuned_tflops"] / row[f"{other}_tflops"]
    row["tuned_vs_default"] = row["kgraph_ms"] / row["tuned_ms"]


def tuned_text(row, other):
    """The tuned build's part of a result line ("" without one)."""
    if "tuned_ms" not in row:
        return ""
    return (f"   tuned ({row['tuned_by']}) {row['tuned_ms']:.4f} ms, "
            f"{row['tuned_ratio']:.3f} of {other}, {row['tuned_vs_default']:.3f}x "
            f"the default")


def print_device(torch, manifest):
    print(f"\n{torch.cuda.get_device_name()}  target {manifest.get('target')}  "
          f"torch {torch.__version__}")
