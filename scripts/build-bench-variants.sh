#!/usr/bin/env bash
# Compiles the compiler's best launch-configuration candidates of the
# elementwise benchmarks (add of two 64M f32 tensors, exp of one), each pinned
# in the IR, so one GPU run can compare them (bench/bench_variants.py). The
# candidates come from kgraph-opt --list-configs (bench/elementwise_variants.py).
#
#   scripts/build-bench-variants.sh KGRAPH_OPT OUT_DIR [TARGET] [--top N]
set -eu
root=$(cd "$(dirname "$0")/.." && pwd)
exec /usr/bin/python3 "$root/bench/elementwise_variants.py" "$@"
