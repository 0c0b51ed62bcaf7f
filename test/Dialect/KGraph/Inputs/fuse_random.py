"""Random graphs of elementwise ops, casts, matmuls and reduces through
kgraph-fuse (with and without recomputation) and kgraph-form-kernels: the
output must verify (no cycle, no dominance error), hold as many matmuls and
reduces as the input (expensive ops are never cloned), clone nothing with
max-recompute=0, and compute the same values as the input (a small numpy
interpreter of the printed IR, kgraph.fused included).

usage: fuse_random.py <kgraph-opt> <number of graphs>
"""

import random
import re
import subprocess
import sys

import numpy as np

T, R, H = "tensor<16x16xf32>", "tensor<16x1xf32>", "tensor<16x16xf16>"


def generate(seed):
    rnd = random.Random(seed)
    values = [("%x", T), ("%y", T), ("%z", R)]
    lines = []
    for i in range(rnd.randint(5, 25)):
        name = f"%v{i}"
        full = [v for v in values if v[1] == T]
        kind = rnd.random()
        if kind < 0.25:
            op = rnd.choice(["neg", "exp", "relu", "tanh", "abs"])
            lines.append(f"  {name} = kgraph.{op} {rnd.choice(full)[0]} : {T}")
            values.append((name, T))
        elif kind < 0.6:
            a, b = rnd.choice(full), rnd.choice(values)
            op = rnd.choice(["add", "mul", "sub", "max"])
            lines.append(f"  {name} = kgraph.{op} {a[0]}, {b[0]} : {T}, {b[1]}")
            values.append((name, T))
        elif kind < 0.75:
            a, b = rnd.choice(full), rnd.choice(full)
            lines.append(f"  {name} = kgraph.matmul {a[0]}, {b[0]} : {T}, {T} -> {T}")
            values.append((name, T))
        elif kind < 0.85:
            a = rnd.choice(full)
            lines.append(f"  {name} = kgraph.reduce sum {a[0]} axes = [1] keep_dims : {T}")
            values.append((name, R))
        else:
            a = rnd.choice(full)
            lines.append(f"  {name} = kgraph.cast {a[0]} : {T} to {H}")
            lines.append(f"  {name}b = kgraph.cast {name} : {H} to {T}")
            values.append((name + "b", T))
    outs = rnd.sample(values[3:], min(len(values) - 3, rnd.randint(1, 3)))
    ret = ", ".join(o[0] for o in outs)
    types = ", ".join(o[1] for o in outs)
    body = "\n".join(lines)
    return (f"func.func @main(%x: {T}, %y: {T}, %z: {R}) -> ({types}) {{\n"
            f"{body}\n  return {ret} : {types}\n}}\n")


UNARY = {"neg": np.negative, "exp": np.exp, "relu": lambda a: np.maximum(a, 0),
         "tanh": np.tanh, "abs": np.abs}
BINARY = {"add": np.add, "mul": np.multiply, "sub": np.subtract,
          "max": np.maximum, "matmul": np.matmul}


def interpret(text, inputs):
    """Runs the printed function; returns its results."""
    env = {}

    def value(token):
        token = token.strip()
        if "#" in token:
            name, index = token.split("#")
            return env[name][int(index)]
        return env[token]

    def evaluate(rest):
        op, args = re.match(r"kgraph\.(\w+)\s+(.*)", rest).groups()
        operands = args.split(" : ")[0]
        if op == "reduce":
            src = re.match(r"sum (%\S+) axes", operands).group(1)
            return value(src).sum(axis=1, keepdims=True)
        if op == "cast":
            x = value(operands)
            to_f16 = "xf16>" in rest.split(" to ")[1]
            return x.astype(np.float16) if to_f16 else x.astype(np.float64)
        xs = [value(t) for t in operands.split(",")]
        return (UNARY if len(xs) == 1 else BINARY)[op](*xs)

    lines = [l.strip() for l in text.splitlines()]
    i = 0
    while i < len(lines):
        line = lines[i]
        if line.startswith("func.func"):
            params = re.findall(r"(%\w+):", line.split("->")[0])
            env.update(zip(params, inputs))
        elif m := re.match(r"(%\w+)(?::\d+)? = kgraph\.fused (?:[a-z]+ )?\((.*?)\)", line):
            name, args = m.groups()
            ins = [value(t) for t in args.split(",")] if args else []
            i += 1
            outer = dict(env)
            env.update(zip(re.findall(r"(%\w+):", lines[i]), ins))
            i += 1
            while not lines[i].startswith("kgraph.yield"):
                lhs, rhs = re.match(r"(%\w+) = (.*)", lines[i]).groups()
                if rhs.startswith("arith.constant"):
                    env[lhs] = float(re.search(r"dense<([^>]*)>", rhs).group(1))
                else:
                    env[lhs] = evaluate(rhs)
                i += 1
            yielded = lines[i][len("kgraph.yield"):].split(" : ")[0]
            results = [value(t) for t in yielded.split(",")]
            env = outer
            env[name] = results if len(results) > 1 else results[0]
        elif m := re.match(r"(%\w+) = (kgraph.*)", line):
            env[m.group(1)] = evaluate(m.group(2))
        elif line.startswith("return"):
            return [value(t) for t in line[len("return"):].split(" : ")[0].split(",")]
        i += 1
    raise ValueError("no return")


def main():
    opt, count = sys.argv[1], int(sys.argv[2])
    failures = 0
    for seed in range(count):
        src = generate(seed)
        rng = np.random.default_rng(seed)
        inputs = [rng.uniform(-0.3, 0.3, (16, 16)), rng.uniform(-0.3, 0.3, (16, 16)),
                  rng.uniform(-0.3, 0.3, (16, 1))]
        expected = interpret(src, inputs)
        for recompute in (0, 4):
            pipeline = (f"builtin.module(func.func(kgraph-fuse{{max-recompute={recompute}}},"
                        "kgraph-form-kernels))")
            run = subprocess.run([opt, "-", f"--pass-pipeline={pipeline}"], input=src,
                                 capture_output=True, text=True)
            problem = None
            if run.returncode != 0:
                problem = "kgraph-opt failed: " + run.stderr[:400]
            elif any(run.stdout.count(op) != src.count(op)
                     for op in ("kgraph.matmul", "kgraph.reduce")):
                problem = "a matmul or reduce was cloned or lost"
            elif recompute == 0 and (run.stdout.count("kgraph.") - run.stdout.count("kgraph.fused")
                                     - run.stdout.count("kgraph.yield")) != src.count("kgraph."):
                problem = "an op was cloned with max-recompute=0"
            else:
                got = interpret(run.stdout, inputs)
                if len(got) != len(expected) or not all(
                        np.allclose(a, b, rtol=1e-3, atol=1e-3) for a, b in zip(got, expected)):
                    problem = "different results"
            if problem:
                failures += 1
                print(f"seed {seed}, max-recompute={recompute}: {problem}\n{src}\n{run.stdout}")
    print(f"{count} graphs, {failures} failures")


if __name__ == "__main__":
    main()
