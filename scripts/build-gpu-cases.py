#!/usr/bin/python3
"""Generate and compile the GPU test and benchmark cases (elementwise ops and
kgraph.matmul).

Runs where kgraph-opt exists (not on the GPU machine). For every case it writes
``<name>.mlir`` (a ``func.func @main`` returning one kgraph op's result),
compiles it with ``kgraph-opt --tile=<target> <name>.mlir -o <name>.ptx``
(which writes ``<name>.plan.json`` beside it), checks the plan against the
case and the shared memory of its GEMM kernels against the model's
(test/Pipelines/gemm_smem.py), and writes ``manifest.json``: for each case
the op, its attributes, the input shapes/dtypes and value domains, the
output, the reference expression and how to compare. test/GPU/test_elementwise.py, test/GPU/test_matmul.py and
bench/ read it.

    scripts/build-gpu-cases.py build-rt/bin/kgraph-opt .gpu [--target sm_90a]
        [--suite all|elementwise|matmul|conv|graphs|fuzz|runtime] [--fuzz-seed S]

Suites and their manifest sections: elementwise -> "cases" and "bench";
matmul (test/GPU/cases/matmul_cases.py) -> "matmul" and "matmul_bench"; conv
(test/GPU/cases/conv_cases.py) -> "conv" and "conv_bench"; graphs (whole graphs
compiled with --fuse, test/GPU/cases/graph_case.py and test/GPU/cases/graphs/*.py)
-> "graphs" and "graphs_bench", each checked for its number of kernels; fuzz
(a fresh seeded sample of random graphs with torch references,
test/fuzz/gpu_cases.py, --fuzz-seed/--fuzz-count) -> "fuzz"; runtime
(test/GPU/cases/runtime_cases.py: several functions with parameters from a
weights file, for CUDA graphs and profiles) -> "runtime". The default builds all. Building one suite into a folder whose manifest.json has the
same target keeps the other suite's sections of that manifest.

Cases marked optional (integer variants of ops that may be float-only) are
dropped, with a note, when kgraph-opt rejects their IR as invalid. A matmul
case whose compilation fails with "no code generation" stays in the manifest
with status "unsupported" and the compiler's message as "reason" (the GPU
tests skip it with that reason). A failure of any other case, or any other
failure to lower a case that verifies, is an error: the case stays in the
manifest with status "error" (so the GPU tests fail on it) and the script
exits 1.
"""

import argparse
import concurrent.futures
import json
import math
import os
import re
import subprocess
import sys

_HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(_HERE, "..", "python"))
# The case generators (test/GPU/cases: matmul, conv2d and whole-graph cases).
sys.path.insert(0, os.path.join(_HERE, "..", "test", "GPU", "cases"))
# The GEMM shared-memory check (also run by lit).
sys.path.insert(0, os.path.join(_HERE, "..", "test", "Pipelines"))
import kgraph.plan  # noqa: E402
import gemm_smem  # noqa: E402
from case_common import case_files, func_mlir, ttype  # noqa: E402
import conv_cases  # noqa: E402
import graph_case  # noqa: E402
import matmul_cases  # noqa: E402
import runtime_cases  # noqa: E402
sys.path.insert(0, os.path.join(_HERE, "..", "test", "fuzz"))
import gpu_cases as fuzz_cases  # noqa: E402  (test/fuzz/gpu_cases.py)
sys.path.insert(0, _HERE)
import case_digest  # noqa: E402  (scripts/case_digest.py)

#: Seed and size of the `fuzz` suite's sample (set by main).
FUZZ = {"seed": None, "count": 300}

FLOATS = ("f32", "f16", "bf16")
INTS = ("i8", "i32")
INT_RANGE = {"i8": (-128, 127), "i32": (-(2 ** 31), 2 ** 31 - 1)}
#: Largest finite value of each float type (inputs are kept inside it).
FLOAT_MAX = {"f32": 3.4e38, "f16": 65504.0, "bf16": 3.38e38}

# Shapes that are not multiples of any block or vector size.
SIZES = [[1], [7], [1000], [4097], [3, 5, 1023]]
# (lhs, rhs) broadcasting patterns of the binary ops.
BINARY_SHAPES = [(s, s) for s in SIZES] + [
    ([1], [4097]),                    # scalar-like lhs
    ([4097], [1]),                    # scalar-like rhs
    ([37, 1000], [1000]),             # row
    ([37, 1000], [37, 1]),            # column
    ([1, 1000], [37, 1]),             # outer: [1,N] vs [M,1]
    ([4, 37, 1001], [1001]),          # rank mismatch
    ([5, 1, 129], [5, 33, 129]),      # middle-dim broadcast
]
BENCH_N = 64 * 1024 * 1024

BINARY_REF = {
    "add": "a + b", "sub": "a - b", "mul": "a * b", "div": "a / b",
    "max": "torch.maximum(a, b)", "min": "torch.minimum(a, b)",
    "pow": "torch.pow(a, b)",
}
UNARY_REF = {
    "neg": "-x", "abs": "torch.abs(x)", "exp": "torch.exp(x)",
    "log": "torch.log(x)", "sqrt": "torch.sqrt(x)", "rsqrt": "torch.rsqrt(x)",
    "tanh": "torch.tanh(x)", "sigmoid": "torch.sigmoid(x)",
    "relu": "torch.relu(x)",
    "gelu": "0.5 * x * (1 + torch.erf(x / math.sqrt(2)))",
}
GELU_TANH_REF = ("0.5 * x * (1 + torch.tanh(math.sqrt(2 / math.pi) * "
                 "(x + 0.044715 * x ** 3)))")
UNARY_DOMAIN = {
    "neg": (-10, 10), "abs": (-10, 10), "exp": (-10, 10), "log": (0.01, 100),
    "sqrt": (0, 100), "rsqrt": (0.01, 100), "tanh": (-5, 5),
    "sigmoid": (-10, 10), "relu": (-10, 10), "gelu": (-5, 5),
}
# Ops whose result is one of the (rounded) inputs: compared exactly.
EXACT_OPS = {"neg", "abs", "relu", "max", "min", "clamp", "select", "compare",
             "cast"}
COMPARE_REF = {"eq": "a == b", "ne": "a != b", "lt": "a < b", "le": "a <= b",
               "gt": "a > b", "ge": "a >= b"}


def uniform(lo, hi):
    return {"dist": "uniform", "low": lo, "high": hi}


def nonzero(lo, hi):
    """Magnitude in [lo, hi], random sign."""
    return {"dist": "nonzero", "low": lo, "high": hi}


def integers(lo, hi):
    """Integers in [lo, hi] (as floats for a float dtype)."""
    return {"dist": "int", "low": lo, "high": hi}


def broadcast(*shapes):
    rank = max(len(s) for s in shapes)
    out = []
    for i in range(rank):
        dims = {s[i - rank + len(s)] for s in shapes if i - rank + len(s) >= 0}
        dims.discard(1)
        if len(dims) > 1:
            raise ValueError(f"shapes {shapes} do not broadcast")
        out.append(dims.pop() if dims else 1)
    return out


def shape_tag(*shapes):
    return "_".join("x".join(map(str, s)) for s in shapes)


def fmt_f64(v):
    return f"{v:.6e} : f64"


class Case:
    def __init__(self, name, op, inputs, out_dtype, body, reference,
                 attrs=None, check=None, optional=False, bench=False):
        self.name = name
        self.op = op
        self.attrs = attrs or {}
        self.inputs = inputs  # [{"name", "shape", "dtype", "domain"}]
        self.output = {"shape": broadcast(*[i["shape"] for i in inputs]),
                       "dtype": out_dtype}
        self.body = body  # the op line, "%r = ..."
        self.reference = reference
        self.check = check or ("exact" if op in EXACT_OPS or out_dtype in INTS
                               or out_dtype == "i1" else "float")
        self.optional = optional
        self.bench = bench

    def mlir(self):
        return func_mlir(self.name, self.inputs, self.output, self.body)

    def manifest(self):
        return {
            "name": self.name, "op": self.op, "attrs": self.attrs,
            "inputs": self.inputs, "output": self.output,
            "reference": self.reference, "check": self.check,
            **case_files(self.name),
        }


def inp(name, shape, dtype, domain):
    return {"name": name, "shape": list(shape), "dtype": dtype, "domain": domain}


def binary_case(op, dt, ls, rs, dom_a, dom_b, optional=False, prefix=""):
    a, b = inp("a", ls, dt, dom_a), inp("b", rs, dt, dom_b)
    body = (f"%r = kgraph.{op} %a, %b : {ttype(ls, dt)}, {ttype(rs, dt)}")
    return Case(f"{prefix}{op}_{dt}_{shape_tag(ls, rs)}", op, [a, b], dt, body,
                BINARY_REF[op], optional=optional)


def binary_domains(op, dt):
    if dt in FLOATS:
        if op == "div":
            return uniform(-10, 10), nonzero(0.5, 4)
        if op == "pow":
            return uniform(0.1, 4), uniform(-3, 3)
        return uniform(-10, 10), uniform(-10, 10)
    # Integer ranges keep every result representable (no wrap-around).
    if op == "mul":
        r = 11 if dt == "i8" else 40000
    else:
        r = 50 if dt == "i8" else 10 ** 9
    return integers(-r, r), integers(-r, r)


def unary_case(op, dt, shape, attrs=None, optional=False):
    x = inp("x", shape, dt, uniform(*UNARY_DOMAIN[op]))
    ref = UNARY_REF[op]
    name = f"{op}_{dt}_{shape_tag(shape)}"
    attr_text = ""
    if attrs and attrs.get("approximate"):
        attr_text = " {approximate}"
        ref = GELU_TANH_REF
        name = f"gelu_tanh_{dt}_{shape_tag(shape)}"
    if dt in INTS:
        x["domain"] = integers(-100, 100) if dt == "i8" else integers(-10 ** 6, 10 ** 6)
    body = f"%r = kgraph.{op} %x{attr_text} : {ttype(shape, dt)}"
    return Case(name, op, [x], dt, body, ref, attrs=attrs, optional=optional)


def inward_bound(value, dt, up):
    """The representable value of float type `dt` nearest to `value` on the
    inside of the clamp range: the smallest >= value (up) or the largest
    <= value. kgraph.clamp keeps results inside [min, max] this way."""
    import struct
    if dt == "bf16":
        bits = struct.unpack("<I", struct.pack("<f", value))[0] & 0xFFFF0000
        toward_zero = struct.unpack("<f", struct.pack("<I", bits))[0]
        away = struct.unpack("<f", struct.pack("<I", bits + 0x10000))[0]
        candidates = [toward_zero, away]
    else:
        import numpy as np
        t = np.float16 if dt == "f16" else np.float32
        x = t(value)
        candidates = [float(x), float(np.nextafter(x, t(np.inf))),
                      float(np.nextafter(x, t(-np.inf)))]
    if up:
        return min(c for c in candidates if c >= value)
    return max(c for c in candidates if c <= value)


def clamp_case(dt, shape, lo, hi, optional=False):
    dom = uniform(-10, 10) if dt in FLOATS else integers(-20, 20)
    x = inp("x", shape, dt, dom)
    body = (f"%r = kgraph.clamp %x {{max = {fmt_f64(hi)}, min = {fmt_f64(lo)}}}"
            f" : {ttype(shape, dt)}")
    tag = f"{lo:g}_{hi:g}".replace("-", "m").replace(".", "p")
    ref_lo, ref_hi = lo, hi
    if dt in FLOATS:
        ref_lo, ref_hi = inward_bound(lo, dt, True), inward_bound(hi, dt, False)
    return Case(f"clamp_{tag}_{dt}_{shape_tag(shape)}", "clamp", [x], dt, body,
                f"torch.clamp(x, min={ref_lo!r}, max={ref_hi!r})",
                attrs={"min": lo, "max": hi}, optional=optional)


def cast_domain(src, dst):
    """Source values that test truncation and saturation without relying on
    unspecified behaviour (int narrowing, float overflow, double rounding)."""
    if src in INTS:
        lo, hi = INT_RANGE[src]
        if dst == "i8":
            lo, hi = INT_RANGE["i8"]   # int narrowing is not specified: stay in range
        elif dst == "f16":
            lo, hi = -60000, 60000
        elif dst == "bf16":
            lo, hi = -(2 ** 24), 2 ** 24  # exact in f32: one rounding only
        return integers(lo, hi)
    if dst in INTS:
        lo, hi = INT_RANGE[dst]
        r = min(2.5 * hi, 0.9 * FLOAT_MAX[src])  # beyond the range: saturation
        # Half small values (truncation toward zero), half over the full range.
        return {"dist": "mixed", "low": -r, "high": r, "small": 10}
    if "f16" in (src, dst):
        return uniform(-60000, 60000)  # finite in f16 (no overflow to inf)
    return uniform(-1e6, 1e6)


def cast_case(src, dst, shape):
    x = inp("x", shape, src, cast_domain(src, dst))
    body = f"%r = kgraph.cast %x : {ttype(shape, src)} to {ttype(shape, dst)}"
    ref = f"cast_to_int(x, '{dst}')" if dst in INTS else "x"
    return Case(f"cast_{src}_to_{dst}_{shape_tag(shape)}", "cast", [x], dst,
                body, ref, attrs={"to": dst})


def compare_case(direction, dt, ls, rs):
    a, b = inp("a", ls, dt, integers(-3, 3)), inp("b", rs, dt, integers(-3, 3))
    body = (f"%r = kgraph.compare {direction}, %a, %b : "
            f"{ttype(ls, dt)}, {ttype(rs, dt)}")
    return Case(f"compare_{direction}_{dt}_{shape_tag(ls, rs)}", "compare",
                [a, b], "i1", body, COMPARE_REF[direction],
                attrs={"direction": direction})


def select_case(dt, cs, ls, rs):
    dom = uniform(-10, 10) if dt in FLOATS else integers(-100, 100)
    ins = [inp("c", cs, "i1", {"dist": "bool"}), inp("a", ls, dt, dom),
           inp("b", rs, dt, dom)]
    body = (f"%r = kgraph.select %c, %a, %b : {ttype(cs, 'i1')}, "
            f"{ttype(ls, dt)}, {ttype(rs, dt)}")
    return Case(f"select_{dt}_{shape_tag(cs, ls, rs)}", "select", ins, dt,
                body, "torch.where(c, a, b)")


def all_cases():
    cases = []
    for op in BINARY_REF:
        for dt in FLOATS:
            for ls, rs in BINARY_SHAPES:
                cases.append(binary_case(op, dt, ls, rs, *binary_domains(op, dt)))
        if op in ("add", "sub", "mul", "max", "min"):
            for dt in INTS:
                for ls, rs in [([4097], [4097]), ([37, 1000], [1000]),
                               ([5, 1, 129], [5, 33, 129])]:
                    cases.append(binary_case(op, dt, ls, rs,
                                             *binary_domains(op, dt)))
    for op in UNARY_REF:
        for dt in FLOATS:
            for shape in SIZES:
                cases.append(unary_case(op, dt, shape))
        if op in ("neg", "abs", "relu"):
            for dt in INTS:
                cases.append(unary_case(op, dt, [4097], optional=True))
    for dt in FLOATS:
        for shape in SIZES:
            cases.append(unary_case("gelu", dt, shape, attrs={"approximate": True}))
    for dt in FLOATS:
        for shape in ([1], [4097], [3, 5, 1023]):
            cases.append(clamp_case(dt, shape, 0.0, 6.0))
            cases.append(clamp_case(dt, shape, -1.5, 2.25))
        # Bounds no float type represents: results stay inside them.
        cases.append(clamp_case(dt, [4097], -0.1, 6.01))
    for dt in INTS:
        cases.append(clamp_case(dt, [4097], -5.0, 7.0, optional=True))
    for src in FLOATS + INTS:
        for dst in FLOATS + INTS:
            if src != dst:
                for shape in ([7], [4097], [3, 5, 1023]):
                    cases.append(cast_case(src, dst, shape))
    for direction in COMPARE_REF:
        for dt in FLOATS + INTS:
            for ls, rs in [([4097], [4097]), ([1, 1000], [37, 1]),
                           ([3, 5, 1023], [1])]:
                cases.append(compare_case(direction, dt, ls, rs))
    for dt in FLOATS + INTS:
        for cs, ls, rs in [([4097], [4097], [4097]),
                           ([37, 1000], [1000], [37, 1]),
                           ([1, 129], [5, 33, 129], [1])]:
            cases.append(select_case(dt, cs, ls, rs))
    _mark_memcheck(cases)
    return cases


def _mark_memcheck(cases):
    """A representative subset for compute-sanitizer: per (op, attrs, dtypes),
    the case with the most elements and the first broadcasting one."""
    groups = {}
    for c in cases:
        key = (c.op, json.dumps(c.attrs, sort_keys=True),
               tuple(i["dtype"] for i in c.inputs), c.output["dtype"])
        groups.setdefault(key, []).append(c)
    for group in groups.values():
        for c in group:
            c.memcheck = False
        biggest = max(group, key=lambda c: math.prod(c.output["shape"]))
        biggest.memcheck = True
        for c in group:
            if len({tuple(i["shape"]) for i in c.inputs}) > 1:
                c.memcheck = True
                break


def bench_cases():
    n = [BENCH_N]
    add = binary_case("add", "f32", n, n, uniform(-10, 10), uniform(-10, 10),
                      prefix="bench_")
    exp = unary_case("exp", "f32", n)
    exp.name = "bench_" + exp.name
    for c in (add, exp):
        c.bench = True
        c.memcheck = False
    return [add, exp]


def _run(cmd):
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                       text=True)
    return p.returncode, p.stdout


def _check_plan(case, plan_path):
    """The plan must describe the case's signature. A graph case takes its
    outputs from the plan."""
    plan = kgraph.plan.load_plan(plan_path)
    got_in = [(list(b.shape), b.dtype) for b in plan.inputs]
    graph_like = isinstance(case, (graph_case.GraphCase, fuzz_cases.FuzzCase))
    if graph_like:
        want_in = [(i.shape, i.dtype) for i in case.inputs]
    else:
        want_in = [(i["shape"], i["dtype"]) for i in case.inputs]
    if got_in != want_in:
        return f"plan inputs {got_in} do not match the case's {want_in}"
    if graph_like:
        case.outputs = [{"shape": list(b.shape), "dtype": b.dtype}
                        for b in plan.outputs]
        return None
    got_out = [(list(b.shape), b.dtype) for b in plan.outputs]
    want_out = [(case.output["shape"], case.output["dtype"])]
    if got_out != want_out:
        return f"plan outputs {got_out} do not match the case's {want_out}"
    return None


#: kgraph-opt's diagnostic for an op it cannot lower (yet).
NO_CODEGEN = "no code generation"


def _unsupported_reason(out):
    """The diagnostic line saying there is no code generation, without the
    file:line:col prefix."""
    for line in out.splitlines():
        if NO_CODEGEN in line:
            return re.sub(r"^.*?\berror: ", "", line.strip())
    return out.strip()


def build_case(case, kgraph_opt, outdir, target, parse_only):
    """Returns (status, message): ok, unsupported (optional case rejected by
    the verifier, or a case allowing it that kgraph-opt has no code
    generation for) or error."""
    mlir = os.path.join(outdir, case.name + ".mlir")
    with open(mlir, "w") as f:
        f.write(case.mlir())
    # Files the module names (a weights file) are written beside it.
    if hasattr(case, "prepare"):
        case.prepare(outdir)
    rc, out = _run([kgraph_opt, mlir, "-o", os.devnull])
    if rc != 0:
        return ("unsupported" if case.optional else "error",
                "does not parse/verify: " + out.strip())
    if parse_only:
        return "ok", ""
    ptx = os.path.join(outdir, case.name + ".ptx")
    flags = [f"--tile={target}"] + list(getattr(case, "flags", []))
    rc, out = _run([kgraph_opt, *flags, mlir, "-o", ptx])
    if rc != 0:
        if getattr(case, "unsupported_ok", False) and NO_CODEGEN in out:
            return "unsupported", _unsupported_reason(out)
        return "error", f"kgraph-opt {' '.join(flags)} failed: " + out.strip()
    want = getattr(case, "kernels", None)
    if want is not None:
        with open(ptx) as f:
            got = graph_case.count_kernels(f.read())
        if got != want:
            return "error", (f"{got} kernels (.entry) in {ptx}, the case "
                             f"expects {want}")
    plan = os.path.join(outdir, case.name + ".plan.json")
    if not os.path.isfile(plan):
        return "error", f"kgraph-opt wrote no plan {plan}"
    try:
        msg = _check_plan(case, plan)
    except kgraph.plan.PlanError as e:
        return "error", f"invalid plan: {e}"
    if msg:
        return "error", msg
    # The GEMM model's shared memory must be what the kernels ask for.
    _, errors = gemm_smem.check(kgraph_opt, target, mlir, plan,
                                getattr(case, "flags", []))
    if errors:
        return "error", "; ".join(errors)
    return "ok", ""


#: suite -> (test cases, bench cases, test section, bench section)
SUITES = {
    "elementwise": (all_cases, bench_cases, "cases", "bench"),
    "matmul": (matmul_cases.all_cases, matmul_cases.bench_cases, "matmul",
               "matmul_bench"),
    "conv": (conv_cases.all_cases, conv_cases.bench_cases, "conv",
             "conv_bench"),
    "graphs": (lambda: [c for c in graph_case.load_cases() if not c.bench],
               lambda: [c for c in graph_case.load_cases() if c.bench],
               "graphs", "graphs_bench"),
    # Random graphs (test/fuzz/gpu_cases.py): a fresh seeded sample per build.
    "fuzz": (lambda: fuzz_cases.sample(FUZZ["seed"], FUZZ["count"]),
             lambda: [], "fuzz", "fuzz_bench"),
    "runtime": (runtime_cases.all_cases, runtime_cases.bench_cases, "runtime",
                "runtime_bench"),
}


def _kept_sections(path, target, suites):
    """Sections of the other suites from an existing manifest at ``path``
    with the same target (None if there is none to keep)."""
    if not os.path.isfile(path):
        return {}
    try:
        with open(path) as f:
            old = json.load(f)
    except (OSError, ValueError):
        return {}
    if old.get("format") != "kgraph-gpu-cases" or old.get("target") != target:
        return {}
    keep = {}
    for suite, (_, _, sec, bsec) in SUITES.items():
        if suite not in suites:
            for s in (sec, bsec):
                if s in old:
                    keep[s] = old[s]
    return keep


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("kgraph_opt", help="path to the kgraph-opt binary")
    ap.add_argument("outdir", help="output folder (e.g. .gpu); created")
    ap.add_argument("--target", default="sm_90a", help="SM target (default sm_90a)")
    ap.add_argument("--suite", choices=("all",) + tuple(SUITES), default="all",
                    help="which cases to build (default all); building one "
                         "keeps the other's sections of an existing manifest")
    ap.add_argument("-j", "--jobs", type=int, default=2)
    ap.add_argument("--filter", default=None,
                    help="only cases whose name matches this regex")
    ap.add_argument("--no-bench", action="store_true",
                    help="leave out the benchmark cases")
    ap.add_argument("--sample", type=int, default=None, metavar="N",
                    help="at most N cases per manifest section, evenly spread "
                         "over it (the same ones every build): a "
                         "representative sample, e.g. for the other targets "
                         "gpu-check runs")
    ap.add_argument("--parse-only", action="store_true",
                    help="only check that each case parses and verifies "
                         "(writes no PTX and no manifest)")
    ap.add_argument("--list", action="store_true", help="list case names and exit")
    ap.add_argument("--fuzz-seed", default=os.environ.get("KGRAPH_FUZZ_SEED"),
                    help="seed of the fuzz suite's random graphs, [0-9a-z] "
                         "(default: $KGRAPH_FUZZ_SEED, else a fresh one, printed)")
    ap.add_argument("--fuzz-count", type=int, default=300,
                    help="random graphs in the fuzz suite (default 300)")
    args = ap.parse_args(argv)
    FUZZ["seed"] = args.fuzz_seed or format(
        __import__("random").SystemRandom().randrange(36 ** 6), "x")
    FUZZ["count"] = args.fuzz_count

    suites = list(SUITES) if args.suite == "all" else [args.suite]
    if "fuzz" in suites and not args.list:
        print(f"fuzz suite: seed {FUZZ['seed']}, {FUZZ['count']} random graphs "
              f"(rebuild the same with --fuzz-seed {FUZZ['seed']})")
    todo = []  # (case, manifest section)
    for suite in suites:
        make_cases, make_benches, sec, bsec = SUITES[suite]
        todo += [(c, sec) for c in make_cases()]
        if not args.no_bench:
            todo += [(c, bsec) for c in make_benches()]
    if args.filter:
        rx = re.compile(args.filter)
        todo = [(c, sec) for c, sec in todo if rx.search(c.name)]
    if args.target != "sm_90a":
        # Cases that pin a configuration (wgmma, TMA, an mma shape) test the
        # sm_90a kernel they were written for: on another target the
        # verifier rightly rejects most of them, so they are left out.
        kept = [(c, sec) for c, sec in todo if "kgraph.config = " not in c.mlir()]
        if len(kept) != len(todo):
            print(f"note: {len(todo) - len(kept)} case(s) pin an sm_90a "
                  f"configuration: left out for {args.target}")
        todo = kept
    if args.sample is not None:
        if args.sample < 1:
            ap.error(f"--sample must be at least 1, got {args.sample}")
        by_sec = {}
        for c, sec in todo:
            by_sec.setdefault(sec, []).append((c, sec))
        todo = []
        for items in by_sec.values():
            step = max(1, len(items) / args.sample)
            todo += [items[int(i * step)] for i in range(min(args.sample, len(items)))]
    if args.list:
        for c, _ in todo:
            print(c.name)
        return 0
    if not os.access(args.kgraph_opt, os.X_OK):
        ap.error(f"kgraph-opt not found or not executable: {args.kgraph_opt}")
    os.makedirs(args.outdir, exist_ok=True)
    outdir = os.path.abspath(args.outdir)

    with concurrent.futures.ThreadPoolExecutor(max_workers=args.jobs) as pool:
        results = list(pool.map(
            lambda cs: build_case(cs[0], args.kgraph_opt, outdir, args.target,
                                  args.parse_only), todo))

    entries = {}
    for suite in suites:
        _, _, sec, bsec = SUITES[suite]
        entries[sec] = []
        entries[bsec] = []
    counts = {"ok": 0, "unsupported": 0, "error": 0}
    dropped = 0
    unsupported = {}  # reason -> number of cases
    for (c, sec), (status, msg) in zip(todo, results):
        counts[status] += 1
        if status == "unsupported" and c.optional:
            dropped += 1
            print(f"note: optional case {c.name} dropped: {msg.splitlines()[0]}")
            continue
        if status == "error":
            print(f"error: {c.name}: {msg}", file=sys.stderr)
        e = c.manifest()
        e["status"] = status
        e["memcheck"] = c.memcheck
        if status == "unsupported":
            e["reason"] = msg
            unsupported[msg] = unsupported.get(msg, 0) + 1
        elif msg:
            e["error"] = msg
        entries[sec].append(e)
    for reason, n in sorted(unsupported.items()):
        print(f"note: {n} case(s) unsupported: {reason}")

    print(f"{len(todo)} cases: {counts['ok']} ok, {counts['error']} failed, "
          f"{counts['unsupported'] - dropped} unsupported, {dropped} optional "
          f"dropped" + (" (parse/verify only)" if args.parse_only else ""))
    if not args.parse_only:
        path = os.path.join(outdir, "manifest.json")
        kept = _kept_sections(path, args.target, suites)
        if kept:
            print(f"note: kept {', '.join(sorted(kept))} of the existing "
                  f"{path}")
        # What the cases were built from; sections kept from a build of
        # other sources make the folder stale as a whole (gpu-check refuses
        # it until every suite is rebuilt).
        made = case_digest.built_from()
        if kept:
            try:
                with open(path) as f:
                    old_digest = (json.load(f).get("built_from") or {}).get("digest")
            except (OSError, ValueError):
                old_digest = None
            if old_digest != made["digest"]:
                print(f"warning: the kept sections were built from other sources "
                      f"({old_digest}); scripts/gpu-check.sh refuses the folder "
                      f"until every suite is rebuilt")
                made["digest"] = None
        manifest = {"format": "kgraph-gpu-cases", "version": 1,
                    "target": args.target, "built_from": made,
                    "cases": [], "bench": [], **kept, **entries}
        if "fuzz" in suites:
            manifest["fuzz_seed"] = FUZZ["seed"]
        with open(path, "w") as f:
            json.dump(manifest, f, indent=1)
        print(f"wrote {path}")
    return 1 if counts["error"] else 0


if __name__ == "__main__":
    sys.exit(main())
