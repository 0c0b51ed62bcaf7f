#!/usr/bin/env python3
"""Compiles the best launch-configuration candidates of the elementwise
benchmarks (add of two 64M f32 tensors, exp of one), each pinned in the IR,
so one GPU run can compare them (bench/bench_variants.py).

    bench/elementwise_variants.py KGRAPH_OPT OUT_DIR [TARGET] [--top N]

The candidates are the compiler's (kgraph-opt --list-configs, best first;
bench/configspace.py); each becomes <op>_b<block>_v<vector>_g<grid>_u<unroll>.
"""

import argparse
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import configspace  # noqa: E402

N = 67108864
GRAPHS = {
    "add": f"""func.func @main(%a: tensor<{N}xf32>, %b: tensor<{N}xf32>) -> tensor<{N}xf32> {{
  %0 = kgraph.add %a, %b : tensor<{N}xf32>, tensor<{N}xf32>
  return %0 : tensor<{N}xf32>
}}
""",
    "exp": f"""func.func @main(%a: tensor<{N}xf32>) -> tensor<{N}xf32> {{
  %0 = kgraph.exp %a : tensor<{N}xf32>
  return %0 : tensor<{N}xf32>
}}
""",
}


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("opt")
    ap.add_argument("out")
    ap.add_argument("target", nargs="?", default="sm_90a")
    ap.add_argument("--top", type=int, default=12,
                    help="candidates per op, best first (default 12)")
    args = ap.parse_args()
    os.makedirs(args.out, exist_ok=True)
    built = 0
    for op, text in GRAPHS.items():
        graph = os.path.join(args.out, op + ".mlir")
        with open(graph, "w") as f:
            f.write(text)
        groups = configspace.list_configs(args.opt, graph, args.target, args.top)
        tiled = configspace.tiled_ir(args.opt, graph, args.target)
        for cand in groups[0]["candidates"]:
            f = configspace.fields(cand["config"])
            name = (f"{op}_b{f['block_size']}_v{f['vector_width']}"
                    f"_g{f['grid_size']}_u{f['unroll']}")
            path = os.path.join(args.out, name + ".mlir")
            with open(path, "w") as out:
                out.write(configspace.pin(tiled, groups, {0: cand["config"]}))
            configspace.compile_pinned(args.opt, path, args.target,
                                       os.path.join(args.out, name + ".ptx"))
            print(f"{name:<32} estimate {cand['estimate_us']:9.3f} us")
            built += 1
    print(f"{built} variants in {args.out}")


if __name__ == "__main__":
    try:
        main()
    except configspace.ConfigSpaceError as e:
        sys.exit(f"error: {e}")
