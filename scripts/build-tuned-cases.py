#!/usr/bin/python3
"""Compile the benchmark cases of a GPU-case folder a second time, with a
tuning database (python3 -m kgraph.tune, docs/tuning.md), so that the
benchmarks time the database's configurations beside the model's defaults
in one run.

Runs where kgraph-opt exists. For every case of the manifest's sections
(default: conv_bench and matmul_bench) whose default compiled, it runs
``kgraph-opt --tile=<target> --tuning-db=DB --tuning-report`` on the case's
MLIR into ``<name>.tuned.ptx`` / ``<name>.tuned.plan.json`` and records in
the manifest the tuned plan and who chose its configuration ("record",
"near record" or "model"). bench/bench_conv.py and bench/bench_matmul.py
check and time every case that has a tuned plan.

    scripts/build-tuned-cases.py build/bin/kgraph-opt .gpu DB.json
        [--sections conv_bench,matmul_bench]
"""

import argparse
import json
import os
import subprocess
import sys

_HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(_HERE, "..", "python"))

from kgraph.compiler import tuning_summary  # noqa: E402


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("kgraph_opt")
    ap.add_argument("cases", help="the GPU-case folder (manifest.json)")
    ap.add_argument("db", help="the tuning database")
    ap.add_argument("--sections", default="conv_bench,matmul_bench")
    args = ap.parse_args()
    path = os.path.join(args.cases, "manifest.json")
    try:
        with open(path) as f:
            manifest = json.load(f)
    except (OSError, json.JSONDecodeError) as e:
        sys.exit(f"error: {path}: {e}")
    if not os.path.isfile(args.db):
        sys.exit(f"error: tuning database {args.db}: no such file")
    db = os.path.abspath(args.db)
    target = manifest.get("target", "sm_90a")
    failed = 0
    counts = {}
    for section in args.sections.split(","):
        for c in manifest.get(section, []):
            if c.get("status") != "ok":
                continue
            stem = c["plan"][:-len(".plan.json")]
            cmd = [args.kgraph_opt, f"--tile={target}", *c.get("flags", []),
                   f"--tuning-db={db}", "--tuning-report",
                   os.path.join(args.cases, c["mlir"]),
                   "-o", os.path.join(args.cases, stem + ".tuned.ptx")]
            r = subprocess.run(cmd, capture_output=True, text=True)
            if r.returncode:
                failed += 1
                print(f"FAILED {c['name']}: {r.stderr.strip()[:400]}")
                c.pop("tuned_plan", None)
                continue
            chose = tuning_summary(r.stderr)
            how = next((k for k in ("record", "near record", "model") if chose[k]),
                       "model")
            c["tuned_plan"] = stem + ".tuned.plan.json"
            c["tuned_by"] = how
            counts[how] = counts.get(how, 0) + 1
    with open(path, "w") as f:
        json.dump(manifest, f, indent=1)
    print(f"tuned cases: " + ", ".join(f"{v} from {k}" for k, v in sorted(counts.items()))
          + (f"; {failed} failed" if failed else ""))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
