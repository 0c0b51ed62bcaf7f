"""GPU cases from the random-graph generator (the `fuzz` suite of
scripts/build-gpu-cases.py, run by test/GPU/test_fuzz_graphs.py).

``sample(seed, count)`` draws ``count`` graphs (graphgen.gpu_graph of
"<seed>-<i>": no data movement, references well conditioned on their input
domains) as cases named ``fuzz_<seed>_<i>``. The name carries the graph's
sub-seed, so ``find_ref(entry)`` rebuilds the graph and its torch reference
on the GPU machine from the manifest entry alone. Each case is compiled with
``--fuse``; its tolerance comes from graphgen.tolerance (integers exact).
"""

import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import graphgen  # noqa: E402

_NAME = re.compile(r"^fuzz_([0-9a-z]+)_(\d+)$")


class Input:
    def __init__(self, name, shape, dtype, lo, hi):
        self.name, self.shape, self.dtype = name, list(shape), dtype
        self.lo, self.hi = lo, hi

    def manifest(self):
        return {"name": self.name, "shape": self.shape, "dtype": self.dtype,
                "lo": self.lo, "hi": self.hi}


class FuzzCase:
    """The interface scripts/build-gpu-cases.py builds a case through (that
    of graph_case.GraphCase): ``name``, ``mlir()``, ``inputs``, ``flags``,
    ``kernels`` (not checked), ``outputs`` (set from the plan), ``manifest()``."""

    optional = False
    unsupported_ok = False
    bench = False

    def __init__(self, name, graph, sub):
        self.name, self.graph, self.sub = name, graph, sub
        self.inputs = [Input(a.name, a.shape, a.dtype, *graph.input_domain[a.name])
                       for a in graph.args]
        self.flags = ["--fuse"]
        self.kernels = None
        self.tol = graphgen.tolerance(graph)
        self.memcheck = False
        self.outputs = None
        self.module = "fuzz"

    def mlir(self):
        return f"// fuzz GPU case {self.name} (graph {self.sub})\n" + self.graph.mlir()

    def manifest(self):
        return {"name": self.name, "module": "fuzz", "graph": self.sub,
                "inputs": [i.manifest() for i in self.inputs],
                "outputs": self.outputs, "kernels": None,
                "tol": list(self.tol), "flags": self.flags,
                "ops": self.graph.ops,
                "mlir": f"{self.name}.mlir", "ptx": f"{self.name}.ptx",
                "plan": f"{self.name}.plan.json", "bench": False}


def make_case(seed, index):
    graph, sub = graphgen.gpu_graph(f"{seed}-{index}")
    if graph is None:
        return None
    return FuzzCase(f"fuzz_{seed}_{index}", graph, sub)


def sample(seed, count):
    """``count`` cases of ``seed`` (a string of [0-9a-z])."""
    if not re.match(r"^[0-9a-z]+$", str(seed)):
        raise ValueError(f"fuzz seed {seed!r}: use [0-9a-z]")
    cases = [make_case(seed, i) for i in range(count)]
    return [c for c in cases if c is not None]


def find_ref(entry):
    """The torch reference of a manifest entry of section "fuzz"."""
    graph = graphgen.generate(entry["graph"], allow_data_movement=False)
    return graphgen.torch_ref(graph)
