"""Robustness check of kgraph-translate: imports many random mutations of
valid graphs and requires that each either imports to IR that kgraph-opt
verifies, or fails with an error diagnostic and exit code 1 (never a crash,
never output on failure).

usage: mutate_graphs.py KGRAPH_TRANSLATE KGRAPH_OPT COUNT SEED GRAPH.json...
Prints one summary line; on a problem, the mutated graph and the output.
"""
import copy
import json
import random
import subprocess
import sys

VALUES = [None, True, False, 0, 1, -1, 2, 3, 7, 64, 2**31, -(2**31), 1.5, -0.5,
          "", "x", "f16", "nhwc", "same", "valid", "tanh", [], [0], [1, 1],
          [2, 2], [1, 1, 1], [1, 2, 3, 4], [-1, 4], {}, {"a": 1},
          # Values of constant nodes: nested, ragged, out of every range.
          [[1, 2], [3, 4]], [[1, 2], [3]], [[[1]]], [1.5, "2"], 128, 70000,
          1e39, 3.5e38, -2**63, 2**64, 0.1, [True, 1]]


def paths(value, prefix=()):
    yield prefix
    if isinstance(value, dict):
        for k, v in value.items():
            yield from paths(v, prefix + (k,))
    elif isinstance(value, list):
        for i, v in enumerate(value):
            yield from paths(v, prefix + (i,))


def mutate(graph, rng):
    g = copy.deepcopy(graph)
    for _ in range(rng.randint(1, 3)):
        candidates = [p for p in paths(g) if p]
        if not candidates:
            break
        path = rng.choice(candidates)
        parent = g
        for key in path[:-1]:
            parent = parent[key]
        last = path[-1]
        action = rng.random()
        if action < 0.25 and isinstance(parent, dict):
            del parent[last]
        elif action < 0.35 and isinstance(parent, list) and len(parent) > 1:
            del parent[last]
        elif action < 0.45 and isinstance(parent, list):
            parent.insert(last, copy.deepcopy(parent[last]))
        elif action < 0.55 and isinstance(parent, dict):
            parent[rng.choice(["stride", "inputs", "type", "bias", "groups", "axis",
                               "weight", "shape", "name", "value", "dtype",
                               "zz"])] = rng.choice(VALUES)
        elif isinstance(parent[last], int) and not isinstance(parent[last], bool) and action < 0.8:
            parent[last] = parent[last] + rng.choice([-2, -1, 1, 2, 5])
        else:
            parent[last] = copy.deepcopy(rng.choice(VALUES))
    return g


def main():
    translate, opt, count, seed = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
    graphs = [json.load(open(p)) for p in sys.argv[5:]]
    rng = random.Random(seed)
    modules, failed = [], 0
    for _ in range(count):
        text = json.dumps(mutate(rng.choice(graphs), rng))
        run = subprocess.run([translate, "--import-graph-json", "-"], input=text,
                             capture_output=True, text=True)
        if run.returncode == 0:
            modules.append((text, run.stdout))
        elif run.returncode == 1 and "error: " in run.stderr and not run.stdout:
            failed += 1
        else:
            print("exit code %d:\n%s\n%s" % (run.returncode, text, run.stderr[-3000:]))
            return 1
    # One kgraph-opt for all imported modules; on a failure, find the module.
    def verifies(ir):
        return subprocess.run([opt, "--split-input-file", "--verify-each", "-o", "/dev/null"],
                              input=ir, capture_output=True, text=True).returncode == 0
    if modules and not verifies("\n// -----\n".join(ir for _, ir in modules)):
        for text, ir in modules:
            if not verifies(ir):
                print("imported IR does not verify:\n" + text + "\n" + ir)
                return 1
    imported = len(modules)
    print("mutations: %d imported, %d rejected, no crash" % (imported, failed))
    return 0


if __name__ == "__main__":
    sys.exit(main())
