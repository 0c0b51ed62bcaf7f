"""Prints a launch plan one JSON object per line (top-level fields, then per
function its name, each buffer and each kernel without its args), for
FileCheck; first validates it with the Python runtime's plan checker
(kgraph.load_plan), so every plan a lit test writes is one the runtime
loads."""

import json
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "python"))
import kgraph  # noqa: E402


def main(path):
    kgraph.load_plan(path)
    with open(path) as f:
        plan = json.load(f)
    d = lambda v: json.dumps(v, sort_keys=True)
    for key in sorted(plan):
        if key not in ("functions", "variants"):
            print(f"{key}: {d(plan[key])}")
    # A bundle (version 3): each variant's target and PTX, then its
    # functions.
    variants = plan.get("variants") or [plan]
    for v in variants:
        if v is not plan:
            print(f"variant: {v['target']} {v['ptx']}")
        print_functions(v, d)


def print_functions(plan, d):
    for fn in plan["functions"]:
        print(f"function: {fn['name']}")
        for b in fn["buffers"]:
            print(f"buffer: {d(b)}")
        for k in fn["kernels"]:
            rest = {key: v for key, v in k.items() if key != "args"}
            print(f"kernel: {d(rest)}")
            print(f"args: {d(k['args'])}")


if __name__ == "__main__":
    main(sys.argv[1])
