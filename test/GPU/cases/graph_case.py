"""GPU test and benchmark cases of whole graphs (issue 5: fusion).

A graph case is a ``func.func @main`` in the kgraph dialect, compiled with
``kgraph-opt --fuse --tile=<target>``, plus a reference function written in
torch. The reference serves three purposes:
  - correctness: it runs on float64 copies of the inputs on the CPU and the
    kernel's outputs are compared with it element by element;
  - the torch eager baseline of the benchmarks: it runs on the GPU inputs in
    their own dtypes;
  - the torch.compile baseline: ``torch.compile(ref)`` on the same inputs.

Cases live in modules ``test/GPU/cases/graphs/<topic>.py``, each defining
``CASES`` (a list of GraphCase). scripts/build-gpu-cases.py --suite graphs
compiles them (checking the number of kernels, ``.entry`` functions of the
PTX) and writes them to the manifest's "graphs" and "graphs_bench" sections,
with the module name, so test/GPU/test_graphs.py and bench/bench_graphs.py
find the reference again on the GPU machine.
"""

import glob
import importlib.util
import os
import re

HERE = os.path.dirname(os.path.abspath(__file__))
CASES_DIR = os.path.join(HERE, "graphs")

#: dtypes a graph input may have.
DTYPES = ("f32", "f16", "bf16", "i8", "i32", "i1")
_NAME = re.compile(r"^[a-z0-9_]+$")


class Input:
    """A function argument: name (without %), shape, dtype, and the range the
    random values are drawn from (uniform floats, or integers in [lo, hi];
    i1 ignores the range)."""

    def __init__(self, name, shape, dtype, lo=-1.0, hi=1.0):
        if dtype not in DTYPES:
            raise ValueError(f"input {name}: dtype {dtype} not in {DTYPES}")
        if lo > hi:
            raise ValueError(f"input {name}: lo {lo} > hi {hi}")
        self.name, self.shape, self.dtype = name, list(shape), dtype
        self.lo, self.hi = lo, hi

    def manifest(self):
        return {"name": self.name, "shape": self.shape, "dtype": self.dtype,
                "lo": self.lo, "hi": self.hi}


class GraphCase:
    """See the module docstring. ``tol`` = (rtol, atol): an output element
    passes when |out - ref| <= atol + rtol * |ref| (ref in float64; NaN only
    where ref is NaN; integer and boolean outputs must match exactly).
    ``kernels``: the number of kernels the compiled program must have (None:
    not checked). ``flags``: kgraph-opt flags besides --tile."""

    optional = False
    unsupported_ok = False

    def __init__(self, name, mlir, inputs, ref, kernels=None, tol=(1e-5, 1e-6),
                 memcheck=True, bench=False, flags=("--fuse",)):
        if not _NAME.match(name):
            raise ValueError(f"graph case name {name!r}: use [a-z0-9_]")
        self.name, self.text, self.inputs = name, mlir, list(inputs)
        self.ref, self.kernels, self.tol = ref, kernels, tuple(tol)
        self.memcheck, self.bench, self.flags = memcheck, bench, list(flags)
        self.module = None        # set by load_cases
        self.outputs = None       # read from the plan once compiled

    def mlir(self):
        return f"// Graph case {self.name} ({self.module}.py)\n{self.text}\n"

    def manifest(self):
        return {"name": self.name, "module": self.module,
                "inputs": [i.manifest() for i in self.inputs],
                "outputs": self.outputs, "kernels": self.kernels,
                "tol": list(self.tol), "flags": self.flags,
                "mlir": f"{self.name}.mlir", "ptx": f"{self.name}.ptx",
                "plan": f"{self.name}.plan.json", "bench": self.bench}


def _load_module(path):
    name = "kgraph_graph_cases_" + os.path.splitext(os.path.basename(path))[0]
    spec = importlib.util.spec_from_file_location(name, path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def load_module(module):
    """test/GPU/cases/graphs/<module>.py."""
    return _load_module(os.path.join(CASES_DIR, module + ".py"))


def load_cases(modules=None):
    """Every GraphCase of test/GPU/cases/graphs/*.py (or of ``modules``), with
    ``module`` set; duplicate names are an error."""
    if modules is None:
        modules = sorted(os.path.splitext(os.path.basename(p))[0]
                         for p in glob.glob(os.path.join(CASES_DIR, "*.py"))
                         if not os.path.basename(p).startswith("_"))
    cases, seen = [], {}
    for m in modules:
        for c in load_module(m).CASES:
            if c.name in seen:
                raise ValueError(f"graph case {c.name} is defined in both "
                                 f"{seen[c.name]}.py and {m}.py")
            seen[c.name] = m
            c.module = m
            cases.append(c)
    return cases


def find_ref(entry):
    """The reference function of a manifest entry (of case entry["case"]
    where set: an entry timing a saved build of that case under its own
    name)."""
    name = entry.get("case", entry["name"])
    for c in load_module(entry["module"]).CASES:
        if c.name == name:
            return c.ref
    raise KeyError(f"graph case {name} is not in "
                   f"test/GPU/cases/graphs/{entry['module']}.py any more")


def count_kernels(ptx_text):
    """Kernels of a PTX module: its .entry functions."""
    return len(re.findall(r"^\s*(?:\.visible\s+)?\.entry\s", ptx_text, re.M))


# --- inputs and comparison (torch; used on the CPU and on the GPU machine) -----

def make_inputs(torch, entry, gen):
    """Fresh random CPU tensors for the manifest entry's inputs."""
    from kgraph import torch_dtype  # the runtime's dtype names
    xs = []
    for i in entry["inputs"]:
        shape, dt = i["shape"], i["dtype"]
        if dt == "i1":
            x = torch.rand(shape, generator=gen, dtype=torch.float64) < 0.5
        elif dt in ("i8", "i32"):
            x = torch.randint(int(i["lo"]), int(i["hi"]) + 1, shape,
                              generator=gen, dtype=torch.int64)
            x = x.to(torch_dtype(dt))
        else:
            x = torch.rand(shape, generator=gen, dtype=torch.float64)
            x = (x * (i["hi"] - i["lo"]) + i["lo"]).to(torch_dtype(dt))
        xs.append(x)
    return xs


def reference(torch, entry, ref, inputs):
    """``ref`` on float64 (floats), int64 (ints) or bool copies of the CPU
    ``inputs``; always a list of tensors."""
    wide = []
    for x in inputs:
        if x.dtype == torch.bool:
            wide.append(x.clone())
        elif x.is_floating_point():
            wide.append(x.to(torch.float64))
        else:
            wide.append(x.to(torch.int64))
    out = ref(*wide)
    return list(out) if isinstance(out, (tuple, list)) else [out]


def compare(torch, out, ref, spec, tol):
    """None when ``out`` (CPU, the kernel's) matches ``ref``; else a message
    naming the worst element."""
    if list(out.shape) != list(spec["shape"]):
        return f"shape {list(out.shape)}, expected {spec['shape']}"
    if list(ref.shape) != list(spec["shape"]):
        return (f"the reference has shape {list(ref.shape)}, the output "
                f"{spec['shape']}")
    dt = spec["dtype"]
    if dt in ("i1", "i8", "i32"):
        o, r = out.to(torch.int64), ref.to(torch.int64)
        bad = o != r
        if bad.any():
            idx = int(bad.flatten().nonzero()[0])
            return (f"{int(bad.sum())} of {o.numel()} elements differ; first "
                    f"at flat index {idx}: {int(o.flatten()[idx])}, expected "
                    f"{int(r.flatten()[idx])}")
        return None
    o, r = out.to(torch.float64), ref.to(torch.float64)
    rtol, atol = tol
    # The graphs' ops define no NaN or infinity on their cases' input
    # domains: a non-finite reference means a domain is wrong (and would
    # accept any output there).
    bad = ~torch.isfinite(r)
    if bad.any():
        idx = int(bad.flatten().nonzero()[0])
        return (f"the float64 reference is {float(r.flatten()[idx])} at flat index {idx} "
                f"({int(bad.sum())} element(s)), where no op of the graph defines a NaN "
                f"or an infinity: the input domains are wrong")
    nan_o, nan_r = torch.isnan(o), torch.isnan(r)
    if not torch.equal(nan_o, nan_r):
        idx = int((nan_o != nan_r).flatten().nonzero()[0])
        return (f"NaN mismatch at flat index {idx}: got {float(o.flatten()[idx])}, "
                f"expected {float(r.flatten()[idx])}")
    o = torch.where(nan_o, torch.zeros_like(o), o)
    r = torch.where(nan_r, torch.zeros_like(r), r)
    # Infinities must match exactly (inf - inf is NaN below otherwise).
    inf = torch.isinf(o) | torch.isinf(r)
    if inf.any() and not torch.equal(o[inf], r[inf]):
        idx = int((inf & (o != r)).flatten().nonzero()[0])
        return (f"infinity mismatch at flat index {idx}: got "
                f"{float(o.flatten()[idx])}, expected {float(r.flatten()[idx])}")
    err = torch.where(inf, torch.zeros_like(o), (o - r).abs())
    bound = atol + rtol * torch.where(inf, torch.zeros_like(r), r).abs()
    excess = err - bound
    worst = int(excess.flatten().argmax())
    if float(excess.flatten()[worst]) > 0:
        n = int((excess > 0).sum())
        return (f"{n} of {o.numel()} elements outside |out - ref| <= {atol} + "
                f"{rtol} * |ref|; worst at flat index {worst}: got "
                f"{float(o.flatten()[worst])!r}, expected "
                f"{float(r.flatten()[worst])!r}")
    return None
